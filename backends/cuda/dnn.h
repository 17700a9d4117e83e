/* The cuDNN the cuda plugin uses: the few entry points it calls, declared
 * here as front.c declares the driver's, found with dlsym in libcudnn.so.9
 * at the first convolution (dnn.cu), never at load: bpcu_device.so does not
 * link cuDNN, so a machine without it loads the plugin and runs every op,
 * the convolutions on the built-in im2col + cuBLAS path.
 *
 * Plain C types and cuDNN's own struct tags for its handles; the numbers
 * are cuDNN 9's (cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h: ABI-stable, and
 * the same in 8 for what is used here). dnn_decls_check.c compares each
 * with the installed headers at build time, when they are there.
 *
 * Two families: cuDNN's "legacy" convolution functions (deprecated in 9,
 * still shipped and what PyTorch's cuDNN v7 path calls): descriptors, the
 * v7 heuristics' ranked algorithms, the workspace size, and the call; and
 * the backend ("graph") API that PyTorch's default path uses: descriptors
 * of any kind set by attribute, an operation graph, engine heuristics and
 * an execution plan made once per shape and then only executed. */
#ifndef BPCU_DNN_H
#define BPCU_DNN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int bpdnn_status;                         /* cudnnStatus_t */
typedef struct cudnnContext *bpdnn_handle;        /* cudnnHandle_t */
typedef struct cudnnTensorStruct *bpdnn_tensor;   /* cudnnTensorDescriptor_t */
typedef struct cudnnFilterStruct *bpdnn_filter;   /* cudnnFilterDescriptor_t */
typedef struct cudnnConvolutionStruct *bpdnn_conv; /* cudnnConvolutionDescriptor_t */
struct CUstream_st;                               /* cudaStream_t */
typedef void *bpdnn_desc;                         /* cudnnBackendDescriptor_t */

enum {
    BPDNN_STATUS_SUCCESS = 0,        /* CUDNN_STATUS_SUCCESS */
    BPDNN_STATUS_NOT_SUPPORTED = 3000, /* CUDNN_STATUS_NOT_SUPPORTED (cuDNN 9) */
    BPDNN_DATA_FLOAT = 0,            /* cudnnDataType_t */
    BPDNN_DATA_DOUBLE = 1,
    BPDNN_DATA_HALF = 2,
    BPDNN_DATA_BFLOAT16 = 9,
    BPDNN_TENSOR_NCHW = 0,           /* cudnnTensorFormat_t */
    BPDNN_CROSS_CORRELATION = 1,     /* cudnnConvolutionMode_t: ONNX's Conv */
    BPDNN_DEFAULT_MATH = 0,          /* cudnnMathType_t */
    BPDNN_TENSOR_OP_MATH = 1,
    BPDNN_FMA_MATH = 3,
    BPDNN_DETERMINISTIC = 1          /* cudnnDeterminism_t */
};

/* The backend API's numbers (cudnn_graph.h): descriptor kinds, attribute
 * types, attribute names, the heuristics' mode and the engines' notes. */
enum {
    BPDNN_B_CONVOLUTION = 1,         /* cudnnBackendDescriptorType_t */
    BPDNN_B_ENGINE = 2,
    BPDNN_B_ENGINECFG = 3,
    BPDNN_B_ENGINEHEUR = 4,
    BPDNN_B_EXECUTION_PLAN = 5,
    BPDNN_B_OP_CONV_FORWARD = 10,
    BPDNN_B_OPERATION_GRAPH = 15,
    BPDNN_B_VARIANT_PACK = 16,
    BPDNN_B_TENSOR = 17,
    BPDNN_T_HANDLE = 0,              /* cudnnBackendAttributeType_t */
    BPDNN_T_DATA_TYPE = 1,
    BPDNN_T_INT64 = 3,
    BPDNN_T_FLOAT = 4,
    BPDNN_T_VOID_PTR = 6,
    BPDNN_T_CONV_MODE = 7,
    BPDNN_T_HEUR_MODE = 8,
    BPDNN_T_NUMERICAL_NOTE = 11,
    BPDNN_T_DESCRIPTOR = 15,
    BPDNN_T_BEHAVIOR_NOTE = 19,
    BPDNN_A_CONV_COMP_TYPE = 100,    /* cudnnBackendAttributeName_t */
    BPDNN_A_CONV_MODE = 101,
    BPDNN_A_CONV_DILATIONS = 102,
    BPDNN_A_CONV_FILTER_STRIDES = 103,
    BPDNN_A_CONV_POST_PADDINGS = 104,
    BPDNN_A_CONV_PRE_PADDINGS = 105,
    BPDNN_A_CONV_SPATIAL_DIMS = 106,
    BPDNN_A_HEUR_MODE = 200,
    BPDNN_A_HEUR_GRAPH = 201,
    BPDNN_A_HEUR_RESULTS = 202,
    BPDNN_A_CFG_ENGINE = 300,
    BPDNN_A_PLAN_HANDLE = 400,
    BPDNN_A_PLAN_CFG = 401,
    BPDNN_A_PLAN_WORKSPACE = 402,
    BPDNN_A_FWD_ALPHA = 700,
    BPDNN_A_FWD_BETA = 701,
    BPDNN_A_FWD_CONV = 702,
    BPDNN_A_FWD_W = 703,
    BPDNN_A_FWD_X = 704,
    BPDNN_A_FWD_Y = 705,
    BPDNN_A_GRAPH_HANDLE = 800,
    BPDNN_A_GRAPH_OPS = 801,
    BPDNN_A_TENSOR_ALIGNMENT = 900,
    BPDNN_A_TENSOR_DATA_TYPE = 901,
    BPDNN_A_TENSOR_DIMS = 902,
    BPDNN_A_TENSOR_STRIDES = 903,
    BPDNN_A_TENSOR_UID = 906,
    BPDNN_A_PACK_UIDS = 1000,
    BPDNN_A_PACK_POINTERS = 1001,
    BPDNN_A_PACK_WORKSPACE = 1003,
    BPDNN_A_ENGINE_NUMERICAL_NOTE = 1303,
    BPDNN_A_ENGINE_BEHAVIOR_NOTE = 1305,
    BPDNN_HEUR_INSTANT = 0,          /* cudnnBackendHeurMode_t */
    BPDNN_NOTE_REDUCED_PRECISION_REDUCTION = 2, /* cudnnBackendNumericalNote_t */
    BPDNN_NOTE_NONDETERMINISTIC = 4,
    BPDNN_NOTE_TYPE_COUNT = 10,
    BPDNN_BEHAVIOR_RUNTIME_COMPILATION = 0,     /* cudnnBackendBehaviorNote_t */
    BPDNN_BEHAVIOR_TYPE_COUNT = 5
};

/* cudnnConvolutionFwdAlgoPerf_t and cudnnConvolutionBwdDataAlgoPerf_t (the
 * same layout; the enums are ints) */
typedef struct bpdnn_perf {
    int algo;
    bpdnn_status status;
    float time;
    size_t memory;                   /* the workspace the algorithm needs */
    int determinism;
    int math_type;
    int reserved[3];
} bpdnn_perf;

/* The entry points, in the order of bpdnn_symbols (dnn.cu). */
typedef struct bpdnn_api {
    size_t (*get_version)(void);                               /* cudnnGetVersion */
    size_t (*get_cudart_version)(void);                        /* cudnnGetCudartVersion */
    const char *(*error_string)(bpdnn_status);                 /* cudnnGetErrorString */
    bpdnn_status (*create)(bpdnn_handle *);                    /* cudnnCreate */
    bpdnn_status (*destroy)(bpdnn_handle);                     /* cudnnDestroy */
    bpdnn_status (*set_stream)(bpdnn_handle, struct CUstream_st *); /* cudnnSetStream */
    bpdnn_status (*create_tensor)(bpdnn_tensor *);             /* cudnnCreateTensorDescriptor */
    bpdnn_status (*set_tensor)(bpdnn_tensor, int data_type, int nb_dims, const int *dims,
                               const int *strides);            /* cudnnSetTensorNdDescriptor */
    bpdnn_status (*destroy_tensor)(bpdnn_tensor);              /* cudnnDestroyTensorDescriptor */
    bpdnn_status (*create_filter)(bpdnn_filter *);             /* cudnnCreateFilterDescriptor */
    bpdnn_status (*set_filter)(bpdnn_filter, int data_type, int format, int nb_dims,
                               const int *dims);               /* cudnnSetFilterNdDescriptor */
    bpdnn_status (*destroy_filter)(bpdnn_filter);              /* cudnnDestroyFilterDescriptor */
    bpdnn_status (*create_conv)(bpdnn_conv *);                 /* cudnnCreateConvolutionDescriptor */
    bpdnn_status (*set_conv)(bpdnn_conv, int array_length, const int *pads, const int *strides,
                             const int *dilations, int mode,
                             int compute_type);                /* cudnnSetConvolutionNdDescriptor */
    bpdnn_status (*set_conv_groups)(bpdnn_conv, int groups);   /* cudnnSetConvolutionGroupCount */
    bpdnn_status (*set_conv_math)(bpdnn_conv, int math_type);  /* cudnnSetConvolutionMathType */
    bpdnn_status (*destroy_conv)(bpdnn_conv);                  /* cudnnDestroyConvolutionDescriptor */
    /* cudnnGetConvolutionForwardAlgorithm_v7 */
    bpdnn_status (*fwd_algos)(bpdnn_handle, bpdnn_tensor x, bpdnn_filter w, bpdnn_conv,
                              bpdnn_tensor y, int requested, int *returned, bpdnn_perf *perf);
    /* cudnnGetConvolutionForwardWorkspaceSize */
    bpdnn_status (*fwd_workspace)(bpdnn_handle, bpdnn_tensor x, bpdnn_filter w, bpdnn_conv,
                                  bpdnn_tensor y, int algo, size_t *bytes);
    /* cudnnConvolutionForward: y = alpha conv(x, w) + beta y */
    bpdnn_status (*fwd)(bpdnn_handle, const void *alpha, bpdnn_tensor xd, const void *x,
                        bpdnn_filter wd, const void *w, bpdnn_conv, int algo, void *workspace,
                        size_t workspace_bytes, const void *beta, bpdnn_tensor yd, void *y);
    /* cudnnGetConvolutionBackwardDataAlgorithm_v7 */
    bpdnn_status (*bwd_algos)(bpdnn_handle, bpdnn_filter w, bpdnn_tensor dy, bpdnn_conv,
                              bpdnn_tensor dx, int requested, int *returned, bpdnn_perf *perf);
    /* cudnnGetConvolutionBackwardDataWorkspaceSize */
    bpdnn_status (*bwd_workspace)(bpdnn_handle, bpdnn_filter w, bpdnn_tensor dy, bpdnn_conv,
                                  bpdnn_tensor dx, int algo, size_t *bytes);
    /* cudnnConvolutionBackwardData: dx = alpha conv^T(dy, w) + beta dx */
    bpdnn_status (*bwd)(bpdnn_handle, const void *alpha, bpdnn_filter wd, const void *w,
                        bpdnn_tensor dyd, const void *dy, bpdnn_conv, int algo, void *workspace,
                        size_t workspace_bytes, const void *beta, bpdnn_tensor dxd, void *dx);
    /* the backend API */
    bpdnn_status (*b_create)(int kind, bpdnn_desc *);          /* cudnnBackendCreateDescriptor */
    bpdnn_status (*b_destroy)(bpdnn_desc);                     /* cudnnBackendDestroyDescriptor */
    bpdnn_status (*b_finalize)(bpdnn_desc);                    /* cudnnBackendFinalize */
    bpdnn_status (*b_set)(bpdnn_desc, int name, int type, int64_t count,
                          const void *values);                 /* cudnnBackendSetAttribute */
    bpdnn_status (*b_get)(bpdnn_desc, int name, int type, int64_t requested, int64_t *count,
                          void *values);                       /* cudnnBackendGetAttribute */
    bpdnn_status (*b_execute)(bpdnn_handle, bpdnn_desc plan,
                              bpdnn_desc pack);                /* cudnnBackendExecute */
} bpdnn_api;

/* The symbols, in bpdnn_api's order (dnn.cu). */
#define BPDNN_SYMBOLS(X)                                                                 \
    X(cudnnGetVersion) X(cudnnGetCudartVersion) X(cudnnGetErrorString) X(cudnnCreate)    \
    X(cudnnDestroy) X(cudnnSetStream) X(cudnnCreateTensorDescriptor)                    \
    X(cudnnSetTensorNdDescriptor) X(cudnnDestroyTensorDescriptor)                       \
    X(cudnnCreateFilterDescriptor) X(cudnnSetFilterNdDescriptor)                        \
    X(cudnnDestroyFilterDescriptor) X(cudnnCreateConvolutionDescriptor)                 \
    X(cudnnSetConvolutionNdDescriptor) X(cudnnSetConvolutionGroupCount)                 \
    X(cudnnSetConvolutionMathType) X(cudnnDestroyConvolutionDescriptor)                 \
    X(cudnnGetConvolutionForwardAlgorithm_v7) X(cudnnGetConvolutionForwardWorkspaceSize) \
    X(cudnnConvolutionForward) X(cudnnGetConvolutionBackwardDataAlgorithm_v7)           \
    X(cudnnGetConvolutionBackwardDataWorkspaceSize) X(cudnnConvolutionBackwardData)     \
    X(cudnnBackendCreateDescriptor) X(cudnnBackendDestroyDescriptor)                    \
    X(cudnnBackendFinalize) X(cudnnBackendSetAttribute) X(cudnnBackendGetAttribute)     \
    X(cudnnBackendExecute)

/* The library's file name, and the major version of cuDNN it must be. */
#define BPDNN_LIBRARY "libcudnn.so.9"
#define BPDNN_MAJOR 9

#ifdef __cplusplus
}
#endif
#endif

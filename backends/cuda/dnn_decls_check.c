/* Built where cuDNN's headers are installed (backends/cuda/CMakeLists.txt):
 * proves at compile time that dnn.h's declarations say what cuDNN's own
 * headers say. Nothing here runs and nothing links it; a mismatch stops
 * the build. */
#include <stddef.h>

/* The legacy convolution API is deprecated in cuDNN 9: its declarations
 * are read here, never called. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cudnn.h>

#include "dnn.h"

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a " != " #b)

SAME(BPDNN_STATUS_SUCCESS, CUDNN_STATUS_SUCCESS);
SAME(BPDNN_STATUS_NOT_SUPPORTED, CUDNN_STATUS_NOT_SUPPORTED);
SAME(BPDNN_DATA_FLOAT, CUDNN_DATA_FLOAT);
SAME(BPDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE);
SAME(BPDNN_DATA_HALF, CUDNN_DATA_HALF);
SAME(BPDNN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16);
SAME(BPDNN_TENSOR_NCHW, CUDNN_TENSOR_NCHW);
SAME(BPDNN_CROSS_CORRELATION, CUDNN_CROSS_CORRELATION);
SAME(BPDNN_DEFAULT_MATH, CUDNN_DEFAULT_MATH);
SAME(BPDNN_TENSOR_OP_MATH, CUDNN_TENSOR_OP_MATH);
SAME(BPDNN_FMA_MATH, CUDNN_FMA_MATH);
SAME(BPDNN_DETERMINISTIC, CUDNN_DETERMINISTIC);
SAME(BPDNN_MAJOR, CUDNN_MAJOR);

/* the backend API's numbers */
SAME(BPDNN_B_CONVOLUTION, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
SAME(BPDNN_B_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
SAME(BPDNN_B_ENGINECFG, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
SAME(BPDNN_B_ENGINEHEUR, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
SAME(BPDNN_B_EXECUTION_PLAN, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
SAME(BPDNN_B_OP_CONV_FORWARD, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
SAME(BPDNN_B_OPERATION_GRAPH, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
SAME(BPDNN_B_VARIANT_PACK, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
SAME(BPDNN_B_TENSOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
SAME(BPDNN_T_HANDLE, CUDNN_TYPE_HANDLE);
SAME(BPDNN_T_DATA_TYPE, CUDNN_TYPE_DATA_TYPE);
SAME(BPDNN_T_INT64, CUDNN_TYPE_INT64);
SAME(BPDNN_T_FLOAT, CUDNN_TYPE_FLOAT);
SAME(BPDNN_T_VOID_PTR, CUDNN_TYPE_VOID_PTR);
SAME(BPDNN_T_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE);
SAME(BPDNN_T_HEUR_MODE, CUDNN_TYPE_HEUR_MODE);
SAME(BPDNN_T_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE);
SAME(BPDNN_T_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR);
SAME(BPDNN_T_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE);
SAME(BPDNN_A_CONV_COMP_TYPE, CUDNN_ATTR_CONVOLUTION_COMP_TYPE);
SAME(BPDNN_A_CONV_MODE, CUDNN_ATTR_CONVOLUTION_CONV_MODE);
SAME(BPDNN_A_CONV_DILATIONS, CUDNN_ATTR_CONVOLUTION_DILATIONS);
SAME(BPDNN_A_CONV_FILTER_STRIDES, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES);
SAME(BPDNN_A_CONV_POST_PADDINGS, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS);
SAME(BPDNN_A_CONV_PRE_PADDINGS, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS);
SAME(BPDNN_A_CONV_SPATIAL_DIMS, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS);
SAME(BPDNN_A_HEUR_MODE, CUDNN_ATTR_ENGINEHEUR_MODE);
SAME(BPDNN_A_HEUR_GRAPH, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
SAME(BPDNN_A_HEUR_RESULTS, CUDNN_ATTR_ENGINEHEUR_RESULTS);
SAME(BPDNN_A_CFG_ENGINE, CUDNN_ATTR_ENGINECFG_ENGINE);
SAME(BPDNN_A_PLAN_HANDLE, CUDNN_ATTR_EXECUTION_PLAN_HANDLE);
SAME(BPDNN_A_PLAN_CFG, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
SAME(BPDNN_A_PLAN_WORKSPACE, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
SAME(BPDNN_A_FWD_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA);
SAME(BPDNN_A_FWD_BETA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA);
SAME(BPDNN_A_FWD_CONV, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC);
SAME(BPDNN_A_FWD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W);
SAME(BPDNN_A_FWD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X);
SAME(BPDNN_A_FWD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y);
SAME(BPDNN_A_GRAPH_HANDLE, CUDNN_ATTR_OPERATIONGRAPH_HANDLE);
SAME(BPDNN_A_GRAPH_OPS, CUDNN_ATTR_OPERATIONGRAPH_OPS);
SAME(BPDNN_A_TENSOR_ALIGNMENT, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT);
SAME(BPDNN_A_TENSOR_DATA_TYPE, CUDNN_ATTR_TENSOR_DATA_TYPE);
SAME(BPDNN_A_TENSOR_DIMS, CUDNN_ATTR_TENSOR_DIMENSIONS);
SAME(BPDNN_A_TENSOR_STRIDES, CUDNN_ATTR_TENSOR_STRIDES);
SAME(BPDNN_A_TENSOR_UID, CUDNN_ATTR_TENSOR_UNIQUE_ID);
SAME(BPDNN_A_PACK_UIDS, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
SAME(BPDNN_A_PACK_POINTERS, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
SAME(BPDNN_A_PACK_WORKSPACE, CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
SAME(BPDNN_A_ENGINE_NUMERICAL_NOTE, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE);
SAME(BPDNN_A_ENGINE_BEHAVIOR_NOTE, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE);
SAME(BPDNN_HEUR_INSTANT, CUDNN_HEUR_MODE_INSTANT);
SAME(BPDNN_NOTE_REDUCED_PRECISION_REDUCTION, CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION);
SAME(BPDNN_NOTE_NONDETERMINISTIC, CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC);
SAME(BPDNN_NOTE_TYPE_COUNT, CUDNN_NUMERICAL_NOTE_TYPE_COUNT);
SAME(BPDNN_BEHAVIOR_RUNTIME_COMPILATION, CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION);
SAME(BPDNN_BEHAVIOR_TYPE_COUNT, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT);
SAME(sizeof(cudnnBackendDescriptorType_t), sizeof(int));
SAME(sizeof(cudnnBackendAttributeName_t), sizeof(int));
SAME(sizeof(cudnnBackendAttributeType_t), sizeof(int));
SAME(sizeof(cudnnBackendNumericalNote_t), sizeof(int));
SAME(sizeof(cudnnBackendBehaviorNote_t), sizeof(int));
SAME(sizeof(cudnnBackendHeurMode_t), sizeof(int));
_Static_assert(_Generic((cudnnBackendDescriptor_t)0, bpdnn_desc: 1, default: 0),
               "cudnnBackendDescriptor_t");

/* the enums dnn.h passes as int are int-sized */
SAME(sizeof(cudnnStatus_t), sizeof(int));
SAME(sizeof(cudnnDataType_t), sizeof(int));
SAME(sizeof(cudnnTensorFormat_t), sizeof(int));
SAME(sizeof(cudnnConvolutionMode_t), sizeof(int));
SAME(sizeof(cudnnMathType_t), sizeof(int));
SAME(sizeof(cudnnConvolutionFwdAlgo_t), sizeof(int));
SAME(sizeof(cudnnConvolutionBwdDataAlgo_t), sizeof(int));

/* the handles are cuDNN's own pointer types */
_Static_assert(_Generic((cudnnHandle_t)0, bpdnn_handle: 1, default: 0), "cudnnHandle_t");
_Static_assert(_Generic((cudnnTensorDescriptor_t)0, bpdnn_tensor: 1, default: 0),
               "cudnnTensorDescriptor_t");
_Static_assert(_Generic((cudnnFilterDescriptor_t)0, bpdnn_filter: 1, default: 0),
               "cudnnFilterDescriptor_t");
_Static_assert(_Generic((cudnnConvolutionDescriptor_t)0, bpdnn_conv: 1, default: 0),
               "cudnnConvolutionDescriptor_t");
_Static_assert(_Generic((cudaStream_t)0, struct CUstream_st *: 1, default: 0), "cudaStream_t");

/* the ranked algorithms' records */
#define LAYOUT(T)                                                                       \
    SAME(sizeof(T), sizeof(bpdnn_perf));                                                \
    SAME(offsetof(T, algo), offsetof(bpdnn_perf, algo));                                \
    SAME(offsetof(T, status), offsetof(bpdnn_perf, status));                            \
    SAME(offsetof(T, time), offsetof(bpdnn_perf, time));                                \
    SAME(offsetof(T, memory), offsetof(bpdnn_perf, memory));                            \
    SAME(offsetof(T, determinism), offsetof(bpdnn_perf, determinism));                  \
    SAME(offsetof(T, mathType), offsetof(bpdnn_perf, math_type))
LAYOUT(cudnnConvolutionFwdAlgoPerf_t);
LAYOUT(cudnnConvolutionBwdDataAlgoPerf_t);

/* every symbol dnn.cu looks up is declared by the headers */
#define DECLARED(name) _Static_assert(sizeof(&name) == sizeof(void *), #name);
BPDNN_SYMBOLS(DECLARED)

/* ISO C wants a translation unit to declare something */
extern int bpdnn_decls_checked;

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

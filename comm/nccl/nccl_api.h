/* The few functions of NCCL (libnccl.so.2) and the CUDA driver (libcuda.so.1)
 * the nccl engine calls, declared here and found with dlsym, so that the
 * engine builds without NCCL's or CUDA's headers (as backends/cuda/front.c
 * does for the driver) and a machine without them only gets an error when
 * it asks for the engine. Types and values are those of nccl.h (2.10 and
 * later: ncclAvg and bf16 arrived then) and cuda.h. */
#ifndef BP_COMM_NCCL_API_H
#define BP_COMM_NCCL_API_H

#include <stddef.h>

enum {
    NCCL_SUCCESS = 0,
    NCCL_IN_PROGRESS = 7,
    /* ncclRedOp_t */
    NCCL_SUM = 0, NCCL_PROD = 1, NCCL_MAX = 2, NCCL_MIN = 3, NCCL_AVG = 4,
    /* ncclDataType_t */
    NCCL_INT8 = 0, NCCL_UINT8 = 1, NCCL_INT32 = 2, NCCL_UINT32 = 3, NCCL_INT64 = 4, NCCL_UINT64 = 5,
    NCCL_FLOAT16 = 6,
    NCCL_FLOAT32 = 7, NCCL_FLOAT64 = 8, NCCL_BFLOAT16 = 9,
    NCCL_UNIQUE_ID_BYTES = 128,
    /* cuda.h */
    CU_SUCCESS = 0,
    CU_ERROR_NOT_READY = 600,
    CU_STREAM_NON_BLOCKING = 1
};

typedef struct nccl_unique_id { char internal[NCCL_UNIQUE_ID_BYTES]; } nccl_unique_id;
typedef void *nccl_comm;   /* ncclComm_t */
typedef void *cu_stream;   /* CUstream, the same as cudaStream_t */
typedef void *cu_context;  /* CUcontext */

typedef struct nccl_api {
    void *nccl_lib, *cuda_lib;
    int version;                                   /* ncclGetVersion: 22809 for 2.28.9 */
    /* NCCL */
    int (*get_version)(int *version);
    int (*get_unique_id)(nccl_unique_id *id);
    int (*comm_init_rank)(nccl_comm *comm, int nranks, nccl_unique_id id, int rank);
    int (*comm_destroy)(nccl_comm comm);
    int (*comm_abort)(nccl_comm comm);
    int (*comm_get_async_error)(nccl_comm comm, int *result);
    const char *(*get_error_string)(int result);
    int (*all_reduce)(const void *send, void *recv, size_t count, int dtype, int op,
                      nccl_comm comm, cu_stream stream);
    int (*broadcast)(const void *send, void *recv, size_t count, int dtype, int root,
                     nccl_comm comm, cu_stream stream);
    int (*all_gather)(const void *send, void *recv, size_t send_count, int dtype,
                      nccl_comm comm, cu_stream stream);
    int (*reduce_scatter)(const void *send, void *recv, size_t recv_count, int dtype, int op,
                          nccl_comm comm, cu_stream stream);
    /* the CUDA driver */
    int (*cu_init)(unsigned flags);
    int (*cu_device_get_count)(int *count);
    int (*cu_device_get)(int *device, int ordinal);
    int (*cu_primary_ctx_retain)(cu_context *ctx, int device);
    int (*cu_primary_ctx_release)(int device);
    int (*cu_ctx_set_current)(cu_context ctx);
    int (*cu_stream_create)(cu_stream *stream, unsigned flags);
    int (*cu_stream_query)(cu_stream stream);
    int (*cu_stream_destroy)(cu_stream stream);
} nccl_api;

/* Load NCCL ($BP_NCCL_LIBRARY, else libnccl.so.2) and the driver; on failure
 * why holds the reason and the remedy, and the return value says which:
 * 1 NCCL is missing or unusable, 2 the driver is, 0 both loaded. */
int nccl_api_load(nccl_api *api, char *why, size_t cap);

#endif

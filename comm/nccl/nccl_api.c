/* Finding NCCL's and the CUDA driver's functions (nccl_api.h). */
#include "nccl_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A function pointer from dlsym without converting a void * to one. */
#define FIND(lib, field, name, missing)             \
    do {                                            \
        void *p_ = dlsym((lib), (name));            \
        if (!p_ && !(missing))                      \
            (missing) = (name);                     \
        memcpy(&api->field, &p_, sizeof p_);        \
    } while (0)

int nccl_api_load(nccl_api *api, char *why, size_t cap)
{
    memset(api, 0, sizeof *api);
    const char *file = getenv("BP_NCCL_LIBRARY");
    if (!file || !*file)
        file = "libnccl.so.2";
    api->nccl_lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!api->nccl_lib) {
        const char *e = dlerror();
        snprintf(why, cap,
                 "NCCL cannot be loaded (%s): install it (NVIDIA's libnccl2 package), or set "
                 "$BP_NCCL_LIBRARY to a libnccl.so.2 (PyTorch's wheel carries one, under "
                 "site-packages/nvidia/nccl/lib)",
                 e ? e : file);
        return 1;
    }
    const char *missing = NULL;
    FIND(api->nccl_lib, get_version, "ncclGetVersion", missing);
    FIND(api->nccl_lib, get_unique_id, "ncclGetUniqueId", missing);
    FIND(api->nccl_lib, comm_init_rank, "ncclCommInitRank", missing);
    FIND(api->nccl_lib, comm_destroy, "ncclCommDestroy", missing);
    FIND(api->nccl_lib, comm_abort, "ncclCommAbort", missing);
    FIND(api->nccl_lib, comm_get_async_error, "ncclCommGetAsyncError", missing);
    FIND(api->nccl_lib, get_error_string, "ncclGetErrorString", missing);
    FIND(api->nccl_lib, all_reduce, "ncclAllReduce", missing);
    FIND(api->nccl_lib, broadcast, "ncclBroadcast", missing);
    FIND(api->nccl_lib, all_gather, "ncclAllGather", missing);
    FIND(api->nccl_lib, reduce_scatter, "ncclReduceScatter", missing);
    if (missing || api->get_version(&api->version) != NCCL_SUCCESS || api->version < 21000) {
        snprintf(why, cap,
                 "%s is not a usable NCCL (%s%s); the nccl engine needs NCCL 2.10 or later",
                 file, missing ? "it lacks " : "its version is ",
                 missing ? missing : "older than 2.10");
        dlclose(api->nccl_lib);
        api->nccl_lib = NULL;
        return 1;
    }
    api->cuda_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (api->cuda_lib) {
        missing = NULL;
        FIND(api->cuda_lib, cu_init, "cuInit", missing);
        FIND(api->cuda_lib, cu_device_get_count, "cuDeviceGetCount", missing);
        FIND(api->cuda_lib, cu_device_get, "cuDeviceGet", missing);
        FIND(api->cuda_lib, cu_primary_ctx_retain, "cuDevicePrimaryCtxRetain", missing);
        FIND(api->cuda_lib, cu_primary_ctx_release, "cuDevicePrimaryCtxRelease_v2", missing);
        FIND(api->cuda_lib, cu_ctx_set_current, "cuCtxSetCurrent", missing);
        FIND(api->cuda_lib, cu_stream_create, "cuStreamCreate", missing);
        FIND(api->cuda_lib, cu_stream_query, "cuStreamQuery", missing);
        FIND(api->cuda_lib, cu_stream_destroy, "cuStreamDestroy_v2", missing);
    }
    int devices = 0;
    if (!api->cuda_lib || missing || api->cu_init(0) != CU_SUCCESS ||
        api->cu_device_get_count(&devices) != CU_SUCCESS || devices == 0) {
        snprintf(why, cap,
                 "%s: the nccl engine needs an NVIDIA GPU and its driver (libcuda.so.1), and %s",
                 api->cuda_lib ? "no usable CUDA device" : "no CUDA driver",
                 api->cuda_lib ? "the driver reports none" : "the driver's library is missing");
        if (api->cuda_lib)
            dlclose(api->cuda_lib);
        dlclose(api->nccl_lib);
        memset(api, 0, sizeof *api);
        return 2;
    }
    return 0;
}

/* device_open/close: each exposed device gets its primary context
 * (retained), a compute stream, a stream-ordered memory pool capped by
 * memory_fraction (or plain cudaMalloc/cudaFree where the device has no
 * memory pools), a cuBLAS handle, for each transfer direction a stream
 * and two pinned staging buffers (transfer.cu), and the slots of its index
 * checks (checks.cu). Closing gives back any wrapped memory still held
 * (exchange.cu). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "open.h"

static void device_destroy(bpcu_device *d)
{
    bpcu_ctx_guard caller;
    const bpcu_driver *drv = bpcu_driver_api();
    bool current = d->ctx && drv->ctx_set(d->ctx) == CUDA_SUCCESS;
    if (current) {
        bpcu_stage *st[2] = {&d->up, &d->down};
        for (int s = 0; s < 2; s++)
            if (st[s]->stream)
                cudaStreamSynchronize(st[s]->stream);
        if (d->stream)
            cudaStreamSynchronize(d->stream);
        bpcu_releases_run(d, true);
        bpcu_checks_destroy(d);
        bpcu_dnn_close(d);
        if (d->blas)
            cublasDestroy(d->blas);
        for (int s = 0; s < 2; s++) {
            for (int k = 0; k < 2; k++) {
                if (st[s]->done[k])
                    cudaEventDestroy(st[s]->done[k]);
                if (st[s]->buf[k])
                    cudaFreeHost(st[s]->buf[k]);
            }
            if (st[s]->stream)
                cudaStreamDestroy(st[s]->stream);
        }
        bpcu_events_destroy(d);
        if (d->pool)
            cudaMemPoolDestroy(d->pool);
        if (d->stream)
            cudaStreamDestroy(d->stream);
    }
    if (d->ctx) {
        CUdevice cd;
        if (drv->device_get(&cd, d->ordinal) == CUDA_SUCCESS)
            drv->primary_release(cd);
    }
    bpcu_copier_stop(&d->copier);
    d->~bpcu_device();
    free(d);
}

/* The device's primary context, retained and made current. */
static cudaError_t enter_context(bpcu_device *d, const char **what)
{
    const bpcu_driver *drv = bpcu_driver_api();
    *what = "cudaGetDriverEntryPoint (cuCtxGetCurrent, cuCtxSetCurrent, cuDevicePrimaryCtxRetain)";
    if (!drv->ctx_get || !drv->ctx_set || !drv->device_get || !drv->primary_retain ||
        !drv->primary_release)
        return cudaErrorNotSupported;
    CUdevice cd;
    *what = "cuDevicePrimaryCtxRetain";
    if (drv->device_get(&cd, d->ordinal) != CUDA_SUCCESS ||
        drv->primary_retain(&d->ctx, cd) != CUDA_SUCCESS) {
        d->ctx = NULL;
        return cudaErrorInitializationError;
    }
    *what = "cuCtxSetCurrent";
    return drv->ctx_set(d->ctx) == CUDA_SUCCESS ? cudaSuccess : cudaErrorInitializationError;
}

/* A pool of its own where the device has memory pools (it keeps freed
 * memory for reuse up to the cap; bp_backend_synchronize trims it); none
 * (cudaMalloc / cudaFree) where it has not. */
static cudaError_t create_pool(bpcu_device *d, const char **what)
{
    int supported = 0;
    *what = "cudaDeviceGetAttribute (cudaDevAttrMemoryPoolsSupported)";
    cudaError_t e = cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, d->ordinal);
    if (e != cudaSuccess || !supported) {
        d->host->log(d->host->host, BP_LOG_INFO, "device %d has no stream-ordered memory pools: "
                     "buffers use cudaMalloc/cudaFree (a free waits for the device)", d->ordinal);
        return e;
    }
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = d->ordinal;
    *what = "cudaMemPoolCreate";
    e = cudaMemPoolCreate(&d->pool, &props);
    if (e == cudaErrorNotSupported) {
        d->pool = NULL;
        return cudaSuccess;
    }
    if (e == cudaSuccess) {
        uint64_t threshold = d->cap;
        *what = "cudaMemPoolSetAttribute";
        e = cudaMemPoolSetAttribute(d->pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    }
    if (e == cudaSuccess) {
        /* an allocation on the upload stream must never be made to wait for
         * the compute stream's pending frees (the pool grows instead):
         * writes do not wait for unrelated work (transfer.cu) */
        int no = 0;
        e = cudaMemPoolSetAttribute(d->pool, cudaMemPoolReuseAllowInternalDependencies, &no);
    }
    d->pooled = e == cudaSuccess;
    return e;
}

/* A transfer direction: its own stream and two pinned buffers. */
static cudaError_t create_stage(bpcu_stage *st, const char **what)
{
    *what = "cudaStreamCreate";
    cudaError_t e = cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking);
    for (int k = 0; k < 2 && e == cudaSuccess; k++) {
        *what = "cudaMallocHost", e = cudaMallocHost(&st->buf[k], BPCU_STAGE_BYTES);
        if (e == cudaSuccess)
            *what = "cudaEventCreate",
            e = cudaEventCreateWithFlags(&st->done[k], cudaEventDisableTiming);
    }
    return e;
}

static cudaError_t create_queues(bpcu_device *d, const char **what)
{
    cudaError_t e = enter_context(d, what);
    if (e == cudaSuccess)
        *what = "cudaStreamCreate", e = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = create_pool(d, what);
    if (e == cudaSuccess)
        e = create_stage(&d->up, what);
    if (e == cudaSuccess)
        e = create_stage(&d->down, what);
    return e;
}

static cublasStatus_t create_blas(bpcu_device *d)
{
    cublasStatus_t bs = cublasCreate(&d->blas);
    if (bs == CUBLAS_STATUS_SUCCESS)
        bs = cublasSetStream(d->blas, d->stream);
    if (bs == CUBLAS_STATUS_SUCCESS)
        /* f16/bf16 outputs: split-K partial sums must stay in the f32
         * accumulator (by default cuBLAS may reduce them in the 16-bit output
         * type, rounding more than once) */
        bs = cublasSetMathMode(d->blas, (cublasMath_t)((d->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                : CUBLAS_DEFAULT_MATH) |
                                                       CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
    return bs;
}

bp_status bpcu_device_open(void *state, int32_t index, void **dev)
{
    bpcu_state *s = (bpcu_state *)state;
    if (index < 0 || index >= s->count) {
        s->host->set_error(s->host->host, "cuda: no device %d (%d exposed)", (int)index, s->count);
        return BP_ERR_INVALID_ARGUMENT;
    }
    const bpcu_devrec *r = &s->dev[index];
    void *mem = calloc(1, sizeof(bpcu_device));
    if (!mem) {
        s->host->set_error(s->host->host, "cuda: out of memory opening device %d", (int)index);
        return BP_ERR_OUT_OF_MEMORY;
    }
    bpcu_ctx_guard caller;
    bpcu_device *d = new (mem) bpcu_device();
    d->host = s->host;
    d->ordinal = r->ordinal;
    d->tf32 = s->tf32;
    d->cudnn = s->cudnn;
    d->dnn = NULL;
    d->used.store(0);
    d->lost.store(false);
    d->cap = (uint64_t)floor((double)r->total * s->memory_fraction);
    d->keep = s->pool_keep;
    d->copier.want = s->staging_threads;
    const char *what = "";
    cudaError_t e = create_queues(d, &what);
    if (e == cudaSuccess)
        what = "the index checks (cudaHostAlloc, cudaMalloc, cudaEventCreate)",
        e = bpcu_checks_create(d);
    if (e != cudaSuccess) {
        s->host->set_error(s->host->host, "cuda: opening device %d: %s: %s", d->ordinal, what,
                           cudaGetErrorString(e));
        device_destroy(d);
        return e == cudaErrorMemoryAllocation ? BP_ERR_OUT_OF_MEMORY : BP_ERR_BACKEND;
    }
    /* 48 KiB without opting in, which every device allows */
    if (cudaDeviceGetAttribute(&d->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                               d->ordinal) != cudaSuccess || d->smem_optin < 48 * 1024)
        d->smem_optin = 48 * 1024;
    cublasStatus_t bs = create_blas(d);
    if (bs != CUBLAS_STATUS_SUCCESS) {
        s->host->set_error(s->host->host, "cuda: cuBLAS on device %d: %s", d->ordinal,
                           cublasGetStatusString(bs));
        device_destroy(d);
        return BP_ERR_BACKEND;
    }
    *dev = d;
    return BP_OK;
}

void bpcu_device_close(void *dev) { device_destroy((bpcu_device *)dev); }

/* Device memory: buffers (alloc, free, memory_info) and op scratch, all
 * from the device's stream-ordered pool on its stream. The cap
 * (memory_fraction) is enforced on the bytes of live buffers. */
#include <stdlib.h>

#include "bpcu.h"

bp_status bpcu_alloc(void *dev, size_t bytes, void **buffer)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    uint64_t before = d->used.fetch_add(bytes);
    if (before + bytes > d->cap || before + bytes < before) {
        d->used.fetch_sub(bytes);
        return bpcu_fail(d, BP_ERR_OUT_OF_MEMORY,
                         "cuda: allocating %zu bytes on device %d would pass the pool cap of "
                         "%llu bytes (memory_fraction; %llu in use)", bytes, d->ordinal,
                         (unsigned long long)d->cap, (unsigned long long)before);
    }
    bpcu_buf *b = (bpcu_buf *)calloc(1, sizeof *b);
    if (!b) {
        d->used.fetch_sub(bytes);
        return bpcu_fail(d, BP_ERR_OUT_OF_MEMORY, "cuda: out of host memory for a buffer handle");
    }
    b->bytes = bytes;
    if (bytes) {
        cudaError_t e = cudaMallocFromPoolAsync(&b->ptr, bytes, d->pool, d->stream);
        if (e != cudaSuccess) {
            free(b);
            d->used.fetch_sub(bytes);
            cudaGetLastError();
            return bpcu_fail(d, e == cudaErrorMemoryAllocation ? BP_ERR_OUT_OF_MEMORY
                                                                : BP_ERR_BACKEND,
                             "cuda: cannot allocate %zu bytes on device %d: %s", bytes,
                             d->ordinal, cudaGetErrorString(e));
        }
    }
    *buffer = b;
    return BP_OK;
}

void bpcu_free(void *dev, void *buffer)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_buf *b = (bpcu_buf *)buffer;
    if (!b)
        return;
    if (b->ptr && bpcu_enter(d) == BP_OK)
        cudaFreeAsync(b->ptr, d->stream); /* after the queued work that uses it */
    d->used.fetch_sub(b->bytes);
    free(b);
}

bp_status bpcu_memory_info(void *dev, bp_memory_info *info)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    info->used = d->used.load();
    uint64_t reserved = 0;
    if (cudaMemPoolGetAttribute(d->pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess)
        reserved = 0;
    info->reserved = reserved;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        free_b = total_b = 0;
    info->device_free = free_b;
    info->device_total = total_b;
    cudaGetLastError();
    return BP_OK;
}

bp_status bpcu_scratch(bpcu_device *d, size_t bytes, void **p)
{
    *p = NULL;
    cudaError_t e = cudaMallocFromPoolAsync(p, bytes ? bytes : 1, d->pool, d->stream);
    if (e != cudaSuccess)
        return bpcu_fail(d, BP_ERR_OUT_OF_MEMORY, "cuda: no device memory for %zu bytes of "
                         "scratch on device %d: %s", bytes, d->ordinal, cudaGetErrorString(e));
    return BP_OK;
}

void bpcu_scratch_free(bpcu_device *d, void *p)
{
    if (p)
        cudaFreeAsync(p, d->stream);
}

/* Device memory: buffers (alloc, free, memory_info, their memory and ready
 * events) and op scratch. Where the device has memory pools they come from
 * the device's own pool, stream-ordered (a free waits for the queued work
 * that uses the memory without blocking the host); elsewhere from
 * cudaMalloc/cudaFree (cudaFree waits for the device). alloc() only counts
 * the bytes against the cap (memory_fraction) and makes the handle; the
 * memory comes at the buffer's first use, in the order of the stream that
 * uses it first (bpcu_materialize; transfer.cu says why).
 *
 * Reserved memory: the pool keeps freed memory for reuse (allocating from
 * it is fast; growing it is not) up to the cap. bp_backend_synchronize
 * (synchronize() in transfer.cu) trims it to pool_keep_mb once the queued
 * frees have run, and closing the device returns all of it. memory_info
 * reports the two apart: used = bytes of live buffers, reserved = what the
 * pool holds beyond the memory in use (cached, free for reuse). */
#include <stdlib.h>

#include "bpcu.h"

static cudaError_t dev_alloc(bpcu_device *d, void **p, size_t bytes, cudaStream_t s)
{
    return d->pooled ? cudaMallocFromPoolAsync(p, bytes, d->pool, s) : cudaMalloc(p, bytes);
}

static cudaError_t dev_free(bpcu_device *d, void *p)
{
    return d->pooled ? cudaFreeAsync(p, d->stream) : cudaFree(p);
}

bp_status bpcu_alloc(void *dev, size_t bytes, void **buffer)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "alloc", false);
    if (in.status != BP_OK)
        return in.status;
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
    *buffer = b;
    return BP_OK;
}

bp_status bpcu_materialize(bpcu_device *d, bpcu_buf *b, cudaStream_t s)
{
    if (!b || b->ptr || !b->bytes)
        return BP_OK;
    cudaError_t e = dev_alloc(d, &b->ptr, b->bytes, s);
    if (e != cudaSuccess) {
        b->ptr = NULL;
        return bpcu_cuda_fail(d, e, "allocating %zu bytes", b->bytes);
    }
    return BP_OK;
}

/* ---- ready events, kept for reuse (creating one per op would cost more) ---- */

static cudaError_t event_get(bpcu_device *d, cudaEvent_t *ev)
{
    {
        std::lock_guard<std::mutex> lock(d->spare_mu);
        if (d->nspare > 0) {
            *ev = d->spare[--d->nspare];
            return cudaSuccess;
        }
    }
    return cudaEventCreateWithFlags(ev, cudaEventDisableTiming);
}

/* Recording again an event that waits were queued on is safe: a queued wait
 * keeps the record it saw. */
static void event_put(bpcu_device *d, cudaEvent_t ev)
{
    if (!ev)
        return;
    {
        std::lock_guard<std::mutex> lock(d->spare_mu);
        if (d->nspare < BPCU_SPARE_EVENTS) {
            d->spare[d->nspare++] = ev;
            return;
        }
    }
    cudaEventDestroy(ev);
}

void bpcu_events_destroy(bpcu_device *d)
{
    std::lock_guard<std::mutex> lock(d->spare_mu);
    while (d->nspare > 0)
        cudaEventDestroy(d->spare[--d->nspare]);
}

cudaError_t bpcu_mark_written(bpcu_device *d, bpcu_buf *b, cudaStream_t s)
{
    cudaError_t e = b->ready ? cudaSuccess : event_get(d, &b->ready);
    if (e == cudaSuccess)
        e = cudaEventRecord(b->ready, s);
    if (e != cudaSuccess) { /* no event: a read then waits for all queued work */
        event_put(d, b->ready);
        b->ready = NULL;
    }
    return e;
}

/* A free that fails keeps its bytes counted as used (the memory may still
 * be held) and is logged: free() has no way to return an error. A wrapped
 * buffer's memory is given back to its owner instead. */
void bpcu_free(void *dev, void *buffer)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_buf *b = (bpcu_buf *)buffer;
    if (!b)
        return;
    if (b->wrapped) { /* another library's memory: given back, not freed (exchange.cu) */
        bpcu_release_wrapped(d, b);
        event_put(d, b->ready);
        free(b);
        return;
    }
    bool freed = !b->ptr;
    if (b->ptr) {
        bpcu_scope in(d, "free", false);
        cudaError_t e = in.status == BP_OK ? dev_free(d, b->ptr) : cudaErrorContextIsDestroyed;
        freed = e == cudaSuccess;
        if (!freed && in.status == BP_OK && !bpcu_note_lost(d, e)) {
            d->host->log(d->host->host, BP_LOG_WARN, "device %d: freeing a buffer of %zu bytes "
                         "failed: %s (%s); its bytes stay counted as used", d->ordinal, b->bytes,
                         cudaGetErrorName(e), cudaGetErrorString(e));
        }
    }
    if (freed)
        d->used.fetch_sub(b->bytes);
    event_put(d, b->ready);
    free(b);
}

bp_status bpcu_memory_info(void *dev, bp_memory_info *info)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "memory_info", false);
    if (in.status != BP_OK)
        return in.status;
    info->used = d->used.load();
    uint64_t reserved = 0, in_use = 0;
    if (d->pooled &&
        (cudaMemPoolGetAttribute(d->pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess ||
         cudaMemPoolGetAttribute(d->pool, cudaMemPoolAttrUsedMemCurrent, &in_use) != cudaSuccess))
        reserved = in_use = 0;
    info->reserved = reserved > in_use ? reserved - in_use : 0;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        free_b = total_b = 0;
    info->device_free = free_b;
    info->device_total = total_b;
    return BP_OK;
}

bp_status bpcu_pool_trim(bpcu_device *d)
{
    if (!d->pooled)
        return BP_OK;
    cudaError_t e = cudaMemPoolTrimTo(d->pool, d->keep);
    return e == cudaSuccess ? BP_OK : bpcu_cuda_fail(d, e, "trimming the memory pool");
}

bp_status bpcu_scratch(bpcu_device *d, size_t bytes, void **p)
{
    *p = NULL;
    cudaError_t e = dev_alloc(d, p, bytes ? bytes : 1, d->stream);
    if (e != cudaSuccess)
        return bpcu_cuda_fail(d, e, "%zu bytes of scratch", bytes);
    return BP_OK;
}

void bpcu_scratch_free(bpcu_device *d, void *p)
{
    if (!p)
        return;
    cudaError_t e = dev_free(d, p);
    if (e != cudaSuccess && !bpcu_note_lost(d, e))
        d->host->log(d->host->host, BP_LOG_WARN, "device %d: freeing scratch failed: %s (%s)",
                     d->ordinal, cudaGetErrorName(e), cudaGetErrorString(e));
}

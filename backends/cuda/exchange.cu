/* Exchange with other libraries (ABI 1.3; DLPack through core/src/dlpack.c).
 *
 * wrap: another library's CUDA memory on this device becomes a buffer
 * without a copy (a PyTorch tensor taken with bp_tensor_from_dlpack). Only
 * device memory of this device (BP_MEMORY_CUDA, checked with
 * cudaPointerGetAttributes: device or managed memory whose device is this
 * one) is used in place; any other kind, or another device's memory, is
 * BP_ERR_UNSUPPORTED_OP and the core copies instead (host and pinned host
 * memory: kernels reading host memory over the bus would be slower than one
 * copy in). Such a buffer is never written (tensors are immutable) and
 * does not count against memory_fraction (it is not this plugin's memory).
 *
 * free() of it gives the memory back with release(release_ctx), exactly
 * once, after the work queued on the compute stream before the free (every
 * op that may read it) has ended: an event is recorded there and the
 * release waits in a list, run without blocking at each later free and
 * synchronize, and with waiting at device close. (A CUDA host callback
 * could not do it: the release may call into CUDA, which a callback must
 * not.) Reads are synchronous, so no transfer is left using it.
 *
 * buffer_address: where a buffer's bytes are (kind CUDA, the CUDA device
 * number, the pointer), for bp_tensor_to_dlpack, which synchronises before
 * handing it out. */
#include <stdlib.h>

#include "bpcu.h"

bp_status bpcu_wrap(void *dev, int32_t kind, void *memory, size_t bytes, void (*release)(void *),
                    void *release_ctx, void **buffer)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "wrap", false);
    if (in.status != BP_OK)
        return in.status;
    if (kind != BP_MEMORY_CUDA)
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: memory of kind %d is not used in place "
                         "(only CUDA device memory of cuda:%d is); it is copied instead",
                         (int)kind, d->ordinal);
    cudaPointerAttributes at;
    memset(&at, 0, sizeof at);
    cudaError_t e = cudaPointerGetAttributes(&at, memory);
    if (e != cudaSuccess) {
        if (bpcu_note_lost(d, e))
            return bpcu_cuda_fail(d, e, "cudaPointerGetAttributes");
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %p is not CUDA memory this process "
                         "knows (%s), so it cannot be used in place", memory,
                         cudaGetErrorString(e));
    }
    if ((at.type != cudaMemoryTypeDevice && at.type != cudaMemoryTypeManaged) ||
        at.device != d->ordinal)
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: the memory at %p is %s of CUDA device "
                         "%d, not device memory of cuda:%d (CUDA device %d); copy it to that "
                         "device in its library first", memory,
                         at.type == cudaMemoryTypeHost ? "host memory" : "memory", at.device,
                         d->ordinal, d->ordinal);
    bpcu_buf *b = (bpcu_buf *)calloc(1, sizeof *b);
    if (!b)
        return bpcu_fail(d, BP_ERR_OUT_OF_MEMORY, "cuda: out of host memory for a buffer handle");
    b->ptr = memory;
    b->bytes = bytes;
    b->wrapped = true;
    b->release = release;
    b->release_ctx = release_ctx;
    *buffer = b;
    return BP_OK;
}

bp_status bpcu_buffer_address(void *dev, void *buffer, int32_t *kind, int32_t *device_id,
                              void **address)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_buf *b = (bpcu_buf *)buffer;
    bpcu_scope in(d, "buffer_address", false);
    if (in.status != BP_OK)
        return in.status;
    if (!b->ptr && b->bytes) { /* never written nor produced: memory now, in stream order */
        bp_status st = bpcu_materialize(d, b, d->stream);
        if (st != BP_OK)
            return st;
        cudaError_t e = bpcu_mark_written(d, b, d->stream);
        if (e != cudaSuccess)
            return bpcu_cuda_fail(d, e, "recording a buffer's event");
    }
    *kind = BP_MEMORY_CUDA;
    *device_id = d->ordinal;
    *address = b->ptr;
    return BP_OK;
}

/* ---- giving wrapped memory back ------------------------------------------------ */

void bpcu_release_wrapped(bpcu_device *d, bpcu_buf *b)
{
    bpcu_release *r = (bpcu_release *)calloc(1, sizeof *r);
    bool now = true;
    if (r) {
        r->release = b->release;
        r->ctx = b->release_ctx;
        bpcu_scope in(d, "free", false);
        /* a lost device runs nothing more: the memory is free to go now */
        if (in.status == BP_OK &&
            cudaEventCreateWithFlags(&r->after, cudaEventDisableTiming) == cudaSuccess) {
            if (cudaEventRecord(r->after, d->stream) == cudaSuccess) {
                std::lock_guard<std::mutex> lock(d->release_mu);
                r->next = d->releases;
                d->releases = r;
                now = false;
            } else {
                cudaEventDestroy(r->after);
            }
        }
        if (now && in.status == BP_OK) /* no event: wait for the stream instead */
            bpcu_note_lost(d, cudaStreamSynchronize(d->stream));
        if (now)
            free(r);
    } else {
        bpcu_scope in(d, "free", false);
        if (in.status == BP_OK)
            bpcu_note_lost(d, cudaStreamSynchronize(d->stream));
    }
    if (now && b->release)
        b->release(b->release_ctx);
    bpcu_releases_run(d, false);
}

void bpcu_releases_run(bpcu_device *d, bool wait)
{
    bpcu_scope in(d, "release", false);
    bpcu_release *ready = NULL;
    {
        std::lock_guard<std::mutex> lock(d->release_mu);
        bpcu_release **at = &d->releases;
        while (*at) {
            bpcu_release *r = *at;
            cudaError_t e = cudaSuccess;
            if (in.status == BP_OK) /* lost: nothing runs any more, release at once */
                e = wait ? cudaEventSynchronize(r->after) : cudaEventQuery(r->after);
            if (e == cudaErrorNotReady) {
                at = &r->next;
                continue;
            }
            bpcu_note_lost(d, e);
            *at = r->next;
            r->next = ready;
            ready = r;
        }
    }
    /* outside the lock: a release may free other tensors of this backend */
    while (ready) {
        bpcu_release *r = ready;
        ready = r->next;
        if (in.status == BP_OK)
            cudaEventDestroy(r->after);
        if (r->release)
            r->release(r->ctx);
        free(r);
    }
}

/* Host <-> device: write, read and synchronize.
 *
 * Who waits for what. The device has three streams: the compute
 * stream, where every op runs in order; an upload stream, where writes run;
 * a download stream, where reads run. Each buffer has a ready event,
 * recorded behind the last queued work that writes it (the op that produces
 * it, on the compute stream, or a write, on the upload stream).
 *
 *   - A write waits only for its own staging buffers. Each pinned staging
 *     buffer has an event recorded right after the DMA out of it, on the
 *     upload stream, which holds nothing but DMAs; so reusing a staging
 *     buffer waits for the previous copy out of it and never for a kernel.
 *     Before this design every write waited on staging buffer 0's event,
 *     recorded on the compute stream behind all earlier work, so writing a
 *     batch's inputs blocked the host until the previous step's kernels
 *     were done.
 *   - The DMA must not wait for kernels either, so the destination's memory
 *     must not be ordered behind them. That is why a buffer gets its memory
 *     at its first use and not in alloc(): a buffer that a write uses first
 *     is allocated on the upload stream. Memory the pool hands out there is
 *     either fresh, or freed by work that has already finished (the pool's
 *     internal dependencies are switched off in device.cu, so it grows
 *     rather than make the upload stream wait for the compute stream). A
 *     buffer that already has memory (written before, or produced by an op)
 *     makes the upload stream wait for its ready event only.
 *   - Ops see the data: after its last chunk a write records the buffer's
 *     ready event on the upload stream and makes the compute stream wait for
 *     it (on the device; the host does not wait). Every op queued later
 *     runs after the DMA; frees, which are queued on the compute stream,
 *     too.
 *   - A read waits only for the work that produces the buffer it reads: the
 *     download stream waits for the buffer's ready event, and the host for
 *     the download stream's chunks. Ops queued after the producer, related
 *     or not, are not waited for. A buffer without a ready event (recording
 *     it failed) falls back to waiting for all queued work.
 *   - synchronize() waits for all three streams.
 *
 * An error of asynchronous work surfaces at the next call that waits on it:
 * a read reports its producer's (and, being sticky, any fault of the
 * context: errors.cu); synchronize() reports everything.
 *
 * Staging: pinned staging lets a write return as soon as the data
 * is out of the caller's memory, with the DMA still queued, and runs the DMA
 * at pinned speed. What bounds it is the host memcpy into the staging
 * buffer: one core copies ~10-20 GB/s, less than a PCIe 4 x16 (~25 GB/s) or
 * PCIe 5 x16 (~50 GB/s) link moves from pinned memory. So the memcpy of
 * each 8 MiB chunk is split across staging_threads threads (host_copy.cu),
 * and a direction's two buffers alternate so that copying into one overlaps
 * the DMA from the other. bench/gpu measures it against pinned cudaMemcpy
 * (the bound) and pageable cudaMemcpy (the driver's own staging). */
#include <string.h>

#include "bpcu.h"

/* The caller's memory is already page-locked (cudaMallocHost,
 * cudaHostRegister, a framework's pinned tensor) at both ends of the range:
 * the DMA can read or write it directly at full speed, and staging would
 * only add a host memcpy (on an H100 machine, staging from pageable memory
 * ran at 0.33 of pinned cudaMemcpy's speed). Not worth a lookup for small
 * copies. Were the middle of the range not pinned, the driver would stage
 * it itself: still correct. */
#define BPCU_DIRECT_MIN ((size_t)1 << 20)

static bool host_pinned(const void *p, size_t bytes)
{
    if (bytes < BPCU_DIRECT_MIN)
        return false;
    const char *ends[2] = {(const char *)p, (const char *)p + bytes - 1};
    for (int k = 0; k < 2; k++) {
        cudaPointerAttributes at;
        if (cudaPointerGetAttributes(&at, ends[k]) != cudaSuccess) {
            (void)cudaGetLastError(); /* not an error of ours to report */
            return false;
        }
        if (at.type != cudaMemoryTypeHost)
            return false;
    }
    return true;
}

/* One DMA on a direction's stream between device memory and page-locked
 * host memory, waited for (the caller's memory is in use until it is done). */
static cudaError_t dma_and_wait(bpcu_stage *st, void *dst, const void *src, size_t bytes,
                                cudaMemcpyKind kind)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, st->stream);
    if (e == cudaSuccess)
        e = cudaEventRecord(st->done[0], st->stream);
    if (e == cudaSuccess)
        e = cudaEventSynchronize(st->done[0]);
    return e;
}

static size_t chunk_len(size_t bytes, size_t off)
{
    return bytes - off < BPCU_STAGE_BYTES ? bytes - off : BPCU_STAGE_BYTES;
}

/* Host -> device. Returns once the last chunk is queued (src is then no
 * longer needed). */
bp_status bpcu_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_buf *b = (bpcu_buf *)buffer;
    if (!bytes)
        return BP_OK;
    bpcu_scope in(d, "write", true);
    if (in.status != BP_OK)
        return in.status;
    bpcu_stage *up = &d->up;
    std::lock_guard<std::mutex> lock(up->mu);
    cudaError_t e = cudaSuccess;
    if (!b->ptr) {
        bp_status st = bpcu_materialize(d, b, up->stream);
        if (st != BP_OK)
            return st;
    } else if (b->ready) {
        e = cudaStreamWaitEvent(up->stream, b->ready, 0);
    }
    if (e == cudaSuccess && host_pinned(src, bytes)) {
        /* src is needed until the DMA is done */
        e = dma_and_wait(up, (char *)b->ptr + offset, src, bytes, cudaMemcpyHostToDevice);
        bytes = e == cudaSuccess ? 0 : bytes; /* nothing left to stage */
    }
    for (size_t done = 0, k = 0; e == cudaSuccess && done < bytes;
         done += BPCU_STAGE_BYTES, k ^= 1) {
        size_t len = chunk_len(bytes, done);
        e = cudaEventSynchronize(up->done[k]); /* the previous DMA out of buf[k] only */
        if (e == cudaSuccess) {
            bpcu_host_copy(&d->copier, up->buf[k], (const char *)src + done, len);
            e = cudaMemcpyAsync((char *)b->ptr + offset + done, up->buf[k], len,
                                cudaMemcpyHostToDevice, up->stream);
        }
        if (e == cudaSuccess)
            e = cudaEventRecord(up->done[k], up->stream);
    }
    /* ops queued later (and the buffer's free) come after the DMA, also
     * after a failed chunk: earlier ones may still be in flight */
    cudaError_t e2 = bpcu_mark_written(d, b, up->stream);
    if (e2 == cudaSuccess)
        e2 = cudaStreamWaitEvent(d->stream, b->ready, 0);
    if (e == cudaSuccess)
        e = e2;
    if (e != cudaSuccess)
        return bpcu_cuda_fail(d, e, "writing %zu bytes", bytes);
    return BP_OK;
}

/* The download stream waits for what produces b (all queued compute work
 * if b has no ready event). */
static cudaError_t wait_for_producer(bpcu_device *d, const bpcu_buf *b, cudaStream_t s)
{
    if (b->ready)
        return cudaStreamWaitEvent(s, b->ready, 0);
    cudaEvent_t all;
    cudaError_t e = cudaEventCreateWithFlags(&all, cudaEventDisableTiming);
    if (e != cudaSuccess)
        return e;
    e = cudaEventRecord(all, d->stream);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(s, all, 0);
    cudaEventDestroy(all); /* destroyed once the queued wait has passed */
    return e;
}

/* Device -> host: chunk c is queued before chunk c - 1 is copied out, so the
 * DMA of one overlaps the memcpy of the other. */
bp_status bpcu_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_buf *b = (bpcu_buf *)buffer;
    bpcu_scope in(d, "read", false);
    if (in.status != BP_OK)
        return in.status;
    bpcu_stage *down = &d->down;
    std::lock_guard<std::mutex> lock(down->mu);
    cudaError_t e = cudaSuccess;
    if (!b->ptr && b->bytes) { /* never written nor produced: undefined contents */
        bp_status st = bpcu_materialize(d, b, d->stream);
        if (st != BP_OK)
            return st;
        e = bpcu_mark_written(d, b, d->stream);
    }
    if (e == cudaSuccess)
        e = wait_for_producer(d, b, down->stream);
    if (e == cudaSuccess && !bytes) { /* nothing to copy: wait for the producer itself */
        e = cudaEventRecord(down->done[0], down->stream);
        if (e == cudaSuccess)
            e = cudaEventSynchronize(down->done[0]);
    }
    if (e == cudaSuccess && host_pinned(dst, bytes)) { /* one DMA, straight into dst */
        e = dma_and_wait(down, dst, (const char *)b->ptr + offset, bytes, cudaMemcpyDeviceToHost);
        bytes = e == cudaSuccess ? 0 : bytes; /* nothing left to stage */
    }
    size_t nchunks = (bytes + BPCU_STAGE_BYTES - 1) / BPCU_STAGE_BYTES;
    for (size_t c = 0; e == cudaSuccess && bytes && c <= nchunks; c++) {
        if (c < nchunks) { /* queue chunk c */
            size_t off = c * BPCU_STAGE_BYTES, k = c & 1;
            e = cudaMemcpyAsync(down->buf[k], (const char *)b->ptr + offset + off,
                                chunk_len(bytes, off), cudaMemcpyDeviceToHost, down->stream);
            if (e == cudaSuccess)
                e = cudaEventRecord(down->done[k], down->stream);
        }
        if (e == cudaSuccess && c > 0) { /* drain chunk c - 1 */
            size_t off = (c - 1) * BPCU_STAGE_BYTES, k = (c - 1) & 1;
            e = cudaEventSynchronize(down->done[k]);
            if (e == cudaSuccess)
                bpcu_host_copy(&d->copier, (char *)dst + off, down->buf[k], chunk_len(bytes, off));
        }
    }
    if (e != cudaSuccess)
        return bpcu_cuda_fail(d, e, "reading %zu bytes (an error of the work that produced them "
                              "surfaces here)", bytes);
    return BP_OK;
}

/* Waits for everything queued on the three streams, then gives back the
 * wrapped memory freed meanwhile (exchange.cu) and trims the memory pool
 * (memory.cu). */
bp_status bpcu_synchronize(void *dev)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "synchronize", false);
    if (in.status != BP_OK)
        return in.status;
    cudaError_t e = cudaStreamSynchronize(d->up.stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(d->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(d->down.stream);
    if (e != cudaSuccess)
        return bpcu_cuda_fail(d, e, "waiting for queued work");
    bpcu_synced(d);
    bpcu_releases_run(d, false); /* wrapped memory whose last reader has now ended */
    return bpcu_pool_trim(d);
}

/* Host <-> device: write, read and synchronize, through the two pinned
 * staging buffers of each device.
 *
 * Staging (issue 8): a pinned staging buffer lets write() return as soon as
 * the data is copied out of the caller's memory, with the DMA still queued,
 * and runs the DMA at pinned speed. What bounds it is the host memcpy into
 * the staging buffer: one core copies ~10-20 GB/s, less than a PCIe 4 x16
 * (~25 GB/s) or PCIe 5 x16 (~50 GB/s) link moves from pinned memory. So the
 * memcpy of each 8 MiB chunk is split across staging_threads threads
 * (host_copy.cu), and the two buffers alternate so that copying into one
 * overlaps the DMA from the other. The alternatives were measured against
 * in bench/gpu (pinned cudaMemcpy is the bound; pageable cudaMemcpy is the
 * driver's own single-threaded staging). */
#include <string.h>

#include "bpcu.h"

static size_t chunk_len(size_t bytes, size_t off)
{
    return bytes - off < BPCU_STAGE_BYTES ? bytes - off : BPCU_STAGE_BYTES;
}

/* Host -> device: chunk k waits only for the previous copy out of its own
 * staging buffer. Returns once the last chunk is queued (src is no longer
 * needed). */
bp_status bpcu_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_buf *b = (bpcu_buf *)buffer;
    if (!bytes)
        return BP_OK;
    bpcu_scope in(d, "write");
    if (in.status != BP_OK)
        return in.status;
    std::lock_guard<std::mutex> lock(d->stage_mu);
    for (size_t done = 0, k = 0; done < bytes; done += BPCU_STAGE_BYTES, k ^= 1) {
        size_t len = chunk_len(bytes, done);
        cudaError_t e = cudaEventSynchronize(d->stage_done[k]);
        if (e == cudaSuccess) {
            bpcu_host_copy(&d->copier, d->stage[k], (const char *)src + done, len);
            e = cudaMemcpyAsync((char *)b->ptr + offset + done, d->stage[k], len,
                                cudaMemcpyHostToDevice, d->stream);
        }
        if (e == cudaSuccess)
            e = cudaEventRecord(d->stage_done[k], d->stream);
        if (e != cudaSuccess)
            return bpcu_cuda_fail(d, e, "writing %zu bytes (an error of earlier queued work "
                                  "surfaces here)", bytes);
    }
    return BP_OK;
}

/* Device -> host: chunk c is queued before chunk c - 1 is copied out, so the
 * DMA of one overlaps the memcpy of the other. Waits for the queued work on
 * the stream, so an error of an earlier asynchronous op is reported here. */
bp_status bpcu_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    bpcu_device *d = (bpcu_device *)dev;
    const bpcu_buf *b = (const bpcu_buf *)buffer;
    bpcu_scope in(d, "read", false);
    if (in.status != BP_OK)
        return in.status;
    if (!bytes) {
        cudaError_t e = cudaStreamSynchronize(d->stream);
        if (e != cudaSuccess)
            return bpcu_cuda_fail(d, e, "waiting for earlier queued work");
        bpcu_synced(d);
        return BP_OK;
    }
    std::lock_guard<std::mutex> lock(d->stage_mu);
    size_t nchunks = (bytes + BPCU_STAGE_BYTES - 1) / BPCU_STAGE_BYTES;
    for (size_t c = 0; c <= nchunks; c++) {
        cudaError_t e = cudaSuccess;
        if (c < nchunks) { /* queue chunk c */
            size_t off = c * BPCU_STAGE_BYTES, k = c & 1;
            e = cudaMemcpyAsync(d->stage[k], (const char *)b->ptr + offset + off,
                                chunk_len(bytes, off), cudaMemcpyDeviceToHost, d->stream);
            if (e == cudaSuccess)
                e = cudaEventRecord(d->stage_done[k], d->stream);
        }
        if (e == cudaSuccess && c > 0) { /* drain chunk c - 1 */
            size_t off = (c - 1) * BPCU_STAGE_BYTES, k = (c - 1) & 1;
            e = cudaEventSynchronize(d->stage_done[k]);
            if (e == cudaSuccess)
                bpcu_host_copy(&d->copier, (char *)dst + off, d->stage[k], chunk_len(bytes, off));
        }
        if (e != cudaSuccess)
            return bpcu_cuda_fail(d, e, "reading %zu bytes (an error of earlier queued work "
                                  "surfaces here)", bytes);
    }
    bpcu_synced(d);
    return BP_OK;
}

/* Waits for everything queued, then trims the memory pool (memory.cu). */
bp_status bpcu_synchronize(void *dev)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "synchronize", false);
    if (in.status != BP_OK)
        return in.status;
    cudaError_t e = cudaStreamSynchronize(d->stream);
    if (e != cudaSuccess)
        return bpcu_cuda_fail(d, e, "waiting for earlier queued work");
    bpcu_synced(d);
    return bpcu_pool_trim(d);
}

/* Host <-> device: write, read and synchronize, through the two pinned
 * staging buffers of each device. */
#include <string.h>

#include "bpcu.h"

/* Host -> device through the two pinned staging buffers: chunk k waits only
 * for the previous copy out of its own staging buffer, so copying into one
 * overlaps the DMA from the other. Returns once the last chunk is queued
 * (src is no longer needed). */
bp_status bpcu_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_buf *b = (bpcu_buf *)buffer;
    if (!bytes)
        return BP_OK;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    std::lock_guard<std::mutex> lock(d->stage_mu);
    for (size_t done = 0, k = 0; done < bytes; done += BPCU_STAGE_BYTES, k ^= 1) {
        size_t len = bytes - done < BPCU_STAGE_BYTES ? bytes - done : BPCU_STAGE_BYTES;
        cudaError_t e = cudaEventSynchronize(d->stage_done[k]);
        if (e == cudaSuccess) {
            memcpy(d->stage[k], (const char *)src + done, len);
            e = cudaMemcpyAsync((char *)b->ptr + offset + done, d->stage[k], len,
                                cudaMemcpyHostToDevice, d->stream);
        }
        if (e == cudaSuccess)
            e = cudaEventRecord(d->stage_done[k], d->stream);
        if (e != cudaSuccess)
            return bpcu_fail(d, BP_ERR_BACKEND, "cuda: writing %zu bytes to device %d: %s (an "
                             "error of earlier queued work surfaces here)", bytes, d->ordinal,
                             cudaGetErrorString(e));
    }
    return BP_OK;
}

/* Device -> host: waits for the queued work on the stream, so an error of an
 * earlier asynchronous op is reported here. */
bp_status bpcu_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    bpcu_device *d = (bpcu_device *)dev;
    const bpcu_buf *b = (const bpcu_buf *)buffer;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    if (!bytes) {
        cudaError_t e = cudaStreamSynchronize(d->stream);
        if (e != cudaSuccess)
            return bpcu_fail(d, BP_ERR_BACKEND, "cuda: device %d: %s (from earlier queued work)",
                             d->ordinal, cudaGetErrorString(e));
        return BP_OK;
    }
    std::lock_guard<std::mutex> lock(d->stage_mu);
    size_t nchunks = (bytes + BPCU_STAGE_BYTES - 1) / BPCU_STAGE_BYTES;
    for (size_t c = 0; c <= nchunks; c++) {
        cudaError_t e = cudaSuccess;
        if (c < nchunks) { /* queue chunk c */
            size_t off = c * BPCU_STAGE_BYTES, k = c & 1;
            size_t len = bytes - off < BPCU_STAGE_BYTES ? bytes - off : BPCU_STAGE_BYTES;
            e = cudaMemcpyAsync(d->stage[k], (const char *)b->ptr + offset + off, len,
                                cudaMemcpyDeviceToHost, d->stream);
            if (e == cudaSuccess)
                e = cudaEventRecord(d->stage_done[k], d->stream);
        }
        if (e == cudaSuccess && c > 0) { /* drain chunk c - 1 */
            size_t off = (c - 1) * BPCU_STAGE_BYTES, k = (c - 1) & 1;
            size_t len = bytes - off < BPCU_STAGE_BYTES ? bytes - off : BPCU_STAGE_BYTES;
            e = cudaEventSynchronize(d->stage_done[k]);
            if (e == cudaSuccess)
                memcpy((char *)dst + off, d->stage[k], len);
        }
        if (e != cudaSuccess)
            return bpcu_fail(d, BP_ERR_BACKEND, "cuda: reading %zu bytes from device %d: %s "
                             "(an error of earlier queued work surfaces here)", bytes, d->ordinal,
                             cudaGetErrorString(e));
    }
    return BP_OK;
}

bp_status bpcu_synchronize(void *dev)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    cudaError_t e = cudaStreamSynchronize(d->stream);
    if (e != cudaSuccess)
        return bpcu_fail(d, BP_ERR_BACKEND, "cuda: device %d: %s (from earlier queued work)",
                         d->ordinal, cudaGetErrorString(e));
    return BP_OK;
}

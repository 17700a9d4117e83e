/* The binary backend's descriptor, lifecycle and buffers. One device: the
 * host. Buffers are plain 64-byte aligned host memory (huge-page mappings
 * from 32 MiB: host_memory.c), so the core can read
 * them directly (host_addressable). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary.h"

/* Alignment of every buffer; also the size of the header before it that
 * remembers the requested size (for memory_info) and the block's mapping
 * length (bpb_block_get: big buffers are huge-page mappings). */
#define BPB_ALIGN ((size_t)64)

typedef struct bpb_state {
    const bp_host_api *host;
} bpb_state;

/* bpb_dev comes first: kernels only see the bpb_dev part. */
typedef struct bpb_device {
    bpb_dev base;
    atomic_uint_fast64_t used;
    bpb_wraps wraps;            /* buffers that are someone else's memory */
} bpb_device;

/* ---- lifecycle ---------------------------------------------------------- */

static bp_status bin_open(const bp_host_api *host, void **state)
{
    bpb_state *st = calloc(1, sizeof *st);
    if (!st) {
        if (host && host->set_error)
            host->set_error(host->host, "binary: out of memory opening the backend");
        return BP_ERR_OUT_OF_MEMORY;
    }
    st->host = host;
    *state = st;
    return BP_OK;
}

static void bin_close(void *state) { free(state); }

static int32_t bin_device_count(void *state) { return 1; }

static bp_status bin_device_info(void *state, int32_t index, bp_device_info *info)
{
    const bpb_state *st = state;
    if (index != 0) {
        st->host->set_error(st->host->host, "binary: no device %d (only device 0)", (int)index);
        return BP_ERR_INVALID_ARGUMENT;
    }
    snprintf(info->name, sizeof info->name, "host CPU (reference)");
    snprintf(info->detail, sizeof info->detail,
             "pure C11 reference kernels, single-threaded, %zu-byte aligned host buffers",
             BPB_ALIGN);
    info->host_addressable = true;
    return BP_OK;
}

static bp_status bin_device_open(void *state, int32_t index, void **dev)
{
    const bpb_state *st = state;
    if (index != 0) {
        st->host->set_error(st->host->host, "binary: no device %d (only device 0)", (int)index);
        return BP_ERR_INVALID_ARGUMENT;
    }
    bpb_device *d = calloc(1, sizeof *d);
    if (!d) {
        st->host->set_error(st->host->host, "binary: out of memory opening the device");
        return BP_ERR_OUT_OF_MEMORY;
    }
    d->base.host = st->host;
    atomic_init(&d->used, 0);
    bpb_wraps_init(&d->wraps);
    *dev = d;
    return BP_OK;
}

static void bin_device_close(void *dev)
{
    bpb_wraps_destroy(&((bpb_device *)dev)->wraps);
    free(dev);
}

static bp_status bin_wrap(void *dev, int32_t kind, void *memory, size_t bytes,
                          void (*release)(void *), void *release_ctx, void **buffer)
{
    return bpb_wrap(dev, &((bpb_device *)dev)->wraps, kind, memory, bytes, release, release_ctx,
                    buffer);
}

/* ---- buffers ------------------------------------------------------------ */

static bp_status bin_alloc(void *dev, size_t bytes, void **buffer)
{
    bpb_device *d = dev;
    if (bytes > SIZE_MAX - 2 * BPB_ALIGN)
        return bpb_fail(dev, BP_ERR_OUT_OF_MEMORY, "binary: cannot allocate %zu bytes", bytes);
    /* aligned_alloc wants a multiple of the alignment; a zero-byte buffer
     * still gets its header, so every handle is unique and non-NULL */
    size_t total = BPB_ALIGN + ((bytes + BPB_ALIGN - 1) & ~(BPB_ALIGN - 1)), map_len;
    char *block = bpb_block_get(total, BPB_HUGE_UNCACHED, &map_len);
    if (!block)
        return bpb_fail(dev, BP_ERR_OUT_OF_MEMORY, "binary: cannot allocate %zu bytes", bytes);
    memcpy(block, &bytes, sizeof bytes);
    memcpy(block + sizeof bytes, &map_len, sizeof map_len);
    atomic_fetch_add(&d->used, (uint_fast64_t)bytes);
    *buffer = block + BPB_ALIGN;
    return BP_OK;
}

static void bin_free(void *dev, void *buffer)
{
    bpb_device *d = dev;
    if (!buffer || bpb_wraps_release(&d->wraps, buffer))
        return;
    char *block = (char *)buffer - BPB_ALIGN;
    size_t bytes, map_len;
    memcpy(&bytes, block, sizeof bytes);
    memcpy(&map_len, block + sizeof bytes, sizeof map_len);
    atomic_fetch_sub(&d->used, (uint_fast64_t)bytes);
    bpb_block_put(block, map_len);
}

static bp_status bin_memory_info(void *dev, bp_memory_info *info)
{
    bpb_device *d = dev;
    info->used = (uint64_t)atomic_load(&d->used);
    info->reserved = 0;
    bpb_system_memory(info);
    return BP_OK;
}

/* ---- descriptor --------------------------------------------------------- */

static const bp_plugin bin_plugin = {
    .struct_size = sizeof(bp_plugin),
    .abi_major = BP_ABI_MAJOR,
    .abi_minor = BP_ABI_MINOR,
    .name = "binary",
    .version = "0.1.0",
    .description = "pure C11 reference backend: every op, host memory, no dependencies",
    .config_keys = NULL,
    .config_key_size = sizeof(bp_config_key),
    .open = bin_open,
    .close = bin_close,
    .device_count = bin_device_count,
    .device_info = bin_device_info,
    .device_open = bin_device_open,
    .device_close = bin_device_close,
    .alloc = bin_alloc,
    .free = bin_free,
    .write = bpb_write,
    .read = bpb_read,
    .host_ptr = bpb_host_ptr,
    .synchronize = bpb_synchronize,
    .memory_info = bin_memory_info,
    .supports = bpb_supports, /* every op of the table, every dtype its row accepts */
    .wrap = bin_wrap,
    .op = bpb_op, /* every op, a kernel per kind (op.c); the typed entries of the ops of 1.0
                     are left NULL: the core calls them only for plugins built before 1.6 */
};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void) { return &bin_plugin; }

/* The binary backend's descriptor, lifecycle and buffers. One device: the
 * host. Buffers are plain 64-byte aligned host memory (huge-page mappings
 * from 32 MiB: host_memory.c), so the core can read
 * them directly (host_addressable). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

/* Alignment of every buffer; also the size of the header before it that
 * remembers the requested size (for memory_info) and the block's mapping
 * length (bpk_block_get: big buffers are huge-page mappings). */
#define BPK_ALIGN ((size_t)64)

typedef struct bpk_state {
    const bp_host_api *host;
} bpk_state;

/* bpk_dev comes first: kernels only see the bpk_dev part. */
typedef struct bpk_device {
    bpk_dev base;
    atomic_uint_fast64_t used;
    bpk_wraps wraps;            /* buffers that are someone else's memory */
} bpk_device;

/* ---- lifecycle ---------------------------------------------------------- */

static bp_status bin_open(const bp_host_api *host, void **state)
{
    bpk_state *st = calloc(1, sizeof *st);
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
    const bpk_state *st = state;
    if (index != 0) {
        st->host->set_error(st->host->host, "binary: no device %d (only device 0)", (int)index);
        return BP_ERR_INVALID_ARGUMENT;
    }
    snprintf(info->name, sizeof info->name, "host CPU (reference)");
    snprintf(info->detail, sizeof info->detail,
             "pure C11 reference kernels, single-threaded, %zu-byte aligned host buffers",
             BPK_ALIGN);
    info->host_addressable = true;
    return BP_OK;
}

static bp_status bin_device_open(void *state, int32_t index, void **dev)
{
    const bpk_state *st = state;
    if (index != 0) {
        st->host->set_error(st->host->host, "binary: no device %d (only device 0)", (int)index);
        return BP_ERR_INVALID_ARGUMENT;
    }
    bpk_device *d = calloc(1, sizeof *d);
    if (!d) {
        st->host->set_error(st->host->host, "binary: out of memory opening the device");
        return BP_ERR_OUT_OF_MEMORY;
    }
    d->base.host = st->host;
    atomic_init(&d->used, 0);
    bpk_wraps_init(&d->wraps);
    *dev = d;
    return BP_OK;
}

static void bin_device_close(void *dev)
{
    bpk_wraps_destroy(&((bpk_device *)dev)->wraps);
    free(dev);
}

static bp_status bin_wrap(void *dev, int32_t kind, void *memory, size_t bytes,
                          void (*release)(void *), void *release_ctx, void **buffer)
{
    return bpk_wrap(dev, &((bpk_device *)dev)->wraps, kind, memory, bytes, release, release_ctx,
                    buffer);
}

/* ---- buffers ------------------------------------------------------------ */

static bp_status bin_alloc(void *dev, size_t bytes, void **buffer)
{
    bpk_device *d = dev;
    if (bytes > SIZE_MAX - 2 * BPK_ALIGN)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "binary: cannot allocate %zu bytes", bytes);
    /* aligned_alloc wants a multiple of the alignment; a zero-byte buffer
     * still gets its header, so every handle is unique and non-NULL */
    size_t total = BPK_ALIGN + ((bytes + BPK_ALIGN - 1) & ~(BPK_ALIGN - 1)), map_len;
    char *block = bpk_block_get(total, BPK_HUGE_UNCACHED, &map_len);
    if (!block)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "binary: cannot allocate %zu bytes", bytes);
    memcpy(block, &bytes, sizeof bytes);
    memcpy(block + sizeof bytes, &map_len, sizeof map_len);
    atomic_fetch_add(&d->used, (uint_fast64_t)bytes);
    *buffer = block + BPK_ALIGN;
    return BP_OK;
}

static void bin_free(void *dev, void *buffer)
{
    bpk_device *d = dev;
    if (!buffer || bpk_wraps_release(&d->wraps, buffer))
        return;
    char *block = (char *)buffer - BPK_ALIGN;
    size_t bytes, map_len;
    memcpy(&bytes, block, sizeof bytes);
    memcpy(&map_len, block + sizeof bytes, sizeof map_len);
    atomic_fetch_sub(&d->used, (uint_fast64_t)bytes);
    bpk_block_put(block, map_len);
}

static bp_status bin_memory_info(void *dev, bp_memory_info *info)
{
    bpk_device *d = dev;
    info->used = (uint64_t)atomic_load(&d->used);
    info->reserved = 0;
    bpk_system_memory(info);
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
    .write = bpk_write,
    .read = bpk_read,
    .host_ptr = bpk_host_ptr,
    .synchronize = bpk_synchronize,
    .memory_info = bin_memory_info,
    .supports = bpk_supports, /* every op of the table, every dtype its row accepts */
    .wrap = bin_wrap,
    .op = bpk_op, /* every op, a kernel per kind (op.c); the typed entries of the ops of 1.0
                     are left NULL: the core calls them only for plugins built before 1.6 */
};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void) { return &bin_plugin; }

/* The binary backend's descriptor, lifecycle and buffers. One device: the
 * host. Buffers are plain 64-byte aligned heap memory, so the core can read
 * them directly (host_addressable). */
#define _DEFAULT_SOURCE /* sysconf's _SC_PHYS_PAGES, when the libc has it */

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "binary.h"

/* Alignment of every buffer; also the size of the header before it that
 * remembers the requested size for memory_info. */
#define BPB_ALIGN ((size_t)64)

typedef struct bpb_state {
    const bp_host_api *host;
} bpb_state;

/* bpb_dev comes first: kernels only see the bpb_dev part. */
typedef struct bpb_device {
    bpb_dev base;
    atomic_uint_fast64_t used;
} bpb_device;

bp_status bpb_fail(void *dev, bp_status code, const char *fmt, ...)
{
    const bp_host_api *host = dev ? ((bpb_dev *)dev)->host : NULL;
    if (host && host->set_error) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        host->set_error(host->host, "%s", msg);
    }
    return code;
}

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
    *dev = d;
    return BP_OK;
}

static void bin_device_close(void *dev) { free(dev); }

/* ---- buffers ------------------------------------------------------------ */

static bp_status bin_alloc(void *dev, size_t bytes, void **buffer)
{
    bpb_device *d = dev;
    if (bytes > SIZE_MAX - 2 * BPB_ALIGN)
        return bpb_fail(dev, BP_ERR_OUT_OF_MEMORY, "binary: cannot allocate %zu bytes", bytes);
    /* aligned_alloc wants a multiple of the alignment; a zero-byte buffer
     * still gets its header, so every handle is unique and non-NULL */
    size_t total = BPB_ALIGN + ((bytes + BPB_ALIGN - 1) & ~(BPB_ALIGN - 1));
    char *block = aligned_alloc(BPB_ALIGN, total);
    if (!block)
        return bpb_fail(dev, BP_ERR_OUT_OF_MEMORY, "binary: cannot allocate %zu bytes", bytes);
    memcpy(block, &bytes, sizeof bytes);
    atomic_fetch_add(&d->used, (uint_fast64_t)bytes);
    *buffer = block + BPB_ALIGN;
    return BP_OK;
}

static void bin_free(void *dev, void *buffer)
{
    bpb_device *d = dev;
    if (!buffer)
        return;
    char *block = (char *)buffer - BPB_ALIGN;
    size_t bytes;
    memcpy(&bytes, block, sizeof bytes);
    atomic_fetch_sub(&d->used, (uint_fast64_t)bytes);
    free(block);
}

static bp_status bin_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes)
{
    if (bytes)
        memcpy((char *)buffer + offset, src, bytes);
    return BP_OK;
}

static bp_status bin_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    if (bytes)
        memcpy(dst, (const char *)buffer + offset, bytes);
    return BP_OK;
}

static void *bin_host_ptr(void *dev, void *buffer) { return buffer; }

static bp_status bin_synchronize(void *dev) { return BP_OK; } /* every op is synchronous */

static bp_status bin_memory_info(void *dev, bp_memory_info *info)
{
    bpb_device *d = dev;
    info->used = (uint64_t)atomic_load(&d->used);
    info->reserved = 0;
    info->device_free = 0;
    info->device_total = 0;
#if defined(_SC_PHYS_PAGES) && defined(_SC_AVPHYS_PAGES) && defined(_SC_PAGESIZE)
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && avail >= 0 && page > 0) {
        info->device_total = (uint64_t)pages * (uint64_t)page;
        info->device_free = (uint64_t)avail * (uint64_t)page;
    }
#endif
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
    .open = bin_open,
    .close = bin_close,
    .device_count = bin_device_count,
    .device_info = bin_device_info,
    .device_open = bin_device_open,
    .device_close = bin_device_close,
    .alloc = bin_alloc,
    .free = bin_free,
    .write = bin_write,
    .read = bin_read,
    .host_ptr = bin_host_ptr,
    .synchronize = bin_synchronize,
    .memory_info = bin_memory_info,
    .supports = NULL, /* every op the core accepts, for every dtype it accepts */
    .unary = bpb_unary,
    .binary = bpb_binary,
    .where = bpb_where,
    .reduce = bpb_reduce,
    .matmul = bpb_matmul,
    .copy = bpb_copy,
    .gather = bpb_gather,
    .softmax = bpb_softmax,
    .fill = bpb_fill,
    .arange = bpb_arange,
    .random = bpb_random,
};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void) { return &bin_plugin; }

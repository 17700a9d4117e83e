/* devsim's descriptor, lifecycle and buffers (see devsim.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devsim.h"

typedef struct ds_state {
    const bp_host_api *host;
    bool hold;
    ds_dev *dev;             /* the one device, while open */
} ds_state;

static const bp_config_key ds_keys[] = {
    {"hold", "true: queued work runs only when a call waits for it (tests use it)", "false"},
    {NULL, NULL, NULL},
};

static bp_status ds_open(const bp_host_api *host, void **state)
{
    const char *hold = host->config_get(host->host, "hold");
    if (hold && strcmp(hold, "true") != 0 && strcmp(hold, "false") != 0)
        return host->config_error(host->host, "hold", "expected true or false");
    ds_state *s = calloc(1, sizeof *s);
    if (!s) {
        host->set_error(host->host, "devsim: out of memory");
        return BP_ERR_OUT_OF_MEMORY;
    }
    s->host = host;
    s->hold = hold && strcmp(hold, "true") == 0;
    *state = s;
    return BP_OK;
}

static void ds_close(void *state) { free(state); }
static int32_t ds_device_count(void *state) { return 1; }

/* What the reference kernels see as their host on the worker thread: their
 * error detail is kept for the deferred error instead of being set on a
 * thread no caller is waiting on. */
static void ds_worker_log(void *host, bp_log_level level, const char *fmt, ...)
{
    (void)host;
    (void)level;
    (void)fmt;
}

static void ds_worker_set_error(void *host, const char *fmt, ...)
{
    ds_dev *d = host;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->worker_msg, sizeof d->worker_msg, fmt, ap);
    va_end(ap);
}

/* The detail says how many items wait in the queue: the tests read it to
 * see that a call returned without running (or waiting for) its work. */
static bp_status ds_device_info(void *state, int32_t index, bp_device_info *info)
{
    ds_state *s = state;
    uint64_t queued = 0;
    ds_dev *d = s->dev;
    if (d) {
        pthread_mutex_lock(&d->lock);
        queued = d->next_seq - d->completed;
        pthread_mutex_unlock(&d->lock);
    }
    snprintf(info->name, sizeof info->name, "simulated device (tests only)");
    snprintf(info->detail, sizeof info->detail,
             "private memory; ops queued to a worker thread%s; reference kernels; "
             "%llu items queued",
             s->hold ? ", held until a call waits" : "", (unsigned long long)queued);
    info->host_addressable = false;
    return BP_OK;
}

static bp_status ds_device_open(void *state, int32_t index, void **dev)
{
    ds_state *s = state;
    ds_dev *d = calloc(1, sizeof *d);
    if (!d) {
        s->host->set_error(s->host->host, "devsim: out of memory");
        return BP_ERR_OUT_OF_MEMORY;
    }
    d->host = s->host;
    d->hold = s->hold;
    d->worker_host = *s->host;
    d->worker_host.host = d;
    d->worker_host.log = ds_worker_log;
    d->worker_host.set_error = ds_worker_set_error;
    d->base.host = &d->worker_host;
    atomic_init(&d->used, 0);
    if (ds_queue_start(d) != BP_OK) {
        free(d);
        s->host->set_error(s->host->host, "devsim: cannot start the worker thread");
        return BP_ERR_BACKEND;
    }
    d->state = s;
    s->dev = d;
    *dev = d;
    return BP_OK;
}

static void ds_device_close(void *dev)
{
    ds_dev *d = dev;
    ds_queue_stop(d); /* runs what is still queued, frees included */
    ((ds_state *)d->state)->dev = NULL;
    free(d);
}

static bp_status ds_alloc(void *dev, size_t bytes, void **buffer)
{
    ds_dev *d = dev;
    ds_buf *b = calloc(1, sizeof *b);
    unsigned char *mem = b ? malloc(bytes ? bytes : 1) : NULL;
    if (!mem) {
        free(b);
        d->host->set_error(d->host->host, "devsim: cannot allocate %zu bytes", bytes);
        return BP_ERR_OUT_OF_MEMORY;
    }
    b->mem = mem;
    b->bytes = bytes;
    atomic_init(&b->last_write, 0);
    atomic_fetch_add(&d->used, (uint_fast64_t)bytes);
    *buffer = b;
    return BP_OK;
}

/* Queued, so that work still reading the buffer finishes first. */
static void ds_free(void *dev, void *buffer)
{
    ds_dev *d = dev;
    ds_item *it = calloc(1, sizeof *it);
    if (!it) { /* no memory to queue it: wait for everything, then free here */
        ds_wait_all(d);
        ds_buf *b = buffer;
        atomic_fetch_sub(&d->used, (uint_fast64_t)b->bytes);
        free(b->mem);
        free(b);
        return;
    }
    it->kind = DS_FREE;
    it->buf = buffer;
    ds_enqueue(d, it, 0, NULL);
}

/* Queued with a copy of the bytes: src may be reused at once. */
static bp_status ds_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes)
{
    ds_dev *d = dev;
    ds_item *it = calloc(1, sizeof *it);
    void *data = it ? malloc(bytes ? bytes : 1) : NULL;
    if (!data) {
        free(it);
        d->host->set_error(d->host->host, "devsim: out of memory staging %zu bytes", bytes);
        return BP_ERR_OUT_OF_MEMORY;
    }
    memcpy(data, src, bytes);
    it->kind = DS_WRITE;
    it->op = BP_OP_COPY;
    it->buf = buffer;
    it->offset = offset;
    it->bytes = bytes;
    it->data = data;
    ds_enqueue(d, it, 1, (ds_buf *const[]){buffer});
    return BP_OK;
}

/* Waits only for the work that writes this buffer (and what precedes it). */
static bp_status ds_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    const ds_buf *b = buffer;
    ds_wait_for(dev, atomic_load(&b->last_write));
    memcpy(dst, b->mem + offset, bytes);
    return BP_OK;
}

static bp_status ds_synchronize(void *dev)
{
    ds_wait_all(dev);
    return BP_OK;
}

static bp_status ds_deferred_error(void *dev)
{
    ds_dev *d = dev;
    pthread_mutex_lock(&d->lock);
    bp_status st = d->err_status;
    char msg[sizeof d->err];
    memcpy(msg, d->err, sizeof msg);
    d->err_status = BP_OK;
    d->err[0] = '\0';
    pthread_mutex_unlock(&d->lock);
    if (st != BP_OK)
        d->host->set_error(d->host->host, "%s", msg);
    return st;
}

static bp_status ds_memory_info(void *dev, bp_memory_info *info)
{
    ds_dev *d = dev;
    info->used = (uint64_t)atomic_load(&d->used);
    return BP_OK;
}

static const bp_plugin ds_plugin = {
    .struct_size = sizeof(bp_plugin),
    .abi_major = BP_ABI_MAJOR,
    /* Built as a plugin of ABI 1.5 on purpose: the ops of 1.0 through their
     * typed entries, the later ones through op. Every op suite and the
     * conformance suite run on devsim, so they run the core's compatibility
     * path for plugins built before 1.6 (core/src/plugin_compat.c). */
    .abi_minor = 5,
    .name = "devsim",
    .version = "0.1.0",
    .description = "a simulated device for tests: private memory, queued ops, deferred errors",
    .config_keys = ds_keys,
    .open = ds_open,
    .close = ds_close,
    .device_count = ds_device_count,
    .device_info = ds_device_info,
    .device_open = ds_device_open,
    .device_close = ds_device_close,
    .alloc = ds_alloc,
    .free = ds_free,
    .write = ds_write,
    .read = ds_read,
    .host_ptr = NULL, /* private memory */
    .synchronize = ds_synchronize,
    .memory_info = ds_memory_info,
    .unary = ds_unary,
    .binary = ds_binary,
    .where = ds_where,
    .reduce = ds_reduce,
    .matmul = ds_matmul,
    .copy = ds_copy,
    .gather = ds_gather,
    .softmax = ds_softmax,
    .fill = ds_fill,
    .arange = ds_arange,
    .random = ds_random,
    .config_key_size = sizeof(bp_config_key),
    .deferred_error = ds_deferred_error,
    .supports = bpk_supports, /* the reference kernels': every op of the table */
    .op = ds_op_entry,
};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void) { return &ds_plugin; }

/* Backends: one device of one plugin, opened on first use by name or path,
 * and the calls that ask a backend about itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool bp__parse_name(const char *spec, char *name, size_t cap, int32_t *index)
{
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (len == 0 || len >= cap)
        return false;
    memcpy(name, spec, len);
    name[len] = '\0';
    *index = 0;
    if (colon) {
        char *end = NULL;
        long v = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end || v < 0 || v > 1 << 20)
            return false;
        *index = (int32_t)v;
    }
    return true;
}

static bool bp__looks_like_path(const char *spec)
{
    size_t n = strlen(spec);
    return strchr(spec, '/') != NULL || (n > 3 && strcmp(spec + n - 3, ".so") == 0);
}

/* ctx->lock held. */
static bp_status bp__backend_open_locked(bp_context *ctx, bp__plugin *p, int32_t index,
                                         bp_backend **out)
{
    for (size_t i = 0; i < ctx->n_backends; i++) {
        if (ctx->backends[i]->plugin == p && ctx->backends[i]->index == index) {
            *out = ctx->backends[i];
            return BP_OK;
        }
    }
    BP__TRY(bp__plugin_open(p));
    if (index >= p->device_count)
        return bp__error(BP_ERR_UNSUPPORTED_DEVICE,
                         "backend '%s' has %d device(s) (%s:0 .. %s:%d); there is no %s:%d",
                         p->name, p->device_count, p->name, p->name, p->device_count - 1, p->name,
                         index);
    bp_backend **grown = realloc(ctx->backends, (ctx->n_backends + 1) * sizeof *grown);
    if (!grown)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_backend_get: out of memory");
    ctx->backends = grown;
    bp_backend *b = calloc(1, sizeof *b);
    if (!b)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_backend_get: out of memory");
    if (pthread_mutex_init(&b->exchange_lock, NULL) != 0) {
        free(b);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_backend_get: cannot create a mutex");
    }
    b->ctx = ctx;
    b->plugin = p;
    b->vt = p->vt;
    b->index = index;
    snprintf(b->name, sizeof b->name, "%s:%d", p->name, index);
    atomic_init(&b->live_tensors, 0);
    atomic_init(&b->live_bytes, 0);
    bp_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    bp__call_begin();
    bp_status st = bp__plugin_entry_status("device_info", p->vt->device_info(p->state, index, &info));
    if (st == BP_OK)
        st = bp__plugin_entry_status("device_open", p->vt->device_open(p->state, index, &b->dev));
    if (st != BP_OK) {
        pthread_mutex_destroy(&b->exchange_lock);
        free(b);
        return bp__error(st, "backend %s:%d could not be opened: %s", p->name, index,
                         *bp__plugin_detail() ? bp__plugin_detail() : bp_status_message(st));
    }
    b->host_addressable = info.host_addressable && BP__HAS(p->vt, host_ptr);
    ctx->backends[ctx->n_backends++] = b;
    *out = b;
    return BP_OK;
}

bp_status bp_backend_get(bp_context *ctx, const char *spec, bp_backend **out)
{
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_backend_get: out is NULL");
    *out = NULL;
    if (!ctx || !spec)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_backend_get: ctx or name is NULL");
    pthread_mutex_lock(&ctx->lock);
    bp_status st;
    bp__plugin *p = NULL;
    int32_t index = 0;
    char name[96];
    if (bp__looks_like_path(spec)) {
        st = bp__plugin_by_path(ctx, spec, &p);
    } else if (!bp__parse_name(spec, name, sizeof name, &index)) {
        st = bp__error(BP_ERR_INVALID_ARGUMENT,
                       "bp_backend_get: '%s' is not a backend name (want NAME or NAME:INDEX, "
                       "e.g. \"binary\" or \"cuda:1\", or a path to a plugin .so)", spec);
    } else {
        p = bp__plugin_lookup(ctx, name);
        st = p ? BP_OK : BP_ERR_NOT_FOUND;
    }
    if (st == BP_OK)
        st = bp__backend_open_locked(ctx, p, index, out);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

const char *bp_backend_name(const bp_backend *b) { return b ? b->name : ""; }
const char *bp_backend_plugin_name(const bp_backend *b) { return b ? b->plugin->name : ""; }

bool bp_backend_supports(const bp_backend *b, bp_op op, bp_dtype dtype)
{
    if (!b || (int)op < 0 || op >= BP_OP_COUNT || !bp_dtype_valid((int)dtype))
        return false;
    const bp_plugin *vt = b->vt;
    if (vt->abi_minor < bp_op_since(op) || !bp__op_has_entry(b, op))
        return false; /* the plugin predates the op, or has no entry that takes it */
    if (!bp__abi_has_dtype(vt->abi_minor, dtype))
        return false; /* the plugin predates the dtype */
    return BP__HAS(vt, supports) ? vt->supports(b->dev, op, dtype) : true;
}

bp_status bp_backend_memory_info(bp_backend *b, bp_memory_info *out)
{
    if (!b || !out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_backend_memory_info: NULL argument");
    if (!BP__HAS(b->vt, memory_info))
        return bp__error(BP_ERR_UNSUPPORTED_OP, "backend %s does not report memory use", b->name);
    bp_memory_info full;
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full; /* the plugin fills what its header knows */
    BP__TRY(BP__CALL(b, "memory_info", memory_info, &full));
    return bp__struct_out("bp_backend_memory_info", "bp_memory_info", out,
                          offsetof(bp_memory_info, device_total) + sizeof full.device_total,
                          &full, sizeof full);
}

bp_status bp_backend_device_info(bp_backend *b, bp_device_info *out)
{
    if (!b || !out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_backend_device_info: NULL argument");
    bp_device_info full;
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    bp__call_begin();
    bp_status st = bp__plugin_entry_status(
        "device_info", b->vt->device_info(b->plugin->state, b->index, &full));
    if (st != BP_OK)
        return bp__error(st, "backend %s failed in device_info: %s", b->name,
                         *bp__plugin_detail() ? bp__plugin_detail() : bp_status_message(st));
    return bp__struct_out("bp_backend_device_info", "bp_device_info", out,
                          offsetof(bp_device_info, host_addressable) +
                              sizeof full.host_addressable,
                          &full, sizeof full);
}

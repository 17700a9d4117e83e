/* Contexts and backends: creation, lookup by name, the default preference
 * list, introspection, and a destroy that never frees what a caller holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *bp_version(void) { return BP_VERSION_STRING; }

static void bp__context_free(bp_context *ctx)
{
    for (size_t i = 0; i < ctx->n_backends; i++) {
        bp_backend *b = ctx->backends[i];
        b->vt->device_close(b->dev);
        free(b);
    }
    free(ctx->backends);
    bp__loader_unload_all(ctx);
    bp__config_free(&ctx->config);
    free(atomic_load(&ctx->default_reason));
    pthread_mutex_destroy(&ctx->default_lock);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

void bp__context_retain(bp_context *ctx) { atomic_fetch_add(&ctx->refs, 1); }

void bp__context_release(bp_context *ctx)
{
    if (atomic_fetch_sub(&ctx->refs, 1) == 1)
        bp__context_free(ctx);
}

bp_status bp_context_create(const char *config_path, bp_context **out)
{
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_context_create: out is NULL");
    *out = NULL;
    bp_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_context_create: out of memory");
    if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
        free(ctx);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_context_create: cannot create a mutex");
    }
    if (pthread_mutex_init(&ctx->default_lock, NULL) != 0) {
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_context_create: cannot create a mutex");
    }
    atomic_init(&ctx->refs, 1);
    atomic_init(&ctx->destroyed, false);
    atomic_init(&ctx->guard_bytes, 0);
    ctx->log_level = BP_LOG_WARN;
    bp_status st = bp__config_load(config_path, &ctx->config);
    if (st == BP_OK) {
        const char *lvl = bp__config_get(&ctx->config, "backplane", "log_level");
        if (lvl)
            bp__log_level_parse(lvl, &ctx->log_level); /* validated by the config */
        st = bp__loader_discover(ctx);
    }
    if (st != BP_OK) {
        bp__context_free(ctx);
        return st;
    }
    *out = ctx;
    return BP_OK;
}

void bp_context_destroy(bp_context *ctx)
{
    if (!ctx || atomic_exchange(&ctx->destroyed, true))
        return;
    long long tensors = 0, bytes = 0;
    char list[512] = "";
    pthread_mutex_lock(&ctx->lock);
    for (size_t i = 0; i < ctx->n_backends; i++) {
        long long t = atomic_load(&ctx->backends[i]->live_tensors);
        long long b = atomic_load(&ctx->backends[i]->live_bytes);
        if (t == 0)
            continue;
        tensors += t;
        bytes += b;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s: %lld (%lld bytes)", used ? ", " : "",
                 ctx->backends[i]->name, t, b);
    }
    pthread_mutex_unlock(&ctx->lock);
    if (tensors > 0)
        bp__log(ctx, BP_LOG_WARN,
                "bp_context_destroy: %lld tensor buffer(s) still alive, %lld bytes [%s]; the "
                "context stays until the last is released with bp_tensor_release",
                tensors, bytes, list);
    bp__context_release(ctx);
}

/* ---- backends ------------------------------------------------------------ */

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

/* Everything tried, for a "not found" message. */
static void bp__describe_plugins(const bp_context *ctx, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ctx->n_plugins && used + 1 < cap; i++) {
        const bp__plugin *p = ctx->plugins[i];
        int n = snprintf(buf + used, cap - used, "\n  %s: %s%s%s", p->path,
                         p->loaded ? "backend '" : "rejected: ",
                         p->loaded ? p->name : p->message, p->loaded ? "'" : "");
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (ctx->n_plugins == 0)
        snprintf(buf, cap, " (none found)");
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
        st = bp__loader_add_file(ctx, spec, &p);
        if (st == BP_OK && !p->loaded)
            st = bp__error(p->status, "backend plugin %s could not be loaded: %s", spec,
                           p->message);
        if (st == BP_OK)
            st = bp__config_check_backend(&ctx->config, p->name, p->vt->config_keys);
    } else if (!bp__parse_name(spec, name, sizeof name, &index)) {
        st = bp__error(BP_ERR_INVALID_ARGUMENT,
                       "bp_backend_get: '%s' is not a backend name (want NAME or NAME:INDEX, "
                       "e.g. \"binary\" or \"cuda:1\", or a path to a plugin .so)", spec);
    } else {
        for (size_t i = 0; i < ctx->n_plugins && !p; i++)
            if (ctx->plugins[i]->loaded && strcmp(ctx->plugins[i]->name, name) == 0)
                p = ctx->plugins[i];
        if (p) {
            st = BP_OK;
        } else {
            char tried[2048];
            bp__describe_plugins(ctx, tried, sizeof tried);
            /* A rejected file of that name explains better than "not found". */
            for (size_t i = 0; i < ctx->n_plugins; i++) {
                const bp__plugin *r = ctx->plugins[i];
                char stem[112];
                snprintf(stem, sizeof stem, "bp_%s.so", name);
                const char *base = strrchr(r->path, '/');
                if (!r->loaded && strcmp(base ? base + 1 : r->path, stem) == 0) {
                    st = bp__error(r->status, "backend '%s' (%s) could not be loaded: %s", name,
                                   r->path, r->message);
                    goto done;
                }
            }
            st = bp__error(BP_ERR_NOT_FOUND,
                           "no backend plugin named '%s'. Plugins tried:%s\nAdd a directory with "
                           "plugin_path in the config or $BP_PLUGIN_PATH, or name the .so by path.",
                           name, tried);
        }
    }
    if (st == BP_OK)
        st = bp__backend_open_locked(ctx, p, index, out);
done:
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

typedef struct bp__pref {
    bp_context *ctx;
    bp_backend *winner;
    char *reason;
    size_t len;
    bool oom;
} bp__pref;

static void bp__pref_note(bp__pref *pr, const char *fmt, ...) BP__PRINTF(2, 3);
static void bp__pref_note(bp__pref *pr, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t add = strlen(line);
    char *grown = realloc(pr->reason, pr->len + add + 2);
    if (!grown) {
        pr->oom = true;
        return;
    }
    pr->reason = grown;
    memcpy(pr->reason + pr->len, line, add);
    pr->len += add;
    pr->reason[pr->len++] = '\n';
    pr->reason[pr->len] = '\0';
}

static bp_status bp__pref_try(const char *item, void *user)
{
    bp__pref *pr = user;
    if (pr->winner)
        return BP_OK;
    bp_backend *b = NULL;
    if (bp_backend_get(pr->ctx, item, &b) == BP_OK) {
        pr->winner = b;
        bp__pref_note(pr, "%s: chosen", item);
        return BP_OK;
    }
    bp__log(pr->ctx, BP_LOG_WARN, "default_backend: skipping '%s': %s", item, bp_last_error());
    bp__pref_note(pr, "%s: skipped: %s", item, bp_last_error());
    return BP_OK;
}

bp_status bp_backend_default(bp_context *ctx, bp_backend **out)
{
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_backend_default: out is NULL");
    *out = NULL;
    if (!ctx)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_backend_default: ctx is NULL");
    /* The list is resolved once per context (each plugin is opened at most
     * once anyway), by one thread while the others wait; the reason string
     * is then never changed or freed before the context goes. */
    const bp__setting *s = bp__config_find(&ctx->config, "backplane", "default_backend");
    const char *list = s && s->value ? s->value : "binary";
    pthread_mutex_lock(&ctx->default_lock);
    if (!ctx->default_resolved) {
        bp__pref pr = {ctx, NULL, NULL, 0, false};
        bp__pref_note(&pr, "default_backend = %s (from %s)", list, s ? s->origin : "default");
        bp__list_foreach(list, bp__pref_try, &pr);
        ctx->default_backend = pr.winner;
        atomic_store(&ctx->default_reason, pr.reason);
        ctx->default_resolved = true;
    }
    bp_backend *winner = ctx->default_backend;
    const char *reason = atomic_load(&ctx->default_reason);
    pthread_mutex_unlock(&ctx->default_lock);
    if (!winner)
        return bp__error(BP_ERR_NOT_FOUND,
                         "bp_backend_default: no backend of the preference list '%s' could be "
                         "opened:\n%s", list, reason ? reason : "");
    *out = winner;
    return BP_OK;
}

const char *bp_backend_name(const bp_backend *b) { return b ? b->name : ""; }
const char *bp_backend_plugin_name(const bp_backend *b) { return b ? b->plugin->name : ""; }

bool bp_backend_supports(const bp_backend *b, bp_op op, bp_dtype dtype)
{
    if (!b || (int)op < 0 || op >= BP_OP_COUNT || !bp_dtype_valid((int)dtype))
        return false;
    const bp_plugin *vt = b->vt;
    bool entry = false;
    switch (bp_op_family_of(op)) {
    case BP_FAMILY_UNARY: entry = BP__HAS(vt, unary); break;
    case BP_FAMILY_BINARY: entry = BP__HAS(vt, binary); break;
    case BP_FAMILY_WHERE: entry = BP__HAS(vt, where); break;
    case BP_FAMILY_REDUCE: entry = BP__HAS(vt, reduce); break;
    case BP_FAMILY_MATMUL: entry = BP__HAS(vt, matmul); break;
    case BP_FAMILY_MOVEMENT: entry = BP__HAS(vt, copy); break;
    case BP_FAMILY_GATHER: entry = BP__HAS(vt, gather); break;
    case BP_FAMILY_SOFTMAX: entry = BP__HAS(vt, softmax); break;
    case BP_FAMILY_CREATION:
        entry = op == BP_OP_FILL ? BP__HAS(vt, fill) : BP__HAS(vt, arange);
        break;
    case BP_FAMILY_RANDOM: entry = BP__HAS(vt, random); break;
    }
    if (!entry)
        return false;
    return BP__HAS(vt, supports) ? vt->supports(b->dev, op, dtype) : true;
}

bp_status bp_backend_synchronize(bp_backend *b)
{
    if (!b)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_backend_synchronize: backend is NULL");
    if (!BP__HAS(b->vt, synchronize))
        return BP_OK; /* a backend without a queue is always synchronised */
    return BP__CALL0(b, "synchronize", synchronize);
}

bp_status bp_backend_memory_info(bp_backend *b, bp_memory_info *out)
{
    if (!b || !out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_backend_memory_info: NULL argument");
    if (!BP__HAS(b->vt, memory_info))
        return bp__error(BP_ERR_UNSUPPORTED_OP, "backend %s does not report memory use", b->name);
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    return BP__CALL(b, "memory_info", memory_info, out);
}

bp_status bp_backend_device_info(bp_backend *b, bp_device_info *out)
{
    if (!b || !out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_backend_device_info: NULL argument");
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    bp__call_begin();
    bp_status st = bp__plugin_entry_status(
        "device_info", b->vt->device_info(b->plugin->state, b->index, out));
    return st == BP_OK ? BP_OK
                       : bp__error(st, "backend %s failed in device_info: %s", b->name,
                                   *bp__plugin_detail() ? bp__plugin_detail()
                                                        : bp_status_message(st));
}

/* ---- introspection ------------------------------------------------------- */

size_t bp_context_plugin_count(const bp_context *ctx) { return ctx ? ctx->n_plugins : 0; }

bp_status bp_context_plugin(bp_context *ctx, size_t i, bp_plugin_record *out)
{
    if (!ctx || !out || i >= ctx->n_plugins)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_context_plugin: bad index %zu", i);
    pthread_mutex_lock(&ctx->lock);
    const bp__plugin *p = ctx->plugins[i];
    out->name = p->name;
    out->path = p->path;
    out->version = p->loaded && p->vt->version ? p->vt->version : "";
    out->loaded = p->loaded;
    out->opened = p->opened;
    out->status = p->status;
    out->message = p->message ? p->message : "";
    out->abi_major = p->loaded ? p->vt->abi_major : 0;
    out->abi_minor = p->loaded ? p->vt->abi_minor : 0;
    out->device_count = p->opened ? p->device_count : -1;
    out->config_keys = p->loaded ? p->vt->config_keys : NULL;
    pthread_mutex_unlock(&ctx->lock);
    return BP_OK;
}

bp_status bp_context_plugin_open(bp_context *ctx, size_t i)
{
    if (!ctx || i >= ctx->n_plugins)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_context_plugin_open: bad index %zu", i);
    pthread_mutex_lock(&ctx->lock);
    bp_status st = bp__plugin_open(ctx->plugins[i]);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

size_t bp_context_setting_count(const bp_context *ctx) { return ctx ? ctx->config.count : 0; }

bp_status bp_context_setting(const bp_context *ctx, size_t i, bp_setting *out)
{
    if (!ctx || !out || i >= ctx->config.count)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_context_setting: bad index %zu", i);
    const bp__setting *s = &ctx->config.items[i];
    out->section = s->section;
    out->key = s->key;
    out->value = s->value;
    out->origin = s->origin;
    return BP_OK;
}

const char *bp_context_config_path(const bp_context *ctx) { return ctx ? ctx->config.path : NULL; }

const char *bp_context_default_reason(const bp_context *ctx)
{
    if (!ctx)
        return "";
    const char *r = atomic_load(&ctx->default_reason); /* published once, never changed */
    return r ? r : "";
}

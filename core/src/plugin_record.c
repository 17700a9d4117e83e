/* Plugin records: one per file found or named, loaded or not. A record and
 * every string it ever handed out through bp_context_plugin live as long as
 * the context. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void bp__record_free(bp__plugin *p)
{
    if (!p)
        return;
    if (p->opened && p->vt && p->vt->close)
        p->vt->close(p->state);
    if (p->dl)
        dlclose(p->dl);
    free(p->name);
    free(p->path);
    free(p->message);
    free(p->keys);
    for (size_t i = 0; i < p->n_retired; i++)
        free(p->retired[i]);
    free(p->retired);
    free(p);
}

/* If even the old string cannot be kept (out of memory), it stays in place
 * and fresh is dropped: a stale message beats a dangling one. */
void bp__record_set(bp__plugin *p, char **slot, char *fresh)
{
    if (!fresh)
        return;
    if (*slot) {
        char **grown = realloc(p->retired, (p->n_retired + 1) * sizeof *grown);
        if (!grown) {
            free(fresh);
            return;
        }
        p->retired = grown;
        p->retired[p->n_retired++] = *slot;
    }
    *slot = fresh;
}

void bp__record_reject(bp__plugin *p, bp_status st, char *message)
{
    p->loaded = false;
    p->status = st;
    bp__record_set(p, &p->message,
                   message ? message : strdup("out of memory describing the failure"));
    if (p->dl) {
        dlclose(p->dl);
        p->dl = NULL;
    }
    p->vt = NULL;
    free(p->keys);
    p->keys = NULL;
    bp__log(p->ctx, BP_LOG_INFO, "plugin %s rejected: %s", p->path, p->message);
}

bp_status bp__record_add(bp_context *ctx, const char *path, const char *name, bool named_by_file,
                         bp__plugin **out)
{
    *out = NULL;
    bp__plugin **grown = realloc(ctx->plugins, (ctx->n_plugins + 1) * sizeof *grown);
    if (!grown)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    ctx->plugins = grown;
    bp__plugin *p = calloc(1, sizeof *p);
    if (!p)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    p->ctx = ctx;
    p->device_count = -1;
    p->named_by_file = named_by_file;
    p->path = strdup(path);
    const char *base = strrchr(path, '/');
    p->name = strdup(name ? name : base ? base + 1 : path);
    p->message = strdup("");
    if (!p->path || !p->name || !p->message) {
        bp__record_free(p);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    }
    bp__host_init(p);
    ctx->plugins[ctx->n_plugins++] = p;
    *out = p;
    return BP_OK;
}

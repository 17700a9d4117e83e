/* What `backplane info` asks: the plugin records and the effective
 * settings, each filled into the caller's struct by the struct_size rule. */
#include <string.h>

#include "internal.h"

size_t bp_context_plugin_count(const bp_context *ctx) { return ctx ? ctx->n_plugins : 0; }

bp_status bp_context_plugin(bp_context *ctx, size_t i, bp_plugin_record *out)
{
    if (!ctx || !out || i >= ctx->n_plugins)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_context_plugin: bad index %zu", i);
    bp_plugin_record r;
    memset(&r, 0, sizeof r);
    pthread_mutex_lock(&ctx->lock);
    const bp__plugin *p = ctx->plugins[i];
    r.name = p->name;
    r.path = p->path;
    r.version = p->loaded && p->vt->version ? p->vt->version : "";
    r.loaded = p->loaded;
    r.opened = p->opened;
    r.status = p->status;
    r.message = p->message ? p->message : "";
    r.abi_major = p->loaded ? p->vt->abi_major : 0;
    r.abi_minor = p->loaded ? p->vt->abi_minor : 0;
    r.device_count = p->opened ? p->device_count : -1;
    r.config_keys = p->loaded ? p->keys : NULL;
    r.load_tried = p->load_tried;
    pthread_mutex_unlock(&ctx->lock);
    return bp__struct_out("bp_context_plugin", "bp_plugin_record", out,
                          offsetof(bp_plugin_record, config_keys) + sizeof r.config_keys, &r,
                          sizeof r);
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

bp_status bp_context_setting(bp_context *ctx, size_t i, bp_setting *out)
{
    if (!ctx || !out || i >= ctx->config.count)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_context_setting: bad index %zu", i);
    const bp__setting *s = &ctx->config.items[i];
    bp_setting r = {.struct_size = sizeof r, .section = s->section, .key = s->key,
                    .value = s->value, .origin = s->origin, .used = true};
    if (strncmp(s->section, "backend.", 8) == 0) {
        r.used = false;
        pthread_mutex_lock(&ctx->lock);
        for (size_t j = 0; j < ctx->n_plugins && !r.used; j++) {
            const bp__plugin *p = ctx->plugins[j];
            if (!p->loaded || strcmp(p->name, s->section + 8) != 0)
                continue;
            for (const bp_config_key *k = p->keys; k && k->name && !r.used; k++)
                r.used = strcmp(k->name, s->key) == 0;
        }
        pthread_mutex_unlock(&ctx->lock);
    }
    return bp__struct_out("bp_context_setting", "bp_setting", out,
                          offsetof(bp_setting, origin) + sizeof r.origin, &r, sizeof r);
}

const char *bp_context_config_path(const bp_context *ctx) { return ctx ? ctx->config.path : NULL; }

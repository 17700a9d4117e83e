/* Contexts: creation (configuration, then plugin discovery) and a destroy
 * that never frees what a caller still holds. */
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
        free(b->listed); /* empty: every storage is gone */
        pthread_mutex_destroy(&b->exchange_lock);
        free(b);
    }
    free(ctx->backends);
    bp__plugins_unload_all(ctx);
    bp__config_free(&ctx->config);
    free(atomic_load(&ctx->default_reason));
    pthread_mutex_destroy(&ctx->copy_lock);
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
    if (pthread_mutex_init(&ctx->copy_lock, NULL) != 0) {
        pthread_mutex_destroy(&ctx->default_lock);
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
        st = bp__plugins_find(ctx);
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

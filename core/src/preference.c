/* The default backend: the first of the default_backend preference list that
 * opens, resolved once per context, with the reason for each candidate. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct bp__pref {
    bp_context *ctx;
    bool builtin;             /* the built-in list: skips are expected, logged at info */
    bp_status stop;           /* a configuration error stopped the list */
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
    bp_status st = bp_backend_get(pr->ctx, item, &b);
    if (st == BP_OK) {
        pr->winner = b;
        bp__pref_note(pr, "%s: chosen", item);
        return BP_OK;
    }
    if (st == BP_ERR_CONFIG) {
        /* the user asked for something this backend cannot do: falling
         * through to the next backend would hide it */
        bp__pref_note(pr, "%s: configuration error, which stops the list: %s", item,
                      bp_last_error());
        pr->stop = st;
        return st;
    }
    /* the first line says why; bp_backend_get(NAME) gives the whole story */
    const char *why = bp_last_error(), *nl = strchr(why, '\n');
    int len = nl ? (int)(nl - why) : (int)strlen(why);
    bp__log(pr->ctx, pr->builtin ? BP_LOG_INFO : BP_LOG_WARN,
            "default_backend: skipping '%s': %.*s", item, len, why);
    bp__pref_note(pr, "%s: skipped: %.*s", item, len, why);
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
    bool builtin = !s || strcmp(s->origin, "default") == 0;
    pthread_mutex_lock(&ctx->default_lock);
    if (!ctx->default_resolved) {
        bp__pref pr = {ctx, builtin, BP_OK, NULL, NULL, 0, false};
        bp__pref_note(&pr, "default_backend = %s (%s%s)", list,
                      builtin ? "the built-in default" : "from ", builtin ? "" : s->origin);
        bp_status listed = bp__list_foreach(list, bp__pref_try, &pr);
        if (listed != BP_OK && !pr.winner && !pr.stop) {
            /* out of memory splitting the list: nothing was tried; not cached,
             * so a later call tries again */
            pthread_mutex_unlock(&ctx->default_lock);
            free(pr.reason);
            return listed;
        }
        ctx->default_backend = pr.winner;
        ctx->default_status = pr.stop ? pr.stop : BP_ERR_NOT_FOUND;
        atomic_store(&ctx->default_reason, pr.reason);
        ctx->default_resolved = true;
    }
    bp_backend *winner = ctx->default_backend;
    bp_status why = ctx->default_status;
    const char *reason = atomic_load(&ctx->default_reason);
    pthread_mutex_unlock(&ctx->default_lock);
    if (!winner && why == BP_ERR_CONFIG)
        return bp__error(BP_ERR_CONFIG,
                         "bp_backend_default: a configuration error stopped the preference list "
                         "'%s' (it never falls through to the next backend); fix it:\n%s",
                         list, reason ? reason : "");
    if (!winner)
        return bp__error(BP_ERR_NOT_FOUND,
                         "bp_backend_default: no backend of the preference list '%s' could be "
                         "opened:\n%s", list, reason ? reason : "");
    *out = winner;
    return BP_OK;
}

const char *bp_context_default_reason(const bp_context *ctx)
{
    if (!ctx)
        return "";
    const char *r = atomic_load(&ctx->default_reason); /* published once, never changed */
    return r ? r : "";
}

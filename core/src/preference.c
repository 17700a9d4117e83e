/* The default backend: the first of the default_backend preference list that
 * opens, resolved once per context, with the reason for each candidate. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct bp__pref {
    bp_context *ctx;
    bool builtin;             /* the built-in list: skips are expected, logged at info */
    const char *origin;       /* where the list came from ("env BP_DEFAULT_BACKEND", FILE:LINE) */
    bp_status stop;           /* a configuration error stopped the list */
    bp_backend *winner;
    char *reason;
    size_t len;
    bool oom;
} bp__pref;

static void bp__pref_note(bp__pref *pr, const char *fmt, ...) BP__PRINTF(2, 3);
static void bp__pref_note(bp__pref *pr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *line = NULL;
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !(line = malloc((size_t)n + 1))) {
        pr->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(line, (size_t)n + 1, fmt, ap);
    va_end(ap);
    /* a multi-line reason stays whole, its lines indented under the item */
    size_t add = 0;
    for (const char *c = line; *c; c++)
        add += *c == '\n' ? 5 : 1;
    char *grown = realloc(pr->reason, pr->len + add + 2);
    if (!grown) {
        free(line);
        pr->oom = true;
        return;
    }
    pr->reason = grown;
    for (const char *c = line; *c; c++) {
        if (*c == '\n') {
            memcpy(pr->reason + pr->len, "\n    ", 5);
            pr->len += 5;
        } else {
            pr->reason[pr->len++] = *c;
        }
    }
    pr->reason[pr->len++] = '\n';
    pr->reason[pr->len] = '\0';
    free(line);
}

/* Whether some plugin record answers to name, or could (a file of that name
 * was found, whether or not it loads); ctx->lock held. */
static bool bp__pref_plugin_named(const bp_context *ctx, const char *name)
{
    for (size_t i = 0; i < ctx->n_plugins; i++)
        if (strcmp(ctx->plugins[i]->name, name) == 0)
            return true;
    return false;
}

typedef struct bp__own_match {
    const char *name;
    bool found;
    char closest[32];
    size_t distance;
} bp__own_match;

static bp_status bp__own_backend(const char *item, void *user)
{
    bp__own_match *m = user;
    size_t d = bp__edit_distance(m->name, item);
    if (d == 0)
        m->found = true;
    if (d < m->distance && strlen(item) < sizeof m->closest) {
        m->distance = d;
        snprintf(m->closest, sizeof m->closest, "%s", item);
    }
    return BP_OK;
}

/* A name on a list the user wrote that no plugin file has and that is none
 * of backplane's own backends: a typo, which must not quietly hand the work
 * to the next backend. BP_ERR_CONFIG naming the closest real name; BP_OK
 * for every other item (paths, installed plugins, backplane's backends that
 * are not installed here: those are skipped as ones that cannot open). */
static bp_status bp__pref_check_name(bp__pref *pr, const char *item)
{
    if (strchr(item, '/') || strstr(item, ".so"))
        return BP_OK; /* a plugin file: bp_backend_get says what is wrong with it */
    char name[64];
    size_t len = strcspn(item, ":");
    if (len == 0 || len >= sizeof name)
        return BP_OK;
    memcpy(name, item, len);
    name[len] = '\0';
    bp__own_match own = {.name = name, .distance = SIZE_MAX};
    if (bp__list_foreach(BP__OWN_BACKENDS, bp__own_backend, &own) != BP_OK)
        return BP_OK; /* out of memory splitting the list: no verdict */
    if (own.found)
        return BP_OK;
    char installed[512];
    const char *near = NULL;
    pthread_mutex_lock(&pr->ctx->lock);
    bool exists = bp__pref_plugin_named(pr->ctx, name);
    if (!exists)
        bp__plugins_installed(pr->ctx, name, installed, sizeof installed, &near);
    char suggestion[96] = "";
    if (!exists) {
        /* an installed plugin first, then backplane's own names */
        const char *best = near;
        if (!best && bp__close_enough(name, own.distance))
            best = own.closest;
        if (best)
            snprintf(suggestion, sizeof suggestion, "; did you mean '%s'?", best);
    }
    pthread_mutex_unlock(&pr->ctx->lock);
    if (exists)
        return BP_OK;
    return bp__error(BP_ERR_CONFIG,
                     "default_backend (%s) names '%s', and no backend has that name%s\n"
                     "No plugin file bp_%s.so was found (`backplane info` lists where it "
                     "looked), and '%s' is not one of backplane's backends (" BP__OWN_BACKENDS
                     "). Installed here: %s.",
                     pr->origin, name, suggestion, name, name,
                     installed[0] ? installed : "none");
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
    if (st == BP_ERR_NOT_FOUND && !pr->builtin) {
        bp_status named = bp__pref_check_name(pr, item);
        if (named != BP_OK)
            st = named;
    }
    if (st == BP_ERR_CONFIG) {
        /* the user asked for something this backend cannot do, or for a
         * backend that does not exist: falling through to the next backend
         * would hide it */
        bp__pref_note(pr, "%s: configuration error, which stops the list: %s", item,
                      bp_last_error());
        pr->stop = st;
        return st;
    }
    /* installed but cannot open here (no device, no driver), or one of
     * backplane's backends that is not installed: skipped, with the whole
     * reason */
    const char *why = bp_last_error();
    bp__log(pr->ctx, pr->builtin ? BP_LOG_INFO : BP_LOG_WARN, "default_backend: skipping '%s': %s",
            item, why);
    bp__pref_note(pr, "%s: skipped: %s", item, why);
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
        bp__pref pr = {ctx, builtin, builtin ? "the built-in default" : s->origin, BP_OK, NULL,
                       NULL, 0, false};
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

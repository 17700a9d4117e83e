/* Finding the plugin record for a backend name or a plugin file, and, when
 * there is none, saying why: every place searched and every file that was
 * nearly a plugin (libbp_NAME.so, the usual CMake slip; NAME.so;
 * bp_NAME.so.1), with the fix. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

bool bp__named_file(const char *base)
{
    size_t n = strlen(base);
    if (n <= 6 || strncmp(base, "bp_", 3) != 0 || strcmp(base + n - 3, ".so") != 0)
        return false;
    for (size_t i = 3; i < n - 3; i++) {
        char c = base[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

/* A growing message; on out of memory it keeps what it has. */
typedef struct bp__text {
    char buf[3500];
    size_t used;
} bp__text;

static void bp__text_add(bp__text *t, const char *fmt, ...) BP__PRINTF(2, 3);
static void bp__text_add(bp__text *t, const char *fmt, ...)
{
    if (t->used >= sizeof t->buf)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->used, sizeof t->buf - t->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->used += (size_t)n;
    if (t->used >= sizeof t->buf)
        t->used = sizeof t->buf;
}

/* Whether an entry of a searched directory was nearly the plugin NAME. */
static const char *bp__near_miss(const char *entry, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(entry, "libbp_", 6) == 0 && strncmp(entry + 6, name, n) == 0 &&
        strcmp(entry + 6 + n, ".so") == 0)
        return "a 'lib' prefix (CMake adds one: set PREFIX \"\" on the target)";
    if ((strncmp(entry, name, n) == 0 && strcmp(entry + n, ".so") == 0) ||
        (strncmp(entry, "lib", 3) == 0 && strncmp(entry + 3, name, n) == 0 &&
         strcmp(entry + 3 + n, ".so") == 0))
        return "no 'bp_' prefix";
    if (strncmp(entry, "bp_", 3) == 0 && strncmp(entry + 3, name, n) == 0 &&
        strncmp(entry + 3 + n, ".so.", 4) == 0)
        return "a version suffix";
    return NULL;
}

static void bp__list_near_misses(const bp_context *ctx, const char *name, bp__text *t)
{
    bool any = false;
    for (size_t i = 0; i < ctx->n_search; i++) {
        const bp__search_dir *s = &ctx->search[i];
        DIR *d = s->exists ? opendir(s->path) : NULL;
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            const char *why = bp__near_miss(e->d_name, name);
            if (!why)
                continue;
            bp__text_add(t, "%s  %s/%s has %s: a plugin file is named bp_%s.so; rename it",
                         any ? "\n" : "\nFiles that are nearly that plugin:\n", s->path,
                         e->d_name, why, name);
            any = true;
        }
        closedir(d);
    }
}

static void bp__not_found(const bp_context *ctx, const char *name)
{
    bp__text t = {.used = 0};
    bp__text_add(&t, "no backend plugin named '%s' (a file bp_%s.so). Searched, in order:", name,
                 name);
    for (size_t i = 0; i < ctx->n_search; i++)
        bp__text_add(&t, "\n  %s: %s%s", ctx->search[i].origin, ctx->search[i].path,
                     ctx->search[i].exists ? "" : " (does not exist)");
    if (ctx->n_search == 0)
        bp__text_add(&t, " nothing");
    bp__text_add(&t, "\nPlugins found:");
    for (size_t i = 0; i < ctx->n_plugins; i++) {
        const bp__plugin *p = ctx->plugins[i];
        if (p->load_tried && !p->loaded)
            bp__text_add(&t, "\n  %s: rejected: %s", p->path, p->message);
        else
            bp__text_add(&t, "\n  %s: backend '%s'", p->path, p->name);
    }
    if (ctx->n_plugins == 0)
        bp__text_add(&t, " none");
    bp__list_near_misses(ctx, name, &t);
    bp__text_add(&t, "\nTo use a plugin elsewhere, add its directory to plugin_path in the "
                     "config or to $BP_PLUGIN_PATH, or name its .so file by path.");
    bp__error(BP_ERR_NOT_FOUND, "%s", t.buf);
}

bp__plugin *bp__plugin_lookup(bp_context *ctx, const char *name)
{
    for (size_t i = 0; i < ctx->n_plugins; i++) {
        bp__plugin *p = ctx->plugins[i];
        if (!p->named_by_file && !p->load_tried)
            (void)bp__plugin_load(p); /* listed by path: only loading tells its name */
        if (!p->named_by_file && !p->loaded)
            continue;
        if (strcmp(p->name, name) == 0)
            return p;
    }
    bp__not_found(ctx, name);
    return NULL;
}

/* Whether two paths name the same file. */
static bool bp__same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return strcmp(a, b) == 0 ||
           (stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
            sa.st_ino == sb.st_ino);
}

bp_status bp__plugin_by_path(bp_context *ctx, const char *spec, bp__plugin **out)
{
    *out = NULL;
    char *path;
    if (!strchr(spec, '/')) {
        /* dlopen would search the library path for a bare name, not here */
        struct stat sb;
        if (stat(spec, &sb) != 0)
            return bp__error(BP_ERR_NOT_FOUND,
                             "bp_backend_get: there is no file '%s' in the current directory; "
                             "name a plugin file by its path (./%s, /opt/plugins/%s), or put it "
                             "in a plugin directory and ask for the backend by its name",
                             spec, spec, spec);
        path = bp__aprintf("./%s", spec);
    } else {
        path = strdup(spec);
    }
    if (!path)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_backend_get: out of memory");
    for (size_t i = 0; i < ctx->n_plugins; i++) {
        if (bp__same_file(ctx->plugins[i]->path, path)) {
            free(path);
            *out = ctx->plugins[i];
            return bp__plugin_load(*out);
        }
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *name = bp__named_file(base) ? strndup(base + 3, strlen(base) - 6) : NULL;
    bp__plugin *p = NULL;
    bp_status st = bp__named_file(base) && !name
                       ? bp__error(BP_ERR_OUT_OF_MEMORY, "bp_backend_get: out of memory")
                       : bp__record_add(ctx, path, name, name != NULL, &p);
    free(name);
    free(path);
    if (st != BP_OK)
        return st;
    *out = p;
    return bp__plugin_load(p);
}

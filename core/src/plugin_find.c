/* Finding plugins at bp_context_create, by file name only: nothing is opened
 * here, so a program pays only for the plugins it uses (a CUDA plugin brings
 * in the CUDA runtime and cuBLAS). The search order is $BP_PLUGIN_PATH,
 * plugin_path, then the directory beside libbackplane; the first file of a
 * backend name wins and later ones are recorded as ignored. A search entry
 * that does not exist, and a [backend.NAME] section that names no installed
 * plugin, are warnings that say what is there instead. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

static bool bp__is_plugin_file(const char *name)
{
    size_t n = strlen(name);
    return n > 6 && strncmp(name, "bp_", 3) == 0 && strcmp(name + n - 3, ".so") == 0;
}

/* A record for one file found; a second file of a name already found is
 * recorded as ignored, without loading it. */
static bp_status bp__found(bp_context *ctx, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *name = NULL;
    if (bp__named_file(base) && !(name = strndup(base + 3, strlen(base) - 6)))
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    const bp__plugin *first = NULL;
    for (size_t i = 0; name && i < ctx->n_plugins && !first; i++)
        if (ctx->plugins[i]->named_by_file && strcmp(ctx->plugins[i]->name, name) == 0)
            first = ctx->plugins[i];
    bp__plugin *p = NULL;
    bp_status st = bp__record_add(ctx, path, name, name != NULL, &p);
    free(name);
    if (st == BP_OK && first) {
        p->load_tried = true;
        bp__record_reject(p, BP_ERR_PLUGIN,
                          bp__aprintf("backend '%s' is already provided by %s, found first; "
                                      "this copy is ignored",
                                      first->name, first->path));
    }
    return st;
}

static int bp__cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bp_status bp__note_search(bp_context *ctx, const char *path, const char *origin, bool exists)
{
    bp__search_dir *grown = realloc(ctx->search, (ctx->n_search + 1) * sizeof *grown);
    if (!grown)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    ctx->search = grown;
    char *copy = strdup(path);
    if (!copy)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    ctx->search[ctx->n_search++] = (bp__search_dir){copy, origin, exists};
    return BP_OK;
}

/* Every bp_*.so in dir, sorted so that the order is reproducible. */
static bp_status bp__scan_dir(bp_context *ctx, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            return BP_OK; /* absent: said by the caller */
        if (e == ENOMEM)
            return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory opening the "
                             "plugin directory %s", dir);
        if (e == EMFILE || e == ENFILE)
            return bp__error(BP_ERR_IO, "plugin loader: cannot open the plugin directory %s: %s; "
                             "the process has too many files open", dir, strerror(e));
        /* unreadable (EACCES, ...): its plugins are missing, and the user is told why */
        bp__log(ctx, BP_LOG_WARN, "plugin loader: cannot read the plugin directory %s: %s; no "
                "plugin there is available (fix its permissions or remove it from the path)",
                dir, strerror(e));
        return BP_OK;
    }
    char **names = NULL;
    size_t n = 0;
    bp_status st = BP_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!bp__is_plugin_file(e->d_name))
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (grown)
            names = grown;
        char *full = grown ? bp__aprintf("%s/%s", dir, e->d_name) : NULL;
        if (!full) {
            st = bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
            break;
        }
        names[n++] = full;
    }
    closedir(d);
    if (st == BP_OK && n > 1)
        qsort(names, n, sizeof *names, bp__cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (st == BP_OK)
            st = bp__found(ctx, names[i]);
        free(names[i]);
    }
    free(names);
    return st;
}

static bool bp__ends_with_so(const char *s)
{
    size_t n = strlen(s);
    return n > 3 && strcmp(s + n - 3, ".so") == 0;
}

typedef struct bp__path_list {
    bp_context *ctx;
    const char *origin;   /* "$BP_PLUGIN_PATH" or "plugin_path" */
    const char *where;    /* plugin_path's setting origin ("FILE:LINE"), or NULL */
} bp__path_list;

static bp_status bp__path_item(bp__path_list *l, const char *item)
{
    struct stat sb;
    bool exists = stat(item, &sb) == 0;
    bool is_file = bp__ends_with_so(item);
    BP__TRY(bp__note_search(l->ctx, item, l->origin, exists));
    if (!exists) {
        bp__log(l->ctx, BP_LOG_WARN,
                "%s entry '%s'%s%s%s does not exist: no plugin%s found there; fix the path or "
                "remove the entry",
                l->origin, item, l->where ? " (" : "", l->where ? l->where : "",
                l->where ? ")" : "", is_file ? " is" : "s are");
        return BP_OK;
    }
    if (is_file || !S_ISDIR(sb.st_mode))
        return bp__found(l->ctx, item);
    return bp__scan_dir(l->ctx, item);
}

/* A ':'-separated list, like PATH; empty entries are skipped. */
static bp_status bp__path_list_each(bp__path_list *l, const char *list)
{
    char *copy = strdup(list);
    if (!copy)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    bp_status st = BP_OK;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ":", &save); tok && st == BP_OK; tok = strtok_r(NULL, ":", &save))
        st = bp__path_item(l, tok);
    free(copy);
    return st;
}

/* The directory holding the built-in plugins: <dir of libbackplane>/backplane. */
static char *bp__builtin_dir(void)
{
    Dl_info info;
    if (!dladdr((void *)bp__builtin_dir, &info) || !info.dli_fname)
        return NULL;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash)
        return bp__aprintf("./%s", BP_PLUGIN_SUBDIR);
    return bp__aprintf("%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, BP_PLUGIN_SUBDIR);
}

size_t bp__edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[65];
    if (la > 63 || lb > 63)
        return 64;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

bool bp__close_enough(const char *name, size_t distance)
{
    size_t n = strlen(name);
    return distance <= (n < 6 ? 2 : n / 3);
}

void bp__plugins_installed(const bp_context *ctx, const char *name, char *list, size_t cap,
                           const char **closest)
{
    size_t used = 0, best = 64;
    list[0] = '\0';
    *closest = NULL;
    for (size_t i = 0; i < ctx->n_plugins; i++) {
        const bp__plugin *p = ctx->plugins[i];
        if (!p->named_by_file || (p->load_tried && !p->loaded))
            continue;
        if (used < cap)
            used += (size_t)snprintf(list + used, cap - used, "%s%s", used ? ", " : "", p->name);
        size_t d = bp__edit_distance(name, p->name);
        if (d < best) {
            best = d;
            *closest = p->name;
        }
    }
    if (!bp__close_enough(name, best))
        *closest = NULL; /* nothing close enough to suggest */
}

/* A [backend.NAME] section for a plugin that is not installed: its keys do
 * nothing, which is worth saying, with the names that would work. Each
 * section is reported once, at its first key. */
static void bp__warn_unknown_sections(bp_context *ctx)
{
    for (size_t i = 0; i < ctx->config.count; i++) {
        const bp__setting *s = &ctx->config.items[i];
        if (strncmp(s->section, "backend.", 8) != 0)
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(ctx->config.items[j].section, s->section) == 0;
        const char *name = s->section + 8;
        bool installed = false;
        for (size_t j = 0; j < ctx->n_plugins && !installed; j++)
            installed = strcmp(ctx->plugins[j]->name, name) == 0;
        if (seen || installed)
            continue;
        char list[512];
        const char *closest;
        bp__plugins_installed(ctx, name, list, sizeof list, &closest);
        bp__log(ctx, BP_LOG_WARN,
                "%s: [%s]: no backend plugin '%s' is installed, so these settings do nothing "
                "(installed: %s)%s%s%s",
                s->origin, s->section, name, list[0] ? list : "none",
                closest ? "; did you mean [backend." : "", closest ? closest : "",
                closest ? "]?" : "");
    }
}

bp_status bp__plugins_find(bp_context *ctx)
{
    const char *env = getenv("BP_PLUGIN_PATH");
    if (env && *env) {
        bp__path_list l = {ctx, "$BP_PLUGIN_PATH", NULL};
        BP__TRY(bp__path_list_each(&l, env));
    }
    const bp__setting *cfg = bp__config_find(&ctx->config, "backplane", "plugin_path");
    if (cfg && cfg->value && *cfg->value) {
        bp__path_list l = {ctx, "plugin_path", cfg->origin};
        BP__TRY(bp__path_list_each(&l, cfg->value));
    }
    char *dir = bp__builtin_dir();
    if (!dir)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: cannot locate libbackplane");
    struct stat sb;
    bp_status st = bp__note_search(ctx, dir, "built-in", stat(dir, &sb) == 0);
    if (st == BP_OK)
        st = bp__scan_dir(ctx, dir);
    free(dir);
    if (st == BP_OK)
        bp__warn_unknown_sections(ctx);
    return st;
}

void bp__plugins_unload_all(bp_context *ctx)
{
    for (size_t i = 0; i < ctx->n_plugins; i++)
        bp__record_free(ctx->plugins[i]);
    free(ctx->plugins);
    ctx->plugins = NULL;
    ctx->n_plugins = 0;
    for (size_t i = 0; i < ctx->n_search; i++)
        free(ctx->search[i].path);
    free(ctx->search);
    ctx->search = NULL;
    ctx->n_search = 0;
}

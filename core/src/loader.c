/* The plugin loader: find bp_*.so files, dlopen them, check the descriptor,
 * record every failure with its reason. One broken plugin never stops the
 * others; nothing here is fatal to bp_context_create except a config error
 * that names a loaded plugin's section. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The v1.0 descriptor ends with `random`: anything smaller is refused. */
#define BP__PLUGIN_V1_SIZE (offsetof(bp_plugin, random) + sizeof(((bp_plugin *)0)->random))
/* The bytes a descriptor needs for its ABI version to be read at all. */
#define BP__PLUGIN_VERSION_SIZE (offsetof(bp_plugin, abi_minor) + sizeof(uint32_t))
/* More devices than this is a plugin defect, not a machine. */
#define BP__MAX_DEVICES 4096

/* ---- the host API handed to each plugin ---------------------------------- */

static void bp__host_log(void *host, bp_log_level level, const char *fmt, ...)
{
    bp__plugin *p = host;
    char prefix[80];
    snprintf(prefix, sizeof prefix, "%s: ", p->name);
    va_list ap;
    va_start(ap, fmt);
    bp__vlog(p->ctx, level, prefix, fmt, ap);
    va_end(ap);
}

static char *bp__section_of(const bp__plugin *p, char *buf, size_t cap)
{
    snprintf(buf, cap, "backend.%s", p->name);
    return buf;
}

static const char *bp__host_config_get(void *host, const char *key)
{
    bp__plugin *p = host;
    char section[96];
    return bp__config_get(&p->ctx->config, bp__section_of(p, section, sizeof section), key);
}

static bp_status bp__host_config_error(void *host, const char *key, const char *fmt, ...)
{
    bp__plugin *p = host;
    char section[96], reason[512], where[600];
    const bp__setting *s =
        bp__config_find(&p->ctx->config, bp__section_of(p, section, sizeof section), key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    if (s && s->file)
        snprintf(where, sizeof where, "%s:%d: ", s->file, s->line);
    else
        where[0] = '\0';
    /* bp__plugin_open takes the message from bp_last_error() for this code. */
    bp__call_begin();
    bp__error(BP_ERR_CONFIG, "%s[%s] %s = %s: %s", where, section, key,
              s && s->value ? s->value : "(unset)", reason);
    return BP_ERR_CONFIG;
}

static void bp__host_set_error(void *host, const char *fmt, ...)
{
    (void)host;
    va_list ap;
    va_start(ap, fmt);
    bp__plugin_detail_set(fmt, ap);
    va_end(ap);
}

/* ---- records --------------------------------------------------------------- */

static void bp__plugin_free(bp__plugin *p)
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

/* Replace *slot (a record's name or message) with fresh, which this takes.
 * The old string is kept until the context goes, because bp_context_plugin
 * promised the caller it stays valid. If even that cannot be recorded (out
 * of memory), the old string stays in place and fresh is dropped. */
static void bp__replace_string(bp__plugin *p, char **slot, char *fresh)
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

static bp_status bp__record_push(bp_context *ctx, bp__plugin *p)
{
    bp__plugin **grown = realloc(ctx->plugins, (ctx->n_plugins + 1) * sizeof *grown);
    if (!grown)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    ctx->plugins = grown;
    ctx->plugins[ctx->n_plugins++] = p;
    return BP_OK;
}

/* Reject p with a reason (the record stays, for `backplane info`). */
static void bp__reject(bp__plugin *p, bp_status st, char *message)
{
    p->loaded = false;
    p->status = st;
    bp__replace_string(p, &p->message,
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

static bool bp__name_valid(const char *s)
{
    if (!s || !*s || strlen(s) > 63)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static const char *bp__missing_required(const bp_plugin *vt)
{
#define BP__REQ(m) if (!vt->m) return #m;
    BP__REQ(open) BP__REQ(close) BP__REQ(device_count) BP__REQ(device_info)
    BP__REQ(device_open) BP__REQ(device_close) BP__REQ(alloc) BP__REQ(free)
    BP__REQ(write) BP__REQ(read)
#undef BP__REQ
    return NULL;
}

/* The plugin's config keys copied into this library's bp_config_key layout:
 * the array is walked with the plugin's element size (config_key_size, ABI
 * 1.1; the 1.0 layout before it), so either side may be built against a
 * larger bp_config_key than the other. NULL keys: *out NULL. */
static bp_status bp__copy_keys(const bp_plugin *vt, bp_config_key **out)
{
    *out = NULL;
    if (!vt->config_keys)
        return BP_OK;
    size_t stride = 3 * sizeof(const char *); /* the ABI 1.0 bp_config_key */
    if (vt->struct_size >= offsetof(bp_plugin, config_key_size) + sizeof vt->config_key_size &&
        vt->config_key_size != 0)
        stride = vt->config_key_size;
    if (stride < sizeof(const char *) || stride % sizeof(const char *) != 0)
        return bp__error(BP_ERR_PLUGIN,
                         "config_key_size is %zu, not a bp_config_key size; set it to "
                         "sizeof(bp_config_key)", stride);
    const char *base = (const char *)vt->config_keys;
    size_t n = 0;
    for (;; n++) {
        const char *name;
        memcpy(&name, base + n * stride, sizeof name);
        if (!name)
            break;
        if (n >= 1024)
            return bp__error(BP_ERR_PLUGIN, "config_keys has no NULL name among its first 1024 "
                             "entries; end the array with {NULL}");
    }
    bp_config_key *keys = calloc(n + 1, sizeof *keys);
    if (!keys)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    size_t copy = stride < sizeof *keys ? stride : sizeof *keys;
    for (size_t i = 0; i < n; i++)
        memcpy(&keys[i], base + i * stride, copy);
    *out = keys;
    return BP_OK;
}

/* dlopen + every load-time check. Fills p; never fails the caller except OOM. */
static void bp__load(bp__plugin *p)
{
    char why[512];
    if (!bp__elf_check(p->path, why, sizeof why)) {
        bp__reject(p, BP_ERR_PLUGIN, bp__aprintf("%s", why));
        return;
    }
    dlerror();
    p->dl = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
    if (!p->dl) {
        const char *e = dlerror();
        bp__reject(p, BP_ERR_PLUGIN, bp__aprintf("dlopen failed: %s", e ? e : "unknown error"));
        return;
    }
    dlerror();
    void *sym = dlsym(p->dl, BP_PLUGIN_ENTRY_SYMBOL);
    if (!sym) {
        const char *e = dlerror();
        bp__reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("no '%s' symbol (%s); a backplane plugin exports "
                               "`const bp_plugin *bp_plugin_entry(void)` with BP_PLUGIN_EXPORT",
                               BP_PLUGIN_ENTRY_SYMBOL, e ? e : "not found"));
        return;
    }
    bp_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object -> function pointer, as POSIX allows */
    const bp_plugin *vt = entry();
    if (!vt) {
        bp__reject(p, BP_ERR_PLUGIN, bp__aprintf("bp_plugin_entry() returned NULL"));
        return;
    }
    if (vt->struct_size < BP__PLUGIN_VERSION_SIZE) {
        bp__reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("descriptor too small (%u bytes, need at least %zu to hold the "
                               "ABI version, %zu for ABI %d.0); rebuild the plugin against "
                               "backplane's plugin.h",
                               vt->struct_size, (size_t)BP__PLUGIN_VERSION_SIZE,
                               (size_t)BP__PLUGIN_V1_SIZE, BP_ABI_MAJOR));
        return;
    }
    if (vt->abi_major != BP_ABI_MAJOR) {
        bp__reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("built for plugin ABI %u.%u, but this libbackplane speaks ABI %d.%d; "
                               "rebuild the plugin against backplane's plugin.h (ABI %d.x)",
                               vt->abi_major, vt->abi_minor, BP_ABI_MAJOR, BP_ABI_MINOR,
                               BP_ABI_MAJOR));
        return;
    }
    if (vt->struct_size < BP__PLUGIN_V1_SIZE) {
        bp__reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("descriptor is %u bytes, smaller than the %zu bytes of ABI %d.0 "
                               "(ABI %u.%u claimed); rebuild the plugin against plugin.h",
                               vt->struct_size, (size_t)BP__PLUGIN_V1_SIZE, BP_ABI_MAJOR,
                               vt->abi_major, vt->abi_minor));
        return;
    }
    if (!bp__name_valid(vt->name)) {
        bp__reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("invalid backend name '%s' (want [a-z0-9_]+, at most 63 chars)",
                               vt->name ? vt->name : "(null)"));
        return;
    }
    const char *missing = bp__missing_required(vt);
    if (missing) {
        bp__reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("required entry '%s' is NULL in backend '%s'", missing, vt->name));
        return;
    }
    bp_status kst = bp__copy_keys(vt, &p->keys);
    if (kst != BP_OK) {
        bp__reject(p, kst, bp__aprintf("%s", bp_last_error()));
        return;
    }
    char *name = strdup(vt->name);
    if (!name) {
        bp__reject(p, BP_ERR_OUT_OF_MEMORY, NULL);
        return;
    }
    bp__replace_string(p, &p->name, name);
    if (p->name != name) { /* out of memory keeping the old name */
        bp__reject(p, BP_ERR_OUT_OF_MEMORY, NULL);
        return;
    }
    p->vt = vt;
    p->loaded = true;
    p->status = BP_OK;
    bp__log(p->ctx, BP_LOG_DEBUG, "loaded plugin '%s' %s from %s (ABI %u.%u)", vt->name,
            vt->version ? vt->version : "", p->path, vt->abi_major, vt->abi_minor);
}

static bp__plugin *bp__find_loaded(bp_context *ctx, const char *name)
{
    for (size_t i = 0; i < ctx->n_plugins; i++)
        if (ctx->plugins[i]->loaded && strcmp(ctx->plugins[i]->name, name) == 0)
            return ctx->plugins[i];
    return NULL;
}

bp_status bp__loader_add_file(bp_context *ctx, const char *path, bp__plugin **out)
{
    if (out)
        *out = NULL;
    for (size_t i = 0; i < ctx->n_plugins; i++) { /* the same file twice: one record */
        if (strcmp(ctx->plugins[i]->path, path) == 0) {
            if (out)
                *out = ctx->plugins[i];
            return BP_OK;
        }
    }
    bp__plugin *p = calloc(1, sizeof *p);
    if (!p)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    p->ctx = ctx;
    p->device_count = -1;
    p->path = strdup(path);
    const char *base = strrchr(path, '/');
    p->name = strdup(base ? base + 1 : path);
    p->message = strdup("");
    if (!p->path || !p->name || !p->message) {
        bp__plugin_free(p);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    }
    p->host.struct_size = sizeof p->host;
    p->host.abi_major = BP_ABI_MAJOR;
    p->host.abi_minor = BP_ABI_MINOR;
    p->host.host = p;
    p->host.log = bp__host_log;
    p->host.config_get = bp__host_config_get;
    p->host.config_error = bp__host_config_error;
    p->host.set_error = bp__host_set_error;
    bp__load(p);
    if (p->loaded) {
        bp__plugin *other = bp__find_loaded(ctx, p->name);
        if (other) /* first found wins: $BP_PLUGIN_PATH, plugin_path, then built-ins */
            bp__reject(p, BP_ERR_PLUGIN,
                       bp__aprintf("backend '%s' is already provided by %s; this copy is ignored",
                                   other->name, other->path));
    }
    bp_status st = bp__record_push(ctx, p);
    if (st != BP_OK) {
        bp__plugin_free(p);
        return st;
    }
    if (out)
        *out = p;
    return BP_OK;
}

static int bp__cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool bp__is_plugin_file(const char *name)
{
    size_t n = strlen(name);
    return n > 6 && strncmp(name, "bp_", 3) == 0 && strcmp(name + n - 3, ".so") == 0;
}

/* Load every bp_*.so in dir (sorted, so the order is reproducible). */
static bp_status bp__scan_dir(bp_context *ctx, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        bp__log(ctx, BP_LOG_DEBUG, "plugin directory %s: %s", dir, strerror(errno));
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
            st = bp__loader_add_file(ctx, names[i], NULL);
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

static bp_status bp__add_path_item(const char *item, void *user)
{
    bp_context *ctx = user;
    return bp__ends_with_so(item) ? bp__loader_add_file(ctx, item, NULL) : bp__scan_dir(ctx, item);
}

/* Split a ':'-separated list (like PATH) and feed each item. */
static bp_status bp__foreach_colon(bp_context *ctx, const char *list)
{
    char *copy = strdup(list);
    if (!copy)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: out of memory");
    bp_status st = BP_OK;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ":", &save); tok && st == BP_OK; tok = strtok_r(NULL, ":", &save))
        st = bp__add_path_item(tok, ctx);
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

bp_status bp__loader_discover(bp_context *ctx)
{
    const char *env = getenv("BP_PLUGIN_PATH");
    if (env && *env)
        BP__TRY(bp__foreach_colon(ctx, env));
    const char *cfg = bp__config_get(&ctx->config, "backplane", "plugin_path");
    if (cfg && *cfg)
        BP__TRY(bp__foreach_colon(ctx, cfg));
    char *dir = bp__builtin_dir();
    if (!dir)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin loader: cannot locate libbackplane");
    bp_status st = bp__scan_dir(ctx, dir);
    free(dir);
    if (st != BP_OK)
        return st;

    /* [backend.NAME] keys must be ones the plugin declares; a section for a
     * plugin that is not installed here (cuda on a CPU box) is not an error. */
    for (size_t i = 0; i < ctx->config.count; i++) {
        const bp__setting *s = &ctx->config.items[i];
        if (strncmp(s->section, "backend.", 8) != 0)
            continue;
        if (!bp__find_loaded(ctx, s->section + 8))
            bp__log(ctx, BP_LOG_INFO, "%s:%d: [%s]: no such backend plugin is installed; ignored",
                    s->file ? s->file : "config", s->line, s->section);
    }
    for (size_t i = 0; i < ctx->n_plugins; i++) {
        bp__plugin *p = ctx->plugins[i];
        if (p->loaded)
            BP__TRY(bp__config_check_backend(&ctx->config, p->name, p->keys));
    }
    return BP_OK;
}

bp_status bp__plugin_open(bp__plugin *p)
{
    if (!p->loaded)
        return bp__error(p->status ? p->status : BP_ERR_PLUGIN, "backend plugin %s: %s", p->path,
                         p->message);
    if (p->open_tried)
        return p->opened ? BP_OK
                         : bp__error(p->status, "backend '%s' (%s) could not be opened: %s",
                                     p->name, p->path, p->message);
    p->open_tried = true;
    bp__call_begin();
    void *state = NULL;
    bp_status st = bp__plugin_entry_status("open", p->vt->open(&p->host, &state));
    if (st == BP_OK) {
        int32_t n = p->vt->device_count(state);
        if (n >= 0 && n <= BP__MAX_DEVICES) {
            p->state = state;
            p->opened = true;
            p->device_count = n;
            return BP_OK;
        }
        p->vt->close(state);
        st = BP_ERR_PLUGIN;
        bp__plugin_detail_setf("its device_count entry reports %ld devices, outside 0..%d: a "
                               "defect in the plugin",
                               (long)n, BP__MAX_DEVICES);
    }
    const char *detail = bp__plugin_detail();
    if (st == BP_ERR_CONFIG && !*detail)
        detail = bp_last_error(); /* from config_error */
    bp__replace_string(p, &p->message,
                       bp__aprintf("%s", *detail ? detail : "open() failed without a reason"));
    p->status = st;
    return bp__error(st, "backend '%s' (%s) could not be opened: %s", p->name, p->path,
                     p->message);
}

void bp__loader_unload_all(bp_context *ctx)
{
    for (size_t i = 0; i < ctx->n_plugins; i++)
        bp__plugin_free(ctx->plugins[i]);
    free(ctx->plugins);
    ctx->plugins = NULL;
    ctx->n_plugins = 0;
}

/* Loading a plugin: check the file (elf_check.c), dlopen it, call its entry
 * and check the descriptor it returns, copy its config keys. Happens once per
 * record, the first time the plugin is needed; the outcome stays on the
 * record. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The v1.0 descriptor ends with `random`: anything smaller is refused. */
#define BP__PLUGIN_V1_SIZE (offsetof(bp_plugin, random) + sizeof(((bp_plugin *)0)->random))
/* The bytes a descriptor needs for its ABI version to be read at all. */
#define BP__PLUGIN_VERSION_SIZE (offsetof(bp_plugin, abi_minor) + sizeof(uint32_t))

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

/* dlopen + every load-time check; the outcome is on the record. */
static void bp__load(bp__plugin *p)
{
    char why[512];
    if (!bp__elf_check(p->path, why, sizeof why)) {
        bp__record_reject(p, BP_ERR_PLUGIN, bp__aprintf("%s", why));
        return;
    }
    dlerror();
    p->dl = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
    if (!p->dl) {
        const char *e = dlerror();
        bp__record_reject(p, BP_ERR_PLUGIN, bp__aprintf("dlopen failed: %s", e ? e : "unknown error"));
        return;
    }
    dlerror();
    void *sym = dlsym(p->dl, BP_PLUGIN_ENTRY_SYMBOL);
    if (!sym) {
        const char *e = dlerror();
        bp__record_reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("no '%s' symbol (%s); a backplane plugin exports "
                               "`const bp_plugin *bp_plugin_entry(void)` with BP_PLUGIN_EXPORT",
                               BP_PLUGIN_ENTRY_SYMBOL, e ? e : "not found"));
        return;
    }
    bp_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object -> function pointer, as POSIX allows */
    const bp_plugin *vt = entry();
    if (!vt) {
        bp__record_reject(p, BP_ERR_PLUGIN, bp__aprintf("bp_plugin_entry() returned NULL"));
        return;
    }
    if (vt->struct_size < BP__PLUGIN_VERSION_SIZE) {
        bp__record_reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("descriptor too small (%u bytes, need at least %zu to hold the "
                               "ABI version, %zu for ABI %d.0); rebuild the plugin against "
                               "backplane's plugin.h",
                               vt->struct_size, (size_t)BP__PLUGIN_VERSION_SIZE,
                               (size_t)BP__PLUGIN_V1_SIZE, BP_ABI_MAJOR));
        return;
    }
    if (vt->abi_major != BP_ABI_MAJOR) {
        bp__record_reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("built for plugin ABI %u.%u, but this libbackplane speaks ABI %d.%d; "
                               "rebuild the plugin against backplane's plugin.h (ABI %d.x)",
                               vt->abi_major, vt->abi_minor, BP_ABI_MAJOR, BP_ABI_MINOR,
                               BP_ABI_MAJOR));
        return;
    }
    if (vt->struct_size < BP__PLUGIN_V1_SIZE) {
        bp__record_reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("descriptor is %u bytes, smaller than the %zu bytes of ABI %d.0 "
                               "(ABI %u.%u claimed); rebuild the plugin against plugin.h",
                               vt->struct_size, (size_t)BP__PLUGIN_V1_SIZE, BP_ABI_MAJOR,
                               vt->abi_major, vt->abi_minor));
        return;
    }
    if (!bp__name_valid(vt->name)) {
        bp__record_reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("invalid backend name '%s' (want [a-z0-9_]+, at most 63 chars)",
                               vt->name ? vt->name : "(null)"));
        return;
    }
    const char *missing = bp__missing_required(vt);
    if (missing) {
        bp__record_reject(p, BP_ERR_PLUGIN,
                   bp__aprintf("required entry '%s' is NULL in backend '%s'", missing, vt->name));
        return;
    }
    bp_status kst = bp__copy_keys(vt, &p->keys);
    if (kst != BP_OK) {
        bp__record_reject(p, kst, bp__aprintf("%s", bp_last_error()));
        return;
    }
    p->vt = vt;
    p->loaded = true;
    p->status = BP_OK;
    bp__log(p->ctx, BP_LOG_DEBUG, "loaded plugin '%s' %s from %s (ABI %u.%u)", vt->name,
            vt->version ? vt->version : "", p->path, vt->abi_major, vt->abi_minor);
}

/* A loaded plugin whose backend name another record already provides, or
 * whose file name promised another backend, is refused: lookups by name must
 * be able to trust file names without loading anything. */
static void bp__check_name(bp__plugin *p, const char *file_name)
{
    const char *name = p->vt->name;
    if (file_name && strcmp(file_name, name) != 0) {
        const char *base = strrchr(p->path, '/');
        bp__record_reject(p, BP_ERR_PLUGIN,
                          bp__aprintf("the file is named %s but holds backend '%s'; rename it "
                                      "to bp_%s.so (plugins are found by file name before they "
                                      "are loaded)",
                                      base ? base + 1 : p->path, name, name));
        return;
    }
    bp_context *ctx = p->ctx; /* first found wins: only earlier records count */
    for (size_t i = 0; i < ctx->n_plugins && ctx->plugins[i] != p; i++) {
        const bp__plugin *o = ctx->plugins[i];
        if ((o->loaded || (o->named_by_file && !o->load_tried)) && strcmp(o->name, name) == 0) {
            bp__record_reject(p, BP_ERR_PLUGIN,
                              bp__aprintf("backend '%s' is already provided by %s; this copy "
                                          "is ignored",
                                          name, o->path));
            return;
        }
    }
}

/* A record takes its descriptor's backend name only once it passed every
 * check: a refused one keeps its file's name, so that it never answers to
 * the name of a backend it does not provide (a misnamed copy of bp_binary.so
 * once hid the real binary backend). */
static void bp__take_name(bp__plugin *p)
{
    if (strcmp(p->name, p->vt->name) == 0)
        return;
    char *name = strdup(p->vt->name);
    if (!name) {
        bp__record_reject(p, BP_ERR_OUT_OF_MEMORY, NULL);
        return;
    }
    bp__record_set(p, &p->name, name);
    if (p->name != name) /* out of memory keeping the old name */
        bp__record_reject(p, BP_ERR_OUT_OF_MEMORY, NULL);
}

bp_status bp__plugin_load(bp__plugin *p)
{
    if (!p->load_tried) {
        p->load_tried = true;
        bp__load(p);
        if (p->loaded) /* the record still has its file's name here */
            bp__check_name(p, p->named_by_file ? p->name : NULL);
        if (p->loaded)
            bp__take_name(p);
    }
    if (p->loaded)
        return BP_OK;
    return bp__error(p->status ? p->status : BP_ERR_PLUGIN,
                     "backend '%s' (%s) could not be loaded: %s", p->name, p->path, p->message);
}

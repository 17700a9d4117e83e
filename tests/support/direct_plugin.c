/* direct_plugin.h: a plugin opened as the core opens it. */
#include "direct_plugin.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>

#include <criterion/criterion.h>

static char host_msg[512];

static void h_log(void *h, bp_log_level l, const char *fmt, ...) { (void)h, (void)l, (void)fmt; }
static const char *h_get(void *h, const char *key) { (void)h, (void)key; return NULL; }
static bp_status h_config_error(void *h, const char *key, const char *fmt, ...)
{
    (void)h, (void)key, (void)fmt;
    return BP_ERR_CONFIG;
}
static void h_set_error(void *h, const char *fmt, ...)
{
    (void)h;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(host_msg, sizeof host_msg, fmt, ap);
    va_end(ap);
}

static bp_host_api host = {.struct_size = sizeof host, .abi_major = BP_ABI_MAJOR,
                           .abi_minor = BP_ABI_MINOR, .log = h_log, .config_get = h_get,
                           .config_error = h_config_error, .set_error = h_set_error};

const char *bpt_direct_error(void) { return host_msg; }
void bpt_direct_clear_error(void) { host_msg[0] = '\0'; }

void bpt_direct_open(bpt_direct *d, const char *path, uint32_t host_abi_minor)
{
    d->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(d->so, "dlopen %s: %s", path, dlerror());
    bp_plugin_entry_fn entry =
        (bp_plugin_entry_fn)(uintptr_t)dlsym(d->so, BP_PLUGIN_ENTRY_SYMBOL);
    cr_assert_not_null(entry, "%s has no %s", path, BP_PLUGIN_ENTRY_SYMBOL);
    d->p = entry();
    host.abi_minor = host_abi_minor;
    d->state = d->dev = NULL;
    bpt_direct_clear_error();
    cr_assert_eq(d->p->open(&host, &d->state), BP_OK, "%s: open: %s", path, host_msg);
    cr_assert_eq(d->p->device_open(d->state, 0, &d->dev), BP_OK, "%s: device_open: %s", path,
                 host_msg);
}

void bpt_direct_close(bpt_direct *d)
{
    d->p->device_close(d->dev);
    d->p->close(d->state);
    dlclose(d->so);
}

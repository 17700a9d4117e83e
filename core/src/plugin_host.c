/* The host API table handed to a plugin: logging under its name, its own
 * [backend.NAME] keys, config errors that name the file and line, and the
 * error detail of the entry being called. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

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

void bp__host_init(bp__plugin *p)
{
    p->host.struct_size = sizeof p->host;
    p->host.abi_major = BP_ABI_MAJOR;
    p->host.abi_minor = BP_ABI_MINOR;
    p->host.host = p;
    p->host.log = bp__host_log;
    p->host.config_get = bp__host_config_get;
    p->host.config_error = bp__host_config_error;
    p->host.set_error = bp__host_set_error;
}

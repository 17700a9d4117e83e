/* Logging: stderr only, at or above the context's level, never stdout. */
#include <stdio.h>
#include <strings.h>

#include "internal.h"

static const char *const bp__level_names[] = {"debug", "info", "warn", "error", "off"};

const char *bp__log_level_name(bp_log_level level)
{
    return (level >= BP_LOG_DEBUG && level <= BP_LOG_OFF) ? bp__level_names[level] : "?";
}

bool bp__log_level_parse(const char *s, bp_log_level *out)
{
    if (s == NULL)
        return false;
    for (int i = BP_LOG_DEBUG; i <= BP_LOG_OFF; i++) {
        if (strcasecmp(s, bp__level_names[i]) == 0) {
            *out = (bp_log_level)i;
            return true;
        }
    }
    if (strcasecmp(s, "warning") == 0) {
        *out = BP_LOG_WARN;
        return true;
    }
    return false;
}

void bp__vlog(const bp_context *ctx, bp_log_level level, const char *prefix, const char *fmt,
              va_list ap)
{
    bp_log_level threshold = ctx ? ctx->log_level : BP_LOG_WARN;
    if (level < threshold || level >= BP_LOG_OFF)
        return;
    /* One fprintf per line keeps lines from several threads whole. */
    char line[2048];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "backplane: %s: %s%s\n", bp__log_level_name(level), prefix ? prefix : "", line);
}

void bp__log(const bp_context *ctx, bp_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bp__vlog(ctx, level, NULL, fmt, ap);
    va_end(ap);
}

bp_log_level bp_context_log_level(const bp_context *ctx)
{
    return ctx ? ctx->log_level : BP_LOG_WARN;
}

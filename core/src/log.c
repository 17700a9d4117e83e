/* Logging: stderr only, at or above the context's level, never stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    char head[96];
    snprintf(head, sizeof head, "backplane: %s: %s", bp__log_level_name(level),
             prefix ? prefix : "");
    char small[2048], *msg = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0)
        small[0] = '\0';
    else if ((size_t)n >= sizeof small) {
        char *big = malloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, again);
            msg = big;
        }
    }
    va_end(again);
    /* A message of several lines stays whole: its later lines are indented
     * under the first, and the whole goes out in one write, so that lines
     * from several threads never interleave inside it. */
    size_t len = strlen(msg);
    while (len > 0 && msg[len - 1] == '\n')
        len--;
    size_t breaks = 0;
    for (size_t i = 0; i < len; i++)
        breaks += msg[i] == '\n';
    size_t head_len = strlen(head), need = head_len + len + breaks * 2 + 1;
    char out_small[2304], *out = need <= sizeof out_small ? out_small : malloc(need);
    if (!out) { /* out of memory: the first line, marked as cut */
        const char *nl = memchr(msg, '\n', len);
        fprintf(stderr, "%s%.*s [...]\n", head, (int)(nl ? (size_t)(nl - msg) : len), msg);
    } else {
        memcpy(out, head, head_len);
        size_t o = head_len;
        for (size_t i = 0; i < len; i++) {
            out[o++] = msg[i];
            if (msg[i] == '\n') {
                out[o++] = ' ';
                out[o++] = ' ';
            }
        }
        out[o++] = '\n';
        fwrite(out, 1, o, stderr);
        if (out != out_small)
            free(out);
    }
    if (msg != small)
        free(msg);
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

void bp_context_log(const bp_context *ctx, bp_log_level level, const char *message)
{
    bp__log(ctx, level, "%s", message ? message : "");
}

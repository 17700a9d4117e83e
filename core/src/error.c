/* Status names and this thread's last error message. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* Large enough for a loader failure listing every path tried. */
#define BP__ERR_CAP 4096

static _Thread_local char bp__last_error[BP__ERR_CAP];
static _Thread_local char bp__detail[1024];

const char *bp_status_string(bp_status status)
{
    switch (status) {
#define BP__STATUS_NAME(name, value, msg) case name: return #name;
        BP_STATUS_LIST(BP__STATUS_NAME)
#undef BP__STATUS_NAME
    }
    return "BP_UNKNOWN_STATUS";
}

const char *bp_status_message(bp_status status)
{
    switch (status) {
#define BP__STATUS_MSG(name, value, msg) case name: return msg;
        BP_STATUS_LIST(BP__STATUS_MSG)
#undef BP__STATUS_MSG
    }
    return "unknown status";
}

const char *bp_last_error(void) { return bp__last_error; }

bp_status bp__error(bp_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(bp__last_error, sizeof bp__last_error, fmt, ap);
    va_end(ap);
    return code;
}

const char *bp__plugin_detail(void) { return bp__detail; }

void bp__call_begin(void) { bp__detail[0] = '\0'; }

void bp__plugin_detail_set(const char *fmt, va_list ap)
{
    vsnprintf(bp__detail, sizeof bp__detail, fmt, ap);
}

void bp__plugin_detail_setf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(bp__detail, sizeof bp__detail, fmt, ap);
    va_end(ap);
}

char *bp__aprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

/* The stress test's checks (st_check.h). */
#include "st_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

atomic_int st_broken;

void st_report(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "stress: %s\n", line);
    atomic_fetch_add(&st_broken, 1);
}

bp_status st_check(const char *call, bp_status st)
{
    if (strcmp(bp_status_string(st), "BP_UNKNOWN_STATUS") == 0)
        st_report("%s returned %d, not a bp_status code", call, (int)st);
    else if (st != BP_OK && !*bp_last_error())
        st_report("%s failed with %s and an empty bp_last_error()", call, bp_status_string(st));
    return st;
}

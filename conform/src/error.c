/* bp_conform_last_error: one message per thread, as bp_last_error is for the
 * core (the runs themselves may happen on several threads at once). */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char last_error[CF_OPEN_MESSAGE_MAX + 256]; /* with what open_failure adds */

bp_status cf_fail(bp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

void cf_clear_error(void)
{
    last_error[0] = '\0';
}

const char *bp_conform_last_error(void)
{
    return last_error;
}

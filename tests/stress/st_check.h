/* Checks shared by the stress test's threads: every status is a known code,
 * every failure leaves a message; a broken check is counted and reported. */
#ifndef ST_CHECK_H
#define ST_CHECK_H

#include <stdatomic.h>

#include <backplane/backplane.h>

extern atomic_int st_broken;

/* Print "stress: ..." to stderr and count a broken check. */
void st_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A known status, and a message if it is a failure; returns st. */
bp_status st_check(const char *call, bp_status st);

/* Fail (count) unless call succeeded. */
#define ST_OK(call)                                                                        \
    do {                                                                                   \
        bp_status st_ok_ = st_check(#call, (call));                                        \
        if (st_ok_ != BP_OK)                                                               \
            st_report("%s:%d: %s -> %s: %s", __FILE__, __LINE__, #call,                    \
                      bp_status_string(st_ok_), bp_last_error());                         \
    } while (0)

#endif

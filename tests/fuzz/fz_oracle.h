/* The oracles every harness checks, and the process set-up they need. A
 * violation prints what was seen to stderr and traps, so libFuzzer reports
 * it as a crash with the input that caused it. */
#ifndef FZ_ORACLE_H
#define FZ_ORACLE_H

#include <stdbool.h>
#include <stddef.h>

#include <backplane/backplane.h>

/* Print "fuzz oracle: ..." and trap. */
_Noreturn void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Once per process: clear the BP_* environment (the harness names its config
 * files itself), make a private temporary directory (returned, never freed)
 * and send fd 1 to a file, so that fz_stdout_check can prove the library
 * wrote nothing to stdout. */
const char *fz_setup(void);
void fz_stdout_check(void);

/* With FZ_TRACE=1 in the environment, print one line to stderr (to follow
 * what an input does when reproducing a crash). */
void fz_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Leave a known message in bp_last_error() before a call, so that a failing
 * call that sets no message of its own is caught. */
void fz_mark(void);

/* st is one of the bp_status codes (what names where it came from). */
void fz_known(const char *what, bp_status st);

/* The status is a known code; a failure came with a fresh, non-empty
 * bp_last_error(). */
void fz_status(const char *call, bp_status st);

/* fz_status, and for calls making a tensor: failure leaves *out NULL, success
 * gives a tensor whose metadata hang together (fz_tensor_sane). */
void fz_result(const char *call, bp_status st, const bp_tensor *out);

/* dtype valid, rank 0..8, extents >= 0, numel = product, nbytes = numel * size. */
void fz_tensor_sane(const char *call, const bp_tensor *t);

/* Element count of a shape; false if it overflows int64 or its byte size
 * (elem bytes each) overflows. Zero extents make it 0 only after the
 * product of the others was checked, so (0, 2^62, 4) "overflows" here. */
bool fz_numel(int rank, const int64_t *shape, size_t elem, int64_t *numel);

#endif

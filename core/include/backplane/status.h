/* backplane: status codes and error messages.
 *
 * Every fallible call returns a bp_status (BP_OK is 0). bp_status_string()
 * names a code; bp_last_error() gives this thread's detailed message for the
 * last failing call: what failed, where, and what to do about it. */
#ifndef BACKPLANE_STATUS_H
#define BACKPLANE_STATUS_H

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One list gives the enum, the names and the one-line meanings, so they can
 * never disagree. Codes are only ever appended. */
#define BP_STATUS_LIST(X)                                                              \
    X(BP_OK, 0, "ok")                                                                  \
    X(BP_ERR_INVALID_ARGUMENT, 1, "invalid argument")                                  \
    X(BP_ERR_SHAPE, 2, "incompatible or invalid shape")                                \
    X(BP_ERR_DTYPE, 3, "unsupported or mismatched dtype")                              \
    X(BP_ERR_BACKEND_MISMATCH, 4, "tensors belong to different backends")              \
    X(BP_ERR_UNSUPPORTED_OP, 5, "operation not supported by this backend")             \
    X(BP_ERR_UNSUPPORTED_DEVICE, 6, "device cannot be used by this backend")           \
    X(BP_ERR_PLUGIN, 7, "backend plugin could not be loaded or is invalid")            \
    X(BP_ERR_CONFIG, 8, "invalid configuration")                                       \
    X(BP_ERR_OUT_OF_MEMORY, 9, "out of memory")                                        \
    X(BP_ERR_IO, 10, "input/output error")                                             \
    X(BP_ERR_FORMAT, 11, "malformed data")                                             \
    X(BP_ERR_BACKEND, 12, "backend failure")                                           \
    X(BP_ERR_NOT_FOUND, 13, "not found")                                              \
    X(BP_ERR_INDEX, 14, "index out of range")

typedef enum bp_status {
#define BP__STATUS_ENUM(name, value, msg) name = value,
    BP_STATUS_LIST(BP__STATUS_ENUM)
#undef BP__STATUS_ENUM
} bp_status;

/* The code's name, e.g. "BP_ERR_SHAPE"; "BP_UNKNOWN_STATUS" for a value not in
 * the list. Never NULL, never freed. */
BP_API const char *bp_status_string(bp_status status);

/* The code's one-line meaning, e.g. "incompatible or invalid shape". */
BP_API const char *bp_status_message(bp_status status);

/* This thread's detailed message for the last call that failed ("" if none).
 * Valid until this thread's next failing backplane call. */
BP_API const char *bp_last_error(void);

#ifdef __cplusplus
}
#endif
#endif

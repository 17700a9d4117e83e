/* Waiting for a device. A backend may queue its work and return at once;
 * only a read of its memory by the host and bp_synchronize wait for it.
 * Each such wait is counted and logged at debug level with the public call
 * that caused it, so the step that idles a GPU can be found, and an error
 * found while running queued work (an index out of range, say) surfaces at
 * the first wait after it, naming the op that failed. */
#include <stdio.h>

#include "internal.h"

bp_status bp__deferred_check(bp_backend *b, const char *fn)
{
    if (!BP__HAS(b->vt, deferred_error))
        return BP_OK;
    bp__call_begin();
    bp_status st = b->vt->deferred_error(b->dev);
    if (st == BP_OK)
        return BP_OK;
    if (!bp__status_known((int)st))
        return bp__call_end(b, "deferred_error", "deferred_error", st);
    const char *detail = bp__plugin_detail();
    return bp__error(st, "backend %s: work queued earlier failed on the device (reported at %s, "
                     "the first call that waited for it): %s",
                     b->name, fn, *detail ? detail : bp_status_message(st));
}

bp_status bp__device_read(bp_backend *b, const char *fn, const void *buffer, size_t offset,
                          void *dst, size_t bytes)
{
    if (b->graph)
        return bp__graph_read_error(fn, b);
    bp__count_sync(b);
    bp__log(b->ctx, BP_LOG_DEBUG, "%s: synchronising read of %zu bytes from %s", fn, bytes,
            b->name);
    char what[96];
    snprintf(what, sizeof what, "read for %s", fn);
    BP__TRY(BP__CALL(b, what, read, buffer, offset, dst, bytes));
    return bp__deferred_check(b, fn);
}

bp_status bp_synchronize(bp_backend *b)
{
    if (!b)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_synchronize: backend is NULL");
    bp__count_sync(b);
    bp__log(b->ctx, BP_LOG_DEBUG, "bp_synchronize: waiting for %s", b->name);
    if (BP__HAS(b->vt, synchronize))
        BP__TRY(BP__CALL0(b, "synchronize", synchronize));
    return bp__deferred_check(b, "bp_synchronize");
}

bp_status bp_backend_synchronize(bp_backend *b) { return bp_synchronize(b); }

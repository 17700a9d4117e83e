/* Structs with a struct_size, by PJRT's rule. Out: the caller sets
 * struct_size to the size it was built with; the library writes
 * min(that, its own size) bytes and never struct_size itself. A caller built
 * against an older, smaller struct is never overrun, and one built against a
 * newer, larger struct keeps its own zeroes in the members this library does
 * not know. In: the library reads min(struct_size, its own size) bytes and
 * takes the members a smaller (older) caller lacks as zero, their default. */
#include <string.h>

#include "internal.h"

bp_status bp__struct_out(const char *fn, const char *type, void *out, size_t min_size,
                         const void *full, size_t full_size)
{
    uint32_t caller;
    memcpy(&caller, out, sizeof caller);
    if (caller < min_size)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: out->struct_size is %u, smaller than any %s (%zu bytes); set "
                         "out->struct_size = sizeof(%s) before the call",
                         fn, (unsigned)caller, type, min_size, type);
    size_t n = caller < full_size ? caller : full_size;
    memcpy((char *)out + sizeof caller, (const char *)full + sizeof caller, n - sizeof caller);
    return BP_OK;
}

bp_status bp__struct_in(const char *fn, const char *type, const char *init, const void *in,
                        size_t min_size, void *copy, size_t full_size)
{
    uint32_t caller;
    memcpy(&caller, in, sizeof caller);
    if (caller < min_size)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: the %s's struct_size is %u, smaller than any %s (%zu bytes); "
                         "initialise it with %s",
                         fn, type, (unsigned)caller, type, min_size, init);
    memset(copy, 0, full_size);
    memcpy(copy, in, caller < full_size ? caller : full_size);
    return BP_OK;
}

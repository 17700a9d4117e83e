/* Checking index tensors (gather, gather_elements, gather_nd, scatter_*)
 * before a backend sees them. Host-addressable backends are read in place
 * (they run synchronously anyway). A device backend with deferred_error
 * checks the indices itself, on the device, and reports a bad one at the
 * next wait: reading them here would synchronise it on every call. Any other
 * device backend is read (and so waited for), which the stats count and the
 * debug log names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The flat position of the first index outside [-dims[j], dims[j]) (j the
 * position modulo m), or -1. Typed loops: this runs over every index of
 * every gather and scatter on a host backend, so it must cost little next
 * to the op (a per-element dtype switch and modulo made it ~15% of a
 * scatter-add of 4M updates). */
#define FIRST_BAD(T)                                                                    \
    do {                                                                                \
        for (int64_t i = 0, j = 0; i < n; i++) {                                        \
            T v;                                                                        \
            memcpy(&v, at + (size_t)i * sizeof(T), sizeof(T));                          \
            int64_t dim = dims[j];                                                      \
            if (v < -dim || v >= dim)                                                   \
                return i;                                                               \
            if (m > 1 && ++j == m)                                                      \
                j = 0;                                                                  \
        }                                                                               \
    } while (0)

static int64_t first_bad(bp_dtype dt, const unsigned char *at, int64_t n, int32_t m,
                         const int64_t *dims)
{
    if (dt == BP_I32)
        FIRST_BAD(int32_t);
    else
        FIRST_BAD(int64_t);
    return -1;
}

bp_status bp__check_index_bounds(const char *fn, const bp_tensor *indices, int32_t m,
                                 const int64_t *dims, const char *const *what)
{
    bp_backend *be = bp__backend_of(indices);
    if (indices->numel == 0 || (!be->host_addressable && BP__HAS(be->vt, deferred_error)))
        return BP_OK;
    void *host = NULL;
    const unsigned char *at;
    if (be->host_addressable) {
        at = (const unsigned char *)be->vt->host_ptr(be->dev, indices->storage->buffer) +
             indices->offset;
    } else {
        host = malloc(indices->nbytes);
        if (host == NULL)
            return bp__error(BP_ERR_OUT_OF_MEMORY,
                             "%s: cannot allocate %zu bytes of host memory to check the indices",
                             fn, indices->nbytes);
        bp_status st = bp__device_read(be, fn, indices->storage->buffer, (size_t)indices->offset,
                                       host, indices->nbytes);
        if (st != BP_OK) {
            free(host);
            return st;
        }
        at = host;
    }
    int64_t i = first_bad(indices->dtype, at, indices->numel, m, dims);
    bp_status st = BP_OK;
    if (i >= 0) {
        int64_t v = bp_elem_load_i64(indices->dtype, at + (size_t)i * bp_dtype_size(indices->dtype));
        int64_t dim = dims[i % m];
        st = bp__error(BP_ERR_INDEX,
                       "%s: indices[%lld] (flat position) is %lld, out of range for %s of "
                       "extent %lld; indices must lie in [%lld, %lld)",
                       fn, (long long)i, (long long)v, what[i % m], (long long)dim,
                       (long long)-dim, (long long)dim);
    }
    free(host);
    return st;
}

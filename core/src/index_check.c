/* Checking index tensors (gather, gather_elements, gather_nd, scatter_*,
 * the losses' labels) before a backend sees them. Host-addressable backends
 * are read in place (they run synchronously anyway). A device backend with
 * deferred_error checks the indices itself, on the device, and reports a bad
 * one at the next wait: reading them here would synchronise it on every
 * call. Any other device backend is read (and so waited for), which the
 * stats count and the debug log names. */
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

/* The index values where the core can see them: in place on a host backend,
 * read from any other (*host, to free). NULL with *st BP_OK when there is
 * nothing to check here (no indices, or a deferring device). */
static const unsigned char *index_bytes(const char *fn, const bp_tensor *indices,
                                        const bp_tensor *data, void **host, bp_status *st)
{
    bp_backend *be = bp__backend_of(indices);
    *host = NULL;
    *st = BP_OK;
    bool recording = be->graph || bp__backend_of(data)->graph;
    be = bp__backend_real(be);
    if (indices->numel == 0 || (!be->host_addressable && BP__HAS(be->vt, deferred_error)))
        return NULL;
    if (recording) {
        /* symbolic indices have no values yet, and captured ones are read
         * only when the plan runs: checking them now would prove nothing */
        *st = bp__error(BP_ERR_UNSUPPORTED_OP,
                        "%s: the core checks the index values on the host before this op runs "
                        "on backend %s, which it cannot do while a graph records the op (the "
                        "indices are symbolic, or captured and read only when the plan runs); "
                        "run this op eagerly, outside the graph, for now",
                        fn, be->name);
        return NULL;
    }
    if (be->host_addressable)
        return (const unsigned char *)be->vt->host_ptr(be->dev, indices->storage->buffer) +
               indices->offset;
    *host = malloc(indices->nbytes);
    if (*host == NULL) {
        *st = bp__error(BP_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes of host memory to "
                        "check the indices", fn, indices->nbytes);
        return NULL;
    }
    *st = bp__device_read(be, fn, indices->storage->buffer, (size_t)indices->offset, *host,
                          indices->nbytes);
    if (*st != BP_OK) {
        free(*host);
        *host = NULL;
        return NULL;
    }
    return *host;
}

bp_status bp__check_index_bounds(const char *fn, const bp_tensor *indices, const bp_tensor *data,
                                 int32_t m, const int64_t *dims, const char *const *what)
{
    void *host;
    bp_status st;
    const unsigned char *at = index_bytes(fn, indices, data, &host, &st);
    if (!at)
        return st;
    int64_t i = first_bad(indices->dtype, at, indices->numel, m, dims);
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

bp_status bp__check_class_labels(const char *fn, const bp_tensor *labels, const bp_tensor *data,
                                 int64_t classes, const int64_t *ignore_index)
{
    void *host;
    bp_status st;
    const unsigned char *at = index_bytes(fn, labels, data, &host, &st);
    if (!at)
        return st;
    size_t esize = bp_dtype_size(labels->dtype);
    for (int64_t i = 0; i < labels->numel && st == BP_OK; i++) {
        int64_t v = bp_elem_load_i64(labels->dtype, at + (size_t)i * esize);
        if ((v < 0 || v >= classes) && !(ignore_index && v == *ignore_index))
            st = bp__error(BP_ERR_INDEX,
                           "%s: label %lld (flat position %lld) is not a class: labels must "
                           "lie in [0, %lld)%s",
                           fn, (long long)v, (long long)i, (long long)classes,
                           ignore_index ? " or equal ignore_index" : "");
    }
    free(host);
    return st;
}

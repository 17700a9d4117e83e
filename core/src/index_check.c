/* Checking index tensors (gather, gather_elements, gather_nd, scatter_*,
 * the losses' labels) before a backend sees them. Host-addressable backends
 * are read in place (they run synchronously anyway). A device backend with
 * deferred_error checks the indices itself, on the device, and reports a bad
 * one at the next wait: reading them here would synchronise it on every
 * call. Any other device backend is read (and so waited for), which the
 * stats count and the debug log names.
 *
 * An op describes its check as a rule (bp__index_rule). Eagerly the rule is
 * applied at once. While a graph records the op the values do not exist
 * yet (symbolic indices), or may change before the plan runs (captured
 * ones): the node carries the rule instead, and bp_graph_run applies it
 * with the same code just before the node runs, to the values that the
 * inputs, the captured tensors and the earlier nodes hold by then. */
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

/* Whether the core checks index values on the host before an op runs on
 * be, a device backend: not when be checks them on the device. */
static bool checked_on_host(const bp_backend *be)
{
    return be->host_addressable || !BP__HAS(be->vt, deferred_error);
}

/* rule against the n values of dtype dt at `at`: BP_ERR_INDEX naming the
 * first bad one, the message starting with fn and ending with note. */
static bp_status check_values(const char *fn, const bp__index_rule *r, bp_dtype dt,
                              const unsigned char *at, int64_t n, const char *note)
{
    size_t esize = bp_dtype_size(dt);
    if (r->kind == BP__INDEX_BOUNDS) {
        int64_t i = first_bad(dt, at, n, r->m, r->dims);
        if (i < 0)
            return BP_OK;
        int64_t v = bp_elem_load_i64(dt, at + (size_t)i * esize);
        int64_t dim = r->dims[i % r->m];
        return bp__error(BP_ERR_INDEX,
                         "%s: indices[%lld] (flat position) is %lld, out of range for axis %d "
                         "of extent %lld; indices must lie in [%lld, %lld)%s",
                         fn, (long long)i, (long long)v, (int)(r->first_axis + i % r->m),
                         (long long)dim, (long long)-dim, (long long)dim, note);
    }
    int64_t classes = r->dims[0];
    for (int64_t i = 0; i < n; i++) {
        int64_t v = bp_elem_load_i64(dt, at + (size_t)i * esize);
        if ((v < 0 || v >= classes) && !(r->has_ignore && v == r->ignore_index))
            return bp__error(BP_ERR_INDEX,
                             "%s: label %lld (flat position %lld) is not a class: labels must "
                             "lie in [0, %lld)%s%s",
                             fn, (long long)v, (long long)i, (long long)classes,
                             r->has_ignore ? " or equal ignore_index" : "", note);
    }
    return BP_OK;
}

/* rule against the n values of dtype dt at byte offset of buffer on be:
 * read in place on a host backend, else read into host memory. */
static bp_status check_at(const char *fn, const bp__index_rule *r, bp_backend *be, void *buffer,
                          int64_t offset, bp_dtype dt, int64_t n, const char *note)
{
    size_t nbytes = (size_t)n * bp_dtype_size(dt);
    if (be->host_addressable)
        return check_values(fn, r, dt,
                            (const unsigned char *)be->vt->host_ptr(be->dev, buffer) + offset, n,
                            note);
    unsigned char *host = malloc(nbytes);
    if (host == NULL)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes of host memory to "
                         "check the indices", fn, nbytes);
    bp_status st = bp__device_read(be, fn, buffer, (size_t)offset, host, nbytes);
    if (st == BP_OK)
        st = check_values(fn, r, dt, host, n, note);
    free(host);
    return st;
}

/* r (its input set) applied now to indices; or, when op_be (the backend
 * the op runs on, bp__backend_of_all over all its operands) is a graph's,
 * kept for the node: whichever operand is symbolic (the indices, x, a
 * scatter's updates, a loss's weights), concrete indices are captured by
 * reference and may hold other values when the plan runs. r->input is -1
 * afterwards unless kept. */
static bp_status check_or_keep(const char *fn, const bp_tensor *indices, const bp_backend *op_be,
                               bp__index_rule *r)
{
    bool recording = op_be->graph != NULL;
    bp_backend *be = bp__backend_real(bp__backend_of(indices));
    if (indices->numel == 0 || !checked_on_host(be)) {
        r->input = -1;
        return BP_OK;
    }
    if (recording)
        return BP_OK; /* bp_graph_run checks the values the node reads */
    r->input = -1;
    return check_at(fn, r, be, indices->storage->buffer, indices->offset, indices->dtype,
                    indices->numel, "");
}

bp_status bp__check_index_bounds(const char *fn, const bp_tensor *indices,
                                 const bp_backend *op_be, int32_t k, int32_t m,
                                 int32_t first_axis, const int64_t *dims,
                                 bp__index_rule *rule)
{
    memset(rule, 0, sizeof *rule);
    rule->input = k;
    rule->kind = BP__INDEX_BOUNDS;
    rule->m = m;
    rule->first_axis = first_axis;
    memcpy(rule->dims, dims, (size_t)m * sizeof *dims);
    return check_or_keep(fn, indices, op_be, rule);
}

bp_status bp__check_class_labels(const char *fn, const bp_tensor *labels,
                                 const bp_backend *op_be, int32_t k, int64_t classes,
                                 const int64_t *ignore_index,
                                 bp__index_rule *rule)
{
    memset(rule, 0, sizeof *rule);
    rule->input = k;
    rule->kind = BP__INDEX_LABELS;
    rule->m = 1;
    rule->dims[0] = classes;
    rule->has_ignore = ignore_index != NULL;
    rule->ignore_index = ignore_index ? *ignore_index : 0;
    return check_or_keep(fn, labels, op_be, rule);
}

bp_status bp__check_index_rule(const char *fn, const bp__index_rule *rule, bp_backend *be,
                               const bp_view *v, const char *note)
{
    int64_t n = 1;
    for (int32_t d = 0; d < v->rank; d++)
        n *= v->shape[d];
    if (n == 0 || !checked_on_host(be))
        return BP_OK;
    return check_at(fn, rule, be, v->buffer, v->offset, v->dtype, n, note);
}

/* Movement ops: every output element is one input element (or padding), so
 * every result is exact. */
#include <math.h>
#include <stdint.h>

#include "oracle.h"
#include "independent.h"

/* dst[k] = src[j]; the two share a dtype. */
static void copy_elem(cf_array *dst, int64_t k, const cf_array *src, int64_t j)
{
    if (dst->f)
        dst->f[k] = src->f[j];
    else
        dst->i[k] = src->i[j];
}

bool cf_oracle_transpose(const cf_array *x, const int32_t *perm, cf_array *want)
{
    int32_t p[BP_MAX_RANK];
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK], src[BP_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) {
        p[d] = perm ? perm[d] : x->rank - 1 - d;
        shape[d] = x->shape[p[d]];
    }
    if (!cf_array_init(want, x->dt, x->rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        cf_unravel(x->rank, shape, k, idx);
        for (int32_t d = 0; d < x->rank; d++)
            src[p[d]] = idx[d];
        copy_elem(want, k, x, cf_ravel(x->rank, x->shape, src));
    }
    return true;
}

/* A negative bound counts from the end; then it clamps into [lo, hi], hi
 * last, so that an empty axis stays empty. */
static int64_t clamp(int64_t i, int64_t dim, int64_t lo, int64_t hi)
{
    if (i < 0)
        i += dim;
    if (i < lo)
        i = lo;
    if (i > hi)
        i = hi;
    return i;
}

/* ONNX Slice on one axis (ops.h): starts clamp into [0, dim] going forward
 * and [0, dim - 1] going backward, stops into [0, dim] and [-1, dim - 1]; no
 * stop runs to the end in the step's direction. The count of elements;
 * *first the index of the first. */
static int64_t slice_axis(int64_t dim, int64_t start, const int64_t *stop, int64_t step,
                          int64_t *first)
{
    bool back = step < 0;
    int64_t b = clamp(start, dim, 0, back ? dim - 1 : dim);
    int64_t e = !stop ? (back ? -1 : dim) : clamp(*stop, dim, back ? -1 : 0, back ? dim - 1 : dim);
    *first = b;
    if (!back)
        return e > b ? (e - b + step - 1) / step : 0;
    return b > e ? (b - e + (-step) - 1) / (-step) : 0;
}

bool cf_oracle_slice(const cf_array *x, const int64_t *starts, const int64_t *stops,
                     const int64_t *steps, cf_array *want)
{
    int64_t shape[BP_MAX_RANK], first[BP_MAX_RANK], step[BP_MAX_RANK], idx[BP_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) {
        step[d] = steps ? steps[d] : 1;
        shape[d] = slice_axis(x->shape[d], starts[d], stops ? &stops[d] : NULL, step[d], &first[d]);
    }
    if (!cf_array_init(want, x->dt, x->rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        cf_unravel(x->rank, shape, k, idx);
        for (int32_t d = 0; d < x->rank; d++)
            idx[d] = first[d] + idx[d] * step[d];
        copy_elem(want, k, x, cf_ravel(x->rank, x->shape, idx));
    }
    return true;
}

bool cf_oracle_concat(int32_t n, const cf_array *const *xs, int32_t axis, cf_array *want)
{
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK];
    if (axis < 0)
        axis += xs[0]->rank;
    for (int32_t d = 0; d < xs[0]->rank; d++)
        shape[d] = xs[0]->shape[d];
    for (int32_t k = 1; k < n; k++)
        shape[axis] += xs[k]->shape[axis];
    if (!cf_array_init(want, xs[0]->dt, xs[0]->rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        cf_unravel(xs[0]->rank, shape, k, idx);
        int32_t src = 0;
        while (idx[axis] >= xs[src]->shape[axis]) {
            idx[axis] -= xs[src]->shape[axis];
            src++;
        }
        copy_elem(want, k, xs[src], cf_ravel(xs[src]->rank, xs[src]->shape, idx));
    }
    return true;
}

bool cf_oracle_broadcast_to(const cf_array *x, int32_t rank, const int64_t *shape,
                            cf_array *want)
{
    int64_t idx[BP_MAX_RANK];
    if (!cf_array_init(want, x->dt, rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        cf_unravel(rank, shape, k, idx);
        copy_elem(want, k, x, cf_bcast_index(rank, idx, x->rank, x->shape));
    }
    return true;
}

bool cf_oracle_pad(const cf_array *x, const int64_t *before, const int64_t *after, double value,
                   cf_array *want)
{
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        shape[d] = before[d] + x->shape[d] + after[d];
    if (!cf_array_init(want, x->dt, x->rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        cf_unravel(x->rank, shape, k, idx);
        bool inside = true;
        for (int32_t d = 0; d < x->rank; d++) {
            idx[d] -= before[d];
            inside = inside && idx[d] >= 0 && idx[d] < x->shape[d];
        }
        if (inside)
            copy_elem(want, k, x, cf_ravel(x->rank, x->shape, idx));
        else /* the value as the dtype stores it, by the cast rules */
            cf_set_f(want, k, want->f ? cf_round(x->dt, value) : value);
    }
    return true;
}

/* ONNX Gather: the result's axes are x's before axis, the indices' axes, then
 * x's after axis; a negative index counts from the end. */
bool cf_oracle_gather(const cf_array *x, const cf_array *indices, int32_t axis, cf_array *want)
{
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK], src[BP_MAX_RANK];
    int32_t rank = 0, ir = indices->rank;
    if (axis < 0)
        axis += x->rank;
    for (int32_t d = 0; d < axis; d++)
        shape[rank++] = x->shape[d];
    for (int32_t d = 0; d < ir; d++)
        shape[rank++] = indices->shape[d];
    for (int32_t d = axis + 1; d < x->rank; d++)
        shape[rank++] = x->shape[d];
    if (!cf_array_init(want, x->dt, rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        cf_unravel(rank, shape, k, idx);
        int64_t j = indices->i[cf_ravel(ir, indices->shape, idx + axis)];
        for (int32_t d = 0; d < axis; d++)
            src[d] = idx[d];
        src[axis] = j < 0 ? j + x->shape[axis] : j;
        for (int32_t d = axis + 1; d < x->rank; d++)
            src[d] = idx[d - 1 + ir];
        copy_elem(want, k, x, cf_ravel(x->rank, x->shape, src));
    }
    return true;
}

/* Row-major indexing and NumPy broadcasting, shared by every array oracle. */
#include "oracle.h"
#include "independent.h"
#include <math.h>

void cf_unravel(int32_t rank, const int64_t *shape, int64_t flat, int64_t *idx)
{
    for (int32_t k = rank - 1; k >= 0; k--) {
        idx[k] = shape[k] ? flat % shape[k] : 0;
        flat = shape[k] ? flat / shape[k] : 0;
    }
}

int64_t cf_ravel(int32_t rank, const int64_t *shape, const int64_t *idx)
{
    int64_t f = 0;
    for (int32_t k = 0; k < rank; k++)
        f = f * shape[k] + idx[k];
    return f;
}

int64_t cf_bcast_index(int32_t out_rank, const int64_t *idx, int32_t in_rank,
                       const int64_t *in_shape)
{
    int64_t f = 0;
    for (int32_t k = 0; k < in_rank; k++) {
        int64_t i = idx[out_rank - in_rank + k];
        f = f * in_shape[k] + (in_shape[k] == 1 ? 0 : i);
    }
    return f;
}

int32_t cf_broadcast_shape(int n, const cf_array *const *in, int64_t *shape)
{
    int32_t rank = 0;
    for (int k = 0; k < n; k++)
        if (in[k]->rank > rank)
            rank = in[k]->rank;
    for (int32_t d = 0; d < rank; d++) {
        int64_t s = 1;
        for (int k = 0; k < n; k++) {
            int32_t j = d - (rank - in[k]->rank);
            if (j >= 0 && in[k]->shape[j] != 1)
                s = in[k]->shape[j];
        }
        shape[d] = s;
    }
    return rank;
}

/* ---- trilu, one_hot, gather_elements, gather_nd ----
 * Indexing ops of ABI 1.4 that move elements: trilu, one_hot,
 * gather_elements and gather_nd. Every result is exact. */

static void copy_elem(cf_array *dst, int64_t k, const cf_array *src, int64_t j)
{
    if (dst->f)
        dst->f[k] = src->f[j];
    else
        dst->i[k] = src->i[j];
}

/* ONNX Trilu on the last two axes: upper keeps column - row >= k, lower
 * column - row <= k; the rest is 0. */
bool cf_oracle_trilu(const cf_array *x, bool upper, int64_t k, cf_array *want)
{
    int64_t idx[BP_MAX_RANK];
    if (!cf_array_init(want, x->dt, x->rank, x->shape))
        return false;
    for (int64_t e = 0; e < x->n; e++) {
        cf_unravel(x->rank, x->shape, e, idx);
        int64_t d = idx[x->rank - 1] - idx[x->rank - 2];
        if (upper ? d >= k : d <= k)
            copy_elem(want, e, x, e);
    }
    return true;
}

/* ONNX OneHot: the depth axis inserted at axis; values (off, on). An index
 * (floats truncated toward zero) in [-depth, depth) counts from the end when
 * negative; any other (NaN included) gives off everywhere. */
bool cf_oracle_one_hot(const cf_array *indices, int64_t depth, int32_t axis,
                       const cf_array *values, cf_array *want)
{
    int32_t rank = indices->rank + 1;
    if (axis < 0)
        axis += rank;
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK], src[BP_MAX_RANK];
    for (int32_t d = 0, j = 0; d < rank; d++)
        shape[d] = d == axis ? depth : indices->shape[j++];
    if (!cf_array_init(want, values->dt, rank, shape))
        return false;
    for (int64_t e = 0; e < want->n; e++) {
        cf_unravel(rank, shape, e, idx);
        for (int32_t d = 0, j = 0; d < rank; d++)
            if (d != axis)
                src[j++] = idx[d];
        int64_t at = cf_ravel(indices->rank, indices->shape, src);
        bool hot;
        if (indices->f) {
            double v = trunc(indices->f[at]);
            hot = v >= -(double)depth && v < (double)depth &&
                  (v < 0 ? v + (double)depth : v) == (double)idx[axis];
        } else {
            int64_t v = indices->i[at];
            hot = v >= -depth && v < depth && (v < 0 ? v + depth : v) == idx[axis];
        }
        copy_elem(want, e, values, hot ? 1 : 0);
    }
    return true;
}

/* The index at position j of indices, made non-negative for extent dim. */
static int64_t index_at(const cf_array *indices, int64_t j, int64_t dim)
{
    int64_t v = indices->i[j];
    return v < 0 ? v + dim : v;
}

bool cf_oracle_gather_elements(const cf_array *x, const cf_array *indices, int32_t axis,
                               cf_array *want)
{
    int64_t idx[BP_MAX_RANK];
    if (axis < 0)
        axis += x->rank;
    if (!cf_array_init(want, x->dt, indices->rank, indices->shape))
        return false;
    for (int64_t e = 0; e < want->n; e++) {
        cf_unravel(indices->rank, indices->shape, e, idx);
        idx[axis] = index_at(indices, e, x->shape[axis]);
        copy_elem(want, e, x, cf_ravel(x->rank, x->shape, idx));
    }
    return true;
}

/* ONNX GatherND: out = indices' shape without its last axis, then x's axes
 * after batch_dims + m; each index tuple (m components) picks x's axes
 * batch_dims .. batch_dims + m - 1 within its batch. */
bool cf_oracle_gather_nd(const cf_array *x, const cf_array *indices, int32_t batch_dims,
                         cf_array *want)
{
    int32_t q = indices->rank - 1, b = batch_dims;
    int64_t m = indices->shape[q];
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK], src[BP_MAX_RANK];
    int32_t rank = 0;
    for (int32_t d = 0; d < q; d++)
        shape[rank++] = indices->shape[d];
    for (int32_t d = b + (int32_t)m; d < x->rank; d++)
        shape[rank++] = x->shape[d];
    if (!cf_array_init(want, x->dt, rank, shape))
        return false;
    for (int64_t e = 0; e < want->n; e++) {
        cf_unravel(rank, shape, e, idx);
        for (int32_t d = 0; d < b; d++)
            src[d] = idx[d];
        int64_t tuple = cf_ravel(q, indices->shape, idx) * m;
        for (int32_t j = 0; j < m; j++)
            src[b + j] = index_at(indices, tuple + j, x->shape[b + j]);
        for (int32_t d = b + (int32_t)m; d < x->rank; d++)
            src[d] = idx[q + d - b - m];
        copy_elem(want, e, x, cf_ravel(x->rank, x->shape, src));
    }
    return true;
}

/* backplane core: indexing (the GATHER, INDEX, SCATTER, ONE_HOT and TRILU
 * kinds): gather, gathers and scatters by index tensors (ONNX
 * GatherElements, GatherND, ScatterElements, ScatterND), one_hot and trilu.
 * Shapes and every index are checked here (index_check.c); the plugin only
 * moves elements. */

#include "internal.h"

static bp_status index_dtype(const char *fn, const bp_tensor *indices)
{
    if (indices->dtype != BP_I32 && indices->dtype != BP_I64)
        return bp__error(BP_ERR_DTYPE, "%s: indices is %s but must be i32 or i64; convert it with "
                         "bp_cast first", fn, bp_dtype_name(indices->dtype));
    return BP_OK;
}

/* The op on dense views of every input (NULLs skipped) into a fresh output;
 * rule: how its indices were checked (index_check.c), or NULL. */
static bp_status dense_call(const char *fn, bp_op op, const bp_op_params *p, int n,
                            const bp_tensor *const *in, bp_dtype dt, int32_t rank,
                            const int64_t *shape, const bp__index_rule *rule, bp_tensor **out)
{
    bp_backend *be = bp__backend_of_all((size_t)n, in);
    BP__TRY(bp__op_require(be, op, in[0]->dtype));
    bp_view v[4], vo;
    const bp_view *pv[4];
    for (int k = 0; k < n; k++) {
        bp__view_dense(in[k], &v[k]);
        pv[k] = &v[k];
    }
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, dt, rank, shape, &res));
    bp__view_dense(res, &vo);
    return bp__deliver(res, bp__op_run_checked(be, op, p, pv, (const bp_view *[]){&vo}, rule),
                       out);
}

bp_status bp_trilu(const bp_tensor *x, bool upper, int64_t k, bp_tensor **out)
{
    static const char fn[] = "bp_trilu";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_TRILU, (const bp_tensor *const[]){x}, &be));
    if (x->rank < 2)
        return bp__error(BP_ERR_SHAPE, "%s: x has rank %d; trilu works on the last two axes of "
                         "a tensor of rank >= 2", fn, (int)x->rank);
    bp_op_params p = bp__params();
    p.i[0] = upper;
    p.i[1] = k;
    return dense_call(fn, BP_OP_TRILU, &p, 1, (const bp_tensor *const[]){x}, x->dtype, x->rank,
                      x->shape, NULL, out);
}

bp_status bp_one_hot(const bp_tensor *indices, int64_t depth, int32_t axis,
                     const bp_tensor *values, bp_tensor **out)
{
    static const char fn[] = "bp_one_hot";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_ONE_HOT, (const bp_tensor *const[]){indices, values}, &be));
    if (values->numel != 2 || values->rank != 1)
        return bp__error(BP_ERR_SHAPE, "%s: values must hold two elements (off, on) in a 1-D "
                         "tensor; it has rank %d and %lld elements", fn, (int)values->rank,
                         (long long)values->numel);
    if (depth < 1)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: depth is %lld; it must be >= 1", fn,
                         (long long)depth);
    int32_t rank = indices->rank + 1, ax = 0;
    if (rank > BP_MAX_RANK)
        return bp__error(BP_ERR_SHAPE, "%s: the result would have rank %d, above %d", fn,
                         (int)rank, BP_MAX_RANK);
    BP__TRY(bp__normalize_axis(fn, axis, rank, &ax));
    int64_t shape[BP_MAX_RANK];
    for (int32_t k = 0, j = 0; k < rank; k++)
        shape[k] = k == ax ? depth : indices->shape[j++];
    BP__TRY(bp__op_require(be, BP_OP_ONE_HOT, indices->dtype));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, values->dtype, rank, shape, &res));
    bp_view vi, vv, vo;
    bp__view_dense(indices, &vi);
    bp__view_dense(values, &vv);
    bp__view_dense(res, &vo);
    int32_t perm[BP_MAX_RANK];
    bp__axis_last_perm(rank, ax, perm); /* the depth axis last */
    bp__view_permute(&vo, perm);
    bp_op_params p = bp__params();
    p.i[0] = depth;
    return bp__deliver(res, bp__op_run(be, BP_OP_ONE_HOT, &p, (const bp_view *[]){&vi, &vv},
                                       (const bp_view *[]){&vo}), out);
}

/* indices of x's rank whose extents fit x's except along ax (scatter: and
 * updates of indices' shape). */
static bp_status elements_shapes(const char *fn, const bp_tensor *x, const bp_tensor *indices,
                                 const bp_tensor *updates, int32_t ax)
{
    char sx[BP__SHAPE_STR_CAP], si[BP__SHAPE_STR_CAP];
    bool ok = indices->rank == x->rank;
    for (int32_t k = 0; ok && k < x->rank; k++)
        ok = k == ax || indices->shape[k] <= x->shape[k];
    if (!ok)
        return bp__error(BP_ERR_SHAPE, "%s: indices %s must have x's rank and extents no larger "
                         "than x %s on every axis but %d", fn,
                         BP__SHAPE_STR(si, indices->rank, indices->shape),
                         BP__SHAPE_STR(sx, x->rank, x->shape), (int)ax);
    ok = !updates || updates->rank == indices->rank;
    for (int32_t k = 0; ok && updates && k < indices->rank; k++)
        ok = updates->shape[k] == indices->shape[k];
    if (!ok)
        return bp__error(BP_ERR_SHAPE, "%s: updates %s must have the shape of indices %s", fn,
                         BP__SHAPE_STR(sx, updates->rank, updates->shape),
                         BP__SHAPE_STR(si, indices->rank, indices->shape));
    return BP_OK;
}

/* The operands of a gather or scatter by the op table (updates, where the
 * op has it, required), then: updates shares x's dtype, indices is an index
 * dtype. */
static bp_status operands(const char *fn, bp_op op, const bp_tensor *x, const bp_tensor *indices,
                          const bp_tensor *updates)
{
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, op, (const bp_tensor *const[]){x, indices, updates}, &be));
    if (bp__op_sig_of(op)->n_in == 3 && updates->dtype != x->dtype)
        return bp__error(BP_ERR_DTYPE, "%s: x is %s but updates is %s; they must share a "
                         "dtype", fn, bp_dtype_name(x->dtype), bp_dtype_name(updates->dtype));
    return index_dtype(fn, indices);
}

/* The backend an op on x, indices and updates (NULL for a gather) runs on:
 * a graph's when any of them is symbolic, whichever it is. */
static const bp_backend *op_backend(const bp_tensor *x, const bp_tensor *indices,
                                    const bp_tensor *updates)
{
    return bp__backend_of_all(3, (const bp_tensor *const[]){x, indices, updates});
}

/* indices, the op's input 1, along axis ax of x. */
static bp_status check_axis_bounds(const char *fn, const bp_tensor *x, const bp_tensor *indices,
                                   const bp_tensor *updates, int32_t ax, bp__index_rule *rule)
{
    return bp__check_index_bounds(fn, indices, op_backend(x, indices, updates), 1, 1, ax,
                                  &x->shape[ax], rule);
}

/* ---- gather ---------------------------------------------------------------- */

bp_status bp_gather(const bp_tensor *x, const bp_tensor *indices, int32_t axis, bp_tensor **out)
{
    static const char fn[] = "bp_gather";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(operands(fn, BP_OP_GATHER, x, indices, NULL));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    int32_t rank = x->rank - 1 + indices->rank;
    if (rank > BP_MAX_RANK) {
        char sx[BP__SHAPE_STR_CAP], si[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE,
                         "%s: x %s gathered with indices %s would have rank %d, above the "
                         "maximum %d; reshape the indices first",
                         fn, BP__SHAPE_STR(sx, x->rank, x->shape),
                         BP__SHAPE_STR(si, indices->rank, indices->shape), (int)rank, BP_MAX_RANK);
    }
    int64_t shape[BP_MAX_RANK];
    int32_t r = 0;
    for (int32_t k = 0; k < ax; k++)
        shape[r++] = x->shape[k];
    for (int32_t k = 0; k < indices->rank; k++)
        shape[r++] = indices->shape[k];
    for (int32_t k = ax + 1; k < x->rank; k++)
        shape[r++] = x->shape[k];

    bp_backend *be = bp__backend_of_all(2, (const bp_tensor *const[]){x, indices});
    BP__TRY(bp__op_require(be, BP_OP_GATHER, x->dtype));
    bp__index_rule rule;
    BP__TRY(check_axis_bounds(fn, x, indices, NULL, ax, &rule));

    bp_op_params p = bp__params();
    p.i[0] = ax;
    return dense_call(fn, BP_OP_GATHER, &p, 2, (const bp_tensor *const[]){x, indices}, x->dtype,
                      rank, shape, &rule, out);
}

bp_status bp_gather_elements(const bp_tensor *x, const bp_tensor *indices, int32_t axis,
                             bp_tensor **out)
{
    static const char fn[] = "bp_gather_elements";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(operands(fn, BP_OP_GATHER_ELEMENTS, x, indices, NULL));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    BP__TRY(elements_shapes(fn, x, indices, NULL, ax));
    bp__index_rule rule;
    BP__TRY(check_axis_bounds(fn, x, indices, NULL, ax, &rule));
    bp_op_params p = bp__params();
    p.i[0] = ax;
    return dense_call(fn, BP_OP_GATHER_ELEMENTS, &p, 2, (const bp_tensor *const[]){x, indices},
                      x->dtype, indices->rank, indices->shape, &rule, out);
}

static bp_status check_reduction(const char *fn, const bp_tensor *x, bp_scatter_reduction r)
{
    if ((int)r < (int)BP_SCATTER_NONE || (int)r > (int)BP_SCATTER_MIN)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: reduction %d is not a "
                         "bp_scatter_reduction (NONE, ADD, MUL, MAX, MIN)", fn, (int)r);
    if (r != BP_SCATTER_NONE && x->dtype == BP_BOOL)
        return bp__error(BP_ERR_DTYPE, "%s: a reduction needs a numeric dtype, not bool", fn);
    return BP_OK;
}

bp_status bp_scatter_elements(const bp_tensor *x, const bp_tensor *indices,
                              const bp_tensor *updates, int32_t axis,
                              bp_scatter_reduction reduction, bp_tensor **out)
{
    static const char fn[] = "bp_scatter_elements";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(operands(fn, BP_OP_SCATTER_ELEMENTS, x, indices, updates));
    BP__TRY(check_reduction(fn, x, reduction));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    BP__TRY(elements_shapes(fn, x, indices, updates, ax));
    bp__index_rule rule;
    BP__TRY(check_axis_bounds(fn, x, indices, updates, ax, &rule));
    bp_op_params p = bp__params();
    p.i[0] = ax;
    p.i[1] = reduction;
    return dense_call(fn, BP_OP_SCATTER_ELEMENTS, &p, 3,
                      (const bp_tensor *const[]){x, indices, updates}, x->dtype, x->rank,
                      x->shape, &rule, out);
}

/* ---- the N-D forms ----------------------------------------------------------------- */

/* Index tuples (indices, the op's input 1) of m components addressing x's
 * axes b .. b + m - 1. */
static bp_status nd_bounds(const char *fn, const bp_tensor *x, const bp_tensor *indices,
                           const bp_tensor *updates, int32_t b, int32_t m, bp__index_rule *rule)
{
    return bp__check_index_bounds(fn, indices, op_backend(x, indices, updates), 1, m, b,
                                  &x->shape[b], rule);
}

/* The shared shape rules: indices (..., m) with 1 <= m <= rank - b, and the
 * first b axes equal in x and indices. */
static bp_status nd_shapes(const char *fn, const bp_tensor *x, const bp_tensor *indices,
                           int32_t b, int32_t *m)
{
    char sx[BP__SHAPE_STR_CAP], si[BP__SHAPE_STR_CAP];
    if (indices->rank < 1 || b < 0 || b >= indices->rank || b > x->rank)
        return bp__error(BP_ERR_SHAPE, "%s: batch_dims %d does not fit indices %s and x %s", fn,
                         (int)b, BP__SHAPE_STR(si, indices->rank, indices->shape),
                         BP__SHAPE_STR(sx, x->rank, x->shape));
    int64_t mm = indices->shape[indices->rank - 1];
    if (mm < 1 || mm > x->rank - b)
        return bp__error(BP_ERR_SHAPE, "%s: index tuples of %lld components cannot address x %s "
                         "after %d batch axes", fn, (long long)mm,
                         BP__SHAPE_STR(sx, x->rank, x->shape), (int)b);
    for (int32_t k = 0; k < b; k++)
        if (x->shape[k] != indices->shape[k])
            return bp__error(BP_ERR_SHAPE, "%s: batch axis %d differs: x %s, indices %s", fn,
                             (int)k, BP__SHAPE_STR(sx, x->rank, x->shape),
                             BP__SHAPE_STR(si, indices->rank, indices->shape));
    *m = (int32_t)mm;
    return BP_OK;
}

bp_status bp_gather_nd(const bp_tensor *x, const bp_tensor *indices, int32_t batch_dims,
                       bp_tensor **out)
{
    static const char fn[] = "bp_gather_nd";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(operands(fn, BP_OP_GATHER_ND, x, indices, NULL));
    int32_t m = 0;
    BP__TRY(nd_shapes(fn, x, indices, batch_dims, &m));
    int64_t shape[2 * BP_MAX_RANK];
    int32_t rank = 0;
    for (int32_t k = 0; k < indices->rank - 1; k++)
        shape[rank++] = indices->shape[k];
    for (int32_t k = batch_dims + m; k < x->rank; k++)
        shape[rank++] = x->shape[k];
    if (rank > BP_MAX_RANK)
        return bp__error(BP_ERR_SHAPE, "%s: the result would have rank %d, above %d", fn,
                         (int)rank, BP_MAX_RANK);
    bp__index_rule rule;
    BP__TRY(nd_bounds(fn, x, indices, NULL, batch_dims, m, &rule));
    bp_op_params p = bp__params();
    p.i[0] = batch_dims;
    return dense_call(fn, BP_OP_GATHER_ND, &p, 2, (const bp_tensor *const[]){x, indices},
                      x->dtype, rank, shape, &rule, out);
}

bp_status bp_scatter_nd(const bp_tensor *x, const bp_tensor *indices, const bp_tensor *updates,
                        bp_scatter_reduction reduction, bp_tensor **out)
{
    static const char fn[] = "bp_scatter_nd";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(operands(fn, BP_OP_SCATTER_ND, x, indices, updates));
    BP__TRY(check_reduction(fn, x, reduction));
    int32_t m = 0;
    BP__TRY(nd_shapes(fn, x, indices, 0, &m));
    /* updates: indices' shape without its last axis, then x's axes after m */
    bool ok = updates->rank == indices->rank - 1 + x->rank - m;
    for (int32_t k = 0; ok && k < indices->rank - 1; k++)
        ok = updates->shape[k] == indices->shape[k];
    for (int32_t k = m; ok && k < x->rank; k++)
        ok = updates->shape[indices->rank - 1 + k - m] == x->shape[k];
    if (!ok) {
        char su[BP__SHAPE_STR_CAP], si[BP__SHAPE_STR_CAP], sx[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: updates %s must be indices' shape without its last "
                         "axis %s followed by x's axes after the first %d %s", fn,
                         BP__SHAPE_STR(su, updates->rank, updates->shape),
                         BP__SHAPE_STR(si, indices->rank, indices->shape), (int)m,
                         BP__SHAPE_STR(sx, x->rank, x->shape));
    }
    bp__index_rule rule;
    BP__TRY(nd_bounds(fn, x, indices, updates, 0, m, &rule));
    bp_op_params p = bp__params();
    p.i[1] = reduction;
    return dense_call(fn, BP_OP_SCATTER_ND, &p, 3, (const bp_tensor *const[]){x, indices, updates},
                      x->dtype, x->rank, x->shape, &rule, out);
}

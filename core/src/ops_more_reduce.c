/* backplane core: the reductions, scans and sorts of ABI 1.4. Reductions are
 * planned as bp_reduce plans them (reduced axes last); the ops along one axis
 * (hardmax, cumsum, cumprod, sort, topk) see their axis moved last, in both
 * input and outputs, as softmax does. */
#include <stdio.h>

#include "internal.h"

/* ---- reductions ----------------------------------------------------------------- */

static bp_status reduce_more(bp_op op, const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                             bool keepdims, double correction, bp_tensor **out)
{
    char fn[48];
    bp__op_fn(op, fn, sizeof fn);
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "x", x));
    bp__dtype_class cls = BP__ACCEPT_FLOAT;
    if (op == BP_OP_REDUCE_L1 || op == BP_OP_REDUCE_SUM_SQUARE || op == BP_OP_ARGMAX_LAST ||
        op == BP_OP_ARGMIN_LAST)
        cls = BP__ACCEPT_NUMERIC;
    else if (op == BP_OP_REDUCE_ANY || op == BP_OP_REDUCE_ALL)
        cls = BP__ACCEPT_BOOL;
    BP__TRY(bp__check_dtype(fn, bp_op_name(op), "x", x->dtype, cls));
    if (!(correction >= 0.0))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: correction %g must be >= 0", fn,
                         correction);
    bp__reduce_plan pl;
    BP__TRY(bp__reduce_plan_make(fn, x, n_axes, axes, keepdims, &pl));
    bool arg = op == BP_OP_ARGMAX_LAST || op == BP_OP_ARGMIN_LAST;
    if (arg && pl.reduce_count == 0 && pl.kept_count > 0)
        return bp__error(BP_ERR_SHAPE, "%s: zero-size reduction has no identity; reduce over "
                         "non-empty axes", fn);
    bp_backend *be = bp__backend_of(x);
    BP__TRY(bp__require_op(be, op, x->dtype, BP__HAS(be->vt, op)));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, arg ? BP_I64 : x->dtype, pl.out_rank, pl.out_shape, &res));
    bp_view vx, vo;
    bp__reduce_plan_views(&pl, x, res, &vx, &vo);
    bp_op_params p = bp__params();
    p.i[0] = pl.n_reduce;
    p.f[0] = correction;
    return bp__deliver(res, bp__op_entry(be, op, &p, 1, (const bp_view *[]){&vx}, 1,
                                         (const bp_view *[]){&vo}), out);
}

#define BP__REDUCE_MORE(name, NAME)                                                         \
    bp_status bp_##name(const bp_tensor *x, int32_t n_axes, const int32_t *axes,           \
                        bool keepdims, bp_tensor **out)                                    \
    {                                                                                       \
        return reduce_more(BP_OP_##NAME, x, n_axes, axes, keepdims, 0.0, out);              \
    }
BP__REDUCE_MORE(reduce_l1, REDUCE_L1)
BP__REDUCE_MORE(reduce_l2, REDUCE_L2)
BP__REDUCE_MORE(reduce_sum_square, REDUCE_SUM_SQUARE)
BP__REDUCE_MORE(reduce_log_sum, REDUCE_LOG_SUM)
BP__REDUCE_MORE(reduce_any, REDUCE_ANY)
BP__REDUCE_MORE(reduce_all, REDUCE_ALL)
BP__REDUCE_MORE(argmax_last, ARGMAX_LAST)
BP__REDUCE_MORE(argmin_last, ARGMIN_LAST)

bp_status bp_reduce_var(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                        double correction, bp_tensor **out)
{
    return reduce_more(BP_OP_REDUCE_VAR, x, n_axes, axes, keepdims, correction, out);
}

bp_status bp_reduce_std(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                        double correction, bp_tensor **out)
{
    return reduce_more(BP_OP_REDUCE_STD, x, n_axes, axes, keepdims, correction, out);
}

/* ---- along one axis ------------------------------------------------------------------ */

/* x and each output (same rank, shapes given) as views with axis last. */
static bp_status along_axis(bp_op op, const char *fn, const bp_tensor *x, int32_t ax,
                            const bp_op_params *p, int n_out, bp_tensor **res)
{
    int32_t perm[BP_MAX_RANK];
    bp__axis_last_perm(x->rank, ax, perm);
    bp_view vx, vo[2];
    bp__view_dense(x, &vx);
    bp__view_permute(&vx, perm);
    for (int k = 0; k < n_out; k++) {
        bp__view_dense(res[k], &vo[k]);
        bp__view_permute(&vo[k], perm);
    }
    bp_backend *be = bp__backend_of(x);
    (void)fn;
    return bp__op_entry(be, op, p, 1, (const bp_view *[]){&vx}, n_out,
                        (const bp_view *[]){&vo[0], &vo[1]});
}

static bp_status axis_op(bp_op op, const bp_tensor *x, int32_t axis, bp__dtype_class cls,
                         const bp_op_params *p, bp_tensor **out)
{
    char fn[48];
    bp__op_fn(op, fn, sizeof fn);
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "x", x));
    BP__TRY(bp__check_dtype(fn, bp_op_name(op), "x", x->dtype, cls));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    bp_backend *be = bp__backend_of(x);
    BP__TRY(bp__require_op(be, op, x->dtype, BP__HAS(be->vt, op)));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, x->shape, &res));
    return bp__deliver(res, along_axis(op, fn, x, ax, p, 1, &res), out);
}

bp_status bp_hardmax(const bp_tensor *x, int32_t axis, bp_tensor **out)
{
    bp_op_params p = bp__params();
    return axis_op(BP_OP_HARDMAX, x, axis, BP__ACCEPT_FLOAT, &p, out);
}

bp_status bp_cumsum(const bp_tensor *x, int32_t axis, bool exclusive, bool reverse,
                    bp_tensor **out)
{
    bp_op_params p = bp__params();
    p.i[0] = exclusive;
    p.i[1] = reverse;
    return axis_op(BP_OP_CUMSUM, x, axis, BP__ACCEPT_NUMERIC, &p, out);
}

bp_status bp_cumprod(const bp_tensor *x, int32_t axis, bool exclusive, bool reverse,
                     bp_tensor **out)
{
    bp_op_params p = bp__params();
    p.i[0] = exclusive;
    p.i[1] = reverse;
    return axis_op(BP_OP_CUMPROD, x, axis, BP__ACCEPT_NUMERIC, &p, out);
}

/* ---- sorting ------------------------------------------------------------------------- */

/* values (x's dtype) and indices (i64) of x's shape with the axis' extent
 * replaced by k; either may be unwanted (NULL out). */
static bp_status sorted_outputs(bp_op op, const char *fn, const bp_tensor *x, int32_t ax,
                                int64_t k, const bp_op_params *p, bp_tensor **values,
                                bp_tensor **indices)
{
    bp_backend *be = bp__backend_of(x);
    BP__TRY(bp__require_op(be, op, x->dtype, BP__HAS(be->vt, op)));
    int64_t shape[BP_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        shape[d] = d == ax ? k : x->shape[d];
    /* the entry always writes both; an unwanted one is released after */
    bp_tensor *res[2] = {NULL, NULL};
    bp_status st = bp__tensor_new(fn, be, x->dtype, x->rank, shape, &res[0]);
    if (st == BP_OK)
        st = bp__tensor_new(fn, be, BP_I64, x->rank, shape, &res[1]);
    if (st == BP_OK)
        st = along_axis(op, fn, x, ax, p, 2, res);
    if (st != BP_OK) {
        bp_tensor_release(res[0]);
        bp_tensor_release(res[1]);
        return st;
    }
    if (values)
        *values = res[0];
    else
        bp_tensor_release(res[0]);
    if (indices)
        *indices = res[1];
    else
        bp_tensor_release(res[1]);
    return BP_OK;
}

static bp_status sort_checks(const char *fn, const bp_tensor *x, int32_t axis, int32_t *ax)
{
    BP__TRY(bp__check_input(fn, "x", x));
    BP__TRY(bp__check_dtype(fn, fn + 3, "x", x->dtype, BP__ACCEPT_NUMERIC));
    return bp__normalize_axis(fn, axis, x->rank, ax);
}

bp_status bp_topk(const bp_tensor *x, int64_t k, int32_t axis, bool largest, bool sorted,
                  bp_tensor **values, bp_tensor **indices)
{
    static const char fn[] = "bp_topk";
    if (values) /* cleared first: a failure leaves no garbage in either */
        *values = NULL;
    if (indices)
        *indices = NULL;
    if (!values || !indices)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: values and indices must both be given",
                         fn);
    int32_t ax = 0;
    BP__TRY(sort_checks(fn, x, axis, &ax));
    if (k < 0 || k > x->shape[ax])
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: k is %lld but axis %d has %lld elements "
                         "(0 <= k <= extent)", fn, (long long)k, (int)ax,
                         (long long)x->shape[ax]);
    bp_op_params p = bp__params();
    p.i[0] = largest;
    p.i[1] = sorted;
    return sorted_outputs(BP_OP_TOPK, fn, x, ax, k, &p, values, indices);
}

bp_status bp_sort(const bp_tensor *x, int32_t axis, bool descending, bp_tensor **values,
                  bp_tensor **indices)
{
    static const char fn[] = "bp_sort";
    if (!values && !indices)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: values and indices are both NULL", fn);
    if (values)
        *values = NULL;
    if (indices)
        *indices = NULL;
    int32_t ax = 0;
    BP__TRY(sort_checks(fn, x, axis, &ax));
    bp_op_params p = bp__params();
    p.i[0] = descending;
    return sorted_outputs(BP_OP_SORT, fn, x, ax, x->shape[ax], &p, values, indices);
}

bp_status bp_argsort(const bp_tensor *x, int32_t axis, bool descending, bp_tensor **indices)
{
    if (!indices)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_argsort: indices is NULL");
    return bp_sort(x, axis, descending, NULL, indices);
}

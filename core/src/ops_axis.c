/* backplane core: the ops along one axis (SOFTMAX, HARDMAX, SCAN and SORT
 * kinds): softmax, log_softmax, hardmax, cumsum, cumprod, sort, topk. The
 * core moves the axis last in every view; the plugin works along x's last
 * axis. */
#include <stdio.h>

#include "internal.h"

/* x and each output (same rank) as views with axis last, and the op run. */
static bp_status along_axis(bp_backend *be, bp_op op, const bp_tensor *x, int32_t ax,
                            const bp_op_params *p, int n_out, bp_tensor *const *res)
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
    return bp__op_run(be, op, p, (const bp_view *[]){&vx}, (const bp_view *[]){&vo[0], &vo[1]});
}

static bp_status axis_op(bp_op op, const bp_tensor *x, int32_t axis, const bp_op_params *p,
                         bp_tensor **out)
{
    const char *fn = bp__op_fn(op);
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, op, (const bp_tensor *const[]){x}, &be));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    BP__TRY(bp__op_require(be, op, x->dtype));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, x->shape, &res));
    return bp__deliver(res, along_axis(be, op, x, ax, p, 1, &res), out);
}

bp_status bp_softmax(const bp_tensor *x, int32_t axis, bp_tensor **out)
{
    bp_op_params p = bp__params();
    return axis_op(BP_OP_SOFTMAX, x, axis, &p, out);
}

bp_status bp_log_softmax(const bp_tensor *x, int32_t axis, bp_tensor **out)
{
    bp_op_params p = bp__params();
    return axis_op(BP_OP_LOG_SOFTMAX, x, axis, &p, out);
}

bp_status bp_hardmax(const bp_tensor *x, int32_t axis, bp_tensor **out)
{
    bp_op_params p = bp__params();
    return axis_op(BP_OP_HARDMAX, x, axis, &p, out);
}

bp_status bp_cumsum(const bp_tensor *x, int32_t axis, bool exclusive, bool reverse,
                    bp_tensor **out)
{
    bp_op_params p = bp__params();
    p.i[0] = exclusive;
    p.i[1] = reverse;
    return axis_op(BP_OP_CUMSUM, x, axis, &p, out);
}

bp_status bp_cumprod(const bp_tensor *x, int32_t axis, bool exclusive, bool reverse,
                     bp_tensor **out)
{
    bp_op_params p = bp__params();
    p.i[0] = exclusive;
    p.i[1] = reverse;
    return axis_op(BP_OP_CUMPROD, x, axis, &p, out);
}

/* ---- sorting ------------------------------------------------------------------------- */

/* values (x's dtype) and indices (i64) of x's shape with the axis' extent
 * replaced by k; either may be unwanted (NULL out). */
static bp_status sorted_outputs(bp_backend *be, bp_op op, const char *fn, const bp_tensor *x,
                                int32_t ax, int64_t k, const bp_op_params *p, bp_tensor **values,
                                bp_tensor **indices)
{
    BP__TRY(bp__op_require(be, op, x->dtype));
    int64_t shape[BP_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        shape[d] = d == ax ? k : x->shape[d];
    /* the entry always writes both; an unwanted one is released after */
    bp_tensor *res[2] = {NULL, NULL};
    bp_status st = bp__tensor_new(fn, be, x->dtype, x->rank, shape, &res[0]);
    if (st == BP_OK)
        st = bp__tensor_new(fn, be, BP_I64, x->rank, shape, &res[1]);
    if (st == BP_OK)
        st = along_axis(be, op, x, ax, p, 2, res);
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
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_TOPK, (const bp_tensor *const[]){x}, &be));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    if (k < 0 || k > x->shape[ax])
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: k is %lld but axis %d has %lld elements "
                         "(0 <= k <= extent)", fn, (long long)k, (int)ax,
                         (long long)x->shape[ax]);
    bp_op_params p = bp__params();
    p.i[0] = largest;
    p.i[1] = sorted;
    return sorted_outputs(be, BP_OP_TOPK, fn, x, ax, k, &p, values, indices);
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
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_SORT, (const bp_tensor *const[]){x}, &be));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    bp_op_params p = bp__params();
    p.i[0] = descending;
    return sorted_outputs(be, BP_OP_SORT, fn, x, ax, x->shape[ax], &p, values, indices);
}

bp_status bp_argsort(const bp_tensor *x, int32_t axis, bool descending, bp_tensor **indices)
{
    if (!indices)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_argsort: indices is NULL");
    return bp_sort(x, axis, descending, NULL, indices);
}

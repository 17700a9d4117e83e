/* backplane core: the classification losses (ONNX NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss). The plugin sees the scores with the class axis
 * moved last, (N, d..., C), so one sample's classes are one row; labels are
 * checked against the class count here, as gather's indices are. */
#include <stdio.h>

#include "internal.h"

/* The operands by the op table, then: labels of an index dtype and x's
 * shape without the class axis, weights (if given) one per class. xn, ln:
 * what the op's row calls x and labels (scores / log_prob, labels /
 * target). */
static bp_status loss_operands(const char *fn, bp_op op, const bp_tensor *x,
                               const bp_tensor *labels, const bp_tensor *weights,
                               bp_loss_reduction reduction)
{
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, op, (const bp_tensor *const[]){x, labels, weights}, &be));
    char xn[32], ln[32];
    const char *names = bp_op_info_of(op)->in;
    bp_op_arg_name(names, 0, xn, sizeof xn);
    bp_op_arg_name(names, 1, ln, sizeof ln);
    if (labels->dtype != BP_I32 && labels->dtype != BP_I64)
        return bp__error(BP_ERR_DTYPE, "%s: %s is %s but must be i32 or i64; convert it "
                         "with bp_cast first", fn, ln, bp_dtype_name(labels->dtype));
    if ((int)reduction < (int)BP_LOSS_NONE || (int)reduction > (int)BP_LOSS_MEAN)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: reduction %d is not a bp_loss_reduction "
                         "(NONE, SUM, MEAN)", fn, (int)reduction);
    char sx[BP__SHAPE_STR_CAP], sl[BP__SHAPE_STR_CAP];
    bool ok = x->rank >= 2 && labels->rank == x->rank - 1 && labels->shape[0] == x->shape[0];
    for (int32_t k = 2; ok && k < x->rank; k++)
        ok = labels->shape[k - 1] == x->shape[k];
    if (!ok)
        return bp__error(BP_ERR_SHAPE, "%s: %s %s must be (N, C) or (N, C, d...) and %s %s "
                         "(N) or (N, d...) to match", fn, xn, BP__SHAPE_STR(sx, x->rank, x->shape), ln,
                         BP__SHAPE_STR(sl, labels->rank, labels->shape));
    if (weights) {
        if (weights->dtype != x->dtype)
            return bp__error(BP_ERR_DTYPE, "%s: x is %s but weights is %s; they must share a "
                             "dtype", fn, bp_dtype_name(x->dtype), bp_dtype_name(weights->dtype));
        if (weights->rank != 1 || weights->shape[0] != x->shape[1])
            return bp__error(BP_ERR_SHAPE, "%s: weights %s must be (%lld,): one per class", fn,
                             BP__SHAPE_STR(sl, weights->rank, weights->shape),
                             (long long)x->shape[1]);
    }
    return BP_OK;
}

static bp_status loss(bp_op op, const bp_tensor *x, const bp_tensor *labels,
                      const bp_tensor *weights, bp_loss_reduction reduction,
                      const int64_t *ignore_index, bp_tensor **out, bp_tensor **log_prob)
{
    const char *fn = bp__op_fn(op);
    BP__TRY(bp__check_outs(fn, out, 1, (bp_tensor **const[]){log_prob}));
    BP__TRY(loss_operands(fn, op, x, labels, weights, reduction));
    bp_backend *be = bp__backend_of_all(3, (const bp_tensor *const[]){x, labels, weights});
    bp__index_rule rule;
    BP__TRY(bp__check_class_labels(fn, labels, be, 1, x->shape[1], ignore_index, &rule));
    BP__TRY(bp__op_require(be, op, x->dtype));
    bp_tensor *res = NULL, *lp = NULL;
    bp_status st = reduction == BP_LOSS_NONE
                       ? bp__tensor_new(fn, be, x->dtype, labels->rank, labels->shape, &res)
                       : bp__tensor_new(fn, be, x->dtype, 0, NULL, &res);
    if (st == BP_OK && log_prob)
        st = bp__tensor_new(fn, be, x->dtype, x->rank, x->shape, &lp);
    if (st != BP_OK) {
        bp_tensor_release(res);
        return st;
    }
    int32_t perm[BP_MAX_RANK];
    bp__axis_last_perm(x->rank, 1, perm);
    bp_view vx, vl, vw, vo, vp;
    bp__view_dense(x, &vx);
    bp__view_permute(&vx, perm);
    bp__view_dense(labels, &vl);
    if (weights)
        bp__view_dense(weights, &vw);
    bp__view_dense(res, &vo);
    if (lp) {
        bp__view_dense(lp, &vp);
        bp__view_permute(&vp, perm);
    }
    bp_op_params p = bp__params();
    p.i[0] = reduction;
    p.i[1] = ignore_index != NULL;
    p.i[2] = ignore_index ? *ignore_index : 0;
    const bp_view *in[3] = {&vx, &vl, weights ? &vw : NULL};
    st = bp__op_run_checked(be, op, &p, in, (const bp_view *[]){&vo, lp ? &vp : NULL}, &rule);
    if (st != BP_OK) {
        bp_tensor_release(res);
        bp_tensor_release(lp);
        return st;
    }
    *out = res;
    if (log_prob)
        *log_prob = lp;
    return BP_OK;
}

bp_status bp_nll_loss(const bp_tensor *log_prob, const bp_tensor *target, const bp_tensor *weights,
                      bp_loss_reduction reduction, const int64_t *ignore_index, bp_tensor **out)
{
    return loss(BP_OP_NLL_LOSS, log_prob, target, weights, reduction, ignore_index, out, NULL);
}

bp_status bp_softmax_cross_entropy_loss(const bp_tensor *scores, const bp_tensor *labels,
                                        const bp_tensor *weights, bp_loss_reduction reduction,
                                        const int64_t *ignore_index, bp_tensor **out,
                                        bp_tensor **log_prob)
{
    return loss(BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, scores, labels, weights, reduction,
                ignore_index, out, log_prob);
}

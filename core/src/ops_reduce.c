/* backplane core: reductions, every op of the REDUCE kind.
 *
 * The core resolves the axes and hands the plugin a view of x permuted so
 * that the kept axes come first and the reduced ones last; the plugin reduces
 * the trailing p.i[0] axes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Over zero elements these have no value to give (NumPy refuses them too). */
static bool has_identity(bp_op op)
{
    switch (op) {
    case BP_OP_MAX: case BP_OP_MIN: case BP_OP_ARGMAX: case BP_OP_ARGMIN:
    case BP_OP_ARGMAX_LAST: case BP_OP_ARGMIN_LAST:
        return false;
    default:
        return true;
    }
}

static bp_status reduce(bp_op op, const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                        bool keepdims, double correction, bp_tensor **out)
{
    const char *fn = bp__op_fn(op);
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, op, (const bp_tensor *const[]){x}, &be));
    if (!(correction >= 0.0))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: correction %g must be >= 0", fn,
                         correction);
    bp__reduce_plan pl;
    BP__TRY(bp__reduce_plan_make(fn, x, n_axes, axes, keepdims, &pl));
    /* NumPy: refused only when some output element would reduce nothing. */
    if (!has_identity(op) && pl.reduce_count == 0 && pl.kept_count > 0)
        return bp__error(BP_ERR_SHAPE,
                         "%s: zero-size reduction has no identity (x has %lld elements along "
                         "the reduced axes); reduce over non-empty axes or use bp_sum",
                         fn, (long long)pl.reduce_count);
    BP__TRY(bp__op_require(be, op, x->dtype));
    bp_dtype dt = bp_op_info_of(op)->result == BP_RESULT_I64 ? BP_I64 : x->dtype;
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, dt, pl.out_rank, pl.out_shape, &res));
    bp_view vx, vo;
    bp__reduce_plan_views(&pl, x, res, &vx, &vo);
    bp_op_params p = bp__params();
    p.i[0] = pl.n_reduce;
    p.f[0] = correction;
    return bp__deliver(res, bp__op_run(be, op, &p, (const bp_view *[]){&vx},
                                       (const bp_view *[]){&vo}), out);
}

bp_status bp_reduce(bp_op op, const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                    bool keepdims, bp_tensor **out)
{
    BP__TRY(bp__check_out("bp_reduce", out));
    if ((unsigned)op >= (unsigned)BP_OP_COUNT || bp_op_kind_of(op) != BP_KIND_REDUCE)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "bp_reduce: op %d (%s) is not a reduction; pass a code of the REDUCE "
                         "kind (BP_OP_SUM, PROD, MEAN, MAX, MIN, ARGMAX, ... REDUCE_VAR)",
                         (int)op, bp_op_name(op));
    return reduce(op, x, n_axes, axes, keepdims, 0.0, out);
}

bp_status bp_reduce_var(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                        double correction, bp_tensor **out)
{
    return reduce(BP_OP_REDUCE_VAR, x, n_axes, axes, keepdims, correction, out);
}

bp_status bp_reduce_std(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                        double correction, bp_tensor **out)
{
    return reduce(BP_OP_REDUCE_STD, x, n_axes, axes, keepdims, correction, out);
}

/* bp_sum ... bp_argmin_last, one line each (ops.h declares each in
 * writing); var and std, which take a correction, are written out above. */
#define BP__REDUCE(name, NAME)                                                              \
    BP_API bp_status bp_##name(const bp_tensor *x, int32_t n_axes, const int32_t *axes,    \
                               bool keepdims, bp_tensor **out)                             \
    {                                                                                       \
        return reduce(BP_OP_##NAME, x, n_axes, axes, keepdims, 0.0, out);                   \
    }
BP__REDUCE(sum, SUM)
BP__REDUCE(prod, PROD)
BP__REDUCE(mean, MEAN)
BP__REDUCE(max, MAX)
BP__REDUCE(min, MIN)
BP__REDUCE(argmax, ARGMAX)
BP__REDUCE(argmin, ARGMIN)
BP__REDUCE(logsumexp, LOGSUMEXP)
BP__REDUCE(reduce_l1, REDUCE_L1)
BP__REDUCE(reduce_l2, REDUCE_L2)
BP__REDUCE(reduce_sum_square, REDUCE_SUM_SQUARE)
BP__REDUCE(reduce_log_sum, REDUCE_LOG_SUM)
BP__REDUCE(reduce_any, REDUCE_ANY)
BP__REDUCE(reduce_all, REDUCE_ALL)
BP__REDUCE(argmax_last, ARGMAX_LAST)
BP__REDUCE(argmin_last, ARGMIN_LAST)

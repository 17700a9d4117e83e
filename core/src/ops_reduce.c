/* backplane core: reductions (REDUCE family) and softmax (SOFTMAX family).
 *
 * The core resolves the axes and hands the plugin a view of x permuted so
 * that the kept axes come first and the reduced ones last; the plugin reduces
 * the trailing n_reduce axes. Softmax likewise moves its axis last. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static bool reduce_needs_float(bp_op op) { return op == BP_OP_MEAN || op == BP_OP_LOGSUMEXP; }

static bool reduce_has_identity(bp_op op)
{
    return !(op == BP_OP_MAX || op == BP_OP_MIN || op == BP_OP_ARGMAX || op == BP_OP_ARGMIN);
}

bp_status bp_reduce(bp_op op, const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                    bool keepdims, bp_tensor **out)
{
    BP__TRY(bp__check_out("bp_reduce", out));
    if ((unsigned)op >= (unsigned)BP_OP_COUNT || bp_op_family_of(op) != BP_FAMILY_REDUCE)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "bp_reduce: op %d (%s) is not a reduction; pass one of BP_OP_SUM, "
                         "PROD, MEAN, MAX, MIN, ARGMAX, ARGMIN, LOGSUMEXP",
                         (int)op, bp_op_name(op));
    char fn[48];
    bp__op_fn(op, fn, sizeof fn);
    BP__TRY(bp__check_input(fn, "x", x));

    if (reduce_needs_float(op) && !bp_dtype_is_float(x->dtype))
        return bp__error(BP_ERR_DTYPE,
                         "%s: x is %s but %s accepts float dtypes (f16, bf16, f32, f64); "
                         "convert it with bp_cast first",
                         fn, bp_dtype_name(x->dtype), bp_op_name(op));
    if (x->dtype == BP_BOOL)
        return bp__error(BP_ERR_DTYPE,
                         "%s: x is bool but %s accepts numeric dtypes (not bool); convert it "
                         "with bp_cast first (e.g. to i64 to count true values)",
                         fn, bp_op_name(op));

    bp__reduce_plan pl;
    BP__TRY(bp__reduce_plan_make(fn, x, n_axes, axes, keepdims, &pl));

    /* NumPy: refused only when some output element would reduce nothing. */
    if (!reduce_has_identity(op) && pl.reduce_count == 0 && pl.kept_count > 0)
        return bp__error(BP_ERR_SHAPE,
                         "%s: zero-size reduction has no identity (x has %lld elements along "
                         "the reduced axes); reduce over non-empty axes or use bp_sum",
                         fn, (long long)pl.reduce_count);

    bp_backend *be = bp__backend_of(x);
    BP__TRY(bp__require_op(be, op, x->dtype, BP__HAS(be->vt, reduce)));

    bp_dtype out_dtype = (op == BP_OP_ARGMAX || op == BP_OP_ARGMIN) ? BP_I64 : x->dtype;
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, out_dtype, pl.out_rank, pl.out_shape, &res));
    bp_view vx, vo;
    bp__reduce_plan_views(&pl, x, res, &vx, &vo);
    return bp__deliver(res, BP__OP_CALL(be, bp_op_name(op), reduce, op, &vx, pl.n_reduce, &vo),
                       out);
}

static bp_status softmax_impl(bp_op op, const bp_tensor *x, int32_t axis, bp_tensor **out)
{
    char fn[48];
    bp__op_fn(op, fn, sizeof fn);
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "x", x));
    if (!bp_dtype_is_float(x->dtype))
        return bp__error(BP_ERR_DTYPE,
                         "%s: x is %s but %s accepts float dtypes (f16, bf16, f32, f64); "
                         "convert it with bp_cast first",
                         fn, bp_dtype_name(x->dtype), bp_op_name(op));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));

    bp_backend *be = bp__backend_of(x);
    BP__TRY(bp__require_op(be, op, x->dtype, BP__HAS(be->vt, softmax)));

    int32_t perm[BP_MAX_RANK];
    bp__axis_last_perm(x->rank, ax, perm);

    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, x->shape, &res));
    bp_view vx, vo;
    bp__view_dense(x, &vx);
    bp__view_permute(&vx, perm);
    bp__view_dense(res, &vo);
    bp__view_permute(&vo, perm);
    return bp__deliver(res, BP__OP_CALL(be, bp_op_name(op), softmax, op, &vx, &vo), out);
}

/* bp_sum ... bp_logsumexp and bp_softmax / bp_log_softmax, from the op list. */
#define BP__DEF_OP(NAME, name, FAMILY) BP__DEF_OP_##FAMILY(NAME, name)
#define BP__DEF_OP_REDUCE(NAME, name)                                                       \
    BP_API bp_status bp_##name(const bp_tensor *x, int32_t n_axes, const int32_t *axes,    \
                               bool keepdims, bp_tensor **out)                             \
    {                                                                                       \
        return bp_reduce(BP_OP_##NAME, x, n_axes, axes, keepdims, out);                     \
    }
#define BP__DEF_OP_SOFTMAX(NAME, name)                                             \
    BP_API bp_status bp_##name(const bp_tensor *x, int32_t axis, bp_tensor **out) \
    {                                                                              \
        return softmax_impl(BP_OP_##NAME, x, axis, out);                           \
    }
#define BP__DEF_OP_UNARY(NAME, name)
#define BP__DEF_OP_BINARY(NAME, name)
#define BP__DEF_OP_WHERE(NAME, name)
#define BP__DEF_OP_MATMUL(NAME, name)
#define BP__DEF_OP_MOVEMENT(NAME, name)
#define BP__DEF_OP_GATHER(NAME, name)
#define BP__DEF_OP_CREATION(NAME, name)
#define BP__DEF_OP_RANDOM(NAME, name)
BP_OP_LIST(BP__DEF_OP)

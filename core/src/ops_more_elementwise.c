/* backplane core: the elementwise ops of ABI 1.4 (opcodes.h's
 * BP_OP_LIST_1_4): the functions of one tensor with their ONNX attributes,
 * clip, and the functions of two tensors. Validation only; each reaches the
 * plugin through its op entry with bp_op_params. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* 1.4's layout, frozen: the reals at byte 56 (on the LP64 targets built). */
_Static_assert(sizeof(void *) != 8 || (offsetof(bp_op_params_1_4, f) == 56 &&
                                       sizeof(bp_op_params_1_4) == 104),
               "bp_op_params_1_4 must keep ABI 1.4's layout");

bp_status bp__op_entry(bp_backend *be, bp_op op, const bp_op_params *p, int32_t n_in,
                       const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    if (be->vt->abi_minor >= 5)
        return BP__OP_CALL(be, bp_op_name(op), op, op, p, n_in, in, n_out, out);
    /* A plugin built for 1.4 reads 1.4's layout (plugin.h): six of each, all
     * an op of 1.4 has (a 1.5 op never reaches it: bp__require_op). */
    bp_op_params_1_4 old = {.struct_size = sizeof old};
    memcpy(old.i, p->i, sizeof old.i);
    memcpy(old.f, p->f, sizeof old.f);
    return BP__OP_CALL(be, bp_op_name(op), op, op, (const bp_op_params *)(const void *)&old,
                       n_in, in, n_out, out);
}

bp_op_params bp__params(void)
{
    bp_op_params p = {0};
    p.struct_size = sizeof p;
    return p;
}

/* ---- one tensor ------------------------------------------------------------- */

static bp__dtype_class unary_more_class(bp_op op)
{
    switch (op) {
    case BP_OP_SQUARE: case BP_OP_SHRINK: return BP__ACCEPT_NUMERIC;
    case BP_OP_BITWISE_NOT: return BP__ACCEPT_INTEGER;
    default: return BP__ACCEPT_FLOAT;
    }
}

static bp_status unary_more(bp_op op, const bp_tensor *x, const bp_op_params *p, bp_tensor **out)
{
    char fn[48];
    bp__op_fn(op, fn, sizeof fn);
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "x", x));
    BP__TRY(bp__check_dtype(fn, bp_op_name(op), "x", x->dtype, unary_more_class(op)));
    for (int k = 0; k < 2; k++)
        if (isnan(p->f[k]))
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: a parameter is NaN", fn);
    bp_backend *be = bp__backend_of(x);
    BP__TRY(bp__require_op(be, op, x->dtype, BP__HAS(be->vt, op)));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, x->shape, &res));
    bp_view vx, vo;
    bp__view_dense(x, &vx);
    bp__view_dense(res, &vo);
    return bp__deliver(res, bp__op_entry(be, op, p, 1, (const bp_view *[]){&vx}, 1,
                                         (const bp_view *[]){&vo}), out);
}

static bp_status unary_plain(bp_op op, const bp_tensor *x, bp_tensor **out)
{
    bp_op_params p = bp__params();
    return unary_more(op, x, &p, out);
}

static bp_status unary_f(bp_op op, const bp_tensor *x, double f0, double f1, bp_tensor **out)
{
    bp_op_params p = bp__params();
    p.f[0] = f0;
    p.f[1] = f1;
    return unary_more(op, x, &p, out);
}

#define BP__UNARY_PLAIN(name, NAME)                                 \
    bp_status bp_##name(const bp_tensor *x, bp_tensor **out)       \
    {                                                               \
        return unary_plain(BP_OP_##NAME, x, out);                   \
    }
BP__UNARY_PLAIN(acos, ACOS)
BP__UNARY_PLAIN(asin, ASIN)
BP__UNARY_PLAIN(atan, ATAN)
BP__UNARY_PLAIN(acosh, ACOSH)
BP__UNARY_PLAIN(asinh, ASINH)
BP__UNARY_PLAIN(atanh, ATANH)
BP__UNARY_PLAIN(sinh, SINH)
BP__UNARY_PLAIN(cosh, COSH)
BP__UNARY_PLAIN(log1p, LOG1P)
BP__UNARY_PLAIN(expm1, EXPM1)
BP__UNARY_PLAIN(softplus, SOFTPLUS)
BP__UNARY_PLAIN(softsign, SOFTSIGN)
BP__UNARY_PLAIN(silu, SILU)
BP__UNARY_PLAIN(hardswish, HARDSWISH)
BP__UNARY_PLAIN(square, SQUARE)
BP__UNARY_PLAIN(bitwise_not, BITWISE_NOT)

bp_status bp_elu(const bp_tensor *x, double alpha, bp_tensor **out)
{
    return unary_f(BP_OP_ELU, x, alpha, 0, out);
}

bp_status bp_selu(const bp_tensor *x, double alpha, double gamma, bp_tensor **out)
{
    return unary_f(BP_OP_SELU, x, alpha, gamma, out);
}

bp_status bp_leaky_relu(const bp_tensor *x, double alpha, bp_tensor **out)
{
    return unary_f(BP_OP_LEAKY_RELU, x, alpha, 0, out);
}

bp_status bp_thresholded_relu(const bp_tensor *x, double alpha, bp_tensor **out)
{
    return unary_f(BP_OP_THRESHOLDED_RELU, x, alpha, 0, out);
}

bp_status bp_hard_sigmoid(const bp_tensor *x, double alpha, double beta, bp_tensor **out)
{
    return unary_f(BP_OP_HARD_SIGMOID, x, alpha, beta, out);
}

bp_status bp_shrink(const bp_tensor *x, double bias, double lambd, bp_tensor **out)
{
    return unary_f(BP_OP_SHRINK, x, bias, lambd, out);
}

/* ---- clip ---------------------------------------------------------------------- */

static bp_status clip_bound(const char *fn, const char *arg, const bp_tensor *x,
                            const bp_tensor *bound)
{
    if (!bound)
        return BP_OK;
    BP__TRY(bp__check_input(fn, arg, bound));
    BP__TRY(bp__check_same_backend(fn, 2, (const bp_tensor *const[]){x, bound},
                                   (const char *const[]){"x", arg}));
    if (bound->dtype != x->dtype)
        return bp__error(BP_ERR_DTYPE, "%s: x is %s but %s is %s; they must share a dtype: "
                         "convert with bp_cast first",
                         fn, bp_dtype_name(x->dtype), arg, bp_dtype_name(bound->dtype));
    int32_t rank;
    int64_t shape[BP_MAX_RANK];
    BP__TRY(bp__broadcast_shapes(fn, x->rank, x->shape, bound->rank, bound->shape, &rank, shape));
    bool same = rank == x->rank;
    for (int32_t k = 0; same && k < rank; k++)
        same = shape[k] == x->shape[k];
    if (!same) {
        char sx[BP__SHAPE_STR_CAP], sb[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: %s of shape %s must broadcast to x's shape %s", fn,
                         arg, BP__SHAPE_STR(sb, bound->rank, bound->shape),
                         BP__SHAPE_STR(sx, x->rank, x->shape));
    }
    return BP_OK;
}

bp_status bp_clip(const bp_tensor *x, const bp_tensor *lo, const bp_tensor *hi, bp_tensor **out)
{
    static const char fn[] = "bp_clip";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "x", x));
    BP__TRY(bp__check_dtype(fn, "clip", "x", x->dtype, BP__ACCEPT_NUMERIC));
    BP__TRY(clip_bound(fn, "lo", x, lo));
    BP__TRY(clip_bound(fn, "hi", x, hi));
    bp_backend *be = bp__backend_of(x);
    BP__TRY(bp__require_op(be, BP_OP_CLIP, x->dtype, BP__HAS(be->vt, op)));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, x->shape, &res));
    bp_view vx, vl, vh, vo;
    bp__view_dense(x, &vx);
    if (lo)
        bp__view_broadcast(lo, x->rank, x->shape, &vl);
    if (hi)
        bp__view_broadcast(hi, x->rank, x->shape, &vh);
    bp__view_dense(res, &vo);
    bp_op_params p = bp__params();
    p.i[0] = lo != NULL;
    p.i[1] = hi != NULL;
    const bp_view *in[3] = {&vx, lo ? &vl : NULL, hi ? &vh : NULL};
    return bp__deliver(res, bp__op_entry(be, BP_OP_CLIP, &p, 3, in, 1, (const bp_view *[]){&vo}),
                       out);
}

bp_status bp_clip_scalar(const bp_tensor *x, double lo, double hi, bp_tensor **out)
{
    static const char fn[] = "bp_clip_scalar";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "x", x));
    if (isnan(lo) || isnan(hi))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: a bound is NaN; pass -INFINITY or "
                         "INFINITY for no bound", fn);
    bp_backend *be = bp__backend_of(x);
    bp_tensor *tl = NULL, *th = NULL;
    bp_status st = BP_OK;
    if (lo != -INFINITY)
        st = bp_full(be, x->dtype, 0, NULL, lo, &tl);
    if (st == BP_OK && hi != INFINITY)
        st = bp_full(be, x->dtype, 0, NULL, hi, &th);
    if (st == BP_OK)
        st = bp_clip(x, tl, th, out);
    bp_tensor_release(tl);
    bp_tensor_release(th);
    return st;
}

/* ---- two tensors ---------------------------------------------------------------- */

static bp_status binary_more(bp_op op, const bp_tensor *a, const bp_tensor *b,
                             bp__dtype_class cls, bool one_way, bp_tensor **out)
{
    char fn[48];
    bp__op_fn(op, fn, sizeof fn);
    const char *an = one_way ? "x" : "a", *bn = one_way ? "slope" : "b";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, an, a));
    BP__TRY(bp__check_input(fn, bn, b));
    BP__TRY(bp__check_same_backend(fn, 2, (const bp_tensor *const[]){a, b},
                                   (const char *const[]){an, bn}));
    if (a->dtype != b->dtype)
        return bp__error(BP_ERR_DTYPE, "%s: %s is %s but %s is %s; operands must share a dtype "
                         "(no implicit promotion): convert one with bp_cast first",
                         fn, an, bp_dtype_name(a->dtype), bn, bp_dtype_name(b->dtype));
    BP__TRY(bp__check_dtype(fn, bp_op_name(op), an, a->dtype, cls));
    int32_t rank = 0;
    int64_t shape[BP_MAX_RANK];
    BP__TRY(bp__broadcast_shapes(fn, a->rank, a->shape, b->rank, b->shape, &rank, shape));
    if (one_way) { /* PRelu: the slope broadcasts to x, never x to the slope */
        bool same = rank == a->rank;
        for (int32_t k = 0; same && k < rank; k++)
            same = shape[k] == a->shape[k];
        if (!same) {
            char sa[BP__SHAPE_STR_CAP], sb[BP__SHAPE_STR_CAP];
            return bp__error(BP_ERR_SHAPE, "%s: slope of shape %s must broadcast to x's shape "
                             "%s (PRelu's broadcasting goes one way)",
                             fn, BP__SHAPE_STR(sb, b->rank, b->shape),
                             BP__SHAPE_STR(sa, a->rank, a->shape));
        }
    }
    bp_backend *be = bp__backend_of(a);
    BP__TRY(bp__require_op(be, op, a->dtype, BP__HAS(be->vt, op)));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, a->dtype, rank, shape, &res));
    bp_view va, vb, vo;
    bp__view_broadcast(a, rank, shape, &va);
    bp__view_broadcast(b, rank, shape, &vb);
    bp__view_dense(res, &vo);
    bp_op_params p = bp__params();
    return bp__deliver(res, bp__op_entry(be, op, &p, 2, (const bp_view *[]){&va, &vb}, 1,
                                         (const bp_view *[]){&vo}), out);
}

bp_status bp_fmod(const bp_tensor *a, const bp_tensor *b, bp_tensor **out)
{
    return binary_more(BP_OP_FMOD, a, b, BP__ACCEPT_NUMERIC, false, out);
}

bp_status bp_prelu(const bp_tensor *x, const bp_tensor *slope, bp_tensor **out)
{
    return binary_more(BP_OP_PRELU, x, slope, BP__ACCEPT_NUMERIC, true, out);
}

#define BP__BINARY_INT(name, NAME)                                                        \
    bp_status bp_##name(const bp_tensor *a, const bp_tensor *b, bp_tensor **out)         \
    {                                                                                     \
        return binary_more(BP_OP_##NAME, a, b, BP__ACCEPT_INTEGER, false, out);           \
    }
BP__BINARY_INT(bitwise_and, BITWISE_AND)
BP__BINARY_INT(bitwise_or, BITWISE_OR)
BP__BINARY_INT(bitwise_xor, BITWISE_XOR)
BP__BINARY_INT(bitshift_left, BITSHIFT_LEFT)
BP__BINARY_INT(bitshift_right, BITSHIFT_RIGHT)

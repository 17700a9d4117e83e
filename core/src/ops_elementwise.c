/* backplane core: the elementwise ops, every op of the UNARY, BINARY, WHERE
 * and CLIP kinds. Validation only: the operands by the op table
 * (bp__op_begin), then broadcasting and matching dtypes; the arithmetic is
 * the plugin's, called with views already broadcast to the output's shape. */
#include <math.h>
#include <stdio.h>

#include "internal.h"

/* The op code must exist and be of `kind`, else INVALID_ARGUMENT. */
static bp_status check_kind(const char *entry, bp_op op, bp_op_kind kind, const char *what)
{
    if ((unsigned)op >= (unsigned)BP_OP_COUNT || bp_op_kind_of(op) != kind)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: op %d (%s) is not a %s op; pass one of the %s op codes "
                         "from opcodes.h (its kind %s)",
                         entry, (int)op, bp_op_name(op), what, what, what);
    return BP_OK;
}

static bp_dtype result_dtype(bp_op op, bp_dtype typed)
{
    switch (bp_op_info_of(op)->result) {
    case BP_RESULT_BOOL: return BP_BOOL;
    case BP_RESULT_I64: return BP_I64;
    default: return typed;
    }
}

/* ---- one tensor ------------------------------------------------------------ */

static bp_status unary(bp_op op, const bp_tensor *x, const bp_op_params *p, bp_tensor **out)
{
    const char *fn = bp__op_fn(op);
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, op, (const bp_tensor *const[]){x}, &be));
    for (int k = 0; k < 2; k++)
        if (isnan(p->f[k]))
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: a parameter is NaN", fn);
    BP__TRY(bp__op_require(be, op, x->dtype));
    bp_view vx;
    bp__view_dense(x, &vx);
    return bp__op_into_new(fn, be, op, p, (const bp_view *[]){&vx},
                           result_dtype(op, x->dtype), x->rank, x->shape, out);
}

bp_status bp_unary(bp_op op, const bp_tensor *x, bp_tensor **out)
{
    BP__TRY(bp__check_out("bp_unary", out));
    BP__TRY(check_kind("bp_unary", op, BP_KIND_UNARY, "unary"));
    bp_op_params p = bp__params();
    bp_op_param_defaults(op, p.f); /* ONNX's (opcodes.h) */
    return unary(op, x, &p, out);
}

bp_status bp_unary_params(bp_op op, const bp_tensor *x, double f0, double f1, bp_tensor **out)
{
    BP__TRY(bp__check_out("bp_unary_params", out));
    BP__TRY(check_kind("bp_unary_params", op, BP_KIND_UNARY, "unary"));
    bp_op_params p = bp__params();
    int n = bp_op_param_defaults(op, p.f);
    if (n > 0)
        p.f[0] = f0;
    if (n > 1)
        p.f[1] = f1;
    return unary(op, x, &p, out);
}

static bp_status unary_f(bp_op op, const bp_tensor *x, double f0, double f1, bp_tensor **out)
{
    bp_op_params p = bp__params();
    p.f[0] = f0;
    p.f[1] = f1;
    return unary(op, x, &p, out);
}

bp_status bp_elu(const bp_tensor *x, double alpha, bp_tensor **out)
{
    return unary_f(BP_OP_ELU, x, alpha, 0, out);
}

bp_status bp_celu(const bp_tensor *x, double alpha, bp_tensor **out)
{
    return unary_f(BP_OP_CELU, x, alpha, 0, out);
}

bp_status bp_mish(const bp_tensor *x, bp_tensor **out) { return unary_f(BP_OP_MISH, x, 0, 0, out); }

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

/* ---- two tensors ------------------------------------------------------------ */

/* The shapes of a and b broadcast; PRelu's slope must broadcast to x
 * (its broadcasting goes one way). */
static bp_status binary_shape(const char *fn, bp_op op, const bp_tensor *a, const bp_tensor *b,
                              int32_t *rank, int64_t *shape)
{
    BP__TRY(bp__broadcast_shapes(fn, a->rank, a->shape, b->rank, b->shape, rank, shape));
    if (op != BP_OP_PRELU)
        return BP_OK;
    bool same = *rank == a->rank;
    for (int32_t k = 0; same && k < *rank; k++)
        same = shape[k] == a->shape[k];
    if (same)
        return BP_OK;
    char sa[BP__SHAPE_STR_CAP], sb[BP__SHAPE_STR_CAP];
    return bp__error(BP_ERR_SHAPE, "%s: slope of shape %s must broadcast to x's shape %s "
                     "(PRelu's broadcasting goes one way)",
                     fn, BP__SHAPE_STR(sb, b->rank, b->shape), BP__SHAPE_STR(sa, a->rank, a->shape));
}

bp_status bp_binary(bp_op op, const bp_tensor *a, const bp_tensor *b, bp_tensor **out)
{
    BP__TRY(bp__check_out("bp_binary", out));
    BP__TRY(check_kind("bp_binary", op, BP_KIND_BINARY, "binary"));
    const char *fn = bp__op_fn(op);
    bp_backend *be;
    const bp_tensor *in[2] = {a, b};
    BP__TRY(bp__op_same_dtype(fn, op, in, 0, 1));
    BP__TRY(bp__op_begin(fn, op, in, &be));
    int32_t rank = 0;
    int64_t shape[BP_MAX_RANK];
    BP__TRY(binary_shape(fn, op, a, b, &rank, shape));
    BP__TRY(bp__op_require(be, op, a->dtype));
    bp_view va, vb;
    bp__view_broadcast(a, rank, shape, &va);
    bp__view_broadcast(b, rank, shape, &vb);
    bp_op_params p = bp__params();
    return bp__op_into_new(fn, be, op, &p, (const bp_view *[]){&va, &vb},
                           result_dtype(op, a->dtype), rank, shape, out);
}

bp_status bp_where(const bp_tensor *cond, const bp_tensor *a, const bp_tensor *b, bp_tensor **out)
{
    static const char fn[] = "bp_where";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_WHERE, (const bp_tensor *const[]){cond, a, b}, &be));
    if (cond->dtype != BP_BOOL)
        return bp__error(BP_ERR_DTYPE,
                         "%s: cond is %s but must be bool; make it with a comparison "
                         "(bp_ne(x, zeros)) or bp_cast(cond, BP_BOOL)",
                         fn, bp_dtype_name(cond->dtype));
    if (a->dtype != b->dtype)
        return bp__error(BP_ERR_DTYPE,
                         "%s: a is %s but b is %s; they must share a dtype: convert one "
                         "with bp_cast first",
                         fn, bp_dtype_name(a->dtype), bp_dtype_name(b->dtype));
    int32_t r1 = 0, rank = 0;
    int64_t s1[BP_MAX_RANK], shape[BP_MAX_RANK];
    BP__TRY(bp__broadcast_shapes(fn, cond->rank, cond->shape, a->rank, a->shape, &r1, s1));
    BP__TRY(bp__broadcast_shapes(fn, r1, s1, b->rank, b->shape, &rank, shape));
    BP__TRY(bp__op_require(be, BP_OP_WHERE, a->dtype));
    bp_view vc, va, vb;
    bp__view_broadcast(cond, rank, shape, &vc);
    bp__view_broadcast(a, rank, shape, &va);
    bp__view_broadcast(b, rank, shape, &vb);
    bp_op_params p = bp__params();
    return bp__op_into_new(fn, be, BP_OP_WHERE, &p, (const bp_view *[]){&vc, &va, &vb}, a->dtype,
                           rank, shape, out);
}

/* ---- clip ---------------------------------------------------------------------- */

static bp_status clip_bound(const char *fn, const char *arg, const bp_tensor *x,
                            const bp_tensor *bound)
{
    if (!bound)
        return BP_OK;
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
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_CLIP, (const bp_tensor *const[]){x, lo, hi}, &be));
    BP__TRY(clip_bound(fn, "lo", x, lo));
    BP__TRY(clip_bound(fn, "hi", x, hi));
    BP__TRY(bp__op_require(be, BP_OP_CLIP, x->dtype));
    bp_view vx, vl, vh;
    bp__view_dense(x, &vx);
    if (lo)
        bp__view_broadcast(lo, x->rank, x->shape, &vl);
    if (hi)
        bp__view_broadcast(hi, x->rank, x->shape, &vh);
    bp_op_params p = bp__params();
    p.i[0] = lo != NULL;
    p.i[1] = hi != NULL;
    return bp__op_into_new(fn, be, BP_OP_CLIP, &p,
                           (const bp_view *[]){&vx, lo ? &vl : NULL, hi ? &vh : NULL}, x->dtype,
                           x->rank, x->shape, out);
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

/* ---- one function per op -----------------------------------------------------
 * Every BINARY op, generated from the op table (they share one signature);
 * the UNARY ops without parameters, one line each. ops.h declares each in
 * writing (tests/test_api.c checks that every op of the two kinds has its
 * function). */
#define BP__DEF_OP(NAME, name, KIND, SINCE, IN, OUT, TYPED, DTYPES, RESULT, COST) \
    BP__DEF_##KIND(NAME, name)
#define BP__DEF_BINARY(NAME, name)                                                         \
    BP_API bp_status bp_##name(const bp_tensor *a, const bp_tensor *b, bp_tensor **out) \
    {                                                                                      \
        return bp_binary(BP_OP_##NAME, a, b, out);                                         \
    }
#define BP__DEF_UNARY(NAME, name)
#define BP__DEF_WHERE(NAME, name)
#define BP__DEF_REDUCE(NAME, name)
#define BP__DEF_MATMUL(NAME, name)
#define BP__DEF_MOVEMENT(NAME, name)
#define BP__DEF_GATHER(NAME, name)
#define BP__DEF_SOFTMAX(NAME, name)
#define BP__DEF_FILL(NAME, name)
#define BP__DEF_ARANGE(NAME, name)
#define BP__DEF_RANDOM(NAME, name)
#define BP__DEF_CLIP(NAME, name)
#define BP__DEF_HARDMAX(NAME, name)
#define BP__DEF_SCAN(NAME, name)
#define BP__DEF_SORT(NAME, name)
#define BP__DEF_TRILU(NAME, name)
#define BP__DEF_ONE_HOT(NAME, name)
#define BP__DEF_INDEX(NAME, name)
#define BP__DEF_SCATTER(NAME, name)
#define BP__DEF_GEMM(NAME, name)
#define BP__DEF_CONV(NAME, name)
#define BP__DEF_POOL(NAME, name)
#define BP__DEF_LRN(NAME, name)
#define BP__DEF_NORM(NAME, name)
#define BP__DEF_LOSS(NAME, name)
#define BP__DEF_RESIZE(NAME, name)
BP_OP_TABLE(BP__DEF_OP)

#define BP__UNARY(name, NAME)                                     \
    BP_API bp_status bp_##name(const bp_tensor *x, bp_tensor **out) \
    {                                                               \
        bp_op_params p = bp__params();                              \
        return unary(BP_OP_##NAME, x, &p, out);                     \
    }
BP__UNARY(neg, NEG)
BP__UNARY(abs, ABS)
BP__UNARY(sign, SIGN)
BP__UNARY(exp, EXP)
BP__UNARY(log, LOG)
BP__UNARY(sqrt, SQRT)
BP__UNARY(rsqrt, RSQRT)
BP__UNARY(reciprocal, RECIPROCAL)
BP__UNARY(sin, SIN)
BP__UNARY(cos, COS)
BP__UNARY(tan, TAN)
BP__UNARY(tanh, TANH)
BP__UNARY(sigmoid, SIGMOID)
BP__UNARY(relu, RELU)
BP__UNARY(gelu, GELU)
BP__UNARY(erf, ERF)
BP__UNARY(floor, FLOOR)
BP__UNARY(ceil, CEIL)
BP__UNARY(round, ROUND)
BP__UNARY(isnan, ISNAN)
BP__UNARY(isinf, ISINF)
BP__UNARY(logical_not, LOGICAL_NOT)
BP__UNARY(acos, ACOS)
BP__UNARY(asin, ASIN)
BP__UNARY(atan, ATAN)
BP__UNARY(acosh, ACOSH)
BP__UNARY(asinh, ASINH)
BP__UNARY(atanh, ATANH)
BP__UNARY(sinh, SINH)
BP__UNARY(cosh, COSH)
BP__UNARY(log1p, LOG1P)
BP__UNARY(expm1, EXPM1)
BP__UNARY(softplus, SOFTPLUS)
BP__UNARY(softsign, SOFTSIGN)
BP__UNARY(silu, SILU)
BP__UNARY(square, SQUARE)
BP__UNARY(hardswish, HARDSWISH)
BP__UNARY(bitwise_not, BITWISE_NOT)

/* The UNARY kind's kernel, bpk_unary: its loops are elementwise_loops.h's. */
#include "elementwise_loops.h"

/* ---- unary -------------------------------------------------------------- */

/* A math function of double on every float dtype, rounded once to the dtype. */
#define FLOAT_UN(EXPR)                                                                  \
    switch (x->dtype) {                                                                 \
    case BP_F64: UN_LOOP(double, double, ID, double, ID, EXPR); return BP_OK;          \
    case BP_F32: UN_LOOP(float, double, TO_F64, float, TO_F32, EXPR); return BP_OK;    \
    case BP_F16: UN_LOOP(uint16_t, double, F16_F, uint16_t, F_F16, EXPR); return BP_OK; \
    case BP_BF16: UN_LOOP(uint16_t, double, BF16_F, uint16_t, F_BF16, EXPR); return BP_OK; \
    default: break;                                                                     \
    }                                                                                   \
    break

/* neg/abs/sign/relu on every numeric dtype: FEXPR for floats (exact in the
 * dtype's own precision), IEXPR (with the type suffix S) for integers. */
#define NUMERIC_UN(FEXPR, IEXPR)                                                        \
    switch (x->dtype) {                                                                 \
    case BP_F64: UN_LOOP(double, double, ID, double, ID, FEXPR); return BP_OK;         \
    case BP_F32: UN_LOOP(float, float, ID, float, ID, FEXPR); return BP_OK;            \
    case BP_F16: UN_LOOP(uint16_t, float, F16_F, uint16_t, F_F16, FEXPR); return BP_OK; \
    case BP_BF16: UN_LOOP(uint16_t, float, BF16_F, uint16_t, F_BF16, FEXPR); return BP_OK; \
    case BP_I64: { IEXPR(i64, int64_t); } return BP_OK;                                 \
    case BP_I32: { IEXPR(i32, int32_t); } return BP_OK;                                 \
    case BP_I8: { IEXPR(i8, int8_t); } return BP_OK;                                    \
    case BP_U8: { IEXPR(u8, uint8_t); } return BP_OK;                                   \
    default: break;                                                                     \
    }                                                                                   \
    break

/* "v < (T)1 && v != 0" is v < 0, spelled so that it is not an always-false
 * comparison (-Wtype-limits) when T is uint8_t. */
#define I_NEG(S, T) UN_LOOP(T, T, ID, T, ID, neg_##S(v))
#define I_ABS(S, T) UN_LOOP(T, T, ID, T, ID, (v < (T)1 && v != 0) ? neg_##S(v) : v)
#define I_SIGN(S, T) UN_LOOP(T, T, ID, T, ID, (T)((v > 0) - (v < (T)1 && v != 0)))
#define I_RELU(S, T) UN_LOOP(T, T, ID, T, ID, (v > 0 ? v : 0))

/* EXPR of v in the integer type itself, for the integer dtypes. */
#define INT_MAP(EXPR)                                                                   \
    switch (x->dtype) {                                                                 \
    case BP_U8: UN_LOOP(uint8_t, uint8_t, ID, uint8_t, ID, (uint8_t)(EXPR)); return BP_OK; \
    case BP_I8: UN_LOOP(int8_t, int8_t, ID, int8_t, ID, (int8_t)(EXPR)); return BP_OK; \
    case BP_I32: UN_LOOP(int32_t, int32_t, ID, int32_t, ID, (int32_t)(EXPR)); return BP_OK; \
    case BP_I64: UN_LOOP(int64_t, int64_t, ID, int64_t, ID, (int64_t)(EXPR)); return BP_OK; \
    default: break;                                                                     \
    }                                                                                   \
    break

/* shrink on integers: through double and the cast rules (ops.h). */
static void shrink_int(const bp_view *x, const bp_view *out, double bias, double lambd)
{
    size_t es = bp_dtype_size(x->dtype);
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){out, x});
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            const char *src = bpk_base(x) + (pos[1] + i * it.inner_stride[1]) * (int64_t)es;
            char *dst = bpk_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)es;
            bp_elem_store_f64(out->dtype, dst,
                              bpf_shrink(bp_elem_load_f64(x->dtype, src), bias, lambd));
        }
}

static void square_int(const bp_view *x, const bp_view *out)
{
    size_t es = bp_dtype_size(x->dtype);
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){out, x});
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            const char *src = bpk_base(x) + (pos[1] + i * it.inner_stride[1]) * (int64_t)es;
            char *dst = bpk_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)es;
            uint64_t u = (uint64_t)bp_elem_load_i64(x->dtype, src);
            bp_elem_store_i64(out->dtype, dst, bpk_wrap_int(out->dtype, u * u));
        }
}

/* The unary kind's ops fall in three families, each a switch on the op code
 * below; a family answers BP_ERR_UNSUPPORTED_OP (without a message) for an
 * op or dtype it does not compute, and bpk_unary asks the next.
 *
 * Every family is compiled for each ISA level (BPK_CLONES): the exact ones
 * vectorise, and the libm loops keep the level's encoding (gelu f32 took
 * ~10% longer through the baseline clone).
 *
 * The exact or correctly rounded ones: floats in their own precision
 * (f16/bf16 in float) or in double rounded once; integers wrap. */
BPK_CLONES static bp_status exact_unary(bp_op op, const bp_view *x, const bp_view *out)
{
    switch (op) {
    case BP_OP_NEG: NUMERIC_UN(F_OF(neg, v)(v), I_NEG);
    case BP_OP_ABS: NUMERIC_UN(F_OF(abs, v)(v), I_ABS);
    case BP_OP_SIGN: NUMERIC_UN(F_OF(sign, v)(v), I_SIGN);
    case BP_OP_RELU: NUMERIC_UN(F_OF(relu, v)(v), I_RELU);
    case BP_OP_SQUARE:
        if (!bp_dtype_is_float(x->dtype)) {
            square_int(x, out);
            return BP_OK;
        }
        FLOAT_UN(bpf_square(v));
    case BP_OP_ISNAN:
    case BP_OP_ISINF:
        switch (x->dtype) {
#define CLASSIFY(ST, CT, LD)                                                            \
    if (op == BP_OP_ISNAN)                                                              \
        UN_LOOP(ST, CT, LD, uint8_t, ID, (uint8_t)F_OF(isnan, v)(v));                   \
    else                                                                                \
        UN_LOOP(ST, CT, LD, uint8_t, ID, (uint8_t)F_OF(isinf, v)(v));                   \
    return BP_OK
        case BP_F64: CLASSIFY(double, double, ID);
        case BP_F32: CLASSIFY(float, float, ID);
        case BP_F16: CLASSIFY(uint16_t, float, F16_F);
        case BP_BF16: CLASSIFY(uint16_t, float, BF16_F);
#undef CLASSIFY
        default: break;
        }
        break;
    case BP_OP_LOGICAL_NOT:
        if (x->dtype != BP_BOOL)
            break;
        UN_LOOP(uint8_t, uint8_t, ID, uint8_t, ID, (uint8_t)(v == 0));
        return BP_OK;
    case BP_OP_BITWISE_NOT: INT_MAP(~v);
    case BP_OP_SQRT:
        /* f32 in float: the same bits (sqrt of a float rounded from double
         * equals sqrtf, 53 >= 2 * 24 + 2), at twice the lanes */
        if (x->dtype == BP_F32) {
            UN_LOOP(float, float, ID, float, ID, bpf_sqrt_f(v));
            return BP_OK;
        }
        FLOAT_UN(bpf_sqrt(v));
    case BP_OP_RSQRT: FLOAT_UN(bpf_rsqrt(v));
    case BP_OP_RECIPROCAL: FLOAT_UN(bpf_reciprocal(v));
    case BP_OP_FLOOR: FLOAT_UN(bpf_floor(v));
    case BP_OP_CEIL: FLOAT_UN(bpf_ceil(v));
    case BP_OP_ROUND: FLOAT_UN(bpf_round(v));
    default: break;
    }
    return BP_ERR_UNSUPPORTED_OP;
}

/* The functions of a float through libm: each formula in double, rounded
 * once to the dtype (f16/bf16 included), so the edges are those of the
 * formula. */
BPK_CLONES static bp_status float_unary(bp_op op, const bp_view *x, const bp_view *out)
{
    switch (op) {
    case BP_OP_EXP: FLOAT_UN(bpf_exp(v));
    case BP_OP_LOG: FLOAT_UN(bpf_log(v));
    case BP_OP_SIN: FLOAT_UN(bpf_sin(v));
    case BP_OP_COS: FLOAT_UN(bpf_cos(v));
    case BP_OP_TAN: FLOAT_UN(bpf_tan(v));
    case BP_OP_TANH: FLOAT_UN(bpf_tanh(v));
    case BP_OP_SIGMOID: FLOAT_UN(bpf_sigmoid(v));
    case BP_OP_GELU: FLOAT_UN(bpf_gelu(v));
    case BP_OP_ERF: FLOAT_UN(bpf_erf(v));
    case BP_OP_ACOS: FLOAT_UN(bpf_acos(v));
    case BP_OP_ASIN: FLOAT_UN(bpf_asin(v));
    case BP_OP_ATAN: FLOAT_UN(bpf_atan(v));
    case BP_OP_ACOSH: FLOAT_UN(bpf_acosh(v));
    case BP_OP_ASINH: FLOAT_UN(bpf_asinh(v));
    case BP_OP_ATANH: FLOAT_UN(bpf_atanh(v));
    case BP_OP_SINH: FLOAT_UN(bpf_sinh(v));
    case BP_OP_COSH: FLOAT_UN(bpf_cosh(v));
    case BP_OP_LOG1P: FLOAT_UN(bpf_log1p(v));
    case BP_OP_EXPM1: FLOAT_UN(bpf_expm1(v));
    case BP_OP_SOFTPLUS: FLOAT_UN(bpf_softplus(v));
    case BP_OP_SOFTSIGN: FLOAT_UN(bpf_softsign(v));
    case BP_OP_SILU: FLOAT_UN(bpf_silu(v));
    case BP_OP_MISH: FLOAT_UN(bpf_mish(v));
    default: break;
    }
    return BP_ERR_UNSUPPORTED_OP;
}

/* The functions with parameters (their schema rows in opcodes.h: a0 = p->f[0], a1 =
 * p->f[1]) and hardswish, floats as float_unary's; shrink of an integer
 * through double and the cast rules (ops.h). */
BPK_CLONES static bp_status param_unary(bp_op op, const bp_op_params *p, const bp_view *x,
                                        const bp_view *out)
{
    const double a0 = p->f[0], a1 = p->f[1];
    switch (op) {
    case BP_OP_HARDSWISH: FLOAT_UN(bpf_hardswish(v));
    case BP_OP_ELU: FLOAT_UN(bpf_elu(v, a0));
    case BP_OP_CELU: FLOAT_UN(bpf_celu(v, a0));
    case BP_OP_SELU: FLOAT_UN(bpf_selu(v, a0, a1));
    case BP_OP_LEAKY_RELU: FLOAT_UN(bpf_leaky_relu(v, a0));
    case BP_OP_THRESHOLDED_RELU: FLOAT_UN(bpf_thresholded_relu(v, a0));
    case BP_OP_HARD_SIGMOID: FLOAT_UN(bpf_hard_sigmoid(v, a0, a1));
    case BP_OP_SHRINK:
        if (!bp_dtype_is_float(x->dtype)) {
            shrink_int(x, out, a0, a1);
            return BP_OK;
        }
        FLOAT_UN(bpf_shrink(v, a0, a1));
    default: break;
    }
    return BP_ERR_UNSUPPORTED_OP;
}

bp_status bpk_unary(void *dev, bp_op op, const bp_op_params *p, const bp_view *x,
                    const bp_view *out)
{
    bp_status st = exact_unary(op, x, out);
    if (st == BP_ERR_UNSUPPORTED_OP)
        st = float_unary(op, x, out);
    if (st == BP_ERR_UNSUPPORTED_OP)
        st = param_unary(op, p, x, out);
    if (st == BP_ERR_UNSUPPORTED_OP)
        return bpk_fail(dev, st, "binary: unary op %s not implemented for %s", bp_op_name(op),
                        bp_dtype_name(x->dtype));
    return st;
}

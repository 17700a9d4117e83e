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
    case BP_I16: { IEXPR(i16, int16_t); } return BP_OK;                                 \
    case BP_U16: { IEXPR(u16, uint16_t); } return BP_OK;                                \
    case BP_U32: { IEXPR(u32, uint32_t); } return BP_OK;                                \
    case BP_U64: { IEXPR(u64, uint64_t); } return BP_OK;                                \
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
    case BP_I16: UN_LOOP(int16_t, int16_t, ID, int16_t, ID, (int16_t)(EXPR)); return BP_OK; \
    case BP_U16: UN_LOOP(uint16_t, uint16_t, ID, uint16_t, ID, (uint16_t)(EXPR)); return BP_OK; \
    case BP_U32: UN_LOOP(uint32_t, uint32_t, ID, uint32_t, ID, (uint32_t)(EXPR)); return BP_OK; \
    case BP_U64: UN_LOOP(uint64_t, uint64_t, ID, uint64_t, ID, (uint64_t)(EXPR)); return BP_OK; \
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

/* One function per op, each compiled for every ISA level (BPK_CLONES): the
 * exact ones vectorise, and the libm loops keep the level's encoding (gelu
 * f32 took ~10% longer through the baseline clone). One function per op,
 * not one per family: the compiler's cost grows faster than a function, and
 * three families of every op's loops took it minutes. An op answers
 * BP_ERR_UNSUPPORTED_OP (without a message) for a dtype it does not compute.
 *
 * The parameters are the op's schema row's (opcodes.h): a0 = p->f[0],
 * a1 = p->f[1]. */
#define UN_OP(NAME, ...)                                                                \
    BPK_CLONES static bp_status NAME(const bp_op_params *p, const bp_view *x,           \
                                     const bp_view *out)                                \
    {                                                                                   \
        const double a0 = p->f[0], a1 = p->f[1];                                        \
        (void)a0;                                                                       \
        (void)a1;                                                                       \
        do {                                                                            \
            __VA_ARGS__;                                                                \
        } while (0);                                                                    \
        return BP_ERR_UNSUPPORTED_OP;                                                   \
    }

/* The exact or correctly rounded ones: floats in their own precision
 * (f16/bf16 in float) or in double rounded once; integers wrap. */
UN_OP(un_neg, NUMERIC_UN(F_OF(neg, v)(v), I_NEG))
UN_OP(un_abs, NUMERIC_UN(F_OF(abs, v)(v), I_ABS))
UN_OP(un_sign, NUMERIC_UN(F_OF(sign, v)(v), I_SIGN))
UN_OP(un_relu, NUMERIC_UN(F_OF(relu, v)(v), I_RELU))
UN_OP(un_square,
      if (!bp_dtype_is_float(x->dtype)) {
          square_int(x, out);
          return BP_OK;
      }
      FLOAT_UN(bpf_square(v)))

#define CLASSIFY_LOOP(ST, CT, LD, FN) UN_LOOP(ST, CT, LD, uint8_t, ID, (uint8_t)F_OF(FN, v)(v))
#define CLASSIFY(FN)                                                                    \
    switch (x->dtype) {                                                                 \
    case BP_F64: CLASSIFY_LOOP(double, double, ID, FN); return BP_OK;                   \
    case BP_F32: CLASSIFY_LOOP(float, float, ID, FN); return BP_OK;                     \
    case BP_F16: CLASSIFY_LOOP(uint16_t, float, F16_F, FN); return BP_OK;               \
    case BP_BF16: CLASSIFY_LOOP(uint16_t, float, BF16_F, FN); return BP_OK;             \
    default: break;                                                                     \
    }                                                                                   \
    break
UN_OP(un_isnan, CLASSIFY(isnan))
UN_OP(un_isinf, CLASSIFY(isinf))
#undef CLASSIFY
#undef CLASSIFY_LOOP
UN_OP(un_logical_not,
      if (x->dtype != BP_BOOL)
          break;
      UN_LOOP(uint8_t, uint8_t, ID, uint8_t, ID, (uint8_t)(v == 0));
      return BP_OK)
UN_OP(un_bitwise_not, INT_MAP(~v))
/* f32 in float: the same bits (sqrt of a float rounded from double equals
 * sqrtf, 53 >= 2 * 24 + 2), at twice the lanes */
UN_OP(un_sqrt,
      if (x->dtype == BP_F32) {
          UN_LOOP(float, float, ID, float, ID, bpf_sqrt_f(v));
          return BP_OK;
      }
      FLOAT_UN(bpf_sqrt(v)))
UN_OP(un_rsqrt, FLOAT_UN(bpf_rsqrt(v)))
UN_OP(un_reciprocal, FLOAT_UN(bpf_reciprocal(v)))
UN_OP(un_floor, FLOAT_UN(bpf_floor(v)))
UN_OP(un_ceil, FLOAT_UN(bpf_ceil(v)))
UN_OP(un_round, FLOAT_UN(bpf_round(v)))

/* The functions of a float through libm: each formula in double, rounded
 * once to the dtype (f16/bf16 included), so the edges are those of the
 * formula. */
UN_OP(un_exp, FLOAT_UN(bpf_exp(v)))
UN_OP(un_log, FLOAT_UN(bpf_log(v)))
UN_OP(un_sin, FLOAT_UN(bpf_sin(v)))
UN_OP(un_cos, FLOAT_UN(bpf_cos(v)))
UN_OP(un_tan, FLOAT_UN(bpf_tan(v)))
UN_OP(un_tanh, FLOAT_UN(bpf_tanh(v)))
UN_OP(un_sigmoid, FLOAT_UN(bpf_sigmoid(v)))
UN_OP(un_gelu, FLOAT_UN(bpf_gelu(v)))
UN_OP(un_erf, FLOAT_UN(bpf_erf(v)))
UN_OP(un_acos, FLOAT_UN(bpf_acos(v)))
UN_OP(un_asin, FLOAT_UN(bpf_asin(v)))
UN_OP(un_atan, FLOAT_UN(bpf_atan(v)))
UN_OP(un_acosh, FLOAT_UN(bpf_acosh(v)))
UN_OP(un_asinh, FLOAT_UN(bpf_asinh(v)))
UN_OP(un_atanh, FLOAT_UN(bpf_atanh(v)))
UN_OP(un_sinh, FLOAT_UN(bpf_sinh(v)))
UN_OP(un_cosh, FLOAT_UN(bpf_cosh(v)))
UN_OP(un_log1p, FLOAT_UN(bpf_log1p(v)))
UN_OP(un_expm1, FLOAT_UN(bpf_expm1(v)))
UN_OP(un_softplus, FLOAT_UN(bpf_softplus(v)))
UN_OP(un_softsign, FLOAT_UN(bpf_softsign(v)))
UN_OP(un_silu, FLOAT_UN(bpf_silu(v)))
UN_OP(un_mish, FLOAT_UN(bpf_mish(v)))

/* The functions with parameters, and hardswish, floats as the libm ones;
 * shrink of an integer through double and the cast rules (ops.h). */
UN_OP(un_hardswish, FLOAT_UN(bpf_hardswish(v)))
UN_OP(un_elu, FLOAT_UN(bpf_elu(v, a0)))
UN_OP(un_celu, FLOAT_UN(bpf_celu(v, a0)))
UN_OP(un_selu, FLOAT_UN(bpf_selu(v, a0, a1)))
UN_OP(un_leaky_relu, FLOAT_UN(bpf_leaky_relu(v, a0)))
UN_OP(un_thresholded_relu, FLOAT_UN(bpf_thresholded_relu(v, a0)))
UN_OP(un_hard_sigmoid, FLOAT_UN(bpf_hard_sigmoid(v, a0, a1)))
UN_OP(un_shrink,
      if (!bp_dtype_is_float(x->dtype)) {
          shrink_int(x, out, a0, a1);
          return BP_OK;
      }
      FLOAT_UN(bpf_shrink(v, a0, a1)))

typedef bp_status (*un_fn)(const bp_op_params *, const bp_view *, const bp_view *);

/* Each op's function by its code; NULL for the codes of other kinds. */
static const un_fn un_kernels[BP_OP_COUNT] = {
    [BP_OP_NEG] = un_neg,
    [BP_OP_ABS] = un_abs,
    [BP_OP_SIGN] = un_sign,
    [BP_OP_RELU] = un_relu,
    [BP_OP_SQUARE] = un_square,
    [BP_OP_ISNAN] = un_isnan,
    [BP_OP_ISINF] = un_isinf,
    [BP_OP_LOGICAL_NOT] = un_logical_not,
    [BP_OP_BITWISE_NOT] = un_bitwise_not,
    [BP_OP_SQRT] = un_sqrt,
    [BP_OP_RSQRT] = un_rsqrt,
    [BP_OP_RECIPROCAL] = un_reciprocal,
    [BP_OP_FLOOR] = un_floor,
    [BP_OP_CEIL] = un_ceil,
    [BP_OP_ROUND] = un_round,
    [BP_OP_EXP] = un_exp,
    [BP_OP_LOG] = un_log,
    [BP_OP_SIN] = un_sin,
    [BP_OP_COS] = un_cos,
    [BP_OP_TAN] = un_tan,
    [BP_OP_TANH] = un_tanh,
    [BP_OP_SIGMOID] = un_sigmoid,
    [BP_OP_GELU] = un_gelu,
    [BP_OP_ERF] = un_erf,
    [BP_OP_ACOS] = un_acos,
    [BP_OP_ASIN] = un_asin,
    [BP_OP_ATAN] = un_atan,
    [BP_OP_ACOSH] = un_acosh,
    [BP_OP_ASINH] = un_asinh,
    [BP_OP_ATANH] = un_atanh,
    [BP_OP_SINH] = un_sinh,
    [BP_OP_COSH] = un_cosh,
    [BP_OP_LOG1P] = un_log1p,
    [BP_OP_EXPM1] = un_expm1,
    [BP_OP_SOFTPLUS] = un_softplus,
    [BP_OP_SOFTSIGN] = un_softsign,
    [BP_OP_SILU] = un_silu,
    [BP_OP_MISH] = un_mish,
    [BP_OP_HARDSWISH] = un_hardswish,
    [BP_OP_ELU] = un_elu,
    [BP_OP_CELU] = un_celu,
    [BP_OP_SELU] = un_selu,
    [BP_OP_LEAKY_RELU] = un_leaky_relu,
    [BP_OP_THRESHOLDED_RELU] = un_thresholded_relu,
    [BP_OP_HARD_SIGMOID] = un_hard_sigmoid,
    [BP_OP_SHRINK] = un_shrink,
};

bp_status bpk_unary(void *dev, bp_op op, const bp_op_params *p, const bp_view *x,
                    const bp_view *out)
{
    un_fn fn = (unsigned)op < (unsigned)BP_OP_COUNT ? un_kernels[op] : NULL;
    bp_status st = fn ? fn(p, x, out) : BP_ERR_UNSUPPORTED_OP;
    if (st == BP_ERR_UNSUPPORTED_OP)
        return bpk_fail(dev, st, "binary: unary op %s not implemented for %s", bp_op_name(op),
                        bp_dtype_name(x->dtype));
    return st;
}

/* The elementwise kernels: every op of the UNARY, BINARY, WHERE and CLIP
 * kinds, one kernel per kind (bpk_unary, bpk_binary, bpk_where,
 * bpk_op_clip), each switching on the op code.
 *
 * The float arithmetic of each op is its formula in elementwise_formulas.h
 * (the one the cuda kernels and blas_cpu's vector kernels also read); what
 * is here is the loops around it. Each op expands to one typed loop per
 * dtype (the dtype switch sits outside the loop) with a unit-stride fast
 * path the compiler can vectorize. A loop is described by its storage type
 * ST, the compute type CT, a load LD: ST -> CT and a store SD: CT -> output
 * type; f16/bf16 store uint16_t and compute in float (exact for + - * /
 * since float has more than 2p+2 bits) or in double for the math functions,
 * rounding once at the end. Integer arithmetic runs in unsigned types so
 * that overflow wraps instead of being undefined. */
#include <math.h>

#include "elementwise_formulas.h"
#include "half_floats.h"
#include "kernels.h"

#define ID(v) (v)
#define NZ(v) ((v) != 0)
/* f16 through half_floats.h's branch-free conversions (the cast rules'
 * bits), so that the loops vectorise: dtype.h's branchy ones had an f16 add
 * of 2^20 elements at ~10 ns an element. One rounding to f16 from float or
 * double. */
#define F16_F(v) f16_f32(v)
#define BF16_F(v) bp_bf16_to_f32(v)
#define F_F16(v) _Generic((v), float: f32_f16, default: f64_f16)(v)
#define F_BF16(v) bp_f64_to_bf16((double)(v))
#define TO_F32(v) ((float)(v))
#define TO_F64(v) ((double)(v))

/* out[i] = SD(EXPR) with `v` = LD(x[i]) */
#define UN_LOOP(ST, CT, LD, OT, SD, EXPR)                                               \
    do {                                                                                \
        bpk_iter it_;                                                                   \
        int64_t pos_[2];                                                                \
        bpk_iter_init(&it_, 2, (const bp_view *[]){out, x});                            \
        OT *ob_ = (OT *)bpk_base(out);                                                  \
        const ST *xb_ = (const ST *)bpk_base(x);                                        \
        while (bpk_iter_next(&it_, pos_)) {                                             \
            OT *restrict o_ = ob_ + pos_[0];                                            \
            const ST *restrict px_ = xb_ + pos_[1];                                     \
            int64_t n_ = it_.inner, so_ = it_.inner_stride[0], sx_ = it_.inner_stride[1]; \
            if (so_ == 1 && sx_ == 1) {                                                 \
                for (int64_t i_ = 0; i_ < n_; i_++) {                                   \
                    CT v = LD(px_[i_]);                                                 \
                    o_[i_] = SD(EXPR);                                                  \
                }                                                                       \
            } else {                                                                    \
                for (int64_t i_ = 0; i_ < n_; i_++) {                                   \
                    CT v = LD(px_[i_ * sx_]);                                           \
                    o_[i_ * so_] = SD(EXPR);                                            \
                }                                                                       \
            }                                                                           \
        }                                                                               \
    } while (0)

/* out[i] = SD(EXPR) with `p` = LD(a[i]), `q` = LD(b[i]); the fast paths cover
 * dense operands and a broadcast scalar on either side. */
#define BIN_LOOP(ST, CT, LD, OT, SD, EXPR)                                              \
    do {                                                                                \
        bpk_iter it_;                                                                   \
        int64_t pos_[3];                                                                \
        bpk_iter_init(&it_, 3, (const bp_view *[]){out, a, b});                         \
        OT *ob_ = (OT *)bpk_base(out);                                                  \
        const ST *ab_ = (const ST *)bpk_base(a), *bb_ = (const ST *)bpk_base(b);        \
        while (bpk_iter_next(&it_, pos_)) {                                             \
            OT *restrict o_ = ob_ + pos_[0];                                            \
            const ST *restrict pa_ = ab_ + pos_[1], *restrict pb_ = bb_ + pos_[2];      \
            int64_t n_ = it_.inner, so_ = it_.inner_stride[0];                          \
            int64_t sa_ = it_.inner_stride[1], sb_ = it_.inner_stride[2];               \
            if (so_ == 1 && sa_ == 1 && sb_ == 1) {                                     \
                for (int64_t i_ = 0; i_ < n_; i_++) {                                   \
                    CT p = LD(pa_[i_]), q = LD(pb_[i_]);                                \
                    o_[i_] = SD(EXPR);                                                  \
                }                                                                       \
            } else if (so_ == 1 && sa_ == 1 && sb_ == 0) {                              \
                const CT q = LD(pb_[0]);                                                \
                for (int64_t i_ = 0; i_ < n_; i_++) {                                   \
                    CT p = LD(pa_[i_]);                                                 \
                    o_[i_] = SD(EXPR);                                                  \
                }                                                                       \
            } else if (so_ == 1 && sa_ == 0 && sb_ == 1) {                              \
                const CT p = LD(pa_[0]);                                                \
                for (int64_t i_ = 0; i_ < n_; i_++) {                                   \
                    CT q = LD(pb_[i_]);                                                 \
                    o_[i_] = SD(EXPR);                                                  \
                }                                                                       \
            } else {                                                                    \
                for (int64_t i_ = 0; i_ < n_; i_++) {                                   \
                    CT p = LD(pa_[i_ * sa_]), q = LD(pb_[i_ * sb_]);                    \
                    o_[i_ * so_] = SD(EXPR);                                            \
                }                                                                       \
            }                                                                           \
        }                                                                               \
    } while (0)

/* The same with only the dense fast path: for dtypes and ops that do not
 * vectorize anyway (f16/bf16 conversions, libm calls, bytes), which keeps the
 * amount of generated code (and the compile time) down. */
#define BIN_LOOP_S(ST, CT, LD, OT, SD, EXPR)                                            \
    do {                                                                                \
        bpk_iter it_;                                                                   \
        int64_t pos_[3];                                                                \
        bpk_iter_init(&it_, 3, (const bp_view *[]){out, a, b});                         \
        OT *ob_ = (OT *)bpk_base(out);                                                  \
        const ST *ab_ = (const ST *)bpk_base(a), *bb_ = (const ST *)bpk_base(b);        \
        while (bpk_iter_next(&it_, pos_)) {                                             \
            OT *restrict o_ = ob_ + pos_[0];                                            \
            const ST *restrict pa_ = ab_ + pos_[1], *restrict pb_ = bb_ + pos_[2];      \
            int64_t n_ = it_.inner, so_ = it_.inner_stride[0];                          \
            int64_t sa_ = it_.inner_stride[1], sb_ = it_.inner_stride[2];               \
            if (so_ == 1 && sa_ == 1 && sb_ == 1) {                                     \
                for (int64_t i_ = 0; i_ < n_; i_++) {                                   \
                    CT p = LD(pa_[i_]), q = LD(pb_[i_]);                                \
                    o_[i_] = SD(EXPR);                                                  \
                }                                                                       \
            } else {                                                                    \
                for (int64_t i_ = 0; i_ < n_; i_++) {                                   \
                    CT p = LD(pa_[i_ * sa_]), q = LD(pb_[i_ * sb_]);                    \
                    o_[i_ * so_] = SD(EXPR);                                            \
                }                                                                       \
            }                                                                           \
        }                                                                               \
    } while (0)

/* ---- integer helpers: wrap, never trap ---------------------------------- */

#define BPK_INT_OPS(S, T, UT)                                                     \
    static inline T add_##S(T a, T b) { return (T)((UT)a + (UT)b); }                   \
    static inline T sub_##S(T a, T b) { return (T)((UT)a - (UT)b); }                   \
    static inline T mul_##S(T a, T b) { return (T)((UT)a * (UT)b); }                   \
    static inline T neg_##S(T a) { return (T)((UT)0 - (UT)a); }                         \
    static inline T div_##S(T a, T b)                                                   \
    {                                                                                   \
        if (b == 0)                                                                     \
            return 0;                                                                   \
        if (b == -1) /* TMIN / -1 overflows: wrap to TMIN */                            \
            return neg_##S(a);                                                          \
        return (T)(a / b);                                                              \
    }                                                                                   \
    static inline T mod_##S(T a, T b)                                                   \
    {                                                                                   \
        if (b == 0 || b == -1) /* TMIN % -1 is undefined in C; the answer is 0 */       \
            return 0;                                                                   \
        T r = (T)(a % b);                                                               \
        return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;                       \
    }                                                                                   \
    static inline T pow_##S(T a, T e)                                                   \
    {                                                                                   \
        if (e < 0)                                                                      \
            return a == 1 ? 1 : a == -1 ? ((e & 1) ? (T)-1 : 1) : 0;                    \
        UT r = 1, x = (UT)a;                                                            \
        for (; e > 0; e >>= 1) {                                                        \
            if (e & 1)                                                                  \
                r = (UT)(r * x);                                                        \
            x = (UT)(x * x);                                                            \
        }                                                                               \
        return (T)r;                                                                    \
    }

/* UT is at least 32 bits wide so that uint8_t operands are not promoted to
 * (signed) int before multiplying. */
BPK_INT_OPS(i8, int8_t, uint32_t)
BPK_INT_OPS(i32, int32_t, uint32_t)
BPK_INT_OPS(i64, int64_t, uint64_t)

static inline uint8_t add_u8(uint8_t a, uint8_t b) { return (uint8_t)(a + b); }
static inline uint8_t sub_u8(uint8_t a, uint8_t b) { return (uint8_t)(a - b); }
static inline uint8_t mul_u8(uint8_t a, uint8_t b) { return (uint8_t)((uint32_t)a * b); }
static inline uint8_t neg_u8(uint8_t a) { return (uint8_t)(0u - a); }
static inline uint8_t div_u8(uint8_t a, uint8_t b) { return b ? (uint8_t)(a / b) : 0; }
static inline uint8_t mod_u8(uint8_t a, uint8_t b) { return b ? (uint8_t)(a % b) : 0; }
static inline uint8_t pow_u8(uint8_t a, uint8_t e)
{
    uint32_t r = 1, x = a;
    for (; e > 0; e >>= 1) {
        if (e & 1)
            r = (r * x) & 0xffu;
        x = (x * x) & 0xffu;
    }
    return (uint8_t)r;
}


/* formula fn of elementwise_formulas.h in the compute type of v: float's
 * (bpf_fn_f) or double's (bpf_fn) */
#define F_OF(fn, v) _Generic((v), float: bpf_##fn##_f, default: bpf_##fn)

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

/* ---- binary ------------------------------------------------------------- */

/* Arithmetic on every numeric dtype. FEXPR computes in CT (float for
 * f16/bf16/f32, double for f64); IFN is the integer helper's stem. */
#define NUMERIC_BIN_L(LOOP, FEXPR, IFN)                                                 \
    switch (dt) {                                                                       \
    case BP_F64: LOOP(double, double, ID, double, ID, FEXPR); return BP_OK;            \
    case BP_F32: LOOP(float, float, ID, float, ID, FEXPR); return BP_OK;                \
    case BP_F16: BIN_LOOP_S(uint16_t, float, F16_F, uint16_t, F_F16, FEXPR); return BP_OK; \
    case BP_BF16: BIN_LOOP_S(uint16_t, float, BF16_F, uint16_t, F_BF16, FEXPR); return BP_OK; \
    case BP_I64: LOOP(int64_t, int64_t, ID, int64_t, ID, IFN##_i64(p, q)); return BP_OK; \
    case BP_I32: LOOP(int32_t, int32_t, ID, int32_t, ID, IFN##_i32(p, q)); return BP_OK; \
    case BP_I8: BIN_LOOP_S(int8_t, int8_t, ID, int8_t, ID, IFN##_i8(p, q)); return BP_OK;   \
    case BP_U8: BIN_LOOP_S(uint8_t, uint8_t, ID, uint8_t, ID, IFN##_u8(p, q)); return BP_OK; \
    default: break;                                                                     \
    }                                                                                   \
    break
#define NUMERIC_BIN(FEXPR, IFN) NUMERIC_BIN_L(BIN_LOOP, FEXPR, IFN)

/* The float dtypes' cases: EXPR of double p and q, rounded once; f64 and
 * f32 by LOOP (BIN_LOOP has the broadcast fast paths), f16 and bf16 by
 * BIN_LOOP_S. */
#define FLOAT_CASES_D(LOOP, EXPR)                                                       \
    case BP_F64: LOOP(double, double, ID, double, ID, EXPR); return BP_OK;             \
    case BP_F32: LOOP(float, double, TO_F64, float, TO_F32, EXPR); return BP_OK;       \
    case BP_F16: BIN_LOOP_S(uint16_t, double, F16_F, uint16_t, F_F16, EXPR); return BP_OK; \
    case BP_BF16: BIN_LOOP_S(uint16_t, double, BF16_F, uint16_t, F_BF16, EXPR); return BP_OK;

/* As NUMERIC_BIN, but floats compute in double and round once. */
#define NUMERIC_BIN_D(FEXPR, IFN)                                                       \
    switch (dt) {                                                                       \
    FLOAT_CASES_D(BIN_LOOP_S, FEXPR)                                                    \
    default: NUMERIC_BIN_L(BIN_LOOP_S, FEXPR, IFN);                                     \
    }                                                                                   \
    break

/* Comparisons on every dtype -> bool; integers compare exactly in their own
 * type, bool compares as 0/1, f16/bf16 exactly as float. */
#define COMPARE_BIN(OPR)                                                                \
    switch (dt) {                                                                       \
    case BP_BOOL: BIN_LOOP_S(uint8_t, int, NZ, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_U8: BIN_LOOP_S(uint8_t, uint8_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_I8: BIN_LOOP_S(int8_t, int8_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_I32: BIN_LOOP(int32_t, int32_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_I64: BIN_LOOP(int64_t, int64_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_F16: BIN_LOOP_S(uint16_t, float, F16_F, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_BF16: BIN_LOOP_S(uint16_t, float, BF16_F, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_F32: BIN_LOOP(float, float, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_F64: BIN_LOOP(double, double, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    }                                                                                   \
    break

#define LOGICAL_BIN(EXPR)                                                               \
    if (dt != BP_BOOL)                                                                  \
        break;                                                                          \
    BIN_LOOP_S(uint8_t, int, NZ, uint8_t, ID, (uint8_t)(EXPR));                           \
    return BP_OK

#define max_i64(p, q) (p > q ? p : q)
#define max_i32 max_i64
#define max_i8 max_i64
#define max_u8 max_i64
#define min_i64(p, q) (p < q ? p : q)
#define min_i32 min_i64
#define min_i8 min_i64
#define min_u8 min_i64

/* ---- integer helpers of fmod, prelu, the bitwise ops and the bit shifts:
 * exact in int64, wrapped to the dtype (two's complement) ---------------- */

static inline int dtype_bits(bp_dtype dt) { return (int)bp_dtype_size(dt) * 8; }

/* a % b truncating (C), with x % 0 and x % -1 (MIN % -1 overflows in C) 0. */
static inline int64_t fmod_i(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }

static inline int64_t shift_left(bp_dtype dt, int64_t a, int64_t b)
{
    if (b < 0 || b >= dtype_bits(dt))
        return 0;
    return bpk_wrap_int(dt, (uint64_t)a << b);
}

/* Arithmetic for signed values (ones shifted in), spelled without relying on
 * the implementation-defined >> of a negative number. */
static inline int64_t shift_right(bp_dtype dt, int64_t a, int64_t b)
{
    if (b < 0 || b >= dtype_bits(dt))
        return a < 0 ? -1 : 0;
    return a < 0 ? ~(~a >> b) : a >> b;
}

#define TO_I64(v) ((int64_t)(v))
#define TO_I32(v) ((int32_t)(v))
#define TO_I8(v) ((int8_t)(v))
#define TO_U8(v) ((uint8_t)(v))

/* EXPR of int64 p and q on every integer dtype; EXPR's value is already in
 * the dtype's range. */
#define INT_CASES(EXPR)                                                                 \
    case BP_I64: BIN_LOOP(int64_t, int64_t, ID, int64_t, ID, EXPR); return BP_OK;      \
    case BP_I32: BIN_LOOP(int32_t, int64_t, TO_I64, int32_t, TO_I32, EXPR); return BP_OK; \
    case BP_I8: BIN_LOOP_S(int8_t, int64_t, TO_I64, int8_t, TO_I8, EXPR); return BP_OK; \
    case BP_U8: BIN_LOOP_S(uint8_t, int64_t, TO_I64, uint8_t, TO_U8, EXPR); return BP_OK;
#define INT_BIN(EXPR)                                                                   \
    switch (dt) {                                                                       \
    INT_CASES(EXPR)                                                                     \
    default: break;                                                                     \
    }                                                                                   \
    break

/* FEXPR of double p and q on every float dtype, rounded once; IEXPR as
 * INT_BIN's. */
#define FLOAT_D_INT_BIN(FEXPR, IEXPR)                                                   \
    switch (dt) {                                                                       \
    FLOAT_CASES_D(BIN_LOOP, FEXPR)                                                      \
    INT_CASES(IEXPR)                                                                    \
    default: break;                                                                     \
    }                                                                                   \
    break

/* One typed loop per op and dtype (the op and the dtype chosen once, not per
 * element), so that the cheap ones vectorise. Binary ops take no
 * parameters today; p is the op entry's, for the first that will. */
BPK_CLONES bp_status bpk_binary(void *dev, bp_op op, const bp_op_params *p_, const bp_view *a,
                                const bp_view *b, const bp_view *out)
{
    (void)p_;
    bp_dtype dt = a->dtype;
    switch (op) {
    case BP_OP_ADD: NUMERIC_BIN(F_OF(add, p)(p, q), add);
    case BP_OP_SUB: NUMERIC_BIN(F_OF(sub, p)(p, q), sub);
    case BP_OP_MUL: NUMERIC_BIN(F_OF(mul, p)(p, q), mul);
    case BP_OP_DIV: NUMERIC_BIN(F_OF(div, p)(p, q), div);
    case BP_OP_MAXIMUM: NUMERIC_BIN(F_OF(maximum, p)(p, q), max);
    case BP_OP_MINIMUM: NUMERIC_BIN(F_OF(minimum, p)(p, q), min);
    case BP_OP_POW: NUMERIC_BIN_D(bpf_pow(p, q), pow);
    case BP_OP_MOD: NUMERIC_BIN_L(BIN_LOOP_S, F_OF(mod, p)(p, q), mod);
    case BP_OP_FMOD: FLOAT_D_INT_BIN(bpf_fmod(p, q), fmod_i(p, q));
    case BP_OP_PRELU:
        FLOAT_D_INT_BIN(bpf_prelu(p, q), p < 0 ? bpk_wrap_int(dt, (uint64_t)p * (uint64_t)q) : p);
    case BP_OP_EQ: COMPARE_BIN(==);
    case BP_OP_NE: COMPARE_BIN(!=);
    case BP_OP_LT: COMPARE_BIN(<);
    case BP_OP_LE: COMPARE_BIN(<=);
    case BP_OP_GT: COMPARE_BIN(>);
    case BP_OP_GE: COMPARE_BIN(>=);
    case BP_OP_LOGICAL_AND: LOGICAL_BIN(p && q);
    case BP_OP_LOGICAL_OR: LOGICAL_BIN(p || q);
    case BP_OP_LOGICAL_XOR: LOGICAL_BIN(p != q);
    case BP_OP_BITWISE_AND: INT_BIN(p & q);
    case BP_OP_BITWISE_OR: INT_BIN(p | q);
    case BP_OP_BITWISE_XOR: INT_BIN(bpk_wrap_int(dt, (uint64_t)(p ^ q)));
    case BP_OP_BITSHIFT_LEFT: INT_BIN(shift_left(dt, p, q));
    case BP_OP_BITSHIFT_RIGHT: INT_BIN(shift_right(dt, p, q));
    default: break;
    }
    return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP, "binary: binary op %s not implemented for %s",
                    bp_op_name(op), bp_dtype_name(dt));
}

/* ---- where -------------------------------------------------------------- */

/* Moves elements as raw bits of their size; bool values are normalised to 0/1. */
#define WHERE_LOOP(T, NORM)                                                             \
    do {                                                                                \
        bpk_iter it_;                                                                   \
        int64_t pos_[4];                                                                \
        bpk_iter_init(&it_, 4, (const bp_view *[]){out, cond, a, b});                   \
        T *ob_ = (T *)bpk_base(out);                                                    \
        const uint8_t *cb_ = (const uint8_t *)bpk_base(cond);                           \
        const T *ab_ = (const T *)bpk_base(a), *bb_ = (const T *)bpk_base(b);           \
        while (bpk_iter_next(&it_, pos_)) {                                             \
            T *restrict o_ = ob_ + pos_[0];                                             \
            const uint8_t *restrict pc_ = cb_ + pos_[1];                                \
            const T *restrict pa_ = ab_ + pos_[2], *restrict pb_ = bb_ + pos_[3];       \
            int64_t n_ = it_.inner, so_ = it_.inner_stride[0], sc_ = it_.inner_stride[1]; \
            int64_t sa_ = it_.inner_stride[2], sb_ = it_.inner_stride[3];               \
            if (so_ == 1 && sc_ == 1 && sa_ == 1 && sb_ == 1) {                         \
                for (int64_t i_ = 0; i_ < n_; i_++)                                     \
                    o_[i_] = NORM(pc_[i_] ? pa_[i_] : pb_[i_]);                         \
            } else {                                                                    \
                for (int64_t i_ = 0; i_ < n_; i_++)                                     \
                    o_[i_ * so_] = NORM(pc_[i_ * sc_] ? pa_[i_ * sa_] : pb_[i_ * sb_]); \
            }                                                                           \
        }                                                                               \
    } while (0)

#define NZ_U8(v) ((uint8_t)((v) != 0))

BPK_CLONES bp_status bpk_where(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
                    const bp_view *out)
{
    if (out->dtype == BP_BOOL) {
        WHERE_LOOP(uint8_t, NZ_U8);
        return BP_OK;
    }
    switch (bp_dtype_size(out->dtype)) {
    case 1: WHERE_LOOP(uint8_t, ID); return BP_OK;
    case 2: WHERE_LOOP(uint16_t, ID); return BP_OK;
    case 4: WHERE_LOOP(uint32_t, ID); return BP_OK;
    case 8: WHERE_LOOP(uint64_t, ID); return BP_OK;
    default: break;
    }
    return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP, "binary: where not implemented for %s",
                    bp_dtype_name(out->dtype));
}

/* ---- clip ---------------------------------------------------------------------- */

/* min(max(x, lo), hi) with NaN-propagating max and min (bp_maximum's rule):
 * a NaN x stays NaN, a NaN bound gives NaN. Floats in double (a selection:
 * exact), integers in int64. */
bp_status bpk_op_clip(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)dev, (void)op, (void)p, (void)n_in, (void)n_out;
    const bp_view *x = in[0], *lo = in[1], *hi = in[2], *out = out_v[0];
    /* an absent bound is walked as x itself and ignored */
    const bp_view *vs[4] = {out, x, lo ? lo : x, hi ? hi : x};
    bool is_float = bp_dtype_is_float(x->dtype);
    size_t es = bp_dtype_size(x->dtype);
    bpk_iter it;
    int64_t pos[4];
    bpk_iter_init(&it, 4, vs);
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            const char *e[4];
            for (int j = 1; j < 4; j++)
                e[j] = bpk_base(vs[j]) + (pos[j] + i * it.inner_stride[j]) * (int64_t)es;
            char *dst = bpk_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)es;
            if (is_float) {
                double v = bp_elem_load_f64(x->dtype, e[1]);
                if (lo) {
                    double l = bp_elem_load_f64(x->dtype, e[2]);
                    v = (v != v || l != l) ? (v != v ? v : l) : v < l ? l : v;
                }
                if (hi) {
                    double h = bp_elem_load_f64(x->dtype, e[3]);
                    v = (v != v || h != h) ? (v != v ? v : h) : v > h ? h : v;
                }
                bp_elem_store_f64(out->dtype, dst, v);
            } else {
                int64_t v = bp_elem_load_i64(x->dtype, e[1]);
                if (lo) {
                    int64_t l = bp_elem_load_i64(x->dtype, e[2]);
                    v = v < l ? l : v;
                }
                if (hi) {
                    int64_t h = bp_elem_load_i64(x->dtype, e[3]);
                    v = v > h ? h : v;
                }
                bp_elem_store_i64(out->dtype, dst, v);
            }
        }
    return BP_OK;
}

/* Unary, binary and where kernels.
 *
 * Each op expands to one typed loop per dtype (the dtype switch sits outside
 * the loop) with a unit-stride fast path the compiler can vectorize. A loop is
 * described by its storage type ST, the compute type CT, a load LD: ST -> CT
 * and a store SD: CT -> output type; f16/bf16 store uint16_t and compute in
 * float (exact for + - * / since float has more than 2p+2 bits) or in double
 * for the math functions, rounding once at the end. Integer arithmetic runs in
 * unsigned types so that overflow wraps instead of being undefined. */
#include <math.h>

#include "binary.h"

#define ID(v) (v)
#define NZ(v) ((v) != 0)
#define F16_F(v) bp_f16_to_f32(v)
#define BF16_F(v) bp_bf16_to_f32(v)
#define F_F16(v) bp_f64_to_f16((double)(v)) /* one rounding from float or double */
#define F_BF16(v) bp_f64_to_bf16((double)(v))
#define TO_F32(v) ((float)(v))
#define TO_F64(v) ((double)(v))

/* out[i] = SD(EXPR) with `v` = LD(x[i]) */
#define UN_LOOP(ST, CT, LD, OT, SD, EXPR)                                               \
    do {                                                                                \
        bpb_iter it_;                                                                   \
        int64_t pos_[2];                                                                \
        bpb_iter_init(&it_, 2, (const bp_view *[]){out, x});                            \
        OT *ob_ = (OT *)bpb_base(out);                                                  \
        const ST *xb_ = (const ST *)bpb_base(x);                                        \
        while (bpb_iter_next(&it_, pos_)) {                                             \
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
        bpb_iter it_;                                                                   \
        int64_t pos_[3];                                                                \
        bpb_iter_init(&it_, 3, (const bp_view *[]){out, a, b});                         \
        OT *ob_ = (OT *)bpb_base(out);                                                  \
        const ST *ab_ = (const ST *)bpb_base(a), *bb_ = (const ST *)bpb_base(b);        \
        while (bpb_iter_next(&it_, pos_)) {                                             \
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
        bpb_iter it_;                                                                   \
        int64_t pos_[3];                                                                \
        bpb_iter_init(&it_, 3, (const bp_view *[]){out, a, b});                         \
        OT *ob_ = (OT *)bpb_base(out);                                                  \
        const ST *ab_ = (const ST *)bpb_base(a), *bb_ = (const ST *)bpb_base(b);        \
        while (bpb_iter_next(&it_, pos_)) {                                             \
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

#define BPB_INT_OPS(S, T, UT)                                                     \
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
BPB_INT_OPS(i8, int8_t, uint32_t)
BPB_INT_OPS(i32, int32_t, uint32_t)
BPB_INT_OPS(i64, int64_t, uint64_t)

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

/* ---- float helpers ------------------------------------------------------ */

/* Python/NumPy modulo: the result takes the divisor's sign; x mod 0 is NaN. */
static inline double mod_f(double a, double b)
{
    double r = fmod(a, b);
    if (b == 0.0)
        return r;
    if (r != 0.0) {
        if ((r < 0.0) != (b < 0.0))
            r += b;
    } else {
        r = copysign(0.0, b);
    }
    return r;
}

/* The same in float: f32/f16/bf16 round r + b once, in float, like NumPy. */
static inline float mod_ff(float a, float b)
{
    float r = fmodf(a, b);
    if (b == 0.0f)
        return r;
    if (r != 0.0f) {
        if ((r < 0.0f) != (b < 0.0f))
            r += b;
    } else {
        r = copysignf(0.0f, b);
    }
    return r;
}

#define MOD_F(p, q) _Generic((p), float: mod_ff, default: mod_f)(p, q)

static inline double sigmoid_f(double v) { return 1.0 / (1.0 + exp(-v)); }
static inline double gelu_f(double v) { return 0.5 * v * (1.0 + erf(v * 0.70710678118654752440)); }
static inline double sign_f(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : v; } /* keeps NaN, +-0 */
static inline double relu_f(double v) { return (v > 0 || v != v) ? v : 0.0; }    /* keeps NaN */

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

BPB_CLONES bp_status bpb_unary(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    switch (op) {
    case BP_OP_NEG: NUMERIC_UN(-v, I_NEG);
    case BP_OP_ABS: NUMERIC_UN(fabs(v), I_ABS);
    case BP_OP_SIGN: NUMERIC_UN(sign_f(v), I_SIGN);
    case BP_OP_RELU: NUMERIC_UN(relu_f(v), I_RELU);
    case BP_OP_EXP: FLOAT_UN(exp(v));
    case BP_OP_LOG: FLOAT_UN(log(v));
    case BP_OP_SQRT:
        /* f32 in float: the same bits (sqrt of a float rounded from double
         * equals sqrtf, 53 >= 2 * 24 + 2), at twice the lanes */
        if (x->dtype == BP_F32) {
            UN_LOOP(float, float, ID, float, ID, sqrtf(v));
            return BP_OK;
        }
        FLOAT_UN(sqrt(v));
    case BP_OP_RSQRT: FLOAT_UN(1.0 / sqrt(v));
    case BP_OP_RECIPROCAL: FLOAT_UN(1.0 / v);
    case BP_OP_SIN: FLOAT_UN(sin(v));
    case BP_OP_COS: FLOAT_UN(cos(v));
    case BP_OP_TAN: FLOAT_UN(tan(v));
    case BP_OP_TANH: FLOAT_UN(tanh(v));
    case BP_OP_SIGMOID: FLOAT_UN(sigmoid_f(v));
    case BP_OP_GELU: FLOAT_UN(gelu_f(v));
    case BP_OP_ERF: FLOAT_UN(erf(v));
    case BP_OP_FLOOR: FLOAT_UN(floor(v));
    case BP_OP_CEIL: FLOAT_UN(ceil(v));
    case BP_OP_ROUND: FLOAT_UN(rint(v)); /* default rounding mode: half to even */
    case BP_OP_ISNAN:
    case BP_OP_ISINF:
        switch (x->dtype) {
#define CLASSIFY(ST, CT, LD)                                                            \
    if (op == BP_OP_ISNAN)                                                              \
        UN_LOOP(ST, CT, LD, uint8_t, ID, (uint8_t)(v != v));                            \
    else                                                                                \
        UN_LOOP(ST, CT, LD, uint8_t, ID, (uint8_t)(isinf(v) != 0));                     \
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
    default:
        break;
    }
    return bpb_fail(dev, BP_ERR_UNSUPPORTED_OP, "binary: unary op %s not implemented for %s",
                    bp_op_name(op), bp_dtype_name(x->dtype));
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

/* As NUMERIC_BIN, but floats compute in double and round once. */
#define NUMERIC_BIN_D(FEXPR, IFN)                                                       \
    switch (dt) {                                                                       \
    case BP_F32: BIN_LOOP_S(float, double, TO_F64, float, TO_F32, FEXPR); return BP_OK;  \
    case BP_F16: BIN_LOOP_S(uint16_t, double, F16_F, uint16_t, F_F16, FEXPR); return BP_OK; \
    case BP_BF16: BIN_LOOP_S(uint16_t, double, BF16_F, uint16_t, F_BF16, FEXPR); return BP_OK; \
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

/* NaN-propagating maximum/minimum (NumPy): a NaN on either side wins. */
#define F_MAX(p, q) ((p > q || p != p) ? p : q)
#define F_MIN(p, q) ((p < q || p != p) ? p : q)
#define max_i64(p, q) (p > q ? p : q)
#define max_i32 max_i64
#define max_i8 max_i64
#define max_u8 max_i64
#define min_i64(p, q) (p < q ? p : q)
#define min_i32 min_i64
#define min_i8 min_i64
#define min_u8 min_i64

BPB_CLONES bp_status bpb_binary(void *dev, bp_op op, const bp_view *a, const bp_view *b, const bp_view *out)
{
    bp_dtype dt = a->dtype;
    switch (op) {
    case BP_OP_ADD: NUMERIC_BIN(p + q, add);
    case BP_OP_SUB: NUMERIC_BIN(p - q, sub);
    case BP_OP_MUL: NUMERIC_BIN(p * q, mul);
    case BP_OP_DIV: NUMERIC_BIN(p / q, div);
    case BP_OP_MAXIMUM: NUMERIC_BIN(F_MAX(p, q), max);
    case BP_OP_MINIMUM: NUMERIC_BIN(F_MIN(p, q), min);
    case BP_OP_POW: NUMERIC_BIN_D(pow(p, q), pow);
    case BP_OP_MOD: NUMERIC_BIN_L(BIN_LOOP_S, MOD_F(p, q), mod);
    case BP_OP_EQ: COMPARE_BIN(==);
    case BP_OP_NE: COMPARE_BIN(!=);
    case BP_OP_LT: COMPARE_BIN(<);
    case BP_OP_LE: COMPARE_BIN(<=);
    case BP_OP_GT: COMPARE_BIN(>);
    case BP_OP_GE: COMPARE_BIN(>=);
    case BP_OP_LOGICAL_AND: LOGICAL_BIN(p && q);
    case BP_OP_LOGICAL_OR: LOGICAL_BIN(p || q);
    case BP_OP_LOGICAL_XOR: LOGICAL_BIN(p != q);
    default: break;
    }
    return bpb_fail(dev, BP_ERR_UNSUPPORTED_OP, "binary: binary op %s not implemented for %s",
                    bp_op_name(op), bp_dtype_name(dt));
}

/* ---- where -------------------------------------------------------------- */

/* Moves elements as raw bits of their size; bool values are normalised to 0/1. */
#define WHERE_LOOP(T, NORM)                                                             \
    do {                                                                                \
        bpb_iter it_;                                                                   \
        int64_t pos_[4];                                                                \
        bpb_iter_init(&it_, 4, (const bp_view *[]){out, cond, a, b});                   \
        T *ob_ = (T *)bpb_base(out);                                                    \
        const uint8_t *cb_ = (const uint8_t *)bpb_base(cond);                           \
        const T *ab_ = (const T *)bpb_base(a), *bb_ = (const T *)bpb_base(b);           \
        while (bpb_iter_next(&it_, pos_)) {                                             \
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

BPB_CLONES bp_status bpb_where(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
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
    return bpb_fail(dev, BP_ERR_UNSUPPORTED_OP, "binary: where not implemented for %s",
                    bp_dtype_name(out->dtype));
}

/* The elementwise functions of one tensor of ABI 1.4 (acos .. bitwise_not)
 * and clip. Floats compute in double and round once to the dtype (f16/bf16
 * included); each function is its ops.h formula evaluated in IEEE double, so
 * the edges are those of the formula (softsign(inf) = inf / inf is NaN, as
 * in ONNX's and NumPy's reference). Integers: square wraps, shrink goes
 * through double and the cast rules (ops.h), bitwise_not is ~x. */
#include <math.h>

#include "binary.h"

/* out[i] = STORE(EXPR) with `v` = LOAD(x[i]); a0, a1 the op's parameters. */
#define MAP_LOOP(ST, CT, LOAD, OT, STORE, EXPR)                                        \
    do {                                                                                \
        bpb_iter it_;                                                                   \
        int64_t pos_[2];                                                                \
        bpb_iter_init(&it_, 2, (const bp_view *[]){out, x});                            \
        OT *ob_ = (OT *)bpb_base(out);                                                  \
        const ST *xb_ = (const ST *)bpb_base(x);                                        \
        while (bpb_iter_next(&it_, pos_)) {                                             \
            OT *o_ = ob_ + pos_[0];                                                     \
            const ST *px_ = xb_ + pos_[1];                                              \
            int64_t so_ = it_.inner_stride[0], sx_ = it_.inner_stride[1];               \
            for (int64_t i_ = 0; i_ < it_.inner; i_++) {                                \
                CT v = LOAD(px_[i_ * sx_]);                                             \
                o_[i_ * so_] = STORE(EXPR);                                             \
            }                                                                           \
        }                                                                               \
    } while (0)

#define ID(v) (v)
#define TO_F64(v) ((double)(v))
#define TO_F32(v) ((float)(v))
#define F16_D(v) ((double)bp_f16_to_f32(v))
#define BF16_D(v) ((double)bp_bf16_to_f32(v))
#define D_F16(v) bp_f64_to_f16(v)
#define D_BF16(v) bp_f64_to_bf16(v)

/* EXPR of double v on every float dtype, rounded once. */
#define FLOAT_MAP(EXPR)                                                                 \
    switch (x->dtype) {                                                                 \
    case BP_F64: MAP_LOOP(double, double, ID, double, ID, EXPR); return BP_OK;          \
    case BP_F32: MAP_LOOP(float, double, TO_F64, float, TO_F32, EXPR); return BP_OK;    \
    case BP_F16: MAP_LOOP(uint16_t, double, F16_D, uint16_t, D_F16, EXPR); return BP_OK; \
    case BP_BF16: MAP_LOOP(uint16_t, double, BF16_D, uint16_t, D_BF16, EXPR); return BP_OK; \
    default: break;                                                                     \
    }                                                                                   \
    break

/* EXPR of v in the integer type itself, for the integer dtypes. */
#define INT_MAP(EXPR)                                                                   \
    switch (x->dtype) {                                                                 \
    case BP_U8: MAP_LOOP(uint8_t, uint8_t, ID, uint8_t, ID, (uint8_t)(EXPR)); return BP_OK; \
    case BP_I8: MAP_LOOP(int8_t, int8_t, ID, int8_t, ID, (int8_t)(EXPR)); return BP_OK; \
    case BP_I32: MAP_LOOP(int32_t, int32_t, ID, int32_t, ID, (int32_t)(EXPR)); return BP_OK; \
    case BP_I64: MAP_LOOP(int64_t, int64_t, ID, int64_t, ID, (int64_t)(EXPR)); return BP_OK; \
    default: break;                                                                     \
    }                                                                                   \
    break

static inline double softplus_f(double v)
{
    /* log(1 + e^v) without overflow: v + log1p(e^-v) above 0 */
    return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));
}

/* x sigmoid(x); below 0 as x e^x / (1 + e^x), whose e^x underflows
 * gracefully where e^-x would overflow (x e^x is subnormal near -720). */
static inline double silu_f(double v)
{
    if (v >= 0)
        return v / (1.0 + exp(-v));
    double e = exp(v);
    return v * e / (1.0 + e);
}

/* NaN stays NaN (NumPy's clip of ONNX's reference); then clamped. */
static inline double clamp01(double v) { return v != v ? v : v < 0 ? 0.0 : v > 1 ? 1.0 : v; }

static inline double shrink_f(double v, double bias, double lambd)
{
    return v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
}

/* shrink on integers: through double and the cast rules (ops.h). */
static void shrink_int(const bp_view *x, const bp_view *out, double bias, double lambd)
{
    size_t es = bp_dtype_size(x->dtype);
    bpb_iter it;
    int64_t pos[2];
    bpb_iter_init(&it, 2, (const bp_view *[]){out, x});
    while (bpb_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            const char *src = bpb_base(x) + (pos[1] + i * it.inner_stride[1]) * (int64_t)es;
            char *dst = bpb_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)es;
            bp_elem_store_f64(out->dtype, dst,
                              shrink_f(bp_elem_load_f64(x->dtype, src), bias, lambd));
        }
}

static void square_int(const bp_view *x, const bp_view *out)
{
    size_t es = bp_dtype_size(x->dtype);
    bpb_iter it;
    int64_t pos[2];
    bpb_iter_init(&it, 2, (const bp_view *[]){out, x});
    while (bpb_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            const char *src = bpb_base(x) + (pos[1] + i * it.inner_stride[1]) * (int64_t)es;
            char *dst = bpb_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)es;
            uint64_t u = (uint64_t)bp_elem_load_i64(x->dtype, src);
            bp_elem_store_i64(out->dtype, dst, bpb_wrap_int(out->dtype, u * u));
        }
}

bp_status bpb_op_unary(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                       const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)n_in;
    (void)n_out;
    const bp_view *x = in[0], *out = out_v[0];
    const double a0 = p->f[0], a1 = p->f[1];
    bool is_float = bp_dtype_is_float(x->dtype);
    switch (op) {
    case BP_OP_ACOS: FLOAT_MAP(acos(v));
    case BP_OP_ASIN: FLOAT_MAP(asin(v));
    case BP_OP_ATAN: FLOAT_MAP(atan(v));
    case BP_OP_ACOSH: FLOAT_MAP(acosh(v));
    case BP_OP_ASINH: FLOAT_MAP(asinh(v));
    case BP_OP_ATANH: FLOAT_MAP(atanh(v));
    case BP_OP_SINH: FLOAT_MAP(sinh(v));
    case BP_OP_COSH: FLOAT_MAP(cosh(v));
    case BP_OP_LOG1P: FLOAT_MAP(log1p(v));
    case BP_OP_EXPM1: FLOAT_MAP(expm1(v));
    case BP_OP_SOFTPLUS: FLOAT_MAP(softplus_f(v));
    case BP_OP_SOFTSIGN: FLOAT_MAP(v / (1.0 + fabs(v)));
    case BP_OP_SILU: FLOAT_MAP(silu_f(v));
    case BP_OP_HARDSWISH: FLOAT_MAP(v * clamp01(v / 6.0 + 0.5));
    case BP_OP_ELU: FLOAT_MAP(v < 0 ? a0 * expm1(v) : v);
    case BP_OP_SELU: FLOAT_MAP(a1 * (v > 0 ? v : a0 * expm1(v)));
    case BP_OP_LEAKY_RELU: FLOAT_MAP(v < 0 ? a0 * v : v);
    case BP_OP_THRESHOLDED_RELU: FLOAT_MAP(v > a0 ? v : 0.0);
    case BP_OP_HARD_SIGMOID: FLOAT_MAP(clamp01(a0 * v + a1));
    case BP_OP_SQUARE:
        if (!is_float) {
            square_int(x, out);
            return BP_OK;
        }
        FLOAT_MAP(v * v);
    case BP_OP_SHRINK:
        if (!is_float) {
            shrink_int(x, out, a0, a1);
            return BP_OK;
        }
        FLOAT_MAP(shrink_f(v, a0, a1));
    case BP_OP_BITWISE_NOT: INT_MAP(~v);
    default: break;
    }
    return bpb_fail(dev, BP_ERR_UNSUPPORTED_OP, "binary: %s not implemented for %s",
                    bp_op_name(op), bp_dtype_name(x->dtype));
}

/* ---- clip ---------------------------------------------------------------------- */

/* min(max(x, lo), hi) with NaN-propagating max and min (bp_maximum's rule):
 * a NaN x stays NaN, a NaN bound gives NaN. Floats in double (a selection:
 * exact), integers in int64. */
bp_status bpb_op_clip(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)dev, (void)op, (void)p, (void)n_in, (void)n_out;
    const bp_view *x = in[0], *lo = in[1], *hi = in[2], *out = out_v[0];
    /* an absent bound is walked as x itself and ignored */
    const bp_view *vs[4] = {out, x, lo ? lo : x, hi ? hi : x};
    bool is_float = bp_dtype_is_float(x->dtype);
    size_t es = bp_dtype_size(x->dtype);
    bpb_iter it;
    int64_t pos[4];
    bpb_iter_init(&it, 4, vs);
    while (bpb_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            const char *e[4];
            for (int j = 1; j < 4; j++)
                e[j] = bpb_base(vs[j]) + (pos[j] + i * it.inner_stride[j]) * (int64_t)es;
            char *dst = bpb_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)es;
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

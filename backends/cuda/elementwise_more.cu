/* The elementwise ops of ABI 1.4 (all but clip: clip.cu), on the loops and
 * launchers of elem_kernels.h: one functor per storage type for the
 * functions of one tensor, one for those of two, the op a run-time switch.
 *
 * Arithmetic as the ops of 1.0 (elementwise.cu): f16/bf16/f32 compute in
 * f32 with CUDA's single-precision functions and round once to the output,
 * f64 in f64; integers wrap. Shrink computes in double and converts by the
 * cast rules (ops.h: "the result converted by the cast rules"), for floats
 * and integers alike. hard_sigmoid and hardswish keep a NaN (NumPy's clip),
 * softsign of +-inf is NaN (the formula, as ONNX's reference). */
#include <math.h>

#include "elem_kernels.h"
#include "op.h"

/* ---- one tensor ------------------------------------------------------------ */

template <class C> static __device__ __forceinline__ C clamp01(C v)
{
    return v != v ? v : v < (C)0 ? (C)0 : v > (C)1 ? (C)1 : v;
}

/* f16, bf16, f32: in f32 (a, b: the op's alpha / beta as floats) */
static __device__ float more_f(bp_op op, float v, float a, float b)
{
    switch (op) {
    case BP_OP_ACOS: return acosf(v);
    case BP_OP_ASIN: return asinf(v);
    case BP_OP_ATAN: return atanf(v);
    case BP_OP_ACOSH: return acoshf(v);
    case BP_OP_ASINH: return asinhf(v);
    case BP_OP_ATANH: return atanhf(v);
    case BP_OP_SINH: return sinhf(v);
    case BP_OP_COSH: return coshf(v);
    case BP_OP_LOG1P: return log1pf(v);
    case BP_OP_EXPM1: return expm1f(v);
    case BP_OP_SOFTPLUS: /* log(1 + e^v) without overflow: v + log(1 + e^-v) above 0 */
        return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v));
    case BP_OP_SOFTSIGN: return v / (1.0f + fabsf(v));
    case BP_OP_SILU: { /* the sigmoid as elementwise.cu's, without overflow */
        float s;
        if (v >= 0.0f) {
            s = 1.0f / (1.0f + expf(-v));
        } else {
            float e = expf(v);
            s = e / (1.0f + e);
        }
        return v * s;
    }
    case BP_OP_SQUARE: return v * v;
    case BP_OP_ELU: return v < 0.0f ? a * expm1f(v) : v;
    case BP_OP_SELU: return v > 0.0f ? b * v : b * (a * expm1f(v));
    case BP_OP_LEAKY_RELU: return v < 0.0f ? a * v : v;
    case BP_OP_THRESHOLDED_RELU: return v > a ? v : 0.0f;
    case BP_OP_HARD_SIGMOID: return clamp01(a * v + b);
    default: return v * clamp01(v / 6.0f + 0.5f); /* HARDSWISH */
    }
}

/* f64: in f64 */
static __device__ double more_d(bp_op op, double v, double a, double b)
{
    switch (op) {
    case BP_OP_ACOS: return acos(v);
    case BP_OP_ASIN: return asin(v);
    case BP_OP_ATAN: return atan(v);
    case BP_OP_ACOSH: return acosh(v);
    case BP_OP_ASINH: return asinh(v);
    case BP_OP_ATANH: return atanh(v);
    case BP_OP_SINH: return sinh(v);
    case BP_OP_COSH: return cosh(v);
    case BP_OP_LOG1P: return log1p(v);
    case BP_OP_EXPM1: return expm1(v);
    case BP_OP_SOFTPLUS: return v > 0.0 ? v + log1p(exp(-v)) : log1p(exp(v));
    case BP_OP_SOFTSIGN: return v / (1.0 + fabs(v));
    case BP_OP_SILU: {
        double s;
        if (v >= 0.0) {
            s = 1.0 / (1.0 + exp(-v));
        } else {
            double e = exp(v);
            s = e / (1.0 + e);
        }
        return v * s;
    }
    case BP_OP_SQUARE: return v * v;
    case BP_OP_ELU: return v < 0.0 ? a * expm1(v) : v;
    case BP_OP_SELU: return v > 0.0 ? b * v : b * (a * expm1(v));
    case BP_OP_LEAKY_RELU: return v < 0.0 ? a * v : v;
    case BP_OP_THRESHOLDED_RELU: return v > a ? v : 0.0;
    case BP_OP_HARD_SIGMOID: return clamp01(a * v + b);
    default: return v * clamp01(v / 6.0 + 0.5); /* HARDSWISH */
    }
}

/* x < -lambd ? x + bias : x > lambd ? x - bias : 0, in double */
static __device__ __forceinline__ double shrink(double x, double bias, double lambd)
{
    return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0;
}

template <class S> struct bpcu_more_un_float {
    bp_op op;
    double f0, f1;
    __device__ S operator()(S x) const
    {
        typedef bpcu_ft<S> F;
        typedef typename F::C C;
        C v = F::ld(x);
        if (op == BP_OP_SHRINK)
            return F::std_(shrink((double)v, f0, f1));
        if constexpr (std::is_same<C, float>::value)
            return F::st(more_f(op, v, (float)f0, (float)f1));
        else
            return F::std_(more_d(op, (double)v, f0, f1));
    }
};

template <class T> struct bpcu_more_un_int {
    bp_op op;
    bp_dtype dt;
    double f0, f1;
    __device__ T operator()(T v) const
    {
        typedef typename bpcu_int<T>::U U;
        switch (op) {
        case BP_OP_SQUARE: return (T)((U)v * (U)v);
        case BP_OP_BITWISE_NOT: return (T)~v;
        default: { /* SHRINK, converted by the cast rules */
            T r;
            bp_elem_store_f64(dt, (char *)&r, shrink((double)v, f0, f1));
            return r;
        }
        }
    }
};

bp_status bpcu_more_unary(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *out = c->out[0];
    bp_op op = c->op;
    bp_dtype dt = x->dtype;
    double f0 = c->p.f[0], f1 = c->p.f[1];
    if (bp_dtype_is_float(dt)) {
        BPCU_DISPATCH_FLOAT(dt, return (launch_unary<T, T>(d, x, out,
                                        bpcu_more_un_float<T>{op, f0, f1})));
    } else if (op == BP_OP_SQUARE || op == BP_OP_BITWISE_NOT || op == BP_OP_SHRINK) {
        BPCU_DISPATCH_INT(dt, return (launch_unary<T, T>(d, x, out,
                                      bpcu_more_un_int<T>{op, dt, f0, f1})));
    }
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s not implemented for %s",
                     bp_op_name(op), bp_dtype_name(dt));
}

/* ---- two tensors ------------------------------------------------------------ */

template <class S> struct bpcu_more_bin_float {
    bp_op op;
    __device__ S operator()(S x, S y) const
    {
        typedef bpcu_ft<S> F;
        typedef typename F::C C;
        C p = F::ld(x), q = F::ld(y);
        if (op == BP_OP_PRELU)
            return p < (C)0 ? F::st(p * q) : x;
        return F::st(fmod(p, q)); /* FMOD: exact, so f32 for the halves loses nothing */
    }
};

template <class T> struct bpcu_more_bin_int {
    bp_op op;
    __device__ T operator()(T p, T q) const
    {
        typedef typename bpcu_int<T>::U U;
        const int64_t width = (int64_t)sizeof(T) * 8;
        switch (op) {
        case BP_OP_FMOD: /* C's %, x % 0 is 0; TMIN % -1 is 0 (it would trap) */
            if (q == 0 || (std::is_signed<T>::value && q == (T)-1))
                return 0;
            return (T)(p % q);
        case BP_OP_PRELU: return i_negative(p) ? (T)((U)p * (U)q) : p;
        case BP_OP_BITWISE_AND: return (T)(p & q);
        case BP_OP_BITWISE_OR: return (T)(p | q);
        case BP_OP_BITWISE_XOR: return (T)(p ^ q);
        case BP_OP_BITSHIFT_LEFT:
            if (i_negative(q) || (int64_t)q >= width)
                return 0;
            return (T)((U)p << (int)q);
        default: /* BITSHIFT_RIGHT: arithmetic for a signed value */
            if (i_negative(q) || (int64_t)q >= width)
                return i_negative(p) ? (T)-1 : (T)0;
            return (T)(p >> (int)q);
        }
    }
};

bp_status bpcu_more_binary(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *a = c->in[0], *b = c->in[1], *out = c->out[0];
    bp_op op = c->op;
    bp_dtype dt = a->dtype;
    if (bp_dtype_is_float(dt) && (op == BP_OP_FMOD || op == BP_OP_PRELU)) {
        BPCU_DISPATCH_FLOAT(dt, return (launch_binary<T, T>(d, a, b, out,
                                        bpcu_more_bin_float<T>{op})));
    } else if (bp_dtype_is_int(dt)) {
        BPCU_DISPATCH_INT(dt, return (launch_binary<T, T>(d, a, b, out,
                                      bpcu_more_bin_int<T>{op})));
    }
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s not implemented for %s",
                     bp_op_name(op), bp_dtype_name(dt));
}

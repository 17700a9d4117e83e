/* Unary, binary and where kernels over strided, broadcast views.
 *
 * One kernel per (storage type, functor); the op is a runtime switch inside
 * the functor, uniform across the grid, which keeps the number of kernels
 * (and the build time, multiplied by every architecture) small. The
 * arithmetic is the binary backend's (backends/kernels/elementwise.c), except
 * that the math functions and pow of f16/bf16/f32 run in f32 (math_f). */
#include <math.h>

#include "elem_kernels.h"

/* ---- where (the other loops: elem_kernels.h) ------------------------------- */

template <class T>
__global__ void bpcu_k_where(bpcu_ix ix, const uint8_t *c, const T *a, const T *b, T *out,
                             bool norm)
{
    int64_t off[4];
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<4>(ix, i, off);
        T v = c[off[1]] ? a[off[2]] : b[off[3]];
        out[off[0]] = norm ? (T)(v != 0) : v;
    }
}

/* ---- integer division, modulo and power: wrap, never trap -------------------- */

template <class T> static __device__ __forceinline__ T i_div(T a, T b)
{
    if (b == 0)
        return 0;
    if (std::is_signed<T>::value && b == (T)-1) /* TMIN / -1 overflows: wrap */
        return i_neg(a);
    return (T)(a / b);
}

template <class T> static __device__ __forceinline__ T i_mod(T a, T b)
{
    if (b == 0 || (std::is_signed<T>::value && b == (T)-1))
        return 0;
    T r = (T)(a % b);
    return (r != 0 && (i_negative(r) != i_negative(b))) ? (T)(r + b) : r;
}

template <class T> static __device__ __forceinline__ T i_pow(T a, T e)
{
    typedef typename bpcu_int<T>::U U;
    if (i_negative(e))
        return a == 1 ? (T)1 : a == (T)-1 ? ((e & 1) ? (T)-1 : (T)1) : (T)0;
    U r = 1, x = (U)a;
    for (; e > 0; e >>= 1) {
        if (e & 1)
            r = (U)(r * x);
        x = (U)(x * x);
    }
    return (T)r;
}

/* ---- float helpers ------------------------------------------------------------ */

/* Python/NumPy modulo in the compute type C, as the binary backend's
 * mod_ff (f16/bf16/f32: r + b rounds in float) and mod_f (f64). */
template <class C> static __device__ __forceinline__ C f_mod(C a, C b)
{
    C r = fmod(a, b);
    if (b == (C)0)
        return r;
    if (r != (C)0) {
        if ((r < (C)0) != (b < (C)0))
            r += b;
    } else {
        r = copysign((C)0, b);
    }
    return r;
}

/* ---- functors -------------------------------------------------------------- */

/* The math functions in f32 for f16/bf16/f32 (CUDA's single-precision
 * functions, within a few ulp: the tolerance file lists the bounds; the FP64
 * units of consumer GPUs run at 1/64 of the FP32 rate) ... */
static __device__ float math_f(bp_op op, float v)
{
    const float rsqrt2 = 0.70710678118654752440f;
    switch (op) {
    case BP_OP_EXP: return expf(v);
    case BP_OP_LOG: return logf(v);
    case BP_OP_SQRT: return sqrtf(v);
    case BP_OP_RSQRT: return 1.0f / sqrtf(v); /* two correct roundings: within 1 ulp */
    case BP_OP_RECIPROCAL: return 1.0f / v;
    case BP_OP_SIN: return sinf(v);
    case BP_OP_COS: return cosf(v);
    case BP_OP_TAN: return tanf(v);
    case BP_OP_TANH: return tanhf(v);
    case BP_OP_SIGMOID: { /* exp of a non-positive argument: no overflow, no cancellation */
        if (v >= 0.0f)
            return 1.0f / (1.0f + expf(-v));
        float e = expf(v);
        return e / (1.0f + e);
    }
    case BP_OP_GELU: /* below zero erfc(-x/sqrt2) = 1 + erf(x/sqrt2) without the cancellation */
        return v >= 0.0f ? 0.5f * v * (1.0f + erff(v * rsqrt2)) : 0.5f * v * erfcf(-v * rsqrt2);
    case BP_OP_ERF: return erff(v);
    case BP_OP_FLOOR: return floorf(v);
    case BP_OP_CEIL: return ceilf(v);
    default: return rintf(v); /* ROUND: half to even */
    }
}

/* ... and in f64 for f64, as the binary backend. */
static __device__ double math_d(bp_op op, double d)
{
    switch (op) {
    case BP_OP_EXP: return exp(d);
    case BP_OP_LOG: return log(d);
    case BP_OP_SQRT: return sqrt(d);
    case BP_OP_RSQRT: return 1.0 / sqrt(d);
    case BP_OP_RECIPROCAL: return 1.0 / d;
    case BP_OP_SIN: return sin(d);
    case BP_OP_COS: return cos(d);
    case BP_OP_TAN: return tan(d);
    case BP_OP_TANH: return tanh(d);
    case BP_OP_SIGMOID: return 1.0 / (1.0 + exp(-d));
    case BP_OP_GELU: return 0.5 * d * (1.0 + erf(d * 0.70710678118654752440));
    case BP_OP_ERF: return erf(d);
    case BP_OP_FLOOR: return floor(d);
    case BP_OP_CEIL: return ceil(d);
    default: return rint(d); /* ROUND: half to even */
    }
}

template <class S> struct bpcu_un_float {
    bp_op op;
    __device__ S operator()(S x) const
    {
        typedef bpcu_ft<S> F;
        typedef typename F::C C;
        C v = F::ld(x);
        switch (op) {
        case BP_OP_NEG: return F::st(-v);
        case BP_OP_ABS: return F::st((C)fabs(v));
        case BP_OP_SIGN: return F::st(v > 0 ? (C)1 : v < 0 ? (C)-1 : v);
        case BP_OP_RELU: return F::st((v > 0 || v != v) ? v : (C)0);
        default: break;
        }
        if constexpr (std::is_same<C, float>::value)
            return F::st(math_f(op, v));
        else
            return F::std_(math_d(op, (double)v));
    }
};

template <class S> struct bpcu_un_classify {
    bool isnan_;
    __device__ uint8_t operator()(S x) const
    {
        typename bpcu_ft<S>::C v = bpcu_ft<S>::ld(x);
        return isnan_ ? (uint8_t)(v != v) : (uint8_t)(isinf(v) != 0);
    }
};

template <class T> struct bpcu_un_int {
    bp_op op;
    __device__ T operator()(T v) const
    {
        switch (op) {
        case BP_OP_NEG: return i_neg(v);
        case BP_OP_ABS: return (v < (T)1 && v != 0) ? i_neg(v) : v;
        case BP_OP_SIGN: return (T)((v > 0) - (v < (T)1 && v != 0));
        case BP_OP_RELU: return v > 0 ? v : (T)0;
        default: return v;
        }
    }
};

struct bpcu_un_not {
    __device__ uint8_t operator()(uint8_t v) const { return (uint8_t)(v == 0); }
};

template <class S> struct bpcu_bin_float {
    bp_op op;
    __device__ S operator()(S x, S y) const
    {
        typedef bpcu_ft<S> F;
        typedef typename F::C C;
        C p = F::ld(x), q = F::ld(y);
        switch (op) {
        case BP_OP_ADD: return F::st(p + q);
        case BP_OP_SUB: return F::st(p - q);
        case BP_OP_MUL: return F::st(p * q);
        case BP_OP_DIV: return F::st(p / q);
        case BP_OP_MAXIMUM: return F::st((p > q || p != p) ? p : q);
        case BP_OP_MINIMUM: return F::st((p < q || p != p) ? p : q);
        case BP_OP_POW:
            if constexpr (std::is_same<C, float>::value)
                return F::st(powf(p, q)); /* in f32, as the math functions */
            else
                return F::std_(pow((double)p, (double)q));
        case BP_OP_MOD: return F::st(f_mod<C>(p, q));
        default: return F::st(p);
        }
    }
};

template <class T> struct bpcu_bin_int {
    bp_op op;
    __device__ T operator()(T p, T q) const
    {
        typedef typename bpcu_int<T>::U U;
        switch (op) {
        case BP_OP_ADD: return (T)((U)p + (U)q);
        case BP_OP_SUB: return (T)((U)p - (U)q);
        case BP_OP_MUL: return (T)((U)p * (U)q);
        case BP_OP_DIV: return i_div(p, q);
        case BP_OP_MAXIMUM: return p > q ? p : q;
        case BP_OP_MINIMUM: return p < q ? p : q;
        case BP_OP_POW: return i_pow(p, q);
        case BP_OP_MOD: return i_mod(p, q);
        default: return p;
        }
    }
};

/* Comparisons in C (f32 for f16/bf16; integers in their own type; bool as
 * 0/1 through the integer path with bpcu_ld_cmp). */
template <class S> struct bpcu_cmp_val {
    static __device__ __forceinline__ S get(S v) { return v; }
};
template <> struct bpcu_cmp_val<bpcu_h16> {
    static __device__ __forceinline__ float get(bpcu_h16 v) { return bp_f16_to_f32(v.v); }
};
template <> struct bpcu_cmp_val<bpcu_b16> {
    static __device__ __forceinline__ float get(bpcu_b16 v) { return bp_bf16_to_f32(v.v); }
};

template <class S> struct bpcu_bin_cmp {
    bp_op op;
    bool as_bool; /* bool operands compare as (x != 0) */
    __device__ uint8_t operator()(S x, S y) const
    {
        auto p = bpcu_cmp_val<S>::get(x);
        auto q = bpcu_cmp_val<S>::get(y);
        if (as_bool)
            p = (p != 0), q = (q != 0);
        switch (op) {
        case BP_OP_EQ: return (uint8_t)(p == q);
        case BP_OP_NE: return (uint8_t)(p != q);
        case BP_OP_LT: return (uint8_t)(p < q);
        case BP_OP_LE: return (uint8_t)(p <= q);
        case BP_OP_GT: return (uint8_t)(p > q);
        default: return (uint8_t)(p >= q);
        }
    }
};

struct bpcu_bin_logical {
    bp_op op;
    __device__ uint8_t operator()(uint8_t x, uint8_t y) const
    {
        bool p = x != 0, q = y != 0;
        switch (op) {
        case BP_OP_LOGICAL_AND: return (uint8_t)(p && q);
        case BP_OP_LOGICAL_OR: return (uint8_t)(p || q);
        default: return (uint8_t)(p != q);
        }
    }
};

/* ---- launchers --------------------------------------------------------------- */

static bool is_float_math(bp_op op)
{
    return op != BP_OP_NEG && op != BP_OP_ABS && op != BP_OP_SIGN && op != BP_OP_RELU;
}

bp_status bpcu_unary(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, bp_op_name(op), out, {x});
    if (in.status != BP_OK)
        return in.status;
    bp_dtype dt = x->dtype;
    if (op == BP_OP_ISNAN || op == BP_OP_ISINF) {
        BPCU_DISPATCH_FLOAT(dt, return (launch_unary<T, uint8_t>(d, x, out,
                                        bpcu_un_classify<T>{op == BP_OP_ISNAN})));
    } else if (op == BP_OP_LOGICAL_NOT) {
        if (dt == BP_BOOL)
            return launch_unary<uint8_t, uint8_t>(d, x, out, bpcu_un_not{});
    } else if (bp_dtype_is_float(dt)) {
        BPCU_DISPATCH_FLOAT(dt, return (launch_unary<T, T>(d, x, out, bpcu_un_float<T>{op})));
    } else if (bp_dtype_is_int(dt) && !is_float_math(op)) {
        BPCU_DISPATCH_INT(dt, return (launch_unary<T, T>(d, x, out, bpcu_un_int<T>{op})));
    }
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: unary op %s not implemented for %s",
                     bp_op_name(op), bp_dtype_name(dt));
}

bp_status bpcu_binary(void *dev, bp_op op, const bp_view *a, const bp_view *b, const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, bp_op_name(op), out, {a, b});
    if (in.status != BP_OK)
        return in.status;
    bp_dtype dt = a->dtype;
    switch (op) {
    case BP_OP_ADD: case BP_OP_SUB: case BP_OP_MUL: case BP_OP_DIV:
    case BP_OP_POW: case BP_OP_MAXIMUM: case BP_OP_MINIMUM: case BP_OP_MOD:
        if (bp_dtype_is_float(dt))
            BPCU_DISPATCH_FLOAT(dt, return (launch_binary<T, T>(d, a, b, out, bpcu_bin_float<T>{op})));
        BPCU_DISPATCH_INT(dt, return (launch_binary<T, T>(d, a, b, out, bpcu_bin_int<T>{op})));
        break;
    case BP_OP_EQ: case BP_OP_NE: case BP_OP_LT: case BP_OP_LE: case BP_OP_GT: case BP_OP_GE:
        if (dt == BP_BOOL)
            return launch_binary<uint8_t, uint8_t>(d, a, b, out, bpcu_bin_cmp<uint8_t>{op, true});
        BPCU_DISPATCH_FLOAT(dt, return (launch_binary<T, uint8_t>(d, a, b, out, bpcu_bin_cmp<T>{op, false})));
        BPCU_DISPATCH_INT(dt, return (launch_binary<T, uint8_t>(d, a, b, out, bpcu_bin_cmp<T>{op, false})));
        break;
    case BP_OP_LOGICAL_AND: case BP_OP_LOGICAL_OR: case BP_OP_LOGICAL_XOR:
        if (dt == BP_BOOL)
            return launch_binary<uint8_t, uint8_t>(d, a, b, out, bpcu_bin_logical{op});
        break;
    default:
        break;
    }
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: binary op %s not implemented for %s",
                     bp_op_name(op), bp_dtype_name(dt));
}

template <class T>
static bp_status launch_where(bpcu_device *d, const bp_view *cond, const bp_view *a,
                              const bp_view *b, const bp_view *out, bool norm)
{
    cudaError_t e = cudaSuccess;
    const bp_view *vs[4] = {out, cond, a, b};
    bpcu_ix ix = bpcu_collapse(4, vs);
    if (ix.n == 0)
        return BP_OK;
    e = bpcu_launch(d->stream, bpcu_blocks(ix.n), BPCU_THREADS, 0, bpcu_k_where<T>,
        ix, (const uint8_t *)bpcu_ptr(cond), (const T *)bpcu_ptr(a), (const T *)bpcu_ptr(b),
        (T *)bpcu_ptr(out), norm);
    return bpcu_launched(d, e, "where kernel");
}

bp_status bpcu_where(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
                     const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "where", out, {cond, a, b});
    if (in.status != BP_OK)
        return in.status;
    switch (bp_dtype_size(out->dtype)) {
    case 1: return launch_where<uint8_t>(d, cond, a, b, out, out->dtype == BP_BOOL);
    case 2: return launch_where<uint16_t>(d, cond, a, b, out, false);
    case 4: return launch_where<uint32_t>(d, cond, a, b, out, false);
    case 8: return launch_where<uint64_t>(d, cond, a, b, out, false);
    default: break;
    }
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: where not implemented for %s",
                     bp_dtype_name(out->dtype));
}

/* The UNARY, BINARY and WHERE kinds over strided, broadcast views.
 *
 * One kernel per (storage type, functor); the op is a runtime switch inside
 * the functor, uniform across the grid, which keeps the number of kernels
 * (and the build time, multiplied by every architecture) small, except for
 * the hot functions of one tensor (BPCU_UN_FIXED), a kernel each. The float
 * arithmetic is elementwise_formulas.h's, the same formulas as the binary
 * backend's (backends/kernels/unary.c, binary.c), evaluated in float for
 * f16/bf16/f32 (CUDA's single-precision functions, within a few ulp: the
 * tolerance file lists the bounds; the FP64 units of consumer GPUs run at
 * 1/64 of the FP32 rate) and in double for f64; hard_sigmoid, hardswish and
 * shrink in double for every float dtype (alpha x + beta in float cancels
 * near the lower knee: up to 205 ulp), rounded once. Integers wrap; shrink
 * of an integer goes through double and the cast rules (ops.h). */
#include <math.h>

#include "elem_kernels.h"
#include "elementwise_formulas.h"
#include "op.h"

/* ---- where (the other loops: elem_kernels.h) ------------------------------- */

/* The rows form (elem_kernels.h) of where, packs of V. */
template <int V, class T>
static __device__ __forceinline__ void where_rows(const bpcu_rc &g, const uint8_t *c, const T *a,
                                                  const T *b, T *out, bool norm)
{
    const int64_t packs = g.C / V;
    for (int64_t r = blockIdx.y; r < g.R; r += gridDim.y) {
        const uint8_t *pc = c + r * g.rs[0];
        const T *pa = a + r * g.rs[1], *pb = b + r * g.rs[2];
        T *po = out + r * g.os;
        for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < packs;
             k += (int64_t)gridDim.x * blockDim.x) {
            const bpcu_pack<uint8_t, V> vc = bpcu_pack<uint8_t, V>::load(pc + k * V * g.cs[0], g.cs[0]);
            const bpcu_pack<T, V> va = bpcu_pack<T, V>::load(pa + k * V * g.cs[1], g.cs[1]);
            const bpcu_pack<T, V> vb = bpcu_pack<T, V>::load(pb + k * V * g.cs[2], g.cs[2]);
            bpcu_pack<T, V> o;
#pragma unroll
            for (int j = 0; j < V; j++) {
                const T v = vc.v[j] ? va.v[j] : vb.v[j];
                o.v[j] = norm ? (T)(v != 0) : v;
            }
            o.store(po + k * V);
        }
    }
}

template <class T>
__global__ void bpcu_k_where(bpcu_ix ix, bpcu_rc rc, const uint8_t *c, const T *a, const T *b,
                             T *out, bool norm)
{
    if (rc.on) {
        if (rc.vec)
            where_rows<bpcu_vw<T, uint8_t>::V>(rc, c, a, b, out, norm);
        else
            where_rows<1>(rc, c, a, b, out, norm);
        return;
    }
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

/* ---- functors -------------------------------------------------------------- */

/* The float functions without parameters; C, the compute type: float for
 * f16/bf16/f32, double for f64 (formulas: elementwise_formulas.h,
 * overloaded on C). An op this switch lacks gives NaN, so that conform's
 * cases fail loudly. */
template <class C> static __device__ __forceinline__ C un_float(bp_op op, C v)
{
    switch (op) {
    case BP_OP_NEG: return bpf_neg(v);
    case BP_OP_ABS: return bpf_abs(v);
    case BP_OP_SIGN: return bpf_sign(v);
    case BP_OP_RELU: return bpf_relu(v);
    case BP_OP_SQUARE: return bpf_square(v);
    case BP_OP_EXP: return bpf_exp(v);
    case BP_OP_LOG: return bpf_log(v);
    case BP_OP_SQRT: return bpf_sqrt(v);
    case BP_OP_RSQRT: return bpf_rsqrt(v);
    case BP_OP_RECIPROCAL: return bpf_reciprocal(v);
    case BP_OP_SIN: return bpf_sin(v);
    case BP_OP_COS: return bpf_cos(v);
    case BP_OP_TAN: return bpf_tan(v);
    case BP_OP_TANH: return bpf_tanh(v);
    case BP_OP_SIGMOID: return bpf_sigmoid(v);
    case BP_OP_GELU: return bpf_gelu(v);
    case BP_OP_ERF: return bpf_erf(v);
    case BP_OP_FLOOR: return bpf_floor(v);
    case BP_OP_CEIL: return bpf_ceil(v);
    case BP_OP_ROUND: return bpf_round(v);
    case BP_OP_ACOS: return bpf_acos(v);
    case BP_OP_ASIN: return bpf_asin(v);
    case BP_OP_ATAN: return bpf_atan(v);
    case BP_OP_ACOSH: return bpf_acosh(v);
    case BP_OP_ASINH: return bpf_asinh(v);
    case BP_OP_ATANH: return bpf_atanh(v);
    case BP_OP_SINH: return bpf_sinh(v);
    case BP_OP_COSH: return bpf_cosh(v);
    case BP_OP_LOG1P: return bpf_log1p(v);
    case BP_OP_EXPM1: return bpf_expm1(v);
    case BP_OP_SOFTPLUS: return bpf_softplus(v);
    case BP_OP_SOFTSIGN: return bpf_softsign(v);
    case BP_OP_SILU: return bpf_silu(v);
    case BP_OP_MISH: return bpf_mish(v);
    default: return (C)NAN;
    }
}

template <class S> struct bpcu_un_float {
    bp_op op;
    double f0, f1;
    __device__ S operator()(S x) const
    {
        typedef bpcu_ft<S> F;
        typedef typename F::C C;
        C v = F::ld(x);
        const C a = (C)f0, b = (C)f1; /* the op's parameters (their schema rows in opcodes.h) */
        const double dv = (double)v;
        switch (op) {
        case BP_OP_ELU: return F::st(bpf_elu(v, a));
        case BP_OP_CELU: return F::st(bpf_celu(v, a));
        case BP_OP_SELU: return F::st(bpf_selu(v, a, b));
        case BP_OP_LEAKY_RELU: return F::st(bpf_leaky_relu(v, a));
        case BP_OP_THRESHOLDED_RELU: return F::st(bpf_thresholded_relu(v, a));
        /* in double for every float dtype, rounded once */
        case BP_OP_HARD_SIGMOID: return F::std_(bpf_hard_sigmoid(dv, f0, f1));
        case BP_OP_HARDSWISH: return F::std_(bpf_hardswish(dv));
        case BP_OP_SHRINK: return F::std_(bpf_shrink(dv, f0, f1));
        default: return F::st(un_float(op, v));
        }
    }
};

/* The hot functions of one tensor (activations and the math of the norms
 * and losses), each a kernel of its own with the op fixed when it is
 * compiled: the switch folds away and the kernel keeps only its own
 * function's registers. With the op a run-time switch (bpcu_un_float) the
 * kernel carries the registers and code of all forty functions; on an H200
 * relu f16 reached 0.32 of the copy bandwidth that way (add reaches 1.0).
 * The value is bpcu_un_float's for the same op, bit for bit: the same
 * formula from un_float. */
#define BPCU_UN_FIXED(X) X(RELU) X(GELU) X(SILU) X(TANH) X(SIGMOID) X(EXP) X(LOG) X(SQRT) \
    X(RSQRT) X(ERF) X(NEG) X(ABS) X(RECIPROCAL)

template <class S, bp_op OP> struct bpcu_un_fixed {
    __device__ S operator()(S x) const
    {
        typedef bpcu_ft<S> F;
        return F::st(un_float(OP, F::ld(x)));
    }
};

/* bpcu_un_fixed's kernel for op on f16, bf16 and f32; false for any other
 * op or dtype (they take bpcu_un_float). */
template <class T>
static bool unary_fixed(bpcu_device *d, bp_op op, const bp_view *x, const bp_view *out,
                        bp_status *st)
{
    switch (op) {
#define BPCU_UN_CASE(NAME)                                                                       \
    case BP_OP_##NAME:                                                                           \
        *st = launch_unary<T, T>(d, x, out, bpcu_un_fixed<T, BP_OP_##NAME>{});                   \
        return true;
        BPCU_UN_FIXED(BPCU_UN_CASE)
#undef BPCU_UN_CASE
    default: return false;
    }
}

template <class S> struct bpcu_un_classify {
    bool isnan_;
    __device__ uint8_t operator()(S x) const
    {
        typename bpcu_ft<S>::C v = bpcu_ft<S>::ld(x);
        return (uint8_t)(isnan_ ? bpf_isnan(v) : bpf_isinf(v));
    }
};

template <class T> struct bpcu_un_int {
    bp_op op;
    bp_dtype dt;
    double f0, f1;
    __device__ T operator()(T v) const
    {
        typedef typename bpcu_int<T>::U U;
        switch (op) {
        case BP_OP_NEG: return i_neg(v);
        case BP_OP_ABS: return (v < (T)1 && v != 0) ? i_neg(v) : v;
        case BP_OP_SIGN: return (T)((v > 0) - (v < (T)1 && v != 0));
        case BP_OP_RELU: return v > 0 ? v : (T)0;
        case BP_OP_SQUARE: return (T)((U)v * (U)v);
        case BP_OP_BITWISE_NOT: return (T)~v;
        default: { /* SHRINK, converted by the cast rules */
            T r;
            bp_elem_store_f64(dt, (char *)&r, bpf_shrink((double)v, f0, f1));
            return r;
        }
        }
    }
};

struct bpcu_un_not {
    __device__ uint8_t operator()(uint8_t v) const { return (uint8_t)(v == 0); }
};

/* add, sub and mul of two f16 (bf16) pairs in one half2 (bfloat162)
 * instruction: each is correctly rounded, as the f32 result rounded once
 * (24 >= 2 x 11 + 2 bits, so that rounding twice changes nothing); NaNs
 * come out as the canonical NaN, as they do through f32. */
template <class S, class H2> struct bpcu_half_pair {
    static __device__ __forceinline__ bool go(bp_op op, const S *x, const S *y, S *o)
    {
        if (op != BP_OP_ADD && op != BP_OP_SUB && op != BP_OP_MUL)
            return false;
        unsigned int ux = (unsigned int)x[0].v | (unsigned int)x[1].v << 16;
        unsigned int uy = (unsigned int)y[0].v | (unsigned int)y[1].v << 16;
        H2 hx, hy, r;
        memcpy(&hx, &ux, 4);
        memcpy(&hy, &uy, 4);
        r = op == BP_OP_ADD ? __hadd2(hx, hy) : op == BP_OP_SUB ? __hsub2(hx, hy) : __hmul2(hx, hy);
        unsigned int ur;
        memcpy(&ur, &r, 4);
        o[0].v = (uint16_t)(ur & 0xffffu);
        o[1].v = (uint16_t)(ur >> 16);
        return true;
    }
};

template <class S> struct bpcu_bin_float {
    bp_op op;
    __device__ S operator()(S x, S y) const
    {
        typedef bpcu_ft<S> F;
        typedef typename F::C C;
        C p = F::ld(x), q = F::ld(y);
        switch (op) {
        case BP_OP_ADD: return F::st(bpf_add(p, q));
        case BP_OP_SUB: return F::st(bpf_sub(p, q));
        case BP_OP_MUL: return F::st(bpf_mul(p, q));
        case BP_OP_DIV: return F::st(bpf_div(p, q));
        case BP_OP_MAXIMUM: return F::st(bpf_maximum(p, q));
        case BP_OP_MINIMUM: return F::st(bpf_minimum(p, q));
        case BP_OP_POW: return F::st(bpf_pow(p, q)); /* in C, as the functions of one tensor */
        case BP_OP_MOD: return F::st(bpf_mod(p, q));
        case BP_OP_FMOD: return F::st(bpf_fmod(p, q)); /* exact: float loses nothing */
        case BP_OP_PRELU: return F::st(bpf_prelu(p, q));
        default: return F::st((C)NAN); /* an op this switch lacks: conform fails loudly */
        }
    }
    /* two elements (f16 and bf16 only: bpcu_pairs) */
    __device__ void pair(const S *x, const S *y, S *o) const
    {
        typedef typename std::conditional<std::is_same<S, bpcu_h16>::value, __half2,
                                          __nv_bfloat162>::type H2;
        if constexpr (std::is_same<S, bpcu_h16>::value || std::is_same<S, bpcu_b16>::value) {
            if (bpcu_half_pair<S, H2>::go(op, x, y, o))
                return;
        }
        o[0] = (*this)(x[0], y[0]);
        o[1] = (*this)(x[1], y[1]);
    }
};

template <> struct bpcu_pairs<bpcu_bin_float<bpcu_h16>> {
    static constexpr bool value = true;
};
template <> struct bpcu_pairs<bpcu_bin_float<bpcu_b16>> {
    static constexpr bool value = true;
};

template <class T> struct bpcu_bin_int {
    bp_op op;
    __device__ T operator()(T p, T q) const
    {
        typedef typename bpcu_int<T>::U U;
        const int64_t width = (int64_t)sizeof(T) * 8;
        switch (op) {
        case BP_OP_ADD: return (T)((U)p + (U)q);
        case BP_OP_SUB: return (T)((U)p - (U)q);
        case BP_OP_MUL: return (T)((U)p * (U)q);
        case BP_OP_DIV: return i_div(p, q);
        case BP_OP_MAXIMUM: return p > q ? p : q;
        case BP_OP_MINIMUM: return p < q ? p : q;
        case BP_OP_POW: return i_pow(p, q);
        case BP_OP_MOD: return i_mod(p, q);
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

/* ---- the kinds' functions ------------------------------------------------------- */

bp_status bpcu_op_unary(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *out = c->out[0];
    bp_op op = c->op;
    bp_dtype dt = x->dtype;
    double f0 = c->p.f[0], f1 = c->p.f[1];
    switch (op) {
    case BP_OP_ISNAN: case BP_OP_ISINF:
        BPCU_DISPATCH_FLOAT(dt, return (launch_unary<T, uint8_t>(d, x, out,
                                        bpcu_un_classify<T>{op == BP_OP_ISNAN})));
        break;
    case BP_OP_LOGICAL_NOT:
        if (dt == BP_BOOL)
            return launch_unary<uint8_t, uint8_t>(d, x, out, bpcu_un_not{});
        break;
    default: break;
    }
    if (x->dtype == out->dtype) { /* the hot functions, a kernel each */
        bp_status st = BP_OK;
        bool took = false;
        switch (dt) {
        case BP_F32: took = unary_fixed<float>(d, op, x, out, &st); break;
        case BP_F16: took = unary_fixed<bpcu_h16>(d, op, x, out, &st); break;
        case BP_BF16: took = unary_fixed<bpcu_b16>(d, op, x, out, &st); break;
        default: break;
        }
        if (took)
            return st;
    }
    switch (op) {
    case BP_OP_NEG: case BP_OP_ABS: case BP_OP_SIGN: case BP_OP_RELU: case BP_OP_SQUARE:
    case BP_OP_BITWISE_NOT: case BP_OP_SHRINK: /* the ops of integers too */
        if (bp_dtype_is_int(dt)) {
            BPCU_DISPATCH_INT(dt, return (launch_unary<T, T>(d, x, out,
                                          bpcu_un_int<T>{op, dt, f0, f1})));
            break;
        }
        BPCU_DISPATCH_FLOAT(dt, return (launch_unary<T, T>(d, x, out,
                                        bpcu_un_float<T>{op, f0, f1})));
        break;
    default:
        BPCU_DISPATCH_FLOAT(dt, return (launch_unary<T, T>(d, x, out,
                                        bpcu_un_float<T>{op, f0, f1})));
        break;
    }
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: unary op %s not implemented for %s",
                     bp_op_name(op), bp_dtype_name(dt));
}

bp_status bpcu_op_binary(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *a = c->in[0], *b = c->in[1], *out = c->out[0];
    bp_op op = c->op;
    bp_dtype dt = a->dtype;
    switch (op) {
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
    default: /* arithmetic, fmod, prelu, the bitwise ops and shifts (integers only) */
        BPCU_DISPATCH_FLOAT(dt, return (launch_binary<T, T>(d, a, b, out, bpcu_bin_float<T>{op})));
        BPCU_DISPATCH_INT(dt, return (launch_binary<T, T>(d, a, b, out, bpcu_bin_int<T>{op})));
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
    constexpr int V = bpcu_vw<T, uint8_t>::V;
    const void *ptrs[4] = {bpcu_ptr(out), bpcu_ptr(cond), bpcu_ptr(a), bpcu_ptr(b)};
    const size_t es[4] = {sizeof(T), 1, sizeof(T), sizeof(T)};
    const bpcu_rc rc = bpcu_rc_plan(ix, 3, ptrs, es, V);
    dim3 grid = rc.on ? bpcu_rc_grid(rc, V) : dim3(bpcu_blocks(ix.n));
    e = bpcu_launch(d->stream, grid, BPCU_THREADS, 0, bpcu_k_where<T>, ix, rc,
        (const uint8_t *)ptrs[1], (const T *)ptrs[2], (const T *)ptrs[3], (T *)ptrs[0], norm);
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

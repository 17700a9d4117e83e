/* One scalar formula per elementwise float op, for every backend's kernels:
 * the reference kernels (unary.c, binary.c: binary, blas_cpu and the tests'
 * devsim run them), blas_cpu's vector kernels where they patch a lane with
 * the reference (vmath.c) and the cuda kernels (elementwise.cu). Host and
 * device alike (BP_HOST_DEVICE, as backplane/dtype.h and cast.h).
 *
 * Each formula is written once, below, in a compute type T and instantiated
 * twice: bpf_NAME in double, bpf_NAME_f in float (M(fn) is libm's fn of T:
 * exp or expf); in C++ the float ones overload bpf_NAME as well. Which one a kernel calls is the kernel's precision choice,
 * not the formula's: the reference computes every function of a float dtype
 * in double and rounds once (f32 + - * / and mod in float, exact there);
 * cuda computes f16/bf16/f32 in float with CUDA's single-precision
 * functions and f64 in double. Where the float evaluation of a formula
 * needs another form to stay accurate, the formula says so with a
 * BPF__IS_F(T) branch (constant in each instantiation); the double form is
 * the reference's, whose bits conform and the tests pin.
 *
 * The semantics (edges, NaN, signed zeros) are ops.h's; the conformance
 * oracle (conform/src/oracle/) writes them again independently, on purpose.
 * Integer arithmetic (wrapping, division by zero) stays with each backend's
 * typed loops. */
#ifndef BPK_ELEMENTWISE_FORMULAS_H
#define BPK_ELEMENTWISE_FORMULAS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <backplane/dtype.h> /* BP_HOST_DEVICE */

/* IEEE 754's negate and abs touch the sign bit alone, NaN payloads kept (C's
 * -v and fabs do on the CPUs). PTX's neg and abs give "an unspecified NaN"
 * for a NaN operand (seen on an H200: neg(neg(NaN)) lost the payload), so
 * device code sets the sign bit by hand. */
#ifdef __CUDA_ARCH__
#define BPF__SIGN_BY_HAND 1
#else
#define BPF__SIGN_BY_HAND 0
#endif
#define BPF__D(fn) fn
#define BPF__F(fn) fn##f
#define BPF__IS_F(T) (sizeof(T) == sizeof(float))

/* T: the compute type; S: the names' suffix; M: libm's function of T;
 * U: an unsigned integer of T's width (prelu's select). */
#define BPF__FORMULAS(T, S, M, U)                                                          \
    /* ---- exact in T: NaN kept, signed zeros as IEEE negation and fabs ---- */        \
    /* v with its sign bit flipped (clear false) or cleared, nothing else */            \
    BP_HOST_DEVICE static inline T bpf__sign_bit##S(T v, int clear)                        \
    {                                                                                      \
        const U m = (U)1 << (sizeof(U) * 8 - 1);                                           \
        U b;                                                                               \
        memcpy(&b, &v, sizeof b);                                                          \
        b = clear ? (U)(b & ~m) : (U)(b ^ m);                                              \
        memcpy(&v, &b, sizeof v);                                                          \
        return v;                                                                          \
    }                                                                                      \
    BP_HOST_DEVICE static inline T bpf_neg##S(T v)                                         \
    {                                                                                      \
        return BPF__SIGN_BY_HAND ? bpf__sign_bit##S(v, 0) : -v;                            \
    }                                                                                      \
    BP_HOST_DEVICE static inline T bpf_abs##S(T v)                                         \
    {                                                                                      \
        return BPF__SIGN_BY_HAND ? bpf__sign_bit##S(v, 1) : M(fabs)(v);                    \
    }                                                                                      \
    /* 1, -1, or v itself (+-0 and NaN) */                                                 \
    BP_HOST_DEVICE static inline T bpf_sign##S(T v)                                        \
    {                                                                                      \
        return v > (T)0 ? (T)1 : v < (T)0 ? (T)-1 : v;                                     \
    }                                                                                      \
    BP_HOST_DEVICE static inline T bpf_relu##S(T v) { return (v > (T)0 || v != v) ? v : (T)0; } \
    BP_HOST_DEVICE static inline T bpf_square##S(T v) { return v * v; }                    \
    BP_HOST_DEVICE static inline T bpf_floor##S(T v) { return M(floor)(v); }               \
    BP_HOST_DEVICE static inline T bpf_ceil##S(T v) { return M(ceil)(v); }                 \
    BP_HOST_DEVICE static inline int bpf_isnan##S(T v) { return v != v; }                 \
    BP_HOST_DEVICE static inline int bpf_isinf##S(T v) { return isinf(v) != 0; }           \
    /* the default rounding mode: half to even */                                          \
    BP_HOST_DEVICE static inline T bpf_round##S(T v) { return M(rint)(v); }                \
    /* ---- libm's functions, and what is made of them ---- */                             \
    BP_HOST_DEVICE static inline T bpf_exp##S(T v) { return M(exp)(v); }                   \
    BP_HOST_DEVICE static inline T bpf_log##S(T v) { return M(log)(v); }                   \
    BP_HOST_DEVICE static inline T bpf_sqrt##S(T v) { return M(sqrt)(v); }                 \
    /* two correct roundings: within 1 ulp */                                              \
    BP_HOST_DEVICE static inline T bpf_rsqrt##S(T v) { return (T)1 / M(sqrt)(v); }         \
    BP_HOST_DEVICE static inline T bpf_reciprocal##S(T v) { return (T)1 / v; }             \
    BP_HOST_DEVICE static inline T bpf_sin##S(T v) { return M(sin)(v); }                   \
    BP_HOST_DEVICE static inline T bpf_cos##S(T v) { return M(cos)(v); }                   \
    BP_HOST_DEVICE static inline T bpf_tan##S(T v) { return M(tan)(v); }                   \
    BP_HOST_DEVICE static inline T bpf_tanh##S(T v) { return M(tanh)(v); }                 \
    BP_HOST_DEVICE static inline T bpf_erf##S(T v) { return M(erf)(v); }                   \
    BP_HOST_DEVICE static inline T bpf_acos##S(T v) { return M(acos)(v); }                 \
    BP_HOST_DEVICE static inline T bpf_asin##S(T v) { return M(asin)(v); }                 \
    BP_HOST_DEVICE static inline T bpf_atan##S(T v) { return M(atan)(v); }                 \
    BP_HOST_DEVICE static inline T bpf_acosh##S(T v) { return M(acosh)(v); }               \
    BP_HOST_DEVICE static inline T bpf_asinh##S(T v) { return M(asinh)(v); }               \
    BP_HOST_DEVICE static inline T bpf_atanh##S(T v) { return M(atanh)(v); }               \
    BP_HOST_DEVICE static inline T bpf_sinh##S(T v) { return M(sinh)(v); }                 \
    BP_HOST_DEVICE static inline T bpf_cosh##S(T v) { return M(cosh)(v); }                 \
    BP_HOST_DEVICE static inline T bpf_log1p##S(T v) { return M(log1p)(v); }               \
    BP_HOST_DEVICE static inline T bpf_expm1##S(T v) { return M(expm1)(v); }               \
    /* 1 / (1 + e^-v). In float, below zero as e^v / (1 + e^v): e^-v                       \
     * overflows below -88 where the result is still a (subnormal) float,                  \
     * and the exp of a non-positive argument cannot. Both sides share                     \
     * e = e^-|v| and differ only in the numerator (one exp, no branch). */                \
    BP_HOST_DEVICE static inline T bpf_sigmoid##S(T v)                                     \
    {                                                                                      \
        if (BPF__IS_F(T)) {                                                                \
            const T e = M(exp)(-M(fabs)(v));                                               \
            return (v < (T)0 ? e : (T)1) / ((T)1 + e);                                     \
        }                                                                                  \
        return (T)1 / ((T)1 + M(exp)(-v));                                                 \
    }                                                                                      \
    /* v/2 (1 + erf(v / sqrt 2)). In float, below zero with erfc(-v / sqrt 2)              \
     * for 1 + erf(v / sqrt 2), which cancels there. */                                    \
    BP_HOST_DEVICE static inline T bpf_gelu##S(T v)                                        \
    {                                                                                      \
        const T rsqrt2 = (T)0.70710678118654752440;                                        \
        if (BPF__IS_F(T) && v < (T)0)                                                      \
            return (T)0.5 * v * M(erfc)(-v * rsqrt2);                                      \
        return (T)0.5 * v * ((T)1 + M(erf)(v * rsqrt2));                                   \
    }                                                                                      \
    /* log(1 + e^v) without overflow: v + log1p(e^-v) above 0 */                           \
    BP_HOST_DEVICE static inline T bpf_softplus##S(T v)                                    \
    {                                                                                      \
        return v > (T)0 ? v + M(log1p)(M(exp)(-v)) : M(log1p)(M(exp)(v));                  \
    }                                                                                      \
    /* the formula as it stands: softsign(+-inf) = inf / inf is NaN (ONNX's                \
     * and NumPy's reference) */                                                           \
    BP_HOST_DEVICE static inline T bpf_softsign##S(T v) { return v / ((T)1 + M(fabs)(v)); } \
    /* v sigmoid(v): v / (1 + e^-v) from 0 up; below, v e^v / (1 + e^v),                   \
     * whose e^v underflows gracefully where e^-v would overflow (v e^v is                 \
     * subnormal near -720). Both sides share e = e^-|v| and differ only in               \
     * the numerator, so one exp and one division serve either sign (no                   \
     * branch for a GPU's warp to run twice). In float, below -87 (e^v                     \
     * subnormal there, too few bits: -100 lost 45 ulp of the subnormal                    \
     * result) in double. */                                                               \
    BP_HOST_DEVICE static inline T bpf_silu##S(T v)                                        \
    {                                                                                      \
        if (BPF__IS_F(T) && v < (T)-87)                                                    \
            return (T)bpf_silu((double)v);                                                 \
        const T e = M(exp)(-M(fabs)(v));                                                   \
        return (v >= (T)0 ? v : v * e) / ((T)1 + e);                                       \
    }                                                                                      \
    /* v tanh(softplus(v)) (ONNX Mish): -inf gives -inf * 0 = NaN, as the                 \
     * formula and ONNX's reference do. Below -87 in float, softplus's e^v is              \
     * subnormal (too few bits): in double, as silu. */                                    \
    BP_HOST_DEVICE static inline T bpf_mish##S(T v)                                        \
    {                                                                                      \
        if (BPF__IS_F(T) && v < (T)-87)                                                    \
            return (T)bpf_mish((double)v);                                                 \
        return v * M(tanh)(bpf_softplus##S(v));                                            \
    }                                                                                      \
    /* NaN stays NaN (NumPy's clip of ONNX's reference); then clamped */                   \
    BP_HOST_DEVICE static inline T bpf_clamp01##S(T v)                                     \
    {                                                                                      \
        return v != v ? v : v < (T)0 ? (T)0 : v > (T)1 ? (T)1 : v;                         \
    }                                                                                      \
    BP_HOST_DEVICE static inline T bpf_hardswish##S(T v)                                   \
    {                                                                                      \
        return v * bpf_clamp01##S(v / (T)6 + (T)0.5);                                      \
    }                                                                                      \
    BP_HOST_DEVICE static inline T bpf_hard_sigmoid##S(T v, T alpha, T beta)               \
    {                                                                                      \
        return bpf_clamp01##S(alpha * v + beta);                                           \
    }                                                                                      \
    BP_HOST_DEVICE static inline T bpf_elu##S(T v, T alpha)                                \
    {                                                                                      \
        return v < (T)0 ? alpha * M(expm1)(v) : v;                                         \
    }                                                                                      \
    BP_HOST_DEVICE static inline T bpf_celu##S(T v, T alpha)                               \
    {                                                                                      \
        return v < (T)0 ? alpha * M(expm1)(v / alpha) : v;                                 \
    }                                                                                      \
    BP_HOST_DEVICE static inline T bpf_selu##S(T v, T alpha, T gamma)                      \
    {                                                                                      \
        return gamma * (v > (T)0 ? v : alpha * M(expm1)(v));                               \
    }                                                                                      \
    /* no branch on the sign (random signs mispredict): v x 1 is v */                      \
    BP_HOST_DEVICE static inline T bpf_leaky_relu##S(T v, T alpha)                         \
    {                                                                                      \
        return v * (v < (T)0 ? alpha : (T)1);                                              \
    }                                                                                      \
    BP_HOST_DEVICE static inline T bpf_thresholded_relu##S(T v, T alpha)                   \
    {                                                                                      \
        return v > alpha ? v : (T)0;                                                       \
    }                                                                                      \
    BP_HOST_DEVICE static inline T bpf_shrink##S(T v, T bias, T lambd)                     \
    {                                                                                      \
        return v < -lambd ? v + bias : v > lambd ? v - bias : (T)0;                        \
    }                                                                                      \
    /* ---- two operands ---- */                                                           \
    BP_HOST_DEVICE static inline T bpf_add##S(T p, T q) { return p + q; }                  \
    BP_HOST_DEVICE static inline T bpf_sub##S(T p, T q) { return p - q; }                  \
    BP_HOST_DEVICE static inline T bpf_mul##S(T p, T q) { return p * q; }                  \
    BP_HOST_DEVICE static inline T bpf_div##S(T p, T q) { return p / q; }                  \
    /* NaN-propagating (NumPy): a NaN on either side wins */                               \
    BP_HOST_DEVICE static inline T bpf_maximum##S(T p, T q) { return (p > q || p != p) ? p : q; } \
    BP_HOST_DEVICE static inline T bpf_minimum##S(T p, T q) { return (p < q || p != p) ? p : q; } \
    BP_HOST_DEVICE static inline T bpf_pow##S(T p, T q) { return M(pow)(p, q); }           \
    /* C's fmod: truncating, exact */                                                      \
    BP_HOST_DEVICE static inline T bpf_fmod##S(T p, T q) { return M(fmod)(p, q); }         \
    /* Python/NumPy modulo: the result takes the divisor's sign; x mod 0 is                \
     * NaN; r + q rounds once in T */                                                      \
    BP_HOST_DEVICE static inline T bpf_mod##S(T p, T q)                                    \
    {                                                                                      \
        T r = M(fmod)(p, q);                                                               \
        if (q == (T)0)                                                                     \
            return r;                                                                      \
        if (r != (T)0) {                                                                   \
            if ((r < (T)0) != (q < (T)0))                                                  \
                r += q;                                                                    \
        } else {                                                                           \
            r = M(copysign)((T)0, q);                                                      \
        }                                                                                  \
        return r;                                                                          \
    }                                                                                      \
    /* p < 0 ? p q : p, as a select of bits: written as a conditional, GCC                 \
     * turns it back into a branch (it may not make the product unconditional             \
     * under -ftrapping-math), and a branch on the sign of random data is                  \
     * mispredicted half the time. The bits chosen are the product's or p's. */            \
    BP_HOST_DEVICE static inline T bpf_prelu##S(T p, T q)                                  \
    {                                                                                      \
        T m = p * q, r;                                                                    \
        U pb, mb;                                                                          \
        memcpy(&pb, &p, sizeof pb);                                                        \
        memcpy(&mb, &m, sizeof mb);                                                        \
        U neg = (U)0 - (U)(p < (T)0);                                                      \
        U rb = (mb & neg) | (pb & ~neg);                                                   \
        memcpy(&r, &rb, sizeof r);                                                         \
        return r;                                                                          \
    }

BPF__FORMULAS(double, , BPF__D, uint64_t)
BPF__FORMULAS(float, _f, BPF__F, uint32_t)
#ifdef __cplusplus
/* C++ (the cuda kernels): the float formulas also under the double ones'
 * names, so that code templated on its compute type calls bpf_NAME(v). */
BPF__FORMULAS(float, , BPF__F, uint32_t)
#endif

#endif

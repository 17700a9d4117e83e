/* The loops of the elementwise kernels (unary.c, binary.c, where.c): every
 * op of the UNARY, BINARY, WHERE and CLIP kinds, one kernel per kind
 * (bpk_unary, bpk_binary, bpk_where, bpk_op_clip), each switching on the op
 * code. One file per kind so that a build compiles them side by side: with
 * a typed loop per op and dtype, compiled per ISA level (BPK_CLONES), they
 * are the largest objects of the library.
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
#ifndef BP_KERNELS_ELEMENTWISE_LOOPS_H
#define BP_KERNELS_ELEMENTWISE_LOOPS_H
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

/* What signed and unsigned share: add, sub, mul and neg wrapping through
 * UT, and a to a power e >= 0 by squaring (powu_). */
#define BPK_WRAP_OPS(S, T, UT)                                                    \
    static inline T add_##S(T a, T b) { return (T)((UT)a + (UT)b); }                   \
    static inline T sub_##S(T a, T b) { return (T)((UT)a - (UT)b); }                   \
    static inline T mul_##S(T a, T b) { return (T)((UT)a * (UT)b); }                   \
    static inline T neg_##S(T a) { return (T)((UT)0 - (UT)a); }                         \
    static inline T powu_##S(T a, T e)                                                  \
    {                                                                                   \
        UT r = 1, x = (UT)a;                                                            \
        for (; e > 0; e >>= 1) {                                                        \
            if (e & 1)                                                                  \
                r = (UT)(r * x);                                                        \
            x = (UT)(x * x);                                                            \
        }                                                                               \
        return (T)r;                                                                    \
    }

#define BPK_INT_OPS(S, T, UT)                                                     \
    BPK_WRAP_OPS(S, T, UT)                                                              \
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
        return powu_##S(a, e);                                                          \
    }

/* UT is at least 32 bits wide so that uint8_t operands are not promoted to
 * (signed) int before multiplying. */
BPK_INT_OPS(i8, int8_t, uint32_t)
BPK_INT_OPS(i16, int16_t, uint32_t)
BPK_INT_OPS(i32, int32_t, uint32_t)
BPK_INT_OPS(i64, int64_t, uint64_t)

/* Unsigned: wrap modulo 2^bits; x / 0 and x % 0 are 0. UT is at least 32
 * bits wide (uint16_t operands would be promoted to signed int). */
#define BPK_UINT_OPS(S, T, UT)                                                    \
    BPK_WRAP_OPS(S, T, UT)                                                              \
    static inline T div_##S(T a, T b) { return b ? (T)(a / b) : 0; }                    \
    static inline T mod_##S(T a, T b) { return b ? (T)(a % b) : 0; }                    \
    static inline T pow_##S(T a, T e) { return powu_##S(a, e); }

BPK_UINT_OPS(u8, uint8_t, uint32_t)
BPK_UINT_OPS(u16, uint16_t, uint32_t)
BPK_UINT_OPS(u32, uint32_t, uint32_t)
BPK_UINT_OPS(u64, uint64_t, uint64_t)

/* formula fn of elementwise_formulas.h in the compute type of v: float's
 * (bpf_fn_f) or double's (bpf_fn) */
#define F_OF(fn, v) _Generic((v), float: bpf_##fn##_f, default: bpf_##fn)

#endif

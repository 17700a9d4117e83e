/* Movement ops (a strided copy of same-size elements) and CAST.
 *
 * Casts between integer/bool dtypes go through int64 so they stay exact; any
 * cast that involves a float goes through double (exact for every float
 * dtype), except int -> float, which rounds once from int64 (cast.h).
 * The common float casts have typed loops so they run at memory speed. */
#include <math.h>
#include <string.h>

#include "half_floats.h"
#include "kernels.h"

/* out[i] = CONV(src[i]) over typed pointers, unit-stride fast path. */
#define COPY_LOOP(ST, OT, CONV)                                                         \
    do {                                                                                \
        bpk_iter it_;                                                                   \
        int64_t pos_[2];                                                                \
        bpk_iter_init(&it_, 2, (const bp_view *[]){out, src});                          \
        OT *ob_ = (OT *)bpk_base(out);                                                  \
        const ST *sb_ = (const ST *)bpk_base(src);                                      \
        while (bpk_iter_next(&it_, pos_)) {                                             \
            OT *restrict o_ = ob_ + pos_[0];                                            \
            const ST *restrict s_ = sb_ + pos_[1];                                      \
            int64_t n_ = it_.inner, so_ = it_.inner_stride[0], ss_ = it_.inner_stride[1]; \
            if (so_ == 1 && ss_ == 1) {                                                 \
                for (int64_t i_ = 0; i_ < n_; i_++)                                     \
                    o_[i_] = CONV(s_[i_]);                                              \
            } else {                                                                    \
                for (int64_t i_ = 0; i_ < n_; i_++)                                     \
                    o_[i_ * so_] = CONV(s_[i_ * ss_]);                                  \
            }                                                                           \
        }                                                                               \
    } while (0)

#define ID(v) (v)
#define TO_F32(v) ((float)(v))
#define TO_F64(v) ((double)(v))
#define NZ_F32(v) ((float)((v) != 0)) /* a bool: any nonzero byte is true */
#define NZ_F64(v) ((double)((v) != 0))

/* integers -> f16: every |v| >= 65520 is infinity, so clamping to 2^24 (exact
 * in f32) first changes nothing and leaves one rounding */
static inline uint16_t i64_f16(int64_t v)
{
    int64_t c = v < -(1 << 24) ? -(1 << 24) : v > (1 << 24) ? (1 << 24) : v;
    return f32_f16((float)c);
}
/* i32 -> bf16: exact in double, then rounded once as a double is */
static inline uint16_t i32_bf16(int32_t v) { return f64_bf16((double)v); }

/* float -> integer: truncate, saturate, NaN gives 0 (bp_sat_f64) */
static inline int32_t f_i32(double v)
{
    return v != v ? 0 : v >= 2147483648.0 ? INT32_MAX : v <= -2147483648.0 ? INT32_MIN : (int32_t)v;
}
static inline int32_t ff_i32(float v)
{
    return v != v ? 0 : v >= 2147483648.0f ? INT32_MAX : v <= -2147483648.0f ? INT32_MIN : (int32_t)v;
}
static inline int64_t f_i64(double v)
{
    return v != v ? 0 : v >= 9223372036854775808.0 ? INT64_MAX
                    : v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
}
static inline int32_t i64_i32(int64_t v) { return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v; }

#define F16_F(v) f16_f32(v)
#define BF16_F(v) bf16_f32(v)
#define F_F16(v) f32_f16(v)
#define F_BF16(v) f32_bf16(v)
#define F16_D(v) ((double)f16_f32(v))
#define BF16_D(v) ((double)bf16_f32(v))
#define F16_BF16(v) f32_bf16(f16_f32(v))
#define BF16_F16(v) f32_f16(bf16_f32(v))
#define F16_I32(v) ff_i32(f16_f32(v))
#define BF16_I32(v) ff_i32(bf16_f32(v))
#define F16_I64(v) f_i64((double)f16_f32(v))
#define BF16_I64(v) f_i64((double)bf16_f32(v))

static void copy_same(const bp_view *src, const bp_view *out)
{
    size_t es = bp_dtype_size(out->dtype);
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){out, src});
    if (it.inner_stride[0] == 1 && it.inner_stride[1] == 1) {
        char *ob = bpk_base(out);
        const char *sb = bpk_base(src);
        while (bpk_iter_next(&it, pos))
            memcpy(ob + pos[0] * (int64_t)es, sb + pos[1] * (int64_t)es, (size_t)it.inner * es);
        return;
    }
    switch (es) {
    case 1: COPY_LOOP(uint8_t, uint8_t, ID); break;
    case 2: COPY_LOOP(uint16_t, uint16_t, ID); break;
    case 4: COPY_LOOP(uint32_t, uint32_t, ID); break;
    default: COPY_LOOP(uint64_t, uint64_t, ID); break;
    }
}

/* The typed paths: every pair among f32 f64 f16 bf16 i32 i64 but i64 ->
 * bf16 (whose rounding from beyond 2^53 needs the integer path); false when
 * the pair has none. Multiversioned: the AVX2 clone converts 8 lanes. */
#define PAIR(S, D) ((S) * 16 + (D))
BPK_CLONES static bool cast_fast(const bp_view *src, const bp_view *out)
{
    switch (PAIR(src->dtype, out->dtype)) {
    case PAIR(BP_F32, BP_F64): COPY_LOOP(float, double, TO_F64); break;
    case PAIR(BP_F32, BP_F16): COPY_LOOP(float, uint16_t, F_F16); break;
    case PAIR(BP_F32, BP_BF16): COPY_LOOP(float, uint16_t, F_BF16); break;
    case PAIR(BP_F32, BP_I32): COPY_LOOP(float, int32_t, ff_i32); break;
    case PAIR(BP_F32, BP_I64): COPY_LOOP(float, int64_t, f_i64); break;
    case PAIR(BP_F64, BP_F32): COPY_LOOP(double, float, TO_F32); break;
    case PAIR(BP_F64, BP_F16): COPY_LOOP(double, uint16_t, f64_f16); break;
    case PAIR(BP_F64, BP_BF16): COPY_LOOP(double, uint16_t, f64_bf16); break;
    case PAIR(BP_F64, BP_I32): COPY_LOOP(double, int32_t, f_i32); break;
    case PAIR(BP_F64, BP_I64): COPY_LOOP(double, int64_t, f_i64); break;
    case PAIR(BP_F16, BP_F32): COPY_LOOP(uint16_t, float, F16_F); break;
    case PAIR(BP_F16, BP_F64): COPY_LOOP(uint16_t, double, F16_D); break;
    case PAIR(BP_F16, BP_BF16): COPY_LOOP(uint16_t, uint16_t, F16_BF16); break;
    case PAIR(BP_F16, BP_I32): COPY_LOOP(uint16_t, int32_t, F16_I32); break;
    case PAIR(BP_F16, BP_I64): COPY_LOOP(uint16_t, int64_t, F16_I64); break;
    case PAIR(BP_BF16, BP_F32): COPY_LOOP(uint16_t, float, BF16_F); break;
    case PAIR(BP_BF16, BP_F64): COPY_LOOP(uint16_t, double, BF16_D); break;
    case PAIR(BP_BF16, BP_F16): COPY_LOOP(uint16_t, uint16_t, BF16_F16); break;
    case PAIR(BP_BF16, BP_I32): COPY_LOOP(uint16_t, int32_t, BF16_I32); break;
    case PAIR(BP_BF16, BP_I64): COPY_LOOP(uint16_t, int64_t, BF16_I64); break;
    case PAIR(BP_I32, BP_F32): COPY_LOOP(int32_t, float, TO_F32); break;
    case PAIR(BP_I32, BP_F64): COPY_LOOP(int32_t, double, TO_F64); break;
    case PAIR(BP_I32, BP_F16): COPY_LOOP(int32_t, uint16_t, i64_f16); break;
    case PAIR(BP_I32, BP_BF16): COPY_LOOP(int32_t, uint16_t, i32_bf16); break;
    case PAIR(BP_I32, BP_I64): COPY_LOOP(int32_t, int64_t, ID); break;
    case PAIR(BP_I64, BP_F32): COPY_LOOP(int64_t, float, TO_F32); break;
    case PAIR(BP_I64, BP_F64): COPY_LOOP(int64_t, double, TO_F64); break;
    case PAIR(BP_I64, BP_F16): COPY_LOOP(int64_t, uint16_t, i64_f16); break;
    case PAIR(BP_I64, BP_I32): COPY_LOOP(int64_t, int32_t, i64_i32); break;
    /* a one-hot's Equal -> Cast (magika: 64 x 2048 x 257 bools a batch) and
     * bytes to floats: element by element through cast.h, 10% of magika */
    case PAIR(BP_BOOL, BP_F32): COPY_LOOP(uint8_t, float, NZ_F32); break;
    case PAIR(BP_BOOL, BP_F64): COPY_LOOP(uint8_t, double, NZ_F64); break;
    case PAIR(BP_U8, BP_F32): COPY_LOOP(uint8_t, float, TO_F32); break;
    case PAIR(BP_I8, BP_F32): COPY_LOOP(int8_t, float, TO_F32); break;
    default: return false;
    }
    return true;
}

/* One element at a time through the shared load/store rules. */
static void cast_generic(const bp_view *src, const bp_view *out)
{
    bp_dtype s = src->dtype, d = out->dtype;
    int64_t ss = (int64_t)bp_dtype_size(s), ds = (int64_t)bp_dtype_size(d);
    /* int/bool source: the exact int64 path (int64 -> float rounds once);
     * float source: the double path (float -> int saturates, NaN -> 0) */
    bool via_int = !bp_dtype_is_float(s);
    char *ob = bpk_base(out);
    const char *sb = bpk_base(src);
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){out, src});
    while (bpk_iter_next(&it, pos)) {
        char *o = ob + pos[0] * ds;
        const char *p = sb + pos[1] * ss;
        int64_t so = it.inner_stride[0] * ds, sp = it.inner_stride[1] * ss;
        if (via_int)
            for (int64_t i = 0; i < it.inner; i++)
                bp_elem_cast_int(d, o + i * so, s, p + i * sp);
        else
            for (int64_t i = 0; i < it.inner; i++)
                bp_elem_store_f64(d, o + i * so, bp_elem_load_f64(s, p + i * sp));
    }
}

bp_status bpk_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out)
{
    if (op != BP_OP_CAST || src->dtype == out->dtype) {
        copy_same(src, out);
        return BP_OK;
    }
    if (!cast_fast(src, out))
        cast_generic(src, out);
    return BP_OK;
}

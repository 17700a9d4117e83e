/* Movement ops (a strided copy of same-size elements) and CAST.
 *
 * Casts between integer/bool dtypes go through int64 so they stay exact; any
 * cast that involves a float goes through double (exact for every float
 * dtype), except int -> float, which rounds once from int64 (see convert.c).
 * The common float casts have typed loops so they run at memory speed. */
#include <string.h>

#include "binary.h"

/* out[i] = CONV(src[i]) over typed pointers, unit-stride fast path. */
#define COPY_LOOP(ST, OT, CONV)                                                         \
    do {                                                                                \
        bpb_iter it_;                                                                   \
        int64_t pos_[2];                                                                \
        bpb_iter_init(&it_, 2, (const bp_view *[]){out, src});                          \
        OT *ob_ = (OT *)bpb_base(out);                                                  \
        const ST *sb_ = (const ST *)bpb_base(src);                                      \
        while (bpb_iter_next(&it_, pos_)) {                                             \
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
#define F16_F(v) bp_f16_to_f32(v)
#define BF16_F(v) bp_bf16_to_f32(v)
#define F_F16(v) bp_f32_to_f16(v)
#define F_BF16(v) bp_f32_to_bf16(v)

static void copy_same(const bp_view *src, const bp_view *out)
{
    size_t es = bp_dtype_size(out->dtype);
    bpb_iter it;
    int64_t pos[2];
    bpb_iter_init(&it, 2, (const bp_view *[]){out, src});
    if (it.inner_stride[0] == 1 && it.inner_stride[1] == 1) {
        char *ob = bpb_base(out);
        const char *sb = bpb_base(src);
        while (bpb_iter_next(&it, pos))
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

/* The typed fast paths; false when the pair has none. */
static bool cast_fast(const bp_view *src, const bp_view *out)
{
    bp_dtype s = src->dtype, d = out->dtype;
    if (s == BP_F32 && d == BP_F64) COPY_LOOP(float, double, TO_F64);
    else if (s == BP_F64 && d == BP_F32) COPY_LOOP(double, float, TO_F32);
    else if (s == BP_F32 && d == BP_F16) COPY_LOOP(float, uint16_t, F_F16);
    else if (s == BP_F32 && d == BP_BF16) COPY_LOOP(float, uint16_t, F_BF16);
    else if (s == BP_F16 && d == BP_F32) COPY_LOOP(uint16_t, float, F16_F);
    else if (s == BP_BF16 && d == BP_F32) COPY_LOOP(uint16_t, float, BF16_F);
    else if (s == BP_I32 && d == BP_F32) COPY_LOOP(int32_t, float, TO_F32);
    else if (s == BP_I32 && d == BP_F64) COPY_LOOP(int32_t, double, TO_F64);
    else if (s == BP_I64 && d == BP_F32) COPY_LOOP(int64_t, float, TO_F32);
    else if (s == BP_I64 && d == BP_F64) COPY_LOOP(int64_t, double, TO_F64);
    else if (s == BP_I32 && d == BP_I64) COPY_LOOP(int32_t, int64_t, ID);
    else
        return false;
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
    char *ob = bpb_base(out);
    const char *sb = bpb_base(src);
    bpb_iter it;
    int64_t pos[2];
    bpb_iter_init(&it, 2, (const bp_view *[]){out, src});
    while (bpb_iter_next(&it, pos)) {
        char *o = ob + pos[0] * ds;
        const char *p = sb + pos[1] * ss;
        int64_t so = it.inner_stride[0] * ds, sp = it.inner_stride[1] * ss;
        if (via_int)
            for (int64_t i = 0; i < it.inner; i++)
                bp_elem_store_i64(d, o + i * so, bp_elem_load_i64(s, p + i * sp));
        else
            for (int64_t i = 0; i < it.inner; i++)
                bp_elem_store_f64(d, o + i * so, bp_elem_load_f64(s, p + i * sp));
    }
}

bp_status bpb_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out)
{
    if (op != BP_OP_CAST || src->dtype == out->dtype) {
        copy_same(src, out);
        return BP_OK;
    }
    if (!cast_fast(src, out))
        cast_generic(src, out);
    return BP_OK;
}

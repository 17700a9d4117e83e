/* Movement ops (a strided copy of same-size elements) and CAST, as in the
 * binary backend but over a slice [lo, hi) of the output per thread.
 *
 * Casts between integer/bool dtypes go through int64 so they stay exact; any
 * cast that involves a float goes through double (exact for every float
 * dtype), except int -> float, which rounds once from int64 (see convert.c).
 * The common float casts have typed loops so they run at memory speed. */
#include <string.h>

#include "blas_cpu.h"

/* out[i] = CONV(src[i]) over typed pointers, unit-stride fast path. */
#define COPY_LOOP(ST, OT, CONV)                                                         \
    do {                                                                                \
        bpc_cursor c_;                                                                  \
        int64_t pos_[2], n_;                                                            \
        bpc_cursor_init(&c_, 2, (const bp_view *[]){out, src}, lo, hi);                 \
        OT *ob_ = (OT *)bpc_base(out);                                                  \
        const ST *sb_ = (const ST *)bpc_base(src);                                      \
        while (bpc_cursor_next(&c_, pos_, &n_)) {                                             \
            OT *restrict o_ = ob_ + pos_[0];                                            \
            const ST *restrict s_ = sb_ + pos_[1];                                      \
            int64_t so_ = c_.it.inner_stride[0], ss_ = c_.it.inner_stride[1]; \
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

static void copy_same(const bp_view *src, const bp_view *out, int64_t lo, int64_t hi)
{
    size_t es = bp_dtype_size(out->dtype);
    bpc_cursor c;
    int64_t pos[2], n;
    bpc_cursor_init(&c, 2, (const bp_view *[]){out, src}, lo, hi);
    if (c.it.inner_stride[0] == 1 && c.it.inner_stride[1] == 1) {
        char *ob = bpc_base(out);
        const char *sb = bpc_base(src);
        while (bpc_cursor_next(&c, pos, &n))
            memcpy(ob + pos[0] * (int64_t)es, sb + pos[1] * (int64_t)es, (size_t)n * es);
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
static bool cast_fast(const bp_view *src, const bp_view *out, int64_t lo, int64_t hi)
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
static void cast_generic(const bp_view *src, const bp_view *out, int64_t lo, int64_t hi)
{
    bp_dtype s = src->dtype, d = out->dtype;
    int64_t ss = (int64_t)bp_dtype_size(s), ds = (int64_t)bp_dtype_size(d);
    /* int/bool source: the exact int64 path (int64 -> float rounds once);
     * float source: the double path (float -> int saturates, NaN -> 0) */
    bool via_int = !bp_dtype_is_float(s);
    char *ob = bpc_base(out);
    const char *sb = bpc_base(src);
    bpc_cursor c;
    int64_t pos[2], n;
    bpc_cursor_init(&c, 2, (const bp_view *[]){out, src}, lo, hi);
    while (bpc_cursor_next(&c, pos, &n)) {
        char *o = ob + pos[0] * ds;
        const char *p = sb + pos[1] * ss;
        int64_t so = c.it.inner_stride[0] * ds, sp = c.it.inner_stride[1] * ss;
        if (via_int)
            for (int64_t i = 0; i < n; i++)
                bpc_store_i64(d, o + i * so, bpc_load_i64(s, p + i * sp));
        else
            for (int64_t i = 0; i < n; i++)
                bpc_store_f64(d, o + i * so, bpc_load_f64(s, p + i * sp));
    }
}

typedef struct copy_ctx {
    bp_op op;
    const bp_view *src, *out;
} copy_ctx;

static void copy_run(void *p, int64_t lo, int64_t hi)
{
    const copy_ctx *c = p;
    if (c->op != BP_OP_CAST || c->src->dtype == c->out->dtype)
        copy_same(c->src, c->out, lo, hi);
    else if (!cast_fast(c->src, c->out, lo, hi))
        cast_generic(c->src, c->out, lo, hi);
}

bp_status bpc_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out)
{
    copy_ctx c = {op, src, out};
    /* a plain copy is memory-bound: only big ones gain from a second thread */
    bool plain = op != BP_OP_CAST || src->dtype == out->dtype;
    bpc_parallel(dev, bpc_numel(out), plain ? 4 * BPC_GRAIN_LIGHT : BPC_GRAIN_LIGHT, copy_run, &c);
    return BP_OK;
}

/* The WHERE and CLIP kinds' kernels, bpk_where and bpk_op_clip: selections
 * that move or clamp elements without arithmetic. */
#include "elementwise_loops.h"

/* ---- where -------------------------------------------------------------- */

/* Moves elements as raw bits of their size; bool values are normalised to 0/1. */
#define WHERE_LOOP(T, NORM)                                                             \
    do {                                                                                \
        bpk_iter it_;                                                                   \
        int64_t pos_[4];                                                                \
        bpk_iter_init(&it_, 4, (const bp_view *[]){out, cond, a, b});                   \
        T *ob_ = (T *)bpk_base(out);                                                    \
        const uint8_t *cb_ = (const uint8_t *)bpk_base(cond);                           \
        const T *ab_ = (const T *)bpk_base(a), *bb_ = (const T *)bpk_base(b);           \
        while (bpk_iter_next(&it_, pos_)) {                                             \
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

BPK_CLONES bp_status bpk_where(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
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
    return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP, "binary: where not implemented for %s",
                    bp_dtype_name(out->dtype));
}

/* ---- clip ---------------------------------------------------------------------- */

/* min(max(x, lo), hi) with NaN-propagating max and min (bp_maximum's rule):
 * a NaN x stays NaN, a NaN bound gives NaN. Floats in double (a selection:
 * exact), integers in int64. */
bp_status bpk_op_clip(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)dev, (void)op, (void)p, (void)n_in, (void)n_out;
    const bp_view *x = in[0], *lo = in[1], *hi = in[2], *out = out_v[0];
    /* an absent bound is walked as x itself and ignored */
    const bp_view *vs[4] = {out, x, lo ? lo : x, hi ? hi : x};
    bool is_float = bp_dtype_is_float(x->dtype);
    size_t es = bp_dtype_size(x->dtype);
    bpk_iter it;
    int64_t pos[4];
    bpk_iter_init(&it, 4, vs);
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            const char *e[4];
            for (int j = 1; j < 4; j++)
                e[j] = bpk_base(vs[j]) + (pos[j] + i * it.inner_stride[j]) * (int64_t)es;
            char *dst = bpk_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)es;
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
                bp_dtype dt = x->dtype;
                int64_t v = bp_elem_load_i64(dt, e[1]);
                if (lo) {
                    int64_t l = bp_elem_load_i64(dt, e[2]);
                    v = bpk_int_order(dt, v) < bpk_int_order(dt, l) ? l : v;
                }
                if (hi) {
                    int64_t h = bp_elem_load_i64(dt, e[3]);
                    v = bpk_int_order(dt, v) > bpk_int_order(dt, h) ? h : v;
                }
                bp_elem_store_i64(out->dtype, dst, v);
            }
        }
    return BP_OK;
}

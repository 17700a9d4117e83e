/* TRILU and ONE_HOT: element moves that need positions, not arithmetic.
 * Elements are copied as bytes, so every dtype is exact. */
#include <math.h>
#include <string.h>

#include "kernels.h"

/* TRILU (ONNX Trilu) on the last two axes of x: p->i[0] upper keeps
 * j - i >= k, else (lower) j - i <= k, with k = p->i[1]; the rest is zero
 * (all-zero bytes: +0, false). */
bp_status bpk_op_trilu(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                       const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)dev, (void)op, (void)n_in, (void)n_out;
    const bp_view *x = in[0], *out = out_v[0];
    if (bpk_numel(out) == 0)
        return BP_OK;
    int32_t r = x->rank;
    int64_t m = x->shape[r - 2], n = x->shape[r - 1], k = p->i[1];
    bool upper = p->i[0] != 0;
    size_t es = bp_dtype_size(x->dtype);
    bp_view b[2] = {*out, *x}; /* the batch axes */
    b[0].rank = b[1].rank = r - 2;
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){&b[0], &b[1]});
    while (bpk_iter_next(&it, pos))
        for (int64_t t = 0; t < it.inner; t++) {
            char *o = bpk_base(out) + (pos[0] + t * it.inner_stride[0]) * (int64_t)es;
            const char *s = bpk_base(x) + (pos[1] + t * it.inner_stride[1]) * (int64_t)es;
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    char *dst = o + (i * out->strides[r - 2] + j * out->strides[r - 1]) * (int64_t)es;
                    bool keep = upper ? j - i >= k : j - i <= k;
                    if (keep)
                        memcpy(dst, s + (i * x->strides[r - 2] + j * x->strides[r - 1]) * (int64_t)es,
                               es);
                    else
                        memset(dst, 0, es);
                }
        }
    return BP_OK;
}

/* ONE_HOT (ONNX OneHot): out (the depth axis last) holds values[1] where
 * the position along depth is the index (negative ones count from the end;
 * floats truncated toward zero), values[0] elsewhere; an index outside
 * [-depth, depth), or a NaN, gives a row of off values. */
bp_status bpk_op_one_hot(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                         const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)dev, (void)op, (void)n_in, (void)n_out;
    const bp_view *ind = in[0], *values = in[1], *out = out_v[0];
    if (bpk_numel(out) == 0)
        return BP_OK;
    int64_t depth = p->i[0];
    int32_t last = out->rank - 1;
    size_t es = bp_dtype_size(out->dtype), is = bp_dtype_size(ind->dtype);
    char off[8], on[8];
    memcpy(off, bpk_base(values), es);
    memcpy(on, bpk_base(values) + values->strides[0] * (int64_t)es, es);
    /* indices with a trailing axis of extent depth and stride 0: its rows
     * line up with out's */
    bp_view iv = *ind;
    iv.rank = out->rank;
    iv.shape[last] = depth;
    iv.strides[last] = 0;
    bool is_float = bp_dtype_is_float(ind->dtype);
    bpk_rows r;
    bpk_rows_init(&r, 2, (const bp_view *[]){out, &iv});
    while (bpk_rows_next(&r)) {
        const char *e = bpk_base(ind) + r.at[1] * (int64_t)is;
        int64_t hot = -1; /* none */
        if (is_float) {
            double d = trunc(bp_elem_load_f64(ind->dtype, e));
            if (d >= -(double)depth && d < (double)depth)
                hot = d < 0 ? (int64_t)d + depth : (int64_t)d;
            if (hot < 0 || hot >= depth) /* depth beyond 2^53: doubles round */
                hot = -1;
        } else {
            int64_t v = bp_elem_load_i64(ind->dtype, e);
            if (v >= -depth && v < depth)
                hot = v < 0 ? v + depth : v;
        }
        char *row = bpk_base(out) + r.at[0] * (int64_t)es;
        for (int64_t i = 0; i < depth; i++)
            memcpy(row + i * out->strides[last] * (int64_t)es, i == hot ? on : off, es);
    }
    return BP_OK;
}

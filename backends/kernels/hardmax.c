/* HARDMAX (ONNX Hardmax) along the last axis of x: 1 at the first maximum
 * of each row, 0 elsewhere. The maximum is argmax's: a NaN wins over any
 * number, the first NaN over later ones. */
#include "kernels.h"

bp_status bpk_op_hardmax(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                         const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)dev, (void)op, (void)p, (void)n_in, (void)n_out;
    const bp_view *x = in[0], *out = out_v[0];
    int32_t last = x->rank - 1;
    int64_t n = x->shape[last], sx = x->strides[last], so = out->strides[last];
    size_t es = bp_dtype_size(x->dtype);
    bpk_rows r;
    bpk_rows_init(&r, 2, (const bp_view *[]){x, out});
    while (bpk_rows_next(&r)) {
        const char *row = bpk_base(x) + r.at[0] * (int64_t)es;
        int64_t at = -1;
        double best = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = bp_elem_load_f64(x->dtype, row + i * sx * (int64_t)es);
            if (at < 0 || (best == best && (v != v || v > best)))
                best = v, at = i;
        }
        char *orow = bpk_base(out) + r.at[1] * (int64_t)es;
        for (int64_t i = 0; i < n; i++)
            bp_elem_store_f64(out->dtype, orow + i * so * (int64_t)es, i == at ? 1.0 : 0.0);
    }
    return BP_OK;
}

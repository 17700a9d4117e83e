/* Local response normalisation across channels (ONNX LRN), one unit being
 * one image's position: its C channel values are loaded, and each is
 * divided by (bias + alpha / size * the sum of squares over its channel
 * window) ^ beta, all in double. */
#include <math.h>
#include <stdlib.h>

#include "kernels_nn.h"

/* The byte offset of x[n, 0, position s] (s row-major over axes 2..). */
static int64_t position_offset(const bp_view *x, int64_t n, int64_t s)
{
    int64_t off = n * x->strides[0];
    for (int32_t d = x->rank - 1; d >= 2; d--) {
        off += (s % x->shape[d]) * x->strides[d];
        s /= x->shape[d];
    }
    return off * (int64_t)bp_dtype_size(x->dtype);
}

bp_status bpk_lrn_units(void *dev, const bp_op_params *p, const bp_view *x, const bp_view *y,
                        int64_t lo, int64_t hi)
{
    const int64_t C = x->shape[1], size = p->i[0];
    const double alpha = p->f[0], beta = p->f[1], bias = p->f[2];
    int64_t S = 1;
    for (int32_t d = 2; d < x->rank; d++)
        S *= x->shape[d];
    if (hi <= lo || C == 0 || S == 0)
        return BP_OK;
    double *v = malloc((size_t)C * sizeof *v);
    if (!v)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "lrn: out of memory for %lld channels",
                        (long long)C);
    const int64_t before = (size - 1) / 2, after = size - 1 - before; /* floor, ceil */
    const size_t es = bp_dtype_size(x->dtype), eo = bp_dtype_size(y->dtype);
    for (int64_t u = lo; u < hi; u++) {
        const int64_t n = u / S, s = u % S;
        const char *xp = bpk_base(x) + position_offset(x, n, s);
        char *yp = bpk_base(y) + position_offset(y, n, s);
        for (int64_t c = 0; c < C; c++)
            v[c] = bp_elem_load_f64(x->dtype, xp + c * x->strides[1] * (int64_t)es);
        for (int64_t c = 0; c < C; c++) {
            int64_t a = c - before > 0 ? c - before : 0, b = c + after < C ? c + after : C - 1;
            double sq = 0;
            for (int64_t k = a; k <= b; k++)
                sq += v[k] * v[k];
            double r = v[c] / pow(bias + alpha / (double)size * sq, beta);
            bp_elem_store_f64(y->dtype, yp + c * y->strides[1] * (int64_t)eo, r);
        }
    }
    free(v);
    return BP_OK;
}

/* SOFTMAX / LOG_SOFTMAX over the last axis, computed in double.
 *
 * Each row is loaded once into a double buffer (one typed loop, any stride),
 * so exp() runs once per element: max, then sum of exp(x - max) (kept in the
 * buffer for SOFTMAX), then the scaled store. Subtracting the max keeps exp()
 * finite; a row of all -inf gives -inf - -inf = NaN everywhere, as NumPy. */
#include <math.h>
#include <stdlib.h>

#include "kernels.h"

/* out[i] = (buf[i] - sub) * mul + add: LOG_SOFTMAX subtracts the max first,
 * since x + (-max - log(sum)) would cancel catastrophically for large x */
static void store_row(bp_dtype dt, char *p, int64_t stride, int64_t n, const double *buf,
                      double sub, double mul, double add)
{
    switch (dt) {
    case BP_F16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)p)[i * stride] = bp_f64_to_f16((buf[i] - sub) * mul + add);
        break;
    case BP_BF16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)p)[i * stride] = bp_f64_to_bf16((buf[i] - sub) * mul + add);
        break;
    case BP_F32:
        for (int64_t i = 0; i < n; i++)
            ((float *)p)[i * stride] = (float)((buf[i] - sub) * mul + add);
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            ((double *)p)[i * stride] = (buf[i] - sub) * mul + add;
        break;
    }
}

static void softmax_row(bp_op op, double *buf, int64_t n, double *sub, double *mul, double *add)
{
    double m = -INFINITY;
    bool nan = false;
    for (int64_t i = 0; i < n; i++)
        m = buf[i] > m ? buf[i] : m, nan |= buf[i] != buf[i];
    if (nan)
        m = NAN; /* poison the whole row, as the naive formula would */
    double s = 0;
    if (op == BP_OP_SOFTMAX) {
        for (int64_t i = 0; i < n; i++)
            s += buf[i] = exp(buf[i] - m);
        *sub = 0.0, *mul = 1.0 / s, *add = 0.0;
    } else {
        for (int64_t i = 0; i < n; i++)
            s += exp(buf[i] - m);
        *sub = m, *mul = 1.0, *add = -log(s);
    }
}

bp_status bpk_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    if (bpk_numel(x) == 0)
        return BP_OK;
    int32_t r = x->rank;
    int64_t n = r > 0 ? x->shape[r - 1] : 1;
    int64_t sx = r > 0 ? x->strides[r - 1] : 0, so = r > 0 ? out->strides[r - 1] : 0;
    double *buf = malloc((size_t)n * sizeof *buf);
    if (!buf)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "softmax: no memory for a row of %lld",
                        (long long)n);

    /* rows: the leading axes of x and out, walked together */
    bp_view rows[2] = {*x, *out};
    for (int v = 0; v < 2; v++)
        rows[v].rank = r > 0 ? r - 1 : 0;
    size_t xsz = bp_dtype_size(x->dtype), osz = bp_dtype_size(out->dtype);
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){&rows[0], &rows[1]});
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            double sub, mul, add;
            bpk_load_row_f64(x->dtype, bpk_base(x) + (pos[0] + i * it.inner_stride[0]) * (int64_t)xsz, sx,
                     n, buf);
            softmax_row(op, buf, n, &sub, &mul, &add);
            store_row(out->dtype, bpk_base(out) + (pos[1] + i * it.inner_stride[1]) * (int64_t)osz,
                      so, n, buf, sub, mul, add);
        }
    free(buf);
    return BP_OK;
}

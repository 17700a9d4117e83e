/* Normalisation in double, two passes over each group (the mean, then the
 * squared deviations from it), rounded once into the output:
 *   batch_norm     (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c]
 *   instance_norm  the same with each (n, c) plane's own mean and variance
 *   layer_norm     over each row of the trailing axes; the row's mean and
 *                  1 / sqrt(variance + eps) also stored when asked
 *   rms_norm       x / sqrt(mean(x^2) + eps) * scale (scale optional)
 * Variances are the population ones (divided by the count, as ONNX). */
#include <math.h>
#include <stdlib.h>

#include "kernels_nn.h"

static double channel(const bp_view *v, int64_t c)
{
    return bp_elem_load_f64(v->dtype,
                            bpk_base(v) + c * v->strides[0] * (int64_t)bp_dtype_size(v->dtype));
}

static int64_t plane_size(const bp_view *x)
{
    int64_t n = 1;
    for (int32_t d = 2; d < x->rank; d++)
        n *= x->shape[d];
    return n;
}

static double *scratch(void *dev, const char *op, int64_t n)
{
    double *b = malloc((size_t)(n > 0 ? n : 1) * sizeof *b);
    if (!b)
        bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld doubles", op,
                 (long long)n);
    return b;
}

/* The mean of v[0 .. n) and 1 / sqrt(its population variance + eps). */
static void moments(const double *v, int64_t n, double eps, double *mean, double *inv_std)
{
    double s = 0, q = 0;
    for (int64_t i = 0; i < n; i++)
        s += v[i];
    double m = s / (double)n;
    for (int64_t i = 0; i < n; i++)
        q += (v[i] - m) * (v[i] - m);
    *mean = m;
    *inv_std = 1.0 / sqrt(q / (double)n + eps);
}

bp_status bpk_batch_norm_planes(void *dev, const bp_op_params *p, const bp_view *const *in,
                                const bp_view *y, int64_t lo, int64_t hi)
{
    const bp_view *x = in[0];
    const int64_t C = x->shape[1], n = plane_size(x);
    if (hi <= lo || n == 0)
        return BP_OK;
    double *v = scratch(dev, "batch_norm", n);
    if (!v)
        return BP_ERR_OUT_OF_MEMORY;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t c = u % C;
        const double sc = channel(in[1], c), b = channel(in[2], c), m = channel(in[3], c);
        const double r = 1.0 / sqrt(channel(in[4], c) + p->f[0]);
        bpk_plane_load(x, u / C, c, v);
        for (int64_t i = 0; i < n; i++)
            v[i] = (v[i] - m) * r * sc + b;
        bpk_plane_store(y, u / C, c, v);
    }
    free(v);
    return BP_OK;
}

bp_status bpk_instance_norm_planes(void *dev, const bp_op_params *p, const bp_view *const *in,
                                   const bp_view *y, int64_t lo, int64_t hi)
{
    const bp_view *x = in[0];
    const int64_t C = x->shape[1], n = plane_size(x);
    if (hi <= lo || n == 0)
        return BP_OK;
    double *v = scratch(dev, "instance_norm", n);
    if (!v)
        return BP_ERR_OUT_OF_MEMORY;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t c = u % C;
        const double sc = channel(in[1], c), b = channel(in[2], c);
        double m, r;
        bpk_plane_load(x, u / C, c, v);
        moments(v, n, p->f[0], &m, &r);
        for (int64_t i = 0; i < n; i++)
            v[i] = (v[i] - m) * r * sc + b;
        bpk_plane_store(y, u / C, c, v);
    }
    free(v);
    return BP_OK;
}

bp_status bpk_trailing_norm_rows(void *dev, bool rms, const bp_op_params *p, const bp_view *x,
                                 const bp_view *scale, const bp_view *bias, const bp_view *y,
                                 const bp_view *mean, const bp_view *inv_std, int64_t lo,
                                 int64_t hi)
{
    int64_t L = 1;
    for (int32_t d = x->rank - (int32_t)p->i[0]; d < x->rank; d++)
        L *= x->shape[d];
    if (hi <= lo)
        return BP_OK;
    const char *op = rms ? "rms_norm" : "layer_norm";
    double *v = scratch(dev, op, 3 * L);
    if (!v)
        return BP_ERR_OUT_OF_MEMORY;
    double *sc = v + L, *bi = v + 2 * L;
    for (int64_t r = lo; r < hi; r++) {
        double m = 0, inv;
        bpk_block_load(x, r * L, L, v);
        if (scale)
            bpk_block_load(scale, r * L, L, sc);
        if (bias)
            bpk_block_load(bias, r * L, L, bi);
        if (rms) {
            double q = 0;
            for (int64_t i = 0; i < L; i++)
                q += v[i] * v[i];
            inv = 1.0 / sqrt(q / (double)L + p->f[0]);
        } else {
            moments(v, L, p->f[0], &m, &inv);
        }
        for (int64_t i = 0; i < L; i++)
            v[i] = (v[i] - m) * inv * (scale ? sc[i] : 1.0) + (bias ? bi[i] : 0.0);
        bpk_block_store(y, r * L, L, v);
        if (mean)
            bpk_block_store(mean, r, 1, &m);
        if (inv_std)
            bpk_block_store(inv_std, r, 1, &inv);
    }
    free(v);
    return BP_OK;
}

/* softmax and log_softmax along one axis: from the row's maximum, the sum of
 * exponentials in long double. A row with a NaN, a +inf, or nothing but
 * -inf gives NaN throughout. */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"
#include "independent.h"

/* One row: K elements inner apart, from base. sc: the magnitude behind each
 * element's value (error scale for the norm-wise tolerance). */
static void softmax_row(bool log_form, const cf_array *x, int64_t base, int64_t K, int64_t inner,
                        cf_array *want, double *sc)
{
    double m = -INFINITY;
    bool nan = false;
    for (int64_t r = 0; r < K; r++) {
        double v = x->f[base + r * inner];
        nan = nan || isnan(v);
        if (v > m)
            m = v;
    }
    long double s = 0.0L;
    for (int64_t r = 0; r < K; r++)
        s += expl((long double)x->f[base + r * inner] - (long double)m);
    double ls = (double)logl(s);
    for (int64_t r = 0; r < K; r++) {
        int64_t at = base + r * inner;
        double d = x->f[at] - m;
        double v;
        if (nan || isinf(m))
            v = NAN;
        else
            v = log_form ? (double)((long double)d - (long double)ls)
                         : (double)(expl((long double)d) / s);
        want->f[at] = v;
        double ad = isfinite(d) ? fabs(d) : 0.0;
        sc[at] = log_form ? 1.0 + ad + fabs(ls) : (isfinite(v) ? fabs(v) : 0) * (1.0 + ad);
    }
}

static bool softmax(bool log_form, const cf_array *x, int32_t axis, cf_array *want,
                    double **scale, int64_t *k)
{
    if (axis < 0)
        axis += x->rank;
    int64_t K = x->rank ? x->shape[axis] : 1, inner = 1;
    for (int32_t d = axis + 1; d < x->rank; d++)
        inner *= x->shape[d];
    if (scale)
        *scale = NULL;
    if (k)
        *k = K;
    if (!cf_array_init(want, x->dt, x->rank, x->shape))
        return false;
    double *sc = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof *sc);
    if (!sc)
        return false;
    int64_t outer = K && inner ? x->n / (K * inner) : 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++)
            softmax_row(log_form, x, o * K * inner + in, K, inner, want, sc);
    if (scale)
        *scale = sc;
    else
        free(sc);
    return true;
}

bool cf_oracle_softmax(const cf_array *x, int32_t axis, cf_array *want, double **scale,
                       int64_t *k)
{
    return softmax(false, x, axis, want, scale, k);
}

bool cf_oracle_log_softmax(const cf_array *x, int32_t axis, cf_array *want, double **scale,
                           int64_t *k)
{
    return softmax(true, x, axis, want, scale, k);
}

/* ONNX Hardmax: 1 at each row's first maximum along axis, 0 elsewhere; the
 * maximum is argmax's (a NaN over any number, the first NaN). */
bool cf_oracle_hardmax(const cf_array *x, int32_t axis, cf_array *want)
{
    if (axis < 0)
        axis += x->rank;
    int64_t K = x->shape[axis], inner = 1;
    for (int32_t d = axis + 1; d < x->rank; d++)
        inner *= x->shape[d];
    if (!cf_array_init(want, x->dt, x->rank, x->shape))
        return false;
    int64_t outer = K && inner ? x->n / (K * inner) : 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t best = 0, base = o * K * inner + in;
            for (int64_t r = 1; r < K; r++) {
                double v = x->f[base + r * inner], b = x->f[base + best * inner];
                if (!isnan(b) && (isnan(v) || v > b))
                    best = r;
            }
            want->f[base + best * inner] = 1.0;
        }
    return true;
}

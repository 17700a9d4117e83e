/* BatchNormalization (inference), InstanceNormalization,
 * LayerNormalization and RMS normalisation from their formulas, the means
 * and variances (population: divided by the count) in long double:
 *   batch:    (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c]
 *   instance: the same with each (n, c)'s mean and variance over its
 *             spatial elements
 *   layer:    over the axes from axis on; Mean and InvStdDev outputs
 *   rms:      x / sqrt(mean(x^2) + eps) * scale
 * terms: |x r s| + |m r s| + |b| (r the 1 / sqrt factor); k: the elements
 * behind each statistic (1 for batch_norm): a few roundings of terms of that
 * size, plus the statistics' accumulation (K eps relative) where they are
 * computed in the dtype itself (f64; f32 and the halves have them in
 * double, so only their output roundings count). */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"
#include "independent.h"

static bool outputs(const cf_array *x, cf_array *want, double **terms, int64_t *k, double **mag)
{
    if (terms)
        *terms = NULL;
    if (k)
        *k = 1;
    if (!cf_array_init(want, x->dt, x->rank, x->shape))
        return false;
    *mag = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof **mag);
    return *mag != NULL;
}

static void give(double *mag, double **terms)
{
    if (terms)
        *terms = mag;
    else
        free(mag);
}

/* y[e] for x[e], the group's mean m and factor r, scale s, bias b. */
static void put(const cf_array *x, int64_t e, double m, double r, double s, double b,
                cf_array *want, double *mag)
{
    want->f[e] = (x->f[e] - m) * r * s + b;
    mag[e] = fabs(x->f[e] * r * s) + fabs(m * r * s) + fabs(b);
}

bool cf_oracle_batch_norm(const cf_array *x, const cf_array *scale, const cf_array *bias,
                          const cf_array *mean, const cf_array *var, double epsilon,
                          cf_array *want, double **terms, int64_t *k)
{
    double *mag;
    if (!outputs(x, want, terms, k, &mag))
        return false;
    const int64_t C = x->shape[1], S = cf_numel(x->rank - 2, x->shape + 2);
    for (int64_t e = 0; e < x->n; e++) {
        int64_t c = e / S % C;
        put(x, e, mean->f[c], 1.0 / sqrt(var->f[c] + epsilon), scale->f[c], bias->f[c], want,
            mag);
    }
    give(mag, terms);
    return true;
}

/* The mean of n values step apart from x->f[first], and 1 / sqrt(variance
 * + eps) (rms: 1 / sqrt(mean of squares + eps), mean 0). */
static void stats(const cf_array *x, int64_t first, int64_t n, double eps, bool rms, double *m,
                  double *r)
{
    long double s = 0, q = 0;
    for (int64_t i = 0; i < n; i++)
        s += (long double)x->f[first + i];
    long double mean = rms ? 0.0L : s / (long double)n;
    for (int64_t i = 0; i < n; i++) {
        long double d = (long double)x->f[first + i] - mean;
        q += d * d;
    }
    *m = (double)mean;
    *r = (double)(1.0L / sqrtl(q / (long double)n + (long double)eps));
}

bool cf_oracle_instance_norm(const cf_array *x, const cf_array *scale, const cf_array *bias,
                             double epsilon, cf_array *want, double **terms, int64_t *k)
{
    double *mag;
    if (!outputs(x, want, terms, k, &mag))
        return false;
    const int64_t C = x->shape[1], S = cf_numel(x->rank - 2, x->shape + 2);
    if (k)
        *k = S;
    for (int64_t p = 0; S && p < x->n / S; p++) {
        double m, r;
        stats(x, p * S, S, epsilon, false, &m, &r);
        for (int64_t i = 0; i < S; i++)
            put(x, p * S + i, m, r, scale->f[p % C], bias->f[p % C], want, mag);
    }
    give(mag, terms);
    return true;
}

/* The element of t (NULL: 1 or 0) that broadcasts to position i of the
 * trailing block (L elements, shape tail of rank tr). */
static double trailing(const cf_array *t, int32_t tr, const int64_t *tail, int64_t i, double none)
{
    if (!t)
        return none;
    int64_t idx[BP_MAX_RANK];
    cf_unravel(tr, tail, i, idx);
    return t->f[cf_bcast_index(tr, idx, t->rank, t->shape)];
}

static bool trailing_norm(bool rms, const cf_array *x, int32_t axis, const cf_array *scale,
                          const cf_array *bias, double eps, cf_array *want, cf_array *mean,
                          cf_array *inv_std, double **terms, int64_t *k)
{
    if (axis < 0)
        axis += x->rank;
    const int32_t tr = x->rank - axis;
    const int64_t *tail = x->shape + axis;
    int64_t L = cf_numel(tr, tail), stat_shape[BP_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        stat_shape[d] = d < axis ? x->shape[d] : 1;
    bp_dtype sdt = x->dt == BP_F16 || x->dt == BP_BF16 ? BP_F32 : x->dt;
    double *mag;
    if (!outputs(x, want, terms, k, &mag))
        return false;
    if ((mean && !cf_array_init(mean, sdt, x->rank, stat_shape)) ||
        (inv_std && !cf_array_init(inv_std, sdt, x->rank, stat_shape))) {
        free(mag);
        return false;
    }
    const int64_t rows = cf_numel(axis, x->shape);
    if (k)
        *k = L;
    for (int64_t row = 0; row < rows; row++) {
        double m, r;
        stats(x, row * L, L, eps, rms, &m, &r);
        for (int64_t i = 0; i < L; i++)
            put(x, row * L + i, m, r, trailing(scale, tr, tail, i, 1.0),
                trailing(bias, tr, tail, i, 0.0), want, mag);
        if (mean)
            mean->f[row] = m;
        if (inv_std)
            inv_std->f[row] = r;
    }
    give(mag, terms);
    return true;
}

bool cf_oracle_layer_norm(const cf_array *x, int32_t axis, const cf_array *scale,
                          const cf_array *bias, double epsilon, cf_array *want, cf_array *mean,
                          cf_array *inv_std, double **terms, int64_t *k)
{
    return trailing_norm(false, x, axis, scale, bias, epsilon, want, mean, inv_std, terms, k);
}

bool cf_oracle_rms_norm(const cf_array *x, int32_t axis, const cf_array *scale, double epsilon,
                        cf_array *want, double **terms, int64_t *k)
{
    return trailing_norm(true, x, axis, scale, NULL, epsilon, want, NULL, NULL, terms, k);
}

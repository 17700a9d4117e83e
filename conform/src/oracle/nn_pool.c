/* MaxPool, AveragePool and LRN from their definitions. A window is the set
 * of taps o stride + k dilation - pad_begin; those inside X count.
 *   MaxPool: the largest (a NaN wins, as bp_max; the first on ties); its
 *     index (n C + c) D + the spatial index, row-major, or column-major with
 *     storage_order 1; no tap inside X: -inf (integers: the minimum), -1.
 *   AveragePool: their mean, or the sum over the taps inside X and its
 *     padding with count_include_pad.
 *   LRN: x / (bias + alpha / size * sum of squares over the channels
 *     c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2)) ^ beta. */
#include <math.h>
#include <stdlib.h>

#include "nn_geom.h"
#include "independent.h"

static void pool_shape(const cf_array *x, const cf_geom *g, int64_t *shape)
{
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (int a = 0; a < g->s; a++)
        shape[2 + a] = g->out[a];
}

/* Tap k of output o: its position i, whether inside X (*padded: inside X
 * and its padding). */
static bool tap(const cf_geom *g, const int64_t *o, int64_t kf, int64_t *i, bool *padded)
{
    int64_t k[3];
    cf_geom_unravel(g->k, kf, k);
    bool in = true, pad = true;
    for (int a = 0; a < 3; a++) {
        i[a] = o[a] * g->st[a] + k[a] * g->dl[a] - g->pb[a];
        in = in && i[a] >= 0 && i[a] < g->in[a];
        pad = pad && i[a] >= -g->pb[a] && i[a] < g->in[a] + g->pe[a];
    }
    *padded = pad;
    return in;
}

static bool greater(const cf_array *x, int64_t a, int64_t b)
{
    if (!cf_is_float(x->dt))
        return x->i[a] > x->i[b];
    return x->f[a] > x->f[b] || (isnan(x->f[a]) && !isnan(x->f[b]));
}

bool cf_oracle_max_pool(const cf_array *x, const bp_window *window, cf_array *want,
                        cf_array *indices)
{
    cf_geom g;
    cf_geom_forward(x, window, window->kernel, &g);
    int64_t shape[BP_MAX_RANK];
    pool_shape(x, &g, shape);
    if (!cf_array_init(want, x->dt, x->rank, shape))
        return false;
    if (indices && !cf_array_init(indices, BP_I64, x->rank, shape))
        return false;
    const int64_t plane = g.out[0] * g.out[1] * g.out[2], pin = g.in[0] * g.in[1] * g.in[2];
    const int64_t nk = g.k[0] * g.k[1] * g.k[2];
    for (int64_t e = 0; e < want->n; e++) {
        int64_t o[3], best = -1, bi[3] = {0, 0, 0}, nc = e / plane;
        cf_geom_unravel(g.out, e % plane, o);
        for (int64_t kf = 0; kf < nk; kf++) {
            int64_t i[3];
            bool padded;
            if (!tap(&g, o, kf, i, &padded))
                continue;
            int64_t at = nc * pin + (i[0] * g.in[1] + i[1]) * g.in[2] + i[2];
            if (best < 0 || greater(x, at, best)) {
                best = at;
                bi[0] = i[0], bi[1] = i[1], bi[2] = i[2];
            }
        }
        if (cf_is_float(x->dt))
            want->f[e] = best >= 0 ? x->f[best] : -INFINITY;
        else
            want->i[e] = best >= 0 ? x->i[best] : cf_int_min(x->dt);
        if (indices) {
            bool col = window->storage_order == 1;
            int64_t sp = col ? (bi[2] * g.in[1] + bi[1]) * g.in[0] + bi[0]
                             : (bi[0] * g.in[1] + bi[1]) * g.in[2] + bi[2];
            indices->i[e] = best >= 0 ? nc * pin + sp : -1;
        }
    }
    return true;
}

bool cf_oracle_average_pool(const cf_array *x, const bp_window *window, cf_array *want,
                            double **terms, int64_t *k)
{
    cf_geom g;
    cf_geom_forward(x, window, window->kernel, &g);
    int64_t shape[BP_MAX_RANK];
    pool_shape(x, &g, shape);
    if (terms)
        *terms = NULL;
    const int64_t plane = g.out[0] * g.out[1] * g.out[2], pin = g.in[0] * g.in[1] * g.in[2];
    const int64_t nk = g.k[0] * g.k[1] * g.k[2];
    if (k)
        *k = nk;
    if (!cf_array_init(want, x->dt, x->rank, shape))
        return false;
    double *mag = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof *mag);
    if (!mag)
        return false;
    for (int64_t e = 0; e < want->n; e++) {
        int64_t o[3], inside = 0, padded_n = 0, nc = e / plane;
        long double s = 0;
        double a = 0;
        cf_geom_unravel(g.out, e % plane, o);
        for (int64_t kf = 0; kf < nk; kf++) {
            int64_t i[3];
            bool padded;
            if (tap(&g, o, kf, i, &padded)) {
                double v = x->f[nc * pin + (i[0] * g.in[1] + i[1]) * g.in[2] + i[2]];
                s += (long double)v;
                a += fabs(v);
                inside++;
            }
            padded_n += padded;
        }
        double count = (double)(window->count_include_pad ? padded_n : inside);
        want->f[e] = (double)(s / (long double)count);
        mag[e] = a / count;
    }
    if (terms)
        *terms = mag;
    else
        free(mag);
    return true;
}

bool cf_oracle_lrn(const cf_array *x, int64_t size, double alpha, double beta, double bias,
                   cf_array *want)
{
    if (!cf_array_init(want, x->dt, x->rank, x->shape))
        return false;
    const int64_t C = x->shape[1], lo = (size - 1) / 2, hi = size - 1 - lo;
    int64_t S = 1;
    for (int32_t d = 2; d < x->rank; d++)
        S *= x->shape[d];
    for (int64_t e = 0; e < want->n; e++) {
        const int64_t c = e / S % C, base = e - c * S;
        long double sq = 0;
        for (int64_t cc = c - lo; cc <= c + hi; cc++)
            if (cc >= 0 && cc < C)
                sq += (long double)x->f[base + cc * S] * x->f[base + cc * S];
        want->f[e] = x->f[e] / pow(bias + alpha / (double)size * (double)sq, beta);
    }
    return true;
}

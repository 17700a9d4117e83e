/* Conv and ConvTranspose, each output element gathered from its
 * definition:
 *   Conv:          y[n, m, o] = B[m] + sum_{c in m's group, k} W[m, c, k]
 *                               X[n, c, o stride + k dilation - pad_begin]
 *   ConvTranspose: y[n, m, o] = B[m] + sum_{c in m's group, k, j: j stride + k
 *                               dilation - pad_begin = o} X[n, c, j] W[c, m, k]
 * (positions outside X contribute nothing), summed in long double; terms is
 * sum |W X| + |B|, k the terms per element. */
#include <math.h>
#include <stdlib.h>

#include "nn_geom.h"
#include "independent.h"

typedef struct conv_job {
    const cf_array *x, *w, *bias;
    cf_geom g;
    int64_t groups, cg, mg; /* channels per group in and out */
    bool transpose;
} conv_job;

/* The flat index of x[n, c, i] (i: 3-D spatial), or -1 outside x. */
static int64_t x_at(const conv_job *j, int64_t n, int64_t c, const int64_t *i)
{
    for (int a = 0; a < 3; a++)
        if (i[a] < 0 || i[a] >= j->g.in[a])
            return -1;
    int64_t plane = j->g.in[0] * j->g.in[1] * j->g.in[2];
    return (n * j->x->shape[1] + c) * plane + (i[0] * j->g.in[1] + i[1]) * j->g.in[2] + i[2];
}

/* w[a, b, k] with k the 3-D kernel index. */
static double w_at(const conv_job *j, int64_t a, int64_t b, const int64_t *k)
{
    int64_t kk = j->g.k[0] * j->g.k[1] * j->g.k[2];
    return j->w->f[(a * j->w->shape[1] + b) * kk + (k[0] * j->g.k[1] + k[1]) * j->g.k[2] + k[2]];
}

/* The input position of output o through tap k (forward), or whether one
 * exists (transpose: o = i stride + k dilation - pb, i whole). */
static bool source(const conv_job *j, const int64_t *o, const int64_t *k, int64_t *i)
{
    for (int a = 0; a < 3; a++) {
        int64_t t = o[a] + j->g.pb[a] - k[a] * j->g.dl[a];
        if (!j->transpose) {
            i[a] = o[a] * j->g.st[a] + k[a] * j->g.dl[a] - j->g.pb[a];
            continue;
        }
        if (t % j->g.st[a] != 0)
            return false;
        i[a] = t / j->g.st[a];
    }
    return true;
}

static void one_output(const conv_job *j, int64_t n, int64_t m, const int64_t *o, double *v,
                       double *mag)
{
    const int64_t grp = m / j->mg, nk = j->g.k[0] * j->g.k[1] * j->g.k[2];
    long double s = 0;
    double a = 0;
    for (int64_t c = grp * j->cg; c < (grp + 1) * j->cg; c++)
        for (int64_t kf = 0; kf < nk; kf++) {
            int64_t k[3], i[3];
            cf_geom_unravel(j->g.k, kf, k);
            if (!source(j, o, k, i))
                continue;
            int64_t at = x_at(j, n, c, i);
            if (at < 0)
                continue;
            double wv = j->transpose ? w_at(j, c, m - grp * j->mg, k) : w_at(j, m, c - grp * j->cg, k);
            double t = wv * j->x->f[at];
            s += (long double)t;
            a += fabs(t);
        }
    if (j->bias) {
        s += (long double)j->bias->f[m];
        a += fabs(j->bias->f[m]);
    }
    *v = (double)s;
    *mag = a;
}

static bool run(conv_job *j, cf_array *want, double **terms, int64_t *k)
{
    const int64_t N = j->x->shape[0];
    const int64_t M = j->transpose ? j->w->shape[1] * j->groups : j->w->shape[0];
    int64_t shape[BP_MAX_RANK] = {N, M};
    for (int a = 0; a < j->g.s; a++)
        shape[2 + a] = j->g.out[a];
    if (terms)
        *terms = NULL;
    if (k)
        *k = j->cg * j->g.k[0] * j->g.k[1] * j->g.k[2] + (j->bias != NULL);
    if (!cf_array_init(want, j->x->dt, j->x->rank, shape))
        return false;
    double *mag = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof *mag);
    if (!mag)
        return false;
    const int64_t plane = j->g.out[0] * j->g.out[1] * j->g.out[2];
    for (int64_t e = 0; e < want->n; e++) {
        int64_t o[3];
        cf_geom_unravel(j->g.out, e % plane, o);
        one_output(j, e / plane / M, e / plane % M, o, &want->f[e], &mag[e]);
    }
    if (terms)
        *terms = mag;
    else
        free(mag);
    return true;
}

static void setup(conv_job *j, const cf_array *x, const cf_array *w, const cf_array *bias,
                  const bp_window *window, bool transpose)
{
    int64_t kernel[3] = {1, 1, 1};
    for (int a = 0; a < x->rank - 2; a++)
        kernel[a] = w->shape[2 + a];
    j->x = x;
    j->w = w;
    j->bias = bias;
    j->transpose = transpose;
    j->groups = window && window->groups ? window->groups : 1;
    j->cg = x->shape[1] / j->groups;
    j->mg = transpose ? w->shape[1] : w->shape[0] / j->groups;
    if (transpose)
        cf_geom_transpose(x, window, kernel, &j->g);
    else
        cf_geom_forward(x, window, kernel, &j->g);
}

bool cf_oracle_conv(const cf_array *x, const cf_array *w, const cf_array *bias,
                    const bp_window *window, cf_array *want, double **terms, int64_t *k)
{
    conv_job j;
    setup(&j, x, w, bias, window, false);
    return run(&j, want, terms, k);
}

bool cf_oracle_conv_transpose(const cf_array *x, const cf_array *w, const cf_array *bias,
                              const bp_window *window, cf_array *want, double **terms,
                              int64_t *k)
{
    conv_job j;
    setup(&j, x, w, bias, window, true);
    return run(&j, want, terms, k);
}

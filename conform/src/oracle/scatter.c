/* scatter_elements and scatter_nd (ONNX ScatterElements, ScatterND): a copy
 * of x, then every update combined into its target in row-major order of
 * the indices (so NONE's last duplicate wins). ADD and MUL on floats run in
 * double and stay unrounded; MAX and MIN propagate NaN; integers wrap.
 * *scale per element: |x| plus the |updates| added (ADD), |result| (the
 * others); *k: 1 + the most updates any element received, the terms of the
 * norm-wise tolerance (a backend may add duplicates in any order). */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"
#include "independent.h"

typedef struct target {
    cf_array *want;
    double *sc;
    int64_t *hits;
    int red;
} target;

static void combine(const target *t, int64_t o, const cf_array *u, int64_t j)
{
    cf_array *w = t->want;
    t->hits[o]++;
    if (w->f) {
        double c = w->f[o], v = u->f[j];
        switch (t->red) {
        case BP_SCATTER_NONE: c = v; break;
        case BP_SCATTER_ADD: c += v; t->sc[o] += fabs(v); break;
        case BP_SCATTER_MUL: c *= v; break;
        case BP_SCATTER_MAX: c = cf_binary_f(BP_OP_MAXIMUM, c, v); break;
        default: c = cf_binary_f(BP_OP_MINIMUM, c, v); break;
        }
        w->f[o] = c;
        return;
    }
    int64_t c = w->i[o], v = u->i[j];
    switch (t->red) {
    case BP_SCATTER_NONE: c = v; break;
    case BP_SCATTER_ADD: c = cf_binary_i(BP_OP_ADD, w->dt, c, v); break;
    case BP_SCATTER_MUL: c = cf_binary_i(BP_OP_MUL, w->dt, c, v); break;
    case BP_SCATTER_MAX: c = c > v ? c : v; break;
    default: c = c < v ? c : v; break;
    }
    w->i[o] = c;
}

/* want = x and the bookkeeping; false when out of memory. */
static bool begin(const cf_array *x, int red, cf_array *want, target *t)
{
    t->want = want;
    t->red = red;
    t->sc = NULL;
    t->hits = NULL;
    if (!cf_array_init(want, x->dt, x->rank, x->shape))
        return false;
    size_t n = (size_t)(x->n > 0 ? x->n : 1);
    t->sc = calloc(n, sizeof *t->sc);
    t->hits = calloc(n, sizeof *t->hits);
    if (!t->sc || !t->hits) {
        free(t->sc);
        free(t->hits);
        return false;
    }
    for (int64_t e = 0; e < x->n; e++) {
        if (want->f) {
            want->f[e] = x->f[e];
            t->sc[e] = fabs(x->f[e]);
        } else {
            want->i[e] = x->i[e];
        }
    }
    return true;
}

static void finish(const target *t, double **scale, int64_t *k)
{
    int64_t most = 0;
    for (int64_t e = 0; e < t->want->n; e++) {
        most = t->hits[e] > most ? t->hits[e] : most;
        if (t->want->f && t->red != BP_SCATTER_ADD)
            t->sc[e] = fabs(t->want->f[e]);
    }
    free(t->hits);
    if (k)
        *k = 1 + most;
    if (scale)
        *scale = t->sc;
    else
        free(t->sc);
}

bool cf_oracle_scatter_elements(const cf_array *x, const cf_array *indices,
                                const cf_array *updates, int32_t axis,
                                bp_scatter_reduction reduction, cf_array *want, double **scale,
                                int64_t *k)
{
    target t;
    if (scale)
        *scale = NULL;
    if (!begin(x, (int)reduction, want, &t))
        return false;
    if (axis < 0)
        axis += x->rank;
    int64_t idx[BP_MAX_RANK];
    for (int64_t e = 0; e < indices->n; e++) {
        cf_unravel(indices->rank, indices->shape, e, idx);
        int64_t v = indices->i[e];
        idx[axis] = v < 0 ? v + x->shape[axis] : v;
        combine(&t, cf_ravel(x->rank, x->shape, idx), updates, e);
    }
    finish(&t, scale, k);
    return true;
}

bool cf_oracle_scatter_nd(const cf_array *x, const cf_array *indices, const cf_array *updates,
                          bp_scatter_reduction reduction, cf_array *want, double **scale,
                          int64_t *k)
{
    target t;
    if (scale)
        *scale = NULL;
    if (!begin(x, (int)reduction, want, &t))
        return false;
    int32_t q = indices->rank - 1;
    int64_t m = indices->shape[q], tuples = cf_numel(q, indices->shape);
    int64_t slice = cf_numel(x->rank - (int32_t)m, x->shape + m);
    int64_t idx[BP_MAX_RANK];
    for (int64_t tu = 0; tu < tuples; tu++)
        for (int64_t s = 0; s < slice; s++) {
            for (int32_t j = 0; j < m; j++) {
                int64_t v = indices->i[tu * m + j];
                idx[j] = v < 0 ? v + x->shape[j] : v;
            }
            cf_unravel(x->rank - (int32_t)m, x->shape + m, s, idx + m);
            combine(&t, cf_ravel(x->rank, x->shape, idx), updates, tu * slice + s);
        }
    finish(&t, scale, k);
    return true;
}

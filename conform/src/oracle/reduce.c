/* Reductions (bp_reduce): sum, prod and mean in double, in order (floats
 * accumulate in f64, plugin.h, so an intermediate overflow of f64 data is
 * part of the result), the magnitude of the terms in long double;
 * logsumexp from the maximum; max/min and argmax/argmin with NaN winning
 * and ties going to the first; integers exactly, wrapping. */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"
#include "reduce_plan.h"
#include "independent.h"

/* ---- floats ------------------------------------------------------------------ */

/* sum, mean or prod; *scale the magnitude of the terms. */
static double float_sum(bp_op op, const cf_array *x, const cf_plan *p, int64_t base, double *scale)
{
    double acc = op == BP_OP_PROD ? 1.0 : 0.0;
    long double mag = 0.0L;
    for (int64_t r = 0; r < p->K; r++) {
        double v = x->f[cf_plan_term(p, base, r)];
        if (op == BP_OP_PROD) {
            acc *= v;
        } else {
            acc += v;
            mag += fabsl((long double)v);
        }
    }
    if (op == BP_OP_PROD) {
        *scale = fabs(acc);
        return acc;
    }
    if (op == BP_OP_MEAN) {
        *scale = p->K ? (double)(mag / (long double)p->K) : 0.0;
        return p->K ? acc / (double)p->K : NAN;
    }
    *scale = (double)mag;
    return acc;
}

/* The first NaN, else the first maximum (minimum): its position among the
 * terms, and its value in *best. -1 for no terms. */
static int64_t float_extreme(bool max, const cf_array *x, const cf_plan *p, int64_t base,
                             double *best)
{
    double b = 0;
    int64_t at = -1;
    for (int64_t r = 0; r < p->K; r++) {
        double v = x->f[cf_plan_term(p, base, r)];
        if (at < 0 || (!isnan(b) && (isnan(v) || (max ? v > b : v < b)))) {
            b = v;
            at = r;
        }
    }
    *best = b;
    return at;
}

/* m + log(sum exp(x - m)) with m the largest term, in long double; +inf
 * terms give +inf, no finite term -inf, any NaN NaN. */
static double float_logsumexp(const cf_array *x, const cf_plan *p, int64_t base, double *scale)
{
    double m = -INFINITY;
    bool any_nan = false;
    for (int64_t r = 0; r < p->K; r++) {
        double v = x->f[cf_plan_term(p, base, r)];
        any_nan = any_nan || isnan(v);
        if (v > m)
            m = v;
    }
    *scale = 1.0 + (isfinite(m) ? fabs(m) : 0.0);
    if (any_nan)
        return NAN;
    if (isinf(m)) /* an infinite term, or none finite (none at all: -inf) */
        return m;
    long double s = 0.0L;
    for (int64_t r = 0; r < p->K; r++)
        s += expl((long double)x->f[cf_plan_term(p, base, r)] - (long double)m);
    return (double)((long double)m + logl(s));
}

static void reduce_floats(bp_op op, const cf_array *x, const cf_plan *p, int64_t o, cf_array *want,
                          double *scale)
{
    int64_t base = cf_plan_first(p, o);
    double best;
    switch (op) {
    case BP_OP_SUM: case BP_OP_MEAN: case BP_OP_PROD:
        want->f[o] = float_sum(op, x, p, base, scale);
        break;
    case BP_OP_LOGSUMEXP: want->f[o] = float_logsumexp(x, p, base, scale); break;
    case BP_OP_MAX: case BP_OP_MIN:
        float_extreme(op == BP_OP_MAX, x, p, base, &want->f[o]);
        break;
    case BP_OP_ARGMAX: case BP_OP_ARGMIN:
        want->i[o] = float_extreme(op == BP_OP_ARGMAX, x, p, base, &best);
        break;
    default: break;
    }
}

/* ---- integers ------------------------------------------------------------------ */

static int64_t int_sum(bp_op op, const cf_array *x, const cf_plan *p, int64_t base)
{
    uint64_t acc = op == BP_OP_PROD ? 1u : 0u;
    for (int64_t r = 0; r < p->K; r++) {
        uint64_t v = (uint64_t)x->i[cf_plan_term(p, base, r)];
        acc = op == BP_OP_PROD ? acc * v : acc + v;
    }
    return cf_wrap(x->dt, (int64_t)acc);
}

/* The first maximum (minimum): its position, its value in *best. */
static int64_t int_extreme(bool max, const cf_array *x, const cf_plan *p, int64_t base,
                           int64_t *best)
{
    int64_t b = 0, at = -1;
    for (int64_t r = 0; r < p->K; r++) {
        int64_t v = x->i[cf_plan_term(p, base, r)];
        if (at < 0 || (max ? v > b : v < b)) {
            b = v;
            at = r;
        }
    }
    *best = b;
    return at;
}

static void reduce_ints(bp_op op, const cf_array *x, const cf_plan *p, int64_t o, cf_array *want)
{
    int64_t base = cf_plan_first(p, o), best;
    switch (op) {
    case BP_OP_SUM: case BP_OP_PROD: want->i[o] = int_sum(op, x, p, base); break;
    case BP_OP_MAX: case BP_OP_MIN: int_extreme(op == BP_OP_MAX, x, p, base, &want->i[o]); break;
    case BP_OP_ARGMAX: case BP_OP_ARGMIN:
        want->i[o] = int_extreme(op == BP_OP_ARGMAX, x, p, base, &best);
        break;
    default: break;
    }
}

bool cf_oracle_reduce(bp_op op, const cf_array *x, int32_t n_axes, const int32_t *axes,
                      bool keepdims, cf_array *want, double **scale, int64_t *k)
{
    cf_plan p;
    cf_plan_make(x, n_axes, axes, keepdims, &p);
    bool arg = op == BP_OP_ARGMAX || op == BP_OP_ARGMIN;
    if (scale)
        *scale = NULL;
    if (k)
        *k = p.K;
    if (!cf_array_init(want, arg ? BP_I64 : x->dt, p.orank, p.oshape))
        return false;
    double *sc = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof *sc);
    if (!sc)
        return false;
    for (int64_t o = 0; o < want->n; o++) {
        if (x->f)
            reduce_floats(op, x, &p, o, want, &sc[o]);
        else
            reduce_ints(op, x, &p, o, want);
    }
    if (scale)
        *scale = sc;
    else
        free(sc);
    return true;
}

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

/* ---- l1, l2, sum_square, log_sum, var, std, any, all, arg*_last ----
 * The reductions of ABI 1.4 (bp_reduce_l1 .. bp_argmin_last): floats summed
 * in double, in order, as the plugins accumulate (so an f64 overflow of
 * x^2 is part of the result); var and std in two passes (the mean, then the squared deviations);
 * integers exactly, wrapping; argmax_last / argmin_last the last extreme,
 * a NaN over any number and the last NaN over the others. *scale gives each
 * element's magnitude for the norm-wise tolerance. */

typedef struct stat_reduction {
    bp_op op;
    double correction;
} stat_reduction;

static double float_one(const stat_reduction *m, const cf_array *x, const cf_plan *p, int64_t base,
                        double *scale)
{
    double s = 0, mag = 0;
    for (int64_t r = 0; r < p->K; r++) {
        double v = x->f[cf_plan_term(p, base, r)];
        if (m->op == BP_OP_REDUCE_L1) {
            s += fabs(v);
        } else if (m->op == BP_OP_REDUCE_LOG_SUM) {
            s += v;
            mag += fabs(v);
        } else {
            s += v * v;
        }
    }
    switch (m->op) {
    case BP_OP_REDUCE_L1: case BP_OP_REDUCE_SUM_SQUARE: *scale = s; return s;
    case BP_OP_REDUCE_L2: *scale = sqrt(s); return sqrt(s);
    case BP_OP_REDUCE_LOG_SUM: /* the sum's relative error is log's absolute one */
        *scale = s != 0 ? mag / fabs(s) : 0;
        return log(s);
    default: break;
    }
    /* var, std: s is sum x^2 here, a bound on the deviations' magnitude; the
     * mean and the squared deviations are summed in double (an overflow of
     * f64 data is part of the result, as in the plugins) */
    double mean = 0, dev = 0;
    for (int64_t r = 0; r < p->K; r++)
        mean += x->f[cf_plan_term(p, base, r)];
    mean /= (double)p->K;
    for (int64_t r = 0; r < p->K; r++) {
        double d = x->f[cf_plan_term(p, base, r)] - mean;
        dev += d * d;
    }
    double div = (double)p->K - m->correction;
    double var = div > 0 ? dev / div : NAN, bound = div > 0 ? s / div : 0;
    if (m->op == BP_OP_REDUCE_VAR) {
        *scale = bound;
        return var;
    }
    double sd = sqrt(var); /* d sqrt(v) = dv / (2 sqrt v) */
    *scale = sd > 0 ? bound / (2 * sd) : bound;
    return sd;
}

static int64_t int_one(const stat_reduction *m, const cf_array *x, const cf_plan *p, int64_t base)
{
    uint64_t s = 0;
    for (int64_t r = 0; r < p->K; r++) {
        int64_t v = x->i[cf_plan_term(p, base, r)];
        uint64_t a = m->op == BP_OP_REDUCE_L1 && v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
        s += m->op == BP_OP_REDUCE_L1 ? (uint64_t)cf_wrap(x->dt, (int64_t)a) : a * (uint64_t)v;
    }
    return cf_wrap(x->dt, (int64_t)s);
}

static int64_t bool_one(const stat_reduction *m, const cf_array *x, const cf_plan *p, int64_t base)
{
    bool all = m->op == BP_OP_REDUCE_ALL;
    for (int64_t r = 0; r < p->K; r++) {
        bool v = x->i[cf_plan_term(p, base, r)] != 0;
        if (all && !v)
            return 0;
        if (!all && v)
            return 1;
    }
    return all;
}

static int64_t arg_last(const stat_reduction *m, const cf_array *x, const cf_plan *p, int64_t base)
{
    bool max = m->op == BP_OP_ARGMAX_LAST;
    int64_t at = -1;
    for (int64_t r = 0; r < p->K; r++) {
        int64_t j = cf_plan_term(p, base, r);
        if (at < 0) {
            at = r;
            continue;
        }
        int64_t b = cf_plan_term(p, base, at);
        bool take;
        if (x->f) {
            double v = x->f[j], w = x->f[b];
            take = isnan(v) || (!isnan(w) && (max ? v >= w : v <= w));
        } else {
            take = max ? x->i[j] >= x->i[b] : x->i[j] <= x->i[b];
        }
        if (take)
            at = r;
    }
    return at;
}

static bool reduce_stat(const stat_reduction *m, const cf_array *x, int32_t n_axes, const int32_t *axes,
                        bool keepdims, cf_array *want, double **scale, int64_t *k)
{
    cf_plan p;
    cf_plan_make(x, n_axes, axes, keepdims, &p);
    bool arg = m->op == BP_OP_ARGMAX_LAST || m->op == BP_OP_ARGMIN_LAST;
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
        int64_t base = cf_plan_first(&p, o);
        if (arg)
            want->i[o] = arg_last(m, x, &p, base);
        else if (x->dt == BP_BOOL)
            want->i[o] = bool_one(m, x, &p, base);
        else if (x->f)
            want->f[o] = float_one(m, x, &p, base, &sc[o]);
        else
            want->i[o] = int_one(m, x, &p, base);
    }
    if (scale)
        *scale = sc;
    else
        free(sc);
    return true;
}

#define CF_REDUCE_MORE(name, NAME)                                                          \
    bool cf_oracle_##name(const cf_array *x, int32_t n_axes, const int32_t *axes,           \
                          bool keepdims, cf_array *want, double **scale, int64_t *k)        \
    {                                                                                       \
        const stat_reduction m = {BP_OP_##NAME, 0};                                                   \
        return reduce_stat(&m, x, n_axes, axes, keepdims, want, scale, k);                  \
    }
CF_REDUCE_MORE(reduce_l1, REDUCE_L1)
CF_REDUCE_MORE(reduce_l2, REDUCE_L2)
CF_REDUCE_MORE(reduce_sum_square, REDUCE_SUM_SQUARE)
CF_REDUCE_MORE(reduce_log_sum, REDUCE_LOG_SUM)
CF_REDUCE_MORE(reduce_any, REDUCE_ANY)
CF_REDUCE_MORE(reduce_all, REDUCE_ALL)
CF_REDUCE_MORE(argmax_last, ARGMAX_LAST)
CF_REDUCE_MORE(argmin_last, ARGMIN_LAST)

bool cf_oracle_reduce_var(const cf_array *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                          double correction, cf_array *want, double **scale, int64_t *k)
{
    const stat_reduction m = {BP_OP_REDUCE_VAR, correction};
    return reduce_stat(&m, x, n_axes, axes, keepdims, want, scale, k);
}

bool cf_oracle_reduce_std(const cf_array *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                          double correction, cf_array *want, double **scale, int64_t *k)
{
    const stat_reduction m = {BP_OP_REDUCE_STD, correction};
    return reduce_stat(&m, x, n_axes, axes, keepdims, want, scale, k);
}

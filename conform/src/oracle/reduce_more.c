/* The reductions of ABI 1.4 (bp_reduce_l1 .. bp_argmin_last): floats summed
 * in double, in order, as the plugins accumulate (so an f64 overflow of
 * x^2 is part of the result); var and std in two passes (the mean, then the squared deviations);
 * integers exactly, wrapping; argmax_last / argmin_last the last extreme,
 * a NaN over any number and the last NaN over the others. *scale gives each
 * element's magnitude for the norm-wise tolerance. */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"
#include "reduce_plan.h"
#include "independent.h"

typedef struct more {
    bp_op op;
    double correction;
} more;

static double float_one(const more *m, const cf_array *x, const cf_plan *p, int64_t base,
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

static int64_t int_one(const more *m, const cf_array *x, const cf_plan *p, int64_t base)
{
    uint64_t s = 0;
    for (int64_t r = 0; r < p->K; r++) {
        int64_t v = x->i[cf_plan_term(p, base, r)];
        uint64_t a = m->op == BP_OP_REDUCE_L1 && v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
        s += m->op == BP_OP_REDUCE_L1 ? (uint64_t)cf_wrap(x->dt, (int64_t)a) : a * (uint64_t)v;
    }
    return cf_wrap(x->dt, (int64_t)s);
}

static int64_t bool_one(const more *m, const cf_array *x, const cf_plan *p, int64_t base)
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

static int64_t arg_last(const more *m, const cf_array *x, const cf_plan *p, int64_t base)
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

static bool reduce_more(const more *m, const cf_array *x, int32_t n_axes, const int32_t *axes,
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
        const more m = {BP_OP_##NAME, 0};                                                   \
        return reduce_more(&m, x, n_axes, axes, keepdims, want, scale, k);                  \
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
    const more m = {BP_OP_REDUCE_VAR, correction};
    return reduce_more(&m, x, n_axes, axes, keepdims, want, scale, k);
}

bool cf_oracle_reduce_std(const cf_array *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                          double correction, cf_array *want, double **scale, int64_t *k)
{
    const more m = {BP_OP_REDUCE_STD, correction};
    return reduce_more(&m, x, n_axes, axes, keepdims, want, scale, k);
}

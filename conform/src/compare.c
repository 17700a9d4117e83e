/* A result against the oracle, within one tolerance: exact (after rounding
 * the oracle's value to the dtype), ULP (distance from the unrounded value,
 * in units of the dtype's spacing there) or NORM (error relative to the
 * magnitude of the terms that made the element: c * K * eps). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* One float element: g against the oracle's unrounded w. NaN must match NaN
 * and infinities exactly, whatever the tolerance. *err the error in the
 * tolerance's unit (0 when exact); why says what is wrong. */
static bool float_ok(bp_dtype dt, double g, double w, double s, cf_tol tol, double bound,
                     double *err, char *why, size_t cap)
{
    double wr = cf_round(dt, w);
    bool ok;
    *err = 0;
    if (isnan(w) || isnan(wr)) {
        if (!(ok = isnan(g)))
            snprintf(why, cap, "got %.9g, want NaN", g);
    } else if (isnan(g)) {
        ok = false;
        snprintf(why, cap, "got NaN, want %.9g", wr);
    } else if (isinf(w) || (isinf(wr) && tol.kind == CF_TOL_EXACT)) {
        if (!(ok = g == wr))
            snprintf(why, cap, "got %.9g, want %g (infinity sign)", g, wr);
    } else if (isinf(g)) {
        if (!(ok = isinf(wr) && g == wr))
            snprintf(why, cap, "got %g, want finite %.17g", g, wr);
    } else if (tol.kind == CF_TOL_EXACT) {
        *err = fabs(g - wr);
        if (!(ok = g == wr))
            snprintf(why, cap, "got %.17g, want %.17g (oracle %.17g)", g, wr, w);
    } else if (tol.kind == CF_TOL_ULP) {
        double d = fabs(g - w) - tol.atol;
        *err = d > 0 ? d / cf_ulp(dt, w) : 0;
        if (!(ok = *err <= bound))
            snprintf(why, cap, "got %.17g, want %.17g: %.3g ulp", g, w, *err);
    } else { /* NORM: one ulp of the result, then relative to the terms' magnitude s */
        double d = fabs(g - w) - cf_ulp(dt, w);
        *err = d <= 0 ? 0 : s > 0 ? d / s : INFINITY;
        if (!(ok = *err <= bound))
            snprintf(why, cap, "got %.17g, want %.17g: error %.3g of sum|terms| %.3g", g, w, *err,
                     s);
    }
    return ok;
}

/* One element of any dtype (integers and bools exactly). */
static bool element_ok(const cf_array *got, const cf_array *want, int64_t i, double s, cf_tol tol,
                       double bound, double *err, char *why, size_t cap)
{
    if (cf_is_float(want->dt))
        return float_ok(want->dt, got->f[i], want->f[i], s, tol, bound, err, why, cap);
    int64_t g = got->i[i], w = want->i[i];
    *err = g == w ? 0 : fabs((double)g - (double)w);
    if (g != w)
        snprintf(why, cap, "got %lld, want %lld", (long long)g, (long long)w);
    return g == w;
}

bool cf_compare(const cf_array *got, const cf_array *want, const double *scale, int64_t k,
                cf_tol tol, bool tf32, double *max_error, double *tolerance, int64_t *first_bad,
                char *msg, size_t msg_size)
{
    bp_dtype dt = want->dt;
    double eps = cf_eps(dt);
    if (tf32 && dt == BP_F32 && tol.kind == CF_TOL_NORM)
        eps = ldexp(1.0, -10);
    double bound = tol.kind == CF_TOL_ULP ? tol.value
                   : tol.kind == CF_TOL_NORM ? tol.value * (double)(k > 1 ? k : 1) * eps
                                             : 0.0;
    *tolerance = bound;
    *max_error = 0;
    *first_bad = -1;
    msg[0] = '\0';
    int64_t bad = 0;
    for (int64_t i = 0; i < want->n; i++) {
        double err, s = scale ? scale[i] : cf_is_float(dt) ? fabs(want->f[i]) : 0;
        char why[200] = "";
        bool ok = element_ok(got, want, i, s, tol, bound, &err, why, sizeof why);
        if (err > *max_error && isfinite(err))
            *max_error = err;
        if (!ok) {
            if (!isfinite(err) || err == 0)
                *max_error = INFINITY;
            if (bad++ == 0) {
                *first_bad = i;
                snprintf(msg, msg_size, "element %lld: %s", (long long)i, why);
            }
        }
    }
    if (bad > 1) {
        size_t used = strlen(msg);
        snprintf(msg + used, msg_size - used, " (%lld of %lld elements wrong)", (long long)bad,
                 (long long)want->n);
    }
    return bad == 0;
}

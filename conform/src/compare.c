/* A result against the oracle, within one tolerance: exact (after rounding
 * the oracle's value to the dtype), ULP (distance from the unrounded value,
 * in units of the dtype's spacing there) or NORM (error relative to the
 * magnitude of the terms that made the element: c * K * eps). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

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
        bool ok;
        double err = 0;
        char why[200] = "";
        if (!cf_is_float(dt)) {
            int64_t g = got->i[i], w = want->i[i];
            ok = g == w;
            err = ok ? 0 : fabs((double)g - (double)w);
            if (!ok)
                snprintf(why, sizeof why, "got %lld, want %lld", (long long)g, (long long)w);
        } else {
            double g = got->f[i], w = want->f[i], wr = cf_round(dt, w);
            if (isnan(w) || isnan(wr)) {
                ok = isnan(g);
                if (!ok)
                    snprintf(why, sizeof why, "got %.9g, want NaN", g);
            } else if (isnan(g)) {
                ok = false;
                snprintf(why, sizeof why, "got NaN, want %.9g", wr);
            } else if (isinf(w) || (isinf(wr) && tol.kind == CF_TOL_EXACT)) {
                ok = g == wr;
                if (!ok)
                    snprintf(why, sizeof why, "got %.9g, want %g (infinity sign)", g, wr);
            } else if (isinf(g)) {
                ok = isinf(wr) && g == wr;
                if (!ok)
                    snprintf(why, sizeof why, "got %g, want finite %.17g", g, wr);
            } else if (tol.kind == CF_TOL_EXACT) {
                ok = g == wr;
                err = fabs(g - wr);
                if (!ok)
                    snprintf(why, sizeof why, "got %.17g, want %.17g (oracle %.17g)", g, wr, w);
            } else if (tol.kind == CF_TOL_ULP) {
                double d = fabs(g - w) - tol.atol;
                err = d > 0 ? d / cf_ulp(dt, w) : 0;
                ok = err <= bound;
                if (!ok)
                    snprintf(why, sizeof why, "got %.17g, want %.17g: %.3g ulp", g, w, err);
            } else {
                double d = fabs(g - w) - cf_ulp(dt, w);
                double s = scale ? scale[i] : fabs(w);
                err = d <= 0 ? 0 : s > 0 ? d / s : INFINITY;
                ok = err <= bound;
                if (!ok)
                    snprintf(why, sizeof why, "got %.17g, want %.17g: error %.3g of sum|terms| %.3g",
                             g, w, err, s);
            }
        }
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

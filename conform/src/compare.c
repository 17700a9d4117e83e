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

/* ---- an unsorted topk, put in the oracle's order -------------------------------- */

/* Whether (va, ia) goes before (vb, ib) in topk's order: the better value
 * (NaN above every number), then the lower index. */
static bool before(const cf_array *v, int64_t a, int64_t b, const int64_t *ix, bool largest)
{
    int cmp;
    if (v->f) {
        double x = v->f[a], y = v->f[b];
        bool nx = x != x, ny = y != y;
        cmp = nx || ny ? (nx && ny ? 0 : nx ? 1 : -1) : x < y ? -1 : x > y;
    } else {
        cmp = v->i[a] < v->i[b] ? -1 : v->i[a] > v->i[b];
    }
    if (largest)
        cmp = -cmp;
    return cmp < 0 || (cmp == 0 && ix[a] < ix[b]);
}

static void swap_at(cf_array *v, cf_array *idx, int64_t a, int64_t b)
{
    if (v->f) {
        double t = v->f[a];
        v->f[a] = v->f[b], v->f[b] = t;
    } else {
        int64_t t = v->i[a];
        v->i[a] = v->i[b], v->i[b] = t;
    }
    int64_t t = idx->i[a];
    idx->i[a] = idx->i[b], idx->i[b] = t;
}

void cf_topk_canonical(const cf_case *c, cf_array *values, cf_array *indices)
{
    int32_t axis = (int32_t)c->pi[1];
    if (axis < 0)
        axis += values->rank;
    int64_t k = values->shape[axis], inner = 1;
    for (int32_t d = axis + 1; d < values->rank; d++)
        inner *= values->shape[d];
    int64_t outer = k && inner ? values->n / (k * inner) : 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) /* insertion sort of one row */
            for (int64_t a = 1; a < k; a++)
                for (int64_t b = a; b > 0; b--) {
                    int64_t pb = (o * k + b) * inner + in, pa = pb - inner;
                    if (!before(values, pb, pa, indices->i, c->pi[2]))
                        break;
                    swap_at(values, indices, pb, pa);
                }
}

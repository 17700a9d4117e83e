/* See expect_nn.h. */
#include "expect_nn.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

cf_array bpt_random_array(bp_dtype dt, int32_t rank, const int64_t *shape, uint64_t seed,
                          double lo, double hi)
{
    int64_t n = cf_numel(rank, shape);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    cr_assert_not_null(v);
    bpt_fill_random(v, n, seed, lo, hi);
    cf_array a = bpt_array(dt, rank, shape, v);
    free(v);
    return a;
}

cf_array bpt_random_labels(bp_dtype dt, int32_t rank, const int64_t *shape, uint64_t seed,
                           int64_t n)
{
    int64_t count = cf_numel(rank, shape);
    int64_t *v = malloc((size_t)(count > 0 ? count : 1) * sizeof *v);
    double *u = malloc((size_t)(count > 0 ? count : 1) * sizeof *u);
    cr_assert(v && u);
    bpt_fill_random(u, count, seed, 0, (double)n);
    for (int64_t i = 0; i < count; i++)
        v[i] = (int64_t)u[i] < n ? (int64_t)u[i] : n - 1;
    cf_array a = bpt_array_i64(dt, rank, shape, v);
    free(v);
    free(u);
    return a;
}

void bpt_expect_norm(const char *what, const bp_tensor *t, const cf_array *want,
                     const double *terms, int64_t k, double c)
{
    bpt_expect_meta(what, t, want->dt, want->rank, want->shape);
    double *got = bpt_read(t);
    const double bound = c * (double)(k > 1 ? k : 1) * cf_eps(want->dt);
    for (int64_t i = 0; i < want->n; i++) {
        double w = want->f[i], g = got[i], s = terms ? terms[i] : fabs(w);
        bool ok;
        if (isnan(w))
            ok = isnan(g);
        else if (isinf(w) || isinf(g))
            ok = g == w;
        else
            ok = fabs(g - w) <= bound * s + cf_ulp(want->dt, w);
        if (!ok) {
            free(got);
            bp_backend *be = bp_tensor_backend(t);
            cr_assert_fail("%s [%s] on %s: element %lld: got %.17g, want %.17g (error %.3g, "
                           "allowed %.3g of terms %.3g)", what, bp_dtype_name(want->dt),
                           be ? bp_backend_name(be) : "?", (long long)i, g, w, fabs(g - w),
                           bound * s + cf_ulp(want->dt, w), s);
        }
    }
    free(got);
}

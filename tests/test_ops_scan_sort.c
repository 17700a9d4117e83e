/* Scans (cumsum, cumprod: exclusive, reverse) and sorting (sort, argsort,
 * topk: stable, ties to the lower index, NaN above every number) along any
 * axis, on every backend against the oracle (cf_oracle_cumsum, cf_oracle_sort,
 * cf_oracle_topk). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

#define NV(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* ---- scans ---------------------------------------------------------------------- */

static void check_scan(bool prod, const bp_dtype *dts, int ndt, int32_t rank,
                       const int64_t *shape, const double *xs, bool exact)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    bp_op op = prod ? BP_OP_CUMPROD : BP_OP_CUMSUM;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < ndt; d++) {
            bp_dtype dt = dts[d];
            if (!bpt_supports(be, op, dt))
                continue;
            cf_array xa = bpt_array(dt, rank, shape, xs);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (int32_t axis = -rank; axis < rank; axis++)
                for (int mode = 0; mode < 4; mode++) {
                    bool excl = mode & 1, rev = mode & 2;
                    cf_array want;
                    cr_assert(prod ? cf_oracle_cumprod(&xa, axis, excl, rev, &want, NULL, NULL)
                                   : cf_oracle_cumsum(&xa, axis, excl, rev, &want, NULL, NULL));
                    bp_tensor *o = NULL;
                    BPT_OK(prod ? bp_cumprod(t, axis, excl, rev, &o)
                                : bp_cumsum(t, axis, excl, rev, &o));
                    char what[96];
                    snprintf(what, sizeof what, "%s axis %d exclusive=%d reverse=%d",
                             bp_op_name(op), axis, excl, rev);
                    bpt_expect_array(what, o, &want, exact ? bpt_exact() : bpt_math(dt));
                    bp_tensor_release(o);
                    cf_array_free(&want);
                }
            bp_tensor_release(t);
            cf_array_free(&xa);
        }
    }
    bp_context_destroy(ctx);
}

Test(scan, cumsum_along_every_axis_in_every_mode_for_every_numeric_dtype)
{
    double x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (double)((i * 5) % 9) - 4;
    check_scan(false, cf_numeric_dtypes, 8, 3, (const int64_t[]){2, 3, 4}, x, true);
}

Test(scan, cumsum_exclusive_reverse)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_F32, 4, (const double[]){1, 2, 3, 4}), *o = NULL;
        BPT_OK(bp_cumsum(x, 0, true, true, &o));
        bpt_expect("cumsum exclusive reverse", o, BP_F32, 1, (const int64_t[]){4},
                   (const double[]){9, 7, 4, 0}, bpt_exact());
        bp_tensor_release(o);
        BPT_OK(bp_cumsum(x, 0, true, false, &o));
        bpt_expect("cumsum exclusive", o, BP_F32, 1, (const int64_t[]){4},
                   (const double[]){0, 1, 3, 6}, bpt_exact());
        bp_tensor_release(o);
        BPT_OK(bp_cumsum(x, -1, false, true, &o));
        bpt_expect("cumsum reverse", o, BP_F32, 1, (const int64_t[]){4},
                   (const double[]){10, 9, 7, 4}, bpt_exact());
        bp_tensor_release(o);
        bp_tensor_release(x);
    }
    bp_context_destroy(ctx);
}

Test(scan, cumprod_along_every_axis_in_every_mode)
{
    double x[24];
    static const double pw[5] = {2, -1, 0.5, 1, -2};
    for (int i = 0; i < 24; i++)
        x[i] = pw[i % 5];
    check_scan(true, cf_numeric_dtypes, 8, 3, (const int64_t[]){2, 3, 4}, x, true);
}

Test(scan, cumprod_exclusive_starts_at_one)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_I32, 4, (const double[]){3, -2, 5, 7}), *o = NULL;
        BPT_OK(bp_cumprod(x, 0, true, false, &o));
        bpt_expect_i64("cumprod exclusive", o, BP_I32, 1, (const int64_t[]){4},
                       (const int64_t[]){1, 3, -6, -30});
        bp_tensor_release(o), bp_tensor_release(x);
    }
    bp_context_destroy(ctx);
}

Test(scan, integer_scans_wrap)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_I8, 4, (const double[]){100, 100, 100, -128}), *o = NULL;
        BPT_OK(bp_cumsum(x, 0, false, false, &o));
        bpt_expect_i64("i8 cumsum", o, BP_I8, 1, (const int64_t[]){4},
                       (const int64_t[]){100, -56, 44, -84});
        bp_tensor_release(o);
        BPT_OK(bp_cumprod(x, 0, false, false, &o));
        bpt_expect_i64("i8 cumprod", o, BP_I8, 1, (const int64_t[]){4},
                       (const int64_t[]){100, 16, 64, 0});
        bp_tensor_release(o), bp_tensor_release(x);
    }
    bp_context_destroy(ctx);
}

Test(scan, float_cumsum_accumulates_in_double)
{
    /* f32 1e8 + 1 + 1 ... : each partial rounded once from a double sum */
    double x[6] = {1e8, 1, 1, 1, 1, -1e8};
    check_scan(false, cf_float_dtypes, 4, 1, (const int64_t[]){6}, x, false);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = bpt_vec(be, BP_F32, 6, x), *o = NULL;
        BPT_OK(bp_cumsum(t, 0, false, false, &o));
        double *r = bpt_read(o);
        cr_expect_eq(r[5], 4.0, "the last partial sum on %s is %g, not 4", bp_backend_name(be),
                     r[5]);
        free(r);
        bp_tensor_release(o), bp_tensor_release(t);
    }
    bp_context_destroy(ctx);
}

Test(scan, cumsum_of_long_rows_and_many_columns)
{
    /* rows along the last axis, and columns (axis 0): both the per-row and
     * the column-blocked paths of the threaded backends */
    int64_t shape[2] = {257, 300};
    double *x = malloc(257 * 300 * sizeof *x);
    cr_assert_not_null(x);
    bpt_fill_random(x, 257 * 300, 8, -2, 2);
    /* Multiples of 2^-20: every partial sum is exact in f64 whatever the
     * order of the additions (a GPU's scan adds in a tree, not in a row). */
    for (int64_t k = 0; k < 257 * 300; k++)
        x[k] = nearbyint(ldexp(x[k], 20)) * 0x1p-20;
    check_scan(false, (const bp_dtype[]){BP_F32, BP_F64, BP_I64}, 3, 2, shape, x, false);
    free(x);
}

/* ---- sort and argsort ------------------------------------------------------------------ */

static void check_sort(const bp_dtype *dts, int ndt, int32_t rank, const int64_t *shape,
                       const double *xs)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < ndt; d++) {
            bp_dtype dt = dts[d];
            if (!bpt_supports(be, BP_OP_SORT, dt))
                continue;
            cf_array xa = bpt_array(dt, rank, shape, xs);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (int32_t axis = -rank; axis < rank; axis++)
                for (int desc = 0; desc < 2; desc++) {
                    cf_array wv, wi;
                    cr_assert(cf_oracle_sort(&xa, axis, desc, &wv, &wi));
                    bp_tensor *v = NULL, *i = NULL, *a = NULL;
                    BPT_OK(bp_sort(t, axis, desc, &v, &i));
                    BPT_OK(bp_argsort(t, axis, desc, &a));
                    char what[64];
                    snprintf(what, sizeof what, "sort axis %d descending=%d", axis, desc);
                    bpt_expect_array(what, v, &wv, bpt_exact());
                    bpt_expect_array(what, i, &wi, bpt_exact());
                    bpt_expect_array("argsort", a, &wi, bpt_exact());
                    bp_tensor_release(v), bp_tensor_release(i), bp_tensor_release(a);
                    cf_array_free(&wv), cf_array_free(&wi);
                }
            bp_tensor_release(t);
            cf_array_free(&xa);
        }
    }
    bp_context_destroy(ctx);
}

Test(sort, sort_along_every_axis_both_ways_for_every_numeric_dtype)
{
    double x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (double)((i * 7) % 5) - 2; /* ties everywhere */
    check_sort(cf_numeric_dtypes, 8, 3, (const int64_t[]){2, 3, 4}, x);
}

Test(sort, sort_is_stable_ascending_and_descending)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_I32, 6, (const double[]){2, 1, 2, 0, 1, 2}), *i = NULL;
        BPT_OK(bp_argsort(x, 0, false, &i));
        bpt_expect_i64("argsort ascending", i, BP_I64, 1, (const int64_t[]){6},
                       (const int64_t[]){3, 1, 4, 0, 2, 5});
        bp_tensor_release(i);
        BPT_OK(bp_argsort(x, 0, true, &i));
        bpt_expect_i64("argsort descending keeps ties in order", i, BP_I64, 1,
                       (const int64_t[]){6}, (const int64_t[]){0, 2, 5, 1, 4, 3});
        bp_tensor_release(i), bp_tensor_release(x);
    }
    bp_context_destroy(ctx);
}

Test(sort, nan_sorts_last_ascending_and_first_descending)
{
    static const double x[] = {3, NAN, -INFINITY, 0.0, -0.0, NAN, INFINITY, -1};
    check_sort(cf_float_dtypes, 4, 1, (const int64_t[]){8}, x);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = bpt_vec(be, BP_F64, 8, x), *i = NULL;
        BPT_OK(bp_argsort(t, 0, false, &i));
        /* -0 and +0 tie: they keep their order */
        bpt_expect_i64("argsort with NaN", i, BP_I64, 1, (const int64_t[]){8},
                       (const int64_t[]){2, 7, 3, 4, 0, 6, 1, 5});
        bp_tensor_release(i);
        BPT_OK(bp_argsort(t, 0, true, &i));
        bpt_expect_i64("argsort descending with NaN", i, BP_I64, 1, (const int64_t[]){8},
                       (const int64_t[]){1, 5, 6, 0, 3, 4, 7, 2});
        bp_tensor_release(i), bp_tensor_release(t);
    }
    bp_context_destroy(ctx);
}

Test(sort, sort_keeps_signed_zero_and_integer_extremes_exactly)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = bpt_tensor_i64(be, BP_I64, 1, (const int64_t[]){4},
                                      (const int64_t[]){INT64_MAX, INT64_MIN, INT64_MAX - 1, 0});
        bp_tensor *v = NULL;
        BPT_OK(bp_sort(t, 0, false, &v, NULL));
        bpt_expect_i64("i64 sort", v, BP_I64, 1, (const int64_t[]){4},
                       (const int64_t[]){INT64_MIN, 0, INT64_MAX - 1, INT64_MAX});
        bp_tensor_release(v), bp_tensor_release(t);
        t = bpt_vec(be, BP_F32, 2, (const double[]){0.0, -0.0});
        BPT_OK(bp_sort(t, 0, false, &v, NULL));
        bpt_expect_signbits("sort of (+0, -0)", v, (const int[]){0, 1});
        bp_tensor_release(v), bp_tensor_release(t);
    }
    bp_context_destroy(ctx);
}

/* ---- topk -------------------------------------------------------------------------- */

/* values and indices of an unsorted topk put in the order the oracle uses
 * (per row along the last axis: better first, then the lower index). */
static void canonical(bp_dtype dt, const cf_array *vals, cf_array *idx_in, double *v,
                      int64_t *ix, int64_t rows, int64_t k, bool largest)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t a = 0; a < k; a++)
            for (int64_t b = a + 1; b < k; b++) {
                int64_t pa = r * k + a, pb = r * k + b;
                double va = v[pa], vb = v[pb];
                bool na = isnan(va), nb = isnan(vb);
                int c = na || nb ? (na && nb ? 0 : na ? 1 : -1) : va < vb ? -1 : va > vb;
                if (largest)
                    c = -c;
                if (c > 0 || (c == 0 && ix[pb] < ix[pa])) {
                    double tv = v[pa];
                    v[pa] = v[pb], v[pb] = tv;
                    int64_t ti = ix[pa];
                    ix[pa] = ix[pb], ix[pb] = ti;
                }
            }
    (void)dt, (void)vals, (void)idx_in;
}

static void check_topk(const bp_dtype *dts, int ndt, int64_t rows, int64_t n, const double *xs)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    int64_t shape[2] = {rows, n};
    static const int64_t ks[] = {0, 1, 2, 3};
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < ndt; d++) {
            bp_dtype dt = dts[d];
            if (!bpt_supports(be, BP_OP_TOPK, dt))
                continue;
            cf_array xa = bpt_array(dt, 2, shape, xs);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            int64_t kk[5] = {ks[0], ks[1], ks[2], n / 2, n};
            for (int ki = 0; ki < 5; ki++)
                for (int mode = 0; mode < 4; mode++) {
                    int64_t k = kk[ki] > n ? n : kk[ki];
                    bool largest = mode & 1, sorted = mode & 2;
                    cf_array wv, wi;
                    cr_assert(cf_oracle_topk(&xa, k, 1, largest, sorted, &wv, &wi));
                    bp_tensor *v = NULL, *i = NULL;
                    BPT_OK(bp_topk(t, k, 1, largest, sorted, &v, &i));
                    char what[80];
                    snprintf(what, sizeof what, "topk k=%lld largest=%d sorted=%d",
                             (long long)k, largest, sorted);
                    if (!sorted) { /* any order: compare in the oracle's */
                        double *gv = bpt_read(v);
                        int64_t *gi = bpt_read_i64(i);
                        canonical(dt, NULL, NULL, gv, gi, rows, k, largest);
                        bp_tensor *cv = bpt_tensor(be, dt, 2, (const int64_t[]){rows, k}, gv);
                        bp_tensor *ci = bpt_tensor_i64(be, BP_I64, 2, (const int64_t[]){rows, k},
                                                       gi);
                        free(gv), free(gi);
                        bp_tensor_release(v), bp_tensor_release(i);
                        v = cv, i = ci;
                    }
                    bpt_expect_array(what, v, &wv, bpt_exact());
                    bpt_expect_array(what, i, &wi, bpt_exact());
                    bp_tensor_release(v), bp_tensor_release(i);
                    cf_array_free(&wv), cf_array_free(&wi);
                }
            bp_tensor_release(t);
            cf_array_free(&xa);
        }
    }
    bp_context_destroy(ctx);
}

Test(topk, topk_largest_and_smallest_for_every_numeric_dtype)
{
    double x[4 * 9];
    for (int i = 0; i < 36; i++)
        x[i] = (double)((i * 7) % 6) - 2;
    check_topk(cf_numeric_dtypes, 8, 4, 9, x);
}

Test(topk, topk_ties_go_to_the_lower_index)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_F32, 6, (const double[]){1, 5, 3, 5, 5, 1}), *v = NULL,
                  *i = NULL;
        BPT_OK(bp_topk(x, 2, 0, true, true, &v, &i));
        bpt_expect_i64("topk(2) of tied maxima", i, BP_I64, 1, (const int64_t[]){2},
                       (const int64_t[]){1, 3});
        bp_tensor_release(v), bp_tensor_release(i);
        BPT_OK(bp_topk(x, 1, 0, false, true, &v, &i));
        bpt_expect_i64("bottom-1 of tied minima", i, BP_I64, 1, (const int64_t[]){1},
                       (const int64_t[]){0});
        bp_tensor_release(v), bp_tensor_release(i), bp_tensor_release(x);
    }
    bp_context_destroy(ctx);
}

Test(topk, nan_counts_as_larger_than_any_number)
{
    static const double x[] = {1, NAN, INFINITY, -3, NAN, 2, -0.0, 0.0};
    check_topk(cf_float_dtypes, 4, 1, 8, x);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = bpt_vec(be, BP_F32, 8, x), *v = NULL, *i = NULL;
        BPT_OK(bp_topk(t, 3, 0, true, true, &v, &i));
        bpt_expect_i64("top 3 with NaN", i, BP_I64, 1, (const int64_t[]){3},
                       (const int64_t[]){1, 4, 2});
        bp_tensor_release(v), bp_tensor_release(i);
        BPT_OK(bp_topk(t, 3, 0, false, true, &v, &i));
        bpt_expect_i64("bottom 3 with NaN", i, BP_I64, 1, (const int64_t[]){3},
                       (const int64_t[]){3, 6, 7});
        bp_tensor_release(v), bp_tensor_release(i), bp_tensor_release(t);
    }
    bp_context_destroy(ctx);
}

Test(topk, topk_along_a_leading_axis)
{
    double x[5 * 3];
    bpt_fill_random(x, 15, 12, -5, 5);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        cf_array xa = bpt_array(BP_F64, 2, (const int64_t[]){5, 3}, x), wv, wi;
        cr_assert(cf_oracle_topk(&xa, 2, 0, true, true, &wv, &wi));
        bp_tensor *t = bpt_tensor_of(be, &xa), *v = NULL, *i = NULL;
        BPT_OK(bp_topk(t, 2, -2, true, true, &v, &i));
        bpt_expect_array("topk axis 0 values", v, &wv, bpt_exact());
        bpt_expect_array("topk axis 0 indices", i, &wi, bpt_exact());
        bp_tensor_release(v), bp_tensor_release(i), bp_tensor_release(t);
        cf_array_free(&xa), cf_array_free(&wv), cf_array_free(&wi);
    }
    bp_context_destroy(ctx);
}

Test(topk, topk_of_many_long_rows_matches_the_oracle)
{
    int64_t rows = 64, n = 1500;
    double *x = malloc((size_t)(rows * n) * sizeof *x);
    cr_assert_not_null(x);
    bpt_fill_random(x, rows * n, 30, -100, 100);
    for (int64_t i = 0; i < rows * n; i += 7)
        x[i] = trunc(x[i]); /* some ties */
    check_topk((const bp_dtype[]){BP_F32, BP_I32, BP_BF16}, 3, rows, n, x);
    free(x);
}

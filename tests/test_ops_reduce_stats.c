/* The statistical reductions (l1, l2, sum_square, log_sum, var, std, any,
 * all, argmax/argmin with the last index on ties) over every axis set, and
 * hardmax along an axis, on every backend against the oracle. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpt.h"
#include "expect.h"

#define NV(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

typedef struct axset { int32_t n; int32_t axes[3]; } axset;

static const axset AXSETS[] = {
    {0, {0}}, {1, {0}}, {1, {1}}, {1, {-1}}, {2, {0, 2}}, {2, {2, 0}}, {3, {0, 1, 2}},
};
static const int64_t SHAPE3[3] = {2, 3, 4};

typedef bool (*oracle_fn)(const cf_array *, int32_t, const int32_t *, bool, cf_array *,
                          double **, int64_t *);

static bp_status call(bp_op op, const bp_tensor *x, int32_t n, const int32_t *axes, bool keep,
                      double correction, bp_tensor **out)
{
    switch (op) {
    case BP_OP_REDUCE_L1: return bp_reduce_l1(x, n, axes, keep, out);
    case BP_OP_REDUCE_L2: return bp_reduce_l2(x, n, axes, keep, out);
    case BP_OP_REDUCE_SUM_SQUARE: return bp_reduce_sum_square(x, n, axes, keep, out);
    case BP_OP_REDUCE_LOG_SUM: return bp_reduce_log_sum(x, n, axes, keep, out);
    case BP_OP_REDUCE_VAR: return bp_reduce_var(x, n, axes, keep, correction, out);
    case BP_OP_REDUCE_STD: return bp_reduce_std(x, n, axes, keep, correction, out);
    case BP_OP_REDUCE_ANY: return bp_reduce_any(x, n, axes, keep, out);
    case BP_OP_REDUCE_ALL: return bp_reduce_all(x, n, axes, keep, out);
    case BP_OP_ARGMAX_LAST: return bp_argmax_last(x, n, axes, keep, out);
    case BP_OP_ARGMIN_LAST: return bp_argmin_last(x, n, axes, keep, out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

static bool oracle(bp_op op, const cf_array *x, int32_t n, const int32_t *axes, bool keep,
                   double correction, cf_array *want)
{
    switch (op) {
    case BP_OP_REDUCE_L1: return cf_oracle_reduce_l1(x, n, axes, keep, want, NULL, NULL);
    case BP_OP_REDUCE_L2: return cf_oracle_reduce_l2(x, n, axes, keep, want, NULL, NULL);
    case BP_OP_REDUCE_SUM_SQUARE:
        return cf_oracle_reduce_sum_square(x, n, axes, keep, want, NULL, NULL);
    case BP_OP_REDUCE_LOG_SUM: return cf_oracle_reduce_log_sum(x, n, axes, keep, want, NULL, NULL);
    case BP_OP_REDUCE_VAR:
        return cf_oracle_reduce_var(x, n, axes, keep, correction, want, NULL, NULL);
    case BP_OP_REDUCE_STD:
        return cf_oracle_reduce_std(x, n, axes, keep, correction, want, NULL, NULL);
    case BP_OP_REDUCE_ANY: return cf_oracle_reduce_any(x, n, axes, keep, want, NULL, NULL);
    case BP_OP_REDUCE_ALL: return cf_oracle_reduce_all(x, n, axes, keep, want, NULL, NULL);
    case BP_OP_ARGMAX_LAST: return cf_oracle_argmax_last(x, n, axes, keep, want, NULL, NULL);
    default: return cf_oracle_argmin_last(x, n, axes, keep, want, NULL, NULL);
    }
}

/* op over every axis set (keepdims both ways) of x (2, 3, 4) holding xs, for
 * each dtype of dts, on every backend. */
static void check(bp_op op, const bp_dtype *dts, int ndt, const double *xs, double correction,
                  bool exact)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < ndt; d++) {
            bp_dtype dt = dts[d];
            if (!bpt_supports(be, op, dt))
                continue;
            cf_array xa = bpt_array(dt, 3, SHAPE3, xs);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (size_t s = 0; s < sizeof AXSETS / sizeof AXSETS[0]; s++)
                for (int keep = 0; keep < 2; keep++) {
                    const axset *a = &AXSETS[s];
                    cf_array want;
                    cr_assert(oracle(op, &xa, a->n, a->axes, keep, correction, &want));
                    bp_tensor *o = NULL;
                    BPT_OK(call(op, t, a->n, a->n ? a->axes : NULL, keep, correction, &o));
                    char what[96];
                    snprintf(what, sizeof what, "%s over %d axes {%d,%d,%d} keepdims=%d",
                             bp_op_name(op), a->n, a->axes[0], a->axes[1], a->axes[2], keep);
                    bpt_expect_array(what, o, &want, exact ? bpt_exact() : bpt_math(dt));
                    cf_array_free(&want);
                    bp_tensor_release(o);
                }
            cf_array_free(&xa);
            bp_tensor_release(t);
        }
    }
    bp_context_destroy(ctx);
}

/* Small integers (exact in every dtype), some negative. */
static void data(double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = (double)((i * 7) % 11) - 5.0;
}

#define NUMERIC cf_numeric_dtypes, CF_COUNT(cf_numeric_dtypes)
#define FLOATS cf_float_dtypes, CF_COUNT(cf_float_dtypes)

Test(reduce_stats, l1_is_the_sum_of_magnitudes_for_every_numeric_dtype)
{
    double x[24];
    data(x, 24);
    check(BP_OP_REDUCE_L1, NUMERIC, x, 0, true);
}

Test(reduce_stats, sum_square_for_every_numeric_dtype)
{
    double x[24];
    data(x, 24);
    check(BP_OP_REDUCE_SUM_SQUARE, NUMERIC, x, 0, true);
}

Test(reduce_stats, l1_and_sum_square_of_integers_wrap)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_int_dtypes[d];
            int64_t v[8], n = cf_int_edges(dt, (const int64_t[]){-3, 9}, 2, v);
            cf_array xa = bpt_array_i64(dt, 1, &n, v), w1, w2;
            cr_assert(cf_oracle_reduce_l1(&xa, 0, NULL, false, &w1, NULL, NULL));
            cr_assert(cf_oracle_reduce_sum_square(&xa, 0, NULL, false, &w2, NULL, NULL));
            bp_tensor *t = bpt_tensor_of(be, &xa), *o1 = NULL, *o2 = NULL;
            BPT_OK(bp_reduce_l1(t, 0, NULL, false, &o1));
            BPT_OK(bp_reduce_sum_square(t, 0, NULL, false, &o2));
            bpt_expect_array("reduce_l1 at the integer limits", o1, &w1, bpt_exact());
            bpt_expect_array("reduce_sum_square at the integer limits", o2, &w2, bpt_exact());
            bp_tensor_release(t), bp_tensor_release(o1), bp_tensor_release(o2);
            cf_array_free(&xa), cf_array_free(&w1), cf_array_free(&w2);
        }
    }
    bp_context_destroy(ctx);
}

Test(reduce_stats, l2_and_log_sum_for_every_float_dtype)
{
    double x[24];
    for (int i = 0; i < 24; i++)
        x[i] = 0.25 + (double)((i * 5) % 7);
    check(BP_OP_REDUCE_L2, FLOATS, x, 0, false);
    check(BP_OP_REDUCE_LOG_SUM, FLOATS, x, 0, false);
}

Test(reduce_stats, log_sum_of_a_negative_sum_is_nan_and_of_zero_minus_infinity)
{
    double x[24];
    for (int i = 0; i < 24; i++)
        x[i] = i % 4 == 3 ? -(double)(i % 5) - 20 : (double)(i % 3);
    check(BP_OP_REDUCE_LOG_SUM, FLOATS, x, 0, false);
    double z[24] = {0};
    check(BP_OP_REDUCE_LOG_SUM, FLOATS, z, 0, true);
}

Test(reduce_stats, var_and_std_of_the_population_and_the_sample)
{
    double x[24];
    bpt_fill_random(x, 24, 9, -4, 4);
    for (int c = 0; c < 3; c++) {
        check(BP_OP_REDUCE_VAR, FLOATS, x, (double)c * 0.5, false);
        check(BP_OP_REDUCE_STD, FLOATS, x, (double)c * 0.5, false);
    }
}

Test(reduce_stats, var_is_nan_when_the_correction_leaves_no_degrees_of_freedom)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F32, 2, (const int64_t[]){2, 3},
                                  (const double[]){1, 2, 3, 4, 6, 8}), *o = NULL;
        BPT_OK(bp_reduce_var(x, 1, (const int32_t[]){1}, false, 3, &o)); /* n - c = 0 */
        double *r = bpt_read(o);
        cr_expect(isnan(r[0]) && isnan(r[1]), "var with correction 3 of 3 values on %s: %g %g",
                  bp_backend_name(be), r[0], r[1]);
        free(r);
        bp_tensor_release(o);
        BPT_OK(bp_reduce_var(x, 1, (const int32_t[]){1}, false, 1, &o));
        bpt_expect("sample variance", o, BP_F32, 1, (const int64_t[]){2},
                   (const double[]){1, 4}, bpt_math(BP_F32));
        bp_tensor_release(o);
        BPT_OK(bp_reduce_std(x, 1, (const int32_t[]){1}, true, 0, &o));
        bpt_expect("population std", o, BP_F32, 2, (const int64_t[]){2, 1},
                   (const double[]){sqrt(2.0 / 3.0), sqrt(8.0 / 3.0)}, bpt_math(BP_F32));
        bp_tensor_release(o);
        bp_tensor_release(x);
    }
    bp_context_destroy(ctx);
}

Test(reduce_stats, any_and_all_over_every_axis_set)
{
    double x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (i % 5 == 0) || (i >= 12 && i < 16);
    static const bp_dtype b[] = {BP_BOOL};
    check(BP_OP_REDUCE_ANY, b, 1, x, 0, true);
    check(BP_OP_REDUCE_ALL, b, 1, x, 0, true);
}

Test(reduce_stats, any_over_nothing_is_false_and_all_over_nothing_is_true)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_BOOL, 2, (const int64_t[]){3, 0}, NULL), *o = NULL;
        BPT_OK(bp_reduce_any(x, 1, (const int32_t[]){1}, false, &o));
        bpt_expect_i64("any over an empty axis", o, BP_BOOL, 1, (const int64_t[]){3},
                       (const int64_t[]){0, 0, 0});
        bp_tensor_release(o);
        BPT_OK(bp_reduce_all(x, 1, (const int32_t[]){1}, false, &o));
        bpt_expect_i64("all over an empty axis", o, BP_BOOL, 1, (const int64_t[]){3},
                       (const int64_t[]){1, 1, 1});
        bp_tensor_release(o);
        bp_tensor_release(x);
    }
    bp_context_destroy(ctx);
}

Test(reduce_stats, argmax_last_and_argmin_last_over_every_axis_set)
{
    double x[24];
    data(x, 24); /* many ties */
    check(BP_OP_ARGMAX_LAST, NUMERIC, x, 0, true);
    check(BP_OP_ARGMIN_LAST, NUMERIC, x, 0, true);
}

Test(reduce_stats, argmax_last_picks_the_last_of_tied_maxima)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_I32, 6, (const double[]){3, 9, 1, 9, 0, 9}), *o = NULL,
                  *f = NULL;
        BPT_OK(bp_argmax_last(x, 0, NULL, false, &o));
        BPT_OK(bp_argmax(x, 0, NULL, false, &f));
        bpt_expect_i64("argmax_last", o, BP_I64, 0, NULL, (const int64_t[]){5});
        bpt_expect_i64("argmax (first)", f, BP_I64, 0, NULL, (const int64_t[]){1});
        bp_tensor_release(o), bp_tensor_release(f);
        BPT_OK(bp_argmin_last(x, 0, NULL, false, &o));
        bpt_expect_i64("argmin_last", o, BP_I64, 0, NULL, (const int64_t[]){4});
        bp_tensor_release(o);
        bp_tensor_release(x);
    }
    bp_context_destroy(ctx);
}

Test(reduce_stats, argmax_last_takes_the_last_nan_over_any_number)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_tensor *x = bpt_vec(be, cf_float_dtypes[d], 6,
                                   (const double[]){1, NAN, INFINITY, NAN, 2, -1}), *o = NULL;
            BPT_OK(bp_argmax_last(x, 0, NULL, false, &o));
            bpt_expect_i64("argmax_last with NaN", o, BP_I64, 0, NULL, (const int64_t[]){3});
            bp_tensor_release(o);
            BPT_OK(bp_argmin_last(x, 0, NULL, false, &o));
            bpt_expect_i64("argmin_last with NaN", o, BP_I64, 0, NULL, (const int64_t[]){3});
            bp_tensor_release(o);
            bp_tensor_release(x);
        }
    }
    bp_context_destroy(ctx);
}

Test(reduce_stats, large_reductions_match_the_oracle)
{
    int64_t shape[2] = {300, 257};
    double *x = malloc(300 * 257 * sizeof *x);
    cr_assert_not_null(x);
    bpt_fill_random(x, 300 * 257, 21, -3, 3);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        cf_array xa = bpt_array(BP_F32, 2, shape, x);
        bp_tensor *t = bpt_tensor_of(be, &xa);
        for (int axis = 0; axis < 2; axis++) {
            cf_array w1, w2;
            int32_t ax[1] = {axis};
            cr_assert(cf_oracle_reduce_l2(&xa, 1, ax, false, &w1, NULL, NULL));
            cr_assert(cf_oracle_reduce_var(&xa, 1, ax, false, 1, &w2, NULL, NULL));
            bp_tensor *o1 = NULL, *o2 = NULL;
            BPT_OK(bp_reduce_l2(t, 1, ax, false, &o1));
            BPT_OK(bp_reduce_var(t, 1, ax, false, 1, &o2));
            bpt_expect_array("large reduce_l2", o1, &w1, bpt_math(BP_F32));
            bpt_expect_array("large reduce_var", o2, &w2, bpt_math(BP_F32));
            bp_tensor_release(o1), bp_tensor_release(o2);
            cf_array_free(&w1), cf_array_free(&w2);
        }
        bp_tensor_release(t);
        cf_array_free(&xa);
    }
    bp_context_destroy(ctx);
    free(x);
}

/* ---- hardmax ----------------------------------------------------------------------- */

Test(reduce_stats, hardmax_marks_the_first_maximum_along_each_axis)
{
    static const double x[] = {1, 5, 5, 2, 0, -1, 7, 7, 3, 3, 3, 3};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            cf_array xa = bpt_array(dt, 2, (const int64_t[]){3, 4}, x);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (int axis = -2; axis < 2; axis++) {
                cf_array want;
                cr_assert(cf_oracle_hardmax(&xa, axis, &want));
                bp_tensor *o = NULL;
                BPT_OK(bp_hardmax(t, axis, &o));
                bpt_expect_array("hardmax", o, &want, bpt_exact());
                bp_tensor_release(o);
                cf_array_free(&want);
            }
            bp_tensor_release(t);
            cf_array_free(&xa);
        }
        /* the first maximum, written out: row {1, 5, 5, 2} -> {0, 1, 0, 0} */
        bp_tensor *t = bpt_vec(be, BP_F32, 4, x), *o = NULL;
        BPT_OK(bp_hardmax(t, 0, &o));
        bpt_expect("hardmax ties", o, BP_F32, 1, (const int64_t[]){4},
                   (const double[]){0, 1, 0, 0}, bpt_exact());
        bp_tensor_release(o), bp_tensor_release(t);
    }
    bp_context_destroy(ctx);
}

Test(reduce_stats, hardmax_puts_the_one_on_the_first_nan)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = bpt_vec(be, BP_F64, 5, (const double[]){INFINITY, 2, NAN, NAN, 1}), *o = NULL;
        BPT_OK(bp_hardmax(t, -1, &o));
        bpt_expect("hardmax with NaN", o, BP_F64, 1, (const int64_t[]){5},
                   (const double[]){0, 0, 1, 0, 0}, bpt_exact());
        bp_tensor_release(o), bp_tensor_release(t);
    }
    bp_context_destroy(ctx);
}

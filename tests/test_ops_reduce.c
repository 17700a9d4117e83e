/* Reductions (ops.h bp_reduce), softmax and log_softmax: every op, every dtype
 * it accepts, several axis sets with keepdims and negative axes, every
 * backend, against the oracle (cf_oracle_reduce, cf_oracle_softmax) in
 * double / int64. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

#define NV(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

typedef struct axset { int32_t n; int32_t axes[3]; } axset;

/* Axis sets for a rank-3 tensor: all, single, negative, pairs, unsorted. */
static const axset AXSETS[] = {
    {0, {0}},     {1, {0}},      {1, {1}},      {1, {2}},  {1, {-1}},
    {2, {0, 2}},  {2, {-3, -1}}, {2, {2, 0}},   {2, {1, 2}}, {3, {0, 1, 2}},
};

static const int64_t SHAPE3[3] = {2, 3, 4};

/* Data exact in every dtype: small integers for sum/max/min/mean/arg*,
 * powers of two for prod. */
static void data_for(bp_op op, double *x, int64_t n)
{
    static const double pw[5] = {2, -1, 0.5, 1, -0.5};
    for (int64_t i = 0; i < n; i++)
        x[i] = op == BP_OP_PROD ? pw[i % 5] : (double)((i * 7) % 11) - 5.0;
}

static void check_reduce_float_data(bp_op op, const bp_dtype *dts, int ndt)
{
    double x[24];
    data_for(op, x, 24);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < ndt; d++) {
            bp_dtype dt = dts[d];
            if (!bpt_supports(be, op, dt))
                continue;
            cf_array xa = bpt_array(dt, 3, SHAPE3, x);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (size_t s = 0; s < sizeof AXSETS / sizeof AXSETS[0]; s++) {
                for (int keep = 0; keep < 2; keep++) {
                    cf_array want;
                    cr_assert(cf_oracle_reduce(op, &xa, AXSETS[s].n, AXSETS[s].axes, keep, &want,
                                               NULL, NULL));
                    bp_tensor *o = NULL;
                    BPT_OK(bp_reduce(op, t, AXSETS[s].n, AXSETS[s].axes, keep, &o));
                    char what[96];
                    snprintf(what, sizeof what, "%s over %d axes {%d,%d,%d} keepdims=%d",
                             bp_op_name(op), AXSETS[s].n, AXSETS[s].axes[0], AXSETS[s].axes[1],
                             AXSETS[s].axes[2], keep);
                    bool exact = op != BP_OP_MEAN && op != BP_OP_LOGSUMEXP;
                    bpt_expect_array(what, o, &want, exact ? bpt_exact() : bpt_math(dt));
                    cf_array_free(&want);
                    bp_tensor_release(o);
                }
            }
            cf_array_free(&xa);
            bp_tensor_release(t);
        }
    }
    bp_context_destroy(ctx);
}

#define NUMERIC cf_numeric_dtypes, CF_COUNT(cf_numeric_dtypes)
#define FLOATS cf_float_dtypes, CF_COUNT(cf_float_dtypes)

Test(reduce, sum_over_every_axis_set_for_every_numeric_dtype)
{
    check_reduce_float_data(BP_OP_SUM, NUMERIC);
}

Test(reduce, prod_over_every_axis_set_for_every_numeric_dtype)
{
    static const bp_dtype f[] = {BP_F16, BP_BF16, BP_F32, BP_F64};
    check_reduce_float_data(BP_OP_PROD, f, 4);
}

Test(reduce, max_over_every_axis_set_for_every_numeric_dtype)
{
    check_reduce_float_data(BP_OP_MAX, NUMERIC);
}

Test(reduce, min_over_every_axis_set_for_every_numeric_dtype)
{
    check_reduce_float_data(BP_OP_MIN, NUMERIC);
}

Test(reduce, argmax_over_every_axis_set_for_every_numeric_dtype)
{
    check_reduce_float_data(BP_OP_ARGMAX, NUMERIC);
}

Test(reduce, argmin_over_every_axis_set_for_every_numeric_dtype)
{
    check_reduce_float_data(BP_OP_ARGMIN, NUMERIC);
}

Test(reduce, mean_over_every_axis_set_for_every_float_dtype)
{
    check_reduce_float_data(BP_OP_MEAN, FLOATS);
}

Test(reduce, logsumexp_over_every_axis_set_for_every_float_dtype)
{
    check_reduce_float_data(BP_OP_LOGSUMEXP, FLOATS);
}

/* ---- integers: wrapping sums and products over the whole range ------------- */

static void check_int_reduce(bp_op op)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_int_dtypes[d];
            if (!bpt_supports(be, op, dt))
                continue;
            int64_t x[24];
            uint64_t s = 0x1234567u;
            for (int i = 0; i < 24; i++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                x[i] = cf_wrap(dt, (int64_t)(s >> 7));
                if (op == BP_OP_PROD && i % 3)
                    x[i] = cf_wrap(dt, (int64_t)(s >> 60) - 7); /* keep some bits alive */
            }
            cf_array xa = bpt_array_i64(dt, 3, SHAPE3, x);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (size_t a = 0; a < sizeof AXSETS / sizeof AXSETS[0]; a++) {
                cf_array want;
                cr_assert(cf_oracle_reduce(op, &xa, AXSETS[a].n, AXSETS[a].axes, false, &want,
                                           NULL, NULL));
                bp_tensor *out = NULL;
                BPT_OK(bp_reduce(op, t, AXSETS[a].n, AXSETS[a].axes, false, &out));
                bpt_expect_array(bp_op_name(op), out, &want, bpt_exact());
                cf_array_free(&want);
                bp_tensor_release(out);
            }
            cf_array_free(&xa);
            bp_tensor_release(t);
        }
    }
    bp_context_destroy(ctx);
}

Test(reduce, integer_sum_wraps_over_the_whole_range)
{
    check_int_reduce(BP_OP_SUM);
}

Test(reduce, integer_prod_wraps_over_the_whole_range)
{
    check_int_reduce(BP_OP_PROD);
}

Test(reduce, sum_of_integers_wraps_around)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t n = 2;
        struct { bp_dtype dt; int64_t a, b, want; } c[] = {
            {BP_I32, INT32_MAX, 1, INT32_MIN}, {BP_U8, 200, 100, 44},
            {BP_I8, -128, -1, 127},            {BP_I64, INT64_MAX, 2, INT64_MIN + 1},
        };
        for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
            bp_tensor *t = bpt_tensor_i64(be, c[k].dt, 1, &n, (int64_t[]){c[k].a, c[k].b}), *o = NULL;
            BPT_OK(bp_sum(t, 0, NULL, false, &o));
            bpt_expect_i64("sum", o, c[k].dt, 0, NULL, &c[k].want);
            bp_tensor_release(t);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(reduce, max_min_and_argmax_of_i64_are_exact_beyond_two_to_the_53)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t n = 3;
        int64_t v[3] = {INT64_MAX - 1, INT64_MAX, INT64_MAX - 2};
        bp_tensor *t = bpt_tensor_i64(be, BP_I64, 1, &n, v), *mx = NULL, *am = NULL, *mn = NULL;
        BPT_OK(bp_max(t, 0, NULL, false, &mx));
        BPT_OK(bp_argmax(t, 0, NULL, false, &am));
        BPT_OK(bp_min(t, 0, NULL, false, &mn));
        bpt_expect_i64("max", mx, BP_I64, 0, NULL, (int64_t[]){INT64_MAX});
        bpt_expect_i64("argmax", am, BP_I64, 0, NULL, (int64_t[]){1});
        bpt_expect_i64("min", mn, BP_I64, 0, NULL, (int64_t[]){INT64_MAX - 2});
        bp_tensor_release(t);
        bp_tensor_release(mx);
        bp_tensor_release(am);
        bp_tensor_release(mn);
    }
    bp_context_destroy(ctx);
}

/* ---- argmax / argmin ------------------------------------------------------------ */

Test(reduce, argmax_ties_pick_the_first_index)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            int64_t s[2] = {2, 5};
            double v[10] = {1, 3, 0, 3, 3, /* */ 7, 7, 7, 7, 7};
            bp_tensor *t = bpt_tensor(be, dt, 2, s, v), *o = NULL, *all = NULL;
            BPT_OK(bp_argmax(t, 1, (int32_t[]){1}, false, &o));
            int64_t two = 2;
            bpt_expect_i64("argmax ties", o, BP_I64, 1, &two, (int64_t[]){1, 0});
            BPT_OK(bp_argmax(t, 0, NULL, false, &all));
            bpt_expect_i64("argmax ties over all", all, BP_I64, 0, NULL, (int64_t[]){5});
            bp_tensor_release(t);
            bp_tensor_release(o);
            bp_tensor_release(all);
        }
    }
    bp_context_destroy(ctx);
}

Test(reduce, argmin_ties_pick_the_first_index)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            int64_t s[2] = {5, 2};
            double v[10] = {4, 9, 2, 9, 5, 9, 2, 9, 2, 9};
            bp_tensor *t = bpt_tensor(be, dt, 2, s, v), *o = NULL;
            BPT_OK(bp_argmin(t, 1, (int32_t[]){0}, true, &o));
            int64_t so[2] = {1, 2};
            bpt_expect_i64("argmin ties, axis 0, keepdims", o, BP_I64, 2, so, (int64_t[]){1, 0});
            bp_tensor_release(t);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(reduce, argmax_over_several_axes_indexes_them_in_row_major_order)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        /* (2,3,4): maximum of each [:, j, :] slice placed at known spots */
        double v[24] = {0};
        v[0 * 12 + 0 * 4 + 3] = 9; /* j=0: (i=0,k=3) -> 0*4+3 = 3 */
        v[1 * 12 + 1 * 4 + 2] = 9; /* j=1: (i=1,k=2) -> 1*4+2 = 6 */
        v[1 * 12 + 2 * 4 + 0] = 9; /* j=2: (i=1,k=0) -> 4 */
        v[1 * 12 + 2 * 4 + 1] = 9; /* later tie, ignored */
        bp_tensor *t = bpt_tensor(be, BP_F32, 3, SHAPE3, v), *o = NULL;
        BPT_OK(bp_argmax(t, 2, (int32_t[]){0, -1}, false, &o));
        int64_t three = 3;
        bpt_expect_i64("argmax over {0,-1}", o, BP_I64, 1, &three, (int64_t[]){3, 6, 4});
        bp_tensor_release(t);
        bp_tensor_release(o);
    }
    bp_context_destroy(ctx);
}

/* ---- NaN, empty, rank 0 ----------------------------------------------------------- */

Test(reduce, max_and_min_of_nan_are_nan)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            /* NaN first, in the middle, last */
            int64_t s[2] = {3, 3};
            double v[9] = {NAN, 1, 2, 1, NAN, 2, 1, 2, NAN};
            bp_tensor *t = bpt_tensor(be, dt, 2, s, v), *mx = NULL, *mn = NULL, *sm = NULL;
            BPT_OK(bp_max(t, 1, (int32_t[]){1}, false, &mx));
            BPT_OK(bp_min(t, 1, (int32_t[]){-1}, false, &mn));
            BPT_OK(bp_sum(t, 1, (int32_t[]){1}, false, &sm));
            int64_t three = 3;
            double nan3[3] = {NAN, NAN, NAN};
            bpt_expect("max with NaN", mx, dt, 1, &three, nan3, bpt_exact());
            bpt_expect("min with NaN", mn, dt, 1, &three, nan3, bpt_exact());
            bpt_expect("sum with NaN", sm, dt, 1, &three, nan3, bpt_exact());
            bp_tensor_release(t);
            bp_tensor_release(mx);
            bp_tensor_release(mn);
            bp_tensor_release(sm);
        }
    }
    bp_context_destroy(ctx);
}

Test(reduce, sum_and_prod_over_zero_elements_are_zero_and_one)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            int64_t s[2] = {0, 3}, three = 3;
            bp_tensor *t = bpt_tensor(be, dt, 2, s, NULL), *sm = NULL, *pr = NULL, *all = NULL;
            BPT_OK(bp_sum(t, 1, (int32_t[]){0}, false, &sm));
            BPT_OK(bp_prod(t, 1, (int32_t[]){0}, false, &pr));
            BPT_OK(bp_sum(t, 0, NULL, false, &all));
            bpt_expect("sum over empty axis", sm, dt, 1, &three, (double[]){0, 0, 0}, bpt_exact());
            bpt_expect("prod over empty axis", pr, dt, 1, &three, (double[]){1, 1, 1}, bpt_exact());
            bpt_expect("sum of everything, empty", all, dt, 0, NULL, (double[]){0}, bpt_exact());
            bp_tensor_release(t);
            bp_tensor_release(sm);
            bp_tensor_release(pr);
            bp_tensor_release(all);
        }
    }
    bp_context_destroy(ctx);
}

Test(reduce, max_min_argmax_argmin_over_zero_elements_are_refused)
{
    static const bp_op ops[] = {BP_OP_MAX, BP_OP_MIN, BP_OP_ARGMAX, BP_OP_ARGMIN};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t s[2] = {0, 3};
        bp_tensor *t = bpt_tensor(be, BP_F32, 2, s, NULL);
        for (int k = 0; k < 4; k++) {
            bp_tensor *o = NULL;
            BPT_FAILS(BP_ERR_SHAPE, bp_reduce(ops[k], t, 1, (int32_t[]){0}, false, &o));
            cr_expect_null(o, "%s left *out set", bp_op_name(ops[k]));
            BPT_FAILS(BP_ERR_SHAPE, bp_reduce(ops[k], t, 0, NULL, false, &o));
            cr_expect_null(o);
        }
        bp_tensor_release(t);
    }
    bp_context_destroy(ctx);
}

Test(reduce, max_over_a_nonempty_axis_of_an_empty_tensor_is_empty)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t s[2] = {0, 3}, zero = 0, keep[2] = {0, 1};
        bp_tensor *t = bpt_tensor(be, BP_I32, 2, s, NULL), *o = NULL, *a = NULL;
        BPT_OK(bp_max(t, 1, (int32_t[]){1}, false, &o));
        bpt_expect_meta("max over axis 1 of (0,3)", o, BP_I32, 1, &zero);
        BPT_OK(bp_argmax(t, 1, (int32_t[]){-1}, true, &a));
        bpt_expect_meta("argmax over axis -1 of (0,3), keepdims", a, BP_I64, 2, keep);
        bp_tensor_release(t);
        bp_tensor_release(o);
        bp_tensor_release(a);
    }
    bp_context_destroy(ctx);
}

Test(reduce, rank_zero_reduces_to_itself)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = bpt_scalar(be, BP_F64, -2.5), *s = NULL, *m = NULL, *a = NULL;
        BPT_OK(bp_sum(t, 0, NULL, false, &s));
        BPT_OK(bp_max(t, 0, NULL, true, &m));
        BPT_OK(bp_argmax(t, 0, NULL, false, &a));
        bpt_expect("sum of a scalar", s, BP_F64, 0, NULL, (double[]){-2.5}, bpt_exact());
        bpt_expect("max of a scalar", m, BP_F64, 0, NULL, (double[]){-2.5}, bpt_exact());
        bpt_expect("argmax of a scalar", a, BP_I64, 0, NULL, (double[]){0}, bpt_exact());
        bp_tensor_release(t);
        bp_tensor_release(s);
        bp_tensor_release(m);
        bp_tensor_release(a);
    }
    bp_context_destroy(ctx);
}

Test(reduce, keepdims_keeps_reduced_axes_as_size_one)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        double v[24];
        for (int i = 0; i < 24; i++)
            v[i] = i;
        bp_tensor *t = bpt_tensor(be, BP_I32, 3, SHAPE3, v), *o = NULL;
        BPT_OK(bp_sum(t, 2, (int32_t[]){-1, 0}, true, &o));
        int64_t so[3] = {1, 3, 1};
        /* for each j, the sum over i and k of i*12 + j*4 + k: 32 j + 60 */
        bpt_expect("sum over {-1,0} keepdims", o, BP_I32, 3, so, (double[]){60, 92, 124},
                   bpt_exact());
        bp_tensor_release(t);
        bp_tensor_release(o);
    }
    bp_context_destroy(ctx);
}

/* ---- accuracy on real-valued data ----------------------------------------------- */

Test(reduce, sum_and_mean_of_many_values_are_accurate)
{
    enum { N = 4099 };
    double *x = malloc(N * sizeof *x);
    bpt_fill_random(x, N, 42, -1.0, 3.0);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 2; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            int64_t n = N;
            cf_array xa = bpt_array(dt, 1, &n, x), want;
            double *scale = NULL;
            cr_assert(cf_oracle_reduce(BP_OP_SUM, &xa, 0, NULL, false, &want, &scale, NULL));
            double sum = want.f[0], abs = scale[0]; /* the sum, and the sum of |x| */
            cf_array_free(&want);
            free(scale);
            bp_tensor *t = bpt_tensor_of(be, &xa), *s = NULL, *m = NULL;
            cf_array_free(&xa);
            BPT_OK(bp_sum(t, 0, NULL, false, &s));
            BPT_OK(bp_mean(t, 1, (int32_t[]){0}, false, &m));
            double gs, gm;
            BPT_OK(bp_item_f64(s, &gs));
            BPT_OK(bp_item_f64(m, &gm));
            double tol = (dt == BP_F32 ? 1e-5 : 1e-13) * abs;
            cr_expect(fabs(gs - sum) <= tol, "sum [%s] on %s: expected %.17g, got %.17g",
                      bp_dtype_name(dt), bp_backend_name(be), sum, gs);
            cr_expect(fabs(gm - sum / N) <= tol / N, "mean [%s] on %s: expected %.17g, got %.17g",
                      bp_dtype_name(dt), bp_backend_name(be), sum / N, gm);
            bp_tensor_release(t);
            bp_tensor_release(s);
            bp_tensor_release(m);
        }
    }
    free(x);
    bp_context_destroy(ctx);
}

Test(reduce, logsumexp_is_stable_for_large_values)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            int64_t s[2] = {3, 2}, three = 3;
            double v[6] = {1000, 1000, -1000, -1000, 1000, 0};
            bp_tensor *t = bpt_tensor(be, dt, 2, s, v), *o = NULL;
            BPT_OK(bp_logsumexp(t, 1, (int32_t[]){1}, false, &o));
            double want[3];
            for (int i = 0; i < 3; i++) /* the stored inputs, for bf16's 1000 -> 1000 */
                want[i] = cf_round(dt, v[2 * i]) + (i < 2 ? log(2.0) : 0.0);
            bpt_expect("logsumexp", o, dt, 1, &three, want, bpt_math(dt));
            bp_tensor_release(t);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

/* ---- softmax / log_softmax ---------------------------------------------------------- */

static void check_softmax(bool log_form)
{
    double x[24];
    bpt_fill_random(x, 24, 7, -4.0, 4.0);
    x[5] = 1000; /* stability: a row with a huge value */
    x[6] = 999;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    bp_op op = log_form ? BP_OP_LOG_SOFTMAX : BP_OP_SOFTMAX;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            if (!bpt_supports(be, op, dt))
                continue;
            cf_array xa = bpt_array(dt, 3, SHAPE3, x);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (int32_t axis = -3; axis < 3; axis++) {
                cf_array want;
                cr_assert(log_form ? cf_oracle_log_softmax(&xa, axis, &want, NULL, NULL)
                                   : cf_oracle_softmax(&xa, axis, &want, NULL, NULL));
                bp_tensor *o = NULL;
                BPT_OK(log_form ? bp_log_softmax(t, axis, &o) : bp_softmax(t, axis, &o));
                char what[64];
                snprintf(what, sizeof what, "%s axis %d", bp_op_name(op), axis);
                bpt_tol tol = bpt_math(dt);
                if (dt == BP_F32)
                    tol.rtol = 2e-6; /* x - max rounds in f32 before exp */
                if (log_form && dt == BP_F32)
                    tol.atol = 1e-6; /* x - m - log(s) cancels near 0 */
                if (log_form && dt == BP_F64)
                    tol.atol = 1e-13;
                bpt_expect_array(what, o, &want, tol);
                cf_array_free(&want);
                bp_tensor_release(o);
            }
            cf_array_free(&xa);
            bp_tensor_release(t);
        }
    }
    bp_context_destroy(ctx);
}

Test(reduce, softmax_matches_the_oracle_on_every_axis_for_every_float_dtype)
{
    check_softmax(false);
}

Test(reduce, log_softmax_matches_the_oracle_on_every_axis_for_every_float_dtype)
{
    check_softmax(true);
}

Test(reduce, softmax_rows_sum_to_one_and_survive_huge_inputs)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 2; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            int64_t s[2] = {3, 4};
            double v[12] = {1000, 1001, 1002, 1003, -1000, -1000, -1000, -1000, 0, 1, 2, 3};
            bp_tensor *t = bpt_tensor(be, dt, 2, s, v), *o = NULL, *l = NULL;
            BPT_OK(bp_softmax(t, -1, &o));
            BPT_OK(bp_log_softmax(t, 1, &l));
            double *g = bpt_read(o), *gl = bpt_read(l);
            for (int r = 0; r < 3; r++) {
                double sum = 0;
                for (int c = 0; c < 4; c++) {
                    cr_expect(isfinite(g[r * 4 + c]) && isfinite(gl[r * 4 + c]),
                              "softmax [%s] on %s: row %d not finite", bp_dtype_name(dt),
                              bp_backend_name(be), r);
                    sum += g[r * 4 + c];
                }
                cr_expect(fabs(sum - 1.0) < (dt == BP_F32 ? 1e-6 : 1e-14),
                          "softmax [%s] on %s: row %d sums to %.17g", bp_dtype_name(dt),
                          bp_backend_name(be), r, sum);
            }
            /* rows 0 and 2 are the same up to a shift: same probabilities */
            for (int c = 0; c < 4; c++)
                cr_expect(fabs(g[c] - g[8 + c]) < 1e-6, "softmax is not shift invariant");
            cr_expect(fabs(g[4] - 0.25) < 1e-7, "equal inputs give equal shares");
            bp_tensor_release(t);
            bp_tensor_release(o);
            bp_tensor_release(l);
            free(g);
            free(gl);
        }
    }
    bp_context_destroy(ctx);
}

/* The CPU backends reduce a leading or middle axis a block of columns at a
 * time, taking sums, products and f32 extremes four rows per pass: each
 * output must still see its elements one by one in row-major order, in
 * double, as a per-output loop would (the same bits). Rows of +-2^38..2^40 and
 * of multiples of 2^-14 (a quarter of their ulp) make the double sums depend
 * on the order; 11 and 22
 * reduced rows leave a tail of 3 and 2; a NaN and both zeros test the
 * extremes. */
static double fold(bp_op op, double m, double a)
{
    switch (op) {
    case BP_OP_SUM: return m + a;
    case BP_OP_PROD: return m * a;
    case BP_OP_MAX: return (a > m || a != a) ? a : m;
    default: return (a < m || a != a) ? a : m;
    }
}

Test(reduce, cpu_column_reductions_fold_rows_in_order_bit_for_bit)
{
    enum { A = 2, R = 11, C = 37 };
    static double x[A * R * C];
    for (int a = 0; a < A; a++)
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) {
                double big = ldexp((i + a) % 2 ? -1.0 : 1.0, 40 - (i % 3));
                double v = i % 3 == 0 ? big : (double)((j * 5 + i * 3) % 17 + 1) * 0x1p-14;
                x[(a * R + i) * C + j] = v;
            }
    x[(1 * R + 6) * C + 4] = NAN;
    x[(0 * R + 2) * C + 5] = -0.0, x[(0 * R + 3) * C + 5] = 0.0;
    static const bp_op ops[] = {BP_OP_SUM, BP_OP_PROD, BP_OP_MAX, BP_OP_MIN};
    static const axset sets[] = {{1, {1}}, {2, {0, 1}}};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        if (strcmp(bp_backend_plugin_name(be), "cuda") == 0)
            continue; /* a GPU sums in its own order, within the tolerances */
        for (int d = 0; d < 2; d++) {
            bp_dtype dt = d ? BP_F64 : BP_F32;
            bp_tensor *t = bpt_tensor(be, dt, 3, (const int64_t[]){A, R, C}, x);
            for (size_t k = 0; k < NV(ops); k++)
                for (size_t s = 0; s < NV(sets); s++) {
                    bp_op op = ops[k];
                    int outer = sets[s].n == 1 ? A : 1, rows = sets[s].n == 1 ? R : A * R;
                    bp_tensor *o = NULL;
                    BPT_OK(bp_reduce(op, t, sets[s].n, sets[s].axes, false, &o));
                    double *got = bpt_read(o);
                    for (int a = 0; a < outer; a++)
                        for (int j = 0; j < C; j++) {
                            double m = op == BP_OP_SUM ? 0 : op == BP_OP_PROD ? 1
                                     : op == BP_OP_MAX ? -INFINITY : INFINITY;
                            for (int i = 0; i < rows; i++) {
                                double v = x[(a * R + i) * C + j];
                                m = fold(op, m, d ? v : (double)(float)v);
                            }
                            double want = d ? m : (double)(float)m;
                            double g = got[a * C + j];
                            bool same = (g != g && want != want) ||
                                        (g == want && signbit(g) == signbit(want));
                            cr_expect(same, "%s %s %s over %d axes, output (%d, %d): %.17g, want %.17g",
                                      bp_backend_name(be), bp_dtype_name(dt), bp_op_name(op),
                                      sets[s].n, a, j, g, want);
                        }
                    free(got);
                    bp_tensor_release(o);
                }
            bp_tensor_release(t);
        }
    }
    bp_context_destroy(ctx);
}

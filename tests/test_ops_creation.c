/* Creation ops (full, zeros, ones, arange, eye) and the counter-based random
 * generators: every dtype, every backend, against the oracle (cf_oracle_*;
 * its Philox is written from the text of philox.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

Test(creation, full_zeros_and_ones_for_every_dtype)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            int64_t s[2] = {2, 3};
            bp_tensor *f = NULL, *z = NULL, *o = NULL;
            BPT_OK(bp_full(be, dt, 2, s, -2.75, &f));
            BPT_OK(bp_zeros(be, dt, 2, s, &z));
            BPT_OK(bp_ones(be, dt, 2, s, &o));
            double wf[6], wz[6] = {0}, wo[6];
            for (int i = 0; i < 6; i++) {
                wf[i] = -2.75; /* rounded to dt by the cast rules in bpt_expect */
                wo[i] = 1;
            }
            bpt_expect("full(-2.75)", f, dt, 2, s, wf, bpt_exact());
            bpt_expect("zeros", z, dt, 2, s, wz, bpt_exact());
            bpt_expect("ones", o, dt, 2, s, wo, bpt_exact());
            bp_tensor_release(f);
            bp_tensor_release(z);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(creation, full_converts_the_value_with_the_cast_rules)
{
    struct { bp_dtype dt; double v; double want; } c[] = {
        {BP_I32, NAN, 0},          {BP_U8, 300.0, 255},         {BP_I32, -1e30, INT32_MIN},
        {BP_BOOL, 0.5, 1},         {BP_BOOL, -0.0, 0},          {BP_BOOL, NAN, 1},
        {BP_I8, -1000, -128},      {BP_U8, -3.5, 0},            {BP_I32, -7.9, -7},
        {BP_F16, 1 + 0x1p-11, 1},  {BP_F16, 1e6, INFINITY},     {BP_BF16, 1 + 0x1p-8, 1},
        {BP_F32, NAN, NAN},        {BP_F64, -INFINITY, -INFINITY},
    };
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
            int64_t n = 2;
            bp_tensor *t = NULL;
            BPT_OK(bp_full(be, c[k].dt, 1, &n, c[k].v, &t));
            char what[64];
            snprintf(what, sizeof what, "full(%g)", c[k].v);
            bpt_expect(what, t, c[k].dt, 1, &n, (double[]){c[k].want, c[k].want}, bpt_exact());
            bp_tensor_release(t);
        }
        /* i64 extremes, exact */
        bp_tensor *t = NULL;
        BPT_OK(bp_full(be, BP_I64, 0, NULL, 1e30, &t));
        bpt_expect_i64("full(1e30) i64", t, BP_I64, 0, NULL, (int64_t[]){INT64_MAX});
        bp_tensor_release(t);
        BPT_OK(bp_full(be, BP_I64, 0, NULL, -0x1p63, &t));
        bpt_expect_i64("full(-2^63) i64", t, BP_I64, 0, NULL, (int64_t[]){INT64_MIN});
        bp_tensor_release(t);
    }
    bp_context_destroy(ctx);
}

Test(creation, full_rounds_a_double_value_once_to_f16)
{
    /* 1 + 2^-11 + 2^-40: the nearest f16 is 1 + 2^-10 (via f32 it would be 1) */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = NULL;
        BPT_OK(bp_full(be, BP_F16, 0, NULL, 1 + 0x1p-11 + 0x1p-40, &t));
        bpt_expect("full f16", t, BP_F16, 0, NULL, (double[]){1 + 0x1p-10}, bpt_exact());
        bp_tensor_release(t);
    }
    bp_context_destroy(ctx);
}

Test(creation, full_of_empty_and_rank_zero_shapes)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t s[3] = {3, 0, 2};
        bp_tensor *e = NULL, *r = NULL;
        BPT_OK(bp_full(be, BP_F32, 3, s, 1.0, &e));
        bpt_expect_meta("full (3,0,2)", e, BP_F32, 3, s);
        BPT_OK(bp_zeros(be, BP_I64, 0, NULL, &r));
        bpt_expect("zeros ()", r, BP_I64, 0, NULL, (double[]){0}, bpt_exact());
        bp_tensor_release(e);
        bp_tensor_release(r);
    }
    bp_context_destroy(ctx);
}

/* 2^60 + 2^36 + 1: through a double it loses the 1 and rounds to f32 as a
 * tie, to 2^60; rounded once it is 2^60 + 2^37. */
#define BEYOND_DOUBLE (((int64_t)1 << 60) + ((int64_t)1 << 36) + 1)

Test(creation, full_i64_keeps_every_bit_of_an_int64)
{
    const int64_t v[] = {((int64_t)1 << 53) + 1, INT64_MAX, INT64_MIN, -((int64_t)1 << 53) - 1,
                         BEYOND_DOUBLE};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
            int64_t s[2] = {2, 2};
            bp_tensor *t = NULL;
            BPT_OK(bp_full_i64(be, BP_I64, 2, s, v[k], &t));
            char what[64];
            snprintf(what, sizeof what, "full_i64(%lld)", (long long)v[k]);
            bpt_expect_i64(what, t, BP_I64, 2, s, (int64_t[]){v[k], v[k], v[k], v[k]});
            bp_tensor_release(t);
        }
        /* other dtypes by the cast rules: integers saturate, floats round once */
        bp_tensor *t = NULL;
        BPT_OK(bp_full_i64(be, BP_I32, 0, NULL, INT64_MAX, &t));
        bpt_expect_i64("full_i64(INT64_MAX) i32", t, BP_I32, 0, NULL, (int64_t[]){INT32_MAX});
        bp_tensor_release(t);
        BPT_OK(bp_full_i64(be, BP_U8, 0, NULL, -5, &t));
        bpt_expect_i64("full_i64(-5) u8", t, BP_U8, 0, NULL, (int64_t[]){0});
        bp_tensor_release(t);
        BPT_OK(bp_full_i64(be, BP_F32, 0, NULL, BEYOND_DOUBLE, &t));
        float f;
        BPT_OK(bp_tensor_to_host(t, &f, sizeof f));
        cr_assert_eq(f, 0x1p60f + 0x1p37f, "%s: full_i64(2^60 + 2^36 + 1) f32 is %a, not rounded "
                     "once", bp_backend_name(be), (double)f);
        bp_tensor_release(t);
        int64_t e = 0;
        BPT_OK(bp_full_i64(be, BP_I64, 1, &e, INT64_MAX, &t));
        bpt_expect_meta("full_i64 (0)", t, BP_I64, 1, &e);
        bp_tensor_release(t);
        BPT_FAILS(BP_ERR_DTYPE, bp_full_i64(be, (bp_dtype)99, 0, NULL, 1, &t));
        cr_assert_null(t);
    }
    bp_context_destroy(ctx);
}

/* ---- arange ----------------------------------------------------------------------- */

static void check_arange(bp_dtype dt, double start, double stop, double step, int64_t n)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    cf_array want;
    cr_assert(cf_oracle_arange(dt, start, stop, step, &want));
    cr_assert_eq(want.n, n, "oracle self-check: arange(%g, %g, %g) has %lld elements", start,
                 stop, step, (long long)want.n);
    BPT_FOR_EACH_BACKEND(ctx, be) {
        if (!bpt_supports(be, BP_OP_ARANGE, dt))
            continue;
        bp_tensor *t = NULL;
        BPT_OK(bp_arange(be, dt, start, stop, step, &t));
        char what[96];
        snprintf(what, sizeof what, "arange(%g, %g, %g)", start, stop, step);
        bpt_expect_array(what, t, &want, bpt_exact());
        bp_tensor_release(t);
    }
    cf_array_free(&want);
    bp_context_destroy(ctx);
}

Test(creation, arange_counts_up_for_every_numeric_dtype)
{
    for (int d = 0; d < 8; d++)
        check_arange(cf_numeric_dtypes[d], 0, 5, 1, 5);
    check_arange(BP_F32, 1, 2, 0.25, 4);
    check_arange(BP_F64, -3, 3.5, 1.5, 5);
    check_arange(BP_I64, -10, 10, 3, 7);
}

Test(creation, arange_with_a_negative_step_counts_down)
{
    check_arange(BP_F32, 5, 0, -1.5, 4); /* 5 3.5 2 0.5 */
    check_arange(BP_I32, 10, -3, -4, 4); /* 10 6 2 -2 */
    check_arange(BP_F16, 1, -1, -0.5, 4);
}

Test(creation, arange_that_never_starts_is_empty)
{
    check_arange(BP_F32, 5, 0, 1, 0);
    check_arange(BP_I32, 0, 5, -1, 0);
    check_arange(BP_F64, 3, 3, 1, 0);
}

Test(creation, arange_with_a_fractional_span_rounds_the_count_up)
{
    check_arange(BP_F64, 0, 1, 0.3, 4); /* 0 0.3 0.6 0.9 */
    check_arange(BP_I64, 0, 10, 4, 3);  /* 0 4 8 */
}

/* arange_i64(start, stop, step) on every backend is want[0..n) in int64. */
static void check_arange_i64(int64_t start, int64_t stop, int64_t step, int64_t n,
                             const int64_t *want)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = NULL;
        bp_status st = bp_arange_i64(be, BP_I64, start, stop, step, &t);
        cr_assert_eq(st, BP_OK, "%s: arange_i64(%lld, %lld, %lld): %s: %s", bp_backend_name(be),
                     (long long)start, (long long)stop, (long long)step, bp_status_string(st),
                     bp_last_error());
        char what[128];
        snprintf(what, sizeof what, "arange_i64(%lld, %lld, %lld)", (long long)start,
                 (long long)stop, (long long)step);
        if (n == 0)
            bpt_expect_meta(what, t, BP_I64, 1, &n);
        else
            bpt_expect_i64(what, t, BP_I64, 1, &n, want);
        bp_tensor_release(t);
    }
    bp_context_destroy(ctx);
}

#define P53 ((int64_t)1 << 53)
#define P62 ((int64_t)1 << 62)

Test(creation, arange_i64_is_exact_above_2_pow_53)
{
    check_arange_i64(P53 - 2, P53 + 3, 1, 5, (int64_t[]){P53 - 2, P53 - 1, P53, P53 + 1, P53 + 2});
    check_arange_i64(INT64_MAX - 4, INT64_MAX, 1, 4,
                     (int64_t[]){INT64_MAX - 4, INT64_MAX - 3, INT64_MAX - 2, INT64_MAX - 1});
    check_arange_i64(INT64_MIN, INT64_MIN + 10, 3, 4,
                     (int64_t[]){INT64_MIN, INT64_MIN + 3, INT64_MIN + 6, INT64_MIN + 9});
    /* steps whose products overflow int64 on the way to values that do not */
    check_arange_i64(INT64_MIN, INT64_MAX, P62, 4, (int64_t[]){INT64_MIN, -P62, 0, P62});
    check_arange_i64(-(P53 + 1), P53 + 2, P53 + 1, 3, (int64_t[]){-(P53 + 1), 0, P53 + 1});
    /* within 2^53 every way (the double kernel) */
    check_arange_i64(-P53, P53, P53, 2, (int64_t[]){-P53, 0});
    check_arange_i64(-10, 10, 3, 7, (int64_t[]){-10, -7, -4, -1, 2, 5, 8});
}

Test(creation, arange_i64_counts_down_with_a_negative_step)
{
    check_arange_i64(10, -3, -4, 4, (int64_t[]){10, 6, 2, -2});
    check_arange_i64(INT64_MAX, INT64_MIN, INT64_MIN, 2, (int64_t[]){INT64_MAX, -1});
    check_arange_i64(INT64_MAX, INT64_MAX - 7, -3, 3,
                     (int64_t[]){INT64_MAX, INT64_MAX - 3, INT64_MAX - 6});
    check_arange_i64(P53 + 3, P53 - 1, -2, 2, (int64_t[]){P53 + 3, P53 + 1});
}

Test(creation, arange_i64_of_an_empty_range_is_empty)
{
    check_arange_i64(5, 0, 1, 0, NULL);
    check_arange_i64(0, 5, -1, 0, NULL);
    check_arange_i64(3, 3, 1, 0, NULL);
    check_arange_i64(INT64_MAX, INT64_MIN, 1, 0, NULL);
    check_arange_i64(INT64_MIN, INT64_MAX, INT64_MIN, 0, NULL);
}

Test(creation, arange_i64_refuses_a_zero_step_bool_and_more_elements_than_fit)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    bp_tensor *t = (bp_tensor *)&t;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_arange_i64(be, BP_I64, 0, 5, 0, &t));
    cr_assert_null(t);
    cr_assert(strstr(bp_last_error(), "step is 0"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_DTYPE, bp_arange_i64(be, BP_BOOL, 0, 2, 1, &t));
    BPT_FAILS(BP_ERR_SHAPE, bp_arange_i64(be, BP_I64, INT64_MIN, INT64_MAX, 1, &t));
    cr_assert(strstr(bp_last_error(), "18446744073709551615 elements"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_SHAPE, bp_arange_i64(be, BP_I8, 0, INT64_MAX, 2, &t));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_arange_i64(NULL, BP_I64, 0, 5, 1, &t));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_arange_i64(be, BP_I64, 0, 5, 1, NULL));
    bp_context_destroy(ctx);
}

Test(creation, arange_i64_converts_to_every_numeric_dtype_rounding_once)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        /* within 2^53: the same values as bp_arange */
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            bp_tensor *a = NULL, *b = NULL;
            BPT_OK(bp_arange_i64(be, dt, -3, 9, 2, &a));
            BPT_OK(bp_arange(be, dt, -3, 9, 2, &b));
            unsigned char x[64], y[64];
            BPT_OK(bp_tensor_to_host(a, x, bp_tensor_nbytes(a)));
            BPT_OK(bp_tensor_to_host(b, y, bp_tensor_nbytes(b)));
            cr_assert(bp_tensor_numel(a) == 6 && memcmp(x, y, bp_tensor_nbytes(a)) == 0,
                      "%s: arange_i64(-3, 9, 2) %s differs from arange", bp_backend_name(be),
                      bp_dtype_name(dt));
            bp_tensor_release(a);
            bp_tensor_release(b);
        }
        /* beyond: rounded once from the integer, saturated for narrow integers */
        bp_tensor *t = NULL;
        BPT_OK(bp_arange_i64(be, BP_F32, BEYOND_DOUBLE, BEYOND_DOUBLE + 2, 1, &t));
        float f[2];
        BPT_OK(bp_tensor_to_host(t, f, sizeof f));
        cr_assert(f[0] == (float)BEYOND_DOUBLE && f[0] == 0x1p60f + 0x1p37f,
                  "%s: arange_i64 f32 gives %a, not rounded once", bp_backend_name(be),
                  (double)f[0]);
        bp_tensor_release(t);
        BPT_OK(bp_arange_i64(be, BP_I32, INT64_MAX - 1, INT64_MAX, 1, &t));
        int64_t one = 1;
        bpt_expect_i64("arange_i64 i32", t, BP_I32, 1, &one, (int64_t[]){INT32_MAX});
        bp_tensor_release(t);
    }
    bp_context_destroy(ctx);
}

/* ---- eye -------------------------------------------------------------------------- */

Test(creation, eye_puts_ones_on_the_main_diagonal_for_every_dtype)
{
    int64_t dims[][2] = {{3, 3}, {2, 4}, {4, 2}, {1, 1}, {0, 3}};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
                int64_t r = dims[k][0], c = dims[k][1];
                cf_array want;
                cr_assert(cf_oracle_eye(dt, r, c, &want));
                bp_tensor *t = NULL;
                BPT_OK(bp_eye(be, dt, r, c, &t));
                char what[64];
                snprintf(what, sizeof what, "eye(%lld, %lld)", (long long)r, (long long)c);
                bpt_expect_meta(what, t, dt, 2, dims[k]);
                bpt_expect_array(what, t, &want, bpt_exact());
                cf_array_free(&want);
                bp_tensor_release(t);
            }
        }
    }
    bp_context_destroy(ctx);
}

/* ---- random ------------------------------------------------------------------------ */

static double *draw(bp_backend *be, bool normal, bp_dtype dt, int64_t n, uint64_t seed,
                    uint64_t offset, double p0, double p1)
{
    bp_tensor *t = NULL;
    if (normal)
        BPT_OK(bp_random_normal(be, dt, 1, &n, seed, offset, p0, p1, &t));
    else
        BPT_OK(bp_random_uniform(be, dt, 1, &n, seed, offset, p0, p1, &t));
    bpt_expect_meta(normal ? "random_normal" : "random_uniform", t, dt, 1, &n);
    double *v = bpt_read(t);
    bp_tensor_release(t);
    return v;
}

Test(creation, random_with_the_same_key_gives_identical_values)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            for (int normal = 0; normal < 2; normal++) {
                double *a = draw(be, normal, dt, 1000, 1234, 77, 0, 1);
                double *b = draw(be, normal, dt, 1000, 1234, 77, 0, 1);
                double *c = draw(be, normal, dt, 1000, 1235, 77, 0, 1);
                int same_c = 0;
                for (int i = 0; i < 1000; i++) {
                    cr_assert_eq(a[i], b[i], "%s [%s] on %s: draw %d differs between equal keys",
                                 normal ? "normal" : "uniform", bp_dtype_name(dt),
                                 bp_backend_name(be), i);
                    same_c += a[i] == c[i];
                }
                cr_expect(same_c < 100, "another seed gave %d equal values of 1000", same_c);
                free(a);
                free(b);
                free(c);
            }
        }
    }
    bp_context_destroy(ctx);
}

Test(creation, random_offset_shifts_the_stream)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int normal = 0; normal < 2; normal++) {
            for (int k = 1; k <= 7; k += 2) { /* includes offsets not on a block of 4 */
                double *longer = draw(be, normal, BP_F64, 64 + k, 99, 0, -2, 3);
                double *shifted = draw(be, normal, BP_F64, 64, 99, (uint64_t)k, -2, 3);
                for (int i = 0; i < 64; i++)
                    cr_assert_eq(shifted[i], longer[i + k],
                                 "%s on %s: offset %d element %d is %.17g, the longer draw has %.17g",
                                 normal ? "normal" : "uniform", bp_backend_name(be), k, i,
                                 shifted[i], longer[i + k]);
                free(longer);
                free(shifted);
            }
        }
    }
    bp_context_destroy(ctx);
}

Test(creation, random_values_follow_the_philox_spec)
{
    /* philox.h: element i uses stream position offset + i; the double value is
     * rounded to the dtype. */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    int64_t n = 257;
    uint64_t seed = 0xDEADBEEFCAFEull, off = 5;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            cf_array wu, wn;
            cr_assert(cf_oracle_random_uniform(dt, 1, &n, seed, off, -1.5, 4.0, &wu));
            cr_assert(cf_oracle_random_normal(dt, 1, &n, seed, off, 0.25, 2.0, &wn));
            bp_tensor *u = NULL, *g = NULL;
            BPT_OK(bp_random_uniform(be, dt, 1, &n, seed, off, -1.5, 4.0, &u));
            BPT_OK(bp_random_normal(be, dt, 1, &n, seed, off, 0.25, 2.0, &g));
            bpt_tol tu = bpt_exact(), tn = bpt_math(dt);
            if (dt == BP_F64)
                tu = (bpt_tol){1e-15, 0, 0};
            if (dt == BP_F16 || dt == BP_BF16)
                tu.half_ulps = 1; /* double rounding of the affine map is allowed */
            bpt_expect_array("random_uniform", u, &wu, tu);
            bpt_expect_array("random_normal", g, &wn, tn);
            cf_array_free(&wu);
            cf_array_free(&wn);
            bp_tensor_release(u);
            bp_tensor_release(g);
        }
    }
    bp_context_destroy(ctx);
}

Test(creation, random_uniform_stays_in_low_high)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    enum { N = 100000 };
    BPT_FOR_EACH_BACKEND(ctx, be) {
        struct { bp_dtype dt; double lo, hi; } c[] = {
            {BP_F64, -3, 7}, {BP_F32, 0, 1}, {BP_F32, -1, 1}, {BP_F64, 0, 1e-3},
        };
        for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
            double *v = draw(be, false, c[k].dt, N, 2024, 0, c[k].lo, c[k].hi);
            double mn = INFINITY, mx = -INFINITY, sum = 0;
            for (int i = 0; i < N; i++) {
                cr_assert(v[i] >= c[k].lo && v[i] < c[k].hi,
                          "uniform [%s] on %s: element %d = %.17g outside [%g, %g)",
                          bp_dtype_name(c[k].dt), bp_backend_name(be), i, v[i], c[k].lo, c[k].hi);
                mn = fmin(mn, v[i]);
                mx = fmax(mx, v[i]);
                sum += v[i];
            }
            double w = c[k].hi - c[k].lo;
            cr_expect(mn < c[k].lo + 1e-3 * w && mx > c[k].hi - 1e-3 * w,
                      "uniform does not cover the range: [%g, %g]", mn, mx);
            cr_expect(fabs(sum / N - (c[k].lo + c[k].hi) / 2) < 0.01 * w, "uniform mean %g", sum / N);
            free(v);
        }
    }
    bp_context_destroy(ctx);
}

Test(creation, random_normal_has_the_requested_mean_and_stddev)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    enum { N = 100000 };
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 2; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            double *v = draw(be, true, dt, N, 31337, 1000, 10.0, 2.0);
            double s = 0, s2 = 0;
            for (int i = 0; i < N; i++)
                s += v[i];
            double mean = s / N;
            for (int i = 0; i < N; i++)
                s2 += (v[i] - mean) * (v[i] - mean);
            double sd = sqrt(s2 / (N - 1));
            cr_expect(fabs(mean - 10.0) < 0.01 * 10.0, "normal [%s] on %s: mean %g, wanted 10",
                      bp_dtype_name(dt), bp_backend_name(be), mean);
            cr_expect(fabs(sd - 2.0) < 0.01 * 2.0, "normal [%s] on %s: stddev %g, wanted 2",
                      bp_dtype_name(dt), bp_backend_name(be), sd);
            free(v);
        }
    }
    bp_context_destroy(ctx);
}

Test(creation, random_of_an_empty_shape_is_empty)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t s[2] = {0, 4};
        bp_tensor *u = NULL, *g = NULL;
        BPT_OK(bp_random_uniform(be, BP_F32, 2, s, 1, 0, 0, 1, &u));
        BPT_OK(bp_random_normal(be, BP_F64, 2, s, 1, 0, 0, 1, &g));
        bpt_expect_meta("random_uniform (0,4)", u, BP_F32, 2, s);
        bpt_expect_meta("random_normal (0,4)", g, BP_F64, 2, s);
        bp_tensor_release(u);
        bp_tensor_release(g);
    }
    bp_context_destroy(ctx);
}

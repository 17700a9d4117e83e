/* Unary ops (ops.h bp_unary): every op, every dtype it accepts, every backend,
 * against the double-precision oracle (cf_oracle_unary). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

#define NV(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* Apply op to xs (rank 1) for every dtype in dts on every backend; compare
 * with the oracle applied to the inputs as stored in that dtype. */
static void check_unary(bp_op op, const bp_dtype *dts, int ndt, const double *xs, int64_t n,
                        bool exact, double f32_atol)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < ndt; d++) {
            bp_dtype dt = dts[d];
            if (!bpt_supports(be, op, dt))
                continue;
            cf_array x = bpt_array(dt, 1, &n, xs), want;
            cr_assert(cf_oracle_unary(op, &x, &want));
            bp_tensor *t = bpt_tensor_of(be, &x), *y = NULL;
            BPT_OK(bp_unary(op, t, &y));
            bpt_tol tol = exact ? bpt_exact() : bpt_math(dt);
            if (!exact && dt == BP_F32 && f32_atol > tol.atol)
                tol.atol = f32_atol;
            bpt_expect_array(bp_op_name(op), y, &want, tol);
            bp_tensor_release(t);
            bp_tensor_release(y);
            cf_array_free(&x);
            cf_array_free(&want);
        }
    }
    bp_context_destroy(ctx);
}

#define FLOATS cf_float_dtypes, CF_COUNT(cf_float_dtypes)

/* ---- transcendental float ops ----------------------------------------------- */

Test(unary, exp_matches_the_oracle_for_every_float_dtype)
{
    static const double xs[] = {-10, -1, -0.5, 0, 0.25, 1, 2.5, 10};
    check_unary(BP_OP_EXP, FLOATS, xs, NV(xs), false, 0);
}

Test(unary, log_matches_the_oracle_for_every_float_dtype)
{
    static const double xs[] = {1e-3, 0.1, 0.5, 1, 2, 10, 1000};
    check_unary(BP_OP_LOG, FLOATS, xs, NV(xs), false, 0);
}

Test(unary, sqrt_matches_the_oracle_for_every_float_dtype)
{
    static const double xs[] = {0, 0.25, 1, 2, 3, 100, 12345};
    check_unary(BP_OP_SQRT, FLOATS, xs, NV(xs), false, 0);
}

Test(unary, rsqrt_matches_the_oracle_for_every_float_dtype)
{
    static const double xs[] = {1e-4, 0.25, 1, 2, 3, 100};
    check_unary(BP_OP_RSQRT, FLOATS, xs, NV(xs), false, 0);
}

Test(unary, reciprocal_matches_the_oracle_for_every_float_dtype)
{
    static const double xs[] = {1e-3, 0.25, -1, 3, 7, -1000};
    check_unary(BP_OP_RECIPROCAL, FLOATS, xs, NV(xs), false, 0);
}

Test(unary, sin_matches_the_oracle_for_every_float_dtype)
{
    static const double xs[] = {-3, -1, -0.5, 0, 0.5, 1, 2, 3};
    check_unary(BP_OP_SIN, FLOATS, xs, NV(xs), false, 0);
}

Test(unary, cos_matches_the_oracle_for_every_float_dtype)
{
    static const double xs[] = {-3, -1, -0.5, 0, 0.5, 1, 2, 3};
    check_unary(BP_OP_COS, FLOATS, xs, NV(xs), false, 0);
}

Test(unary, tan_matches_the_oracle_for_every_float_dtype)
{
    static const double xs[] = {-1.2, -0.5, 0, 0.3, 1, 1.2};
    check_unary(BP_OP_TAN, FLOATS, xs, NV(xs), false, 0);
}

Test(unary, tanh_matches_the_oracle_for_every_float_dtype)
{
    static const double xs[] = {-5, -1, -0.25, 0, 0.1, 0.5, 2, 20};
    check_unary(BP_OP_TANH, FLOATS, xs, NV(xs), false, 0);
}

Test(unary, sigmoid_matches_the_oracle_for_every_float_dtype)
{
    static const double xs[] = {-20, -3, -1, 0, 0.5, 2, 20};
    check_unary(BP_OP_SIGMOID, FLOATS, xs, NV(xs), false, 0);
}

Test(unary, gelu_is_the_exact_erf_form_for_every_float_dtype)
{
    /* ONNX Gelu, approximate = "none": x/2 (1 + erf(x / sqrt 2)). The small
     * absolute term for f32 covers the cancellation in 1 + erf near x = -3. */
    static const double xs[] = {-3, -1.5, -0.5, 0, 0.5, 1, 2, 3};
    check_unary(BP_OP_GELU, FLOATS, xs, NV(xs), false, 2e-7);
}

Test(unary, erf_matches_the_oracle_for_every_float_dtype)
{
    static const double xs[] = {-3, -1, -0.5, -0.1, 0, 0.1, 0.5, 1, 2};
    check_unary(BP_OP_ERF, FLOATS, xs, NV(xs), false, 0);
}

/* ---- exact float ops ------------------------------------------------------- */

Test(unary, floor_is_exact_for_every_float_dtype)
{
    static const double xs[] = {-3.7, -2.5, -1, -0.5, 0, 0.4, 1.5, 2.5, 3.7, 1000.25};
    check_unary(BP_OP_FLOOR, FLOATS, xs, NV(xs), true, 0);
}

Test(unary, ceil_is_exact_for_every_float_dtype)
{
    static const double xs[] = {-3.7, -2.5, -1, -0.5, 0, 0.4, 1.5, 2.5, 3.7, 1000.25};
    check_unary(BP_OP_CEIL, FLOATS, xs, NV(xs), true, 0);
}

Test(unary, round_is_half_to_even_for_every_float_dtype)
{
    static const double xs[] = {0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 0.25, 0.75, -3.75, 7, 100.5};
    check_unary(BP_OP_ROUND, FLOATS, xs, NV(xs), true, 0);
    /* the spec's examples, spelled out */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_F32, 4, (double[]){0.5, 1.5, 2.5, -0.5}), *y = NULL;
        BPT_OK(bp_round(x, &y));
        int64_t n = 4;
        bpt_expect("round", y, BP_F32, 1, &n, (double[]){0, 2, 2, -0.0}, bpt_exact());
        bpt_expect_signbits("round(-0.5) is -0", y, (int[]){0, 0, 0, 1});
        bp_tensor_release(x);
        bp_tensor_release(y);
    }
    bp_context_destroy(ctx);
}

Test(unary, round_near_half_does_not_round_the_wrong_way)
{
    /* the float just below 0.5 rounds to 0; the float just above 2.5 rounds to 3;
     * 2^23 + 1 (odd, no fraction) stays */
    double xs[] = {nextafter(0.5, 0.0), nextafter(2.5, 3.0), 8388609.0, -8388609.0};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 2; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            double in[4], want[4];
            for (int i = 0; i < 4; i++) {
                in[i] = dt == BP_F32 ? (double)(float)xs[i] : xs[i];
                if (dt == BP_F32 && i < 2)
                    in[i] = (double)nextafterf((float)(i == 0 ? 0.5 : 2.5), i == 0 ? 0.0f : 3.0f);
                want[i] = cf_unary_f(BP_OP_ROUND, in[i]);
            }
            bp_tensor *x = bpt_vec(be, dt, 4, in), *y = NULL;
            BPT_OK(bp_round(x, &y));
            int64_t n = 4;
            bpt_expect("round", y, dt, 1, &n, want, bpt_exact());
            bp_tensor_release(x);
            bp_tensor_release(y);
        }
    }
    bp_context_destroy(ctx);
}

/* ---- numeric ops on floats and integers -------------------------------------- */

Test(unary, neg_abs_sign_relu_are_exact_on_floats)
{
    static const double xs[] = {-1000.5, -2.5, -1, -0.25, 0, 0.25, 1, 3, 65000};
    check_unary(BP_OP_NEG, FLOATS, xs, NV(xs), true, 0);
    check_unary(BP_OP_ABS, FLOATS, xs, NV(xs), true, 0);
    check_unary(BP_OP_SIGN, FLOATS, xs, NV(xs), true, 0);
    check_unary(BP_OP_RELU, FLOATS, xs, NV(xs), true, 0);
}

/* Values between the dtype's own edges (cf_int_edges adds lo, lo+1, hi-1, hi). */
static const int64_t edge_cands[] = {-100, -2, -1, 0, 1, 2, 100};

static void check_int_unary(bp_op op)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_int_dtypes[d];
            if (!bpt_supports(be, op, dt))
                continue;
            int64_t xs[16];
            int64_t n = cf_int_edges(dt, edge_cands, sizeof edge_cands / sizeof edge_cands[0], xs);
            cf_array x = bpt_array_i64(dt, 1, &n, xs), want;
            cr_assert(cf_oracle_unary(op, &x, &want));
            bp_tensor *t = bpt_tensor_of(be, &x), *y = NULL;
            BPT_OK(bp_unary(op, t, &y));
            bpt_expect_array(bp_op_name(op), y, &want, bpt_exact());
            bp_tensor_release(t);
            bp_tensor_release(y);
            cf_array_free(&x);
            cf_array_free(&want);
        }
    }
    bp_context_destroy(ctx);
}

Test(unary, neg_of_integers_wraps_so_neg_of_min_is_min)
{
    check_int_unary(BP_OP_NEG);
}

Test(unary, abs_of_integers_wraps_so_abs_of_min_is_min)
{
    check_int_unary(BP_OP_ABS);
}

Test(unary, sign_of_integers_is_minus_one_zero_or_one)
{
    check_int_unary(BP_OP_SIGN);
}

Test(unary, relu_of_integers_clamps_negatives_to_zero)
{
    check_int_unary(BP_OP_RELU);
}

/* ---- bool ------------------------------------------------------------------- */

Test(unary, logical_not_flips_bools)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t shape[2] = {2, 2};
        bp_tensor *x = bpt_tensor(be, BP_BOOL, 2, shape, (double[]){1, 0, 0, 1}), *y = NULL;
        BPT_OK(bp_logical_not(x, &y));
        bpt_expect("logical_not", y, BP_BOOL, 2, shape, (double[]){0, 1, 1, 0}, bpt_exact());
        bp_tensor_release(x);
        bp_tensor_release(y);
    }
    bp_context_destroy(ctx);
}

/* ---- isnan / isinf ------------------------------------------------------------ */

Test(unary, isnan_and_isinf_give_bools_for_every_float_dtype)
{
    /* 1e38 overflows f16 to inf: the oracle sees the stored value */
    double xs[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1, 65504, 1e38};
    int64_t n = NV(xs);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            cf_array x = bpt_array(dt, 1, &n, xs), wn, wi;
            cr_assert(cf_oracle_unary(BP_OP_ISNAN, &x, &wn));
            cr_assert(cf_oracle_unary(BP_OP_ISINF, &x, &wi));
            bp_tensor *t = bpt_tensor_of(be, &x), *a = NULL, *b = NULL;
            BPT_OK(bp_isnan(t, &a));
            BPT_OK(bp_isinf(t, &b));
            bpt_expect_array("isnan", a, &wn, bpt_exact());
            bpt_expect_array("isinf", b, &wi, bpt_exact());
            cf_array_free(&x);
            cf_array_free(&wn);
            cf_array_free(&wi);
            bp_tensor_release(t);
            bp_tensor_release(a);
            bp_tensor_release(b);
        }
    }
    bp_context_destroy(ctx);
}

/* ---- NaN / Inf / -0 ------------------------------------------------------------ */

Test(unary, nan_propagates_through_every_float_op)
{
    static const bp_op ops[] = {BP_OP_NEG,   BP_OP_ABS,   BP_OP_SIGN,  BP_OP_EXP,
                                BP_OP_LOG,   BP_OP_SQRT,  BP_OP_RSQRT, BP_OP_RECIPROCAL,
                                BP_OP_SIN,   BP_OP_COS,   BP_OP_TAN,   BP_OP_TANH,
                                BP_OP_SIGMOID, BP_OP_GELU, BP_OP_ERF,  BP_OP_FLOOR,
                                BP_OP_CEIL,  BP_OP_ROUND};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            bp_tensor *x = bpt_vec(be, dt, 2, (double[]){NAN, 1.0});
            for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
                if (!bpt_supports(be, ops[k], dt))
                    continue;
                bp_tensor *y = NULL;
                BPT_OK(bp_unary(ops[k], x, &y));
                double *g = bpt_read(y);
                cr_expect(isnan(g[0]), "%s(NaN) [%s] on %s gave %g, wanted NaN",
                          bp_op_name(ops[k]), bp_dtype_name(dt), bp_backend_name(be), g[0]);
                free(g);
                bp_tensor_release(y);
            }
            bp_tensor_release(x);
        }
    }
    bp_context_destroy(ctx);
}

Test(unary, relu_of_nan_is_nan)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            bp_tensor *x = bpt_scalar(be, dt, NAN), *y = NULL;
            BPT_OK(bp_relu(x, &y));
            bpt_expect("relu", y, dt, 0, NULL, (double[]){NAN}, bpt_exact());
            bp_tensor_release(x);
            bp_tensor_release(y);
        }
    }
    bp_context_destroy(ctx);
}

Test(unary, infinities_give_the_ieee_limits)
{
    struct { bp_op op; double in, out; } cases[] = {
        {BP_OP_EXP, INFINITY, INFINITY},      {BP_OP_EXP, -INFINITY, 0},
        {BP_OP_LOG, INFINITY, INFINITY},      {BP_OP_LOG, 0, -INFINITY},
        {BP_OP_LOG, -1, NAN},                 {BP_OP_SQRT, -1, NAN},
        {BP_OP_SQRT, INFINITY, INFINITY},     {BP_OP_RSQRT, 0, INFINITY},
        {BP_OP_RSQRT, INFINITY, 0},           {BP_OP_RECIPROCAL, 0, INFINITY},
        {BP_OP_RECIPROCAL, -INFINITY, -0.0},  {BP_OP_TANH, INFINITY, 1},
        {BP_OP_TANH, -INFINITY, -1},          {BP_OP_SIGMOID, INFINITY, 1},
        {BP_OP_SIGMOID, -INFINITY, 0},        {BP_OP_ERF, INFINITY, 1},
        {BP_OP_ERF, -INFINITY, -1},           {BP_OP_GELU, INFINITY, INFINITY},
        {BP_OP_SIN, INFINITY, NAN},           {BP_OP_FLOOR, -INFINITY, -INFINITY},
        {BP_OP_CEIL, INFINITY, INFINITY},     {BP_OP_ROUND, -INFINITY, -INFINITY},
        {BP_OP_NEG, INFINITY, -INFINITY},     {BP_OP_ABS, -INFINITY, INFINITY},
        {BP_OP_SIGN, -INFINITY, -1},          {BP_OP_RELU, -INFINITY, 0},
        {BP_OP_RELU, INFINITY, INFINITY},
    };
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
                if (!bpt_supports(be, cases[k].op, dt))
                    continue;
                bp_tensor *x = bpt_scalar(be, dt, cases[k].in), *y = NULL;
                BPT_OK(bp_unary(cases[k].op, x, &y));
                char what[64];
                snprintf(what, sizeof what, "%s(%g)", bp_op_name(cases[k].op), cases[k].in);
                bpt_expect(what, y, dt, 0, NULL, &cases[k].out, bpt_exact());
                bp_tensor_release(x);
                bp_tensor_release(y);
            }
        }
    }
    bp_context_destroy(ctx);
}

Test(unary, negative_zero_keeps_its_sign_where_ieee_says_so)
{
    /* neg(0) = -0, neg(-0) = +0, abs(-0) = +0, floor(-0) = -0, ceil(-0.5) = -0,
     * round(-0.25) = -0, sqrt(-0) = -0, reciprocal(-0) = -inf */
    struct { bp_op op; double in; double out; int neg; } cases[] = {
        {BP_OP_NEG, 0.0, 0.0, 1},       {BP_OP_NEG, -0.0, 0.0, 0},
        {BP_OP_ABS, -0.0, 0.0, 0},      {BP_OP_FLOOR, -0.0, 0.0, 1},
        {BP_OP_CEIL, -0.5, 0.0, 1},     {BP_OP_ROUND, -0.25, 0.0, 1},
        {BP_OP_SQRT, -0.0, 0.0, 1},     {BP_OP_RECIPROCAL, -0.0, -INFINITY, 1},
    };
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
                bp_tensor *x = bpt_scalar(be, dt, cases[k].in), *y = NULL;
                BPT_OK(bp_unary(cases[k].op, x, &y));
                char what[64];
                snprintf(what, sizeof what, "%s(%s%g)", bp_op_name(cases[k].op),
                         signbit(cases[k].in) && cases[k].in == 0 ? "-" : "", cases[k].in);
                bpt_expect(what, y, dt, 0, NULL, &cases[k].out, bpt_exact());
                bpt_expect_signbits(what, y, &cases[k].neg);
                bp_tensor_release(x);
                bp_tensor_release(y);
            }
        }
    }
    bp_context_destroy(ctx);
}

/* ---- shapes ------------------------------------------------------------------ */

Test(unary, empty_tensors_give_empty_results_of_the_same_shape)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t shape[2] = {0, 3}, shape2[3] = {2, 0, 4};
        bp_tensor *x = bpt_tensor(be, BP_F32, 2, shape, NULL), *y = NULL;
        BPT_OK(bp_exp(x, &y));
        bpt_expect_meta("exp of (0,3)", y, BP_F32, 2, shape);
        bp_tensor *xi = bpt_tensor(be, BP_I32, 3, shape2, NULL), *yi = NULL;
        BPT_OK(bp_neg(xi, &yi));
        bpt_expect_meta("neg of (2,0,4)", yi, BP_I32, 3, shape2);
        bp_tensor *z = NULL;
        BPT_OK(bp_isnan(x, &z));
        bpt_expect_meta("isnan of (0,3)", z, BP_BOOL, 2, shape);
        bp_tensor_release(x);
        bp_tensor_release(y);
        bp_tensor_release(xi);
        bp_tensor_release(yi);
        bp_tensor_release(z);
    }
    bp_context_destroy(ctx);
}

Test(unary, rank_zero_stays_rank_zero)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_scalar(be, BP_F64, 2.0), *y = NULL;
        BPT_OK(bp_sqrt(x, &y));
        bpt_expect("sqrt of a scalar", y, BP_F64, 0, NULL, (double[]){sqrt(2.0)}, bpt_math(BP_F64));
        bp_tensor *xi = bpt_scalar(be, BP_I8, -5), *yi = NULL;
        BPT_OK(bp_abs(xi, &yi));
        bpt_expect("abs of a scalar", yi, BP_I8, 0, NULL, (double[]){5}, bpt_exact());
        bp_tensor_release(x);
        bp_tensor_release(y);
        bp_tensor_release(xi);
        bp_tensor_release(yi);
    }
    bp_context_destroy(ctx);
}

Test(unary, rank_three_keeps_shape_and_row_major_order)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t shape[3] = {2, 3, 4};
        double xs[24], want[24];
        for (int i = 0; i < 24; i++) {
            xs[i] = i - 11.5;
            want[i] = -xs[i];
        }
        bp_tensor *x = bpt_tensor(be, BP_F32, 3, shape, xs), *y = NULL;
        BPT_OK(bp_neg(x, &y));
        bpt_expect("neg (2,3,4)", y, BP_F32, 3, shape, want, bpt_exact());
        bp_tensor_release(x);
        bp_tensor_release(y);
    }
    bp_context_destroy(ctx);
}

Test(unary, named_functions_equal_bp_unary)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_F64, 3, (double[]){0.5, 1, 2}), *a = NULL, *b = NULL;
        BPT_OK(bp_tanh(x, &a));
        BPT_OK(bp_unary(BP_OP_TANH, x, &b));
        double *ga = bpt_read(a), *gb = bpt_read(b);
        for (int i = 0; i < 3; i++)
            cr_expect_eq(ga[i], gb[i], "bp_tanh and bp_unary(TANH) differ at %d on %s", i,
                         bp_backend_name(be));
        free(ga);
        free(gb);
        bp_tensor_release(x);
        bp_tensor_release(a);
        bp_tensor_release(b);
    }
    bp_context_destroy(ctx);
}

Test(unary, input_is_left_untouched)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_F32, 3, (double[]){1, 2, 3}), *y = NULL;
        BPT_OK(bp_neg(x, &y));
        int64_t n = 3;
        bpt_expect("input after neg", x, BP_F32, 1, &n, (double[]){1, 2, 3}, bpt_exact());
        bp_tensor_release(x);
        bp_tensor_release(y);
    }
    bp_context_destroy(ctx);
}

/* sqrt is correctly rounded in every dtype: for f32, the root of the float
 * rounded once (what sqrtf gives, and the double root rounded to float).
 * 2^20 bit patterns across every exponent, subnormals and specials. */
Test(unary, sqrt_f32_is_the_correctly_rounded_root_bit_for_bit)
{
    enum { N = 1 << 20 };
    float *x = malloc(N * sizeof *x), *got = malloc(N * sizeof *got);
    uint32_t s = 12345u;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        uint32_t bits = i < 256 ? (uint32_t)i << 23 | (s >> 9) : s; /* every exponent first */
        memcpy(&x[i], &bits, sizeof bits);
    }
    x[0] = 0.0f, x[1] = -0.0f, x[2] = INFINITY, x[3] = 0x1p-149f, x[4] = -1.0f, x[5] = NAN;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = NULL, *o = NULL;
        BPT_OK(bp_tensor_from_host(be, BP_F32, 1, (const int64_t[]){N}, x, &t));
        BPT_OK(bp_sqrt(t, &o));
        BPT_OK(bp_tensor_to_host(o, got, N * sizeof *got));
        int64_t off = 0;
        for (int i = 0; i < N; i++) {
            float want = (float)sqrt((double)x[i]);
            bool same = (want != want && got[i] != got[i]) ||
                        memcmp(&want, &got[i], sizeof want) == 0;
            if (!same && off++ < 3)
                cr_log_error("%s: sqrt(%a) = %a, want %a", bp_backend_name(be), x[i], got[i], want);
        }
        cr_expect_eq(off, 0, "%s: %lld of %d roots differ", bp_backend_name(be), (long long)off, N);
        bp_tensor_release(t), bp_tensor_release(o);
    }
    bp_context_destroy(ctx);
    free(x), free(got);
}

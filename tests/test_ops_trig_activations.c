/* The inverse and hyperbolic functions and the activations of one tensor
 * (ops.h): every op, every dtype it accepts, every backend, against
 * the oracle (cf_oracle_unary, cf_oracle_elu, ...), their ONNX attributes
 * and defaults, the edges of each formula, and clip with tensor and scalar
 * bounds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpt.h"
#include "expect.h"

#define NV(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))
#define FLOATS cf_float_dtypes, CF_COUNT(cf_float_dtypes)
#define NUMERIC cf_numeric_dtypes, CF_COUNT(cf_numeric_dtypes)
#define INTS cf_int_dtypes, CF_COUNT(cf_int_dtypes)

/* ONNX's defaults (ops.h) */
#define SELU_ALPHA 1.67326319217681884765625
#define SELU_GAMMA 1.05070102214813232421875

/* The public call of op with its attributes p0, p1. */
static bp_status call(bp_op op, const bp_tensor *x, double p0, double p1, bp_tensor **out)
{
    switch (op) {
    case BP_OP_ACOS: return bp_acos(x, out);
    case BP_OP_ASIN: return bp_asin(x, out);
    case BP_OP_ATAN: return bp_atan(x, out);
    case BP_OP_ACOSH: return bp_acosh(x, out);
    case BP_OP_ASINH: return bp_asinh(x, out);
    case BP_OP_ATANH: return bp_atanh(x, out);
    case BP_OP_SINH: return bp_sinh(x, out);
    case BP_OP_COSH: return bp_cosh(x, out);
    case BP_OP_LOG1P: return bp_log1p(x, out);
    case BP_OP_EXPM1: return bp_expm1(x, out);
    case BP_OP_SOFTPLUS: return bp_softplus(x, out);
    case BP_OP_SOFTSIGN: return bp_softsign(x, out);
    case BP_OP_SILU: return bp_silu(x, out);
    case BP_OP_HARDSWISH: return bp_hardswish(x, out);
    case BP_OP_SQUARE: return bp_square(x, out);
    case BP_OP_BITWISE_NOT: return bp_bitwise_not(x, out);
    case BP_OP_ELU: return bp_elu(x, p0, out);
    case BP_OP_SELU: return bp_selu(x, p0, p1, out);
    case BP_OP_LEAKY_RELU: return bp_leaky_relu(x, p0, out);
    case BP_OP_THRESHOLDED_RELU: return bp_thresholded_relu(x, p0, out);
    case BP_OP_HARD_SIGMOID: return bp_hard_sigmoid(x, p0, p1, out);
    case BP_OP_SHRINK: return bp_shrink(x, p0, p1, out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

static bool oracle(bp_op op, const cf_array *x, double p0, double p1, cf_array *want)
{
    switch (op) {
    case BP_OP_ELU: return cf_oracle_elu(x, p0, want);
    case BP_OP_SELU: return cf_oracle_selu(x, p0, p1, want);
    case BP_OP_LEAKY_RELU: return cf_oracle_leaky_relu(x, p0, want);
    case BP_OP_THRESHOLDED_RELU: return cf_oracle_thresholded_relu(x, p0, want);
    case BP_OP_HARD_SIGMOID: return cf_oracle_hard_sigmoid(x, p0, p1, want);
    case BP_OP_SHRINK: return cf_oracle_shrink(x, p0, p1, want);
    default: return cf_oracle_unary(op, x, want);
    }
}

/* op(xs; p0, p1) for every dtype in dts on every backend against the oracle
 * applied to the inputs as that dtype holds them. */
static void check(bp_op op, const bp_dtype *dts, int ndt, const double *xs, int64_t n, double p0,
                  double p1, bool exact)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < ndt; d++) {
            bp_dtype dt = dts[d];
            if (!bpt_supports(be, op, dt))
                continue;
            cf_array x = bpt_array(dt, 1, &n, xs), want;
            cr_assert(oracle(op, &x, p0, p1, &want));
            bp_tensor *t = bpt_tensor_of(be, &x), *y = NULL;
            BPT_OK(call(op, t, p0, p1, &y));
            char what[96];
            snprintf(what, sizeof what, "%s(p0 %g, p1 %g)", bp_op_name(op), p0, p1);
            bpt_tol tol = exact ? bpt_exact() : bpt_math(dt);
            if ((op == BP_OP_HARD_SIGMOID || op == BP_OP_HARDSWISH) && dt == BP_F64)
                tol.atol = 1e-15; /* alpha x + beta cancels near the lower knee */
            bpt_expect_array(what, y, &want, tol);
            bp_tensor_release(t);
            bp_tensor_release(y);
            cf_array_free(&x);
            cf_array_free(&want);
        }
    }
    bp_context_destroy(ctx);
}

/* ---- the inverse and hyperbolic functions, log1p, expm1 --------------------- */

Test(trig_activations, acos_and_asin_match_the_oracle_on_their_domain)
{
    static const double xs[] = {-1, -0.75, -0.5, -0.1, 0, 0.3, 0.5, 0.9, 1};
    check(BP_OP_ACOS, FLOATS, xs, NV(xs), 0, 0, false);
    check(BP_OP_ASIN, FLOATS, xs, NV(xs), 0, 0, false);
}

Test(trig_activations, acos_outside_minus_one_to_one_is_nan)
{
    static const double xs[] = {-1.5, 1.25, 4};
    check(BP_OP_ACOS, FLOATS, xs, NV(xs), 0, 0, false);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = bpt_vec(be, BP_F32, 3, xs), *y = NULL;
        BPT_OK(bp_acos(t, &y));
        double *r = bpt_read(y);
        for (int i = 0; i < 3; i++)
            cr_expect(isnan(r[i]), "acos(%g) on %s is %g", xs[i], bp_backend_name(be), r[i]);
        free(r);
        bp_tensor_release(t);
        bp_tensor_release(y);
    }
    bp_context_destroy(ctx);
}

Test(trig_activations, atan_asinh_sinh_cosh_match_the_oracle)
{
    static const double xs[] = {-8, -2.5, -1, -0.25, 0, 0.125, 1, 3, 7.5};
    check(BP_OP_ATAN, FLOATS, xs, NV(xs), 0, 0, false);
    check(BP_OP_ASINH, FLOATS, xs, NV(xs), 0, 0, false);
    check(BP_OP_SINH, FLOATS, xs, NV(xs), 0, 0, false);
    check(BP_OP_COSH, FLOATS, xs, NV(xs), 0, 0, false);
}

Test(trig_activations, acosh_matches_the_oracle_from_one_up)
{
    static const double xs[] = {1, 1.0625, 1.5, 2, 10, 1000};
    check(BP_OP_ACOSH, FLOATS, xs, NV(xs), 0, 0, false);
}

Test(trig_activations, atanh_is_infinite_at_plus_minus_one)
{
    static const double xs[] = {-1, -0.5, 0, 0.25, 0.99, 1};
    check(BP_OP_ATANH, FLOATS, xs, NV(xs), 0, 0, false);
}

Test(trig_activations, log1p_and_expm1_stay_accurate_near_zero)
{
    /* 1 + x would round these away; the oracle works in long double */
    static const double xs[] = {-0.5, -1e-5, -1e-10, 0, 1e-12, 3e-8, 1e-3, 2, 30};
    check(BP_OP_LOG1P, FLOATS, xs, NV(xs), 0, 0, false);
    check(BP_OP_EXPM1, FLOATS, xs, NV(xs), 0, 0, false);
}

/* ---- activations ----------------------------------------------------------------- */

Test(trig_activations, softplus_neither_overflows_nor_loses_small_values)
{
    static const double xs[] = {-800, -40, -3, -0.5, 0, 0.5, 3, 40, 800};
    check(BP_OP_SOFTPLUS, FLOATS, xs, NV(xs), 0, 0, false);
}

Test(trig_activations, softsign_silu_and_hardswish_match_the_oracle)
{
    static const double xs[] = {-700, -8, -3, -1, -0.25, 0, 0.5, 2, 3, 9, 700};
    check(BP_OP_SOFTSIGN, FLOATS, xs, NV(xs), 0, 0, false);
    check(BP_OP_SILU, FLOATS, xs, NV(xs), 0, 0, false);
    check(BP_OP_HARDSWISH, FLOATS, xs, NV(xs), 0, 0, false);
}

Test(trig_activations, the_formulas_keep_their_ieee_edges)
{
    /* each op is its ops.h formula evaluated in IEEE arithmetic: NaN stays
     * NaN, softsign(+-inf) is inf / inf (NaN), silu(-inf) is -inf * 0 */
    static const double xs[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0};
    static const bp_op ops[] = {BP_OP_SOFTPLUS, BP_OP_SOFTSIGN, BP_OP_SILU, BP_OP_HARDSWISH,
                                BP_OP_ASINH,    BP_OP_SINH,     BP_OP_EXPM1, BP_OP_LOG1P,
                                BP_OP_ATAN,     BP_OP_COSH};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        check(ops[o], FLOATS, xs, NV(xs), 0, 0, false);
}

Test(trig_activations, elu_uses_alpha_below_zero)
{
    static const double xs[] = {-30, -2, -0.5, -1e-9, 0, 0.5, 4, INFINITY, -INFINITY, NAN};
    check(BP_OP_ELU, FLOATS, xs, NV(xs), 1.0, 0, false); /* ONNX's default alpha */
    check(BP_OP_ELU, FLOATS, xs, NV(xs), 0.25, 0, false);
}

Test(trig_activations, selu_with_onnx_defaults_and_other_attributes)
{
    static const double xs[] = {-6, -1, -0.125, 0, 0.5, 3, -INFINITY, NAN};
    check(BP_OP_SELU, FLOATS, xs, NV(xs), SELU_ALPHA, SELU_GAMMA, false);
    check(BP_OP_SELU, FLOATS, xs, NV(xs), 2.0, 3.0, false);
}

Test(trig_activations, leaky_relu_scales_the_negative_side)
{
    static const double xs[] = {-100, -1, -0.5, -0.0, 0, 2, 7, NAN, -INFINITY};
    check(BP_OP_LEAKY_RELU, FLOATS, xs, NV(xs), 0.01, 0, false);
    check(BP_OP_LEAKY_RELU, FLOATS, xs, NV(xs), 0.5, 0, true); /* exact: a power of two */
}

Test(trig_activations, thresholded_relu_keeps_only_values_above_alpha)
{
    static const double xs[] = {-3, 0, 0.5, 1, 1.0000001, 2, NAN, INFINITY};
    check(BP_OP_THRESHOLDED_RELU, FLOATS, xs, NV(xs), 1.0, 0, true);
    check(BP_OP_THRESHOLDED_RELU, FLOATS, xs, NV(xs), -1.0, 0, true);
}

Test(trig_activations, hard_sigmoid_clamps_to_zero_and_one_and_keeps_nan)
{
    static const double xs[] = {-10, -2.5, -1, 0, 1, 2.5, 3, 10, NAN, INFINITY};
    check(BP_OP_HARD_SIGMOID, FLOATS, xs, NV(xs), 0.2, 0.5, false);
    check(BP_OP_HARD_SIGMOID, FLOATS, xs, NV(xs), 0.5, 0.25, false);
}

Test(trig_activations, shrink_zeroes_the_band_and_shifts_the_rest)
{
    static const double xs[] = {-3, -1.5, -0.5, -0.25, 0, 0.5, 0.75, 2, 100, NAN};
    check(BP_OP_SHRINK, FLOATS, xs, NV(xs), 0.0, 0.5, true);   /* ONNX's defaults */
    check(BP_OP_SHRINK, FLOATS, xs, NV(xs), 1.5, 0.5, false);
}

Test(trig_activations, shrink_on_integers_converts_by_the_cast_rules)
{
    /* x - bias with bias 0.5 truncates toward zero; the bounds saturate */
    static const double xs[] = {-128, -100, -3, -1, 0, 1, 2, 100, 127, 255};
    check(BP_OP_SHRINK, INTS, xs, NV(xs), 0.5, 1.0, true);
    check(BP_OP_SHRINK, INTS, xs, NV(xs), -200, 1.0, true);
}

/* ---- square, bitwise_not ----------------------------------------------------------- */

Test(trig_activations, square_is_exact_for_every_numeric_dtype)
{
    static const double xs[] = {-11, -3, -0.5, 0, 0.25, 1, 3, 7, 15};
    check(BP_OP_SQUARE, NUMERIC, xs, NV(xs), 0, 0, true);
}

Test(trig_activations, square_of_integers_wraps)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_int_dtypes[d];
            int64_t v[8], n = cf_int_edges(dt, (const int64_t[]){-3, 0, 5}, 3, v);
            cf_array x = bpt_array_i64(dt, 1, &n, v), want;
            cr_assert(cf_oracle_unary(BP_OP_SQUARE, &x, &want));
            bp_tensor *t = bpt_tensor_of(be, &x), *y = NULL;
            BPT_OK(bp_square(t, &y));
            bpt_expect_array("square at the integer limits", y, &want, bpt_exact());
            bp_tensor_release(t);
            bp_tensor_release(y);
            cf_array_free(&x);
            cf_array_free(&want);
        }
    }
    bp_context_destroy(ctx);
}

Test(trig_activations, bitwise_not_flips_every_bit)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = bpt_vec(be, BP_U8, 3, (const double[]){0, 5, 255}), *y = NULL;
        BPT_OK(bp_bitwise_not(t, &y));
        bpt_expect_i64("~u8", y, BP_U8, 1, (const int64_t[]){3}, (const int64_t[]){255, 250, 0});
        bp_tensor_release(t);
        bp_tensor_release(y);
        t = bpt_tensor_i64(be, BP_I64, 1, (const int64_t[]){3},
                           (const int64_t[]){0, -1, INT64_MIN});
        BPT_OK(bp_bitwise_not(t, &y));
        bpt_expect_i64("~i64", y, BP_I64, 1, (const int64_t[]){3},
                       (const int64_t[]){-1, 0, INT64_MAX});
        bp_tensor_release(t);
        bp_tensor_release(y);
    }
    bp_context_destroy(ctx);
    static const double xs[] = {-128, -7, -1, 0, 1, 9, 127, 200};
    check(BP_OP_BITWISE_NOT, INTS, xs, NV(xs), 0, 0, true);
}

/* ---- larger and strided inputs ------------------------------------------------------- */

Test(trig_activations, a_transposed_input_gives_the_same_values)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    double xs[5 * 7];
    bpt_fill_random(xs, 35, 17, -3, 3);
    BPT_FOR_EACH_BACKEND(ctx, be) {
        cf_array xa = bpt_array(BP_F32, 2, (const int64_t[]){5, 7}, xs), xt, want;
        cr_assert(cf_oracle_transpose(&xa, NULL, &xt));
        cr_assert(cf_oracle_elu(&xt, 0.7, &want));
        bp_tensor *t = bpt_tensor_of(be, &xa), *tt = NULL, *y = NULL;
        BPT_OK(bp_transpose(t, NULL, &tt));
        BPT_OK(bp_elu(tt, 0.7, &y));
        bpt_expect_array("elu of a transpose", y, &want, bpt_math(BP_F32));
        bp_tensor_release(t);
        bp_tensor_release(tt);
        bp_tensor_release(y);
        cf_array_free(&xa);
        cf_array_free(&xt);
        cf_array_free(&want);
    }
    bp_context_destroy(ctx);
}

Test(trig_activations, sizes_past_the_threading_threshold_match_the_oracle)
{
    int64_t n = 70001;
    double *xs = malloc((size_t)n * sizeof *xs);
    cr_assert_not_null(xs);
    bpt_fill_random(xs, n, 5, -4, 4);
    check(BP_OP_SILU, FLOATS, xs, n, 0, 0, false);
    check(BP_OP_HARD_SIGMOID, FLOATS, xs, n, 0.2, 0.5, false);
    free(xs);
}

/* ---- clip ----------------------------------------------------------------------------- */

static void check_clip(bp_backend *be, bp_dtype dt, const cf_array *x, const cf_array *lo,
                       const cf_array *hi, const char *what)
{
    cf_array want;
    cr_assert(cf_oracle_clip(x, lo, hi, &want));
    bp_tensor *t = bpt_tensor_of(be, x), *tl = lo ? bpt_tensor_of(be, lo) : NULL,
              *th = hi ? bpt_tensor_of(be, hi) : NULL, *y = NULL;
    BPT_OK(bp_clip(t, tl, th, &y));
    bpt_expect_array(what, y, &want, bpt_exact());
    (void)dt;
    bp_tensor_release(t);
    bp_tensor_release(tl);
    bp_tensor_release(th);
    bp_tensor_release(y);
    cf_array_free(&want);
}

Test(trig_activations, clip_with_tensor_bounds_broadcast_per_column)
{
    static const double xs[] = {-5, 0, 5, -1, 2, 9, 3, 3, 3, 100, -100, 0.5};
    static const double los[] = {-2, 1, 0}, his[] = {2, 2.5, 4};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < CF_COUNT(cf_numeric_dtypes); d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            if (!bpt_supports(be, BP_OP_CLIP, dt))
                continue;
            cf_array x = bpt_array(dt, 2, (const int64_t[]){4, 3}, xs);
            cf_array lo = bpt_array(dt, 1, (const int64_t[]){3}, los);
            cf_array hi = bpt_array(dt, 2, (const int64_t[]){1, 3}, his);
            check_clip(be, dt, &x, &lo, &hi, "clip by per-column bounds");
            check_clip(be, dt, &x, &lo, NULL, "clip from below only");
            check_clip(be, dt, &x, NULL, &hi, "clip from above only");
            check_clip(be, dt, &x, NULL, NULL, "clip without bounds");
            cf_array_free(&x);
            cf_array_free(&lo);
            cf_array_free(&hi);
        }
    }
    bp_context_destroy(ctx);
}

Test(trig_activations, clip_keeps_nan_and_a_nan_bound_gives_nan)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            cf_array x = bpt_array(dt, 1, (const int64_t[]){4},
                                   (const double[]){NAN, -INFINITY, INFINITY, 0.5});
            cf_array lo = bpt_array(dt, 1, (const int64_t[]){4},
                                    (const double[]){0, 0, NAN, -1});
            cf_array hi = bpt_array(dt, 0, NULL, (const double[]){1});
            check_clip(be, dt, &x, &lo, &hi, "clip with NaN");
            cf_array_free(&x);
            cf_array_free(&lo);
            cf_array_free(&hi);
        }
    }
    bp_context_destroy(ctx);
}

Test(trig_activations, clip_with_lo_above_hi_gives_hi)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_I32, 3, (const double[]){-5, 5, 50}), *y = NULL;
        BPT_OK(bp_clip_scalar(x, 10, 3, &y));
        bpt_expect_i64("clip(lo 10, hi 3)", y, BP_I32, 1, (const int64_t[]){3},
                       (const int64_t[]){3, 3, 3});
        bp_tensor_release(x);
        bp_tensor_release(y);
    }
    bp_context_destroy(ctx);
}

Test(trig_activations, clip_scalar_converts_its_bounds_and_takes_infinity_as_none)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_U8, 4, (const double[]){0, 3, 200, 255}), *y = NULL;
        /* -7.9 saturates to 0 for u8, 199.6 truncates to 199 */
        BPT_OK(bp_clip_scalar(x, -7.9, 199.6, &y));
        bpt_expect_i64("u8 clip(-7.9, 199.6)", y, BP_U8, 1, (const int64_t[]){4},
                       (const int64_t[]){0, 3, 199, 199});
        bp_tensor_release(y);
        BPT_OK(bp_clip_scalar(x, 4, INFINITY, &y));
        bpt_expect_i64("u8 clip(4, inf)", y, BP_U8, 1, (const int64_t[]){4},
                       (const int64_t[]){4, 4, 200, 255});
        bp_tensor_release(y);
        bp_tensor_release(x);
        bp_tensor *f = bpt_vec(be, BP_F16, 3, (const double[]){-1e4, 0.1, 6e4});
        BPT_OK(bp_clip_scalar(f, -INFINITY, 1000, &y));
        double *r = bpt_read(y);
        cr_expect(r[0] == -1e4 && r[2] == 1000, "f16 clip(-inf, 1000): %g %g", r[0], r[2]);
        free(r);
        bp_tensor_release(y);
        bp_tensor_release(f);
    }
    bp_context_destroy(ctx);
}

/* Elementwise functions of two tensors: fmod (C's, the sign
 * of the dividend), prelu (the slope broadcast one way), the bitwise ops and
 * the bit shifts (ops.h), on every backend against the oracle's element
 * cases (cf_binary_f, cf_binary_i). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpt.h"
#include "expect.h"

#define NV(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

static bp_status call(bp_op op, const bp_tensor *a, const bp_tensor *b, bp_tensor **out)
{
    switch (op) {
    case BP_OP_FMOD: return bp_fmod(a, b, out);
    case BP_OP_PRELU: return bp_prelu(a, b, out);
    case BP_OP_BITWISE_AND: return bp_bitwise_and(a, b, out);
    case BP_OP_BITWISE_OR: return bp_bitwise_or(a, b, out);
    case BP_OP_BITWISE_XOR: return bp_bitwise_xor(a, b, out);
    case BP_OP_BITSHIFT_LEFT: return bp_bitshift_left(a, b, out);
    case BP_OP_BITSHIFT_RIGHT: return bp_bitshift_right(a, b, out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

/* op(a, b) for each dtype of dts, a of shape sa and b of shape sb, against
 * the oracle (exact: every one of these ops is exact). */
static void check(bp_op op, const bp_dtype *dts, int ndt, int32_t ra, const int64_t *sa,
                  const double *av, int32_t rb, const int64_t *sb, const double *bv)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < ndt; d++) {
            bp_dtype dt = dts[d];
            if (!bpt_supports(be, op, dt))
                continue;
            cf_array a = bpt_array(dt, ra, sa, av), b = bpt_array(dt, rb, sb, bv), want;
            cr_assert(cf_oracle_binary(op, &a, &b, &want));
            bp_tensor *ta = bpt_tensor_of(be, &a), *tb = bpt_tensor_of(be, &b), *y = NULL;
            BPT_OK(call(op, ta, tb, &y));
            bpt_expect_array(bp_op_name(op), y, &want, bpt_exact());
            bp_tensor_release(ta);
            bp_tensor_release(tb);
            bp_tensor_release(y);
            cf_array_free(&a);
            cf_array_free(&b);
            cf_array_free(&want);
        }
    }
    bp_context_destroy(ctx);
}

/* The same on integer data given exactly. */
static void check_i(bp_op op, bp_dtype dt, int64_t n, const int64_t *av, const int64_t *bv,
                    const int64_t *expect)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        cf_array a = bpt_array_i64(dt, 1, &n, av), b = bpt_array_i64(dt, 1, &n, bv), want;
        cr_assert(cf_oracle_binary(op, &a, &b, &want));
        for (int64_t i = 0; expect && i < n; i++)
            cr_assert_eq(want.i[i], expect[i], "the oracle's %s(%lld, %lld) is %lld, not %lld",
                         bp_op_name(op), (long long)av[i], (long long)bv[i],
                         (long long)want.i[i], (long long)expect[i]);
        bp_tensor *ta = bpt_tensor_of(be, &a), *tb = bpt_tensor_of(be, &b), *y = NULL;
        BPT_OK(call(op, ta, tb, &y));
        char what[64];
        snprintf(what, sizeof what, "%s on %s", bp_op_name(op), bp_dtype_name(dt));
        bpt_expect_array(what, y, &want, bpt_exact());
        bp_tensor_release(ta);
        bp_tensor_release(tb);
        bp_tensor_release(y);
        cf_array_free(&a);
        cf_array_free(&b);
        cf_array_free(&want);
    }
    bp_context_destroy(ctx);
}

/* ---- fmod ------------------------------------------------------------------------ */

Test(fmod_prelu_bitwise, fmod_takes_the_sign_of_the_dividend)
{
    static const double a[] = {7, -7, 7, -7, 5.5, -5.5, 0, -0.0, 3};
    static const double b[] = {3, 3, -3, -3, 2, 2, 4, 4, 0.75};
    check(BP_OP_FMOD, cf_float_dtypes, 4, 1, (const int64_t[]){9}, a, 1,
          (const int64_t[]){9}, b);
    static const double ai[] = {7, -7, 7, -7, 100, -100, 0, 1, 9};
    static const double bi[] = {3, 3, -3, -3, 7, 7, 4, 4, 2};
    check(BP_OP_FMOD, cf_int_dtypes, 4, 1, (const int64_t[]){9}, ai, 1,
          (const int64_t[]){9}, bi);
}

Test(fmod_prelu_bitwise, fmod_by_zero_is_nan_for_floats_and_zero_for_integers)
{
    check(BP_OP_FMOD, cf_float_dtypes, 4, 1, (const int64_t[]){3}, (const double[]){1, -2, 0},
          0, NULL, (const double[]){0});
    check_i(BP_OP_FMOD, BP_I32, 3, (const int64_t[]){5, -5, 0}, (const int64_t[]){0, 0, 0},
            (const int64_t[]){0, 0, 0});
}

Test(fmod_prelu_bitwise, fmod_of_int_min_by_minus_one_is_zero)
{
    check_i(BP_OP_FMOD, BP_I64, 2, (const int64_t[]){INT64_MIN, INT64_MIN},
            (const int64_t[]){-1, 3}, (const int64_t[]){0, -2});
    check_i(BP_OP_FMOD, BP_I8, 2, (const int64_t[]){-128, -128}, (const int64_t[]){-1, 7},
            (const int64_t[]){0, -2});
}

Test(fmod_prelu_bitwise, fmod_of_infinities_and_nan_follows_c)
{
    check(BP_OP_FMOD, cf_float_dtypes, 4, 1, (const int64_t[]){4},
          (const double[]){INFINITY, 3, NAN, 3}, 1, (const int64_t[]){4},
          (const double[]){2, INFINITY, 2, NAN});
}

/* ---- prelu ---------------------------------------------------------------------- */

Test(fmod_prelu_bitwise, prelu_scales_negative_values_by_a_per_channel_slope)
{
    /* x (2, 3, 2): slope (3, 1) broadcasts over the first and last axes */
    static const double x[] = {-1, 2, -3, 4, -5, 6, 7, -8, 9, -10, -11, 12};
    static const double s[] = {0.25, 0.5, 2};
    check(BP_OP_PRELU, cf_numeric_dtypes, 8, 3, (const int64_t[]){2, 3, 2}, x, 2,
          (const int64_t[]){3, 1}, s);
    check(BP_OP_PRELU, cf_float_dtypes, 4, 1, (const int64_t[]){4},
          (const double[]){-INFINITY, NAN, -0.0, -2}, 0, NULL, (const double[]){0.5});
}

Test(fmod_prelu_bitwise, prelu_of_integers_wraps)
{
    check_i(BP_OP_PRELU, BP_I8, 3, (const int64_t[]){-100, -2, 5}, (const int64_t[]){3, -64, 9},
            (const int64_t[]){-44, -128, 5});
}

/* ---- bitwise ---------------------------------------------------------------------- */

Test(fmod_prelu_bitwise, bitwise_and_or_xor_on_every_integer_dtype)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    static const bp_op ops[] = {BP_OP_BITWISE_AND, BP_OP_BITWISE_OR, BP_OP_BITWISE_XOR};
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_int_dtypes[d];
            int64_t e[12], n = cf_int_edges(dt, (const int64_t[]){-86, -1, 0, 85, 102}, 5, e);
            /* every pair: a (n, 1) against b (1, n) */
            cf_array a = bpt_array_i64(dt, 2, (const int64_t[]){n, 1}, e);
            cf_array b = bpt_array_i64(dt, 2, (const int64_t[]){1, n}, e);
            bp_tensor *ta = bpt_tensor_of(be, &a), *tb = bpt_tensor_of(be, &b);
            for (int o = 0; o < 3; o++) {
                cf_array want;
                cr_assert(cf_oracle_binary(ops[o], &a, &b, &want));
                bp_tensor *y = NULL;
                BPT_OK(call(ops[o], ta, tb, &y));
                bpt_expect_array(bp_op_name(ops[o]), y, &want, bpt_exact());
                bp_tensor_release(y);
                cf_array_free(&want);
            }
            bp_tensor_release(ta);
            bp_tensor_release(tb);
            cf_array_free(&a);
            cf_array_free(&b);
        }
    }
    bp_context_destroy(ctx);
}

Test(fmod_prelu_bitwise, xor_of_u8_values)
{
    check_i(BP_OP_BITWISE_XOR, BP_U8, 3, (const int64_t[]){0xF0, 0xFF, 0x0F},
            (const int64_t[]){0x0F, 0x01, 0x0F}, (const int64_t[]){0xFF, 0xFE, 0x00});
}

/* ---- shifts ---------------------------------------------------------------------- */

Test(fmod_prelu_bitwise, left_shift_loses_the_bits_shifted_out)
{
    check_i(BP_OP_BITSHIFT_LEFT, BP_U8, 4, (const int64_t[]){1, 0x81, 3, 255},
            (const int64_t[]){3, 1, 7, 4}, (const int64_t[]){8, 2, 128, 240});
    check_i(BP_OP_BITSHIFT_LEFT, BP_I32, 3, (const int64_t[]){1, -1, 0x40000000},
            (const int64_t[]){31, 4, 1}, (const int64_t[]){INT32_MIN, -16, INT32_MIN});
}

Test(fmod_prelu_bitwise, right_shift_of_a_negative_value_fills_with_ones)
{
    check_i(BP_OP_BITSHIFT_RIGHT, BP_I8, 4, (const int64_t[]){-128, -1, -7, 100},
            (const int64_t[]){1, 5, 1, 2}, (const int64_t[]){-64, -1, -4, 25});
    check_i(BP_OP_BITSHIFT_RIGHT, BP_I64, 2, (const int64_t[]){INT64_MIN, INT64_MAX},
            (const int64_t[]){63, 62}, (const int64_t[]){-1, 1});
}

Test(fmod_prelu_bitwise, a_shift_by_the_width_or_more_or_by_a_negative_count_empties_the_value)
{
    check_i(BP_OP_BITSHIFT_LEFT, BP_I32, 4, (const int64_t[]){1, 5, -5, 7},
            (const int64_t[]){32, 100, 40, -1}, (const int64_t[]){0, 0, 0, 0});
    check_i(BP_OP_BITSHIFT_RIGHT, BP_I32, 4, (const int64_t[]){1, 5, -5, -7},
            (const int64_t[]){32, -3, 40, -1}, (const int64_t[]){0, 0, -1, -1});
    check_i(BP_OP_BITSHIFT_RIGHT, BP_U8, 2, (const int64_t[]){255, 128},
            (const int64_t[]){8, 7}, (const int64_t[]){0, 1});
}

Test(fmod_prelu_bitwise, shifts_broadcast_like_every_binary_op)
{
    static const double a[] = {1, 2, 3, 4, 5, 6};
    static const double s[] = {0, 1, 2};
    check(BP_OP_BITSHIFT_LEFT, cf_int_dtypes, 4, 2, (const int64_t[]){2, 3}, a, 1,
          (const int64_t[]){3}, s);
    check(BP_OP_BITSHIFT_RIGHT, cf_int_dtypes, 4, 2, (const int64_t[]){2, 3}, a, 1,
          (const int64_t[]){3}, s);
}

Test(fmod_prelu_bitwise, large_inputs_match_the_oracle)
{
    int64_t n = 70001;
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    cr_assert(a && b);
    bpt_fill_random(a, n, 3, -50, 50);
    bpt_fill_random(b, n, 4, -9, 9);
    for (int64_t i = 0; i < n; i++)
        a[i] = trunc(a[i]), b[i] = b[i] == 0 ? 1 : trunc(b[i]);
    check(BP_OP_FMOD, cf_numeric_dtypes, 8, 1, &n, a, 1, &n, b);
    check(BP_OP_PRELU, cf_numeric_dtypes, 8, 1, &n, a, 1, &n, b);
    free(a);
    free(b);
}

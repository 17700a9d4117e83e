/* Binary ops and where (ops.h bp_binary / bp_where): every op, every dtype it
 * accepts, every backend, broadcasting, IEEE specials and integer edge values,
 * against the oracle (cf_oracle_binary, cf_oracle_where) in double / int64. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpt.h"
#include "expect.h"

#define NV(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* Run op on a (shape sa) and b (shape sb) of dtype dt; the result must have
 * the broadcast shape so and the oracle's values. */
static void bcast_case(bp_backend *be, bp_op op, bp_dtype dt, int32_t ra, const int64_t *sa,
                       const double *va, int32_t rb, const int64_t *sb, const double *vb,
                       int32_t ro, const int64_t *so, bpt_tol tol)
{
    cf_array x = bpt_array(dt, ra, sa, va), y = bpt_array(dt, rb, sb, vb), want;
    cr_assert(cf_oracle_binary(op, &x, &y, &want));
    bp_tensor *a = bpt_tensor_of(be, &x), *b = bpt_tensor_of(be, &y), *o = NULL;
    BPT_OK(bp_binary(op, a, b, &o));
    bpt_expect_meta(bp_op_name(op), o, want.dt, ro, so);
    bpt_expect_array(bp_op_name(op), o, &want, tol);
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_tensor_release(o);
    cf_array_free(&x);
    cf_array_free(&y);
    cf_array_free(&want);
}

static void check_float_binary(bp_op op, const double *va, const double *vb, int64_t n,
                               bool exact)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            if (!bpt_supports(be, op, dt))
                continue;
            bcast_case(be, op, dt, 1, &n, va, 1, &n, vb, 1, &n,
                       exact ? bpt_exact() : bpt_math(dt));
        }
    }
    bp_context_destroy(ctx);
}

static const double FA[] = {1.5, -2.25, 3, 0.1, 1000, -7, 0.3, 100, 1e-3, 65504};
static const double FB[] = {0.5, 4, -3, 0.2, 3, 2, 0.7, -0.01, 7, 2};

/* f32/f64 exactly (one correct rounding); f16/bf16 too: computing in f32 and
 * rounding once to the half type is still correctly rounded for + - * /. */
Test(binary, add_is_correctly_rounded_for_every_float_dtype)
{
    check_float_binary(BP_OP_ADD, FA, FB, NV(FA), true);
}

Test(binary, sub_is_correctly_rounded_for_every_float_dtype)
{
    check_float_binary(BP_OP_SUB, FA, FB, NV(FA), true);
}

Test(binary, mul_is_correctly_rounded_for_every_float_dtype)
{
    check_float_binary(BP_OP_MUL, FA, FB, NV(FA), true);
}

Test(binary, div_is_correctly_rounded_for_every_float_dtype)
{
    check_float_binary(BP_OP_DIV, FA, FB, NV(FA), true);
}

Test(binary, maximum_and_minimum_are_exact_for_every_float_dtype)
{
    check_float_binary(BP_OP_MAXIMUM, FA, FB, NV(FA), true);
    check_float_binary(BP_OP_MINIMUM, FA, FB, NV(FA), true);
}

Test(binary, pow_of_floats_matches_the_oracle)
{
    static const double a[] = {2, 0.5, 3, 10, 1.5, 0, 4, -2, -8, 7};
    static const double b[] = {3, -2, 0.5, -1, 2.5, 0, 0.5, 3, 2, 0};
    check_float_binary(BP_OP_POW, a, b, NV(a), false);
}

Test(binary, mod_of_floats_has_the_sign_of_the_divisor)
{
    static const double a[] = {7.5, -7.5, 7.5, -7.5, 6, -6, 0.75};
    static const double b[] = {2, 2, -2, -2, 3, 3, 0.5};
    check_float_binary(BP_OP_MOD, a, b, NV(a), true);
    /* spelled out: -7.5 mod 2 = 0.5, 7.5 mod -2 = -0.5 */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_F32, 2, (double[]){-7.5, 7.5});
        bp_tensor *y = bpt_vec(be, BP_F32, 2, (double[]){2, -2}), *o = NULL;
        BPT_OK(bp_mod(x, y, &o));
        int64_t n = 2;
        bpt_expect("mod", o, BP_F32, 1, &n, (double[]){0.5, -0.5}, bpt_exact());
        bp_tensor_release(x);
        bp_tensor_release(y);
        bp_tensor_release(o);
    }
    bp_context_destroy(ctx);
}

/* ---- integers ------------------------------------------------------------- */

/* Values between the dtype's own edges (cf_int_edges adds lo, lo+1, hi-1, hi). */
static const int64_t edge_cands[] = {-7, -2, -1, 0, 1, 2, 3, 7};

/* Every pair of edge values, as a (n,1) x (1,n) broadcast. */
static void check_int_pairs(bp_op op)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_int_dtypes[d];
            if (!bpt_supports(be, op, dt))
                continue;
            int64_t v[16];
            int64_t n = cf_int_edges(dt, edge_cands, sizeof edge_cands / sizeof edge_cands[0], v);
            int64_t sa[2] = {n, 1}, sb[2] = {1, n}, so[2] = {n, n};
            cf_array x = bpt_array_i64(dt, 2, sa, v), y = bpt_array_i64(dt, 2, sb, v), want;
            cr_assert(cf_oracle_binary(op, &x, &y, &want));
            bp_tensor *a = bpt_tensor_of(be, &x), *b = bpt_tensor_of(be, &y), *o = NULL;
            BPT_OK(bp_binary(op, a, b, &o));
            bpt_expect_meta(bp_op_name(op), o, dt, 2, so);
            bpt_expect_array(bp_op_name(op), o, &want, bpt_exact());
            bp_tensor_release(a);
            bp_tensor_release(b);
            bp_tensor_release(o);
            cf_array_free(&x);
            cf_array_free(&y);
            cf_array_free(&want);
        }
    }
    bp_context_destroy(ctx);
}

Test(binary, integer_add_wraps_on_every_pair_of_edge_values)
{
    check_int_pairs(BP_OP_ADD);
}

Test(binary, integer_sub_wraps_on_every_pair_of_edge_values)
{
    check_int_pairs(BP_OP_SUB);
}

Test(binary, integer_mul_wraps_on_every_pair_of_edge_values)
{
    check_int_pairs(BP_OP_MUL);
}

Test(binary, integer_div_matches_the_oracle_on_every_pair_of_edge_values)
{
    check_int_pairs(BP_OP_DIV);
}

Test(binary, integer_mod_matches_the_oracle_on_every_pair_of_edge_values)
{
    check_int_pairs(BP_OP_MOD);
}

Test(binary, integer_maximum_and_minimum_are_exact_on_edge_values)
{
    check_int_pairs(BP_OP_MAXIMUM);
    check_int_pairs(BP_OP_MINIMUM);
}

/* Spelled-out cases of the spec, one (dtype, a, b, want) per row. */
typedef struct icase { bp_dtype dt; int64_t a, b, want; } icase;

static void run_icases(bp_op op, const icase *c, size_t n)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (size_t k = 0; k < n; k++) {
            bp_tensor *a = bpt_tensor_i64(be, c[k].dt, 0, NULL, &c[k].a);
            bp_tensor *b = bpt_tensor_i64(be, c[k].dt, 0, NULL, &c[k].b), *o = NULL;
            BPT_OK(bp_binary(op, a, b, &o));
            char what[96];
            snprintf(what, sizeof what, "%s(%lld, %lld)", bp_op_name(op), (long long)c[k].a,
                     (long long)c[k].b);
            bpt_expect_i64(what, o, c[k].dt, 0, NULL, &c[k].want);
            bp_tensor_release(a);
            bp_tensor_release(b);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(binary, add_of_integers_wraps_around)
{
    static const icase c[] = {
        {BP_I32, INT32_MAX, 1, INT32_MIN}, {BP_I32, INT32_MIN, -1, INT32_MAX},
        {BP_I64, INT64_MAX, 1, INT64_MIN}, {BP_U8, 200, 100, 44},
        {BP_I8, 127, 1, -128},             {BP_U8, 0, 255, 255},
    };
    run_icases(BP_OP_ADD, c, sizeof c / sizeof c[0]);
}

Test(binary, mul_of_integers_wraps_around)
{
    static const icase c[] = {
        {BP_I32, 65536, 65536, 0},       {BP_I32, INT32_MAX, 2, -2},
        {BP_I64, INT64_MIN, -1, INT64_MIN}, {BP_U8, 16, 17, 16},
        {BP_I8, 64, 2, -128},            {BP_I64, 4294967296LL, 4294967296LL, 0},
    };
    run_icases(BP_OP_MUL, c, sizeof c / sizeof c[0]);
}

Test(binary, div_of_integers_truncates_toward_zero)
{
    static const icase c[] = {
        {BP_I32, 7, 2, 3},   {BP_I32, -7, 2, -3}, {BP_I32, 7, -2, -3}, {BP_I32, -7, -2, 3},
        {BP_I64, -9, 4, -2}, {BP_I8, -128, 3, -42}, {BP_U8, 255, 2, 127},
    };
    run_icases(BP_OP_DIV, c, sizeof c / sizeof c[0]);
}

Test(binary, integer_division_and_mod_by_zero_give_zero)
{
    static const icase c[] = {
        {BP_I32, 5, 0, 0}, {BP_I32, -5, 0, 0}, {BP_I32, INT32_MIN, 0, 0},
        {BP_I64, 1, 0, 0}, {BP_U8, 255, 0, 0}, {BP_I8, -128, 0, 0},
    };
    run_icases(BP_OP_DIV, c, sizeof c / sizeof c[0]);
    run_icases(BP_OP_MOD, c, sizeof c / sizeof c[0]);
}

Test(binary, int_min_divided_by_minus_one_wraps_to_int_min)
{
    static const icase d[] = {
        {BP_I32, INT32_MIN, -1, INT32_MIN}, {BP_I64, INT64_MIN, -1, INT64_MIN},
        {BP_I8, -128, -1, -128},
    };
    run_icases(BP_OP_DIV, d, sizeof d / sizeof d[0]);
    static const icase m[] = {
        {BP_I32, INT32_MIN, -1, 0}, {BP_I64, INT64_MIN, -1, 0}, {BP_I8, -128, -1, 0},
    };
    run_icases(BP_OP_MOD, m, sizeof m / sizeof m[0]);
}

Test(binary, mod_of_integers_has_the_sign_of_the_divisor)
{
    static const icase c[] = {
        {BP_I32, 7, 3, 1},   {BP_I32, -7, 3, 2},  {BP_I32, 7, -3, -2}, {BP_I32, -7, -3, -1},
        {BP_I64, -1, INT64_MAX, INT64_MAX - 1}, {BP_I8, -128, 127, 126}, {BP_U8, 200, 7, 4},
        {BP_I32, 6, -3, 0},
    };
    run_icases(BP_OP_MOD, c, sizeof c / sizeof c[0]);
}

Test(binary, pow_of_integers_wraps_and_negative_exponents_give_zero_unless_base_is_one)
{
    static const icase c[] = {
        {BP_I32, 2, 10, 1024},  {BP_I32, 2, 31, INT32_MIN}, {BP_I32, -2, 3, -8},
        {BP_I32, 0, 0, 1},      {BP_I32, 5, 0, 1},          {BP_I32, 2, -1, 0},
        {BP_I32, 1, -5, 1},     {BP_I32, -1, -3, -1},       {BP_I32, -1, -4, 1},
        {BP_I32, 0, -1, 0},     {BP_I8, -3, 3, -27},        {BP_U8, 2, 8, 0},
        {BP_U8, 3, 5, 243},     {BP_I64, 3, 40, 0},         {BP_I64, -7, 5, -16807},
    };
    icase cc[sizeof c / sizeof c[0]];
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        cc[k] = c[k];
        cc[k].want = cf_binary_i(BP_OP_POW, c[k].dt, c[k].a, c[k].b); /* 3^40 wraps mod 2^64 */
        if (!(c[k].dt == BP_I64 && c[k].a == 3))
            cr_assert_eq(cc[k].want, c[k].want, "oracle self-check %zu", k);
    }
    run_icases(BP_OP_POW, cc, sizeof cc / sizeof cc[0]);
}

/* ---- comparisons --------------------------------------------------------------- */

Test(binary, comparisons_give_bools_for_every_dtype)
{
    static const bp_op ops[] = {BP_OP_EQ, BP_OP_NE, BP_OP_LT, BP_OP_LE, BP_OP_GT, BP_OP_GE};
    /* -0 == 0; NaN compares unequal to everything (floats only) */
    const double a[] = {1, 2, 3, 0, -0.0, -1, 100, 0, 1, NAN, NAN};
    const double b[] = {2, 2, 1, -0.0, 0, 1, -100, 1, 0, 1, NAN};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            int64_t n = bp_dtype_is_float(dt) ? NV(a) : NV(a) - 2;
            for (int k = 0; k < 6; k++) {
                if (!bpt_supports(be, ops[k], dt))
                    continue;
                bcast_case(be, ops[k], dt, 1, &n, a, 1, &n, b, 1, &n, bpt_exact());
            }
        }
    }
    bp_context_destroy(ctx);
}

Test(binary, comparisons_of_i64_are_exact_beyond_two_to_the_53)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t n = 3;
        int64_t va[3] = {INT64_MAX, (1LL << 53) + 1, INT64_MIN + 1};
        int64_t vb[3] = {INT64_MAX - 1, 1LL << 53, INT64_MIN};
        bp_tensor *a = bpt_tensor_i64(be, BP_I64, 1, &n, va), *b = bpt_tensor_i64(be, BP_I64, 1, &n, vb);
        bp_tensor *gt = NULL, *eq = NULL;
        BPT_OK(bp_gt(a, b, &gt));
        BPT_OK(bp_eq(a, b, &eq));
        bpt_expect_i64("gt", gt, BP_BOOL, 1, &n, (int64_t[]){1, 1, 1});
        bpt_expect_i64("eq", eq, BP_BOOL, 1, &n, (int64_t[]){0, 0, 0});
        bp_tensor *s = NULL;
        BPT_OK(bp_sub(a, b, &s));
        bpt_expect_i64("sub", s, BP_I64, 1, &n, (int64_t[]){1, 1, 1});
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(gt);
        bp_tensor_release(eq);
        bp_tensor_release(s);
    }
    bp_context_destroy(ctx);
}

/* ---- logical ----------------------------------------------------------------------- */

Test(binary, logical_ops_follow_their_truth_tables)
{
    const double a[] = {0, 0, 1, 1}, b[] = {0, 1, 0, 1};
    int64_t n = 4;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bcast_case(be, BP_OP_LOGICAL_AND, BP_BOOL, 1, &n, a, 1, &n, b, 1, &n, bpt_exact());
        bcast_case(be, BP_OP_LOGICAL_OR, BP_BOOL, 1, &n, a, 1, &n, b, 1, &n, bpt_exact());
        bcast_case(be, BP_OP_LOGICAL_XOR, BP_BOOL, 1, &n, a, 1, &n, b, 1, &n, bpt_exact());
    }
    bp_context_destroy(ctx);
}

/* ---- broadcasting -------------------------------------------------------------------- */

static void bcast_both(int32_t ra, const int64_t *sa, int32_t rb, const int64_t *sb, int32_t ro,
                       const int64_t *so)
{
    double va[64], vb[64];
    for (int i = 0; i < 64; i++) {
        va[i] = i * 3 - 20;
        vb[i] = 50 - i * 7;
    }
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        /* sub is not symmetric: operand order shows */
        bcast_case(be, BP_OP_SUB, BP_F32, ra, sa, va, rb, sb, vb, ro, so, bpt_exact());
        bcast_case(be, BP_OP_SUB, BP_I32, ra, sa, va, rb, sb, vb, ro, so, bpt_exact());
        bcast_case(be, BP_OP_SUB, BP_F32, rb, sb, vb, ra, sa, va, ro, so, bpt_exact());
        bcast_case(be, BP_OP_LT, BP_I64, ra, sa, va, rb, sb, vb, ro, so, bpt_exact());
    }
    bp_context_destroy(ctx);
}

Test(binary, broadcasts_column_with_row)
{
    bcast_both(2, (int64_t[]){3, 1}, 2, (int64_t[]){1, 4}, 2, (int64_t[]){3, 4});
}

Test(binary, broadcasts_vector_against_leading_axes)
{
    bcast_both(1, (int64_t[]){5}, 3, (int64_t[]){2, 1, 5}, 3, (int64_t[]){2, 1, 5});
}

Test(binary, broadcasts_rank_zero_with_rank_three)
{
    bcast_both(0, NULL, 3, (int64_t[]){2, 3, 4}, 3, (int64_t[]){2, 3, 4});
}

Test(binary, broadcasts_empty_with_one_to_empty)
{
    bcast_both(2, (int64_t[]){0, 3}, 2, (int64_t[]){1, 3}, 2, (int64_t[]){0, 3});
}

Test(binary, rank_zero_with_rank_zero_is_rank_zero)
{
    bcast_both(0, NULL, 0, NULL, 0, NULL);
}

Test(binary, broadcasts_middle_axes_both_ways)
{
    bcast_both(3, (int64_t[]){2, 1, 4}, 3, (int64_t[]){1, 3, 1}, 3, (int64_t[]){2, 3, 4});
}

/* ---- IEEE specials --------------------------------------------------------------------- */

Test(binary, nan_and_inf_follow_ieee_for_every_float_dtype)
{
    struct { bp_op op; double a, b, want; } c[] = {
        {BP_OP_SUB, INFINITY, INFINITY, NAN}, {BP_OP_MUL, INFINITY, 0, NAN},
        {BP_OP_DIV, 1, 0, INFINITY},          {BP_OP_DIV, -1, 0, -INFINITY},
        {BP_OP_DIV, 0, 0, NAN},               {BP_OP_ADD, NAN, 1, NAN},
        {BP_OP_ADD, 1, NAN, NAN},             {BP_OP_MUL, NAN, 0, NAN},
        {BP_OP_ADD, INFINITY, 1, INFINITY},   {BP_OP_DIV, 1, INFINITY, 0},
        {BP_OP_MAXIMUM, NAN, 1, NAN},         {BP_OP_MAXIMUM, 1, NAN, NAN},
        {BP_OP_MINIMUM, NAN, 1, NAN},         {BP_OP_MINIMUM, 1, NAN, NAN},
        {BP_OP_MAXIMUM, -INFINITY, 1, 1},     {BP_OP_POW, NAN, 0, 1},
        {BP_OP_POW, 2, INFINITY, INFINITY},   {BP_OP_POW, 0, -1, INFINITY},
    };
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
                bp_tensor *a = bpt_scalar(be, dt, c[k].a), *b = bpt_scalar(be, dt, c[k].b), *o = NULL;
                BPT_OK(bp_binary(c[k].op, a, b, &o));
                char what[64];
                snprintf(what, sizeof what, "%s(%g, %g)", bp_op_name(c[k].op), c[k].a, c[k].b);
                bpt_expect(what, o, dt, 0, NULL, &c[k].want, bpt_exact());
                bp_tensor_release(a);
                bp_tensor_release(b);
                bp_tensor_release(o);
            }
        }
    }
    bp_context_destroy(ctx);
}

Test(binary, negative_zero_follows_ieee_for_every_float_dtype)
{
    struct { bp_op op; double a, b; int neg; } c[] = {
        {BP_OP_ADD, -0.0, -0.0, 1}, {BP_OP_ADD, 0.0, -0.0, 0}, {BP_OP_MUL, 0.0, -1, 1},
        {BP_OP_SUB, -0.0, 0.0, 1},  {BP_OP_DIV, -0.0, 5, 1},   {BP_OP_MUL, -0.0, -0.0, 0},
    };
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
                bp_tensor *a = bpt_scalar(be, dt, c[k].a), *b = bpt_scalar(be, dt, c[k].b), *o = NULL;
                BPT_OK(bp_binary(c[k].op, a, b, &o));
                char what[64];
                snprintf(what, sizeof what, "%s(%s0, %g)", bp_op_name(c[k].op),
                         signbit(c[k].a) ? "-" : "", c[k].b);
                bpt_expect(what, o, dt, 0, NULL, (double[]){0.0}, bpt_exact());
                bpt_expect_signbits(what, o, &c[k].neg);
                bp_tensor_release(a);
                bp_tensor_release(b);
                bp_tensor_release(o);
            }
        }
    }
    bp_context_destroy(ctx);
}

Test(binary, half_precision_sums_round_to_nearest_even)
{
    /* f16: 1 + 2^-11 is a tie -> 1; 1 + 3*2^-11 is a tie -> 1 + 2^-9;
     * 65504 + 16 is a tie at the top -> inf; 65504 + 15 -> 65504.
     * bf16: 1 + 2^-8 -> 1; 1 + 3*2^-8 -> 1 + 2^-6; 256 + 1 -> 256. */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t n = 4, m = 3;
        double ha[] = {1, 1, 65504, 65504}, hb[] = {0x1p-11, 0x3p-11, 16, 15};
        bp_tensor *a = bpt_vec(be, BP_F16, n, ha), *b = bpt_vec(be, BP_F16, n, hb), *o = NULL;
        BPT_OK(bp_add(a, b, &o));
        bpt_expect("add", o, BP_F16, 1, &n, (double[]){1, 1 + 0x1p-9, INFINITY, 65504},
                   bpt_exact());
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(o);
        double ba[] = {1, 1, 256}, bb[] = {0x1p-8, 0x3p-8, 1};
        a = bpt_vec(be, BP_BF16, m, ba);
        b = bpt_vec(be, BP_BF16, m, bb);
        BPT_OK(bp_add(a, b, &o));
        bpt_expect("add", o, BP_BF16, 1, &m, (double[]){1, 1 + 0x1p-6, 256}, bpt_exact());
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(o);
    }
    bp_context_destroy(ctx);
}

/* ---- where ----------------------------------------------------------------------------- */

Test(binary, where_selects_and_broadcasts_for_every_dtype)
{
    /* cond (3,1), a (1,4), b rank 0 -> (3,4) */
    int64_t sc[2] = {3, 1}, sa[2] = {1, 4}, so[2] = {3, 4};
    double vc[3] = {1, 0, 1}, va[4] = {1, 0, -3, 100}, vb = 7;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            if (!bpt_supports(be, BP_OP_WHERE, dt))
                continue;
            cf_array xc = bpt_array(BP_BOOL, 2, sc, vc), xa = bpt_array(dt, 2, sa, va);
            cf_array xb = bpt_array(dt, 0, NULL, &vb), want;
            cr_assert(cf_oracle_where(&xc, &xa, &xb, &want));
            bp_tensor *c = bpt_tensor_of(be, &xc), *a = bpt_tensor_of(be, &xa);
            bp_tensor *b = bpt_tensor_of(be, &xb), *o = NULL;
            BPT_OK(bp_where(c, a, b, &o));
            bpt_expect_meta("where", o, dt, 2, so);
            bpt_expect_array("where", o, &want, bpt_exact());
            bp_tensor_release(c);
            bp_tensor_release(a);
            bp_tensor_release(b);
            bp_tensor_release(o);
            cf_array_free(&xc);
            cf_array_free(&xa);
            cf_array_free(&xb);
            cf_array_free(&want);
        }
    }
    bp_context_destroy(ctx);
}

Test(binary, where_keeps_nan_and_i64_exact)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t n = 2;
        bp_tensor *c = bpt_vec(be, BP_BOOL, 2, (double[]){1, 0});
        bp_tensor *a = bpt_tensor_i64(be, BP_I64, 1, &n, (int64_t[]){INT64_MAX, 0});
        bp_tensor *b = bpt_tensor_i64(be, BP_I64, 1, &n, (int64_t[]){0, INT64_MIN + 1}), *o = NULL;
        BPT_OK(bp_where(c, a, b, &o));
        bpt_expect_i64("where", o, BP_I64, 1, &n, (int64_t[]){INT64_MAX, INT64_MIN + 1});
        bp_tensor *fa = bpt_vec(be, BP_F32, 2, (double[]){NAN, 1});
        bp_tensor *fb = bpt_vec(be, BP_F32, 2, (double[]){2, -0.0}), *fo = NULL;
        BPT_OK(bp_where(c, fa, fb, &fo));
        bpt_expect("where", fo, BP_F32, 1, &n, (double[]){NAN, -0.0}, bpt_exact());
        bpt_expect_signbits("where", fo, (int[]){0, 1});
        bp_tensor_release(c);
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(o);
        bp_tensor_release(fa);
        bp_tensor_release(fb);
        bp_tensor_release(fo);
    }
    bp_context_destroy(ctx);
}

Test(binary, empty_operands_give_empty_results)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t s[2] = {2, 0};
        bp_tensor *a = bpt_tensor(be, BP_I32, 2, s, NULL), *b = bpt_scalar(be, BP_I32, 3), *o = NULL;
        BPT_OK(bp_mul(a, b, &o));
        bpt_expect_meta("mul (2,0) x ()", o, BP_I32, 2, s);
        bp_tensor *e = NULL;
        BPT_OK(bp_eq(a, b, &e));
        bpt_expect_meta("eq (2,0) x ()", e, BP_BOOL, 2, s);
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(o);
        bp_tensor_release(e);
    }
    bp_context_destroy(ctx);
}

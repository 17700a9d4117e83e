/* bp_matmul: NumPy matmul semantics (1-D promotion, broadcast batch
 * dimensions), every numeric dtype, every backend, against the oracle
 * (cf_oracle_matmul) in double (floats) or wrapping int64 (integers). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

/* Small integers: every product and partial sum exact in every float dtype
 * (u8 stores the negatives as 0; integers wrap). */
static void small_ints(double *x, int64_t n, int seed)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = (double)(((i + 1) * (seed * 2 + 5)) % 7) - 3.0;
}

/* One exact case (small ints) for dtype dt: the result must have shape so
 * and the oracle's values. */
static void exact_case(bp_backend *be, bp_dtype dt, int32_t ra, const int64_t *sa, int32_t rb,
                       const int64_t *sb, int32_t ro, const int64_t *so)
{
    int64_t na = cf_numel(ra, sa), nb = cf_numel(rb, sb);
    double *a = calloc((size_t)na + 1, 8), *b = calloc((size_t)nb + 1, 8);
    cr_assert(a && b);
    small_ints(a, na, 1);
    small_ints(b, nb, 2);
    cf_array xa = bpt_array(dt, ra, sa, a), xb = bpt_array(dt, rb, sb, b), want;
    cr_assert(cf_oracle_matmul(&xa, &xb, &want, NULL, NULL));
    bp_tensor *ta = bpt_tensor_of(be, &xa), *tb = bpt_tensor_of(be, &xb), *o = NULL;
    BPT_OK(bp_matmul(ta, tb, &o));
    bpt_expect_meta("matmul", o, dt, ro, so);
    bpt_expect_array("matmul", o, &want, bpt_exact());
    bp_tensor_release(ta);
    bp_tensor_release(tb);
    bp_tensor_release(o);
    cf_array_free(&xa);
    cf_array_free(&xb);
    cf_array_free(&want);
    free(a);
    free(b);
}

static void exact_all_dtypes(int32_t ra, const int64_t *sa, int32_t rb, const int64_t *sb,
                             int32_t ro, const int64_t *so)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            if (!bpt_supports(be, BP_OP_MATMUL, dt))
                continue;
            exact_case(be, dt, ra, sa, rb, sb, ro, so);
        }
    }
    bp_context_destroy(ctx);
}

Test(matmul, two_by_three_times_three_by_two_for_every_numeric_dtype)
{
    exact_all_dtypes(2, (int64_t[]){2, 3}, 2, (int64_t[]){3, 2}, 2, (int64_t[]){2, 2});
}

Test(matmul, vector_times_matrix_drops_the_promoted_axis)
{
    /* (K,) x (K,N) -> (N,) */
    exact_all_dtypes(1, (int64_t[]){5}, 2, (int64_t[]){5, 3}, 1, (int64_t[]){3});
}

Test(matmul, matrix_times_vector_drops_the_promoted_axis)
{
    /* (M,K) x (K,) -> (M,) */
    exact_all_dtypes(2, (int64_t[]){4, 5}, 1, (int64_t[]){5}, 1, (int64_t[]){4});
}

Test(matmul, vector_times_vector_is_rank_zero)
{
    /* (K,) x (K,) -> () */
    exact_all_dtypes(1, (int64_t[]){7}, 1, (int64_t[]){7}, 0, NULL);
}

Test(matmul, batch_dimensions_broadcast)
{
    /* (2,1,3,4) x (5,4,2) -> (2,5,3,2) */
    exact_all_dtypes(4, (int64_t[]){2, 1, 3, 4}, 3, (int64_t[]){5, 4, 2}, 4,
                     (int64_t[]){2, 5, 3, 2});
}

Test(matmul, vector_times_batched_matrix_broadcasts)
{
    /* (4,) x (2,4,3) -> (2,3) and (2,3,4) x (4,) -> (2,3) */
    exact_all_dtypes(1, (int64_t[]){4}, 3, (int64_t[]){2, 4, 3}, 2, (int64_t[]){2, 3});
    exact_all_dtypes(3, (int64_t[]){2, 3, 4}, 1, (int64_t[]){4}, 2, (int64_t[]){2, 3});
}

Test(matmul, equal_batch_dimensions_pair_up)
{
    exact_all_dtypes(3, (int64_t[]){3, 2, 4}, 3, (int64_t[]){3, 4, 5}, 3, (int64_t[]){3, 2, 5});
}

Test(matmul, sixty_four_cubed_of_small_integers_is_exact_in_floats)
{
    /* any summation order is exact: every partial sum is a small integer */
    exact_all_dtypes(2, (int64_t[]){64, 64}, 2, (int64_t[]){64, 64}, 2, (int64_t[]){64, 64});
}

Test(matmul, non_tile_multiple_sizes_match_the_double_oracle)
{
    enum { M = 67, K = 129, N = 33 };
    double *a = malloc(M * K * 8), *b = malloc(K * N * 8);
    cr_assert(a && b);
    bpt_fill_random(a, M * K, 11, -1.0, 1.0);
    bpt_fill_random(b, K * N, 12, -2.0, 2.0);
    int64_t sa[2] = {M, K}, sb[2] = {K, N}, so[2] = {M, N};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            if (!bpt_supports(be, BP_OP_MATMUL, dt))
                continue;
            cf_array xa = bpt_array(dt, 2, sa, a), xb = bpt_array(dt, 2, sb, b), w;
            double *absum = NULL; /* per element, the sum of |a b| */
            cr_assert(cf_oracle_matmul(&xa, &xb, &w, &absum, NULL));
            const double *want = w.f;
            bp_tensor *ta = bpt_tensor_of(be, &xa), *tb = bpt_tensor_of(be, &xb);
            bp_tensor *o = NULL;
            BPT_OK(bp_matmul(ta, tb, &o));
            bpt_expect_meta("matmul 67x129x33", o, dt, 2, so);
            double *g = bpt_read(o);
            /* f64: ~K eps; f32 and the halves (accumulated in f32): ~K 2^-24,
             * plus one rounding to the output type */
            double rel = dt == BP_F64 ? 1e-13 : 1e-5;
            for (int i = 0; i < M * N; i++) {
                double tol = rel * absum[i] + (dt == BP_F64 || dt == BP_F32 ? 0.0 : cf_ulp(dt, want[i]));
                if (dt == BP_F32)
                    tol += cf_ulp(dt, want[i]) * 0.5;
                if (!(fabs(g[i] - want[i]) <= tol)) {
                    cr_expect(false, "matmul 67x129x33 [%s] on %s: element %d (%d,%d): expected %.10g, "
                            "got %.10g (tolerance %.3g)",
                            bp_dtype_name(dt), bp_backend_name(be), i, i / N, i % N, want[i],
                            g[i], tol);
                    break;
                }
            }
            free(g);
            free(absum);
            cf_array_free(&xa);
            cf_array_free(&xb);
            cf_array_free(&w);
            bp_tensor_release(ta);
            bp_tensor_release(tb);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
    free(a);
    free(b);
}

Test(matmul, integer_matmul_is_exact_and_wraps)
{
    /* full-range values: the result is the exact sum of products mod 2^bits */
    int64_t sa[3] = {2, 5, 9}, sb[2] = {9, 6}, so[3] = {2, 5, 6};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_int_dtypes[d];
            if (!bpt_supports(be, BP_OP_MATMUL, dt))
                continue;
            int64_t a[90], b[54];
            uint64_t s = 99;
            for (int i = 0; i < 90; i++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                a[i] = cf_wrap(dt, (int64_t)(s >> 3));
            }
            for (int i = 0; i < 54; i++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                b[i] = cf_wrap(dt, (int64_t)(s >> 5));
            }
            a[0] = cf_int_min(dt);
            b[0] = cf_int_max(dt);
            cf_array xa = bpt_array_i64(dt, 3, sa, a), xb = bpt_array_i64(dt, 2, sb, b), want;
            cr_assert(cf_oracle_matmul(&xa, &xb, &want, NULL, NULL));
            bp_tensor *ta = bpt_tensor_of(be, &xa), *tb = bpt_tensor_of(be, &xb);
            bp_tensor *o = NULL;
            BPT_OK(bp_matmul(ta, tb, &o));
            bpt_expect_meta("integer matmul", o, dt, 3, so);
            bpt_expect_array("integer matmul", o, &want, bpt_exact());
            cf_array_free(&xa);
            cf_array_free(&xb);
            cf_array_free(&want);
            bp_tensor_release(ta);
            bp_tensor_release(tb);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(matmul, i8_accumulation_wraps_like_i8)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        /* 100*2 + 100*1 = 300 -> 44 in i8; i32: 65536 * 65536 -> 0 */
        bp_tensor *a = bpt_vec(be, BP_I8, 2, (double[]){100, 100});
        bp_tensor *b = bpt_vec(be, BP_I8, 2, (double[]){2, 1}), *o = NULL;
        BPT_OK(bp_matmul(a, b, &o));
        bpt_expect_i64("i8 dot", o, BP_I8, 0, NULL, (int64_t[]){44});
        bp_tensor *c = bpt_vec(be, BP_I32, 1, (double[]){65536}), *d = NULL, *e = NULL;
        int64_t s11[2] = {1, 1};
        BPT_OK(bp_reshape(c, 2, s11, &d));
        BPT_OK(bp_matmul(d, d, &e));
        bpt_expect_i64("i32 1x1", e, BP_I32, 2, s11, (int64_t[]){0});
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(o);
        bp_tensor_release(c);
        bp_tensor_release(d);
        bp_tensor_release(e);
    }
    bp_context_destroy(ctx);
}

Test(matmul, empty_inner_dimension_gives_zeros)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            int64_t sa[2] = {2, 0}, sb[2] = {0, 3}, so[2] = {2, 3};
            bp_tensor *a = bpt_tensor(be, dt, 2, sa, NULL), *b = bpt_tensor(be, dt, 2, sb, NULL);
            bp_tensor *o = NULL;
            BPT_OK(bp_matmul(a, b, &o));
            bpt_expect("matmul (2,0)x(0,3)", o, dt, 2, so, (double[]){0, 0, 0, 0, 0, 0}, bpt_exact());
            bp_tensor_release(a);
            bp_tensor_release(b);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(matmul, empty_outer_dimension_gives_an_empty_result)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t sa[2] = {0, 3}, sb[2] = {3, 2}, so[2] = {0, 2};
        bp_tensor *a = bpt_tensor(be, BP_F32, 2, sa, NULL);
        bp_tensor *b = bpt_tensor(be, BP_F32, 2, sb, (double[]){1, 2, 3, 4, 5, 6}), *o = NULL;
        BPT_OK(bp_matmul(a, b, &o));
        bpt_expect_meta("matmul (0,3)x(3,2)", o, BP_F32, 2, so);
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(o);
    }
    bp_context_destroy(ctx);
}

Test(matmul, nan_and_inf_propagate)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            int64_t s[2] = {2, 2};
            bp_tensor *a = bpt_tensor(be, dt, 2, s, (double[]){NAN, 0, 1, INFINITY});
            bp_tensor *b = bpt_tensor(be, dt, 2, s, (double[]){1, 0, 0, 1}), *o = NULL;
            BPT_OK(bp_matmul(a, b, &o));
            /* [NaN*1 + 0*0, NaN*0 + 0*1; 1*1 + inf*0, 1*0 + inf*1] */
            bpt_expect("matmul specials", o, dt, 2, s, (double[]){NAN, NAN, NAN, INFINITY},
                       bpt_exact());
            bp_tensor_release(a);
            bp_tensor_release(b);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(matmul, inner_dimension_mismatch_is_a_shape_error)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t sa[2] = {2, 3}, sb[2] = {4, 2}, sc[3] = {2, 3, 3}, sd[3] = {3, 3, 2};
        bp_tensor *a = bpt_tensor(be, BP_F32, 2, sa, (double[6]){0});
        bp_tensor *b = bpt_tensor(be, BP_F32, 2, sb, (double[8]){0});
        bp_tensor *c = bpt_tensor(be, BP_F32, 3, sc, (double[18]){0});
        bp_tensor *d = bpt_tensor(be, BP_F32, 3, sd, (double[18]){0});
        bp_tensor *s = bpt_scalar(be, BP_F32, 1), *o = NULL;
        BPT_FAILS(BP_ERR_SHAPE, bp_matmul(a, b, &o));
        cr_expect_null(o);
        BPT_FAILS(BP_ERR_SHAPE, bp_matmul(c, d, &o)); /* batch 2 vs 3 */
        cr_expect_null(o);
        BPT_FAILS(BP_ERR_SHAPE, bp_matmul(s, a, &o)); /* rank 0 */
        cr_expect_null(o);
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(c);
        bp_tensor_release(d);
        bp_tensor_release(s);
    }
    bp_context_destroy(ctx);
}

/* gemm (ONNX Gemm): alpha op(a) op(b) + beta c with the transposes as
 * views, c broadcast, every numeric dtype, on every backend against the
 * oracle (cf_oracle_gemm), and against matmul of the explicit transpose. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpt.h"
#include "expect.h"

/* Tolerance of a K-term product: exact for integers, else a few eps * K
 * relative, as the matmul tests allow. */
static bpt_tol tol_for(bp_dtype dt)
{
    if (dt == BP_F64)
        return (bpt_tol){1e-12, 1e-12, 0};
    if (dt == BP_F32)
        return (bpt_tol){2e-5, 2e-5, 0};
    return (bpt_tol){0, 0, 2};
}

/* a (M, K) or (K, M) when trans_a; b (K, N) or (N, K); c of shape cs. */
static void check(bp_backend *be, bp_dtype dt, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                  int32_t crank, const int64_t *cshape, double alpha, double beta)
{
    int64_t sa[2] = {ta ? k : m, ta ? m : k}, sb[2] = {tb ? n : k, tb ? k : n};
    int64_t na = m * k, nb = k * n, nc = 1;
    for (int32_t d = 0; d < crank; d++)
        nc *= cshape[d];
    double *av = malloc((size_t)(na + nb + nc + 1) * sizeof *av);
    cr_assert_not_null(av);
    bool is_float = cf_is_float(dt);
    bpt_fill_random(av, na + nb + nc, (uint64_t)(m * 31 + n * 7 + k), is_float ? -1 : -9,
                    is_float ? 1 : 9);
    if (!is_float)
        for (int64_t i = 0; i < na + nb + nc; i++)
            av[i] = trunc(av[i]);
    cf_array a = bpt_array(dt, 2, sa, av), b = bpt_array(dt, 2, sb, av + na), c = {0}, want;
    bool has_c = crank >= 0;
    if (has_c)
        c = bpt_array(dt, crank, cshape, av + na + nb);
    cr_assert(cf_oracle_gemm(&a, &b, has_c ? &c : NULL, alpha, beta, ta, tb, &want, NULL, NULL));
    bp_tensor *t_a = bpt_tensor_of(be, &a), *t_b = bpt_tensor_of(be, &b);
    bp_tensor *t_c = has_c ? bpt_tensor_of(be, &c) : NULL, *o = NULL;
    BPT_OK(bp_gemm(t_a, t_b, t_c, alpha, beta, ta, tb, &o));
    char what[128];
    snprintf(what, sizeof what, "gemm M%lld N%lld K%lld trans %d%d c rank %d alpha %g beta %g",
             (long long)m, (long long)n, (long long)k, ta, tb, crank, alpha, beta);
    bpt_tol tol = tol_for(dt);
    if (dt == BP_F32 || dt == BP_F64) /* relative to the terms: k sums of |a b| <= 1 */
        tol.atol *= (double)(k + 1);
    bpt_expect_array(what, o, &want, is_float ? tol : bpt_exact());
    bp_tensor_release(t_a), bp_tensor_release(t_b), bp_tensor_release(t_c), bp_tensor_release(o);
    cf_array_free(&a), cf_array_free(&b), cf_array_free(&want);
    if (has_c)
        cf_array_free(&c);
    free(av);
}

Test(gemm, every_transpose_combination_for_every_numeric_dtype)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            if (!bpt_supports(be, BP_OP_GEMM, dt))
                continue;
            for (int t = 0; t < 4; t++)
                check(be, dt, 5, 7, 3, t & 1, t & 2, 2, (const int64_t[]){5, 7}, 1, 1);
        }
    }
    bp_context_destroy(ctx);
}

Test(gemm, c_broadcasts_from_a_row_a_column_or_a_scalar)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            check(be, dt, 4, 6, 5, false, true, 1, (const int64_t[]){6}, 1, 1);
            check(be, dt, 4, 6, 5, false, false, 2, (const int64_t[]){4, 1}, 1, 1);
            check(be, dt, 4, 6, 5, true, false, 0, NULL, 1, 1);
            check(be, dt, 4, 6, 5, false, false, -1, NULL, 1, 1); /* no c */
        }
    }
    bp_context_destroy(ctx);
}

Test(gemm, alpha_and_beta_scale_the_product_and_c)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            check(be, dt, 3, 4, 6, false, true, 1, (const int64_t[]){4}, 0.5, -2);
            check(be, dt, 3, 4, 6, true, true, 2, (const int64_t[]){3, 4}, 3, 0.25);
            check(be, dt, 3, 4, 6, false, false, 2, (const int64_t[]){3, 4}, -1, 0);
            check(be, dt, 3, 4, 6, false, false, 2, (const int64_t[]){3, 4}, 0, 2);
        }
    }
    bp_context_destroy(ctx);
}

Test(gemm, beta_zero_never_reads_c_and_alpha_zero_never_reads_a_and_b)
{
    /* the BLAS convention (ops.h): c's NaN does not reach the result when
     * beta is 0, nor a's and b's when alpha is 0 */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            bp_tensor *a = bpt_tensor(be, dt, 2, (const int64_t[]){2, 2},
                                      (const double[]){1, 2, 3, 4});
            bp_tensor *n = bpt_tensor(be, dt, 2, (const int64_t[]){2, 2},
                                      (const double[]){NAN, INFINITY, NAN, 1});
            bp_tensor *o = NULL;
            BPT_OK(bp_gemm(a, a, n, 1, 0, false, false, &o));
            bpt_expect("gemm beta 0 with a NaN c", o, dt, 2, (const int64_t[]){2, 2},
                       (const double[]){7, 10, 15, 22}, bpt_exact());
            bp_tensor_release(o);
            BPT_OK(bp_gemm(n, n, a, 0, 2, false, false, &o));
            bpt_expect("gemm alpha 0 with NaN a and b", o, dt, 2, (const int64_t[]){2, 2},
                       (const double[]){2, 4, 6, 8}, bpt_exact());
            bp_tensor_release(o), bp_tensor_release(a), bp_tensor_release(n);
        }
    }
    bp_context_destroy(ctx);
}

Test(gemm, gemm_trans_b_matches_matmul_of_the_transpose)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    double xv[7 * 33], wv[5 * 33];
    bpt_fill_random(xv, 7 * 33, 1, -1, 1);
    bpt_fill_random(wv, 5 * 33, 2, -1, 1);
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = cf_float_dtypes[d];
            bp_tensor *x = bpt_tensor(be, dt, 2, (const int64_t[]){7, 33}, xv);
            bp_tensor *w = bpt_tensor(be, dt, 2, (const int64_t[]){5, 33}, wv);
            bp_tensor *wt = NULL, *ref = NULL, *o = NULL;
            BPT_OK(bp_transpose(w, NULL, &wt));
            BPT_OK(bp_matmul(x, wt, &ref));
            BPT_OK(bp_gemm(x, w, NULL, 1, 0, false, true, &o));
            double *want = bpt_read(ref);
            bpt_expect("x @ w.T by gemm against matmul", o, dt, 2, (const int64_t[]){7, 5}, want,
                       tol_for(dt));
            free(want);
            bp_tensor_release(x), bp_tensor_release(w), bp_tensor_release(wt);
            bp_tensor_release(ref), bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(gemm, empty_and_k_zero_products)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            check(be, dt, 3, 4, 0, false, false, 1, (const int64_t[]){4}, 1, 1); /* K = 0: beta c */
            check(be, dt, 0, 4, 3, false, true, -1, NULL, 1, 0);
            check(be, dt, 3, 0, 3, true, false, -1, NULL, 1, 0);
        }
    }
    bp_context_destroy(ctx);
}

Test(gemm, large_products_match_the_oracle)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        check(be, BP_F32, 64, 65, 257, false, true, 1, (const int64_t[]){65}, 1, 1);
        check(be, BP_F64, 64, 65, 257, true, false, 2, (const int64_t[]){64, 65}, 0.5, 0.5);
        check(be, BP_BF16, 33, 17, 70, false, true, 1, (const int64_t[]){17}, 1, 1);
        check(be, BP_I32, 20, 30, 40, true, true, 0, NULL, 2, 3);
    }
    bp_context_destroy(ctx);
}

/* blas_cpu cuts a gemm into blocks of C's rows or columns (the longer
 * side), one single-threaded OpenBLAS call each on its pool: with three
 * threads (six blocks, the last one short), every transpose, alpha and
 * beta with c broadcast, each block must read its own rows of op(a) or
 * columns of op(b). */
Test(gemm, products_cut_into_blocks_for_three_threads_match_the_oracle)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\nthreads = 3\n", "blas_cpu", &be);
    for (int d = 0; d < 2; d++) {
        bp_dtype dt = d ? BP_F64 : BP_F32;
        for (int t = 0; t < 4; t++) {
            bool ta = t & 1, tb = t & 2;
            /* blocks of rows, then of columns */
            check(be, dt, 300, 40, 150, ta, tb, 1, (const int64_t[]){40}, 0.5, 2);
            check(be, dt, 24, 700, 120, ta, tb, 2, (const int64_t[]){24, 1}, 1.5, -1);
            check(be, dt, 200, 30, 310, ta, tb, -1, NULL, 1, 0);
        }
    }
    bp_context_destroy(ctx);
}

/* One row or one column of C (blas_cpu: a gemv, not a gemm), every
 * transpose, with and without C, and a NaN C that beta 0 must not read. */
Test(gemm, products_with_one_row_or_one_column_match_the_oracle)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 2; d++) {
            bp_dtype dt = d ? BP_F64 : BP_F32;
            for (int t = 0; t < 4; t++) {
                bool ta = t & 1, tb = t & 2;
                check(be, dt, 1, 37, 29, ta, tb, -1, NULL, 1, 0);
                check(be, dt, 1, 37, 29, ta, tb, 1, (const int64_t[]){37}, 0.5, 2);
                check(be, dt, 41, 1, 23, ta, tb, -1, NULL, -1.5, 0);
                check(be, dt, 41, 1, 23, ta, tb, 2, (const int64_t[]){41, 1}, 1, -1);
                check(be, dt, 1, 1, 50, ta, tb, 0, NULL, 2, 1);
            }
            bp_tensor *a = bpt_tensor(be, dt, 2, (const int64_t[]){1, 2}, (const double[]){1, 2});
            bp_tensor *b = bpt_tensor(be, dt, 2, (const int64_t[]){2, 2},
                                      (const double[]){1, 2, 3, 4});
            bp_tensor *n = bpt_tensor(be, dt, 2, (const int64_t[]){1, 2},
                                      (const double[]){NAN, INFINITY});
            bp_tensor *o = NULL;
            BPT_OK(bp_gemm(a, b, n, 1, 0, false, false, &o));
            bpt_expect("one row, beta 0 with a NaN c", o, dt, 2, (const int64_t[]){1, 2},
                       (const double[]){7, 10}, bpt_exact());
            bp_tensor_release(o);
            bp_tensor *nt = bpt_tensor(be, dt, 2, (const int64_t[]){2, 1},
                                       (const double[]){NAN, -INFINITY});
            BPT_OK(bp_gemm(b, a, nt, 1, 0, false, true, &o)); /* (2, 2) . (2, 1): one column */
            bpt_expect("one column, beta 0 with a NaN c", o, dt, 2, (const int64_t[]){2, 1},
                       (const double[]){5, 11}, bpt_exact());
            bp_tensor_release(o), bp_tensor_release(a), bp_tensor_release(b), bp_tensor_release(n);
            bp_tensor_release(nt);
        }
    }
    bp_context_destroy(ctx);
}

Test(gemm, integer_alpha_beta_that_are_not_whole_go_through_double)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *a = bpt_tensor(be, BP_I32, 2, (const int64_t[]){1, 2}, (const double[]){3, 4});
        bp_tensor *b = bpt_tensor(be, BP_I32, 2, (const int64_t[]){2, 1}, (const double[]){5, 6});
        bp_tensor *c = bpt_scalar(be, BP_I32, 7), *o = NULL;
        /* 0.5 * 39 + 1.5 * 7 = 30 */
        BPT_OK(bp_gemm(a, b, c, 0.5, 1.5, false, false, &o));
        bpt_expect_i64("i32 gemm, alpha 0.5, beta 1.5", o, BP_I32, 2, (const int64_t[]){1, 1},
                       (const int64_t[]){30});
        bp_tensor_release(o);
        /* -0.25 * 39 = -9.75 truncates toward zero */
        BPT_OK(bp_gemm(a, b, NULL, -0.25, 0, false, false, &o));
        bpt_expect_i64("i32 gemm, alpha -0.25", o, BP_I32, 2, (const int64_t[]){1, 1},
                       (const int64_t[]){-9});
        bp_tensor_release(o), bp_tensor_release(a), bp_tensor_release(b), bp_tensor_release(c);
    }
    bp_context_destroy(ctx);
}

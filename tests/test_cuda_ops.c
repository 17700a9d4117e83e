/* The cuda plugin's op entry of ABI 1.4, its deferred index errors and its
 * DLPack exchange, on a GPU: small cases whose answers are written out by
 * hand (or computed here in double), so that they hold whatever the other
 * backends do. Every test is skipped where the cuda backend does not open
 * (no driver, no device, not built); ctest runs them on the GPU machine
 * (../shared/gpu: the ctest stage). */
#include <dlpack/dlpack.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

/* A default context and its cuda backend, or skip the test. */
static bp_context *cuda(bp_backend **be)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    bp_context *ctx = bpt_context();
    if (bp_backend_get(ctx, "cuda", be) != BP_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", bp_last_error());
        bp_context_destroy(ctx);
        cr_skip_test("the cuda backend is not available here: %s", why);
    }
    return ctx;
}

static const int64_t s6[1] = {6};

/* ---- elementwise ---------------------------------------------------------------- */

static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static double silu(double x) { return x / (1.0 + exp(-x)); }

Test(cuda_ops, float_functions_follow_their_formulas)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const double xv[6] = {-2, -0.5, 0, 0.5, 2, NAN}, mid[6] = {-0.9, -0.5, 0, 0.5, 0.9, NAN};
    bp_tensor *x = bpt_tensor(be, BP_F32, 1, s6, xv), *xm = bpt_tensor(be, BP_F32, 1, s6, mid);
    bp_tensor *o = NULL;
    double want[6];
    for (int i = 0; i < 6; i++)
        want[i] = xv[i] * xv[i];
    BPT_OK(bp_square(x, &o));
    bpt_expect("square", o, BP_F32, 1, s6, want, bpt_exact());
    bp_tensor_release(o);
    for (int i = 0; i < 6; i++)
        want[i] = softplus(xv[i]);
    BPT_OK(bp_softplus(x, &o));
    bpt_expect("softplus", o, BP_F32, 1, s6, want, bpt_math(BP_F32));
    bp_tensor_release(o);
    for (int i = 0; i < 6; i++)
        want[i] = silu(xv[i]);
    BPT_OK(bp_silu(x, &o));
    bpt_expect("silu", o, BP_F32, 1, s6, want, (bpt_tol){8e-7, 1e-30, 0});
    bp_tensor_release(o);
    for (int i = 0; i < 6; i++) /* of the inputs as f32 holds them */
        want[i] = atanh((double)(float)mid[i]);
    BPT_OK(bp_atanh(xm, &o));
    bpt_expect("atanh", o, BP_F32, 1, s6, want, bpt_math(BP_F32));
    bp_tensor_release(o);
    const double hs[6] = {0.1, 0.4, 0.5, 0.6, 0.9, NAN}; /* NaN stays NaN */
    BPT_OK(bp_hard_sigmoid(x, 0.2, 0.5, &o));
    bpt_expect("hard_sigmoid", o, BP_F32, 1, s6, hs, (bpt_tol){1e-7, 1e-7, 0});
    bp_tensor_release(o);
    const double lr[6] = {-0.2, -0.05, 0, 0.5, 2, NAN}, tr[6] = {0, 0, 0, 0, 2, 0};
    BPT_OK(bp_leaky_relu(x, 0.1, &o));
    bpt_expect("leaky_relu", o, BP_F32, 1, s6, lr, bpt_math(BP_F32));
    bp_tensor_release(o);
    BPT_OK(bp_thresholded_relu(x, 1.0, &o));
    bpt_expect("thresholded_relu", o, BP_F32, 1, s6, tr, bpt_exact());
    bp_tensor_release(o);
    const double sh[6] = {-1.5, 0, 0, 0, 1.5, 0};
    BPT_OK(bp_shrink(x, 0.5, 1.0, &o));
    bpt_expect("shrink", o, BP_F32, 1, s6, sh, bpt_exact());
    bp_tensor_release(o);
    for (int i = 0; i < 6; i++)
        want[i] = xv[i] < 0 ? 1.5 * expm1(xv[i]) : xv[i];
    BPT_OK(bp_elu(x, 1.5, &o));
    bpt_expect("elu", o, BP_F32, 1, s6, want, (bpt_tol){8e-7, 1e-30, 0});
    bp_tensor_release(o);
    bp_tensor_release(x);
    bp_tensor_release(xm);
    bp_context_destroy(ctx);
}

Test(cuda_ops, integer_functions_wrap_and_shift_as_ops_h_says)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t a[6] = {50000, 5, -7, 7, INT32_MIN, -8};
    const int64_t b[6] = {1, 31, 3, 0, -1, 40};
    bp_tensor *ta = bpt_tensor_i64(be, BP_I32, 1, s6, a), *tb = bpt_tensor_i64(be, BP_I32, 1, s6, b);
    bp_tensor *o = NULL;
    const int64_t sq[6] = {-1794967296, 25, 49, 49, 0, 64};
    BPT_OK(bp_square(ta, &o));
    bpt_expect_i64("square", o, BP_I32, 1, s6, sq);
    bp_tensor_release(o);
    const int64_t fm[6] = {0, 5, -1, 0, 0, -8}; /* x % 0 and INT_MIN % -1 are 0 */
    BPT_OK(bp_fmod(ta, tb, &o));
    bpt_expect_i64("fmod", o, BP_I32, 1, s6, fm);
    bp_tensor_release(o);
    const int64_t one[6] = {1, 1, 1, 1, 1, 1}, sh[6] = {0, 31, 32, -1, 3, 1};
    bp_tensor *t1 = bpt_tensor_i64(be, BP_I32, 1, s6, one), *ts = bpt_tensor_i64(be, BP_I32, 1, s6, sh);
    const int64_t left[6] = {1, INT32_MIN, 0, 0, 8, 2};
    BPT_OK(bp_bitshift_left(t1, ts, &o));
    bpt_expect_i64("bitshift_left", o, BP_I32, 1, s6, left);
    bp_tensor_release(o);
    const int64_t neg[6] = {-8, -8, -8, -8, 8, 8}, rs[6] = {0, 31, 32, 1, -1, 3};
    bp_tensor *tn = bpt_tensor_i64(be, BP_I32, 1, s6, neg), *tr = bpt_tensor_i64(be, BP_I32, 1, s6, rs);
    const int64_t right[6] = {-8, -1, -1, -4, 0, 1};
    BPT_OK(bp_bitshift_right(tn, tr, &o));
    bpt_expect_i64("bitshift_right", o, BP_I32, 1, s6, right);
    bp_tensor_release(o);
    const int64_t nt[6] = {-50001, -6, 6, -8, INT32_MAX, 7};
    BPT_OK(bp_bitwise_not(ta, &o));
    bpt_expect_i64("bitwise_not", o, BP_I32, 1, s6, nt);
    bp_tensor_release(o);
    const int64_t pw[6] = {50000, 5, -21, 7, INT32_MIN, -320}; /* INT_MIN * -1 wraps */
    BPT_OK(bp_prelu(ta, tb, &o));
    bpt_expect_i64("prelu", o, BP_I32, 1, s6, pw);
    bp_tensor_release(o);
    /* u8: 20 * 20 = 400 wraps to 144 */
    const int64_t u[1] = {20}, one1[1] = {1};
    bp_tensor *tu = bpt_tensor_i64(be, BP_U8, 1, one1, u);
    const int64_t usq[1] = {144};
    BPT_OK(bp_square(tu, &o));
    bpt_expect_i64("square u8", o, BP_U8, 1, one1, usq);
    bp_tensor_release(o);
    bp_tensor_release(tu);
    bp_tensor_release(t1);
    bp_tensor_release(ts);
    bp_tensor_release(tn);
    bp_tensor_release(tr);
    bp_tensor_release(ta);
    bp_tensor_release(tb);
    bp_context_destroy(ctx);
}

Test(cuda_ops, clip_keeps_nan_and_broadcasts_its_bounds)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t s23[2] = {2, 3}, s3[1] = {3};
    const double xv[6] = {-5, 0, 5, NAN, 2, -2}, lov[3] = {-1, NAN, -1};
    bp_tensor *x = bpt_tensor(be, BP_F32, 2, s23, xv), *lo = bpt_tensor(be, BP_F32, 1, s3, lov);
    bp_tensor *hi = bpt_scalar(be, BP_F32, 1.0), *o = NULL;
    const double want[6] = {-1, NAN, 1, NAN, NAN, -1};
    BPT_OK(bp_clip(x, lo, hi, &o));
    bpt_expect("clip", o, BP_F32, 2, s23, want, bpt_exact());
    bp_tensor_release(o);
    const double want_hi[6] = {-5, 0, 1, NAN, 1, -2};
    BPT_OK(bp_clip(x, NULL, hi, &o));
    bpt_expect("clip (hi only)", o, BP_F32, 2, s23, want_hi, bpt_exact());
    bp_tensor_release(o);
    bp_tensor_release(x);
    bp_tensor_release(lo);
    bp_tensor_release(hi);
    bp_context_destroy(ctx);
}

/* ---- reductions -------------------------------------------------------------------- */

Test(cuda_ops, reductions_of_abi_1_4)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t s23[2] = {2, 3}, s2[1] = {2};
    const double xv[6] = {1, 2, 3, 4, 4, 1};
    bp_tensor *x = bpt_tensor(be, BP_F64, 2, s23, xv), *o = NULL;
    const int32_t ax1[1] = {1};
    const double var0[2] = {2.0 / 3.0, 2.0}, var1[2] = {1.0, 3.0};
    BPT_OK(bp_reduce_var(x, 1, ax1, false, 0.0, &o));
    bpt_expect("var (population)", o, BP_F64, 1, s2, var0, (bpt_tol){1e-15, 1e-15, 0});
    bp_tensor_release(o);
    BPT_OK(bp_reduce_var(x, 1, ax1, false, 1.0, &o));
    bpt_expect("var (sample)", o, BP_F64, 1, s2, var1, (bpt_tol){1e-15, 1e-15, 0});
    bp_tensor_release(o);
    const double sd[2] = {1.0, sqrt(3.0)};
    BPT_OK(bp_reduce_std(x, 1, ax1, false, 1.0, &o));
    bpt_expect("std", o, BP_F64, 1, s2, sd, (bpt_tol){1e-15, 1e-15, 0});
    bp_tensor_release(o);
    const double nan2[2] = {NAN, NAN};
    BPT_OK(bp_reduce_var(x, 1, ax1, false, 3.0, &o));
    bpt_expect("var with correction = n", o, BP_F64, 1, s2, nan2, bpt_exact());
    bp_tensor_release(o);
    const double l2[2] = {sqrt(14.0), sqrt(33.0)}, ls[2] = {log(6.0), log(9.0)};
    BPT_OK(bp_reduce_l2(x, 1, ax1, false, &o));
    bpt_expect("l2", o, BP_F64, 1, s2, l2, bpt_math(BP_F64));
    bp_tensor_release(o);
    BPT_OK(bp_reduce_log_sum(x, 1, ax1, false, &o));
    bpt_expect("log_sum", o, BP_F64, 1, s2, ls, bpt_math(BP_F64));
    bp_tensor_release(o);
    bp_tensor_release(x);
    /* argmax/argmin with the last index on ties; the last NaN wins */
    const double av[6] = {1, 3, 3, NAN, 2, NAN};
    bp_tensor *xa = bpt_tensor(be, BP_F32, 2, s23, av);
    const int64_t amax[2] = {2, 2};
    BPT_OK(bp_argmax_last(xa, 1, ax1, false, &o));
    bpt_expect_i64("argmax_last", o, BP_I64, 1, s2, amax);
    bp_tensor_release(o);
    bp_tensor_release(xa);
    const int64_t iv[6] = {1, 1, 3, -128, -128, 5};
    bp_tensor *xi = bpt_tensor_i64(be, BP_I8, 2, s23, iv);
    const int64_t amin[2] = {1, 1}, l1[2] = {5, 5}; /* |-128| wraps: -128 - 128 + 5 = -251 = 5 */
    BPT_OK(bp_argmin_last(xi, 1, ax1, false, &o));
    bpt_expect_i64("argmin_last i8", o, BP_I64, 1, s2, amin);
    bp_tensor_release(o);
    BPT_OK(bp_reduce_l1(xi, 1, ax1, false, &o));
    bpt_expect_i64("l1 i8", o, BP_I8, 1, s2, l1);
    bp_tensor_release(o);
    bp_tensor_release(xi);
    const int64_t bv[6] = {0, 1, 0, 1, 1, 1};
    bp_tensor *xb = bpt_tensor_i64(be, BP_BOOL, 2, s23, bv);
    const int64_t any[2] = {1, 1}, all[2] = {0, 1};
    BPT_OK(bp_reduce_any(xb, 1, ax1, false, &o));
    bpt_expect_i64("any", o, BP_BOOL, 1, s2, any);
    bp_tensor_release(o);
    BPT_OK(bp_reduce_all(xb, 1, ax1, false, &o));
    bpt_expect_i64("all", o, BP_BOOL, 1, s2, all);
    bp_tensor_release(o);
    bp_tensor_release(xb);
    bp_context_destroy(ctx);
}

Test(cuda_ops, variance_of_a_long_run_is_split_across_blocks_and_still_exact)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    int64_t n = 100000;
    double *v = malloc((size_t)n * sizeof *v);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)i;
    bp_tensor *x = bpt_tensor(be, BP_F64, 1, &n, v), *o = NULL;
    const double want = ((double)n * (double)n - 1.0) / 12.0; /* 0 .. n-1, population */
    BPT_OK(bp_reduce_var(x, 0, NULL, false, 0.0, &o));
    bpt_expect("var of 0..n-1", o, BP_F64, 0, NULL, &want, (bpt_tol){1e-12, 0, 0});
    bp_tensor_release(o);
    bp_tensor_release(x);
    free(v);
    bp_context_destroy(ctx);
}

/* ---- along one axis ------------------------------------------------------------------- */

Test(cuda_ops, hardmax_marks_the_first_maximum)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t s23[2] = {2, 3};
    const double xv[6] = {1, 3, 3, 2, 1, 0}, want[6] = {0, 1, 0, 1, 0, 0};
    bp_tensor *x = bpt_tensor(be, BP_F16, 2, s23, xv), *o = NULL;
    BPT_OK(bp_hardmax(x, 1, &o));
    bpt_expect("hardmax", o, BP_F16, 2, s23, want, bpt_exact());
    bp_tensor_release(o);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

/* cumsum along axis of a (rows, n) row-major array, in double */
static void host_scan(const double *x, double *out, int64_t rows, int64_t n, bool prod,
                      bool exclusive, bool reverse)
{
    for (int64_t r = 0; r < rows; r++) {
        double acc = prod ? 1 : 0;
        for (int64_t t = 0; t < n; t++) {
            int64_t j = reverse ? n - 1 - t : t;
            double v = x[r * n + j];
            if (exclusive) {
                out[r * n + j] = acc;
                acc = prod ? acc * v : acc + v;
            } else {
                acc = prod ? acc * v : acc + v;
                out[r * n + j] = acc;
            }
        }
    }
}

Test(cuda_ops, scans_in_every_layout_and_mode)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    /* block layout: rows of 1000 (integers: exact) */
    const int64_t rows = 37, n = 1000, shape[2] = {37, 1000};
    double *x = malloc((size_t)(rows * n) * sizeof *x), *want = malloc((size_t)(rows * n) * sizeof *x);
    cr_assert(x && want);
    for (int64_t i = 0; i < rows * n; i++)
        x[i] = (double)((i * 7) % 13) - 6;
    bp_tensor *t = bpt_tensor(be, BP_I32, 2, shape, x), *o = NULL;
    for (int mode = 0; mode < 4; mode++) {
        bool excl = mode & 1, rev = mode & 2;
        host_scan(x, want, rows, n, false, excl, rev);
        BPT_OK(bp_cumsum(t, 1, excl, rev, &o));
        bpt_expect("cumsum i32 (block per row)", o, BP_I32, 2, shape, want, bpt_exact());
        bp_tensor_release(o);
    }
    bp_tensor_release(t);
    /* f64 in the block layout: the sums associate differently */
    t = bpt_tensor(be, BP_F64, 2, shape, x);
    host_scan(x, want, rows, n, false, true, false);
    BPT_OK(bp_cumsum(t, 1, true, false, &o));
    bpt_expect("cumsum f64", o, BP_F64, 2, shape, want, bpt_exact()); /* small integers: exact */
    bp_tensor_release(o);
    bp_tensor_release(t);
    /* serial layout, rows adjacent in memory: scan over axis 0 of (4, 3) */
    const int64_t s43[2] = {4, 3};
    const double c[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    /* over axis 0, reverse, inclusive; cumprod too */
    const double cs[12] = {22, 26, 30, 21, 24, 27, 17, 19, 21, 10, 11, 12};
    const double cp[12] = {280, 880, 1944, 280, 440, 648, 70, 88, 108, 10, 11, 12};
    t = bpt_tensor(be, BP_F32, 2, s43, c);
    BPT_OK(bp_cumsum(t, 0, false, true, &o));
    bpt_expect("cumsum over axis 0", o, BP_F32, 2, s43, cs, bpt_exact());
    bp_tensor_release(o);
    BPT_OK(bp_cumprod(t, 0, false, true, &o));
    bpt_expect("cumprod over axis 0", o, BP_F32, 2, s43, cp, bpt_exact());
    bp_tensor_release(o);
    bp_tensor_release(t);
    free(x);
    free(want);
    bp_context_destroy(ctx);
}

Test(cuda_ops, sort_is_stable_and_puts_nan_last_ascending_first_descending)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const double xv[6] = {3, NAN, -0.0, 0.0, -1, 3};
    bp_tensor *x = bpt_tensor(be, BP_F32, 1, s6, xv), *v = NULL, *i = NULL;
    BPT_OK(bp_sort(x, 0, false, &v, &i));
    const double va[6] = {-1, -0.0, 0.0, 3, 3, NAN};
    const int64_t ia[6] = {4, 2, 3, 0, 5, 1};
    bpt_expect("sort values", v, BP_F32, 1, s6, va, bpt_exact());
    bpt_expect_i64("sort indices", i, BP_I64, 1, s6, ia);
    const int neg[6] = {1, 1, 0, 0, 0, 0};
    bpt_expect_signbits("sort keeps -0", v, neg);
    bp_tensor_release(v);
    bp_tensor_release(i);
    BPT_OK(bp_sort(x, 0, true, &v, &i));
    const double vd[6] = {NAN, 3, 3, -0.0, 0.0, -1};
    const int64_t id[6] = {1, 0, 5, 2, 3, 4};
    bpt_expect("sort descending values", v, BP_F32, 1, s6, vd, bpt_exact());
    bpt_expect_i64("sort descending indices", i, BP_I64, 1, s6, id);
    bp_tensor_release(v);
    bp_tensor_release(i);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

static int cmp_i64_stable(const void *a, const void *b)
{
    const int64_t *p = a, *q = b; /* (value, index) pairs */
    if (p[0] != q[0])
        return p[0] < q[0] ? -1 : 1;
    return p[1] < q[1] ? -1 : p[1] > q[1];
}

Test(cuda_ops, sort_of_many_rows_along_a_leading_axis_matches_a_stable_host_sort)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t n = 300, cols = 50, shape[2] = {300, 50}; /* sorted along axis 0 */
    int64_t *x = malloc((size_t)(n * cols) * sizeof *x);
    int64_t *pairs = malloc((size_t)(2 * n) * sizeof *pairs);
    int64_t *wv = malloc((size_t)(n * cols) * sizeof *wv), *wi = malloc((size_t)(n * cols) * sizeof *wi);
    cr_assert(x && pairs && wv && wi);
    uint64_t s = 88172645463325252ull;
    for (int64_t k = 0; k < n * cols; k++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[k] = (int64_t)(s % 41) - 20 + (k % 3 == 0 ? INT64_MIN / 2 : 0);
    }
    for (int64_t c = 0; c < cols; c++) {
        for (int64_t r = 0; r < n; r++)
            pairs[2 * r] = x[r * cols + c], pairs[2 * r + 1] = r;
        qsort(pairs, (size_t)n, 2 * sizeof *pairs, cmp_i64_stable);
        for (int64_t r = 0; r < n; r++)
            wv[r * cols + c] = pairs[2 * r], wi[r * cols + c] = pairs[2 * r + 1];
    }
    bp_tensor *t = bpt_tensor_i64(be, BP_I64, 2, shape, x), *v = NULL, *i = NULL;
    BPT_OK(bp_sort(t, 0, false, &v, &i));
    bpt_expect_i64("sort i64 values", v, BP_I64, 2, shape, wv);
    bpt_expect_i64("sort i64 indices", i, BP_I64, 2, shape, wi);
    bp_tensor_release(v);
    bp_tensor_release(i);
    /* topk: the 5 largest of each column, ties to the lower index */
    const int64_t ks[2] = {5, 50};
    int64_t *kv = malloc(5 * 50 * sizeof *kv), *ki = malloc(5 * 50 * sizeof *ki);
    cr_assert(kv && ki);
    for (int64_t c = 0; c < cols; c++) {
        for (int64_t r = 0; r < n; r++) /* largest first: the negated values, stably */
            pairs[2 * r] = -x[r * cols + c], pairs[2 * r + 1] = r;
        qsort(pairs, (size_t)n, 2 * sizeof *pairs, cmp_i64_stable);
        for (int64_t r = 0; r < 5; r++)
            kv[r * cols + c] = x[pairs[2 * r + 1] * cols + c], ki[r * cols + c] = pairs[2 * r + 1];
    }
    BPT_OK(bp_topk(t, 5, 0, true, true, &v, &i));
    bpt_expect_i64("topk values", v, BP_I64, 2, ks, kv);
    bpt_expect_i64("topk indices", i, BP_I64, 2, ks, ki);
    bp_tensor_release(v);
    bp_tensor_release(i);
    bp_tensor_release(t);
    free(x), free(pairs), free(wv), free(wi), free(kv), free(ki);
    bp_context_destroy(ctx);
}

Test(cuda_ops, topk_smallest_of_halves)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t s4[1] = {4}, s3[1] = {3};
    const double xv[4] = {1, 5, 5, 2};
    bp_tensor *x = bpt_tensor(be, BP_BF16, 1, s4, xv), *v = NULL, *i = NULL;
    BPT_OK(bp_topk(x, 3, 0, false, true, &v, &i));
    const double vw[3] = {1, 2, 5};
    const int64_t iw[3] = {0, 3, 1};
    bpt_expect("topk smallest", v, BP_BF16, 1, s3, vw, bpt_exact());
    bpt_expect_i64("topk smallest indices", i, BP_I64, 1, s3, iw);
    bp_tensor_release(v);
    bp_tensor_release(i);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

/* ---- indexing ------------------------------------------------------------------------ */

Test(cuda_ops, trilu_and_one_hot)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t s33[2] = {3, 3};
    const double ones[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const double up1[9] = {0, 1, 1, 0, 0, 1, 0, 0, 0}, lowm1[9] = {0, 0, 0, 1, 0, 0, 1, 1, 0};
    bp_tensor *x = bpt_tensor(be, BP_I8, 2, s33, ones), *o = NULL;
    BPT_OK(bp_trilu(x, true, 1, &o));
    bpt_expect("trilu upper k=1", o, BP_I8, 2, s33, up1, bpt_exact());
    bp_tensor_release(o);
    BPT_OK(bp_trilu(x, false, -1, &o));
    bpt_expect("trilu lower k=-1", o, BP_I8, 2, s33, lowm1, bpt_exact());
    bp_tensor_release(o);
    bp_tensor_release(x);
    const int64_t s4[1] = {4}, s43[2] = {4, 3}, s34[2] = {3, 4}, s2[1] = {2};
    const int64_t iv[4] = {0, 2, -1, 5};
    const double onoff[2] = {-1, 7};
    bp_tensor *ind = bpt_tensor_i64(be, BP_I64, 1, s4, iv), *vals = bpt_tensor(be, BP_F32, 1, s2, onoff);
    const double w1[12] = {7, -1, -1, -1, -1, 7, -1, -1, 7, -1, -1, -1};
    BPT_OK(bp_one_hot(ind, 3, -1, vals, &o));
    bpt_expect("one_hot", o, BP_F32, 2, s43, w1, bpt_exact());
    bp_tensor_release(o);
    const double w0[12] = {7, -1, -1, -1, -1, -1, -1, -1, -1, 7, 7, -1};
    BPT_OK(bp_one_hot(ind, 3, 0, vals, &o));
    bpt_expect("one_hot axis 0", o, BP_F32, 2, s34, w0, bpt_exact());
    bp_tensor_release(o);
    bp_tensor_release(ind);
    const double fv[4] = {1.7, -0.5, NAN, -3.2};
    bp_tensor *find = bpt_tensor(be, BP_F32, 1, s4, fv);
    const double wf[12] = {-1, 7, -1, 7, -1, -1, -1, -1, -1, 7, -1, -1};
    BPT_OK(bp_one_hot(find, 3, -1, vals, &o));
    bpt_expect("one_hot of float indices", o, BP_F32, 2, s43, wf, bpt_exact());
    bp_tensor_release(o);
    bp_tensor_release(find);
    bp_tensor_release(vals);
    bp_context_destroy(ctx);
}

Test(cuda_ops, gathers_by_index_tensors)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t s23[2] = {2, 3}, s22[2] = {2, 2}, s2[1] = {2};
    const double xv[6] = {1, 2, 3, 4, 5, 6};
    bp_tensor *x = bpt_tensor(be, BP_F64, 2, s23, xv), *o = NULL;
    const int64_t iv[4] = {0, 2, 1, -1};
    bp_tensor *ind = bpt_tensor_i64(be, BP_I32, 2, s22, iv);
    const double ge[4] = {1, 3, 5, 6};
    BPT_OK(bp_gather_elements(x, ind, 1, &o));
    bpt_expect("gather_elements", o, BP_F64, 2, s22, ge, bpt_exact());
    bp_tensor_release(o);
    bp_tensor_release(ind);
    const int64_t nd[4] = {0, 1, 1, -3};
    bp_tensor *tnd = bpt_tensor_i64(be, BP_I64, 2, s22, nd);
    const double gnd[2] = {2, 4};
    BPT_OK(bp_gather_nd(x, tnd, 0, &o));
    bpt_expect("gather_nd", o, BP_F64, 1, s2, gnd, bpt_exact());
    bp_tensor_release(o);
    bp_tensor_release(tnd);
    bp_tensor_release(x);
    /* batch_dims 1: x (2, 2, 2), indices (2, 1) -> x[0, 1, :], x[1, 0, :] */
    const int64_t s222[3] = {2, 2, 2}, s21[2] = {2, 1};
    const double x3[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const int64_t b1[2] = {1, 0};
    bp_tensor *x3t = bpt_tensor(be, BP_I64, 3, s222, x3), *tb = bpt_tensor_i64(be, BP_I64, 2, s21, b1);
    const int64_t gb[4] = {3, 4, 5, 6};
    BPT_OK(bp_gather_nd(x3t, tb, 1, &o));
    bpt_expect_i64("gather_nd batch_dims 1", o, BP_I64, 2, s22, gb);
    bp_tensor_release(o);
    bp_tensor_release(tb);
    bp_tensor_release(x3t);
    bp_context_destroy(ctx);
}

Test(cuda_ops, scatters_keep_the_last_duplicate_and_combine_reductions)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t s14[2] = {1, 4}, s13[2] = {1, 3};
    const double zero[4] = {0, 1, 0, 0}, up[3] = {10, 20, 30};
    const int64_t iv[3] = {1, 1, 3};
    bp_tensor *ind = bpt_tensor_i64(be, BP_I64, 2, s13, iv), *o = NULL;
    const bp_dtype dts[3] = {BP_F32, BP_F16, BP_I8};
    for (int k = 0; k < 3; k++) {
        bp_dtype dt = dts[k];
        bp_tensor *x = bpt_tensor(be, dt, 2, s14, zero), *u = bpt_tensor(be, dt, 2, s13, up);
        const double none[4] = {0, 20, 0, 30}, add[4] = {0, 31, 0, 30}, mx[4] = {0, 20, 0, 30};
        const double mn[4] = {0, 1, 0, 0}, mul[4] = {0, 200, 0, 0};
        BPT_OK(bp_scatter_elements(x, ind, u, 1, BP_SCATTER_NONE, &o));
        bpt_expect("scatter none", o, dt, 2, s14, none, bpt_exact());
        bp_tensor_release(o);
        BPT_OK(bp_scatter_elements(x, ind, u, 1, BP_SCATTER_ADD, &o));
        bpt_expect("scatter add", o, dt, 2, s14, add, bpt_exact());
        bp_tensor_release(o);
        BPT_OK(bp_scatter_elements(x, ind, u, 1, BP_SCATTER_MAX, &o));
        bpt_expect("scatter max", o, dt, 2, s14, mx, bpt_exact());
        bp_tensor_release(o);
        BPT_OK(bp_scatter_elements(x, ind, u, 1, BP_SCATTER_MIN, &o));
        bpt_expect("scatter min", o, dt, 2, s14, mn, bpt_exact());
        bp_tensor_release(o);
        if (dt != BP_I8) { /* 1 * 10 * 20 = 200 does not fit i8 */
            BPT_OK(bp_scatter_elements(x, ind, u, 1, BP_SCATTER_MUL, &o));
            bpt_expect("scatter mul", o, dt, 2, s14, mul, bpt_exact());
            bp_tensor_release(o);
        }
        bp_tensor_release(x);
        bp_tensor_release(u);
    }
    bp_tensor_release(ind);
    /* scatter_nd: rows of (4, 2), tuple [1] twice */
    const int64_t s42[2] = {4, 2}, s31[2] = {3, 1}, s32[2] = {3, 2};
    const int64_t tv[3] = {1, 3, 1}, uv[6] = {1, 2, 3, 4, 5, 6};
    bp_tensor *x = bpt_tensor_i64(be, BP_I32, 2, s42, NULL), *t = bpt_tensor_i64(be, BP_I64, 2, s31, tv);
    bp_tensor *u = bpt_tensor_i64(be, BP_I32, 2, s32, uv);
    const int64_t wn[8] = {0, 0, 5, 6, 0, 0, 3, 4}, wa[8] = {0, 0, 6, 8, 0, 0, 3, 4};
    BPT_OK(bp_scatter_nd(x, t, u, BP_SCATTER_NONE, &o));
    bpt_expect_i64("scatter_nd none", o, BP_I32, 2, s42, wn);
    bp_tensor_release(o);
    BPT_OK(bp_scatter_nd(x, t, u, BP_SCATTER_ADD, &o));
    bpt_expect_i64("scatter_nd add", o, BP_I32, 2, s42, wa);
    bp_tensor_release(o);
    bp_tensor_release(x);
    bp_tensor_release(t);
    bp_tensor_release(u);
    bp_context_destroy(ctx);
}

/* ---- gemm ------------------------------------------------------------------------------ */

static void host_gemm(const double *a, bool ta, const double *b, bool tb, const double *c,
                      bool c_row, int64_t M, int64_t N, int64_t K, double alpha, double beta,
                      double *out)
{
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
                acc += (ta ? a[k * M + m] : a[m * K + k]) * (tb ? b[n * K + k] : b[k * N + n]);
            out[m * N + n] = alpha * acc + (c ? beta * (c_row ? c[n] : c[m * N + n]) : 0);
        }
}

Test(cuda_ops, gemm_with_transposed_views_and_a_broadcast_c)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t M = 3, N = 4, K = 5, sa[2] = {5, 3}, sb[2] = {4, 5}, sc[1] = {4}, so[2] = {3, 4};
    double a[15], b[20], c[4], want[12];
    for (int i = 0; i < 15; i++)
        a[i] = (i % 7) - 3;
    for (int i = 0; i < 20; i++)
        b[i] = (i % 5) - 2;
    for (int i = 0; i < 4; i++)
        c[i] = i + 0.5;
    const bp_dtype dts[3] = {BP_F32, BP_F16, BP_F64};
    for (int k = 0; k < 3; k++) {
        bp_tensor *ta = bpt_tensor(be, dts[k], 2, sa, a), *tb = bpt_tensor(be, dts[k], 2, sb, b);
        bp_tensor *tc = bpt_tensor(be, dts[k], 1, sc, c), *o = NULL;
        host_gemm(a, true, b, true, c, true, M, N, K, 2.0, 0.5, want);
        BPT_OK(bp_gemm(ta, tb, tc, 2.0, 0.5, true, true, &o));
        bpt_expect("gemm (a^T b^T, c a row)", o, dts[k], 2, so, want, bpt_exact());
        bp_tensor_release(o);
        bp_tensor_release(ta);
        bp_tensor_release(tb);
        bp_tensor_release(tc);
    }
    /* integers: whole alpha and beta wrap; others go through double */
    const int64_t s22[2] = {2, 2};
    const int64_t ai[4] = {1, 2, 3, 4}, bi[4] = {5, 6, 7, 8}, ci[4] = {1, 1, 1, 1};
    bp_tensor *ta = bpt_tensor_i64(be, BP_I32, 2, s22, ai), *tb = bpt_tensor_i64(be, BP_I32, 2, s22, bi);
    bp_tensor *tc = bpt_tensor_i64(be, BP_I32, 2, s22, ci), *o = NULL;
    const int64_t w1[4] = {2 * 19 + 3, 2 * 22 + 3, 2 * 43 + 3, 2 * 50 + 3};
    BPT_OK(bp_gemm(ta, tb, tc, 2.0, 3.0, false, false, &o));
    bpt_expect_i64("gemm i32", o, BP_I32, 2, s22, w1);
    bp_tensor_release(o);
    const int64_t w2[4] = {10, 11, 22, 25}; /* 0.5 * (19, 22, 43, 50) + 0.5, truncated */
    BPT_OK(bp_gemm(ta, tb, tc, 0.5, 0.5, false, false, &o));
    bpt_expect_i64("gemm i32, fractional alpha", o, BP_I32, 2, s22, w2);
    bp_tensor_release(o);
    bp_tensor_release(ta);
    bp_tensor_release(tb);
    bp_tensor_release(tc);
    bp_context_destroy(ctx);
}

/* ---- deferred index errors (issue 12) ------------------------------------------------------ */

Test(cuda_ops, an_index_out_of_range_is_reported_at_the_next_wait_and_then_cleared)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t s23[2] = {2, 3}, s22[2] = {2, 2};
    bp_tensor *x = bpt_tensor(be, BP_F32, 2, s23, NULL), *o = NULL;
    const int64_t bad[4] = {0, 7, 1, -4};
    bp_tensor *ind = bpt_tensor_i64(be, BP_I64, 2, s22, bad);
    BPT_OK(bp_gather_elements(x, ind, 1, &o)); /* queued: no wait, no error yet */
    bp_status st = bp_synchronize(be);
    cr_assert_eq(st, BP_ERR_INDEX, "bp_synchronize -> %s: %s", bp_status_string(st),
                 bp_last_error());
    cr_expect(strstr(bp_last_error(), "indices[1] (flat position) is 7"), "%s", bp_last_error());
    cr_expect(strstr(bp_last_error(), "axis 1 of extent 3"), "%s", bp_last_error());
    BPT_OK(bp_synchronize(be)); /* reported once */
    bp_tensor_release(o);
    /* bp_gather, read back: the read of its output reports it */
    const int64_t g[2] = {1, -3}, s2[1] = {2};
    bp_tensor *gi = bpt_tensor_i64(be, BP_I32, 1, s2, g);
    BPT_OK(bp_gather(x, gi, 0, &o));
    float buf[6];
    st = bp_tensor_to_host(o, buf, sizeof buf);
    cr_assert_eq(st, BP_ERR_INDEX, "read -> %s: %s", bp_status_string(st), bp_last_error());
    cr_expect(strstr(bp_last_error(), "bp_gather: indices[1] (flat position) is -3"), "%s",
              bp_last_error());
    bp_tensor_release(o);
    bp_tensor_release(gi);
    /* scatter_nd: the bad component of the second tuple */
    const int64_t t2[4] = {0, 1, 1, 3}, s1[1] = {2};
    bp_tensor *tup = bpt_tensor_i64(be, BP_I64, 2, s22, t2), *u = bpt_tensor(be, BP_F32, 1, s1, NULL);
    BPT_OK(bp_scatter_nd(x, tup, u, BP_SCATTER_ADD, &o));
    st = bp_synchronize(be);
    cr_assert_eq(st, BP_ERR_INDEX, "%s", bp_last_error());
    cr_expect(strstr(bp_last_error(), "indices[3] (flat position) is 3, out of range for axis 1"),
              "%s", bp_last_error());
    bp_tensor_release(o);
    bp_tensor_release(tup);
    bp_tensor_release(u);
    bp_tensor_release(ind);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

/* ---- DLPack (issue 13) ------------------------------------------------------------------------ */

typedef struct counted {
    DLManagedTensor m;
    DLManagedTensor *inner;
    int deleted;
} counted;

static void counted_delete(DLManagedTensor *self)
{
    counted *c = self->manager_ctx;
    c->deleted++;
    c->inner->deleter(c->inner);
}

Test(cuda_ops, dlpack_hands_out_device_memory_and_takes_it_back_without_a_copy)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const double xv[6] = {1, 2, 3, 4, 5, 6};
    bp_tensor *t = bpt_tensor(be, BP_F32, 1, s6, xv), *back = NULL, *sq = NULL;
    DLManagedTensor *m = NULL, *m2 = NULL;
    BPT_OK(bp_tensor_to_dlpack(t, &m));
    cr_assert_eq(m->dl_tensor.device.device_type, kDLCUDA);
    cr_assert_not_null(m->dl_tensor.data);
    counted c = {.m = *m, .inner = m, .deleted = 0}; /* another library's tensor, here */
    c.m.manager_ctx = &c;
    c.m.deleter = counted_delete;
    BPT_OK(bp_tensor_from_dlpack(be, &c.m, &back)); /* the same device memory, in place */
    BPT_OK(bp_tensor_to_dlpack(back, &m2));
    cr_expect_eq((char *)m2->dl_tensor.data + m2->dl_tensor.byte_offset,
                 (char *)m->dl_tensor.data + m->dl_tensor.byte_offset, "copied, not wrapped");
    m2->deleter(m2);
    BPT_OK(bp_square(back, &sq));
    const double want[6] = {1, 4, 9, 16, 25, 36};
    bpt_expect("square of a wrapped tensor", sq, BP_F32, 1, s6, want, bpt_exact());
    bp_tensor_release(sq);
    bp_tensor_release(back);
    BPT_OK(bp_synchronize(be)); /* the release runs once its readers have ended */
    cr_expect_eq(c.deleted, 1, "the deleter ran %d times", c.deleted);
    bp_tensor_release(t);
    bp_context_destroy(ctx);
}

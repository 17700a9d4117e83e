/* The cuda plugin's op entry of ABI 1.4, its deferred index errors and its
 * DLPack exchange, on a GPU: small cases whose answers are written out by
 * hand (or computed here in double), so that they hold whatever the other
 * backends do. Every test is skipped where the cuda backend does not open
 * (no driver, no device, not built); ctest runs them on the GPU machine
 * (../shared/gpu: the ctest stage). */
#include <backplane/cast.h>
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

/* ---- deferred index errors ------------------------------------------------------ */

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

/* ---- DLPack ------------------------------------------------------------------------ */

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

/* ---- the fast paths of the ops of ABI 1.0 ---------------------------------------------------
 * Each case takes a fast path (16-byte packs, a broadcast row, column or
 * scalar, half2 arithmetic, a typed cast, a row copy or gather, a pack
 * reduction, a softmax row kept in shared memory or read online) or, for
 * a shape beside it, the path it had before; the answers are computed here.
 * Inputs are multiples of 1/4 in [-4, 4]: exact in f16 and bf16, and so
 * are their sums and products, so that every path must give them exactly. */

static double quarter(int64_t i) { return (double)((i * 7919 + 3) % 33 - 16) * 0.25; }

static double *quarters(int64_t n, int64_t salt)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = quarter(i + salt);
    return v;
}

static int64_t count(int32_t rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int32_t k = 0; k < rank; k++)
        n *= shape[k];
    return n;
}

/* Position in an operand of shape (rank, s), broadcast to out's (orank,
 * oshape), of out's row-major element i. */
static int64_t bcast_pos(int32_t orank, const int64_t *oshape, int32_t rank, const int64_t *s,
                         int64_t i)
{
    int64_t pos = 0, stride = 1;
    for (int32_t k = orank - 1, j = rank - 1; k >= 0; k--, j--) {
        const int64_t c = i % oshape[k];
        i /= oshape[k];
        if (j >= 0) {
            pos += (s[j] == 1 ? 0 : c) * stride;
            stride *= s[j];
        }
    }
    return pos;
}

typedef struct bshape { int32_t rank; int64_t s[3]; } bshape;

Test(cuda_ops, binary_fast_paths_broadcast_rows_columns_and_scalars_exactly)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    /* a, b: dense packs (aligned, and with a tail), a row vector in packs and
     * one element at a time (63 columns), a column, a scalar on either side,
     * a row on the left, and a rank-3 broadcast (the strided loop) */
    const bshape cases[][2] = {
        {{1, {4096}}, {1, {4096}}},     {{1, {4099}}, {1, {4099}}},
        {{2, {37, 64}}, {1, {64}}},     {{2, {37, 63}}, {1, {63}}},
        {{2, {37, 64}}, {2, {37, 1}}},  {{1, {1000}}, {1, {1}}},
        {{1, {1}}, {1, {1000}}},        {{1, {64}}, {2, {37, 64}}},
        {{3, {5, 6, 64}}, {3, {5, 1, 64}}},
    };
    const bp_dtype dts[3] = {BP_F32, BP_F16, BP_BF16};
    bp_status (*fns[3])(const bp_tensor *, const bp_tensor *, bp_tensor **) = {bp_add, bp_sub,
                                                                                 bp_mul};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const bshape *A = &cases[c][0], *B = &cases[c][1];
        const int32_t orank = A->rank > B->rank ? A->rank : B->rank;
        int64_t oshape[3];
        for (int32_t k = 0; k < orank; k++) {
            const int32_t ja = k - (orank - A->rank), jb = k - (orank - B->rank);
            const int64_t ea = ja >= 0 ? A->s[ja] : 1, eb = jb >= 0 ? B->s[jb] : 1;
            oshape[k] = ea > eb ? ea : eb;
        }
        const int64_t na = count(A->rank, A->s), nb = count(B->rank, B->s);
        const int64_t no = count(orank, oshape);
        double *av = quarters(na, 0), *bv = quarters(nb, 11), *want = malloc((size_t)no * 8);
        cr_assert_not_null(want);
        for (int d = 0; d < 3; d++) {
            bp_tensor *a = bpt_tensor(be, dts[d], A->rank, A->s, av);
            bp_tensor *b = bpt_tensor(be, dts[d], B->rank, B->s, bv);
            for (int f = 0; f < 3; f++) {
                for (int64_t i = 0; i < no; i++) {
                    const double x = av[bcast_pos(orank, oshape, A->rank, A->s, i)];
                    const double y = bv[bcast_pos(orank, oshape, B->rank, B->s, i)];
                    want[i] = f == 0 ? x + y : f == 1 ? x - y : x * y;
                }
                bp_tensor *o = NULL;
                BPT_OK(fns[f](a, b, &o));
                char what[96];
                snprintf(what, sizeof what, "case %zu, op %d, %s", c, f, bp_dtype_name(dts[d]));
                bpt_expect(what, o, dts[d], orank, oshape, want, bpt_exact());
                bp_tensor_release(o);
            }
            bp_tensor_release(a);
            bp_tensor_release(b);
        }
        free(av), free(bv), free(want);
    }
    bp_context_destroy(ctx);
}

Test(cuda_ops, unary_packs_and_their_tail_and_a_narrower_output)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t ns[3] = {4096, 4099, 7};
    const bp_dtype dts[4] = {BP_F32, BP_F16, BP_BF16, BP_F64};
    for (int k = 0; k < 3; k++) {
        const int64_t n = ns[k];
        double *v = quarters(n, 5), *want = malloc((size_t)n * 8);
        cr_assert_not_null(want);
        v[n / 2] = NAN;
        for (int d = 0; d < 4; d++) {
            bp_tensor *x = bpt_tensor(be, dts[d], 1, &n, v), *o = NULL;
            for (int64_t i = 0; i < n; i++)
                want[i] = v[i] != v[i] ? v[i] : v[i] > 0 ? v[i] : 0;
            BPT_OK(bp_relu(x, &o));
            bpt_expect("relu", o, dts[d], 1, &n, want, bpt_exact());
            bp_tensor_release(o);
            for (int64_t i = 0; i < n; i++)
                want[i] = -v[i];
            BPT_OK(bp_neg(x, &o));
            bpt_expect("neg", o, dts[d], 1, &n, want, bpt_exact());
            bp_tensor_release(o);
            int64_t *isn = malloc((size_t)n * sizeof *isn);
            cr_assert_not_null(isn);
            for (int64_t i = 0; i < n; i++)
                isn[i] = v[i] != v[i];
            BPT_OK(bp_isnan(x, &o)); /* bool out: packs as wide as the input's */
            bpt_expect_i64("isnan", o, BP_BOOL, 1, &n, isn);
            bp_tensor_release(o);
            free(isn);
            bp_tensor_release(x);
        }
        free(v), free(want);
    }
    bp_context_destroy(ctx);
}

Test(cuda_ops, where_in_packs_with_a_broadcast_condition_and_a_scalar)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t sc[2] = {37, 64}, sa[1] = {64}, s1[1] = {1}, sd[1] = {4099};
    const bp_dtype dts[3] = {BP_F32, BP_F16, BP_F64};
    double *cv = malloc(37 * 64 * 8), *av = quarters(64, 1), bv[1] = {-0.5};
    double *dv = malloc(4099 * 8), *want = malloc(4099 * 8), *ev = quarters(4099, 2);
    cr_assert(cv && dv && want);
    for (int64_t i = 0; i < 37 * 64; i++)
        cv[i] = (i * 13) % 3 == 0;
    for (int64_t i = 0; i < 4099; i++)
        dv[i] = i % 5 == 0;
    for (int d = 0; d < 3; d++) {
        bp_tensor *c = bpt_tensor(be, BP_BOOL, 2, sc, cv), *a = bpt_tensor(be, dts[d], 1, sa, av);
        bp_tensor *b = bpt_tensor(be, dts[d], 1, s1, bv), *o = NULL;
        for (int64_t i = 0; i < 37 * 64; i++)
            want[i] = cv[i] ? av[i % 64] : bv[0];
        BPT_OK(bp_where(c, a, b, &o));
        bpt_expect("where (rows)", o, dts[d], 2, sc, want, bpt_exact());
        bp_tensor_release(o);
        bp_tensor_release(c), bp_tensor_release(a), bp_tensor_release(b);
        /* dense, 4099: packs and the element-by-element remainder */
        c = bpt_tensor(be, BP_BOOL, 1, sd, dv);
        a = bpt_tensor(be, dts[d], 1, sd, ev);
        b = bpt_tensor(be, dts[d], 1, sd, ev);
        bp_tensor *nb = NULL;
        BPT_OK(bp_neg(b, &nb));
        for (int64_t i = 0; i < 4099; i++)
            want[i] = dv[i] ? ev[i] : -ev[i];
        BPT_OK(bp_where(c, a, nb, &o));
        bpt_expect("where (dense)", o, dts[d], 1, sd, want, bpt_exact());
        bp_tensor_release(o);
        bp_tensor_release(c), bp_tensor_release(a), bp_tensor_release(b), bp_tensor_release(nb);
    }
    free(cv), free(av), free(dv), free(want), free(ev);
    bp_context_destroy(ctx);
}

/* v stored in src by the cast rules, then cast to dst as the reference does:
 * the element's bytes (8 at most) */
static void cast_rule(bp_dtype src, bp_dtype dst, double v, unsigned char *b)
{
    unsigned char a[8];
    bp_elem_store_f64(src, a, v);
    if (bp_dtype_is_float(src))
        bp_elem_store_f64(dst, b, bp_elem_load_f64(src, a));
    else
        bp_elem_store_i64(dst, b, bp_elem_load_i64(src, a));
}

Test(cuda_ops, typed_casts_round_saturate_and_keep_nan_as_the_cast_rules)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    /* ties to even in f16 (1 + 2^-11, 1 + 3 2^-11) and bf16 (1 + 2^-8), f16's
     * overflow and subnormals, bf16's and f32's huge values, the integers'
     * saturation and truncation, NaN */
    const double specials[] = {1 + 0x1p-11, 1 + 3 * 0x1p-11, 1 + 0x1p-8, 1 + 3 * 0x1p-8, 65519.0,
                               65520.0, 70000.0, -70000.0, 1e-7, -3e-8, 6e-8, 3e38, -3e38,
                               3e9, -3e9, 2147483520.0, -2.7, 2.7, 0.0, -0.0, NAN, INFINITY,
                               -INFINITY, 16777217.0, 1e-40};
    const int ns = (int)(sizeof specials / sizeof specials[0]);
    const int64_t n = 1027; /* packs and a tail */
    double *v = malloc((size_t)n * 8), *want = malloc((size_t)n * 8);
    int64_t *wi = malloc((size_t)n * sizeof *wi);
    cr_assert(v && want && wi);
    static const bp_dtype pairs[][2] = {
        {BP_F32, BP_F16}, {BP_F32, BP_BF16}, {BP_F16, BP_F32}, {BP_BF16, BP_F32},
        {BP_F16, BP_BF16}, {BP_BF16, BP_F16}, {BP_F32, BP_F64}, {BP_F64, BP_F32},
        {BP_F32, BP_I32}, {BP_I32, BP_F32}, {BP_F16, BP_I32}, {BP_I32, BP_F16},
        {BP_BF16, BP_I32}, {BP_I32, BP_BF16}, {BP_F32, BP_I64}, {BP_I64, BP_F32},
        {BP_I32, BP_I64}, {BP_I64, BP_I32}, {BP_BOOL, BP_F32}, {BP_BOOL, BP_F16},
        {BP_BOOL, BP_BF16}, {BP_F64, BP_F16}, /* the last: the general kernel */
    };
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        const bp_dtype s = pairs[p][0], t = pairs[p][1];
        for (int64_t i = 0; i < n; i++) {
            double x = i < ns ? specials[i] : quarter(i) * 1000.25;
            if (!bp_dtype_is_float(s) && (x != x || isinf(x)))
                x = 7;
            v[i] = x;
            unsigned char b[8];
            cast_rule(s, t, x, b);
            if (bp_dtype_is_float(t))
                want[i] = bp_elem_load_f64(t, b);
            else
                wi[i] = bp_elem_load_i64(t, b);
        }
        bp_tensor *x = bpt_tensor(be, s, 1, &n, v), *o = NULL;
        BPT_OK(bp_cast(x, t, &o));
        char what[64];
        snprintf(what, sizeof what, "cast %s -> %s", bp_dtype_name(s), bp_dtype_name(t));
        if (bp_dtype_is_float(t)) {
            bpt_expect(what, o, t, 1, &n, want, bpt_exact());
        } else {
            bpt_expect_i64(what, o, t, 1, &n, wi);
        }
        bp_tensor_release(o);
        bp_tensor_release(x);
    }
    free(v), free(want), free(wi);
    bp_context_destroy(ctx);
}

Test(cuda_ops, concat_slice_and_pad_copy_whole_rows)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    /* rows of 7 and 9 elements (words of 4 or 2 bytes), of 64 (16-byte
     * words), and a 3-D join on the middle axis */
    const int64_t cases[][2][3] = {{{5, 7, 1}, {5, 9, 1}}, {{33, 64, 1}, {33, 64, 1}},
                                   {{4, 3, 16}, {4, 5, 16}}};
    const int32_t ranks[3] = {2, 2, 3}, axes[3] = {1, 1, 1};
    const bp_dtype dts[3] = {BP_F32, BP_F16, BP_F64};
    for (int c = 0; c < 3; c++) {
        const int32_t r = ranks[c], ax = axes[c];
        const int64_t *s0 = cases[c][0], *s1 = cases[c][1];
        int64_t so[3] = {s0[0], s0[1], s0[2]};
        so[ax] = s0[ax] + s1[ax];
        const int64_t n0 = count(r, s0), n1 = count(r, s1), no = count(r, so);
        double *v0 = quarters(n0, 0), *v1 = quarters(n1, 17), *want = malloc((size_t)no * 8);
        cr_assert_not_null(want);
        /* out[o, j, i] over (outer, joined axis, inner) */
        const int64_t inner = r == 3 ? s0[2] : 1, outer = s0[0];
        for (int64_t o = 0; o < outer; o++)
            for (int64_t j = 0; j < so[ax]; j++)
                for (int64_t i = 0; i < inner; i++)
                    want[(o * so[ax] + j) * inner + i] =
                        j < s0[ax] ? v0[(o * s0[ax] + j) * inner + i]
                                   : v1[(o * s1[ax] + j - s0[ax]) * inner + i];
        for (int d = 0; d < 3; d++) {
            bp_tensor *xs[2] = {bpt_tensor(be, dts[d], r, s0, v0), bpt_tensor(be, dts[d], r, s1, v1)};
            bp_tensor *o = NULL;
            BPT_OK(bp_concat(2, (const bp_tensor *const *)xs, ax, &o));
            bpt_expect("concat", o, dts[d], r, so, want, bpt_exact());
            /* the joined tensor's middle columns back out */
            int64_t starts[3] = {0, 1, 0}, stops[3] = {so[0], so[1] - 1, so[2]}, sl[3];
            for (int32_t k = 0; k < r; k++)
                sl[k] = stops[k] - starts[k];
            double *ws = malloc((size_t)count(r, sl) * 8);
            cr_assert_not_null(ws);
            for (int64_t a = 0; a < sl[0]; a++)
                for (int64_t b = 0; b < sl[1]; b++)
                    for (int64_t i = 0; i < (r == 3 ? sl[2] : 1); i++)
                        ws[(a * sl[1] + b) * (r == 3 ? sl[2] : 1) + i] =
                            want[(a * so[1] + b + 1) * inner + i];
            bp_tensor *sv = NULL;
            BPT_OK(bp_slice(o, starts, stops, NULL, &sv));
            bpt_expect("slice", sv, dts[d], r, sl, ws, bpt_exact());
            bp_tensor_release(sv);
            free(ws);
            bp_tensor_release(o);
            bp_tensor_release(xs[0]), bp_tensor_release(xs[1]);
        }
        free(v0), free(v1), free(want);
    }
    /* pad: x's rows land inside the padded output's */
    const int64_t sx[2] = {6, 40}, before[2] = {1, 3}, after[2] = {2, 5}, sp[2] = {9, 48};
    double *xv = quarters(80 * 3, 9), *wp = malloc(9 * 48 * 8);
    cr_assert_not_null(wp);
    for (int64_t i = 0; i < 9; i++)
        for (int64_t j = 0; j < 48; j++)
            wp[i * 48 + j] = i >= 1 && i < 7 && j >= 3 && j < 43 ? xv[(i - 1) * 40 + j - 3] : 1.5;
    bp_tensor *x = bpt_tensor(be, BP_F32, 2, sx, xv), *o = NULL;
    BPT_OK(bp_pad(x, before, after, 1.5, &o));
    bpt_expect("pad", o, BP_F32, 2, sp, wp, bpt_exact());
    bp_tensor_release(o);
    bp_tensor_release(x);
    free(xv), free(wp);
    bp_context_destroy(ctx);
}

Test(cuda_ops, gather_copies_whole_rows_and_reports_a_bad_row_index)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    /* x (50, 64) on axis 0 (rows of 64: 16-byte words); x (3, 50, 6) on axis
     * 1 (rows of 6: narrower words); x (50, 3) on axis 1 (a row of one: the
     * element kernel) */
    const int64_t idx[7] = {0, 49, -1, 7, 7, -50, 23};
    const int64_t s7[1] = {7};
    const bp_dtype dts[3] = {BP_F32, BP_F16, BP_I64};
    const int64_t shapes[3][3] = {{50, 64, 1}, {3, 50, 6}, {50, 3, 1}};
    const int32_t ranks[3] = {2, 3, 2}, axes[3] = {0, 1, 1};
    for (int c = 0; c < 3; c++) {
        const int32_t r = ranks[c], ax = axes[c];
        const int64_t *s = shapes[c];
        const int64_t nx = count(r, s), dim = s[ax];
        const int64_t nidx = c == 2 ? 3 : 7;
        int64_t so[3];
        for (int32_t k = 0, j = 0; k < r; k++) {
            if (k == ax)
                so[j++] = nidx;
            else
                so[j++] = s[k];
        }
        const int64_t inner = r == 3 ? s[2] : (ax == 0 ? s[1] : 1), outer = ax == 0 ? 1 : s[0];
        double *xv = quarters(nx, 4), *want = malloc((size_t)(outer * nidx * inner) * 8);
        cr_assert_not_null(want);
        int64_t iv[7];
        for (int64_t q = 0; q < nidx; q++)
            iv[q] = c == 2 ? q - 1 : idx[q];
        for (int64_t o = 0; o < outer; o++)
            for (int64_t q = 0; q < nidx; q++) {
                const int64_t j = iv[q] < 0 ? iv[q] + dim : iv[q];
                for (int64_t i = 0; i < inner; i++)
                    want[(o * nidx + q) * inner + i] = xv[(o * dim + j) * inner + i];
            }
        for (int d = 0; d < 3; d++) {
            const int64_t sn[1] = {nidx};
            bp_tensor *x = bpt_tensor(be, dts[d], r, s, xv);
            bp_tensor *t = bpt_tensor_i64(be, d == 1 ? BP_I32 : BP_I64, 1, c == 2 ? sn : s7, iv);
            bp_tensor *o = NULL;
            BPT_OK(bp_gather(x, t, ax, &o));
            bpt_expect("gather", o, dts[d], r, so, want, bpt_exact());
            bp_tensor_release(o);
            bp_tensor_release(t);
            bp_tensor_release(x);
        }
        free(xv), free(want);
    }
    /* an index out of range on the row path: the error comes at the wait */
    const int64_t s2[2] = {50, 64}, bad[2] = {3, 50}, s2i[1] = {2};
    bp_tensor *x = bpt_tensor(be, BP_F32, 2, s2, NULL), *t = bpt_tensor_i64(be, BP_I64, 1, s2i, bad);
    bp_tensor *o = NULL;
    BPT_OK(bp_gather(x, t, 0, &o));
    BPT_FAILS(BP_ERR_INDEX, bp_backend_synchronize(be));
    cr_assert(strstr(bp_last_error(), "50") != NULL, "names the index: %s", bp_last_error());
    BPT_OK(bp_backend_synchronize(be)); /* reported once, then cleared */
    bp_tensor_release(o), bp_tensor_release(t), bp_tensor_release(x);
    bp_context_destroy(ctx);
}

Test(cuda_ops, row_reductions_in_packs_give_the_sums_and_first_indices)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    /* rows of 4096 (packs), 4099 (rows not aligned: elements), 40000 (split
     * over blocks at pack boundaries) and 100 (a warp per row) */
    const int64_t rowlens[4] = {4096, 4099, 40000, 100};
    const bp_dtype dts[3] = {BP_F32, BP_F16, BP_BF16};
    const int32_t ax1 = 1;
    for (int c = 0; c < 4; c++) {
        const int64_t L = rowlens[c], R = 3, s[2] = {R, L}, sr[1] = {R};
        double *v = quarters(R * L, c), sum[3], mx[3];
        int64_t am[3];
        v[1 * L + L / 3] = 9;   /* row 1: a unique maximum ... */
        v[1 * L + L - 2] = 9;   /* ... twice: the first wins */
        v[2 * L + L / 2] = NAN; /* row 2: NaN is the maximum and its index */
        for (int64_t r = 0; r < R; r++) { /* the first NaN, else the first maximum */
            sum[r] = 0, mx[r] = 0, am[r] = -1;
            for (int64_t i = 0; i < L; i++) {
                const double e = v[r * L + i];
                sum[r] += e;
                if (am[r] < 0 || (mx[r] == mx[r] && (e != e || e > mx[r])))
                    mx[r] = e, am[r] = i;
            }
        }
        for (int d = 0; d < 3; d++) {
            bp_tensor *x = bpt_tensor(be, dts[d], 2, s, v), *o = NULL;
            BPT_OK(bp_sum(x, 1, &ax1, false, &o));
            bpt_expect("sum over rows", o, dts[d], 1, sr, sum, bpt_exact());
            bp_tensor_release(o);
            BPT_OK(bp_max(x, 1, &ax1, false, &o));
            bpt_expect("max over rows", o, dts[d], 1, sr, mx, bpt_exact());
            bp_tensor_release(o);
            BPT_OK(bp_argmax(x, 1, &ax1, false, &o));
            bpt_expect_i64("argmax over rows", o, BP_I64, 1, sr, am);
            bp_tensor_release(o);
            bp_tensor_release(x);
        }
        free(v);
    }
    bp_context_destroy(ctx);
}

/* softmax (or log_softmax) of a row in double, as the reference computes it */
static void host_softmax(const double *x, double *y, int64_t n, bool log_)
{
    double m = -INFINITY;
    bool nan = false;
    for (int64_t i = 0; i < n; i++)
        m = x[i] > m ? x[i] : m, nan = nan || x[i] != x[i];
    if (nan)
        m = NAN;
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += exp(x[i] - m);
    for (int64_t i = 0; i < n; i++)
        y[i] = log_ ? x[i] - m - log(s) : exp(x[i] - m) / s;
}

Test(cuda_ops, softmax_rows_in_shared_memory_or_read_online_match_the_host)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    /* 8192 f32 (shared memory without opting in), 32000 (opted in, packs),
     * 32001 (opted in, elements), 70000 (too long: the online pass), 300 (a
     * warp per row); rows with -inf elements, a +inf (all NaN), all -inf (all
     * NaN) */
    const int64_t lens[5] = {8192, 32000, 32001, 70000, 300};
    const bp_dtype dts[2] = {BP_F32, BP_F16};
    for (int c = 0; c < 5; c++) {
        const int64_t L = lens[c], R = 4, s[2] = {R, L};
        double *v = malloc((size_t)(R * L) * 8), *want = malloc((size_t)(R * L) * 8);
        cr_assert(v && want);
        bpt_fill_random(v, R * L, 77 + (uint64_t)c, -8, 8);
        for (int64_t i = 0; i < L; i += 7)
            v[i] = -INFINITY;           /* row 0: some -inf */
        v[1 * L + L - 1] = INFINITY;    /* row 1: a +inf */
        for (int64_t i = 0; i < L; i++)
            v[2 * L + i] = -INFINITY;   /* row 2: all -inf */
        for (int lg = 0; lg < 2; lg++)
            for (int d = 0; d < 2; d++) {
                bp_tensor *x = bpt_tensor(be, dts[d], 2, s, v), *o = NULL;
                double *xr = bpt_read(x); /* the values as the dtype holds them */
                for (int64_t r = 0; r < R; r++)
                    host_softmax(xr + r * L, want + r * L, L, lg);
                free(xr);
                BPT_OK(lg ? bp_log_softmax(x, -1, &o) : bp_softmax(x, -1, &o));
                const bpt_tol tol = {dts[d] == BP_F32 ? 2e-5 : 0, 1e-30, 2};
                char what[64];
                snprintf(what, sizeof what, "%s of rows of %lld %s", lg ? "log_softmax" : "softmax",
                         (long long)L, bp_dtype_name(dts[d]));
                bpt_expect(what, o, dts[d], 2, s, want, tol);
                bp_tensor_release(o);
                bp_tensor_release(x);
            }
        free(v), free(want);
    }
    bp_context_destroy(ctx);
}

/* scatter_elements with add and mul of f16 and f32 accumulates in double and
 * rounds once: many updates of one element would otherwise round at each */
Test(cuda_ops, scatter_add_and_mul_of_halves_round_once_per_element)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t n = 2000, s1[2] = {1, 1}, su[2] = {1, 2000};
    double *up = malloc((size_t)n * 8);
    int64_t *iv = calloc((size_t)n, sizeof *iv); /* every update to element 0 */
    cr_assert(up && iv);
    const bp_dtype dts[3] = {BP_F16, BP_BF16, BP_F32};
    for (int d = 0; d < 3; d++) {
        double add = 1, mul = 1;
        for (int64_t i = 0; i < n; i++) {
            up[i] = 1 + (double)((i * 37) % 9 - 4) * 0x1p-7; /* exact in f16 and bf16 */
            add += up[i];
            mul *= up[i];
        }
        const double one[1] = {1};
        bp_tensor *x = bpt_tensor(be, dts[d], 2, s1, one), *u = bpt_tensor(be, dts[d], 2, su, up);
        bp_tensor *t = bpt_tensor_i64(be, BP_I64, 2, su, iv), *o = NULL;
        /* the double sum and product are exact to far below the dtype's ulp */
        const bpt_tol tol = {dts[d] == BP_F32 ? 1e-7 : 0, 0, 0};
        BPT_OK(bp_scatter_elements(x, t, u, 1, BP_SCATTER_ADD, &o));
        bpt_expect("scatter add, rounded once", o, dts[d], 2, s1, &add, tol);
        bp_tensor_release(o);
        BPT_OK(bp_scatter_elements(x, t, u, 1, BP_SCATTER_MUL, &o));
        bpt_expect("scatter mul, rounded once", o, dts[d], 2, s1, &mul, tol);
        bp_tensor_release(o);
        bp_tensor_release(x), bp_tensor_release(u), bp_tensor_release(t);
    }
    free(up), free(iv);
    bp_context_destroy(ctx);
}

/* hard_sigmoid and hardswish in double near their lower knees, silu's
 * subnormal results: rounded once from the double formula */
Test(cuda_ops, knees_of_hard_sigmoid_and_hardswish_and_silu_far_below_zero_round_once)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t n = 12;
    const double xv[12] = {-2.5, -2.5000002, -2.4999998, -3.0, -3.0000002, -2.9999998,
                           -100.0, -95.5, -88.0, -103.0, -90.0, -1e30};
    double hs[12], hw[12], si[12];
    for (int i = 0; i < 12; i++) {
        const float f = (float)xv[i];
        const double v = f; /* the value the f32 tensor holds */
        const double c1 = 0.2 * v + 0.5, c2 = v / 6.0 + 0.5;
        hs[i] = c1 < 0 ? 0 : c1 > 1 ? 1 : c1;
        hw[i] = v * (c2 < 0 ? 0 : c2 > 1 ? 1 : c2);
        const double e = exp(v);
        si[i] = v * e / (1.0 + e);
    }
    bp_tensor *x = bpt_tensor(be, BP_F32, 1, &n, xv), *o = NULL;
    BPT_OK(bp_hard_sigmoid(x, 0.2, 0.5, &o));
    bpt_expect("hard_sigmoid", o, BP_F32, 1, &n, hs, bpt_exact());
    bp_tensor_release(o);
    BPT_OK(bp_hardswish(x, &o));
    bpt_expect("hardswish", o, BP_F32, 1, &n, hw, bpt_exact());
    bp_tensor_release(o);
    /* silu rounds once only below -87, where float's e^v is subnormal and the
     * formula runs in double; above that it is the float formula, as on the
     * CPU backends, within conform's tolerance: the last six elements. */
    const int64_t nfar = 6;
    bp_tensor *far = bpt_tensor(be, BP_F32, 1, &nfar, xv + 6);
    BPT_OK(bp_silu(far, &o));
    bpt_expect("silu", o, BP_F32, 1, &nfar, si + 6, bpt_exact());
    bp_tensor_release(o);
    bp_tensor_release(far);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

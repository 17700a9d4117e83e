/* Pooling (nn.h bp_max_pool, bp_average_pool, bp_global_*_pool) and LRN on
 * every backend against the oracle (cf_oracle_max_pool, _average_pool,
 * _lrn; the global pools against cf_oracle_reduce over the spatial axes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect_nn.h"

#define WIN(...) ((bp_window){.struct_size = sizeof(bp_window), __VA_ARGS__})

static double lo_of(bp_dtype dt) { return dt == BP_U8 ? 0 : -100; }

/* max_pool on every backend and numeric dtype: values exactly, indices exactly. */
static void check_max(const char *what, int32_t rank, const int64_t *xs, bp_window win)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < CF_COUNT(cf_numeric_dtypes); d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            if (!bpt_supports(be, BP_OP_MAX_POOL, dt))
                continue;
            cf_array xa = bpt_random_array(dt, rank, xs, 41 + d, lo_of(dt), 100);
            cf_array want, idx;
            cr_assert(cf_oracle_max_pool(&xa, &win, &want, &idx));
            bp_tensor *x = bpt_tensor_of(be, &xa), *y = NULL, *i = NULL, *y2 = NULL;
            BPT_OK(bp_max_pool(x, &win, &y, &i));
            bpt_expect_array(what, y, &want, bpt_exact());
            bpt_expect_array(what, i, &idx, bpt_exact());
            BPT_OK(bp_max_pool(x, &win, &y2, NULL)); /* indices not wanted */
            bpt_expect_array(what, y2, &want, bpt_exact());
            bp_tensor_release(x);
            bp_tensor_release(y);
            bp_tensor_release(y2);
            bp_tensor_release(i);
            cf_array_free(&xa);
            cf_array_free(&want);
            cf_array_free(&idx);
        }
    }
    bp_context_destroy(ctx);
}

Test(nn_pool, max_pool_1d_2d_and_3d_match_the_oracle)
{
    check_max("max_pool 1-D", 3, (int64_t[]){2, 3, 9}, WIN(.kernel = {3}, .strides = {2}));
    check_max("max_pool 2-D", 4, (int64_t[]){2, 3, 7, 6},
              WIN(.kernel = {3, 2}, .strides = {2, 1}, .pads = {1, 0, 1, 1}));
    check_max("max_pool 3-D", 5, (int64_t[]){1, 2, 4, 5, 3},
              WIN(.kernel = {2, 3, 2}, .pads = {1, 1, 0, 0, 1, 1}));
}

Test(nn_pool, max_pool_dilations_and_auto_pad_match_the_oracle)
{
    check_max("max_pool dilated", 4, (int64_t[]){1, 2, 9, 8},
              WIN(.kernel = {3, 2}, .dilations = {2, 3}, .pads = {2, 1, 1, 1}));
    check_max("max_pool SAME_UPPER", 4, (int64_t[]){1, 2, 7, 6},
              WIN(.kernel = {3, 2}, .strides = {2, 2}, .auto_pad = BP_AUTO_PAD_SAME_UPPER));
    check_max("max_pool SAME_LOWER", 4, (int64_t[]){1, 2, 7, 6},
              WIN(.kernel = {3, 2}, .strides = {2, 2}, .auto_pad = BP_AUTO_PAD_SAME_LOWER));
}

Test(nn_pool, max_pool_storage_order_1_gives_column_major_indices)
{
    check_max("max_pool storage_order 1", 4, (int64_t[]){2, 2, 5, 4},
              WIN(.kernel = {2, 2}, .strides = {1, 2}, .storage_order = 1));
}

Test(nn_pool, max_pool_ceil_mode_rounds_the_output_up)
{
    /* (8 + 0 - 3) / 2 = 2.5: floor 3 outputs, ceil 4 */
    check_max("max_pool ceil_mode", 3, (int64_t[]){1, 1, 8}, WIN(.kernel = {3}, .strides = {2},
                                                                 .ceil_mode = true));
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F32, 3, (int64_t[]){1, 1, 8}, NULL), *y = NULL;
        BPT_OK(bp_max_pool(x, &WIN(.kernel = {3}, .strides = {2}, .ceil_mode = true), &y, NULL));
        bpt_expect_meta("ceil_mode", y, BP_F32, 3, (int64_t[]){1, 1, 4});
        bp_tensor_release(y);
        BPT_OK(bp_max_pool(x, &WIN(.kernel = {3}, .strides = {2}), &y, NULL));
        bpt_expect_meta("floor", y, BP_F32, 3, (int64_t[]){1, 1, 3});
        bp_tensor_release(y);
        bp_tensor_release(x);
    }
    bp_context_destroy(ctx);
}

Test(nn_pool, max_pool_ceil_mode_drops_a_window_that_starts_in_the_end_padding)
{
    /* D 4, kernel 2, stride 2, pads (0, 1): ceil(3 / 2) + 1 = 3 windows, but
     * the third starts at 4, in the padding: 2 (onnx/onnx#5741) */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F32, 3, (int64_t[]){1, 1, 4}, (double[]){1, 2, 3, 4});
        bp_tensor *y = NULL, *a = NULL;
        bp_window win = WIN(.kernel = {2}, .strides = {2}, .pads = {0, 1}, .ceil_mode = true);
        BPT_OK(bp_max_pool(x, &win, &y, NULL));
        bpt_expect("max_pool", y, BP_F32, 3, (int64_t[]){1, 1, 2}, (double[]){2, 4}, bpt_exact());
        BPT_OK(bp_average_pool(x, &win, &a));
        bpt_expect("average_pool", a, BP_F32, 3, (int64_t[]){1, 1, 2}, (double[]){1.5, 3.5},
                   bpt_exact());
        bp_tensor_release(x);
        bp_tensor_release(y);
        bp_tensor_release(a);
    }
    bp_context_destroy(ctx);
    check_max("max_pool ceil_mode with end padding", 4, (int64_t[]){1, 2, 5, 6},
              WIN(.kernel = {2, 3}, .strides = {2, 3}, .pads = {0, 1, 1, 2}, .ceil_mode = true));
}

Test(nn_pool, max_pool_padding_never_wins)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F32, 3, (int64_t[]){1, 1, 3}, (double[]){-5, -3, -4});
        bp_tensor *y = NULL, *i = NULL;
        BPT_OK(bp_max_pool(x, &WIN(.kernel = {2}, .pads = {1, 1}), &y, &i));
        bpt_expect("max_pool", y, BP_F32, 3, (int64_t[]){1, 1, 4}, (double[]){-5, -3, -3, -4},
                   bpt_exact());
        bpt_expect_i64("indices", i, BP_I64, 3, (int64_t[]){1, 1, 4}, (int64_t[]){0, 1, 1, 2});
        bp_tensor_release(x);
        bp_tensor_release(y);
        bp_tensor_release(i);
    }
    bp_context_destroy(ctx);
}

Test(nn_pool, max_pool_indices_are_flat_into_x)
{
    /* the second image's second channel: indices count every element before it */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        double v[2 * 2 * 4] = {0};
        v[15] = 9; /* x[1, 1, 3] */
        v[9] = 7;  /* x[1, 0, 1] */
        bp_tensor *x = bpt_tensor(be, BP_F64, 3, (int64_t[]){2, 2, 4}, v), *y = NULL, *i = NULL;
        BPT_OK(bp_max_pool(x, &WIN(.kernel = {4}), &y, &i));
        bpt_expect_i64("indices", i, BP_I64, 3, (int64_t[]){2, 2, 1}, (int64_t[]){0, 4, 9, 15});
        bp_tensor_release(x);
        bp_tensor_release(y);
        bp_tensor_release(i);
    }
    bp_context_destroy(ctx);
}

Test(nn_pool, max_pool_first_maximum_wins_ties_and_nan_wins_over_numbers)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F32, 3, (int64_t[]){1, 1, 6},
                                  (double[]){2, 2, 1, NAN, 5, 3});
        bp_tensor *y = NULL, *i = NULL;
        BPT_OK(bp_max_pool(x, &WIN(.kernel = {3}, .strides = {3}), &y, &i));
        bpt_expect("max_pool", y, BP_F32, 3, (int64_t[]){1, 1, 2}, (double[]){2, NAN}, bpt_exact());
        bpt_expect_i64("indices", i, BP_I64, 3, (int64_t[]){1, 1, 2}, (int64_t[]){0, 3});
        bp_tensor_release(x);
        bp_tensor_release(y);
        bp_tensor_release(i);
    }
    bp_context_destroy(ctx);
}

Test(nn_pool, max_pool_window_of_only_padding_gives_minus_infinity_and_index_minus_one)
{
    /* D 1, kernel 2 dilated by 2, pads (1, 1): the taps are at -1 and 1 */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_window win = WIN(.kernel = {2}, .dilations = {2}, .pads = {1, 1});
        bp_tensor *x = bpt_tensor(be, BP_F32, 3, (int64_t[]){1, 1, 1}, (double[]){4});
        bp_tensor *xi = bpt_tensor(be, BP_I8, 3, (int64_t[]){1, 1, 1}, (double[]){4});
        bp_tensor *y = NULL, *i = NULL, *yi = NULL;
        BPT_OK(bp_max_pool(x, &win, &y, &i));
        bpt_expect("max_pool", y, BP_F32, 3, (int64_t[]){1, 1, 1}, (double[]){-INFINITY},
                   bpt_exact());
        bpt_expect_i64("indices", i, BP_I64, 3, (int64_t[]){1, 1, 1}, (int64_t[]){-1});
        BPT_OK(bp_max_pool(xi, &win, &yi, NULL));
        bpt_expect_i64("max_pool i8", yi, BP_I8, 3, (int64_t[]){1, 1, 1}, (int64_t[]){-128});
        bp_tensor_release(x);
        bp_tensor_release(xi);
        bp_tensor_release(y);
        bp_tensor_release(yi);
        bp_tensor_release(i);
    }
    bp_context_destroy(ctx);
}

/* ---- average_pool ----------------------------------------------------------- */

static void check_avg(const char *what, int32_t rank, const int64_t *xs, bp_window win)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < CF_COUNT(cf_float_dtypes); d++) {
            bp_dtype dt = cf_float_dtypes[d];
            if (!bpt_supports(be, BP_OP_AVERAGE_POOL, dt))
                continue;
            cf_array xa = bpt_random_array(dt, rank, xs, 51 + d, -10, 10), want;
            double *terms;
            int64_t k;
            cr_assert(cf_oracle_average_pool(&xa, &win, &want, &terms, &k));
            bp_tensor *x = bpt_tensor_of(be, &xa), *y = NULL;
            BPT_OK(bp_average_pool(x, &win, &y));
            bpt_expect_norm(what, y, &want, terms, k, 2);
            bp_tensor_release(x);
            bp_tensor_release(y);
            cf_array_free(&xa);
            cf_array_free(&want);
            free(terms);
        }
    }
    bp_context_destroy(ctx);
}

Test(nn_pool, average_pool_1d_2d_and_3d_match_the_oracle)
{
    check_avg("average_pool 1-D", 3, (int64_t[]){2, 3, 9}, WIN(.kernel = {3}, .strides = {2}));
    check_avg("average_pool 2-D padded", 4, (int64_t[]){2, 3, 7, 6},
              WIN(.kernel = {3, 2}, .strides = {2, 1}, .pads = {1, 0, 1, 1}));
    check_avg("average_pool 3-D", 5, (int64_t[]){1, 2, 4, 5, 3}, WIN(.kernel = {2, 3, 2}));
    check_avg("average_pool SAME_UPPER", 4, (int64_t[]){1, 2, 7, 6},
              WIN(.kernel = {3, 3}, .strides = {2, 2}, .auto_pad = BP_AUTO_PAD_SAME_UPPER));
}

Test(nn_pool, average_pool_count_include_pad)
{
    check_avg("average_pool count_include_pad", 4, (int64_t[]){1, 2, 5, 5},
              WIN(.kernel = {3, 3}, .pads = {1, 1, 1, 1}, .count_include_pad = true));
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F64, 3, (int64_t[]){1, 1, 2}, (double[]){3, 6});
        bp_tensor *y = NULL, *z = NULL;
        BPT_OK(bp_average_pool(x, &WIN(.kernel = {2}, .pads = {1, 1}, .count_include_pad = true),
                               &y));
        bpt_expect("counting the padding", y, BP_F64, 3, (int64_t[]){1, 1, 3},
                   (double[]){1.5, 4.5, 3}, bpt_exact());
        BPT_OK(bp_average_pool(x, &WIN(.kernel = {2}, .pads = {1, 1}), &z));
        bpt_expect("not counting it", z, BP_F64, 3, (int64_t[]){1, 1, 3}, (double[]){3, 4.5, 6},
                   bpt_exact());
        bp_tensor_release(x);
        bp_tensor_release(y);
        bp_tensor_release(z);
    }
    bp_context_destroy(ctx);
}

Test(nn_pool, average_pool_ceil_mode_counts_the_padding_only_up_to_its_end)
{
    check_avg("average_pool ceil_mode count_include_pad", 4, (int64_t[]){1, 1, 6, 7},
              WIN(.kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 0, 1, 0}, .ceil_mode = true,
                  .count_include_pad = true));
}

/* The pool (max: without indices) of xa on the reference and on blas_cpu
 * give the same bytes. */
static void expect_pool_bits(bool max, size_t c, bp_backend *ref, bp_backend *fast,
                             const cf_array *xa, const bp_window *win)
{
    bp_tensor *xr = bpt_tensor_of(ref, xa), *xf = bpt_tensor_of(fast, xa);
    bp_tensor *yr = NULL, *yf = NULL;
    BPT_OK(max ? bp_max_pool(xr, win, &yr, NULL) : bp_average_pool(xr, win, &yr));
    BPT_OK(max ? bp_max_pool(xf, win, &yf, NULL) : bp_average_pool(xf, win, &yf));
    cr_assert(bpt_same_bytes(yr, yf), "case %zu: blas_cpu's %s is not the reference's bits", c,
              max ? "max_pool" : "average_pool");
    bp_tensor_release(xr);
    bp_tensor_release(xf);
    bp_tensor_release(yr);
    bp_tensor_release(yf);
}

/* blas_cpu's line-at-a-time f32 average_pool (window_pool.c), and its
 * strided 3x3 path, add the taps in the reference's order and divide by
 * its count: the reference's bits, for every window form, with NaN,
 * infinities and -0 among the values too. */
Test(nn_pool, blas_cpu_average_pool_gives_the_reference_bits)
{
    bp_context *ctx = bpt_context();
    bp_backend *ref = NULL, *fast = NULL;
    if (bp_backend_get(ctx, "blas_cpu", &fast) != BP_OK)
        cr_skip_test("blas_cpu is not built here");
    BPT_OK(bp_backend_get(ctx, "binary", &ref));
    const struct {
        int32_t rank;
        int64_t shape[5];
        bp_window win;
    } cases[] = {
        {4, {1, 24, 56, 56}, WIN(.kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1})},
        {4, {2, 3, 7, 6}, WIN(.kernel = {3, 2}, .strides = {2, 1}, .pads = {1, 0, 1, 1},
                              .count_include_pad = true)},
        {4, {1, 2, 6, 7}, WIN(.kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 0, 1, 0},
                              .ceil_mode = true, .count_include_pad = true)},
        {4, {1, 2, 9, 8}, WIN(.kernel = {3, 2}, .pads = {2, 1, 1, 1})},
        {3, {2, 3, 9}, WIN(.kernel = {3}, .strides = {2})},
        {5, {1, 2, 4, 5, 3}, WIN(.kernel = {2, 3, 2}, .pads = {1, 1, 0, 0, 1, 1})},
        {4, {1, 4, 7, 7}, WIN(.kernel = {7, 7})},
        {4, {1, 2, 5, 5}, WIN(.kernel = {3, 3}, .strides = {2, 2},
                              .auto_pad = BP_AUTO_PAD_SAME_UPPER)},
        /* blas_cpu's strided 3x3 path: uneven strides and pads, ceil mode,
         * the padding counted or not */
        {4, {1, 3, 15, 14}, WIN(.kernel = {3, 3}, .strides = {2, 3}, .pads = {2, 1, 1, 2})},
        {4, {2, 2, 11, 17}, WIN(.kernel = {3, 3}, .strides = {1, 2}, .pads = {1, 1, 1, 1},
                                .ceil_mode = true, .count_include_pad = true)},
        {4, {1, 16, 27, 27}, WIN(.kernel = {3, 3}, .strides = {2, 2}, .ceil_mode = true)},
        /* blas_cpu's whole-plane windows: planes eight at a time and the rest */
        {4, {2, 13, 7, 7}, WIN(.kernel = {7, 7})},
        {3, {1, 9, 11}, WIN(.kernel = {11}, .strides = {3})},
        {5, {1, 3, 2, 3, 4}, WIN(.kernel = {2, 3, 4})},
    };
    /* NaN, -0 and a value far from the rest; then infinities of both signs
     * (whose sum is NaN). Not the two together: a NaN from x meeting the
     * NaN of inf + -inf may come out as either (IEEE 754 leaves which open,
     * and the compiler may order an addition's operands either way). */
    static const double specials[2][3] = {{NAN, -0.0, 1e30}, {INFINITY, -INFINITY, -0.0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cf_array xa = bpt_random_array(BP_F32, cases[c].rank, cases[c].shape, 61 + (int)c, -10, 10);
        expect_pool_bits(false, c, ref, fast, &xa, &cases[c].win);
        for (int sp = 0; sp < 2; sp++) {
            cf_array xs = bpt_random_array(BP_F32, cases[c].rank, cases[c].shape, 81 + (int)c,
                                           -10, 10);
            for (int64_t i = 0; i < xs.n; i += 7)
                xs.f[i] = specials[sp][(i / 7 + (int64_t)c) % 3];
            expect_pool_bits(false, c, ref, fast, &xs, &cases[c].win);
            cf_array_free(&xs);
        }
        cf_array_free(&xa);
    }
    bp_context_destroy(ctx);
}

/* blas_cpu's line-at-a-time f32 max_pool (window_pool.c) keeps the
 * reference's steps: NaN wins and stays, ties keep the first (-0 before
 * +0), the padding never wins, a window of only padding is -inf. Every 2-D
 * form: 3x3 stride 2 with padding and with ceil_mode (as in SqueezeNet),
 * dilated, uneven kernels and pads, a kernel wider than x, and a 1-D and a
 * 3-D window beside them. */
Test(nn_pool, blas_cpu_max_pool_gives_the_reference_bits)
{
    bp_context *ctx = bpt_context();
    bp_backend *ref = NULL, *fast = NULL;
    if (bp_backend_get(ctx, "blas_cpu", &fast) != BP_OK)
        cr_skip_test("blas_cpu is not built here");
    BPT_OK(bp_backend_get(ctx, "binary", &ref));
    const struct {
        int32_t rank;
        int64_t shape[5];
        bp_window win;
    } cases[] = {
        {4, {1, 24, 56, 56}, WIN(.kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1})},
        {4, {1, 16, 27, 27}, WIN(.kernel = {3, 3}, .strides = {2, 2}, .ceil_mode = true)},
        {4, {2, 3, 13, 12}, WIN(.kernel = {3, 3}, .dilations = {2, 3}, .pads = {2, 1, 0, 2})},
        {4, {1, 2, 9, 8}, WIN(.kernel = {2, 4}, .strides = {1, 3}, .pads = {1, 0, 1, 2})},
        {4, {1, 3, 4, 3}, WIN(.kernel = {5, 5}, .pads = {2, 2, 2, 2})},
        {4, {1, 2, 6, 7}, WIN(.kernel = {3, 3}, .strides = {2, 2}, .pads = {2, 2, 2, 2},
                              .ceil_mode = true)},
        /* blas_cpu's strided 3x3 path: dilated, uneven strides and pads, ceil mode */
        {4, {1, 3, 15, 14}, WIN(.kernel = {3, 3}, .strides = {2, 3}, .dilations = {2, 2},
                                .pads = {2, 1, 1, 2})},
        {4, {2, 2, 11, 17}, WIN(.kernel = {3, 3}, .strides = {1, 2}, .pads = {1, 1, 1, 1},
                                .ceil_mode = true)},
        /* rows dilated by 3 (each window's rows in line buffers of their
         * own); lines wider than the path's strip of 256 outputs */
        {4, {1, 2, 19, 41}, WIN(.kernel = {3, 3}, .strides = {2, 2}, .dilations = {3, 1},
                                .pads = {1, 1, 1, 1})},
        {4, {1, 2, 7, 1101}, WIN(.kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1})},
        {3, {2, 3, 9}, WIN(.kernel = {3}, .strides = {2}, .pads = {1, 1})},
        {5, {1, 2, 4, 5, 3}, WIN(.kernel = {2, 3, 2}, .pads = {1, 1, 0, 0, 1, 1})},
    };
    static const double specials[] = {NAN, -0.0, 0.0, -INFINITY, INFINITY, 7.0, 7.0};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        cf_array xa = bpt_random_array(BP_F32, cases[c].rank, cases[c].shape, 71 + (int)c, -10, 10);
        for (int64_t i = 0; i < xa.n; i += 5) /* ties, zeros of both signs, NaN, infinities */
            xa.f[i] = specials[(i / 5 + (int64_t)c) % 7];
        expect_pool_bits(true, c, ref, fast, &xa, &cases[c].win);
        /* Windows whose maximum is a tie of -0 and +0, or two NaNs of other
         * payloads: which comes first in the kernel's order decides the bits. */
        for (int64_t i = 0; i < xa.n; i++) {
            const uint32_t nan_bits = 0x7fc00000u | (uint32_t)(i % 7 + 1);
            float q;
            memcpy(&q, &nan_bits, sizeof q);
            xa.f[i] = i % 13 == 0 ? (double)q : i % 3 == 0 ? -0.0 : i % 3 == 1 ? 0.0 : -1.0;
        }
        expect_pool_bits(true, c, ref, fast, &xa, &cases[c].win);
        /* The same without NaN (blas_cpu's strided 3x3 windows take a path
         * of their own over planes without NaN): ties of -0 and +0 and of
         * equal numbers, the first in the kernel's order kept. */
        for (int64_t i = 0; i < xa.n; i++)
            xa.f[i] = i % 11 == 0 ? 3.0 : i % 3 == 0 ? -0.0 : i % 3 == 1 ? 0.0 : -1.0;
        expect_pool_bits(true, c, ref, fast, &xa, &cases[c].win);
        cf_array_free(&xa);
    }
    bp_context_destroy(ctx);
}

/* blas_cpu's strided 3x3 max pool folds a plane's rows as if they held no
 * NaN and learns from the values it read whether they did: plane p holds
 * one NaN, in column p of its middle row, so that every column a row's
 * fold reads (eight outputs at a time, the last eight again, a strip's
 * last few one by one, the last tap of all; the fold in C for dilated
 * columns) is the one with the NaN in some plane; each plane's pool is the
 * reference's bits. */
Test(nn_pool, blas_cpu_max_pool_finds_a_nan_in_any_column)
{
    bp_context *ctx = bpt_context();
    bp_backend *ref = NULL, *fast = NULL;
    if (bp_backend_get(ctx, "blas_cpu", &fast) != BP_OK)
        cr_skip_test("blas_cpu is not built here");
    BPT_OK(bp_backend_get(ctx, "binary", &ref));
    /* 41 columns: 20 outputs a row; 523: a strip of 256 outputs, then 5;
     * columns dilated by 2: the fold in C */
    const struct {
        int64_t W;
        bp_window win;
    } cases[] = {{41, WIN(.kernel = {3, 3}, .strides = {2, 2})},
                 {523, WIN(.kernel = {3, 3}, .strides = {2, 2})},
                 {41, WIN(.kernel = {3, 3}, .strides = {2, 2}, .dilations = {1, 2})}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t W = cases[c].W, H = 5, planes = W < 64 ? W : 24;
        cf_array xa = bpt_random_array(BP_F32, 4, (int64_t[]){1, planes, H, W}, 91 + (int)c,
                                       -10, 10);
        for (int64_t p = 0; p < planes; p++) /* the wide rows: the last columns */
            xa.f[(p * H + 2) * W + (W < 64 ? p : W - planes + p)] = NAN;
        expect_pool_bits(true, c, ref, fast, &xa, &cases[c].win);
        cf_array_free(&xa);
    }
    bp_context_destroy(ctx);
}

/* Distance in f32 ulps (order of the bit patterns; NaN apart from all). */
static int64_t ulps_apart(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t oa = ia < 0 ? (int64_t)INT32_MIN - ia : ia, ob = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return oa > ob ? oa - ob : ob - oa;
}

/* blas_cpu's f32 LRN over blocks of positions (norm.c: the window's squares
 * summed across positions at once, the divisor by vmath's exp and log, or
 * libm's pow where those do not apply) against the reference: the same
 * float, or one ulp apart where the exact quotient lies at a rounding
 * boundary; NaN where the reference gives NaN. Windows odd, even and wider
 * than the channels; a short last block; NaN, infinities and zeros in x;
 * a negative bias (bases below zero: pow's NaN) and large betas. */
Test(nn_pool, blas_cpu_lrn_over_blocks_of_positions_is_within_an_ulp_of_the_reference)
{
    bp_context *ctx = bpt_context();
    bp_backend *ref = NULL, *fast = NULL;
    if (bp_backend_get(ctx, "blas_cpu", &fast) != BP_OK)
        cr_skip_test("blas_cpu is not built here");
    BPT_OK(bp_backend_get(ctx, "binary", &ref));
    static const int64_t shapes[2][4] = {{2, 13, 20, 17}, {1, 64, 9, 9}};
    static const struct {
        int64_t size;
        double alpha, beta, bias;
    } ps[] = {{5, 1e-4, 0.75, 1}, {4, 0.5, 0.6, 1.5}, {1, 2, 1.3, 0.5}, {11, 0.7, 3.5, 0.25},
              {3, 1, 0.75, -1}, {80, 1e-3, 0.75, 2}};
    static const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30};
    for (int sh = 0; sh < 2; sh++)
        for (size_t c = 0; c < sizeof ps / sizeof ps[0]; c++) {
            cf_array xa = bpt_random_array(BP_F32, 4, shapes[sh], 81 + (int)c, -4, 4);
            for (int64_t i = 0; i < xa.n; i += 97)
                xa.f[i] = specials[(i / 97) % 6];
            bp_tensor *xr = bpt_tensor_of(ref, &xa), *xf = bpt_tensor_of(fast, &xa);
            bp_tensor *yr = NULL, *yf = NULL;
            BPT_OK(bp_lrn(xr, ps[c].size, ps[c].alpha, ps[c].beta, ps[c].bias, &yr));
            BPT_OK(bp_lrn(xf, ps[c].size, ps[c].alpha, ps[c].beta, ps[c].bias, &yf));
            float *a = bpt_read_bytes(yr), *b = bpt_read_bytes(yf);
            int64_t worst = 0, at = 0;
            for (int64_t i = 0; i < xa.n; i++) {
                const int64_t d = isnan(a[i]) ? (isnan(b[i]) ? 0 : INT64_MAX)
                                               : isnan(b[i]) ? INT64_MAX : ulps_apart(a[i], b[i]);
                if (d > worst)
                    worst = d, at = i;
            }
            cr_expect_leq(worst, 1, "shape %d, case %zu: element %lld is %.9g, the reference "
                          "%.9g", sh, c, (long long)at, (double)b[at], (double)a[at]);
            free(a);
            free(b);
            bp_tensor_release(xr);
            bp_tensor_release(xf);
            bp_tensor_release(yr);
            bp_tensor_release(yf);
            cf_array_free(&xa);
        }
    bp_context_destroy(ctx);
}

/* ---- global pools (composed in the core from bp_max / bp_mean) ------------------- */

static void check_global(bool max)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    static const int32_t axes3[3] = {2, 3, 4};
    int64_t xs[5] = {2, 3, 4, 5, 2};
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int32_t rank = 3; rank <= 5; rank++) {
            cf_array xa = bpt_random_array(BP_F32, rank, xs, 61 + rank, -5, 5), want;
            double *terms;
            int64_t k;
            cr_assert(cf_oracle_reduce(max ? BP_OP_MAX : BP_OP_MEAN, &xa, rank - 2, axes3, true,
                                       &want, &terms, &k));
            bp_tensor *x = bpt_tensor_of(be, &xa), *y = NULL;
            BPT_OK(max ? bp_global_max_pool(x, &y) : bp_global_average_pool(x, &y));
            if (max)
                bpt_expect_array("global_max_pool", y, &want, bpt_exact());
            else
                bpt_expect_norm("global_average_pool", y, &want, terms, k, 2);
            bp_tensor_release(x);
            bp_tensor_release(y);
            cf_array_free(&xa);
            cf_array_free(&want);
            free(terms);
        }
    }
    bp_context_destroy(ctx);
}

Test(nn_pool, global_max_pool_is_the_max_over_every_spatial_axis) { check_global(true); }

Test(nn_pool, global_average_pool_is_the_mean_over_every_spatial_axis) { check_global(false); }

/* ---- LRN ----------------------------------------------------------------------- */

Test(nn_pool, lrn_with_a_window_wider_than_any_tensor_sums_over_every_channel)
{
    /* found by fuzz_graph: blas_cpu's estimate of the work, channels times
     * (size + 16), overflowed int64 for size INT64_MAX (UBSan; the ASan +
     * UBSan pass fails this test without the fix) */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    const float xv[6] = {1, -2, 0.5f, 3, -1, 2}; /* (1, 3, 2): 3 channels, 2 positions */
    const double alpha = 0.5, beta = 0.75, bias = 2.0;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        if (!bpt_supports(be, BP_OP_LRN, BP_F32))
            continue;
        bp_tensor *x = NULL, *y = NULL;
        BPT_OK(bp_tensor_from_host(be, BP_F32, 3, (const int64_t[]){1, 3, 2}, xv, &x));
        BPT_OK(bp_lrn(x, INT64_MAX, alpha, beta, bias, &y));
        float got[6];
        BPT_OK(bp_tensor_to_host(y, got, sizeof got));
        for (int s = 0; s < 2; s++) {
            double sq = 0;
            for (int c = 0; c < 3; c++)
                sq += (double)xv[2 * c + s] * xv[2 * c + s];
            for (int c = 0; c < 3; c++) {
                double want = xv[2 * c + s] / pow(bias + alpha / (double)INT64_MAX * sq, beta);
                cr_expect(fabs(got[2 * c + s] - want) <= 1e-6 * fabs(want), "on %s: %g, want %g",
                          bp_backend_name(be), (double)got[2 * c + s], want);
            }
        }
        bp_tensor_release(x);
        bp_tensor_release(y);
    }
    bp_context_destroy(ctx);
}

Test(nn_pool, lrn_matches_the_oracle_for_odd_and_even_sizes)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    int64_t xs[4] = {2, 7, 3, 2};
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < CF_COUNT(cf_float_dtypes); d++) {
            bp_dtype dt = cf_float_dtypes[d];
            if (!bpt_supports(be, BP_OP_LRN, dt))
                continue;
            for (int64_t size = 1; size <= 4; size++) {
                cf_array xa = bpt_random_array(dt, 4, xs, 71, -3, 3), want;
                cr_assert(cf_oracle_lrn(&xa, size, 0.5, 0.75, 2.0, &want));
                bp_tensor *x = bpt_tensor_of(be, &xa), *y = NULL;
                BPT_OK(bp_lrn(x, size, 0.5, 0.75, 2.0, &y));
                char what[32];
                snprintf(what, sizeof what, "lrn size %lld", (long long)size);
                bpt_expect_array(what, y, &want, bpt_math(dt));
                bp_tensor_release(x);
                bp_tensor_release(y);
                cf_array_free(&xa);
                cf_array_free(&want);
            }
        }
    }
    bp_context_destroy(ctx);
}

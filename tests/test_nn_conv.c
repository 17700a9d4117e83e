/* Convolution and transposed convolution (nn.h bp_conv, bp_conv_transpose)
 * on every backend and float dtype, against the oracle (cf_oracle_conv,
 * cf_oracle_conv_transpose), compared norm-wise by the size of the terms
 * summed; plus the behaviours the oracle alone would not pin down: auto_pad
 * against the explicit pads it stands for, groups that never mix, the
 * transpose as conv's adjoint, ONNX's published examples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect_nn.h"

#define FLOATS cf_float_dtypes

typedef struct geometry {
    int32_t rank;
    int64_t x[5], w[5];
    bool bias;
    bp_window win;
} geometry;

static int64_t out_channels(const geometry *g, bool transpose)
{
    return transpose ? g->w[1] * (g->win.groups ? g->win.groups : 1) : g->w[0];
}

static bp_status run(bool transpose, const bp_tensor *x, const bp_tensor *w, const bp_tensor *b,
                     const bp_window *win, bp_tensor **out)
{
    return transpose ? bp_conv_transpose(x, w, b, win, out) : bp_conv(x, w, b, win, out);
}

/* Every backend of ctx (or only the plugin named), every one of the ndt
 * dtypes it supports: the op against the oracle. Returns the checks run. */
static int check_in(bp_context *ctx, const char *only, const bp_dtype *dts, int ndt,
                    const char *what, bool transpose, const geometry *g)
{
    bp_op op = transpose ? BP_OP_CONV_TRANSPOSE : BP_OP_CONV;
    int checked = 0;
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        if (only && strcmp(bp_backend_plugin_name(be), only) != 0)
            continue;
        for (int d = 0; d < ndt; d++) {
            bp_dtype dt = dts[d];
            if (!bpt_supports(be, op, dt))
                continue;
            int64_t m = out_channels(g, transpose);
            cf_array xa = bpt_random_array(dt, g->rank, g->x, 11, -1, 1);
            cf_array wa = bpt_random_array(dt, g->rank, g->w, 12, -1, 1);
            cf_array ba = bpt_random_array(dt, 1, &m, 13, -1, 1);
            cf_array want;
            double *terms = NULL;
            int64_t k = 0;
            bool ok = transpose ? cf_oracle_conv_transpose(&xa, &wa, g->bias ? &ba : NULL,
                                                           &g->win, &want, &terms, &k)
                                : cf_oracle_conv(&xa, &wa, g->bias ? &ba : NULL, &g->win, &want,
                                                 &terms, &k);
            cr_assert(ok, "oracle out of memory");
            bp_tensor *x = bpt_tensor_of(be, &xa), *w = bpt_tensor_of(be, &wa);
            bp_tensor *b = g->bias ? bpt_tensor_of(be, &ba) : NULL, *y = NULL;
            BPT_OK(run(transpose, x, w, b, &g->win, &y));
            bpt_expect_norm(what, y, &want, terms, k, 2);
            bp_tensor_release(y);
            bp_tensor_release(x);
            bp_tensor_release(w);
            bp_tensor_release(b);
            cf_array_free(&xa);
            cf_array_free(&wa);
            cf_array_free(&ba);
            cf_array_free(&want);
            free(terms);
            checked++;
        }
    }
    return checked;
}

static void check(const char *what, bool transpose, const geometry *g)
{
    bp_context *ctx = bpt_context();
    (void)check_in(ctx, NULL, FLOATS, CF_COUNT(FLOATS), what, transpose, g);
    bp_context_destroy(ctx);
}

#define WIN(...) ((bp_window){.struct_size = sizeof(bp_window), __VA_ARGS__})

Test(nn_conv, conv_1d_2d_and_3d_match_the_oracle)
{
    check("conv 1-D", false, &(geometry){3, {2, 3, 7}, {4, 3, 3}, true, WIN(.groups = 0)});
    check("conv 2-D", false, &(geometry){4, {2, 3, 6, 5}, {4, 3, 3, 2}, true, WIN(.groups = 0)});
    check("conv 3-D", false,
          &(geometry){5, {1, 2, 4, 5, 3}, {3, 2, 2, 3, 2}, true, WIN(.groups = 0)});
}

/* One to eight output positions per image (blas_cpu: each filter's row
 * dotted with the gathered windows, conv_narrow.c), as silero-vad's
 * convolutions have them: with and without a bias, two or three images
 * (positions of one image are not the next's), filters and taps that are
 * no multiple of the kernel's blocks (2, 4 or 8 filters, 8 lanes), a
 * single filter, groups, dilation, 2-D and 3-D windows, and channels
 * gathered tap by tap (more channels than the kernel is long). */
Test(nn_conv, conv_over_one_to_eight_positions_matches_the_oracle)
{
    check("conv 1-D over 4 positions", false,
          &(geometry){3, {2, 33, 4}, {16, 33, 3}, true, WIN(.pads = {1, 1})});
    check("conv 1-D strided over 2 positions", false,
          &(geometry){3, {2, 32, 4}, {8, 32, 3}, false, WIN(.strides = {2}, .pads = {1, 1})});
    check("conv 1-D over 1 position", false,
          &(geometry){3, {2, 16, 1}, {12, 16, 3}, true, WIN(.pads = {1, 1})});
    check("conv 1-D, one channel, long kernel, over 3 positions", false,
          &(geometry){3, {1, 1, 300}, {20, 1, 64}, true, WIN(.strides = {64}, .pads = {0, 0})});
    check("conv 2-D over 2 x 2 positions", false,
          &(geometry){4, {2, 8, 2, 2}, {6, 8, 3, 3}, true, WIN(.pads = {1, 1, 1, 1})});
    check("conv 1-D over 7 positions, 13 filters of 99 taps", false,
          &(geometry){3, {3, 33, 7}, {13, 33, 3}, true, WIN(.pads = {1, 1})});
    check("conv 1-D over 5 positions, one filter", false,
          &(geometry){3, {2, 20, 5}, {1, 20, 3}, true, WIN(.pads = {1, 1})});
    check("conv 1-D over 6 positions, three filters, dilated", false,
          &(geometry){3, {1, 9, 8}, {3, 9, 2}, false, WIN(.dilations = {2}, .pads = {0, 0})});
    check("conv 2-D over 4 x 2 positions in 2 groups", false,
          &(geometry){4, {2, 12, 4, 2}, {10, 6, 3, 3}, true,
                      WIN(.groups = 2, .pads = {1, 1, 1, 1})});
    check("conv 1x1 over 2 x 3 positions, 70 filters of 300 channels", false,
          &(geometry){4, {1, 300, 2, 3}, {70, 300, 1, 1}, true, WIN(.groups = 0)});
    check("conv 3-D over 2 x 2 x 2 positions", false,
          &(geometry){5, {1, 5, 3, 3, 2}, {9, 5, 2, 2, 2}, true, WIN(.pads = {0, 0, 1, 0, 0, 1})});
}

/* A case of the tables below: what it checks, and its shapes. */
typedef struct named_geometry {
    const char *what;
    geometry g;
} named_geometry;

/* Each case on blas_cpu with three threads (so that its blocks do not
 * divide evenly), in f32 and f64, against the oracle. */
static void check_on_three_threads(const named_geometry *cases, size_t n)
{
    bp_backend *blas = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\nthreads = 3\n", "blas_cpu", &blas);
    static const bp_dtype dts[] = {BP_F32, BP_F64};
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(check_in(ctx, "blas_cpu", dts, 2, cases[i].what, false, &cases[i].g), 2,
                     "%s: not run in f32 and f64", cases[i].what);
    bp_context_destroy(ctx);
}

/* Few positions (conv_narrow.c) and enough filters and taps that three
 * threads share the filters: blocks of 32 filters, a short last one, two
 * images gathered before the products. */
Test(nn_conv, conv_over_few_positions_split_across_threads_matches_the_oracle)
{
    static const named_geometry cases[] = {
        {"conv 3x3 over 2 x 2 positions, 200 filters",
         {4, {2, 160, 2, 2}, {200, 160, 3, 3}, true, WIN(.pads = {1, 1, 1, 1})}},
        {"conv 1x1 over 8 positions, 150 filters",
         {4, {1, 1000, 8, 1}, {150, 1000, 1, 1}, false, WIN(.groups = 0)}},
    };
    check_on_three_threads(cases, CF_COUNT(cases));
}

Test(nn_conv, conv_strides_pads_and_dilations_match_the_oracle)
{
    check("conv strided, padded, dilated", false,
          &(geometry){4, {2, 2, 9, 8}, {3, 2, 3, 2}, true,
                      WIN(.strides = {2, 3}, .pads = {1, 0, 2, 1}, .dilations = {2, 1})});
    check("conv 1-D asymmetric pads", false,
          &(geometry){3, {1, 2, 5}, {2, 2, 4}, false, WIN(.pads = {3, 1})});
}

Test(nn_conv, conv_groups_split_channels)
{
    check("conv groups=2", false,
          &(geometry){4, {2, 6, 5, 5}, {4, 3, 3, 3}, true, WIN(.groups = 2, .pads = {1, 1, 1, 1})});
    /* a NaN in group 1's input channels never reaches group 0's outputs */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t xs[4] = {1, 4, 3, 3}, ws[4] = {4, 2, 2, 2};
        cf_array xa = bpt_random_array(BP_F32, 4, xs, 5, -1, 1);
        for (int64_t i = 18; i < 36; i++) /* channels 2 and 3 */
            xa.f[i] = NAN;
        cf_array wa = bpt_random_array(BP_F32, 4, ws, 6, -1, 1);
        bp_tensor *x = bpt_tensor_of(be, &xa), *w = bpt_tensor_of(be, &wa), *y = NULL;
        BPT_OK(bp_conv(x, w, NULL, &WIN(.groups = 2), &y));
        double *v = bpt_read(y);
        for (int64_t i = 0; i < 16; i++)
            cr_assert_eq(isnan(v[i]), i >= 8, "%s: element %lld is %g", bp_backend_name(be),
                         (long long)i, v[i]);
        free(v);
        bp_tensor_release(x);
        bp_tensor_release(w);
        bp_tensor_release(y);
        cf_array_free(&xa);
        cf_array_free(&wa);
    }
    bp_context_destroy(ctx);
}

Test(nn_conv, conv_depthwise_has_one_channel_per_group)
{
    check("conv depthwise", false,
          &(geometry){4, {2, 5, 6, 6}, {5, 1, 3, 3}, true, WIN(.groups = 5, .pads = {1, 1, 1, 1})});
}

/* blas_cpu's depthwise f32 path (conv.c: whole lines of taps, in double)
 * sums in the reference's order: the reference's bits, for every form. */
Test(nn_conv, blas_cpu_depthwise_conv_gives_the_reference_bits)
{
    bp_context *ctx = bpt_context();
    bp_backend *ref = NULL, *fast = NULL;
    if (bp_backend_get(ctx, "blas_cpu", &fast) != BP_OK)
        cr_skip_test("blas_cpu is not built here");
    BPT_OK(bp_backend_get(ctx, "binary", &ref));
    const geometry cases[] = {
        {4, {1, 136, 28, 28}, {136, 1, 3, 3}, true, WIN(.groups = 136, .pads = {1, 1, 1, 1})},
        {4, {2, 12, 15, 14}, {12, 1, 3, 3}, false,
         WIN(.groups = 12, .strides = {2, 2}, .pads = {1, 1, 1, 1})},
        {4, {1, 4, 9, 8}, {8, 1, 3, 2}, true,  /* a channel multiplier of 2 */
         WIN(.groups = 4, .dilations = {2, 3}, .pads = {2, 1, 0, 2})},
        {3, {2, 6, 11}, {6, 1, 5}, true, WIN(.groups = 6, .strides = {3})},
        {5, {1, 3, 4, 5, 6}, {3, 1, 2, 3, 2}, true, WIN(.groups = 3, .pads = {1, 0, 1, 0, 1, 1})},
        {4, {1, 5, 7, 6}, {5, 1, 3, 3}, true,
         WIN(.groups = 5, .strides = {2, 2}, .auto_pad = BP_AUTO_PAD_SAME_UPPER)},
        /* 3x3 planes (whole outputs at a time): every output at an edge (a
         * NaN weight), dilated with uneven pads and strides (an infinite
         * one), no padding at all */
        {4, {1, 3, 2, 2}, {3, 1, 3, 3}, true, WIN(.groups = 3, .pads = {1, 1, 1, 1})},
        {4, {1, 4, 10, 12}, {4, 1, 3, 3}, true,
         WIN(.groups = 4, .dilations = {2, 3}, .strides = {1, 2}, .pads = {2, 3, 1, 0})},
        {4, {2, 2, 6, 5}, {2, 1, 3, 3}, false, WIN(.groups = 2)},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const geometry *g = &cases[c];
        cf_array xa = bpt_random_array(BP_F32, g->rank, g->x, 71 + (int)c, -3, 3);
        cf_array wa = bpt_random_array(BP_F32, g->rank, g->w, 81 + (int)c, -1, 1);
        cf_array ba = bpt_random_array(BP_F32, 1, &g->w[0], 91 + (int)c, -1, 1);
        if (c == 7) /* a corner tap: padding must not make NaN of 0 inf */
            wa.f[0] = INFINITY;
        if (c == 6) /* NaN only where the corner tap is inside x */
            wa.f[9 + 8] = NAN;
        bp_tensor *y[2] = {NULL, NULL};
        bp_backend *bes[2] = {ref, fast};
        for (int k = 0; k < 2; k++) {
            bp_tensor *x = bpt_tensor_of(bes[k], &xa), *w = bpt_tensor_of(bes[k], &wa);
            bp_tensor *b = g->bias ? bpt_tensor_of(bes[k], &ba) : NULL;
            BPT_OK(bp_conv(x, w, b, &g->win, &y[k]));
            bp_tensor_release(x);
            bp_tensor_release(w);
            bp_tensor_release(b);
        }
        size_t n = bp_tensor_nbytes(y[0]);
        cr_assert_eq(n, bp_tensor_nbytes(y[1]), "case %zu: shapes differ", c);
        float *a = malloc(n ? n : 1), *f = malloc(n ? n : 1);
        cr_assert(a && f);
        BPT_OK(bp_tensor_to_host(y[0], a, n));
        BPT_OK(bp_tensor_to_host(y[1], f, n));
        cr_assert(memcmp(a, f, n) == 0, "case %zu: blas_cpu's depthwise conv is not the "
                  "reference's bits", c);
        free(a);
        free(f);
        bp_tensor_release(y[0]);
        bp_tensor_release(y[1]);
        cf_array_free(&xa);
        cf_array_free(&wa);
        cf_array_free(&ba);
    }
    bp_context_destroy(ctx);
}

Test(nn_conv, conv_big_enough_for_gemm_matches_the_oracle)
{
    check("conv 16->8 channels", false,
          &(geometry){4, {2, 16, 12, 12}, {8, 16, 3, 3}, true, WIN(.pads = {1, 1, 1, 1})});
    check("conv 16->8 strided dilated", false,
          &(geometry){4, {2, 16, 13, 11}, {8, 16, 3, 3}, false,
                      WIN(.strides = {2, 2}, .dilations = {2, 1}, .pads = {2, 0, 1, 3})});
    check("conv 16->8 in 2 groups", false,
          &(geometry){4, {3, 16, 9, 9}, {8, 8, 3, 3}, true, WIN(.groups = 2, .pads = {1, 1, 1, 1})});
    check("conv 1x1", false, &(geometry){4, {2, 8, 6, 7}, {8, 8, 1, 1}, true, WIN(.groups = 0)});
    check("conv 1-D 8->8", false, &(geometry){3, {2, 8, 40}, {8, 8, 5}, true, WIN(.pads = {2, 2})});
}

/* A kernel along one axis, over enough channels and outputs that blas_cpu
 * runs one gemm per tap over shifted views of x instead of unfolding it:
 * padding (taps that reach it add nothing), dilation, an untouched inner
 * axis, groups, a kernel along the last axis. */
Test(nn_conv, conv_along_one_axis_over_many_channels_matches_the_oracle)
{
    check("conv 1-D 64->8 padded dilated", false,
          &(geometry){3, {2, 64, 80}, {8, 64, 5}, true, WIN(.pads = {2, 1}, .dilations = {2})});
    check("conv 5x1 over an untouched axis", false,
          &(geometry){4, {1, 64, 70, 3}, {8, 64, 5, 1}, true, WIN(.pads = {1, 0, 2, 0})});
    check("conv 1-D in 2 groups", false,
          &(geometry){3, {1, 128, 70}, {8, 64, 3}, false, WIN(.groups = 2)});
    check("conv 1x7 along the last axis", false,
          &(geometry){4, {1, 64, 1, 90}, {4, 64, 1, 7}, true, WIN(.pads = {0, 3, 0, 3})});
}

/* Convolutions big enough that blas_cpu cuts them into tiles for its
 * threads (three of them, so that tiles do not divide evenly): blocks of
 * positions with a short last one, blocks of output channels where the
 * positions are few, the one-axis kernel's taps within blocks of positions,
 * 1x1 groups. Every tile must add up to the whole. */
Test(nn_conv, conv_split_into_tiles_across_threads_matches_the_oracle)
{
    static const named_geometry cases[] = {
        {"conv 3x3 in blocks of positions",
         {4, {1, 32, 37, 41}, {48, 32, 3, 3}, true, WIN(.pads = {1, 1, 1, 1})}},
        {"conv 3x3 over 7x7 in blocks of channels",
         {4, {1, 96, 7, 7}, {136, 96, 3, 3}, false, WIN(.pads = {1, 1, 1, 1})}},
        /* 2979 rows, split between two threads at row 1489: channel 165's tap 4 */
        {"conv 3x3 over 7x7, its shared slab unfolded from the middle of a channel",
         {4, {1, 331, 7, 7}, {136, 331, 3, 3}, true, WIN(.pads = {1, 1, 1, 1})}},
        {"conv 1-D taps in blocks of positions",
         {3, {2, 64, 700}, {40, 64, 5}, true, WIN(.pads = {2, 3})}},
        {"conv 1x1 in 3 groups", {4, {1, 96, 30, 30}, {48, 32, 1, 1}, true, WIN(.groups = 3)}},
    };
    check_on_three_threads(cases, CF_COUNT(cases));
}

/* Stride 1 with output lines as long as the input's: blas_cpu copies each
 * tap's whole shifted plane at once and zeros what falls in the padding
 * (conv.c, unfold_shifted). Its edges: dilation, pads on one side only, a
 * kernel that misses whole rows (5 taps over 2 rows, 3 over one row: the
 * pointer to a row before x must not even be formed, UBSan) or is wider
 * than the image, a 1-D kernel, and (three threads) tiles that start in the middle
 * of a line; f32 and f64. */
Test(nn_conv, conv_unfolding_shifted_planes_matches_the_oracle)
{
    static const named_geometry cases[] = {
        {"3x3 pads 1", {4, {2, 5, 9, 11}, {6, 5, 3, 3}, true, WIN(.pads = {1, 1, 1, 1})}},
        {"3x3 dilated 2, pads 2",
         {4, {1, 4, 8, 10}, {5, 4, 3, 3}, false, WIN(.pads = {2, 2, 2, 2}, .dilations = {2, 2})}},
        {"3x3 pads on the far side only",
         {4, {1, 4, 7, 6}, {5, 4, 3, 3}, true, WIN(.pads = {0, 0, 2, 2})}},
        {"5x5 over 2 rows and 3 columns",
         {4, {1, 3, 2, 3}, {4, 3, 5, 5}, true, WIN(.pads = {2, 2, 2, 2})}},
        {"5x5 over one column", {4, {1, 3, 6, 1}, {4, 3, 5, 5}, false, WIN(.pads = {2, 2, 2, 2})}},
        {"3x3 pads 1 over one row of 200 (the rows above and below miss it)",
         {4, {1, 2, 1, 200}, {4, 2, 3, 3}, true, WIN(.pads = {1, 1, 1, 1})}},
        {"1-D 3 taps pads 1", {3, {2, 6, 30}, {5, 6, 3}, true, WIN(.pads = {1, 1})}},
        {"3x3 pads 1 in tiles across lines",
         {4, {1, 8, 53, 47}, {16, 8, 3, 3}, true, WIN(.pads = {1, 1, 1, 1})}},
    };
    check_on_three_threads(cases, CF_COUNT(cases));
}

Test(nn_conv, conv_with_an_empty_batch_gives_an_empty_result)
{
    check("conv N=0", false, &(geometry){4, {0, 3, 4, 4}, {2, 3, 3, 3}, true, WIN(.groups = 0)});
}

/* The same op twice: with auto_pad and with the explicit pads it means. */
static void same_as_pads(bool transpose, int32_t rank, const int64_t *xs, const int64_t *ws,
                         bp_window a, bp_window b)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        cf_array xa = bpt_random_array(BP_F64, rank, xs, 21, -1, 1);
        cf_array wa = bpt_random_array(BP_F64, rank, ws, 22, -1, 1);
        bp_tensor *x = bpt_tensor_of(be, &xa), *w = bpt_tensor_of(be, &wa), *ya = NULL, *yb = NULL;
        BPT_OK(run(transpose, x, w, NULL, &a, &ya));
        BPT_OK(run(transpose, x, w, NULL, &b, &yb));
        cf_array want;
        double *vb = bpt_read(yb);
        want = bpt_array(BP_F64, bp_tensor_rank(yb), bp_tensor_shape(yb), vb);
        bpt_expect_array("auto_pad against its explicit pads", ya, &want, bpt_exact());
        free(vb);
        cf_array_free(&want);
        cf_array_free(&xa);
        cf_array_free(&wa);
        bp_tensor_release(x);
        bp_tensor_release(w);
        bp_tensor_release(ya);
        bp_tensor_release(yb);
    }
    bp_context_destroy(ctx);
}

Test(nn_conv, conv_auto_pad_same_upper_puts_the_odd_pad_at_the_end)
{
    /* D 7, stride 2, kernel 4: O 4, total pad 3 * 2 + 4 - 7 = 3: (1, 2) */
    same_as_pads(false, 3, (int64_t[]){1, 2, 7}, (int64_t[]){2, 2, 4},
                 WIN(.auto_pad = BP_AUTO_PAD_SAME_UPPER, .strides = {2}),
                 WIN(.pads = {1, 2}, .strides = {2}));
}

Test(nn_conv, conv_auto_pad_same_lower_puts_the_odd_pad_at_the_start)
{
    same_as_pads(false, 3, (int64_t[]){1, 2, 7}, (int64_t[]){2, 2, 4},
                 WIN(.auto_pad = BP_AUTO_PAD_SAME_LOWER, .strides = {2}),
                 WIN(.pads = {2, 1}, .strides = {2}));
}

Test(nn_conv, conv_auto_pad_valid_is_no_padding)
{
    same_as_pads(false, 4, (int64_t[]){1, 2, 6, 5}, (int64_t[]){2, 2, 3, 2},
                 WIN(.auto_pad = BP_AUTO_PAD_VALID), WIN(.groups = 0));
}

/* ---- conv_transpose ----------------------------------------------------------- */

Test(nn_conv, conv_transpose_1d_2d_and_3d_match_the_oracle)
{
    check("conv_transpose 1-D", true, &(geometry){3, {2, 3, 5}, {3, 2, 3}, true, WIN(.groups = 0)});
    check("conv_transpose 2-D", true,
          &(geometry){4, {2, 3, 4, 3}, {3, 2, 3, 2}, true, WIN(.strides = {2, 3})});
    check("conv_transpose 3-D", true,
          &(geometry){5, {1, 2, 3, 2, 3}, {2, 3, 2, 2, 2}, false, WIN(.strides = {1, 2, 1})});
}

Test(nn_conv, conv_transpose_strides_pads_output_padding_dilations_and_groups)
{
    check("conv_transpose everything", true,
          &(geometry){4, {2, 4, 4, 5}, {4, 3, 3, 2}, true,
                      WIN(.groups = 2, .strides = {3, 2}, .dilations = {2, 1},
                          .pads = {1, 2, 2, 0}, .output_padding = {1, 1})});
    check("conv_transpose gemm-sized", true,
          &(geometry){4, {2, 16, 6, 6}, {16, 8, 3, 3}, true, WIN(.strides = {2, 2}, .pads = {1, 1, 1, 1})});
}

Test(nn_conv, conv_transpose_output_shape_pads_at_the_end)
{
    /* D 4, stride 2, kernel 3: natural 9; output_shape 7 cuts 2 at the end,
     * output_shape 11 adds 2 (bias only) at the end */
    same_as_pads(true, 3, (int64_t[]){1, 2, 4}, (int64_t[]){2, 1, 3},
                 WIN(.strides = {2}, .output_shape = {7}), WIN(.strides = {2}, .pads = {0, 2}));
    check("conv_transpose output_shape larger than natural", true,
          &(geometry){3, {1, 2, 4}, {2, 1, 3}, true, WIN(.strides = {2}, .output_shape = {11})});
    check("conv_transpose output_shape 2-D", true,
          &(geometry){4, {1, 1, 3, 3}, {1, 2, 3, 3}, true,
                      WIN(.strides = {3, 2}, .output_shape = {8, 9})});
}

Test(nn_conv, conv_transpose_same_upper_output_is_input_times_stride)
{
    /* D 3, stride 2, kernel 3: natural 7, O 6, total 1 at the end (UPPER) */
    same_as_pads(true, 4, (int64_t[]){1, 1, 3, 3}, (int64_t[]){1, 2, 3, 3},
                 WIN(.auto_pad = BP_AUTO_PAD_SAME_UPPER, .strides = {2, 2}),
                 WIN(.strides = {2, 2}, .pads = {0, 0, 1, 1}));
    same_as_pads(true, 4, (int64_t[]){1, 1, 3, 3}, (int64_t[]){1, 2, 3, 3},
                 WIN(.auto_pad = BP_AUTO_PAD_SAME_LOWER, .strides = {2, 2}),
                 WIN(.strides = {2, 2}, .pads = {1, 1, 0, 0}));
}

/* <conv(x, w), g> = <x, conv_transpose(g, w)>: the transpose is the adjoint. */
Test(nn_conv, conv_transpose_is_the_adjoint_of_conv)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    bp_window win = WIN(.strides = {2, 1}, .pads = {1, 0, 1, 2}, .dilations = {1, 2}, .groups = 2);
    int64_t xs[4] = {2, 4, 7, 6}, ws[4] = {6, 2, 3, 2};
    BPT_FOR_EACH_BACKEND(ctx, be) {
        cf_array xa = bpt_random_array(BP_F64, 4, xs, 31, -1, 1);
        cf_array wa = bpt_random_array(BP_F64, 4, ws, 32, -1, 1);
        bp_tensor *x = bpt_tensor_of(be, &xa), *w = bpt_tensor_of(be, &wa), *y = NULL;
        BPT_OK(bp_conv(x, w, NULL, &win, &y));
        cf_array ga = bpt_random_array(BP_F64, 4, bp_tensor_shape(y), 33, -1, 1);
        bp_tensor *gt = bpt_tensor_of(be, &ga), *xt = NULL;
        /* w (6, 2, ...) read by conv_transpose as (in 6, out 2 per group): the
         * same window gives conv's input extents back (7 = 2 (4 - 1) + 3 - 2,
         * 6 = 1 (6 - 1) + 3 - 2) */
        bp_window pw = win;
        BPT_OK(bp_conv_transpose(gt, w, NULL, &pw, &xt));
        bpt_expect_meta("conv_transpose of conv's output", xt, BP_F64, 4, xs);
        double *yv = bpt_read(y), *xv = bpt_read(xt), lhs = 0, rhs = 0, mag = 0;
        for (int64_t i = 0; i < bp_tensor_numel(y); i++) {
            lhs += yv[i] * ga.f[i];
            mag += fabs(yv[i] * ga.f[i]);
        }
        for (int64_t i = 0; i < xa.n; i++)
            rhs += xa.f[i] * xv[i];
        cr_assert(fabs(lhs - rhs) <= 1e-12 * mag, "%s: <conv x, g> %.17g, <x, conv_transpose g> "
                  "%.17g", bp_backend_name(be), lhs, rhs);
        free(yv);
        free(xv);
        cf_array_free(&xa);
        cf_array_free(&wa);
        cf_array_free(&ga);
        bp_tensor_release(x);
        bp_tensor_release(w);
        bp_tensor_release(y);
        bp_tensor_release(gt);
        bp_tensor_release(xt);
    }
    bp_context_destroy(ctx);
}

/* ONNX's published examples (onnx/backend/test/case/node/convtranspose.py). */
Test(nn_conv, conv_transpose_gives_onnx_published_examples)
{
    static const double pads_y[7][3] = {{1, 1, 3}, {1, 1, 3}, {7, 4, 9}, {7, 4, 9},
                                        {7, 4, 9}, {13, 7, 15}, {13, 7, 15}};
    static const double same_y[6][6] = {{0, 0, 1, 1, 3, 2},   {0, 0, 1, 1, 3, 2},
                                        {3, 3, 8, 5, 12, 7},  {3, 3, 7, 4, 9, 5},
                                        {9, 9, 20, 11, 24, 13}, {6, 6, 13, 7, 15, 8}};
    double xv[9], ones[18];
    for (int i = 0; i < 9; i++)
        xv[i] = i;
    for (int i = 0; i < 18; i++)
        ones[i] = 1;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F32, 4, (int64_t[]){1, 1, 3, 3}, xv);
        bp_tensor *w = bpt_tensor(be, BP_F32, 4, (int64_t[]){1, 2, 3, 3}, ones), *y = NULL;
        double want[2 * 7 * 3];
        BPT_OK(bp_conv_transpose(x, w, NULL, &WIN(.strides = {3, 2}, .pads = {1, 2, 1, 2}), &y));
        for (int i = 0; i < 42; i++)
            want[i] = pads_y[i % 21 / 3][i % 3];
        bpt_expect("test_convtranspose_pads", y, BP_F32, 4, (int64_t[]){1, 2, 7, 3}, want,
                   bpt_exact());
        bp_tensor_release(y);
        double want2[2 * 36];
        BPT_OK(bp_conv_transpose(x, w, NULL,
                                 &WIN(.strides = {2, 2}, .auto_pad = BP_AUTO_PAD_SAME_UPPER), &y));
        for (int i = 0; i < 72; i++)
            want2[i] = same_y[i % 36 / 6][i % 6];
        bpt_expect("test_convtranspose_autopad_same", y, BP_F32, 4, (int64_t[]){1, 2, 6, 6}, want2,
                   bpt_exact());
        bp_tensor_release(y);
        bp_tensor_release(x);
        bp_tensor_release(w);
    }
    bp_context_destroy(ctx);
}

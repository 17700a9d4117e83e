/* Resize (nn.h bp_resize) on every backend against the oracle
 * (cf_oracle_resize): nearest with every rounding rule and coordinate
 * transformation on every numeric dtype (exact), linear and cubic on the
 * float dtypes (norm-wise), scales and sizes, up and down; and ONNX's
 * published examples for the rules that are easiest to get wrong. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpt.h"
#include "expect_nn.h"

static bp_resize_options opts(bp_resize_mode m, bp_resize_coordinates c, bp_resize_nearest n)
{
    bp_resize_options o = BP_RESIZE_OPTIONS_INIT;
    o.mode = m;
    o.coordinates = c;
    o.nearest = n;
    return o;
}

/* One resize on every backend and dtype of the set: scales (or sizes). */
static void check(const char *what, const bp_resize_options *o, int32_t rank, const int64_t *xs,
                  const double *scales, const int64_t *sizes)
{
    bool nearest = o->mode == BP_RESIZE_NEAREST;
    const bp_dtype *dts = nearest ? cf_numeric_dtypes : cf_float_dtypes;
    int ndt = nearest ? CF_COUNT(cf_numeric_dtypes) : CF_COUNT(cf_float_dtypes);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < ndt; d++) {
            bp_dtype dt = dts[d];
            if (!bpt_supports(be, BP_OP_RESIZE, dt))
                continue;
            cf_array xa = bpt_random_array(dt, rank, xs, 131 + d, dt == BP_U8 ? 0 : -50, 50), want;
            double *terms;
            int64_t k;
            cr_assert(cf_oracle_resize(&xa, scales, sizes, o, &want, &terms, &k));
            bp_tensor *x = bpt_tensor_of(be, &xa), *y = NULL;
            BPT_OK(bp_resize(x, scales, sizes, o, &y));
            if (nearest)
                bpt_expect_array(what, y, &want, bpt_exact());
            else
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

static const char *coord_name[] = {"half_pixel", "asymmetric", "align_corners",
                                   "pytorch_half_pixel", "tf_half_pixel_for_nn"};
static const char *nearest_name[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

Test(nn_resize, resize_nearest_every_rounding_rule_and_coordinate_transformation)
{
    int64_t xs[4] = {1, 2, 4, 5};
    static const double up[4] = {1, 1, 2.5, 1.6}, down[4] = {1, 1, 0.5, 0.6};
    for (int c = 0; c <= BP_RESIZE_TF_HALF_PIXEL_FOR_NN; c++)
        for (int n = 0; n <= BP_NEAREST_CEIL; n++) {
            bp_resize_options o = opts(BP_RESIZE_NEAREST, (bp_resize_coordinates)c,
                                       (bp_resize_nearest)n);
            char what[96];
            snprintf(what, sizeof what, "nearest %s %s", coord_name[c], nearest_name[n]);
            check(what, &o, 4, xs, up, NULL);
            check(what, &o, 4, xs, down, NULL);
            check(what, &o, 4, xs, NULL, (int64_t[]){1, 2, 7, 3});
        }
}

Test(nn_resize, resize_linear_every_coordinate_transformation)
{
    int64_t xs[4] = {2, 1, 4, 5};
    for (int c = 0; c <= BP_RESIZE_PYTORCH_HALF_PIXEL; c++) {
        bp_resize_options o = opts(BP_RESIZE_LINEAR, (bp_resize_coordinates)c, 0);
        char what[64];
        snprintf(what, sizeof what, "linear %s", coord_name[c]);
        check(what, &o, 4, xs, (double[]){1, 1, 2, 1.5}, NULL);
        check(what, &o, 4, xs, (double[]){1, 1, 0.6, 0.5}, NULL);
        check(what, &o, 4, xs, NULL, (int64_t[]){2, 1, 1, 9});
        check(what, &o, 3, (int64_t[]){3, 4, 5}, (double[]){2, 0.75, 1.4}, NULL); /* N-D */
    }
}

Test(nn_resize, resize_linear_align_corners)
{
    bp_resize_options o = opts(BP_RESIZE_LINEAR, BP_RESIZE_ALIGN_CORNERS, 0);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        /* the corners stay, the inside is evenly spaced */
        bp_tensor *x = bpt_tensor(be, BP_F64, 1, (int64_t[]){2}, (double[]){0, 3}), *y = NULL;
        BPT_OK(bp_resize(x, NULL, (int64_t[]){4}, &o, &y));
        bpt_expect("align_corners 2 -> 4", y, BP_F64, 1, (int64_t[]){4}, (double[]){0, 1, 2, 3},
                   bpt_exact());
        bp_tensor_release(y);
        /* ONNX's test_resize_downsample_scales_linear_align_corners: L is 0.6 D,
         * a real number, not the output's integer extent */
        bp_tensor *x2 = bpt_tensor(be, BP_F32, 4, (int64_t[]){1, 1, 2, 4},
                                   (double[]){1, 2, 3, 4, 5, 6, 7, 8});
        BPT_OK(bp_resize(x2, (double[]){1, 1, 0.6, 0.6}, NULL, &o, &y));
        bpt_expect("downsample align_corners", y, BP_F32, 4, (int64_t[]){1, 1, 1, 2},
                   (double[]){1, 3.142857142857143}, bpt_math(BP_F32));
        bp_tensor_release(y);
        bp_tensor_release(x);
        bp_tensor_release(x2);
    }
    bp_context_destroy(ctx);
}

Test(nn_resize, resize_cubic_with_and_without_exclude_outside)
{
    int64_t xs[4] = {1, 2, 5, 6};
    for (int ex = 0; ex < 2; ex++)
        for (int c = 0; c <= BP_RESIZE_PYTORCH_HALF_PIXEL; c++) {
            bp_resize_options o = opts(BP_RESIZE_CUBIC, (bp_resize_coordinates)c, 0);
            o.exclude_outside = ex;
            o.cubic_coeff_a = ex ? -0.5 : -0.75;
            char what[64];
            snprintf(what, sizeof what, "cubic %s%s", coord_name[c], ex ? " exclude_outside" : "");
            check(what, &o, 4, xs, (double[]){1, 1, 1.8, 0.5}, NULL);
            check(what, &o, 4, xs, NULL, (int64_t[]){1, 2, 9, 4});
        }
}

Test(nn_resize, resize_cubic_gives_onnx_published_example)
{
    /* test_resize_upsample_scales_cubic_align_corners, first row */
    bp_resize_options o = opts(BP_RESIZE_CUBIC, BP_RESIZE_ALIGN_CORNERS, 0);
    double xv[16];
    for (int i = 0; i < 16; i++)
        xv[i] = i + 1;
    static const double row0[8] = {1, 1.34110787, 1.80029155, 2.32944606,
                                   2.67055394, 3.19970845, 3.65889213, 4};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F64, 4, (int64_t[]){1, 1, 4, 4}, xv), *y = NULL;
        BPT_OK(bp_resize(x, (double[]){1, 1, 2, 2}, NULL, &o, &y));
        double *v = bpt_read(y);
        for (int i = 0; i < 8; i++)
            cr_assert(fabs(v[i] - row0[i]) < 1e-8, "%s: element %d is %.10g, ONNX says %.8f",
                      bp_backend_name(be), i, v[i], row0[i]);
        free(v);
        bp_tensor_release(x);
        bp_tensor_release(y);
    }
    bp_context_destroy(ctx);
}

Test(nn_resize, resize_nearest_copies_integers_exactly)
{
    bp_resize_options o = BP_RESIZE_OPTIONS_INIT;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t big = INT64_MAX - 1;
        bp_tensor *x = bpt_tensor_i64(be, BP_I64, 1, (int64_t[]){2}, (int64_t[]){big, -big});
        bp_tensor *y = NULL;
        BPT_OK(bp_resize(x, (double[]){2}, NULL, &o, &y));
        bpt_expect_i64("nearest i64", y, BP_I64, 1, (int64_t[]){4},
                       (int64_t[]){big, big, -big, -big});
        bp_tensor_release(x);
        bp_tensor_release(y);
    }
    bp_context_destroy(ctx);
}

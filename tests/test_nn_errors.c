/* nn.h's validation: every refusal of the core (window.c, ops_conv.c,
 * ops_pool.c, ops_norm.c, ops_loss.c, ops_dropout.c, ops_resize.c), its
 * status, and a message that names the fix; and a label out of range as
 * BP_ERR_INDEX, at once on the host backends and at the next wait on a
 * device backend that checks it there (devsim). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

/* call fails with code, leaves *out NULL, and bp_last_error() says fix. */
#define REFUSES(code, fix, out, call)                                                          \
    do {                                                                                       \
        (out) = (bp_tensor *)(uintptr_t)1;                                                     \
        bp_status st_ = (call);                                                                \
        cr_assert_eq(st_, (code), "%s -> %s (wanted %s): %s", #call, bp_status_string(st_),    \
                     bp_status_string(code), bp_last_error());                                 \
        cr_assert_null((out), "%s left its output set", #call);                                \
        cr_assert(strstr(bp_last_error(), (fix)), "%s: the message \"%s\" does not say \"%s\"", \
                  #call, bp_last_error(), (fix));                                              \
    } while (0)

#define WIN(...) ((bp_window){.struct_size = sizeof(bp_window), __VA_ARGS__})

typedef struct fx {
    bp_tensor *x4, *w4, *x3, *i32x4, *f64x4, *b3, *f2, *xe;
} fx;

static fx make(bp_backend *be)
{
    fx f;
    f.x4 = bpt_tensor(be, BP_F32, 4, (int64_t[]){2, 4, 5, 5}, NULL);
    f.w4 = bpt_tensor(be, BP_F32, 4, (int64_t[]){3, 4, 3, 3}, NULL);
    f.x3 = bpt_tensor(be, BP_F32, 3, (int64_t[]){2, 4, 5}, NULL);
    f.i32x4 = bpt_tensor(be, BP_I32, 4, (int64_t[]){2, 4, 5, 5}, NULL);
    f.f64x4 = bpt_tensor(be, BP_F64, 4, (int64_t[]){3, 4, 3, 3}, NULL);
    f.b3 = bpt_tensor(be, BP_F32, 1, (int64_t[]){3}, NULL);
    f.f2 = bpt_tensor(be, BP_F32, 2, (int64_t[]){2, 4}, NULL);
    f.xe = bpt_tensor(be, BP_F32, 3, (int64_t[]){1, 2, 0}, NULL);
    return f;
}

static void release(fx *f)
{
    bp_tensor *all[] = {f->x4, f->w4, f->x3, f->i32x4, f->f64x4, f->b3, f->f2, f->xe};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bp_tensor_release(all[i]);
}

#define EACH(...)                                                                              \
    do {                                                                                       \
        bp_context *ctx_ = bpt_context();                                                      \
        bp_backend *be;                                                                        \
        BPT_FOR_EACH_BACKEND(ctx_, be) {                                                       \
            fx f = make(be);                                                                   \
            bp_tensor *o;                                                                      \
            __VA_ARGS__;                                                                       \
            release(&f);                                                                       \
        }                                                                                      \
        bp_context_destroy(ctx_);                                                              \
    } while (0)

Test(nn_errors, window_refuses_what_it_cannot_mean)
{
    EACH({
        REFUSES(BP_ERR_SHAPE, "(N, C, spatial...)", o,
                bp_max_pool(f.f2, &WIN(.kernel = {2}), &o, NULL));
        bp_window small = WIN(.groups = 0);
        small.struct_size = 4;
        REFUSES(BP_ERR_INVALID_ARGUMENT, "BP_WINDOW_INIT", o, bp_conv(f.x4, f.w4, NULL, &small, &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "leave the entries past them 0", o,
                bp_conv(f.x4, f.w4, NULL, &WIN(.strides = {1, 1, 2}), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "it must be >= 0", o,
                bp_conv(f.x4, f.w4, NULL, &WIN(.pads = {-1}), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "beyond any tensor", o,
                bp_conv(f.x4, f.w4, NULL, &WIN(.strides = {(int64_t)1 << 41}), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "is not a bp_auto_pad", o,
                bp_conv(f.x4, f.w4, NULL, &WIN(.auto_pad = (bp_auto_pad)9), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "use one or the other", o,
                bp_conv(f.x4, f.w4, NULL, &WIN(.auto_pad = BP_AUTO_PAD_VALID, .pads = {1}), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "it must be >= 1", o,
                bp_conv(f.x4, f.w4, NULL, &WIN(.groups = -2), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "0 (row-major) or 1", o,
                bp_max_pool(f.x4, &WIN(.kernel = {2, 2}, .storage_order = 2), &o, NULL));
        REFUSES(BP_ERR_SHAPE, "the padded input has", o,
                bp_max_pool(f.x4, &WIN(.kernel = {2, 6}), &o, NULL));
    });
}

Test(nn_errors, conv_refuses_operands_that_do_not_fit)
{
    EACH({
        REFUSES(BP_ERR_DTYPE, "x", o, bp_conv(f.i32x4, f.w4, NULL, NULL, &o));
        REFUSES(BP_ERR_DTYPE, "bp_cast", o, bp_conv(f.x4, f.f64x4, NULL, NULL, &o));
        REFUSES(BP_ERR_SHAPE, "must have x's rank", o, bp_conv(f.x3, f.w4, NULL, NULL, &o));
        bp_tensor *w0 = bpt_tensor(be, BP_F32, 4, (int64_t[]){3, 4, 0, 3}, NULL);
        REFUSES(BP_ERR_SHAPE, "kernels are not empty", o, bp_conv(f.x4, w0, NULL, NULL, &o));
        bp_tensor_release(w0);
        REFUSES(BP_ERR_SHAPE, "one per output channel", o, bp_conv(f.x4, f.w4, f.f2, NULL, &o));
        REFUSES(BP_ERR_SHAPE, "leave kernel 0", o,
                bp_conv(f.x4, f.w4, NULL, &WIN(.kernel = {2, 3}), &o));
        REFUSES(BP_ERR_SHAPE, "divide by the groups", o,
                bp_conv(f.x4, f.w4, NULL, &WIN(.groups = 2), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "conv_transpose's", o,
                bp_conv(f.x4, f.w4, NULL, &WIN(.output_padding = {1}), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "the pools'", o,
                bp_conv(f.x4, f.w4, NULL, &WIN(.ceil_mode = true), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "NULL", o, bp_conv(NULL, f.w4, NULL, NULL, &o));
        cr_assert_eq(bp_conv(f.x4, f.w4, NULL, NULL, NULL), BP_ERR_INVALID_ARGUMENT);
    });
}

Test(nn_errors, conv_transpose_refuses_geometry_it_cannot_resolve)
{
    EACH({
        bp_tensor *wt = bpt_tensor(be, BP_F32, 4, (int64_t[]){4, 2, 3, 3}, NULL);
        REFUSES(BP_ERR_INVALID_ARGUMENT, "the pools'", o,
                bp_conv_transpose(f.x4, wt, NULL, &WIN(.count_include_pad = true), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "give all 2 or none", o,
                bp_conv_transpose(f.x4, wt, NULL, &WIN(.output_shape = {9}), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "the pads follow from output_shape", o,
                bp_conv_transpose(f.x4, wt, NULL, &WIN(.output_shape = {9, 9}, .pads = {1}), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "smaller than the stride", o,
                bp_conv_transpose(f.x4, wt, NULL, &WIN(.output_padding = {1, 0}), &o));
        REFUSES(BP_ERR_SHAPE, "exceed the output's natural extent", o,
                bp_conv_transpose(f.x4, wt, NULL, &WIN(.pads = {4, 0, 4, 0}), &o));
        REFUSES(BP_ERR_SHAPE, "(in channels, out channels / groups", o,
                bp_conv_transpose(f.x4, f.w4, NULL, NULL, &o));
        REFUSES(BP_ERR_SHAPE, "(in channels, out channels / groups", o,
                bp_conv_transpose(f.x4, wt, NULL, &WIN(.groups = 3), &o));
        bp_tensor_release(wt);
        /* w (0, 2^60, 1) holds nothing; with 8 groups the channels overflow */
        bp_tensor *x0 = bpt_tensor(be, BP_F32, 3, (int64_t[]){1, 0, 3}, NULL);
        bp_tensor *wh = bpt_tensor(be, BP_F32, 3, (int64_t[]){0, (int64_t)1 << 60, 1}, NULL);
        REFUSES(BP_ERR_SHAPE, "overflow", o,
                bp_conv_transpose(x0, wh, NULL, &WIN(.groups = 8), &o));
        bp_tensor_release(x0);
        bp_tensor_release(wh);
    });
}

Test(nn_errors, pools_refuse_windows_that_are_not_theirs)
{
    EACH({
        REFUSES(BP_ERR_INVALID_ARGUMENT, "needs its kernel extent", o,
                bp_max_pool(f.x4, &WIN(.kernel = {2}), &o, NULL));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "needs its kernel extent", o,
                bp_average_pool(f.x4, NULL, &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "groups is a convolution's", o,
                bp_max_pool(f.x4, &WIN(.kernel = {2, 2}, .groups = 2), &o, NULL));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "conv_transpose's", o,
                bp_average_pool(f.x4, &WIN(.kernel = {2, 2}, .output_shape = {3, 3}), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "smaller than the kernel extent", o,
                bp_max_pool(f.x4, &WIN(.kernel = {2, 2}, .pads = {2, 0, 0, 0}), &o, NULL));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "average_pool's", o,
                bp_max_pool(f.x4, &WIN(.kernel = {2, 2}, .count_include_pad = true), &o, NULL));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "max_pool's", o,
                bp_average_pool(f.x4, &WIN(.kernel = {2, 2}, .storage_order = 1), &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "no dilations", o,
                bp_average_pool(f.x4, &WIN(.kernel = {2, 2}, .dilations = {2, 1}), &o));
        bp_tensor *bx = bpt_tensor(be, BP_BOOL, 3, (int64_t[]){1, 1, 4}, NULL);
        REFUSES(BP_ERR_DTYPE, "max_pool", o, bp_max_pool(bx, &WIN(.kernel = {2}), &o, NULL));
        bp_tensor_release(bx);
        REFUSES(BP_ERR_DTYPE, "average_pool", o,
                bp_average_pool(f.i32x4, &WIN(.kernel = {2, 2}), &o));
        REFUSES(BP_ERR_SHAPE, "at least one spatial axis", o, bp_global_max_pool(f.f2, &o));
        REFUSES(BP_ERR_SHAPE, "the maximum of nothing", o, bp_global_max_pool(f.xe, &o));
        REFUSES(BP_ERR_DTYPE, "global_average_pool", o, bp_global_average_pool(f.i32x4, &o));
        REFUSES(BP_ERR_SHAPE, "(N, C, ...)", o,
                bp_lrn(f.b3, 3, 1e-4, 0.75, 1, &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "it must be >= 1", o, bp_lrn(f.x4, 0, 1e-4, 0.75, 1, &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "must be finite", o,
                bp_lrn(f.x4, 3, NAN, 0.75, 1, &o));
    });
}

Test(nn_errors, norms_refuse_operands_that_do_not_fit)
{
    EACH({
        bp_tensor *c4 = bpt_tensor(be, BP_F32, 1, (int64_t[]){4}, NULL);
        bp_tensor *d4 = bpt_tensor(be, BP_F64, 1, (int64_t[]){4}, NULL);
        REFUSES(BP_ERR_SHAPE, "one value per channel", o,
                bp_batch_norm(f.x4, c4, c4, f.b3, c4, 1e-5, &o));
        REFUSES(BP_ERR_DTYPE, "bp_cast", o, bp_batch_norm(f.x4, c4, d4, c4, c4, 1e-5, &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "finite and >= 0", o,
                bp_batch_norm(f.x4, c4, c4, c4, c4, -1, &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "finite and >= 0", o,
                bp_instance_norm(f.x4, c4, c4, INFINITY, &o));
        REFUSES(BP_ERR_SHAPE, "rank >= 3", o, bp_instance_norm(f.f2, c4, c4, 1e-5, &o));
        REFUSES(BP_ERR_SHAPE, "rank >= 2", o, bp_batch_norm(f.b3, c4, c4, c4, c4, 1e-5, &o));
        REFUSES(BP_ERR_DTYPE, "batch_norm", o, bp_batch_norm(f.i32x4, c4, c4, c4, c4, 1e-5, &o));
        bp_tensor *s5 = bpt_tensor(be, BP_F32, 1, (int64_t[]){5}, NULL);
        REFUSES(BP_ERR_INVALID_ARGUMENT, "pass ones for none", o,
                bp_layer_norm(f.x4, -1, NULL, NULL, 1e-5, &o, NULL, NULL));
        REFUSES(BP_ERR_SHAPE, "out of range", o,
                bp_layer_norm(f.x4, 4, s5, NULL, 1e-5, &o, NULL, NULL));
        REFUSES(BP_ERR_SHAPE, "must broadcast to the normalised axes", o,
                bp_layer_norm(f.x4, -1, c4, NULL, 1e-5, &o, NULL, NULL));
        REFUSES(BP_ERR_SHAPE, "must broadcast to the normalised axes", o,
                bp_rms_norm(f.x4, -1, f.f2, 1e-5, &o));
        REFUSES(BP_ERR_DTYPE, "bp_cast", o,
                bp_layer_norm(f.x4, -1, s5, d4, 1e-5, &o, NULL, NULL));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "finite and >= 0", o, bp_rms_norm(f.x4, -1, s5, NAN, &o));
        bp_tensor_release(c4);
        bp_tensor_release(d4);
        bp_tensor_release(s5);
    });
}

Test(nn_errors, losses_refuse_operands_that_do_not_fit)
{
    EACH({
        bp_tensor *l2 = bpt_tensor_i64(be, BP_I64, 1, (int64_t[]){2}, (int64_t[]){0, 1});
        bp_tensor *lf = bpt_tensor(be, BP_F32, 1, (int64_t[]){2}, NULL);
        bp_tensor *l3 = bpt_tensor_i64(be, BP_I64, 1, (int64_t[]){3}, (int64_t[]){0, 1, 2});
        bp_tensor *w4 = bpt_tensor(be, BP_F32, 1, (int64_t[]){4}, NULL);
        bp_tensor *wd = bpt_tensor(be, BP_F64, 1, (int64_t[]){4}, NULL);
        bp_tensor *i2 = bpt_tensor(be, BP_I32, 2, (int64_t[]){2, 4}, NULL);
        REFUSES(BP_ERR_DTYPE, "i32 or i64", o,
                bp_nll_loss(f.f2, lf, NULL, BP_LOSS_MEAN, NULL, &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "(NONE, SUM, MEAN)", o,
                bp_nll_loss(f.f2, l2, NULL, (bp_loss_reduction)7, NULL, &o));
        REFUSES(BP_ERR_SHAPE, "(N) or (N, d...) to match", o,
                bp_softmax_cross_entropy_loss(f.f2, l3, NULL, BP_LOSS_SUM, NULL, &o, NULL));
        REFUSES(BP_ERR_DTYPE, "share a dtype", o,
                bp_nll_loss(f.f2, l2, wd, BP_LOSS_SUM, NULL, &o));
        REFUSES(BP_ERR_SHAPE, "one per class", o,
                bp_nll_loss(f.f2, l2, f.b3, BP_LOSS_SUM, NULL, &o));
        REFUSES(BP_ERR_DTYPE, "nll_loss", o, bp_nll_loss(i2, l2, NULL, BP_LOSS_SUM, NULL, &o));
        (void)w4;
        bp_tensor *all[] = {l2, lf, l3, w4, wd, i2};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            bp_tensor_release(all[i]);
    });
}

/* A label outside [0, C) that is not ignore_index: BP_ERR_INDEX from the call
 * on a backend the core reads, from the next wait on one that checks on the
 * device. */
static void expect_label_error(bp_backend *be, bool ce, const bp_tensor *x, const bp_tensor *l,
                               const int64_t *ignore)
{
    bp_tensor *o = NULL, *lp = NULL;
    bp_status st = ce ? bp_softmax_cross_entropy_loss(x, l, NULL, BP_LOSS_MEAN, ignore, &o, &lp)
                      : bp_nll_loss(x, l, NULL, BP_LOSS_MEAN, ignore, &o);
    const char *op = ce ? "softmax_cross_entropy_loss" : "nll_loss";
    if (st == BP_OK) {
        bp_tensor_release(o);
        bp_tensor_release(lp);
        st = bp_synchronize(be);
        cr_assert_eq(st, BP_ERR_INDEX, "%s on %s: deferred -> %s: %s", op, bp_backend_name(be),
                     bp_status_string(st), bp_last_error());
        BPT_OK(bp_synchronize(be)); /* reported once, then cleared */
    } else {
        cr_assert_eq(st, BP_ERR_INDEX, "%s on %s -> %s: %s", op, bp_backend_name(be),
                     bp_status_string(st), bp_last_error());
        cr_assert_null(o);
    }
    cr_assert(strstr(bp_last_error(), op) && strstr(bp_last_error(), "labels must lie in [0, 4)"),
              "%s", bp_last_error());
}

Test(nn_errors, label_out_of_range_is_an_index_error_now_or_at_the_next_wait)
{
    EACH({
        bp_tensor *hi = bpt_tensor_i64(be, BP_I64, 1, (int64_t[]){2}, (int64_t[]){0, 4});
        bp_tensor *neg = bpt_tensor_i64(be, BP_I32, 1, (int64_t[]){2}, (int64_t[]){-1, 0});
        int64_t ig = -1, other = 9;
        expect_label_error(be, true, f.f2, hi, NULL);
        expect_label_error(be, false, f.f2, hi, &ig);
        expect_label_error(be, true, f.f2, neg, &other);
        bp_tensor *ok = NULL;
        BPT_OK(bp_nll_loss(f.f2, neg, NULL, BP_LOSS_SUM, &ig, &ok)); /* -1 is ignore_index */
        BPT_OK(bp_synchronize(be));
        bp_tensor_release(ok);
        bp_tensor_release(hi);
        bp_tensor_release(neg);
        (void)o;
    });
}

Test(nn_errors, dropout_refuses_a_ratio_outside_zero_to_one)
{
    EACH({
        REFUSES(BP_ERR_INVALID_ARGUMENT, "must lie in [0, 1)", o,
                bp_dropout(f.x4, 1.0, true, 0, 0, &o, NULL));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "must lie in [0, 1)", o,
                bp_dropout(f.x4, -0.1, true, 0, 0, &o, NULL));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "must lie in [0, 1)", o,
                bp_dropout(f.x4, NAN, false, 0, 0, &o, NULL));
        REFUSES(BP_ERR_DTYPE, "dropout", o, bp_dropout(f.i32x4, 0.5, true, 0, 0, &o, NULL));
    });
}

Test(nn_errors, resize_refuses_options_and_sizes_it_cannot_follow)
{
    EACH({
        double s2[2] = {2, 2};
        int64_t z2[2] = {4, 8};
        bp_resize_options bad = BP_RESIZE_OPTIONS_INIT;
        bad.struct_size = 2;
        REFUSES(BP_ERR_INVALID_ARGUMENT, "BP_RESIZE_OPTIONS_INIT", o,
                bp_resize(f.f2, s2, NULL, &bad, &o));
        bad = (bp_resize_options)BP_RESIZE_OPTIONS_INIT;
        bad.mode = (bp_resize_mode)5;
        REFUSES(BP_ERR_INVALID_ARGUMENT, "not a bp_resize_mode", o,
                bp_resize(f.f2, s2, NULL, &bad, &o));
        bad = (bp_resize_options)BP_RESIZE_OPTIONS_INIT;
        bad.coordinates = (bp_resize_coordinates)5;
        REFUSES(BP_ERR_INVALID_ARGUMENT, "tf_crop_and_resize is not supported", o,
                bp_resize(f.f2, s2, NULL, &bad, &o));
        bad = (bp_resize_options)BP_RESIZE_OPTIONS_INIT;
        bad.nearest = (bp_resize_nearest)4;
        REFUSES(BP_ERR_INVALID_ARGUMENT, "not a bp_resize_nearest", o,
                bp_resize(f.f2, s2, NULL, &bad, &o));
        bad = (bp_resize_options)BP_RESIZE_OPTIONS_INIT;
        bad.cubic_coeff_a = INFINITY;
        REFUSES(BP_ERR_INVALID_ARGUMENT, "cubic_coeff_a must be finite", o,
                bp_resize(f.f2, s2, NULL, &bad, &o));
        bad = (bp_resize_options)BP_RESIZE_OPTIONS_INIT;
        bad.mode = BP_RESIZE_LINEAR;
        bp_tensor *i = bpt_tensor(be, BP_I32, 2, (int64_t[]){2, 4}, NULL);
        REFUSES(BP_ERR_DTYPE, "resize", o, bp_resize(i, s2, NULL, &bad, &o));
        bp_tensor_release(i);
        bp_tensor *sc = bpt_scalar(be, BP_F32, 1);
        REFUSES(BP_ERR_SHAPE, "at least one axis", o, bp_resize(sc, s2, NULL, NULL, &o));
        bp_tensor_release(sc);
        REFUSES(BP_ERR_INVALID_ARGUMENT, "exactly one of scales and sizes", o,
                bp_resize(f.f2, s2, z2, NULL, &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "exactly one of scales and sizes", o,
                bp_resize(f.f2, NULL, NULL, NULL, &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "finite and > 0", o,
                bp_resize(f.f2, (double[]){1, 0}, NULL, NULL, &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "finite and > 0", o,
                bp_resize(f.f2, (double[]){INFINITY, 1}, NULL, NULL, &o));
        REFUSES(BP_ERR_INVALID_ARGUMENT, "sizes must be >= 0", o,
                bp_resize(f.f2, NULL, (int64_t[]){2, -1}, NULL, &o));
        REFUSES(BP_ERR_SHAPE, "nothing to resize it from", o,
                bp_resize(f.xe, NULL, (int64_t[]){1, 2, 3}, NULL, &o));
    });
}

/* Every output pointer an op was given is NULL after a failure, the
 * optional ones too, even when the failure is the main output's NULL. */
Test(nn_errors, optional_outputs_are_cleared_when_the_main_output_is_null)
{
    EACH({
        bp_tensor *junk = (bp_tensor *)(uintptr_t)1, *a = junk, *b = junk;
        bp_window w = WIN(.kernel = {2, 2});
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_max_pool(f.x4, &w, NULL, &a));
        cr_assert_null(a, "max_pool left its indices set");
        a = b = junk;
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_layer_norm(f.x4, -1, f.b3, NULL, 1e-5, NULL, &a, &b));
        cr_assert(!a && !b, "layer_norm left mean or inv_std set");
        a = junk;
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_dropout(f.x4, 0.5, true, 0, 0, NULL, &a));
        cr_assert_null(a, "dropout left its mask set");
        a = junk;
        bp_tensor *labels = bpt_tensor(be, BP_I64, 1, (int64_t[]){2}, NULL);
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT,
                  bp_softmax_cross_entropy_loss(f.f2, labels, NULL, BP_LOSS_MEAN, NULL, NULL, &a));
        cr_assert_null(a, "softmax_cross_entropy_loss left its log_prob set");
        bp_tensor_release(labels);
        (void)o;
    });
}

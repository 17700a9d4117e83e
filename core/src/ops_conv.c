/* backplane core: convolution and transposed convolution (ONNX Conv,
 * ConvTranspose): operands and groups checked, the window resolved
 * (window.c), the output's shape computed; the plugin gets dense views and
 * the window in bp_op_params. */
#include <stdio.h>

#include "internal.h"

/* x, w, bias by the op table (bias optional), of one dtype; w of x's rank
 * with non-empty kernel extents. */
static bp_status conv_operands(const char *fn, bp_op op, const bp_tensor *x, const bp_tensor *w,
                               const bp_tensor *bias)
{
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, op, (const bp_tensor *const[]){x, w, bias}, &be));
    const bp_tensor *other = w->dtype != x->dtype ? w : bias && bias->dtype != x->dtype ? bias : NULL;
    if (other)
        return bp__error(BP_ERR_DTYPE, "%s: x is %s but %s is %s; operands must share a dtype: "
                         "convert with bp_cast first", fn, bp_dtype_name(x->dtype),
                         other == w ? "w" : "bias", bp_dtype_name(other->dtype));
    if (w->rank != x->rank) {
        char sx[BP__SHAPE_STR_CAP], sw[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: w %s must have x's rank (x is %s): (out channels, "
                         "in channels / groups, kernel...)", fn,
                         BP__SHAPE_STR(sw, w->rank, w->shape), BP__SHAPE_STR(sx, x->rank, x->shape));
    }
    for (int32_t k = 2; k < w->rank; k++)
        if (w->shape[k] < 1)
            return bp__error(BP_ERR_SHAPE, "%s: w's kernel extent on axis %d is %lld; kernels "
                             "are not empty", fn, (int)k, (long long)w->shape[k]);
    return BP_OK;
}

static bp_status check_bias(const char *fn, const bp_tensor *bias, int64_t m)
{
    if (bias && (bias->rank != 1 || bias->shape[0] != m)) {
        char sb[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: bias %s must be (%lld,): one per output channel",
                         fn, BP__SHAPE_STR(sb, bias->rank, bias->shape), (long long)m);
    }
    return BP_OK;
}

/* The kernel is w's: a window's kernel, if given, must agree. */
static bp_status kernel_of(const char *fn, const bp_tensor *w, const bp_window *win,
                           int64_t *kernel)
{
    for (int32_t j = 0; j < w->rank - 2; j++) {
        kernel[j] = w->shape[2 + j];
        if (win->kernel[j] && win->kernel[j] != kernel[j])
            return bp__error(BP_ERR_SHAPE, "%s: window kernel[%d] is %lld but w's kernel has "
                             "extent %lld there; leave kernel 0 for a convolution", fn, (int)j,
                             (long long)win->kernel[j], (long long)kernel[j]);
    }
    return BP_OK;
}

/* ceil_mode, count_include_pad and storage_order shape a pool's windows; a
 * convolution given one would silently ignore what the caller asked for. */
static bp_status no_pool_fields(const char *fn, const bp_window *win)
{
    if (win->ceil_mode || win->count_include_pad || win->storage_order)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: ceil_mode, count_include_pad and "
                         "storage_order are the pools'; leave them 0 for a convolution", fn);
    return BP_OK;
}

static bp_status conv_call(const char *fn, bp_op op, const bp_tensor *x, const bp_tensor *w,
                           const bp_tensor *bias, const bp__window_plan *pl, int64_t groups,
                           int64_t m, bp_tensor **out)
{
    int64_t shape[BP_MAX_RANK] = {x->shape[0], m};
    for (int32_t j = 0; j < pl->s; j++)
        shape[2 + j] = pl->out[j];
    bp_backend *be = bp__backend_of_all(3, (const bp_tensor *const[]){x, w, bias});
    BP__TRY(bp__op_require(be, op, x->dtype));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, shape, &res));
    bp_view vx, vw, vb, vo;
    bp__view_dense(x, &vx);
    bp__view_dense(w, &vw);
    if (bias)
        bp__view_dense(bias, &vb);
    bp__view_dense(res, &vo);
    bp_op_params p = bp__params();
    bp__window_params(pl, &p);
    p.i[15] = groups;
    const bp_view *in[3] = {&vx, &vw, bias ? &vb : NULL};
    return bp__deliver(res, bp__op_run(be, op, &p, in, (const bp_view *[]){&vo}), out);
}

bp_status bp_conv(const bp_tensor *x, const bp_tensor *w, const bp_tensor *bias,
                  const bp_window *window, bp_tensor **out)
{
    static const char fn[] = "bp_conv";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(conv_operands(fn, BP_OP_CONV, x, w, bias));
    bp_window win;
    BP__TRY(bp__window_read(fn, x, window, &win));
    const int64_t c = x->shape[1], m = w->shape[0], g = win.groups;
    if (c % g != 0 || m % g != 0 || w->shape[1] != c / g)
        return bp__error(BP_ERR_SHAPE, "%s: %lld input and %lld output channels in %lld groups "
                         "need both to divide by the groups and w's axis 1 to be %lld / %lld; "
                         "it is %lld", fn, (long long)c, (long long)m, (long long)g,
                         (long long)c, (long long)g, (long long)w->shape[1]);
    BP__TRY(check_bias(fn, bias, m));
    BP__TRY(no_pool_fields(fn, &win));
    for (int j = 0; j < 3; j++)
        if (win.output_padding[j] || win.output_shape[j])
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: output_padding and output_shape "
                             "are conv_transpose's; leave them 0", fn);
    int64_t kernel[3] = {0};
    BP__TRY(kernel_of(fn, w, &win, kernel));
    bp__window_plan pl;
    BP__TRY(bp__window_forward(fn, x, &win, kernel, &pl));
    return conv_call(fn, BP_OP_CONV, x, w, bias, &pl, g, m, out);
}

static int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

/* ConvTranspose's pads and output extents. Explicit pads fix the extent.
 * SAME_UPPER / SAME_LOWER fix it (output_shape, else D * stride) and split
 * the padding as ONNX's text and its reference implementation do (the odd
 * one at the end for SAME_UPPER, at the start for SAME_LOWER; negative when
 * the output is larger than the natural one, floor division as in Python).
 * output_shape without SAME: the natural output cut (or extended) at the
 * end, pads (0, natural - O): what ONNX's reference implementation computes
 * (and PyTorch's output_size), where ONNX's text would put the larger half
 * at the start and onnxruntime the smaller one; nothing in ONNX's node tests
 * tells them apart. The kernel sees the resolved pads, the end one possibly
 * negative. */
static bp_status transpose_plan(const char *fn, const bp_tensor *x, const bp_window *win,
                                const int64_t *kernel, bp__window_plan *pl)
{
    pl->s = x->rank - 2;
    bool given = false, all = true;
    for (int32_t j = 0; j < pl->s; j++) {
        given = given || win->output_shape[j];
        all = all && win->output_shape[j];
    }
    if (given && !all)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: output_shape gives some spatial extents "
                         "but not all; give all %d or none", fn, (int)pl->s);
    if (given && win->pads[0] + win->pads[1] + win->pads[2] + win->pads[3] + win->pads[4] +
                         win->pads[5])
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: pads and output_shape are both given; "
                         "the pads follow from output_shape", fn);
    for (int32_t j = 0; j < pl->s; j++) {
        const int64_t d = x->shape[2 + j], st = win->strides[j], dl = win->dilations[j];
        const int64_t op = win->output_padding[j], k = kernel[j];
        pl->kernel[j] = k;
        pl->stride[j] = st;
        pl->dilation[j] = dl;
        if (op >= st && op >= dl)
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: output_padding[%d] is %lld; it must "
                             "be smaller than the stride (%lld) or the dilation (%lld)", fn,
                             (int)j, (long long)op, (long long)st, (long long)dl);
        const int64_t natural = st * (d > 0 ? d - 1 : 0) + op + dl * (k - 1) + 1;
        bool same = win->auto_pad == BP_AUTO_PAD_SAME_UPPER ||
                    win->auto_pad == BP_AUTO_PAD_SAME_LOWER;
        if (same) {
            const int64_t o = given ? win->output_shape[j] : d * st;
            const int64_t total = natural - o, half = floor_half(total);
            bool upper = win->auto_pad == BP_AUTO_PAD_SAME_UPPER;
            pl->pad_begin[j] = upper ? half : total - half;
            pl->pad_end[j] = upper ? total - half : half;
            pl->out[j] = o;
        } else if (given) {
            pl->pad_begin[j] = 0;
            pl->pad_end[j] = natural - win->output_shape[j];
            pl->out[j] = win->output_shape[j];
        } else {
            pl->pad_begin[j] = win->pads[j];
            pl->pad_end[j] = win->pads[pl->s + j];
            pl->out[j] = natural - pl->pad_begin[j] - pl->pad_end[j];
            if (pl->out[j] < 0)
                return bp__error(BP_ERR_SHAPE, "%s: on spatial axis %d the pads (%lld + %lld) "
                                 "exceed the output's natural extent %lld", fn, (int)j,
                                 (long long)pl->pad_begin[j], (long long)pl->pad_end[j],
                                 (long long)natural);
        }
        if (d == 0)
            pl->out[j] = given ? pl->out[j] : 0;
    }
    return BP_OK;
}

bp_status bp_conv_transpose(const bp_tensor *x, const bp_tensor *w, const bp_tensor *bias,
                            const bp_window *window, bp_tensor **out)
{
    static const char fn[] = "bp_conv_transpose";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(conv_operands(fn, BP_OP_CONV_TRANSPOSE, x, w, bias));
    bp_window win;
    BP__TRY(bp__window_read(fn, x, window, &win));
    const int64_t c = x->shape[1], g = win.groups;
    if (w->shape[0] != c || c % g != 0)
        return bp__error(BP_ERR_SHAPE, "%s: w's axis 0 is %lld but must be x's %lld input "
                         "channels, divisible by the %lld groups: w is (in channels, out "
                         "channels / groups, kernel...)", fn, (long long)w->shape[0],
                         (long long)c, (long long)g);
    if (w->shape[1] > INT64_MAX / g)
        return bp__error(BP_ERR_SHAPE, "%s: the output channels overflow", fn);
    const int64_t m = w->shape[1] * g;
    BP__TRY(check_bias(fn, bias, m));
    BP__TRY(no_pool_fields(fn, &win));
    int64_t kernel[3] = {0};
    BP__TRY(kernel_of(fn, w, &win, kernel));
    bp__window_plan pl;
    BP__TRY(transpose_plan(fn, x, &win, kernel, &pl));
    return conv_call(fn, BP_OP_CONV_TRANSPOSE, x, w, bias, &pl, g, m, out);
}

/* backplane core: the geometry of window ops (conv, conv_transpose, the
 * pools): the caller's bp_window read and checked, auto_pad resolved, the
 * output's extents computed by ONNX's formulas. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* v[0 .. n): the first `used` entries >= lo, the rest 0. */
static bp_status check_array(const char *fn, const char *name, const int64_t *v, int32_t n,
                             int32_t used, int64_t lo)
{
    const int32_t s = n == 6 ? used / 2 : used; /* in messages: spatial axes */
    for (int32_t j = 0; j < n; j++) {
        bool in_use = j < used;
        if (!in_use && v[j] != 0)
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s[%d] is %lld but x has %d spatial "
                             "axes; leave the entries past them 0", fn, name, (int)j,
                             (long long)v[j], (int)s);
        if (in_use && v[j] < lo)
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s[%d] is %lld; it must be >= %lld",
                             fn, name, (int)j, (long long)v[j], (long long)lo);
        if (v[j] > ((int64_t)1 << 40))
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s[%d] is %lld, beyond any tensor",
                             fn, name, (int)j, (long long)v[j]);
    }
    return BP_OK;
}

bp_status bp__window_read(const char *fn, const bp_tensor *x, const bp_window *w, bp_window *copy)
{
    if (x->rank < 3 || x->rank > 5) {
        char sx[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: x %s must be (N, C, spatial...) with 1 to 3 "
                         "spatial axes (rank 3 to 5)", fn, BP__SHAPE_STR(sx, x->rank, x->shape));
    }
    const int32_t s = x->rank - 2;
    if (w) {
        BP__TRY(bp__struct_in(fn, "bp_window", "BP_WINDOW_INIT", w, sizeof(bp_window), copy,
                              sizeof *copy));
    } else {
        memset(copy, 0, sizeof *copy);
        copy->struct_size = sizeof *copy;
    }
    BP__TRY(check_array(fn, "kernel", copy->kernel, 3, s, 0));
    BP__TRY(check_array(fn, "strides", copy->strides, 3, s, 0));
    BP__TRY(check_array(fn, "dilations", copy->dilations, 3, s, 0));
    BP__TRY(check_array(fn, "pads", copy->pads, 6, 2 * s, 0));
    BP__TRY(check_array(fn, "output_padding", copy->output_padding, 3, s, 0));
    BP__TRY(check_array(fn, "output_shape", copy->output_shape, 3, s, 0));
    if ((int)copy->auto_pad < (int)BP_AUTO_PAD_NOTSET || (int)copy->auto_pad > (int)BP_AUTO_PAD_VALID)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: auto_pad %d is not a bp_auto_pad", fn,
                         (int)copy->auto_pad);
    if (copy->auto_pad != BP_AUTO_PAD_NOTSET)
        for (int j = 0; j < 6; j++)
            if (copy->pads[j])
                return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: pads are given with an auto_pad; "
                                 "use one or the other", fn);
    if (copy->groups < 0)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: groups is %lld; it must be >= 1", fn,
                         (long long)copy->groups);
    if (copy->storage_order != 0 && copy->storage_order != 1)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: storage_order is %d; it must be 0 "
                         "(row-major) or 1 (column-major)", fn, (int)copy->storage_order);
    for (int32_t j = 0; j < s; j++) {
        copy->strides[j] += copy->strides[j] == 0;
        copy->dilations[j] += copy->dilations[j] == 0;
    }
    copy->groups += copy->groups == 0;
    return BP_OK;
}

static int64_t div_floor(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

bp_status bp__window_forward(const char *fn, const bp_tensor *x, const bp_window *w,
                             const int64_t *kernel, bp__window_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->s = x->rank - 2;
    for (int32_t j = 0; j < pl->s; j++) {
        const int64_t d = x->shape[2 + j], st = w->strides[j], dl = w->dilations[j];
        const int64_t k = kernel[j], eff = dl * (k - 1) + 1;
        pl->kernel[j] = k;
        pl->stride[j] = st;
        pl->dilation[j] = dl;
        if (w->auto_pad == BP_AUTO_PAD_SAME_UPPER || w->auto_pad == BP_AUTO_PAD_SAME_LOWER) {
            const int64_t o = (d + st - 1) / st, need = (o - 1) * st + eff - d;
            const int64_t total = need > 0 ? need : 0, half = total / 2;
            bool upper = w->auto_pad == BP_AUTO_PAD_SAME_UPPER;
            pl->pad_begin[j] = upper ? half : total - half;
            pl->pad_end[j] = upper ? total - half : half;
        } else {
            pl->pad_begin[j] = w->pads[j];
            pl->pad_end[j] = w->pads[pl->s + j];
        }
        const int64_t span = d + pl->pad_begin[j] + pl->pad_end[j] - eff;
        if (span < 0)
            return bp__error(BP_ERR_SHAPE, "%s: on spatial axis %d the window spans %lld "
                             "elements (kernel %lld, dilation %lld) but the padded input has "
                             "%lld", fn, (int)j, (long long)eff, (long long)k, (long long)dl,
                             (long long)(d + pl->pad_begin[j] + pl->pad_end[j]));
        pl->out[j] = (w->ceil_mode ? -div_floor(-span, st) : div_floor(span, st)) + 1;
        /* ceil_mode: a last window that would start in the padding at the end
         * holds no element of x and is dropped (onnx/onnx#5741, as onnxruntime
         * and PyTorch do) */
        if (w->ceil_mode && (pl->out[j] - 1) * st >= d + pl->pad_begin[j])
            pl->out[j]--;
    }
    return BP_OK;
}

void bp__window_params(const bp__window_plan *pl, bp_op_params *p)
{
    for (int32_t j = 0; j < pl->s; j++) {
        p->i[j] = pl->kernel[j];
        p->i[3 + j] = pl->stride[j];
        p->i[6 + j] = pl->dilation[j];
        p->i[9 + j] = pl->pad_begin[j];
        p->i[12 + j] = pl->pad_end[j];
    }
}

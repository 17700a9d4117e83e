/* backplane core: resize (ONNX Resize without a region of interest): the
 * output's extents from scales or sizes, the scale of every axis handed to
 * the plugin for its coordinate transformation. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static bp_status read_options(const char *fn, const bp_resize_options *options,
                              bp_resize_options *o)
{
    if (options) {
        BP__TRY(bp__struct_in(fn, "bp_resize_options", "BP_RESIZE_OPTIONS_INIT", options,
                              sizeof *options, o, sizeof *o));
    } else {
        *o = (bp_resize_options)BP_RESIZE_OPTIONS_INIT;
    }
    if ((int)o->mode < (int)BP_RESIZE_NEAREST || (int)o->mode > (int)BP_RESIZE_CUBIC)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: mode %d is not a bp_resize_mode", fn,
                         (int)o->mode);
    if ((int)o->coordinates < (int)BP_RESIZE_HALF_PIXEL ||
        (int)o->coordinates > (int)BP_RESIZE_TF_HALF_PIXEL_FOR_NN)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: coordinates %d is not a "
                         "bp_resize_coordinates (ONNX's tf_crop_and_resize is not supported)",
                         fn, (int)o->coordinates);
    if ((int)o->nearest < (int)BP_NEAREST_ROUND_PREFER_FLOOR || (int)o->nearest > (int)BP_NEAREST_CEIL)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: nearest %d is not a bp_resize_nearest", fn,
                         (int)o->nearest);
    if (!isfinite(o->cubic_coeff_a))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: cubic_coeff_a must be finite", fn);
    return BP_OK;
}

/* The output's extents and each axis' scale (out / in when sizes are given). */
static bp_status plan(const char *fn, const bp_tensor *x, const double *scales,
                      const int64_t *sizes, int64_t *shape, double *scale)
{
    if ((scales == NULL) == (sizes == NULL))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: pass exactly one of scales and sizes "
                         "(the other NULL)", fn);
    for (int32_t k = 0; k < x->rank; k++) {
        const int64_t d = x->shape[k];
        if (scales) {
            const double s = scales[k], o = floor((double)d * s);
            if (!(s > 0.0) || !isfinite(s) || o > 9.0e15)
                return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: scales[%d] is %g; scales must "
                                 "be finite and > 0", fn, (int)k, s);
            shape[k] = (int64_t)o;
            scale[k] = s;
        } else {
            if (sizes[k] < 0)
                return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: sizes[%d] is %lld; sizes must "
                                 "be >= 0", fn, (int)k, (long long)sizes[k]);
            shape[k] = sizes[k];
            scale[k] = d > 0 ? (double)sizes[k] / (double)d : 1.0;
        }
        if (d == 0 && shape[k] > 0)
            return bp__error(BP_ERR_SHAPE, "%s: axis %d of x is empty; there is nothing to "
                             "resize it from", fn, (int)k);
    }
    return BP_OK;
}

bp_status bp_resize(const bp_tensor *x, const double *scales, const int64_t *sizes,
                    const bp_resize_options *options, bp_tensor **out)
{
    static const char fn[] = "bp_resize";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_RESIZE, (const bp_tensor *const[]){x}, &be));
    bp_resize_options o;
    BP__TRY(read_options(fn, options, &o));
    BP__TRY(bp__check_dtype(fn, "resize", "x", x->dtype,
                            o.mode == BP_RESIZE_NEAREST ? BP_DTYPES_NUMERIC : BP_DTYPES_FLOAT));
    if (x->rank < 1)
        return bp__error(BP_ERR_SHAPE, "%s: x is a scalar; resize needs at least one axis", fn);
    int64_t shape[BP_MAX_RANK];
    double scale[BP_MAX_RANK];
    BP__TRY(plan(fn, x, scales, sizes, shape, scale));
    BP__TRY(bp__op_require(be, BP_OP_RESIZE, x->dtype));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, shape, &res));
    bp_view vx, vo;
    bp__view_dense(x, &vx);
    bp__view_dense(res, &vo);
    bp_op_params p = bp__params();
    p.i[0] = o.mode;
    p.i[1] = o.coordinates;
    p.i[2] = o.nearest;
    p.i[3] = o.exclude_outside;
    p.f[0] = o.cubic_coeff_a;
    for (int32_t k = 0; k < x->rank; k++)
        p.f[8 + k] = scale[k];
    return bp__deliver(res, bp__op_run(be, BP_OP_RESIZE, &p, (const bp_view *[]){&vx}, (const bp_view *[]){&vo}), out);
}

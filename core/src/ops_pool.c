/* backplane core: pooling (ONNX MaxPool, AveragePool, GlobalMaxPool,
 * GlobalAveragePool) and LRN. The windowed pools reach the plugin with the
 * window in bp_op_params; the global ones are reductions over the spatial
 * axes and need no entry of their own. */
#include <math.h>
#include <stdio.h>

#include "internal.h"

static bp_status pool_plan(const char *fn, const bp_tensor *x, const bp_window *window,
                           bp_window *win, bp__window_plan *pl)
{
    BP__TRY(bp__window_read(fn, x, window, win));
    const int32_t s = x->rank - 2;
    for (int32_t j = 0; j < s; j++)
        if (win->kernel[j] < 1)
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: window kernel[%d] is %lld; a pool "
                             "needs its kernel extent on each of x's %d spatial axes", fn,
                             (int)j, (long long)win->kernel[j], (int)s);
    if (win->groups != 1)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: groups is a convolution's; leave it 0",
                         fn);
    for (int j = 0; j < 3; j++)
        if (win->output_padding[j] || win->output_shape[j])
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: output_padding and output_shape are "
                             "conv_transpose's; leave them 0", fn);
    BP__TRY(bp__window_forward(fn, x, win, win->kernel, pl));
    for (int32_t j = 0; j < s; j++)
        if (pl->pad_begin[j] >= pl->kernel[j] || pl->pad_end[j] >= pl->kernel[j])
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: the padding of spatial axis %d "
                             "(%lld, %lld) must be smaller than the kernel extent %lld", fn,
                             (int)j, (long long)pl->pad_begin[j], (long long)pl->pad_end[j],
                             (long long)pl->kernel[j]);
    return BP_OK;
}

static void pool_shape(const bp_tensor *x, const bp__window_plan *pl, int64_t *shape)
{
    shape[0] = x->shape[0];
    shape[1] = x->shape[1];
    for (int32_t j = 0; j < pl->s; j++)
        shape[2 + j] = pl->out[j];
}

bp_status bp_max_pool(const bp_tensor *x, const bp_window *window, bp_tensor **out,
                      bp_tensor **indices)
{
    static const char fn[] = "bp_max_pool";
    BP__TRY(bp__check_outs(fn, out, 1, (bp_tensor **const[]){indices}));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_MAX_POOL, (const bp_tensor *const[]){x}, &be));
    bp_window win;
    bp__window_plan pl;
    BP__TRY(pool_plan(fn, x, window, &win, &pl));
    if (win.count_include_pad)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: count_include_pad is average_pool's; "
                         "leave it false", fn);
    BP__TRY(bp__op_require(be, BP_OP_MAX_POOL, x->dtype));
    int64_t shape[BP_MAX_RANK];
    pool_shape(x, &pl, shape);
    bp_tensor *res = NULL, *idx = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, shape, &res));
    if (indices) {
        bp_status st = bp__tensor_new(fn, be, BP_I64, x->rank, shape, &idx);
        if (st != BP_OK) {
            bp_tensor_release(res);
            return st;
        }
    }
    bp_view vx, vo, vi;
    bp__view_dense(x, &vx);
    bp__view_dense(res, &vo);
    if (idx)
        bp__view_dense(idx, &vi);
    bp_op_params p = bp__params();
    bp__window_params(&pl, &p);
    p.i[15] = win.storage_order;
    bp_status st = bp__op_run(be, BP_OP_MAX_POOL, &p, (const bp_view *[]){&vx}, (const bp_view *[]){&vo, idx ? &vi : NULL});
    if (st != BP_OK) {
        bp_tensor_release(res);
        bp_tensor_release(idx);
        return st;
    }
    *out = res;
    if (indices)
        *indices = idx;
    return BP_OK;
}

bp_status bp_average_pool(const bp_tensor *x, const bp_window *window, bp_tensor **out)
{
    static const char fn[] = "bp_average_pool";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_AVERAGE_POOL, (const bp_tensor *const[]){x}, &be));
    bp_window win;
    bp__window_plan pl;
    BP__TRY(pool_plan(fn, x, window, &win, &pl));
    if (win.storage_order)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: storage_order is max_pool's; leave it 0",
                         fn);
    for (int32_t j = 0; j < pl.s; j++)
        if (pl.dilation[j] != 1)
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: dilations[%d] is %lld; average "
                             "pooling has no dilations (ONNX 1.12): leave them 0 or 1", fn,
                             (int)j, (long long)pl.dilation[j]);
    BP__TRY(bp__op_require(be, BP_OP_AVERAGE_POOL, x->dtype));
    int64_t shape[BP_MAX_RANK];
    pool_shape(x, &pl, shape);
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, shape, &res));
    bp_view vx, vo;
    bp__view_dense(x, &vx);
    bp__view_dense(res, &vo);
    bp_op_params p = bp__params();
    bp__window_params(&pl, &p);
    p.i[15] = win.count_include_pad;
    return bp__deliver(res, bp__op_run(be, BP_OP_AVERAGE_POOL, &p, (const bp_view *[]){&vx}, (const bp_view *[]){&vo}), out);
}

static bp_status global_pool(const char *fn, const char *op, const bp_tensor *x, bool max,
                             bp_tensor **out)
{
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "x", x));
    BP__TRY(bp__check_dtype(fn, op, "x", x->dtype, BP_DTYPES_FLOAT));
    if (x->rank < 3) {
        char sx[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: x %s must be (N, C, spatial...) with at least one "
                         "spatial axis", fn, BP__SHAPE_STR(sx, x->rank, x->shape));
    }
    for (int32_t k = 2; max && k < x->rank; k++)
        if (x->shape[k] == 0)
            return bp__error(BP_ERR_SHAPE, "%s: spatial axis %d is empty; the maximum of "
                             "nothing is undefined", fn, (int)k);
    int32_t axes[BP_MAX_RANK];
    for (int32_t k = 2; k < x->rank; k++)
        axes[k - 2] = k;
    return (max ? bp_max : bp_mean)(x, x->rank - 2, axes, true, out);
}

bp_status bp_global_max_pool(const bp_tensor *x, bp_tensor **out)
{
    return global_pool("bp_global_max_pool", "global_max_pool", x, true, out);
}

bp_status bp_global_average_pool(const bp_tensor *x, bp_tensor **out)
{
    return global_pool("bp_global_average_pool", "global_average_pool", x, false, out);
}

bp_status bp_lrn(const bp_tensor *x, int64_t size, double alpha, double beta, double bias,
                 bp_tensor **out)
{
    static const char fn[] = "bp_lrn";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_LRN, (const bp_tensor *const[]){x}, &be));
    if (x->rank < 2) {
        char sx[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: x %s must be (N, C, ...)", fn,
                         BP__SHAPE_STR(sx, x->rank, x->shape));
    }
    if (size < 1)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: size is %lld; it must be >= 1", fn,
                         (long long)size);
    if (!isfinite(alpha) || !isfinite(beta) || !isfinite(bias))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: alpha, beta and bias must be finite", fn);
    BP__TRY(bp__op_require(be, BP_OP_LRN, x->dtype));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, x->shape, &res));
    bp_view vx, vo;
    bp__view_dense(x, &vx);
    bp__view_dense(res, &vo);
    bp_op_params p = bp__params();
    p.i[0] = size;
    p.f[0] = alpha;
    p.f[1] = beta;
    p.f[2] = bias;
    return bp__deliver(res, bp__op_run(be, BP_OP_LRN, &p, (const bp_view *[]){&vx}, (const bp_view *[]){&vo}), out);
}

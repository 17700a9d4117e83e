/* backplane core: normalisation (ONNX BatchNormalization in inference form,
 * InstanceNormalization, LayerNormalization; RMS normalisation). One plugin
 * op each, so a backend can fuse each into one pass over the data. */
#include <math.h>
#include <stdio.h>

#include "internal.h"

static bp_status check_epsilon(const char *fn, double epsilon)
{
    if (!(epsilon >= 0.0) || !isfinite(epsilon))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: epsilon %g must be finite and >= 0", fn,
                         epsilon);
    return BP_OK;
}

/* A per-channel operand (given: bp__op_begin checked): x's dtype, shape (C). */
static bp_status channel_operand(const char *fn, const char *arg, const bp_tensor *x,
                                 const bp_tensor *t)
{
    if (t->dtype != x->dtype)
        return bp__error(BP_ERR_DTYPE, "%s: x is %s but %s is %s; they must share a dtype: "
                         "convert with bp_cast first", fn, bp_dtype_name(x->dtype), arg,
                         bp_dtype_name(t->dtype));
    if (t->rank != 1 || t->shape[0] != x->shape[1]) {
        char st[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: %s %s must be (%lld,): one value per channel (x's "
                         "axis 1)", fn, arg, BP__SHAPE_STR(st, t->rank, t->shape),
                         (long long)x->shape[1]);
    }
    return BP_OK;
}

/* The operands by the op table, then x's rank. */
static bp_status x_operand(const char *fn, bp_op op, const bp_tensor *const *in, int32_t min_rank)
{
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, op, in, &be));
    const bp_tensor *x = in[0];
    if (x->rank < min_rank) {
        char sx[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: x %s must have rank >= %d: (N, C%s)", fn,
                         BP__SHAPE_STR(sx, x->rank, x->shape), (int)min_rank,
                         min_rank > 2 ? ", spatial..." : ", ...");
    }
    return BP_OK;
}

/* x and n per-channel operands into a fresh y of x's shape. */
static bp_status channel_call(const char *fn, bp_op op, const bp_tensor *x, int n,
                              const bp_tensor *const *ch, double epsilon, bp_tensor **out)
{
    const bp_tensor *all[8] = {x};
    for (int k = 0; k < n && k < 7; k++)
        all[k + 1] = ch[k];
    bp_backend *be = bp__backend_of_all((size_t)(n < 7 ? n : 7) + 1, all);
    BP__TRY(bp__op_require(be, op, x->dtype));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, x->shape, &res));
    bp_view v[5], vo;
    const bp_view *in[5];
    bp__view_dense(x, &v[0]);
    in[0] = &v[0];
    for (int k = 0; k < n; k++) {
        bp__view_dense(ch[k], &v[1 + k]);
        in[1 + k] = &v[1 + k];
    }
    bp__view_dense(res, &vo);
    bp_op_params p = bp__params();
    p.f[0] = epsilon;
    return bp__deliver(res, bp__op_run(be, op, &p, in, (const bp_view *[]){&vo}),
                       out);
}

bp_status bp_batch_norm(const bp_tensor *x, const bp_tensor *scale, const bp_tensor *bias,
                        const bp_tensor *mean, const bp_tensor *var, double epsilon,
                        bp_tensor **out)
{
    static const char fn[] = "bp_batch_norm";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(x_operand(fn, BP_OP_BATCH_NORM, (const bp_tensor *const[]){x, scale, bias, mean, var},
                      2));
    BP__TRY(channel_operand(fn, "scale", x, scale));
    BP__TRY(channel_operand(fn, "bias", x, bias));
    BP__TRY(channel_operand(fn, "mean", x, mean));
    BP__TRY(channel_operand(fn, "var", x, var));
    BP__TRY(check_epsilon(fn, epsilon));
    return channel_call(fn, BP_OP_BATCH_NORM, x, 4,
                        (const bp_tensor *const[]){scale, bias, mean, var}, epsilon, out);
}

bp_status bp_instance_norm(const bp_tensor *x, const bp_tensor *scale, const bp_tensor *bias,
                           double epsilon, bp_tensor **out)
{
    static const char fn[] = "bp_instance_norm";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(x_operand(fn, BP_OP_INSTANCE_NORM, (const bp_tensor *const[]){x, scale, bias}, 3));
    BP__TRY(channel_operand(fn, "scale", x, scale));
    BP__TRY(channel_operand(fn, "bias", x, bias));
    BP__TRY(check_epsilon(fn, epsilon));
    return channel_call(fn, BP_OP_INSTANCE_NORM, x, 2, (const bp_tensor *const[]){scale, bias},
                        epsilon, out);
}

/* ---- over trailing axes ------------------------------------------------------------ */

/* t (NULL allowed when optional) broadcasts to x's axes from ax on. */
static bp_status trailing_operand(const char *fn, const char *arg, const bp_tensor *x,
                                  int32_t ax, const bp_tensor *t)
{
    if (!t)
        return BP_OK;
    if (t->dtype != x->dtype)
        return bp__error(BP_ERR_DTYPE, "%s: x is %s but %s is %s; they must share a dtype: "
                         "convert with bp_cast first", fn, bp_dtype_name(x->dtype), arg,
                         bp_dtype_name(t->dtype));
    bool ok = t->rank <= x->rank - ax;
    for (int32_t k = 0; ok && k < t->rank; k++) {
        int64_t want = x->shape[x->rank - t->rank + k];
        ok = t->shape[k] == want || t->shape[k] == 1;
    }
    if (!ok) {
        char st[BP__SHAPE_STR_CAP], sn[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: %s %s must broadcast to the normalised axes %s", fn,
                         arg, BP__SHAPE_STR(st, t->rank, t->shape),
                         BP__SHAPE_STR(sn, x->rank - ax, x->shape + ax));
    }
    return BP_OK;
}

/* The statistics' dtype: f32 for the half types (ONNX's stash_type). */
static bp_dtype stat_dtype(bp_dtype dt) { return dt == BP_F16 || dt == BP_BF16 ? BP_F32 : dt; }

typedef struct norm_outs {
    bp_tensor *t[3];
} norm_outs;

static void norm_outs_release(norm_outs *o)
{
    for (int k = 0; k < 3; k++) {
        bp_tensor_release(o->t[k]);
        o->t[k] = NULL;
    }
}

static bp_status trailing_call(const char *fn, bp_op op, const bp_tensor *x, int32_t ax,
                               const bp_tensor *scale, const bp_tensor *bias, double epsilon,
                               bool want_stats[2], norm_outs *o)
{
    bp_backend *be = bp__backend_of_all(3, (const bp_tensor *const[]){x, scale, bias});
    BP__TRY(bp__op_require(be, op, x->dtype));
    int64_t stat_shape[BP_MAX_RANK];
    for (int32_t k = 0; k < x->rank; k++)
        stat_shape[k] = k < ax ? x->shape[k] : 1;
    bp_status st = bp__tensor_new(fn, be, x->dtype, x->rank, x->shape, &o->t[0]);
    for (int k = 0; k < 2 && st == BP_OK; k++)
        if (want_stats[k])
            st = bp__tensor_new(fn, be, stat_dtype(x->dtype), x->rank, stat_shape, &o->t[1 + k]);
    if (st != BP_OK) {
        norm_outs_release(o);
        return st;
    }
    bp_view vx, vs, vb, vo[3];
    bp__view_dense(x, &vx);
    if (scale)
        bp__view_broadcast(scale, x->rank, x->shape, &vs);
    if (bias)
        bp__view_broadcast(bias, x->rank, x->shape, &vb);
    const bp_view *outs[3] = {&vo[0], NULL, NULL};
    bp__view_dense(o->t[0], &vo[0]);
    for (int k = 1; k < 3; k++)
        if (o->t[k]) {
            bp__view_dense(o->t[k], &vo[k]);
            bp__view_set_dense(&vo[k], ax, x->shape); /* the leading axes alone */
            outs[k] = &vo[k];
        }
    bp_op_params p = bp__params();
    p.i[0] = x->rank - ax;
    p.f[0] = epsilon;
    const bp_view *in[3] = {&vx, scale ? &vs : NULL, bias ? &vb : NULL};
    st = bp__op_run(be, op, &p, in, outs);
    if (st != BP_OK)
        norm_outs_release(o);
    return st;
}

bp_status bp_layer_norm(const bp_tensor *x, int32_t axis, const bp_tensor *scale,
                        const bp_tensor *bias, double epsilon, bp_tensor **out, bp_tensor **mean,
                        bp_tensor **inv_std)
{
    static const char fn[] = "bp_layer_norm";
    BP__TRY(bp__check_outs(fn, out, 2, (bp_tensor **const[]){mean, inv_std}));
    if (x && !scale)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: scale is NULL; ONNX's layer "
                         "normalisation always scales: pass ones for none", fn);
    BP__TRY(x_operand(fn, BP_OP_LAYER_NORM, (const bp_tensor *const[]){x, scale, bias}, 1));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    BP__TRY(trailing_operand(fn, "scale", x, ax, scale));
    BP__TRY(trailing_operand(fn, "bias", x, ax, bias));
    BP__TRY(check_epsilon(fn, epsilon));
    norm_outs o = {{NULL, NULL, NULL}};
    bool want[2] = {mean != NULL, inv_std != NULL};
    BP__TRY(trailing_call(fn, BP_OP_LAYER_NORM, x, ax, scale, bias, epsilon, want, &o));
    *out = o.t[0];
    if (mean)
        *mean = o.t[1];
    if (inv_std)
        *inv_std = o.t[2];
    return BP_OK;
}

bp_status bp_rms_norm(const bp_tensor *x, int32_t axis, const bp_tensor *scale, double epsilon,
                      bp_tensor **out)
{
    static const char fn[] = "bp_rms_norm";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(x_operand(fn, BP_OP_RMS_NORM, (const bp_tensor *const[]){x, scale}, 1));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    BP__TRY(trailing_operand(fn, "scale", x, ax, scale));
    BP__TRY(check_epsilon(fn, epsilon));
    norm_outs o = {{NULL, NULL, NULL}};
    bool want[2] = {false, false};
    BP__TRY(trailing_call(fn, BP_OP_RMS_NORM, x, ax, scale, NULL, epsilon, want, &o));
    *out = o.t[0];
    return BP_OK;
}

/* blas_cpu's op entry for nn.h's ops: the fast paths where it has one
 * (conv.c, window_pool.c, norm.c, loss.c), else the reference kernels over
 * ranges of their units (images x groups, planes, rows, output elements) on
 * the pool. */
#include <stdlib.h>

#include "blas_cpu_nn.h"

/* ---- ranges on the pool -------------------------------------------------- */

typedef struct range_job {
    bpc_dev *dev;
    int64_t n, ns;
    bpc_range_fn fn;
    const void *args;
    bp_status st[BPC_MAX_SLABS];
} range_job;

static void range_item(void *ctx, int64_t t)
{
    range_job *j = ctx;
    j->st[t] = j->fn(j->dev, j->args, j->n * t / j->ns, j->n * (t + 1) / j->ns);
}

bp_status bpc_ranges(bpc_dev *dev, const char *op, int64_t n, int64_t work, bpc_range_fn fn,
                     const void *args)
{
    int team = bpc_team(dev, work);
    if (team > n)
        team = (int)n;
    if (team <= 1)
        return fn(dev, args, 0, n);
    range_job *j = malloc(sizeof *j);
    if (!j) /* no memory for the job: the calling thread alone */
        return fn(dev, args, 0, n);
    *j = (range_job){.dev = dev, .n = n, .fn = fn, .args = args};
    j->ns = bpc_slabs(team, n, work);
    bpc_pool_run(dev->pool, team, j->ns, range_item, j);
    bp_status st = BP_OK;
    for (int64_t t = 0; t < j->ns && st == BP_OK; t++)
        st = j->st[t];
    free(j);
    if (st != BP_OK) /* the worker's message was set on its own thread */
        return bpk_fail(dev, st, "blas_cpu: %s failed on a worker thread%s", op,
                        st == BP_ERR_OUT_OF_MEMORY ? ": out of memory" : "");
    return BP_OK;
}

/* ---- the reference kernels as range functions ------------------------------ */

typedef struct call {
    bp_op op;
    const bp_op_params *p;
    const bp_view *const *in;
    const bp_view *const *out;
    int32_t n_out;
} call;

static bp_status ref_range(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    const call *c = args;
    const bp_view *const *in = c->in, *const *out = c->out;
    switch (c->op) {
    case BP_OP_CONV:
        return bpk_conv_units(d, c->p, in[0], in[1], in[2], out[0], lo, hi);
    case BP_OP_CONV_TRANSPOSE:
        return bpk_conv_transpose_units(d, c->p, in[0], in[1], in[2], out[0], lo, hi);
    case BP_OP_MAX_POOL:
        return bpk_max_pool_planes(d, c->p, in[0], out[0], c->n_out > 1 ? out[1] : NULL, lo, hi);
    case BP_OP_AVERAGE_POOL:
        return bpk_average_pool_planes(d, c->p, in[0], out[0], lo, hi);
    case BP_OP_LRN:
        return bpk_lrn_units(d, c->p, in[0], out[0], lo, hi);
    case BP_OP_BATCH_NORM:
        return bpk_batch_norm_planes(d, c->p, in, out[0], lo, hi);
    case BP_OP_INSTANCE_NORM:
        return bpk_instance_norm_planes(d, c->p, in, out[0], lo, hi);
    case BP_OP_LAYER_NORM:
        return bpk_trailing_norm_rows(d, false, c->p, in[0], in[1], in[2], out[0], out[1],
                                      out[2], lo, hi);
    case BP_OP_RMS_NORM:
        return bpk_trailing_norm_rows(d, true, c->p, in[0], in[1], NULL, out[0], NULL, NULL, lo,
                                      hi);
    case BP_OP_RESIZE:
        return bpk_resize_elems(d, c->p, in[0], out[0], lo, hi);
    default:
        return bpk_fail(d, BP_ERR_UNSUPPORTED_OP, "blas_cpu: no kernel for %s", bp_op_name(c->op));
    }
}

static int64_t numel_from(const bp_view *v, int32_t from)
{
    int64_t n = 1;
    for (int32_t k = from; k < v->rank; k++)
        n *= v->shape[k];
    return n;
}

/* The units of op's reference kernel, and the work of one (in element
 * operations). */
static void units_of(bp_op op, const bp_op_params *p, const bp_view *const *in,
                     const bp_view *const *out, int64_t *n, int64_t *per)
{
    const bp_view *x = in[0], *y = out[0];
    const int64_t planes = x->shape[0] * (x->rank > 1 ? x->shape[1] : 1);
    switch (op) {
    case BP_OP_CONV: case BP_OP_CONV_TRANSPOSE:
        *n = x->shape[0] * p->i[15];
        *per = numel_from(y, 1) / p->i[15] * numel_from(in[1], 1);
        return;
    case BP_OP_MAX_POOL: case BP_OP_AVERAGE_POOL:
        *n = planes;
        *per = numel_from(y, 2) * (p->i[0] ? p->i[0] : 1) * (p->i[1] ? p->i[1] : 1) *
               (p->i[2] ? p->i[2] : 1);
        return;
    case BP_OP_LRN: { /* a window wider than the channels sums over them all */
        const int64_t window = p->i[0] < x->shape[1] ? p->i[0] : x->shape[1];
        *n = x->shape[0] * numel_from(x, 2);
        *per = x->shape[1] * (window + BPC_HEAVY);
        return;
    }
    case BP_OP_BATCH_NORM: case BP_OP_INSTANCE_NORM:
        *n = planes;
        *per = 3 * numel_from(x, 2);
        return;
    case BP_OP_LAYER_NORM: case BP_OP_RMS_NORM: { /* rows: the leading axes (a row may be
                                                     empty: its mean is still written) */
        const int32_t lead = x->rank - (int32_t)p->i[0];
        *n = 1;
        for (int32_t k = 0; k < lead; k++)
            *n *= x->shape[k];
        *per = 4 * numel_from(x, lead);
        return;
    }
    default: /* resize */
        *n = numel_from(y, 0);
        *per = 4 * x->rank;
        return;
    }
}

bp_status bpc_nn_op(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                    const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    bpc_dev *d = dev;
    const bp_view *x = n_in > 0 ? in[0] : NULL; /* none for a code past this build's list */
    if (!x)
        return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP, "blas_cpu: op code %d (%s) has no kernel here",
                        (int)op, bp_op_name(op));
    switch (op) {
    case BP_OP_CONV:
        if (bpc_conv_depthwise_takes(p, x, in[1], in[2], out[0]))
            return bpc_conv_depthwise(d, p, x, in[1], in[2], out[0]);
        if (bpc_conv_narrow_takes(p, x, in[1], out[0]))
            return bpc_conv_narrow(d, p, x, in[1], in[2], out[0]);
        if (bpc_conv_gemm_takes(p, x, in[1], out[0]))
            return bpc_conv_gemm(d, p, x, in[1], in[2], NULL, out[0], false);
        break;
    case BP_OP_LAYER_NORM: case BP_OP_RMS_NORM:
        if (bpc_norm_fused_takes(x, out[0], numel_from(x, x->rank - (int32_t)p->i[0])))
            return bpc_norm_fused(d, op == BP_OP_RMS_NORM, p, x, in[1],
                                  op == BP_OP_LAYER_NORM ? in[2] : NULL, out[0],
                                  op == BP_OP_LAYER_NORM ? out[1] : NULL,
                                  op == BP_OP_LAYER_NORM ? out[2] : NULL);
        break;
    case BP_OP_MAX_POOL:
        if (bpc_max_pool_takes(x, out[0], n_out > 1 ? out[1] : NULL))
            return bpc_max_pool(d, p, x, out[0]);
        break;
    case BP_OP_AVERAGE_POOL:
        if (bpc_average_pool_takes(x, out[0]))
            return bpc_average_pool(d, p, x, out[0]);
        break;
    case BP_OP_LRN:
        if (bpc_norm_fused_takes(x, out[0], numel_from(x, 2)))
            return bpc_lrn(d, p, x, out[0]);
        break;
    case BP_OP_BATCH_NORM: case BP_OP_INSTANCE_NORM:
        if (bpc_planes_fused_takes(x, out[0]))
            return bpc_planes_fused(d, op == BP_OP_INSTANCE_NORM, p, in, out[0]);
        break;
    case BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS: case BP_OP_NLL_LOSS:
        if (bpc_loss_fused_takes(op, x, n_out > 1 ? out[1] : NULL))
            return bpc_loss_fused(d, op, p, x, in[1], in[2], out[0], n_out > 1 ? out[1] : NULL);
        return bpk_nn_op(dev, op, p, n_in, in, n_out, out); /* nll reads one score a sample */
    default:
        break;
    }
    int64_t n, per;
    units_of(op, p, in, out, &n, &per);
    if (n <= 0)
        return BP_OK;
    call c = {op, p, in, out, n_out};
    return bpc_ranges(d, bp_op_name(op), n, n * (per > 0 ? per : 1), ref_range, &c);
}

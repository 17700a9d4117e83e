/* The normalisations, in double as backends/kernels/nn_norm.c, rounded once
 * into the output; variances are the population ones:
 *   batch_norm     (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c]:
 *                  a thread per element
 *   instance_norm  the same with each (n, c) plane's own mean and variance:
 *                  a block per plane, two passes (the mean, then the
 *                  squared deviations from it), then the writes
 *   layer_norm     over each row of the p.i[0] trailing axes, a block per
 *                  row as instance_norm; the row's mean and 1 / sqrt(variance
 *                  + eps) stored when asked (out[1], out[2]: the leading
 *                  axes, f32 for f16/bf16 x, as the core allocates them)
 *   rms_norm       x / sqrt(mean(x^2) + eps) * scale (scale optional)
 * p.f[0] epsilon. The block sums add each thread's strided partial sum, then
 * the warps' (nn_common.h): another order than the reference's serial loop,
 * within the norm tolerance of tests/conformance/tolerances.txt. */
#include "nn_common.h"

#define NORM_THREADS 256

/* ---- batch_norm ------------------------------------------------------------------------ */

typedef struct bn_args {
    bpcu_nv x, y, scale, bias, mean, var;
    int64_t C, S;                  /* channels, elements per (n, c) plane */
    double eps;
} bn_args;

__global__ void bpcu_k_batch_norm(bn_args a, int64_t total)
{
    BPCU_FOR(e, total) {
        const int64_t c = e / a.S % a.C;
        const double sc = bpcu_nv_ld(a.scale, c * a.scale.strides[0]);
        const double b = bpcu_nv_ld(a.bias, c * a.bias.strides[0]);
        const double m = bpcu_nv_ld(a.mean, c * a.mean.strides[0]);
        const double r = 1.0 / sqrt(bpcu_nv_ld(a.var, c * a.var.strides[0]) + a.eps);
        const double v = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, e));
        bpcu_nv_st(a.y, bpcu_nv_off(a.y, e), (v - m) * r * sc + b);
    }
}

/* ---- over groups of elements: instance_norm (planes), layer_norm, rms_norm (rows) ---- */

/* Group u is the elements [u L, u L + L) of x's row-major order. */
typedef struct group_args {
    bpcu_nv x, y, scale, bias, mean, inv_std; /* scale ... inv_std: p NULL when absent */
    int64_t groups, L;
    int64_t C;                     /* instance_norm: scale and bias are per channel u % C */
    bool instance, rms;
    double eps;
} group_args;

__global__ void bpcu_k_group_norm(group_args a)
{
    for (int64_t u = blockIdx.x; u < a.groups; u += gridDim.x) { /* uniform across the block */
        const int64_t first = u * a.L;
        double m = 0, inv;
        if (a.rms) {
            double q = 0;
            for (int64_t i = threadIdx.x; i < a.L; i += blockDim.x) {
                const double v = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + i));
                q += v * v;
            }
            q = bpcu_block_sum(q);
            inv = 1.0 / sqrt(q / (double)a.L + a.eps);
        } else {
            double s = 0;
            for (int64_t i = threadIdx.x; i < a.L; i += blockDim.x)
                s += bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + i));
            m = bpcu_block_sum(s) / (double)a.L;
            double q = 0;
            for (int64_t i = threadIdx.x; i < a.L; i += blockDim.x) {
                const double dv = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + i)) - m;
                q += dv * dv;
            }
            inv = 1.0 / sqrt(bpcu_block_sum(q) / (double)a.L + a.eps);
        }
        if (a.instance) {
            const int64_t c = u % a.C;
            const double sc = bpcu_nv_ld(a.scale, c * a.scale.strides[0]);
            const double b = bpcu_nv_ld(a.bias, c * a.bias.strides[0]);
            for (int64_t i = threadIdx.x; i < a.L; i += blockDim.x) {
                const double v = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + i));
                bpcu_nv_st(a.y, bpcu_nv_off(a.y, first + i), (v - m) * inv * sc + b);
            }
        } else {
            for (int64_t i = threadIdx.x; i < a.L; i += blockDim.x) {
                const int64_t k = first + i;
                const double v = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, k));
                const double sc = a.scale.p ? bpcu_nv_ld(a.scale, bpcu_nv_off(a.scale, k)) : 1.0;
                const double b = a.bias.p ? bpcu_nv_ld(a.bias, bpcu_nv_off(a.bias, k)) : 0.0;
                bpcu_nv_st(a.y, bpcu_nv_off(a.y, k), (v - m) * inv * sc + b);
            }
            if (threadIdx.x == 0 && a.mean.p)
                bpcu_nv_st(a.mean, bpcu_nv_off(a.mean, u), m);
            if (threadIdx.x == 0 && a.inv_std.p)
                bpcu_nv_st(a.inv_std, bpcu_nv_off(a.inv_std, u), inv);
        }
    }
}

bp_status bpcu_nn_norm(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *y = c->out[0];
    const bool channels = c->op == BP_OP_BATCH_NORM || c->op == BP_OP_INSTANCE_NORM;
    const int32_t min_rank = c->op == BP_OP_INSTANCE_NORM ? 3 : channels ? 2 : 1;
    if (x->rank < min_rank || y->rank != x->rank ||
        (!channels && (c->p.i[0] < 0 || c->p.i[0] > x->rank)))
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: %s: x of rank %d is not what "
                         "opcodes.h describes", bp_op_name(c->op), (int)x->rank);
    const int64_t total = bpcu_numel(x);
    if (total == 0 && channels)
        return BP_OK;
    cudaError_t e;
    if (c->op == BP_OP_BATCH_NORM) {
        bn_args a;
        a.x = bpcu_nv_of(x), a.y = bpcu_nv_of(y);
        a.scale = bpcu_nv_of(c->in[1]), a.bias = bpcu_nv_of(c->in[2]);
        a.mean = bpcu_nv_of(c->in[3]), a.var = bpcu_nv_of(c->in[4]);
        a.C = x->shape[1];
        a.S = total / (x->shape[0] * a.C);
        a.eps = c->p.f[0];
        e = bpcu_launch(d->stream, bpcu_blocks(total), BPCU_THREADS, 0, bpcu_k_batch_norm, a,
                        total);
        return bpcu_launched(d, e, "batch_norm kernel");
    }
    group_args a;
    memset(&a, 0, sizeof a);
    a.x = bpcu_nv_of(x), a.y = bpcu_nv_of(y);
    a.scale = bpcu_nv_of(c->in[1]);
    a.eps = c->p.f[0];
    a.instance = c->op == BP_OP_INSTANCE_NORM;
    a.rms = c->op == BP_OP_RMS_NORM;
    if (a.instance) {
        a.bias = bpcu_nv_of(c->in[2]);
        a.C = x->shape[1];
        a.groups = x->shape[0] * x->shape[1];
        a.L = total / a.groups;
    } else {
        if (!a.rms) {
            a.bias = bpcu_nv_of(c->in[2]);
            a.mean = bpcu_nv_of(c->out[1]);
            a.inv_std = bpcu_nv_of(c->out[2]);
        }
        /* rows of L elements; L = 0 still stores each row's statistics
         * (NaN, as the reference's 0 / 0) */
        a.groups = 1, a.L = 1;
        for (int32_t k = 0; k < x->rank; k++)
            *(k < x->rank - (int32_t)c->p.i[0] ? &a.groups : &a.L) *= x->shape[k];
        if (a.groups == 0)
            return BP_OK;
    }
    e = bpcu_launch(d->stream, bpcu_unit_blocks(a.groups), NORM_THREADS, 0, bpcu_k_group_norm, a);
    return bpcu_launched(d, e, "normalisation kernel");
}

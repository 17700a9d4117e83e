/* NLL_LOSS and SOFTMAX_CROSS_ENTROPY_LOSS: the scores (or log-probabilities)
 * with the class axis last, (N, d..., C), one sample per row; in double as
 * backends/kernels/nn_loss.c:
 *   nll_loss:                    loss = -weights[t] x[t]
 *   softmax_cross_entropy_loss:  log_prob = x - (max + log(sum exp(x - max))),
 *                                loss = -weights[t] log_prob[t]
 * t the sample's label: a class, or ignore_index; a sample whose label is
 * ignore_index has loss 0 and weight 0. The core does not read a deferring
 * device's labels, so the kernel checks them (checks.h): a label that is
 * neither is noted, gives that sample NaN, and surfaces as BP_ERR_INDEX at
 * the next wait. A block per sample stores its loss and weight in double scratch, and
 * the loss itself when p.i[0] is NONE; SUM and MEAN (the sum over the
 * weights' sum: NaN when every sample is ignored, as the reference) are then
 * one block's sums over the samples. p.i[1] ignore_index given, p.i[2] its
 * value. */
#include "checks.h"
#include "nn_common.h"

#define LOSS_THREADS 256

typedef struct loss_args {
    bpcu_nv x, labels, weights, loss, log_prob; /* weights, log_prob: p NULL when absent */
    int64_t rows, C;
    bool ce, none, has_ignore;
    int64_t ignore;
} loss_args;

/* The block's maximum of v, NaN if any thread saw a NaN (nan != 0). */
static __device__ double block_max(double v, int nan)
{
    __shared__ double part[32];
    __shared__ int flag;
    for (int by = 16; by > 0; by >>= 1) {
        const double o = __shfl_xor_sync(0xffffffffu, v, by);
        v = o > v ? o : v;
        nan |= __shfl_xor_sync(0xffffffffu, nan, by);
    }
    __syncthreads(); /* part and flag may still be read from the previous call */
    if (threadIdx.x == 0)
        flag = 0;
    __syncthreads();
    if ((threadIdx.x & 31) == 0) {
        part[threadIdx.x >> 5] = v;
        if (nan)
            atomicOr(&flag, 1);
    }
    __syncthreads();
    double m = part[0];
    for (unsigned w = 1; w < (blockDim.x >> 5); w++)
        m = part[w] > m ? part[w] : m;
    return flag ? (double)NAN : m;
}

__global__ void bpcu_k_loss_rows(loss_args a, double *per, double *wsum, unsigned long long *bad)
{
    for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) { /* uniform across the block */
        const int64_t first = r * a.C;
        const int64_t t = bp_elem_load_i64(a.labels.dt, a.labels.p +
                                                          bpcu_nv_off(a.labels, r) * a.labels.es);
        const bool ignored = a.has_ignore && t == a.ignore;
        double lse = 0;
        if (a.ce && (a.log_prob.p || !ignored)) {
            double m = -INFINITY;
            int nan = 0;
            for (int64_t i = threadIdx.x; i < a.C; i += blockDim.x) {
                const double v = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + i));
                m = v > m ? v : m;
                nan |= isnan(v) ? 1 : 0;
            }
            m = block_max(m, nan);
            double s = 0;
            for (int64_t i = threadIdx.x; i < a.C; i += blockDim.x)
                s += exp(bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + i)) - m);
            lse = m + log(bpcu_block_sum(s)); /* NaN for a NaN or +inf score, or all -inf */
            if (a.log_prob.p)
                for (int64_t i = threadIdx.x; i < a.C; i += blockDim.x) {
                    const int64_t k = first + i;
                    bpcu_nv_st(a.log_prob, bpcu_nv_off(a.log_prob, k),
                               bpcu_nv_ld(a.x, bpcu_nv_off(a.x, k)) - lse);
                }
        }
        if (threadIdx.x == 0) {
            double w = 0, l = 0;
            if (!ignored && (t < 0 || t >= a.C)) { /* not a class: noted, reported later */
                atomicMin(bad, (unsigned long long)r);
                w = NAN, l = NAN;
            } else if (!ignored) {
                w = a.weights.p ? bpcu_nv_ld(a.weights, t * a.weights.strides[0]) : 1.0;
                const double v = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + t));
                l = -w * (a.ce ? v - lse : v);
            }
            per[r] = l;
            wsum[r] = w;
            if (a.none)
                bpcu_nv_st(a.loss, bpcu_nv_off(a.loss, r), l);
        }
    }
}

/* SUM (mean false) or MEAN of the samples' losses into the scalar loss. */
__global__ void bpcu_k_loss_reduce(bpcu_nv loss, const double *per, const double *wsum,
                                   int64_t rows, bool mean)
{
    double s = 0, w = 0;
    for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
        s += per[r];
        w += wsum[r];
    }
    s = bpcu_block_sum(s);
    w = bpcu_block_sum(w);
    if (threadIdx.x == 0)
        bpcu_nv_st(loss, 0, mean ? s / w : s);
}

bp_status bpcu_nn_loss(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *labels = c->in[1];
    if (x->rank < 2 || labels->rank != x->rank - 1 ||
        (labels->dtype != BP_I32 && labels->dtype != BP_I64) || c->p.i[0] < 0 || c->p.i[0] > 2)
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: %s: the scores, labels and "
                         "reduction are not what opcodes.h describes", bp_op_name(c->op));
    loss_args a;
    memset(&a, 0, sizeof a);
    a.ce = c->op == BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
    a.x = bpcu_nv_of(x);
    a.labels = bpcu_nv_of(labels);
    a.weights = bpcu_nv_of(c->in[2]);
    a.loss = bpcu_nv_of(c->out[0]);
    a.log_prob = bpcu_nv_of(a.ce ? c->out[1] : NULL);
    a.C = x->shape[x->rank - 1];
    a.rows = 1;
    for (int32_t k = 0; k < x->rank - 1; k++)
        a.rows *= x->shape[k];
    a.none = c->p.i[0] == 0;
    a.has_ignore = c->p.i[1] != 0;
    a.ignore = c->p.i[2];
    if (a.none && a.rows == 0)
        return BP_OK;
    double *per = NULL;
    bp_status st = bpcu_scratch(d, (size_t)(a.rows > 0 ? a.rows : 1) * 2 * sizeof(double),
                                (void **)&per);
    if (st != BP_OK)
        return st;
    bpcu_index_check chk(d, c->op);
    if (chk.status != BP_OK) {
        bpcu_scratch_free(d, per);
        return chk.status;
    }
    chk.labels(a.has_ignore);
    cudaError_t e = cudaSuccess;
    if (a.rows > 0)
        e = bpcu_launch(d->stream, bpcu_unit_blocks(a.rows), LOSS_THREADS, 0, bpcu_k_loss_rows,
                        a, per, per + a.rows, chk.bad());
    st = bpcu_launched(d, e, "loss kernel");
    bp_status cst = chk.commit(labels, 1, &a.C, 1); /* even if the kernel failed */
    if (st == BP_OK)
        st = cst;
    if (st == BP_OK && !a.none) {
        e = bpcu_launch(d->stream, 1, LOSS_THREADS, 0, bpcu_k_loss_reduce, a.loss,
                        (const double *)per, (const double *)(per + a.rows), a.rows,
                        c->p.i[0] == 2);
        st = bpcu_launched(d, e, "loss reduction kernel");
    }
    bpcu_scratch_free(d, per);
    return st;
}

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
#include "elem_kernels.h"
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

/* Row r's label (any integer dtype the core allows). */
static __device__ __forceinline__ int64_t row_label(const loss_args &a, int64_t r)
{
    return bp_elem_load_i64(a.labels.dt, a.labels.p + bpcu_nv_off(a.labels, r) * a.labels.es);
}

/* Thread 0's end of row r: the sample's loss and weight into per[r] and
 * wsum[r] (and into the loss itself when NONE); x_at(t) is the label's
 * score, read only for a label that is a class. */
template <class At>
static __device__ __forceinline__ void row_end(const loss_args &a, int64_t r, int64_t t,
                                               bool ignored, double lse, At x_at, double *per,
                                               double *wsum, unsigned long long *bad)
{
    double w = 0, l = 0;
    if (!ignored && (t < 0 || t >= a.C)) { /* not a class: noted, reported later */
        atomicMin(bad, (unsigned long long)r);
        w = NAN, l = NAN;
    } else if (!ignored) {
        w = a.weights.p ? bpcu_nv_ld(a.weights, t * a.weights.strides[0]) : 1.0;
        const double v = x_at(t);
        l = -w * (a.ce ? v - lse : v);
    }
    per[r] = l;
    wsum[r] = w;
    if (a.none)
        bpcu_nv_st(a.loss, bpcu_nv_off(a.loss, r), l);
}

/* Any view, any float dtype: every element through its strides. */
__global__ void bpcu_k_loss_rows(loss_args a, double *per, double *wsum, unsigned long long *bad)
{
    for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) { /* uniform across the block */
        const int64_t first = r * a.C;
        const int64_t t = row_label(a, r);
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
        if (threadIdx.x == 0)
            row_end(a, r, t, ignored, lse,
                    [&](int64_t k) { return bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + k)); },
                    per, wsum, bad);
    }
}

/* ---- the fast path: dense rows, typed loads in 16-byte packs ---------------------------
 * softmax_cross_entropy_loss of f32, f16 or bf16 scores that are dense and
 * row-major (and a log_prob that is too, or none): row r is the C elements
 * from x + r C, read through typed pointers, in 16-byte packs from the
 * row's first 16-byte boundary on. The arithmetic is bpcu_k_loss_rows',
 * value for value (the max in the compute type, which is exact; exp and
 * the sum in double); only the order in which the threads' partial sums
 * are added differs, which moves the double sum in its last bits, far
 * below any f32 tolerance. A block of 512 threads per row, two blocks an
 * SM (64 registers): each row is read twice, for its max and then for its
 * sum, and with some 260 rows of a 32000-word vocabulary in flight (33 MB)
 * the second read mostly hits the L2. On an H200 this kernel took 0.33
 * ms for (4096, 32000) f32 scores (0.56 ms storing the log_prob too),
 * 0.33 ms in f16 and 0.29 ms in bf16, against 1.9 ms for the strided
 * kernel, which spends its time on a generic load and a rank-generic
 * offset (64-bit divisions) per element, three times. f16 taking as long
 * as f32 says where the time goes now: exp's some 20 double operations
 * per element, with the reads overlapped. */
#define LOSS_ROW_THREADS 512

/* Elements of the 16-byte-aligned start of the row at px, n long, that come
 * before it (fewer than a pack; px is aligned to its element). */
template <class S> static __device__ __forceinline__ int64_t row_head(const S *px, int64_t n)
{
    const int64_t h = (int64_t)(((16 - ((uintptr_t)px & 15)) & 15) / sizeof(S));
    return h < n ? h : n;
}

/* fn(c) for each element c (in the compute type) of the row at px, n long,
 * that this thread owns: the scalar head before the first 16-byte boundary,
 * then whole packs a block's width apart (U of them loaded before any is
 * used, each warp's loads coalesced), then the scalar tail. Each thread
 * meets the same elements in the same order whatever U. */
template <int U, class S, class Fn>
static __device__ __forceinline__ void row_walk(const S *px, int64_t n, Fn fn)
{
    typedef bpcu_ft<S> F;
    constexpr int V = 16 / sizeof(S);
    const int64_t nt = blockDim.x, h = row_head(px, n), np = (n - h) / V;
    const S *pp = px + h; /* 16-byte aligned */
    if ((int64_t)threadIdx.x < h)
        fn(F::ld(px[threadIdx.x]));
    int64_t p = threadIdx.x;
    for (; U > 1 && p + (U - 1) * nt < np; p += U * nt) {
        bpcu_pack<S, V> pk[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            pk[u] = bpcu_pack<S, V>::load(pp + (p + u * nt) * V);
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int k = 0; k < V; k++)
                fn(F::ld(pk[u].v[k]));
    }
    for (; p < np; p += nt) {
        const bpcu_pack<S, V> pk = bpcu_pack<S, V>::load(pp + p * V);
#pragma unroll
        for (int k = 0; k < V; k++)
            fn(F::ld(pk.v[k]));
    }
    for (int64_t i = h + np * V + threadIdx.x; i < n; i += nt)
        fn(F::ld(px[i]));
}

/* lp: the log_prob, or NULL; lp_packs: lp's rows start at the same offset
 * from a 16-byte boundary as x's (then stored in packs, else one by one). */
template <class S>
__global__ void __launch_bounds__(LOSS_ROW_THREADS, 2)
bpcu_k_ce_rows(loss_args a, const S *x, S *lp, bool lp_packs, double *per, double *wsum,
               unsigned long long *bad)
{
    typedef bpcu_ft<S> F;
    typedef typename F::C C;
    static_assert(std::is_same<C, float>::value,
                  "f32, f16 and bf16 only: f64 takes the strided kernel");
    constexpr int V = 16 / sizeof(S);
    const int64_t n = a.C, nt = blockDim.x;
    for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) { /* uniform across the block */
        const int64_t t = row_label(a, r);
        const bool ignored = a.has_ignore && t == a.ignore;
        const S *px = x + r * n;
        double lse = 0;
        if (lp || !ignored) {
            C mc = -INFINITY;
            bool nanc = false;
            /* the max: little work per element, so 4 packs in flight per thread */
            row_walk<4>(px, n, [&](C c) {
                mc = c > mc ? c : mc;
                nanc = nanc || c != c;
            });
            const double m = block_max((double)mc, nanc ? 1 : 0); /* every C is exact in double */
            double s = 0;
            /* the sum: the double exp hides the loads' latency (and more packs
             * at once would only take registers) */
            row_walk<1>(px, n, [&](C c) { s += exp((double)c - m); });
            lse = m + log(bpcu_block_sum(s)); /* NaN for a NaN or +inf score, or all -inf */
            if (lp) {
                S *po = lp + r * n;
                int64_t h = 0, np = 0;
                if (lp_packs) {
                    h = row_head(px, n), np = (n - h) / V;
                    for (int64_t p = threadIdx.x; p < np; p += nt) {
                        const bpcu_pack<S, V> pk = bpcu_pack<S, V>::load(px + h + p * V);
                        bpcu_pack<S, V> o;
#pragma unroll
                        for (int k = 0; k < V; k++)
                            o.v[k] = F::std_((double)F::ld(pk.v[k]) - lse);
                        o.store(po + h + p * V);
                    }
                }
                /* the rest: the head and the tail, or every element */
                for (int64_t i = threadIdx.x; i < n - np * V; i += nt) {
                    const int64_t j = i < h ? i : i + np * V;
                    po[j] = F::std_((double)F::ld(px[j]) - lse);
                }
            }
        }
        if (threadIdx.x == 0)
            row_end(a, r, t, ignored, lse, [&](int64_t k) { return (double)F::ld(px[k]); }, per,
                    wsum, bad);
    }
}

/* The fast path's kernel for scores of storage type S, when the views
 * allow it (false: the strided kernel's case, launched by the caller). */
template <class S>
static bool launch_ce_rows(bpcu_device *d, const loss_args &a, const bpcu_opcall *c,
                           double *per, unsigned long long *bad, cudaError_t *e)
{
    const bp_view *x = c->in[0], *log_prob = a.log_prob.p ? c->out[1] : NULL;
    if (!a.ce || a.rows < 1 || !bpcu_conv_dense(x) || (uintptr_t)a.x.p % sizeof(S) != 0)
        return false;
    if (log_prob && (log_prob->dtype != x->dtype || !bpcu_conv_dense(log_prob) ||
                     (uintptr_t)a.log_prob.p % sizeof(S) != 0))
        return false;
    const bool lp_packs = ((uintptr_t)a.log_prob.p - (uintptr_t)a.x.p) % 16 == 0;
    *e = bpcu_launch(d->stream, bpcu_unit_blocks(a.rows), LOSS_ROW_THREADS, 0, bpcu_k_ce_rows<S>,
                     a, (const S *)a.x.p, (S *)a.log_prob.p, lp_packs, per, per + a.rows, bad);
    return true;
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
    bool fast = false;
    switch (x->dtype) {
    case BP_F32: fast = launch_ce_rows<float>(d, a, c, per, chk.bad(), &e); break;
    case BP_F16: fast = launch_ce_rows<bpcu_h16>(d, a, c, per, chk.bad(), &e); break;
    case BP_BF16: fast = launch_ce_rows<bpcu_b16>(d, a, c, per, chk.bad(), &e); break;
    default: break;
    }
    if (!fast && a.rows > 0)
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

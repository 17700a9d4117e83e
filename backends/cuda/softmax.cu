/* SOFTMAX / LOG_SOFTMAX over the last axis, row-parallel.
 *
 * The formula is the binary backend's (backends/kernels/softmax.c): m = the
 * row's max (NaN if the row has a NaN, which poisons the row as the naive
 * formula would), s = sum of exp(x - m); softmax stores exp(x - m) * (1/s),
 * log_softmax (x - m) - log(s), each computed in double and rounded once to
 * the output. exp is taken in the compute type (f32 for f16/bf16/f32: the
 * FP64 units of consumer GPUs run at 1/64 rate), the sum in double.
 *
 * Layouts: a block per row for long rows (n >= 1024), a warp per row for
 * shorter ones (max and sum reduced by shuffles, across warps through shared
 * memory), and a thread per row when consecutive rows are adjacent in memory
 * (softmax over a leading axis: loads coalesce across rows). A long
 * contiguous row that fits the shared memory a block may opt in to (227
 * KiB on an H100: 58k f32 elements, a (4096, 32000) vocabulary softmax
 * included) is read from device memory once, in 16-byte packs, and kept
 * there (bpcu_k_softmax_smem); a longer one is read twice: once for its
 * max and sum together (online: the sum is rescaled when the max grows),
 * once to store (bpcu_k_softmax_online). The warp layout reads a row three
 * times (max, sum, store); the second and third reads come from cache. */
#include <math.h>
#include <string.h>

#include "elem_kernels.h"

typedef struct bpcu_sm_args {
    int64_t rows, n, sx, so;
    int32_t lead;                  /* leading (row) axes */
    int64_t shape[BP_MAX_RANK], xstr[BP_MAX_RANK], ostr[BP_MAX_RANK];
    bool log_;
} bpcu_sm_args;

static __device__ __forceinline__ void row_pos(const bpcu_sm_args &a, int64_t r, int64_t *xo,
                                               int64_t *oo)
{
    int64_t x = 0, y = 0;
    for (int32_t k = a.lead - 1; k >= 0; k--) {
        int64_t c = r % a.shape[k];
        r /= a.shape[k];
        x += c * a.xstr[k];
        y += c * a.ostr[k];
    }
    *xo = x, *oo = y;
}

/* All-reduce of one double over a team: the warp (BLOCK false) or the
 * block. MAX: the larger (NaN is carried apart); else the sum. */
template <bool BLOCK, bool MAX> static __device__ double team(double v)
{
    for (int by = 16; by > 0; by >>= 1) {
        double o = __shfl_xor_sync(0xffffffffu, v, by);
        v = MAX ? (o > v ? o : v) : v + o;
    }
    if (!BLOCK)
        return v;
    __shared__ double part[32];
    int nw = (blockDim.x + 31) >> 5;
    __syncthreads(); /* part may still be read from the previous call */
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads();
    v = part[0];
    for (int w = 1; w < nw; w++)
        v = MAX ? (part[w] > v ? part[w] : v) : v + part[w];
    return v;
}

/* One row, by the threads of a team (lane t of nt). */
template <class S, bool BLOCK>
static __device__ void row(const bpcu_sm_args &a, const S *px, S *po, int t, int nt)
{
    typedef bpcu_ft<S> F;
    double m = -INFINITY, nan = 0;
    for (int64_t i = t; i < a.n; i += nt) {
        double e = (double)F::ld(px[i * a.sx]);
        m = e > m ? e : m;
        nan = e != e ? 1 : nan;
    }
    m = team<BLOCK, true>(m);
    if (team<BLOCK, true>(nan) != 0)
        m = NAN;
    double s = 0;
    for (int64_t i = t; i < a.n; i += nt)
        s += bpcu_exp_c<S>((double)F::ld(px[i * a.sx]) - m);
    s = team<BLOCK, false>(s);
    if (a.log_) {
        double add = -log(s);
        for (int64_t i = t; i < a.n; i += nt)
            po[i * a.so] = F::std_(((double)F::ld(px[i * a.sx]) - m) * 1.0 + add);
    } else {
        double mul = 1.0 / s;
        for (int64_t i = t; i < a.n; i += nt)
            po[i * a.so] = F::std_(bpcu_exp_c<S>((double)F::ld(px[i * a.sx]) - m) * mul);
    }
}

#define BPCU_SM_SMEM_MAX (48 * 1024) /* shared memory without opting in */

/* Contiguous rows that fit in shared memory (softmax over a model's last
 * axis, the usual case): a block per row keeps the row, as the compute
 * type, in shared memory, and then exp(x - m) in place of it, so the row is
 * read from device memory once (in packs of V when its address allows),
 * written once, and exp is taken once per element. Each thread reads back
 * only the elements it wrote, so the team's barriers are the only ones
 * needed. The arithmetic is row()'s, value for value. On an H100, 8192 x
 * 8192 f32 ran at 0.38 of a device-to-device copy's bandwidth with three
 * reads and two exps per element, 0.62 with the row in shared memory. */
template <class S> __global__ void bpcu_k_softmax_smem(bpcu_sm_args a, const S *x, S *out,
                                                       bool vec)
{
    typedef bpcu_ft<S> F;
    typedef typename F::C C;
    constexpr int V = 16 / sizeof(S);
    extern __shared__ __align__(16) unsigned char bpcu_sm_raw[];
    C *v = (C *)bpcu_sm_raw;
    int64_t xo, oo;
    row_pos(a, blockIdx.x, &xo, &oo);
    const S *px = x + xo;
    S *po = out + oo;
    C mc = -INFINITY;
    bool nanc = false;
    int64_t done = 0;
    if (vec) { /* the row's packs: element i of pack p is p V + i */
        const int64_t np = a.n / V;
#pragma unroll 4
        for (int64_t p = threadIdx.x; p < np; p += blockDim.x) {
            const bpcu_pack<S, V> pk = bpcu_pack<S, V>::load(px + p * V);
#pragma unroll
            for (int k = 0; k < V; k++) {
                const C c = (C)F::ld(pk.v[k]);
                v[p * V + k] = c;
                mc = c > mc ? c : mc;
                nanc = nanc || c != c;
            }
        }
        done = np * V;
    }
    for (int64_t i = done + threadIdx.x; i < a.n; i += blockDim.x) {
        const C c = (C)F::ld(px[i]);
        v[i] = c;
        mc = c > mc ? c : mc;
        nanc = nanc || c != c;
    }
    /* the max in C is the max in double: every C is exact in double */
    double m = team<true, true>((double)mc);
    if (team<true, true>(nanc ? 1.0 : 0.0) != 0)
        m = NAN;
    /* The threads' elements are the same in both loops: pack elements, then
     * the tail (vec), or the plain strided ones. */
    double s = 0;
    if (vec) {
        const int64_t np = a.n / V;
        for (int64_t p = threadIdx.x; p < np; p += blockDim.x)
#pragma unroll
            for (int k = 0; k < V; k++) {
                const double ex = bpcu_exp_c<S>((double)v[p * V + k] - m);
                if (!a.log_)
                    v[p * V + k] = (C)ex; /* exact: the exp was taken in C */
                s += ex;
            }
    }
    for (int64_t i = done + threadIdx.x; i < a.n; i += blockDim.x) {
        const double ex = bpcu_exp_c<S>((double)v[i] - m);
        if (!a.log_)
            v[i] = (C)ex;
        s += ex;
    }
    s = team<true, false>(s);
    const double add = -log(s), mul = 1.0 / s;
    if (vec) {
        const int64_t np = a.n / V;
        for (int64_t p = threadIdx.x; p < np; p += blockDim.x) {
            bpcu_pack<S, V> pk;
#pragma unroll
            for (int k = 0; k < V; k++) {
                const double c = (double)v[p * V + k];
                pk.v[k] = F::std_(a.log_ ? (c - m) * 1.0 + add : c * mul);
            }
            pk.store(po + p * V);
        }
    }
    for (int64_t i = done + threadIdx.x; i < a.n; i += blockDim.x) {
        const double c = (double)v[i];
        po[i] = F::std_(a.log_ ? (c - m) * 1.0 + add : c * mul);
    }
}

/* The online max and sum of a team: (m, s) with s the sum of exp(x - m)
 * over the elements seen (s = 0, m = -inf: none finite yet). Merging two
 * rescales the one with the smaller max, in double. */
static __device__ __forceinline__ void ms_merge(double &m, double &s, double m2, double s2)
{
    if (s2 == 0)
        return;
    if (s == 0) {
        m = m2, s = s2;
        return;
    }
    if (m2 > m) {
        s = s * exp(m - m2) + s2;
        m = m2;
    } else {
        s += s2 * exp(m2 - m);
    }
}

template <bool BLOCK> static __device__ void team_ms(double &m, double &s)
{
    for (int by = 16; by > 0; by >>= 1) {
        const double m2 = __shfl_xor_sync(0xffffffffu, m, by);
        const double s2 = __shfl_xor_sync(0xffffffffu, s, by);
        ms_merge(m, s, m2, s2);
    }
    if (!BLOCK)
        return;
    __shared__ double pm[32], ps[32];
    const int nw = (blockDim.x + 31) >> 5;
    __syncthreads();
    if ((threadIdx.x & 31) == 0)
        pm[threadIdx.x >> 5] = m, ps[threadIdx.x >> 5] = s;
    __syncthreads();
    m = pm[0], s = ps[0];
    for (int w = 1; w < nw; w++)
        ms_merge(m, s, pm[w], ps[w]);
}

/* Rows too long for shared memory: one read for the max and the sum
 * together, each thread's sum rescaled (in double) when its max grows,
 * the team's merged the same way; then one read to store, as row(). The
 * max and the NaN rule are row()'s; only the sum's rounding differs (the
 * rescaling factors), within the tolerance's K eps. A row whose max is
 * +-inf gets a NaN sum, as the two-pass formula's exp(inf - inf) gives. */
template <class S> __global__ void bpcu_k_softmax_online(bpcu_sm_args a, const S *x, S *out)
{
    typedef bpcu_ft<S> F;
    int64_t xo, oo;
    row_pos(a, blockIdx.x, &xo, &oo);
    const S *px = x + xo;
    S *po = out + oo;
    double m = -INFINITY, s = 0, nan = 0;
    for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
        const double e = (double)F::ld(px[i * a.sx]);
        if (e != e) {
            nan = 1;
        } else if (e > m) {
            s = (s == 0 ? 0.0 : s * exp(m - e)) + 1.0;
            m = e;
        } else if (e > -INFINITY) {
            s += bpcu_exp_c<S>(e - m);
        }
    }
    team_ms<true>(m, s);
    if (team<true, true>(nan) != 0)
        m = NAN;
    if (m == INFINITY || m == -INFINITY)
        s = NAN;
    const double add = -log(s), mul = 1.0 / s;
    for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
        const double d = (double)F::ld(px[i * a.sx]) - m;
        po[i * a.so] = F::std_(a.log_ ? d * 1.0 + add : bpcu_exp_c<S>(d) * mul);
    }
}

template <class S> __global__ void bpcu_k_softmax_warp(bpcu_sm_args a, const S *x, S *out)
{
    int64_t r = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (r >= a.rows)
        return; /* whole warps only */
    int64_t xo, oo;
    row_pos(a, r, &xo, &oo);
    row<S, false>(a, x + xo, out + oo, threadIdx.x & 31, 32);
}

/* A thread per row, serially (the team of one needs no shuffles). */
template <class S> __global__ void bpcu_k_softmax_thread(bpcu_sm_args a, const S *x, S *out)
{
    typedef bpcu_ft<S> F;
    BPCU_FOR(r, a.rows) {
        int64_t xo, oo;
        row_pos(a, r, &xo, &oo);
        const S *px = x + xo;
        S *po = out + oo;
        double m = -INFINITY, s = 0;
        bool nan = false;
        for (int64_t i = 0; i < a.n; i++) {
            double e = (double)F::ld(px[i * a.sx]);
            m = e > m ? e : m;
            nan |= e != e;
        }
        if (nan)
            m = NAN;
        for (int64_t i = 0; i < a.n; i++)
            s += bpcu_exp_c<S>((double)F::ld(px[i * a.sx]) - m);
        double add = -log(s), mul = 1.0 / s;
        for (int64_t i = 0; i < a.n; i++) {
            double d = (double)F::ld(px[i * a.sx]) - m;
            po[i * a.so] = F::std_(a.log_ ? d * 1.0 + add : bpcu_exp_c<S>(d) * mul);
        }
    }
}

template <class S>
static cudaError_t launch(bpcu_device *d, const bpcu_sm_args &a, const char *x, char *out)
{
    const S *xs = (const S *)x;
    S *os = (S *)out;
    int64_t inner = a.lead > 0 ? a.xstr[a.lead - 1] : 0;
    bool adjacent_rows = a.rows > 1 && (inner == 1 || inner == -1) && a.sx != 1;
    if (adjacent_rows)
        return bpcu_launch(d->stream, bpcu_blocks(a.rows), BPCU_THREADS, 0,
                           bpcu_k_softmax_thread<S>, a, xs, os);
    if (a.n < 1024 || a.rows > 0x7fffffff)
        return bpcu_launch(d->stream, (unsigned)((a.rows + 7) / 8), 256, 0,
                           bpcu_k_softmax_warp<S>, a, xs, os);
    /* shared memory past 48 KiB is opted in to; 1 KiB stays for the
     * kernels' own arrays */
    const size_t smem = (size_t)a.n * sizeof(typename bpcu_ft<S>::C);
    if (a.sx == 1 && a.so == 1 && smem + 1024 <= (size_t)d->smem_optin) {
        cudaError_t e = cudaSuccess;
        if (smem > BPCU_SM_SMEM_MAX)
            e = cudaFuncSetAttribute(bpcu_k_softmax_smem<S>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != cudaSuccess)
            return e;
        /* a block per SM or two for the longest rows: more threads to keep
         * the loads in flight */
        const unsigned threads = smem <= BPCU_SM_SMEM_MAX ? 256 : smem <= 2 * BPCU_SM_SMEM_MAX ? 512 : 1024;
        constexpr int V = 16 / sizeof(S);
        bool vec = (uintptr_t)x % 16 == 0 && (uintptr_t)out % 16 == 0; /* every row's start too */
        for (int32_t k = 0; k < a.lead; k++)
            vec = vec && a.xstr[k] % V == 0 && a.ostr[k] % V == 0;
        return bpcu_launch(d->stream, (unsigned)a.rows, threads, smem, bpcu_k_softmax_smem<S>, a,
                           xs, os, vec);
    }
    return bpcu_launch(d->stream, (unsigned)a.rows, 512, 0, bpcu_k_softmax_online<S>, a, xs, os);
}

bp_status bpcu_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, bp_op_name(op), out, {x});
    if (in.status != BP_OK)
        return in.status;
    if (bpcu_numel(x) == 0)
        return BP_OK;
    if (!bp_dtype_is_float(x->dtype))
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s not implemented for %s",
                         bp_op_name(op), bp_dtype_name(x->dtype));
    bpcu_sm_args a;
    memset(&a, 0, sizeof a);
    int32_t r = x->rank;
    a.n = r > 0 ? x->shape[r - 1] : 1;
    a.sx = r > 0 ? x->strides[r - 1] : 0;
    a.so = r > 0 ? out->strides[r - 1] : 0;
    a.lead = r > 0 ? r - 1 : 0;
    a.rows = 1;
    a.log_ = op == BP_OP_LOG_SOFTMAX;
    for (int32_t k = 0; k < a.lead; k++) {
        a.shape[k] = x->shape[k], a.xstr[k] = x->strides[k], a.ostr[k] = out->strides[k];
        a.rows *= x->shape[k];
    }
    cudaError_t e = cudaSuccess;
    BPCU_DISPATCH_FLOAT(x->dtype, e = launch<T>(d, a, bpcu_ptr(x), bpcu_ptr(out)));
    return bpcu_launched(d, e, "softmax kernel");
}

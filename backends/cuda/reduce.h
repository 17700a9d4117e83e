/* The reduction machinery shared by every reduction of reduce.cu (the ops
 * of ABI 1.0 and the later ones): reduce.cu's opening comment describes it.
 * A policy R supplies the arithmetic:
 *
 *   typedef ... E;                                  the storage type read
 *   static bpcu_acc identity(bp_op);                an empty accumulator
 *   static void fold(args, acc, p, first, end, step) fold elements first, first
 *                                                   + step, ... < end (red_off)
 *   static void merge(bp_op, acc &a, const acc &b)  b covers other indices
 *   static void store(args, acc, char *p)           the result, into out's dtype
 *
 * and bpcu_red_run<R> plans, launches and frees. The kernels are templates
 * here, so each file instantiates those of its own policies only. */
#ifndef BPCU_REDUCE_H
#define BPCU_REDUCE_H

#include <math.h>
#include <string.h>

#include "bpcu.h"
#include "elem.h"

typedef struct bpcu_red_args {
    int64_t nout;                  /* output elements */
    int32_t keep;                  /* out's rank */
    int64_t oshape[BP_MAX_RANK], ostr[BP_MAX_RANK], xkstr[BP_MAX_RANK];
    int32_t rrank;                 /* collapsed reduced axes */
    int64_t rn;                    /* reduced elements per output */
    int64_t rshape[BP_MAX_RANK], rstr[BP_MAX_RANK];
    int64_t split;                 /* blocks (column segments) per output; 1: none */
    int64_t seg;                   /* reduced elements per block or segment */
    bp_op op;
    bp_dtype odt;
    double param;                  /* REDUCE_VAR / REDUCE_STD: the correction */
    int32_t vec;                   /* rows and warps: fold 16-byte packs (bpcu_red_packs) */
} bpcu_red_args;

/* Policies that can fold 16-byte packs of a contiguous run say so here and
 * have fold_packs(args, acc, p, first, end, t, nt): the elements [first,
 * end) of p, thread t of nt taking packs t, t + nt, ... then the tail; p +
 * first aligned to 16 bytes. */
template <class R> struct bpcu_red_packs {
    static constexpr bool value = false;
};

/* Policies whose merge of some ops reads only an accumulator's v and flags
 * say which here (of(op) true): the merges across threads then move those
 * two fields alone (3 shuffles a step rather than 11). */
template <class R> struct bpcu_red_light {
    static __device__ __forceinline__ bool of(bp_op) { return false; }
};

/* One output's running state. */
typedef struct bpcu_acc {
    double v;      /* sum, product, extreme, ARG* value, LOGSUMEXP running max */
    double s;      /* LOGSUMEXP: sum of exp(x - v) */
    uint64_t u;    /* integer sum / product bits */
    int64_t m;     /* integer extreme or ARG* value */
    int64_t idx;   /* ARG*: index of the winner; -1 before the first element */
    int flags;     /* ACC_NAN: a NaN was seen; ACC_PINF: a +inf (LOGSUMEXP) */
} bpcu_acc;
#define ACC_NAN 1
#define ACC_PINF 2

/* Element offset (in elements) of reduced index j, row-major. */
static __device__ __forceinline__ int64_t red_off(const bpcu_red_args &a, int64_t j)
{
    if (a.rrank == 1)
        return j * a.rstr[0];
    int64_t off = 0;
    for (int32_t k = a.rrank - 1; k >= 0; k--) {
        off += (j % a.rshape[k]) * a.rstr[k];
        j /= a.rshape[k];
    }
    return off;
}

/* Offsets of output o in x (its first reduced element) and in out. */
static __device__ __forceinline__ void out_pos(const bpcu_red_args &a, int64_t o, int64_t *xo,
                                               int64_t *oo)
{
    int64_t x = 0, y = 0;
    for (int32_t k = a.keep - 1; k >= 0; k--) {
        int64_t c = o % a.oshape[k];
        o /= a.oshape[k];
        x += c * a.xkstr[k];
        y += c * a.ostr[k];
    }
    *xo = x, *oo = y;
}

/* ---- merging across threads ----------------------------------------------------------- */

static __device__ __forceinline__ bpcu_acc shfl_down(const bpcu_acc &a, int by)
{
    bpcu_acc b;
    const unsigned all = 0xffffffffu;
    b.v = __shfl_down_sync(all, a.v, by);
    b.s = __shfl_down_sync(all, a.s, by);
    b.u = __shfl_down_sync(all, (unsigned long long)a.u, by);
    b.m = __shfl_down_sync(all, (long long)a.m, by);
    b.idx = __shfl_down_sync(all, (long long)a.idx, by);
    b.flags = __shfl_down_sync(all, a.flags, by);
    return b;
}

/* The whole warp's accumulators merged into lane 0's. */
template <class R> static __device__ bpcu_acc warp_merge(bp_op op, bpcu_acc a)
{
    if (bpcu_red_light<R>::of(op)) { /* the merge reads b.v and b.flags only */
        const unsigned all = 0xffffffffu;
        for (int by = 16; by > 0; by >>= 1) {
            bpcu_acc b = a;
            b.v = __shfl_down_sync(all, a.v, by);
            b.flags = __shfl_down_sync(all, a.flags, by);
            R::merge(op, a, b);
        }
        return a;
    }
    for (int by = 16; by > 0; by >>= 1) {
        bpcu_acc b = shfl_down(a, by);
        R::merge(op, a, b);
    }
    return a;
}

/* The whole (1-D) block's accumulators merged into thread 0's. */
template <class R> static __device__ bpcu_acc block_merge(bp_op op, bpcu_acc a)
{
    __shared__ bpcu_acc warps[32];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    a = warp_merge<R>(op, a);
    if (lane == 0)
        warps[w] = a;
    __syncthreads();
    if (w == 0) {
        a = lane < nw ? warps[lane] : R::identity(op);
        a = warp_merge<R>(op, a);
    }
    return a;
}

/* Store output o's result, or block part's partial when outputs are split. */
template <class R>
static __device__ void finish(const bpcu_red_args &g, int64_t o, int64_t part, const bpcu_acc &a,
                              char *out, bpcu_acc *partials)
{
    if (g.split > 1) {
        partials[o * g.split + part] = a;
        return;
    }
    int64_t xo, oo;
    out_pos(g, o, &xo, &oo);
    R::store(g, a, out + oo * (int64_t)bp_dtype_size(g.odt));
}

/* ---- the kernels ----------------------------------------------------------------------- */

/* rows: block b reduces part b % split of output b / split */
template <class R>
__global__ void bpcu_k_red_rows(bpcu_red_args g, const typename R::E *x, char *out,
                                bpcu_acc *partials)
{
    int64_t o = blockIdx.x / g.split, part = blockIdx.x % g.split;
    int64_t xo, oo, first = part * g.seg;
    int64_t end = first + g.seg < g.rn ? first + g.seg : g.rn;
    out_pos(g, o, &xo, &oo);
    bpcu_acc a = R::identity(g.op);
    if constexpr (bpcu_red_packs<R>::value) {
        if (g.vec)
            R::fold_packs(g, a, x + xo, first, end, threadIdx.x, blockDim.x);
        else
            R::fold(g, a, x + xo, first + threadIdx.x, end, blockDim.x);
    } else {
        R::fold(g, a, x + xo, first + threadIdx.x, end, blockDim.x);
    }
    a = block_merge<R>(g.op, a);
    if (threadIdx.x == 0)
        finish<R>(g, o, part, a, out, partials);
}

/* warps: warp w of block b reduces output b * warps_per_block + w */
template <class R>
__global__ void bpcu_k_red_warps(bpcu_red_args g, const typename R::E *x, char *out)
{
    int64_t o = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    int lane = threadIdx.x & 31;
    if (o >= g.nout)
        return; /* whole warps only: no shuffle is left half-done */
    int64_t xo, oo;
    out_pos(g, o, &xo, &oo);
    bpcu_acc a = R::identity(g.op);
    if constexpr (bpcu_red_packs<R>::value) {
        if (g.vec)
            R::fold_packs(g, a, x + xo, 0, g.rn, lane, 32);
        else
            R::fold(g, a, x + xo, lane, g.rn, 32);
    } else {
        R::fold(g, a, x + xo, lane, g.rn, 32);
    }
    a = warp_merge<R>(g.op, a);
    if (lane == 0)
        R::store(g, a, out + oo * (int64_t)bp_dtype_size(g.odt));
}

/* columns: blockDim (32, 8); x picks the output, y strides within segment
 * blockIdx.y of its run */
template <class R>
__global__ void bpcu_k_red_cols(bpcu_red_args g, const typename R::E *x, char *out,
                                bpcu_acc *partials)
{
    __shared__ bpcu_acc part[8][32];
    int64_t o = (int64_t)blockIdx.x * 32 + threadIdx.x, seg = blockIdx.y;
    bpcu_acc a = R::identity(g.op);
    if (o < g.nout) {
        int64_t xo, oo, first = seg * g.seg;
        int64_t end = first + g.seg < g.rn ? first + g.seg : g.rn;
        out_pos(g, o, &xo, &oo);
        R::fold(g, a, x + xo, first + threadIdx.y, end, 8);
    }
    part[threadIdx.y][threadIdx.x] = a;
    __syncthreads();
    if (threadIdx.y == 0 && o < g.nout) {
        for (int k = 1; k < 8; k++)
            R::merge(g.op, a, part[k][threadIdx.x]);
        finish<R>(g, o, seg, a, out, partials);
    }
}

/* the partials of output blockIdx.x, merged by the block's threads. Each
 * merge covers other indices (ARG* compares them), so the order is free.
 * One thread merging an output's partials in turn waited on each load: on
 * an H100 that tail kept a full f32 sum of 8192 x 8192 at 0.56 of the copy
 * bandwidth. */
template <class R>
__global__ void bpcu_k_red_finish(bpcu_red_args g, const bpcu_acc *partials, char *out)
{
    int64_t o = blockIdx.x;
    bpcu_acc a = R::identity(g.op);
    for (int64_t k = threadIdx.x; k < g.split; k += blockDim.x)
        R::merge(g.op, a, partials[o * g.split + k]);
    a = block_merge<R>(g.op, a);
    if (threadIdx.x == 0) {
        int64_t xo, oo;
        out_pos(g, o, &xo, &oo);
        R::store(g, a, out + oo * (int64_t)bp_dtype_size(g.odt));
    }
}

/* ---- planning and launching ------------------------------------------------------------ */

enum { RED_ROWS, RED_WARPS, RED_COLS };

static inline int64_t bpcu_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The layout and the split for g (sets g->split and g->seg): reduce.cu. */
int bpcu_red_plan(bpcu_red_args *g);

/* The reduced axes of x (its last n_reduce), collapsed, and out's
 * positions, into g (zeroed first): reduce.cu. */
void bpcu_red_describe(const bp_view *x, int32_t n_reduce, const bp_view *out, bpcu_red_args *g);

template <class R>
static cudaError_t bpcu_red_launch(bpcu_device *d, int how, const bpcu_red_args &g,
                                   const char *x, char *out, bpcu_acc *partials)
{
    const typename R::E *xe = (const typename R::E *)x;
    cudaError_t e;
    switch (how) {
    case RED_ROWS:
        e = bpcu_launch(d->stream, (unsigned)(g.nout * g.split), 256, 0, bpcu_k_red_rows<R>, g,
                        xe, out, partials);
        break;
    case RED_WARPS:
        e = bpcu_launch(d->stream, (unsigned)bpcu_ceil_div(g.nout, 8), 256, 0,
                        bpcu_k_red_warps<R>, g, xe, out);
        break;
    default:
        e = bpcu_launch(d->stream, dim3((unsigned)bpcu_ceil_div(g.nout, 32), (unsigned)g.split),
                        dim3(32, 8), 0, bpcu_k_red_cols<R>, g, xe, out, partials);
        break;
    }
    if (e == cudaSuccess && g.split > 1)
        e = bpcu_launch(d->stream, (unsigned)g.nout, g.split >= 256 ? 256 : 32, 0,
                        bpcu_k_red_finish<R>, g, (const bpcu_acc *)partials, out);
    return e;
}

/* Reduce x's last n_reduce axes into out with policy R (g from
 * bpcu_red_describe, with op, odt and param set): plans, launches and frees
 * its scratch. */
template <class R>
static bp_status bpcu_red_run(bpcu_device *d, bpcu_red_args g, const bp_view *x, const bp_view *out)
{
    if (g.nout == 0)
        return BP_OK;
    int how = bpcu_red_plan(&g);
    if constexpr (bpcu_red_packs<R>::value) {
        /* contiguous runs whose starts (and split points) are 16-byte aligned */
        const int64_t V = 16 / (int64_t)sizeof(typename R::E);
        bool vec = how != RED_COLS && g.rrank == 1 && g.rstr[0] == 1 && g.rn >= 2 * V &&
                   (uintptr_t)bpcu_ptr(x) % 16 == 0;
        for (int32_t k = 0; vec && k < g.keep; k++)
            vec = g.xkstr[k] % V == 0;
        if (vec && g.split > 1) {
            g.seg = bpcu_ceil_div(g.seg, V) * V;
            g.split = bpcu_ceil_div(g.rn, g.seg);
        }
        g.vec = vec;
    }
    bpcu_acc *partials = NULL;
    if (g.split > 1) {
        bp_status st = bpcu_scratch(d, (size_t)(g.nout * g.split) * sizeof(bpcu_acc),
                                    (void **)&partials);
        if (st != BP_OK)
            return st;
    }
    cudaError_t e = bpcu_red_launch<R>(d, how, g, bpcu_ptr(x), bpcu_ptr(out), partials);
    bpcu_scratch_free(d, partials);
    return bpcu_launched(d, e, "reduce kernel");
}

#endif

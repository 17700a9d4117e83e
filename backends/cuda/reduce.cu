/* REDUCE over the trailing n_reduce axes, in parallel.
 *
 * The semantics are the binary backend's (backends/binary/reduce.c): floats
 * accumulate in double, integers in 64 bits (wrapping); MAX/MIN give NaN if
 * any element is NaN; ARGMAX/ARGMIN give the first index on ties and the
 * first NaN wins; LOGSUMEXP is NaN with a NaN, +inf with a +inf, else
 * max + log(sum exp(x - max)) (-inf for none or all -inf); an empty MEAN is
 * NaN. Exponentials of f16/bf16/f32 inputs are taken in f32 (expf: the FP64
 * units of consumer GPUs run at 1/64 rate); the sum is still in double.
 *
 * Each output's reduced elements (row-major index j in [0, rn)) are split
 * among threads. A thread folds its elements into an accumulator (bpcu_acc);
 * accumulators merge by warp shuffles, then across the block's warps through
 * shared memory, then, when several blocks share an output, in a second
 * kernel over per-block partials. The merge is associative and ARG* compares
 * indices, so the split changes nothing for ARG*, MAX/MIN and integers, and
 * only the rounding of float sums, products and LOGSUMEXP (the tolerance
 * file's norm bounds). Three layouts:
 *   rows     a block (or several) per output: long reduced runs;
 *   warps    a warp per output: runs of 32 .. 2047 elements;
 *   columns  a thread per output, 8 threads splitting its run, and blocks
 *            splitting it further: outputs adjacent in memory (reducing a
 *            leading axis) or very short runs, so loads coalesce across
 *            outputs. */
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
} bpcu_red_args;

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

/* ---- floats -------------------------------------------------------------------------- */

template <class S> struct red_float {
    typedef S E;
    static __device__ bpcu_acc identity(bp_op op)
    {
        bpcu_acc a = {0, 0, 0, 0, -1, 0};
        if (op == BP_OP_PROD)
            a.v = 1;
        else if (op == BP_OP_MAX || op == BP_OP_LOGSUMEXP)
            a.v = -INFINITY;
        else if (op == BP_OP_MIN)
            a.v = INFINITY;
        return a;
    }
    /* fold elements first, first + step, ... < end of p (offsets red_off) */
    static __device__ void fold(const bpcu_red_args &g, bpcu_acc &a, const S *p, int64_t first,
                                int64_t end, int64_t step)
    {
#define RED_LOOP(...)                                                                   \
    for (int64_t j = first; j < end; j += step) {                                       \
        double e = (double)bpcu_ft<S>::ld(p[red_off(g, j)]);                            \
        __VA_ARGS__;                                                                    \
    }
        if ((g.op == BP_OP_SUM || g.op == BP_OP_MEAN) && g.rrank == 1) {
            /* One reduced axis: four independent sums, so that a thread has
             * four loads in flight rather than one add chain waiting on
             * each load (on an H100 a full f32 sum ran at 0.56 of the copy
             * bandwidth with one). Only the rounding order changes. */
            const int64_t st = g.rstr[0];
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            int64_t j = first;
            for (; j + 3 * step < end; j += 4 * step) {
                double e0 = (double)bpcu_ft<S>::ld(p[j * st]);
                double e1 = (double)bpcu_ft<S>::ld(p[(j + step) * st]);
                double e2 = (double)bpcu_ft<S>::ld(p[(j + 2 * step) * st]);
                double e3 = (double)bpcu_ft<S>::ld(p[(j + 3 * step) * st]);
                s0 += e0, s1 += e1, s2 += e2, s3 += e3;
            }
            for (; j < end; j += step)
                s0 += (double)bpcu_ft<S>::ld(p[j * st]);
            a.v += (s0 + s1) + (s2 + s3);
            return;
        }
        switch (g.op) {
        case BP_OP_SUM: case BP_OP_MEAN: RED_LOOP(a.v += e) break;
        case BP_OP_PROD: RED_LOOP(a.v *= e) break;
        case BP_OP_MAX: RED_LOOP(a.v = e > a.v ? e : a.v; a.flags |= e != e) break;
        case BP_OP_MIN: RED_LOOP(a.v = e < a.v ? e : a.v; a.flags |= e != e) break;
        case BP_OP_ARGMAX: case BP_OP_ARGMIN: {
            bool max = g.op == BP_OP_ARGMAX;
            for (int64_t j = first; j < end && !(a.flags & ACC_NAN); j += step) {
                double e = (double)bpcu_ft<S>::ld(p[red_off(g, j)]);
                if (e != e || a.idx < 0 || (max ? e > a.v : e < a.v))
                    a.v = e, a.idx = j, a.flags = e != e ? ACC_NAN : 0;
            }
            break;
        }
        default: /* LOGSUMEXP, online: rescale the sum when the max grows */
            RED_LOOP(if (e != e) a.flags |= ACC_NAN;
                     else if (e == INFINITY) a.flags |= ACC_PINF;
                     else if (e == -INFINITY) {}
                     else if (e > a.v) a.s = a.s * bpcu_exp_c<S>(a.v - e) + 1.0, a.v = e;
                     else a.s += bpcu_exp_c<S>(e - a.v))
            break;
        }
#undef RED_LOOP
    }
    /* b covers other indices than a (ARG* compares them) */
    static __device__ void merge(bp_op op, bpcu_acc &a, const bpcu_acc &b)
    {
        switch (op) {
        case BP_OP_SUM: case BP_OP_MEAN: a.v += b.v; break;
        case BP_OP_PROD: a.v *= b.v; break;
        case BP_OP_MAX: a.v = b.v > a.v ? b.v : a.v, a.flags |= b.flags; break;
        case BP_OP_MIN: a.v = b.v < a.v ? b.v : a.v, a.flags |= b.flags; break;
        case BP_OP_ARGMAX: case BP_OP_ARGMIN: {
            if (b.idx < 0)
                break;
            bool an = a.flags & ACC_NAN, bn = b.flags & ACC_NAN;
            bool better = op == BP_OP_ARGMAX ? b.v > a.v : b.v < a.v;
            if (a.idx < 0 || (bn && (!an || b.idx < a.idx)) ||
                (!an && !bn && (better || (b.v == a.v && b.idx < a.idx))))
                a = b;
            break;
        }
        default:
            a.flags |= b.flags;
            if (b.s == 0)
                break;
            if (a.s == 0)
                a.v = b.v, a.s = b.s;
            else if (b.v > a.v)
                a.s = a.s * bpcu_exp_c<S>(a.v - b.v) + b.s, a.v = b.v;
            else
                a.s += b.s * bpcu_exp_c<S>(b.v - a.v);
            break;
        }
    }
    static __device__ void store(const bpcu_red_args &g, const bpcu_acc &a, char *p)
    {
        double r = a.v;
        switch (g.op) {
        case BP_OP_ARGMAX: case BP_OP_ARGMIN: *(int64_t *)p = a.idx < 0 ? 0 : a.idx; return;
        case BP_OP_MEAN: r = a.v / (double)g.rn; break; /* 0/0: NaN for an empty mean */
        case BP_OP_MAX: case BP_OP_MIN: r = (a.flags & ACC_NAN) ? NAN : a.v; break;
        case BP_OP_LOGSUMEXP:
            r = (a.flags & ACC_NAN) ? NAN : (a.flags & ACC_PINF) ? INFINITY
                : a.s == 0 ? -INFINITY : a.v + log(a.s);
            break;
        default: break;
        }
        bp_elem_store_f64(g.odt, p, r);
    }
};

/* ---- integers (and bool, as 0/1 bytes) ------------------------------------------------- */

template <class T> struct red_int {
    typedef T E;
    static __device__ bpcu_acc identity(bp_op op)
    {
        bpcu_acc a = {0, 0, 0, 0, -1, 0};
        if (op == BP_OP_PROD)
            a.u = 1;
        else if (op == BP_OP_MAX)
            a.m = INT64_MIN;
        else if (op == BP_OP_MIN)
            a.m = INT64_MAX;
        return a;
    }
    static __device__ void fold(const bpcu_red_args &g, bpcu_acc &a, const T *p, int64_t first,
                                int64_t end, int64_t step)
    {
#define RED_LOOP(...)                                                                   \
    for (int64_t j = first; j < end; j += step) {                                       \
        int64_t e = (int64_t)p[red_off(g, j)];                                          \
        __VA_ARGS__;                                                                    \
    }
        switch (g.op) {
        case BP_OP_SUM: RED_LOOP(a.u += (uint64_t)e) break;
        case BP_OP_PROD: RED_LOOP(a.u *= (uint64_t)e) break;
        case BP_OP_MAX: RED_LOOP(a.m = e > a.m ? e : a.m) break;
        case BP_OP_MIN: RED_LOOP(a.m = e < a.m ? e : a.m) break;
        default: { /* ARGMAX, ARGMIN: strict comparison keeps the first */
            bool max = g.op == BP_OP_ARGMAX;
            RED_LOOP(if (a.idx < 0 || (max ? e > a.m : e < a.m)) a.m = e, a.idx = j)
            break;
        }
        }
#undef RED_LOOP
    }
    static __device__ void merge(bp_op op, bpcu_acc &a, const bpcu_acc &b)
    {
        switch (op) {
        case BP_OP_SUM: a.u += b.u; break;
        case BP_OP_PROD: a.u *= b.u; break;
        case BP_OP_MAX: a.m = b.m > a.m ? b.m : a.m; break;
        case BP_OP_MIN: a.m = b.m < a.m ? b.m : a.m; break;
        default: {
            bool better = op == BP_OP_ARGMAX ? b.m > a.m : b.m < a.m;
            if (b.idx >= 0 && (a.idx < 0 || better || (b.m == a.m && b.idx < a.idx)))
                a = b;
            break;
        }
        }
    }
    static __device__ void store(const bpcu_red_args &g, const bpcu_acc &a, char *p)
    {
        if (g.op == BP_OP_ARGMAX || g.op == BP_OP_ARGMIN)
            *(int64_t *)p = a.idx < 0 ? 0 : a.idx;
        else
            bpcu_st_wrap(g.odt, p, g.op == BP_OP_SUM || g.op == BP_OP_PROD ? a.u : (uint64_t)a.m);
    }
};

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
    R::fold(g, a, x + xo, first + threadIdx.x, end, blockDim.x);
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
    R::fold(g, a, x + xo, lane, g.rn, 32);
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

/* ---- the entry ------------------------------------------------------------------------ */

enum { RED_ROWS, RED_WARPS, RED_COLS };
#define RED_TARGET_BLOCKS 1024 /* enough blocks to fill any current GPU a few times over */

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The layout and the split for g (sets g->split and g->seg). */
static int plan(bpcu_red_args *g)
{
    int64_t inner_r = g->rrank > 0 ? g->rstr[g->rrank - 1] : 1;
    int64_t inner_o = g->keep > 0 ? g->xkstr[g->keep - 1] : 0;
    inner_r = inner_r < 0 ? -inner_r : inner_r;
    inner_o = inner_o < 0 ? -inner_o : inner_o;
    bool adjacent_outputs = g->keep > 0 && g->nout > 1 && inner_o < inner_r;
    if (adjacent_outputs || g->rn < 32) {
        int64_t bx = ceil_div(g->nout, 32);
        int64_t most = clamp64(ceil_div(g->rn, 256), 1, 65535); /* >= 32 rows per y thread */
        g->split = clamp64(ceil_div(RED_TARGET_BLOCKS, bx), 1, most);
        g->seg = ceil_div(g->rn, g->split);
        return RED_COLS;
    }
    if (g->rn < 2048) {
        g->split = 1, g->seg = g->rn;
        return RED_WARPS;
    }
    g->split = clamp64(ceil_div(RED_TARGET_BLOCKS, g->nout), 1, ceil_div(g->rn, 4096));
    g->seg = ceil_div(g->rn, g->split);
    return RED_ROWS;
}

template <class R>
static cudaError_t launch(bpcu_device *d, int how, const bpcu_red_args &g, const char *x,
                          char *out, bpcu_acc *partials)
{
    const typename R::E *xe = (const typename R::E *)x;
    cudaError_t e;
    switch (how) {
    case RED_ROWS:
        e = bpcu_launch(d->stream, (unsigned)(g.nout * g.split), 256, 0, bpcu_k_red_rows<R>, g,
                        xe, out, partials);
        break;
    case RED_WARPS:
        e = bpcu_launch(d->stream, (unsigned)ceil_div(g.nout, 8), 256, 0, bpcu_k_red_warps<R>, g,
                        xe, out);
        break;
    default:
        e = bpcu_launch(d->stream, dim3((unsigned)ceil_div(g.nout, 32), (unsigned)g.split),
                        dim3(32, 8), 0, bpcu_k_red_cols<R>, g, xe, out, partials);
        break;
    }
    if (e == cudaSuccess && g.split > 1)
        e = bpcu_launch(d->stream, (unsigned)g.nout, g.split >= 256 ? 256 : 32, 0,
                        bpcu_k_red_finish<R>, g, (const bpcu_acc *)partials, out);
    return e;
}

/* The reduced axes of x, collapsed, and out's positions, into g. */
static void describe(const bp_view *x, int32_t n_reduce, const bp_view *out, bpcu_red_args *g)
{
    memset(g, 0, sizeof *g);
    g->nout = bpcu_numel(out);
    g->keep = x->rank - n_reduce;
    for (int32_t k = 0; k < g->keep; k++)
        g->oshape[k] = out->shape[k], g->ostr[k] = out->strides[k], g->xkstr[k] = x->strides[k];
    bp_view red = *x;
    red.rank = n_reduce;
    for (int32_t k = 0; k < n_reduce; k++)
        red.shape[k] = x->shape[g->keep + k], red.strides[k] = x->strides[g->keep + k];
    const bp_view *vs[1] = {&red};
    bpcu_ix rx = bpcu_collapse(1, vs);
    g->rrank = rx.rank;
    g->rn = rx.n;
    for (int32_t k = 0; k < rx.rank; k++)
        g->rshape[k] = rx.shape[k], g->rstr[k] = rx.strides[0][k];
}

bp_status bpcu_reduce(void *dev, bp_op op, const bp_view *x, int32_t n_reduce, const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, bp_op_name(op), out, {x});
    if (in.status != BP_OK)
        return in.status;
    bpcu_red_args g;
    describe(x, n_reduce, out, &g);
    if (g.nout == 0)
        return BP_OK;
    g.op = op;
    g.odt = out->dtype;
    int how = plan(&g);
    bpcu_acc *partials = NULL;
    if (g.split > 1) {
        bp_status st = bpcu_scratch(d, (size_t)(g.nout * g.split) * sizeof(bpcu_acc),
                                    (void **)&partials);
        if (st != BP_OK)
            return st;
    }
    const char *xp = bpcu_ptr(x);
    char *op_ = bpcu_ptr(out);
    cudaError_t e = cudaSuccess;
    switch (x->dtype) {
    case BP_F32: e = launch<red_float<float>>(d, how, g, xp, op_, partials); break;
    case BP_F64: e = launch<red_float<double>>(d, how, g, xp, op_, partials); break;
    case BP_F16: e = launch<red_float<bpcu_h16>>(d, how, g, xp, op_, partials); break;
    case BP_BF16: e = launch<red_float<bpcu_b16>>(d, how, g, xp, op_, partials); break;
    case BP_BOOL: case BP_U8: e = launch<red_int<uint8_t>>(d, how, g, xp, op_, partials); break;
    case BP_I8: e = launch<red_int<int8_t>>(d, how, g, xp, op_, partials); break;
    case BP_I32: e = launch<red_int<int32_t>>(d, how, g, xp, op_, partials); break;
    case BP_I64: e = launch<red_int<int64_t>>(d, how, g, xp, op_, partials); break;
    }
    bpcu_scratch_free(d, partials);
    return bpcu_launched(d, e, "reduce kernel");
}

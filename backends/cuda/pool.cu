/* MAX_POOL and AVERAGE_POOL (ONNX MaxPool, AveragePool): a thread per
 * output element, its window walked tap by tap in kernel order (row-major)
 * as backends/kernels/nn_pool.c walks it, skipping the taps in the padding.
 *   max_pool: the first maximum wins ties and a NaN wins over any number;
 *     integers are compared exactly in int64. The winner's bytes are copied
 *     (exact). Its index, flat into x: (n C + c) D + the tap's spatial
 *     index, row-major or (p.i[15] = 1) column-major. A window with no tap
 *     inside x gives -inf (integers: the dtype's minimum) and index -1.
 *   average_pool: the sum in double over the taps inside x, divided by
 *     their count, or with count_include_pad (p.i[15]) by the taps inside x
 *     and its padding; rounded once.
 * The global pools are the core's reductions (max, mean) and never reach
 * here. Dense 2-D float views take the fast path (pool2) with the same
 * arithmetic. */
#include "nn_common.h"

/* Tap k of output o: its spatial position in i[], whether it lies inside
 * x, and (*padded) whether inside x and its padding. */
static __device__ __forceinline__ bool pool_tap(const bpcu_win &g, const int64_t *o, int64_t k,
                                                int64_t *i, bool *padded)
{
    int64_t kk[3];
    bpcu_win_coords(g.k, k, kk);
    bool in = true, pad = true;
    for (int j = 0; j < 3; j++) {
        i[j] = o[j] * g.st[j] + kk[j] * g.dl[j] - g.pb[j];
        in = in && i[j] >= 0 && i[j] < g.in[j];
        pad = pad && i[j] >= -g.pb[j] && i[j] < g.in[j] + g.pe[j];
    }
    *padded = pad;
    return in;
}

static __device__ __forceinline__ int64_t pool_xoff(const bpcu_win &g, int64_t n, int64_t c,
                                                    const int64_t *i)
{
    return n * g.xn + c * g.xc + i[0] * g.xs[0] + i[1] * g.xs[1] + i[2] * g.xs[2];
}

/* The output element e = ((n C + c) O + o) of y (and of indices). */
static __device__ __forceinline__ void pool_out(const bpcu_win &g, int64_t e, int64_t *n,
                                                int64_t *c, int64_t *o)
{
    const int64_t nout = g.out[0] * g.out[1] * g.out[2];
    bpcu_win_coords(g.out, e % nout, o);
    *c = e / nout % g.C;
    *n = e / nout / g.C;
}

static __device__ __forceinline__ int64_t pool_yoff(const bpcu_win &g, int64_t n, int64_t c,
                                                    const int64_t *o)
{
    return n * g.yn + c * g.yc + o[0] * g.ys[0] + o[1] * g.ys[1] + o[2] * g.ys[2];
}

static __device__ __forceinline__ int64_t int_min(bp_dtype dt)
{
    switch (dt) {
    case BP_U8: return 0;
    case BP_I8: return INT8_MIN;
    case BP_I32: return INT32_MIN;
    default: return INT64_MIN;
    }
}

/* indices: i64 strides of the indices' (N, C) and spatial axes, or is_ NULL. */
typedef struct pool_idx {
    int64_t *p;
    int64_t n, c, s[3];
} pool_idx;

__global__ void bpcu_k_max_pool(bpcu_win g, bpcu_nv x, bpcu_nv y, pool_idx ix, bool ints,
                                bool column_major, int64_t total)
{
    const int64_t nk = g.k[0] * g.k[1] * g.k[2], nin = g.in[0] * g.in[1] * g.in[2];
    BPCU_FOR(e, total) {
        int64_t n, c, o[3];
        pool_out(g, e, &n, &c, o);
        int64_t best = -1, best_i[3] = {0, 0, 0}; /* best: x's element offset */
        double bf = 0;
        int64_t bi = 0;
        for (int64_t k = 0; k < nk; k++) {
            int64_t i[3];
            bool padded;
            if (!pool_tap(g, o, k, i, &padded))
                continue;
            const int64_t at = pool_xoff(g, n, c, i);
            bool wins;
            if (ints) {
                const int64_t v = bp_elem_load_i64(x.dt, x.p + at * x.es);
                wins = best < 0 || v > bi;
                if (wins)
                    bi = v;
            } else {
                const double v = bpcu_nv_ld(x, at);
                wins = best < 0 || v > bf || (isnan(v) && !isnan(bf));
                if (wins)
                    bf = v;
            }
            if (wins) {
                best = at;
                best_i[0] = i[0], best_i[1] = i[1], best_i[2] = i[2];
            }
        }
        char *dst = y.p + pool_yoff(g, n, c, o) * y.es;
        if (best >= 0)
            memcpy(dst, x.p + best * x.es, (size_t)x.es); /* the element itself: exact */
        else if (ints)
            bp_elem_store_i64(y.dt, dst, int_min(y.dt));
        else
            bp_elem_store_f64(y.dt, dst, -INFINITY);
        if (ix.p) {
            int64_t flat = -1;
            if (best >= 0) {
                const int64_t sp = column_major
                                       ? (best_i[2] * g.in[1] + best_i[1]) * g.in[0] + best_i[0]
                                       : (best_i[0] * g.in[1] + best_i[1]) * g.in[2] + best_i[2];
                flat = (n * g.C + c) * nin + sp;
            }
            ix.p[n * ix.n + c * ix.c + o[0] * ix.s[0] + o[1] * ix.s[1] + o[2] * ix.s[2]] = flat;
        }
    }
}

__global__ void bpcu_k_average_pool(bpcu_win g, bpcu_nv x, bpcu_nv y, bool include_pad,
                                    int64_t total)
{
    const int64_t nk = g.k[0] * g.k[1] * g.k[2];
    BPCU_FOR(e, total) {
        int64_t n, c, o[3];
        pool_out(g, e, &n, &c, o);
        double sum = 0;
        int64_t inside = 0, padded_count = 0;
        for (int64_t k = 0; k < nk; k++) {
            int64_t i[3];
            bool padded;
            if (pool_tap(g, o, k, i, &padded)) {
                sum += bpcu_nv_ld(x, pool_xoff(g, n, c, i));
                inside++;
            }
            padded_count += padded;
        }
        bpcu_nv_st(y, pool_yoff(g, n, c, o), sum / (double)(include_pad ? padded_count : inside));
    }
}

/* ---- 2-D pools of dense float views: a thread per output, typed loads, the
 * window's loops unrolled for 2 x 2 and 3 x 3 (K; 0: any size) --------------------------
 * The same arithmetic and rules as the kernels above: max compares in the
 * compute type (exact), a NaN wins, the first maximum wins ties, and the
 * winner's bits are copied; average sums in double and divides once. */
typedef struct pool2_args {
    int64_t N, C, H, W, OH, OW;
    int32_t kh, kw, sh, sw, dh, dw, ph, pw, peh, pew; /* pe*: padding after */
    bool include_pad, column_major;
    int64_t *idx;                  /* max_pool's indices (dense), or NULL */
} pool2_args;

template <class S, int K>
__global__ void bpcu_k_pool2(pool2_args g, const S *x, S *y, bool max, int64_t total)
{
    typedef bpcu_ft<S> F;
    typedef typename F::C C;
    const int kh = K ? K : g.kh, kw = K ? K : g.kw;
    BPCU_FOR(e, total) {
        const int64_t ow = e % g.OW, oh = e / g.OW % g.OH, nc = e / (g.OW * g.OH);
        const S *px = x + nc * g.H * g.W;
        const int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
        if (max) {
            int64_t best = -1;
            C bv = 0;
#pragma unroll
            for (int i = 0; i < kh; i++) {
                const int64_t h = h0 + (int64_t)i * g.dh;
#pragma unroll
                for (int j = 0; j < kw; j++) {
                    const int64_t w = w0 + (int64_t)j * g.dw;
                    if (h < 0 || h >= g.H || w < 0 || w >= g.W)
                        continue;
                    const C v = F::ld(px[h * g.W + w]);
                    if (best < 0 || v > bv || (v != v && bv == bv))
                        bv = v, best = h * g.W + w;
                }
            }
            if (best >= 0)
                y[e] = px[best]; /* the element itself: exact */
            else
                y[e] = F::std_(-INFINITY);
            if (g.idx) {
                int64_t flat = -1;
                if (best >= 0) {
                    const int64_t bh = best / g.W, bw = best % g.W;
                    flat = nc * g.H * g.W + (g.column_major ? bw * g.H + bh : bh * g.W + bw);
                }
                g.idx[e] = flat;
            }
        } else {
            double sum = 0;
            int64_t inside = 0, padded = 0;
#pragma unroll
            for (int i = 0; i < kh; i++) {
                const int64_t h = h0 + (int64_t)i * g.dh;
#pragma unroll
                for (int j = 0; j < kw; j++) {
                    const int64_t w = w0 + (int64_t)j * g.dw;
                    if (h >= 0 && h < g.H && w >= 0 && w < g.W) {
                        sum += (double)F::ld(px[h * g.W + w]);
                        inside++;
                    }
                    padded += h >= -g.ph && h < g.H + g.peh && w >= -g.pw && w < g.W + g.pew;
                }
            }
            y[e] = F::std_(sum / (double)(g.include_pad ? padded : inside));
        }
    }
}

template <class S>
static cudaError_t launch_pool2(bpcu_device *d, const pool2_args &g, const bp_view *x,
                                const bp_view *y, bool max, int64_t total)
{
    const S *xp = (const S *)bpcu_ptr(x);
    S *yp = (S *)bpcu_ptr(y);
    const unsigned nb = bpcu_blocks(total);
    if (g.kh == 2 && g.kw == 2)
        return bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_pool2<S, 2>, g, xp, yp, max, total);
    if (g.kh == 3 && g.kw == 3)
        return bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_pool2<S, 3>, g, xp, yp, max, total);
    return bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_pool2<S, 0>, g, xp, yp, max, total);
}

/* The 2-D fast path, if the op's views allow it (*e set). */
static bool pool2(bpcu_device *d, const bpcu_opcall *c, const bpcu_win &w, int64_t total,
                  cudaError_t *e)
{
    const bp_view *x = c->in[0], *y = c->out[0];
    const bp_view *iv = c->op == BP_OP_MAX_POOL ? c->out[1] : NULL;
    const bp_dtype dt = x->dtype;
    if (x->rank != 4 || !bp_dtype_is_float(dt) || y->dtype != dt || !bpcu_conv_dense(x) ||
        !bpcu_conv_dense(y) || (iv && !bpcu_conv_dense(iv)))
        return false;
    for (int a = 1; a < 3; a++)
        if (w.k[a] > 64 || w.st[a] > (1 << 20) || w.dl[a] > (1 << 20) || w.pb[a] > (1 << 20) ||
            w.pe[a] > (1 << 20) || w.pb[a] < 0 || w.pe[a] < 0)
            return false;
    pool2_args g;
    memset(&g, 0, sizeof g);
    g.N = x->shape[0], g.C = x->shape[1], g.H = x->shape[2], g.W = x->shape[3];
    g.OH = y->shape[2], g.OW = y->shape[3];
    g.kh = (int32_t)w.k[1], g.kw = (int32_t)w.k[2];
    g.sh = (int32_t)w.st[1], g.sw = (int32_t)w.st[2];
    g.dh = (int32_t)w.dl[1], g.dw = (int32_t)w.dl[2];
    g.ph = (int32_t)w.pb[1], g.pw = (int32_t)w.pb[2];
    g.peh = (int32_t)w.pe[1], g.pew = (int32_t)w.pe[2];
    g.include_pad = c->op == BP_OP_AVERAGE_POOL && c->p.i[15] != 0;
    g.column_major = c->op == BP_OP_MAX_POOL && c->p.i[15] == 1;
    g.idx = iv ? (int64_t *)bpcu_ptr(iv) : NULL;
    const bool max = c->op == BP_OP_MAX_POOL;
    BPCU_DISPATCH_FLOAT(dt, *e = launch_pool2<T>(d, g, x, y, max, total));
    return true;
}

bp_status bpcu_nn_pool(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *y = c->out[0];
    if (x->rank < 3 || x->rank > 5 || y->rank != x->rank)
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: %s: x must be (N, C, spatial...) "
                         "with 1 to 3 spatial axes", bp_op_name(c->op));
    const int64_t total = bpcu_numel(y);
    if (total == 0)
        return BP_OK;
    bpcu_win g = bpcu_win_of(&c->p, x, y);
    bpcu_nv xv = bpcu_nv_of(x), yv = bpcu_nv_of(y);
    cudaError_t e = cudaSuccess;
    if (pool2(d, c, g, total, &e))
        return bpcu_launched(d, e, c->op == BP_OP_MAX_POOL ? "max_pool kernel" : "average_pool kernel");
    if (c->op == BP_OP_MAX_POOL) {
        pool_idx ix;
        memset(&ix, 0, sizeof ix);
        const bp_view *iv = c->out[1];
        if (iv) {
            ix.p = (int64_t *)bpcu_ptr(iv);
            ix.n = iv->strides[0], ix.c = iv->strides[1];
            for (int32_t a = 0; a < 3; a++) {
                const int32_t j = a - (3 - (x->rank - 2));
                ix.s[a] = j >= 0 ? iv->strides[2 + j] : 0;
            }
        }
        e = bpcu_launch(d->stream, bpcu_blocks(total), BPCU_THREADS, 0, bpcu_k_max_pool, g, xv,
                        yv, ix, !bp_dtype_is_float(x->dtype), c->p.i[15] == 1, total);
    } else {
        e = bpcu_launch(d->stream, bpcu_blocks(total), BPCU_THREADS, 0, bpcu_k_average_pool, g,
                        xv, yv, c->p.i[15] != 0, total);
    }
    return bpcu_launched(d, e, c->op == BP_OP_MAX_POOL ? "max_pool kernel" : "average_pool kernel");
}

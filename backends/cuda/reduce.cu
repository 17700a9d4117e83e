/* REDUCE over the trailing n_reduce axes, in parallel.
 *
 * The semantics are the binary backend's (backends/kernels/reduce.c): floats
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
#include "elem_kernels.h"
#include "reduce.h"
#include "op.h"

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
             * each load. Only the rounding order changes. */
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
    /* One element e at reduced index j, as fold's loops take it. */
    static __device__ __forceinline__ void fold1(const bpcu_red_args &g, bpcu_acc &a, double e,
                                                 int64_t j)
    {
        switch (g.op) {
        case BP_OP_SUM: case BP_OP_MEAN: a.v += e; break;
        case BP_OP_PROD: a.v *= e; break;
        case BP_OP_MAX: a.v = e > a.v ? e : a.v; a.flags |= e != e; break;
        case BP_OP_MIN: a.v = e < a.v ? e : a.v; a.flags |= e != e; break;
        case BP_OP_ARGMAX: case BP_OP_ARGMIN:
            if (!(a.flags & ACC_NAN) &&
                (e != e || a.idx < 0 || (g.op == BP_OP_ARGMAX ? e > a.v : e < a.v)))
                a.v = e, a.idx = j, a.flags = e != e ? ACC_NAN : 0;
            break;
        default:
            if (e != e) a.flags |= ACC_NAN;
            else if (e == INFINITY) a.flags |= ACC_PINF;
            else if (e == -INFINITY) {}
            else if (e > a.v) a.s = a.s * bpcu_exp_c<S>(a.v - e) + 1.0, a.v = e;
            else a.s += bpcu_exp_c<S>(e - a.v);
            break;
        }
    }
    /* fold of [first, end) in 16-byte packs (bpcu_red_packs): each thread's
     * elements in increasing index order, as fold takes them; sums in two
     * accumulators, so that a thread has its loads in flight. */
    static __device__ void fold_packs(const bpcu_red_args &g, bpcu_acc &a, const S *p,
                                      int64_t first, int64_t end, int64_t t, int64_t nt)
    {
        constexpr int V = 16 / sizeof(S);
        const int64_t np = (end - first) / V;
        const S *q = p + first;
        if (g.op == BP_OP_SUM || g.op == BP_OP_MEAN) {
            double s0 = 0, s1 = 0;
#pragma unroll 2
            for (int64_t i = t; i < np; i += nt) {
                const bpcu_pack<S, V> pk = bpcu_pack<S, V>::load(q + i * V);
#pragma unroll
                for (int k = 0; k < V; k += 2) {
                    s0 += (double)bpcu_ft<S>::ld(pk.v[k]);
                    if (k + 1 < V)
                        s1 += (double)bpcu_ft<S>::ld(pk.v[k + 1]);
                }
            }
            a.v += s0 + s1;
        } else {
            for (int64_t i = t; i < np; i += nt) {
                const bpcu_pack<S, V> pk = bpcu_pack<S, V>::load(q + i * V);
#pragma unroll
                for (int k = 0; k < V; k++)
                    fold1(g, a, (double)bpcu_ft<S>::ld(pk.v[k]), first + i * V + k);
            }
        }
        fold(g, a, p, first + np * V + t, end, nt);
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

template <class S> struct bpcu_red_packs<red_float<S>> {
    static constexpr bool value = true;
};

/* sums, products and extremes merge v and the NaN flag alone (merge above) */
template <class S> struct bpcu_red_light<red_float<S>> {
    static __device__ __forceinline__ bool of(bp_op op)
    {
        return op == BP_OP_SUM || op == BP_OP_MEAN || op == BP_OP_PROD || op == BP_OP_MAX ||
               op == BP_OP_MIN;
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

/* ---- planning ---------------------------------------------------------------------------- */

#define RED_TARGET_BLOCKS 1024 /* enough blocks to fill any current GPU a few times over */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The layout and the split for g (sets g->split and g->seg). */
int bpcu_red_plan(bpcu_red_args *g)
{
    int64_t inner_r = g->rrank > 0 ? g->rstr[g->rrank - 1] : 1;
    int64_t inner_o = g->keep > 0 ? g->xkstr[g->keep - 1] : 0;
    inner_r = inner_r < 0 ? -inner_r : inner_r;
    inner_o = inner_o < 0 ? -inner_o : inner_o;
    bool adjacent_outputs = g->keep > 0 && g->nout > 1 && inner_o < inner_r;
    if (adjacent_outputs || g->rn < 32) {
        int64_t bx = bpcu_ceil_div(g->nout, 32);
        int64_t most = clamp64(bpcu_ceil_div(g->rn, 256), 1, 65535); /* >= 32 rows per y thread */
        g->split = clamp64(bpcu_ceil_div(RED_TARGET_BLOCKS, bx), 1, most);
        g->seg = bpcu_ceil_div(g->rn, g->split);
        return RED_COLS;
    }
    if (g->rn < 2048) {
        g->split = 1, g->seg = g->rn;
        return RED_WARPS;
    }
    g->split = clamp64(bpcu_ceil_div(RED_TARGET_BLOCKS, g->nout), 1, bpcu_ceil_div(g->rn, 4096));
    g->seg = bpcu_ceil_div(g->rn, g->split);
    return RED_ROWS;
}

/* The reduced axes of x, collapsed, and out's positions, into g. */
void bpcu_red_describe(const bp_view *x, int32_t n_reduce, const bp_view *out, bpcu_red_args *g)
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

/* ---- the entry ------------------------------------------------------------------------ */

bp_status bpcu_reduce_run(bpcu_device *d, bp_op op, const bp_view *x, int32_t n_reduce,
                          const bp_view *out)
{
    bpcu_red_args g;
    bpcu_red_describe(x, n_reduce, out, &g);
    g.op = op;
    g.odt = out->dtype;
    switch (x->dtype) {
    case BP_F32: return bpcu_red_run<red_float<float>>(d, g, x, out);
    case BP_F64: return bpcu_red_run<red_float<double>>(d, g, x, out);
    case BP_F16: return bpcu_red_run<red_float<bpcu_h16>>(d, g, x, out);
    case BP_BF16: return bpcu_red_run<red_float<bpcu_b16>>(d, g, x, out);
    case BP_BOOL: case BP_U8: return bpcu_red_run<red_int<uint8_t>>(d, g, x, out);
    case BP_I8: return bpcu_red_run<red_int<int8_t>>(d, g, x, out);
    case BP_I32: return bpcu_red_run<red_int<int32_t>>(d, g, x, out);
    case BP_I64: return bpcu_red_run<red_int<int64_t>>(d, g, x, out);
    default: break; /* i16, u16, u32: not on cuda (config.h's BPCU_ABI_MINOR) */
    }
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s not implemented for %s", bp_op_name(op),
                     bp_dtype_name(x->dtype));
}


/* ---- the reductions with their own policies ----
 * The reductions of ABI 1.4 over the trailing p.i[0] axes, on reduce.h's
 * machinery (layouts, warp and block merges, partials): only the policies
 * are new.
 *
 * Floats accumulate in double: REDUCE_L1 sum |x|, REDUCE_L2 sqrt(sum x^2),
 * REDUCE_SUM_SQUARE sum x^2, REDUCE_LOG_SUM log(sum x); REDUCE_VAR and
 * REDUCE_STD by Welford's update within a thread and Chan's merge across
 * threads (count, mean, sum of squared deviations), NaN when the count
 * minus the correction (p.f[0]) is <= 0. Integers in 64 bits, wrapping.
 * REDUCE_ANY / REDUCE_ALL on bool bytes. ARGMAX_LAST / ARGMIN_LAST keep the
 * last index on ties, and the last NaN wins over any number (ONNX's
 * select_last_index, which flips the axis and takes the first). The merge
 * compares indices, so the result never depends on the split. */

static __device__ __forceinline__ bool arg_last(bp_op op)
{
    return op == BP_OP_ARGMAX_LAST || op == BP_OP_ARGMIN_LAST;
}

/* ---- floats -------------------------------------------------------------------------- */

template <class S> struct red_stat_float {
    typedef S E;
    static __device__ bpcu_acc identity(bp_op op)
    {
        bpcu_acc a = {0, 0, 0, 0, -1, 0};
        return a;
    }
    static __device__ void fold(const bpcu_red_args &g, bpcu_acc &a, const S *p, int64_t first,
                                int64_t end, int64_t step)
    {
#define RED_LOOP(...)                                                                   \
    for (int64_t j = first; j < end; j += step) {                                       \
        double e = (double)bpcu_ft<S>::ld(p[red_off(g, j)]);                            \
        __VA_ARGS__;                                                                    \
    }
        switch (g.op) {
        case BP_OP_REDUCE_L1: RED_LOOP(a.v += fabs(e)) break;
        case BP_OP_REDUCE_L2: case BP_OP_REDUCE_SUM_SQUARE: RED_LOOP(a.v += e * e) break;
        case BP_OP_REDUCE_LOG_SUM: RED_LOOP(a.v += e) break;
        case BP_OP_REDUCE_VAR: case BP_OP_REDUCE_STD: /* Welford: m count, v mean, s M2 */
            RED_LOOP(a.m += 1; double delta = e - a.v; a.v += delta / (double)a.m;
                     a.s += delta * (e - a.v))
            break;
        default: { /* ARGMAX_LAST, ARGMIN_LAST: >= keeps the later of equals */
            bool max = g.op == BP_OP_ARGMAX_LAST;
            RED_LOOP(if (e != e) a.v = e, a.idx = j, a.flags = ACC_NAN;
                     else if (!(a.flags & ACC_NAN) && (a.idx < 0 || (max ? e >= a.v : e <= a.v)))
                         a.v = e, a.idx = j)
            break;
        }
        }
#undef RED_LOOP
    }
    static __device__ void merge(bp_op op, bpcu_acc &a, const bpcu_acc &b)
    {
        switch (op) {
        case BP_OP_REDUCE_L1: case BP_OP_REDUCE_L2: case BP_OP_REDUCE_SUM_SQUARE:
        case BP_OP_REDUCE_LOG_SUM:
            a.v += b.v;
            break;
        case BP_OP_REDUCE_VAR: case BP_OP_REDUCE_STD: { /* Chan et al. */
            if (b.m == 0)
                break;
            if (a.m == 0) {
                a = b;
                break;
            }
            double na = (double)a.m, nb = (double)b.m, n = na + nb, delta = b.v - a.v;
            a.v += delta * (nb / n);
            a.s += b.s + delta * delta * (na * nb / n);
            a.m += b.m;
            break;
        }
        default: {
            if (b.idx < 0)
                break;
            bool an = a.flags & ACC_NAN, bn = b.flags & ACC_NAN;
            bool better = op == BP_OP_ARGMAX_LAST ? b.v > a.v : b.v < a.v;
            if (a.idx < 0 || (bn && (!an || b.idx > a.idx)) ||
                (!an && !bn && (better || (b.v == a.v && b.idx > a.idx))))
                a = b;
            break;
        }
        }
    }
    static __device__ void store(const bpcu_red_args &g, const bpcu_acc &a, char *p)
    {
        double r = a.v;
        switch (g.op) {
        case BP_OP_ARGMAX_LAST: case BP_OP_ARGMIN_LAST:
            *(int64_t *)p = a.idx < 0 ? 0 : a.idx;
            return;
        case BP_OP_REDUCE_L2: r = sqrt(a.v); break;
        case BP_OP_REDUCE_LOG_SUM: r = log(a.v); break;
        case BP_OP_REDUCE_VAR: case BP_OP_REDUCE_STD: {
            double n = (double)g.rn - g.param;
            r = n > 0 ? a.s / n : NAN;
            if (g.op == BP_OP_REDUCE_STD)
                r = sqrt(r);
            break;
        }
        default: break;
        }
        bp_elem_store_f64(g.odt, p, r);
    }
};

/* ---- integers, and bool (as 0/1 bytes) --------------------------------------------------- */

template <class T> struct red_stat_int {
    typedef T E;
    static __device__ bpcu_acc identity(bp_op op)
    {
        bpcu_acc a = {0, 0, 0, 0, -1, 0};
        if (op == BP_OP_REDUCE_ALL)
            a.u = 1;
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
        case BP_OP_REDUCE_L1: /* |e| wraps (|INT64_MIN| is INT64_MIN) */
            RED_LOOP(a.u += e < 0 ? (uint64_t)0 - (uint64_t)e : (uint64_t)e)
            break;
        case BP_OP_REDUCE_SUM_SQUARE: RED_LOOP(a.u += (uint64_t)e * (uint64_t)e) break;
        case BP_OP_REDUCE_ANY: RED_LOOP(a.u |= (uint64_t)(e != 0)) break;
        case BP_OP_REDUCE_ALL: RED_LOOP(a.u &= (uint64_t)(e != 0)) break;
        default: {
            bool max = g.op == BP_OP_ARGMAX_LAST;
            RED_LOOP(if (a.idx < 0 || (max ? e >= a.m : e <= a.m)) a.m = e, a.idx = j)
            break;
        }
        }
#undef RED_LOOP
    }
    static __device__ void merge(bp_op op, bpcu_acc &a, const bpcu_acc &b)
    {
        switch (op) {
        case BP_OP_REDUCE_L1: case BP_OP_REDUCE_SUM_SQUARE: a.u += b.u; break;
        case BP_OP_REDUCE_ANY: a.u |= b.u; break;
        case BP_OP_REDUCE_ALL: a.u &= b.u; break;
        default: {
            bool better = op == BP_OP_ARGMAX_LAST ? b.m > a.m : b.m < a.m;
            if (b.idx >= 0 && (a.idx < 0 || better || (b.m == a.m && b.idx > a.idx)))
                a = b;
            break;
        }
        }
    }
    static __device__ void store(const bpcu_red_args &g, const bpcu_acc &a, char *p)
    {
        if (arg_last(g.op))
            *(int64_t *)p = a.idx < 0 ? 0 : a.idx;
        else
            bpcu_st_wrap(g.odt, p, a.u);
    }
};

/* ---- the entry ------------------------------------------------------------------------ */

/* The REDUCE kind: the reductions a running accumulator folds (sum ..
 * logsumexp: bpcu_reduce_run, above) and those with their own policies. */
bp_status bpcu_op_reduce(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *out = c->out[0];
    int64_t n_reduce = c->p.i[0];
    if (n_reduce < 0 || n_reduce > x->rank || out->rank != x->rank - n_reduce)
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: %s: %lld reduced axes do not fit x "
                         "of rank %d and out of rank %d", bp_op_name(c->op), (long long)n_reduce,
                         (int)x->rank, (int)out->rank);
    switch (c->op) {
    case BP_OP_SUM: case BP_OP_PROD: case BP_OP_MEAN: case BP_OP_MAX: case BP_OP_MIN:
    case BP_OP_ARGMAX: case BP_OP_ARGMIN: case BP_OP_LOGSUMEXP:
        return bpcu_reduce_run(d, c->op, x, (int32_t)n_reduce, out);
    default: break;
    }
    bpcu_red_args g;
    bpcu_red_describe(x, (int32_t)n_reduce, out, &g);
    g.op = c->op;
    g.odt = out->dtype;
    g.param = c->p.f[0];
    switch (x->dtype) {
    case BP_F32: return bpcu_red_run<red_stat_float<float>>(d, g, x, out);
    case BP_F64: return bpcu_red_run<red_stat_float<double>>(d, g, x, out);
    case BP_F16: return bpcu_red_run<red_stat_float<bpcu_h16>>(d, g, x, out);
    case BP_BF16: return bpcu_red_run<red_stat_float<bpcu_b16>>(d, g, x, out);
    case BP_BOOL: case BP_U8: return bpcu_red_run<red_stat_int<uint8_t>>(d, g, x, out);
    case BP_I8: return bpcu_red_run<red_stat_int<int8_t>>(d, g, x, out);
    case BP_I32: return bpcu_red_run<red_stat_int<int32_t>>(d, g, x, out);
    case BP_I64: return bpcu_red_run<red_stat_int<int64_t>>(d, g, x, out);
    default: break; /* i16, u16, u32: not on cuda (config.h's BPCU_ABI_MINOR) */
    }
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s not implemented for %s",
                     bp_op_name(c->op), bp_dtype_name(x->dtype));
}

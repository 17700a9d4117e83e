/* The reductions of ABI 1.4 over the trailing p.i[0] axes, on reduce.h's
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
#include "op.h"
#include "reduce.h"

static __device__ __forceinline__ bool arg_last(bp_op op)
{
    return op == BP_OP_ARGMAX_LAST || op == BP_OP_ARGMIN_LAST;
}

/* ---- floats -------------------------------------------------------------------------- */

template <class S> struct red_more_float {
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

template <class T> struct red_more_int {
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

bp_status bpcu_more_reduce(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *out = c->out[0];
    int64_t n_reduce = c->p.i[0];
    if (n_reduce < 0 || n_reduce > x->rank || out->rank != x->rank - n_reduce)
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: %s: %lld reduced axes do not fit x "
                         "of rank %d and out of rank %d", bp_op_name(c->op), (long long)n_reduce,
                         (int)x->rank, (int)out->rank);
    bpcu_red_args g;
    bpcu_red_describe(x, (int32_t)n_reduce, out, &g);
    g.op = c->op;
    g.odt = out->dtype;
    g.param = c->p.f[0];
    switch (x->dtype) {
    case BP_F32: return bpcu_red_run<red_more_float<float>>(d, g, x, out);
    case BP_F64: return bpcu_red_run<red_more_float<double>>(d, g, x, out);
    case BP_F16: return bpcu_red_run<red_more_float<bpcu_h16>>(d, g, x, out);
    case BP_BF16: return bpcu_red_run<red_more_float<bpcu_b16>>(d, g, x, out);
    case BP_BOOL: case BP_U8: return bpcu_red_run<red_more_int<uint8_t>>(d, g, x, out);
    case BP_I8: return bpcu_red_run<red_more_int<int8_t>>(d, g, x, out);
    case BP_I32: return bpcu_red_run<red_more_int<int32_t>>(d, g, x, out);
    case BP_I64: return bpcu_red_run<red_more_int<int64_t>>(d, g, x, out);
    }
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s not implemented for %s",
                     bp_op_name(c->op), bp_dtype_name(x->dtype));
}

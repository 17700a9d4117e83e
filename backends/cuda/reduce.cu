/* Reductions over the trailing n_reduce axes.
 *
 * One thread per output element walks its elements in
 * row-major order, so a running count is the ARG* index and the rules match
 * the binary backend's (backends/binary/reduce.c, softmax.c): floats
 * accumulate in double, integers in 64 bits (wrapping), NaN propagates,
 * ARG* keeps the first on ties and a NaN wins. Correct first; a block-wide
 * tree reduction is the obvious next step for long rows (docs/cuda.md).
 * SOFTMAX / LOG_SOFTMAX: softmax.cu. */
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
} bpcu_red_args;

/* Walks the reduced axes of one output (an odometer; row-major). */
struct bpcu_odo {
    int64_t idx[BP_MAX_RANK];
    int64_t off;
    __device__ void init(const bpcu_red_args &a)
    {
        for (int32_t k = 0; k < a.rrank; k++)
            idx[k] = 0;
        off = 0;
    }
    __device__ void next(const bpcu_red_args &a)
    {
        for (int32_t k = a.rrank - 1; k >= 0; k--) {
            off += a.rstr[k];
            if (++idx[k] < a.rshape[k])
                return;
            off -= a.rstr[k] * a.rshape[k];
            idx[k] = 0;
        }
    }
};

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

/* One output's reduced elements, walked in row-major order; each returns the
 * value to store (as the binary backend's reduce.c computes it). */
template <class S> static __device__ double red_sum(const bpcu_red_args &a, const S *p)
{
    bpcu_odo w;
    w.init(a);
    double v = 0;
    for (int64_t j = 0; j < a.rn; j++, w.next(a))
        v += (double)bpcu_ft<S>::ld(p[w.off]);
    return v;
}

template <class S> static __device__ double red_prod(const bpcu_red_args &a, const S *p)
{
    bpcu_odo w;
    w.init(a);
    double v = 1;
    for (int64_t j = 0; j < a.rn; j++, w.next(a))
        v *= (double)bpcu_ft<S>::ld(p[w.off]);
    return v;
}

/* MAX / MIN: a NaN anywhere gives NaN */
template <class S> static __device__ double red_extreme(const bpcu_red_args &a, const S *p, bool max)
{
    bpcu_odo w;
    w.init(a);
    double v = max ? -INFINITY : INFINITY;
    bool nan = false;
    for (int64_t j = 0; j < a.rn; j++, w.next(a)) {
        double e = (double)bpcu_ft<S>::ld(p[w.off]);
        v = max ? (e > v ? e : v) : (e < v ? e : v);
        nan |= e != e;
    }
    return nan ? NAN : v;
}

/* ARGMAX / ARGMIN: the first index on ties; the first NaN wins */
template <class S> static __device__ int64_t red_arg(const bpcu_red_args &a, const S *p, bool max)
{
    bpcu_odo w;
    w.init(a);
    double v = 0;
    int64_t best = 0;
    bool nan = false;
    for (int64_t j = 0; j < a.rn && !nan; j++, w.next(a)) {
        double e = (double)bpcu_ft<S>::ld(p[w.off]);
        bool better = max ? e > v : e < v;
        if (j == 0 || better || e != e)
            v = e, best = j, nan = e != e;
    }
    return best;
}

/* LOGSUMEXP: the max, then the sum of exp(x - max) */
template <class S> static __device__ double red_logsumexp(const bpcu_red_args &a, const S *p)
{
    bpcu_odo w;
    w.init(a);
    double v = -INFINITY, s = 0;
    bool nan = false;
    for (int64_t j = 0; j < a.rn; j++, w.next(a)) {
        double e = (double)bpcu_ft<S>::ld(p[w.off]);
        if (e != e)
            nan = true;
        else if (e > v)
            v = e;
    }
    if (nan)
        return NAN;
    if (v == INFINITY || v == -INFINITY)
        return v;
    w.init(a);
    for (int64_t j = 0; j < a.rn; j++, w.next(a))
        s += exp((double)bpcu_ft<S>::ld(p[w.off]) - v);
    return v + log(s);
}

template <class S>
__global__ void bpcu_k_reduce_float(bpcu_red_args a, bp_op op, const S *x, char *out,
                                    bp_dtype odt)
{
    BPCU_FOR(o, a.nout) {
        int64_t xo, oo;
        out_pos(a, o, &xo, &oo);
        const S *p = x + xo;
        double v;
        switch (op) {
        case BP_OP_SUM: v = red_sum(a, p); break;
        case BP_OP_MEAN: v = red_sum(a, p) / (double)a.rn; break; /* 0/0: NaN for an empty mean */
        case BP_OP_PROD: v = red_prod(a, p); break;
        case BP_OP_MAX: case BP_OP_MIN: v = red_extreme(a, p, op == BP_OP_MAX); break;
        case BP_OP_ARGMAX: case BP_OP_ARGMIN:
            *(int64_t *)(out + oo * 8) = red_arg(a, p, op == BP_OP_ARGMAX);
            continue;
        default: v = red_logsumexp(a, p); break;
        }
        bp_elem_store_f64(odt, out + oo * (int64_t)bp_dtype_size(odt), v);
    }
}

template <class T>
__global__ void bpcu_k_reduce_int(bpcu_red_args a, bp_op op, const T *x, char *out, bp_dtype odt)
{
    BPCU_FOR(o, a.nout) {
        int64_t xo, oo;
        out_pos(a, o, &xo, &oo);
        const T *p = x + xo;
        bpcu_odo w;
        w.init(a);
        uint64_t u = op == BP_OP_PROD ? 1 : 0;
        int64_t m = op == BP_OP_MAX ? INT64_MIN : op == BP_OP_MIN ? INT64_MAX : 0, best = 0;
        for (int64_t j = 0; j < a.rn; j++, w.next(a)) {
            int64_t e = (int64_t)p[w.off];
            switch (op) {
            case BP_OP_SUM: u += (uint64_t)e; break;
            case BP_OP_PROD: u *= (uint64_t)e; break;
            case BP_OP_MAX: m = e > m ? e : m; break;
            case BP_OP_MIN: m = e < m ? e : m; break;
            default: {
                bool better = op == BP_OP_ARGMAX ? e > m : e < m;
                if (j == 0 || better)
                    m = e, best = j;
            }
            }
        }
        if (op == BP_OP_ARGMAX || op == BP_OP_ARGMIN)
            *(int64_t *)(out + oo * 8) = best;
        else
            bpcu_st_wrap(odt, out + oo * (int64_t)bp_dtype_size(odt),
                         op == BP_OP_SUM || op == BP_OP_PROD ? u : (uint64_t)m);
    }
}

bp_status bpcu_reduce(void *dev, bp_op op, const bp_view *x, int32_t n_reduce, const bp_view *out)
{
    cudaError_t e = cudaSuccess;
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, bp_op_name(op));
    if (in.status != BP_OK)
        return in.status;
    bpcu_red_args a;
    memset(&a, 0, sizeof a);
    a.nout = bpcu_numel(out);
    if (a.nout == 0)
        return BP_OK;
    a.keep = x->rank - n_reduce;
    for (int32_t k = 0; k < a.keep; k++)
        a.oshape[k] = out->shape[k], a.ostr[k] = out->strides[k], a.xkstr[k] = x->strides[k];
    /* the reduced axes, collapsed (row-major order is kept) */
    bp_view red = *x;
    red.rank = n_reduce;
    for (int32_t k = 0; k < n_reduce; k++)
        red.shape[k] = x->shape[a.keep + k], red.strides[k] = x->strides[a.keep + k];
    const bp_view *vs[1] = {&red};
    bpcu_ix rx = bpcu_collapse(1, vs);
    a.rrank = rx.rank;
    a.rn = rx.n;
    for (int32_t k = 0; k < rx.rank; k++)
        a.rshape[k] = rx.shape[k], a.rstr[k] = rx.strides[0][k];

    unsigned nb = bpcu_blocks(a.nout);
    bp_dtype dt = x->dtype;
    if (bp_dtype_is_float(dt)) {
        BPCU_DISPATCH_FLOAT(dt, (e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_reduce_float<T>,
                                    a, op, (const T *)bpcu_ptr(x), bpcu_ptr(out), out->dtype)));
    } else if (dt == BP_BOOL) {
        e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_reduce_int<uint8_t>,
            a, op, (const uint8_t *)bpcu_ptr(x), bpcu_ptr(out), out->dtype);
    } else {
        BPCU_DISPATCH_INT(dt, (e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_reduce_int<T>,
                                  a, op, (const T *)bpcu_ptr(x), bpcu_ptr(out), out->dtype)));
    }
    return bpcu_launched(d, e, "reduce kernel");
}

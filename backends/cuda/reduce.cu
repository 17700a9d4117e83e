/* Reductions over the trailing n_reduce axes, and SOFTMAX / LOG_SOFTMAX over
 * the last axis.
 *
 * One thread per output element (per row for softmax) walks its elements in
 * row-major order, so a running count is the ARG* index and the rules match
 * the binary backend's (backends/binary/reduce.c, softmax.c): floats
 * accumulate in double, integers in 64 bits (wrapping), NaN propagates,
 * ARG* keeps the first on ties and a NaN wins. Correct first; a block-wide
 * tree reduction is the obvious next step for long rows (docs/cuda.md). */
#include <math.h>
#include <string.h>

#include "bpcu.h"

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

template <class S>
__global__ void bpcu_k_reduce_float(bpcu_red_args a, bp_op op, const S *x, char *out,
                                    bp_dtype odt)
{
    typedef bpcu_ft<S> F;
    BPCU_FOR(o, a.nout) {
        int64_t xo, oo;
        out_pos(a, o, &xo, &oo);
        const S *p = x + xo;
        bpcu_odo w;
        w.init(a);
        double v = 0, s = 0;
        int64_t best = 0;
        bool nan = false, pinf = false;
        switch (op) {
        case BP_OP_SUM: case BP_OP_MEAN:
            for (int64_t j = 0; j < a.rn; j++, w.next(a))
                v += (double)F::ld(p[w.off]);
            if (op == BP_OP_MEAN)
                v = v / (double)a.rn; /* 0/0: NaN for an empty mean */
            break;
        case BP_OP_PROD:
            v = 1;
            for (int64_t j = 0; j < a.rn; j++, w.next(a))
                v *= (double)F::ld(p[w.off]);
            break;
        case BP_OP_MAX: case BP_OP_MIN:
            v = op == BP_OP_MAX ? -INFINITY : INFINITY;
            for (int64_t j = 0; j < a.rn; j++, w.next(a)) {
                double e = (double)F::ld(p[w.off]);
                v = op == BP_OP_MAX ? (e > v ? e : v) : (e < v ? e : v);
                nan |= e != e;
            }
            if (nan)
                v = NAN;
            break;
        case BP_OP_ARGMAX: case BP_OP_ARGMIN:
            for (int64_t j = 0; j < a.rn && !nan; j++, w.next(a)) {
                double e = (double)F::ld(p[w.off]);
                bool better = op == BP_OP_ARGMAX ? e > v : e < v;
                if (j == 0 || better || e != e)
                    v = e, best = j, nan = e != e;
            }
            *(int64_t *)(out + oo * 8) = best;
            continue;
        default: /* LOGSUMEXP: the max, then the sum of exp(x - max) */
            v = -INFINITY;
            for (int64_t j = 0; j < a.rn; j++, w.next(a)) {
                double e = (double)F::ld(p[w.off]);
                if (e != e)
                    nan = true;
                else if (e > v)
                    v = e;
            }
            pinf = v == INFINITY;
            if (!nan && !pinf && v != -INFINITY) {
                w.init(a);
                for (int64_t j = 0; j < a.rn; j++, w.next(a))
                    s += exp((double)F::ld(p[w.off]) - v);
                v = v + log(s);
            } else if (nan) {
                v = NAN;
            }
            break;
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
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
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
        BPCU_DISPATCH_FLOAT(dt, (bpcu_k_reduce_float<T><<<nb, BPCU_THREADS, 0, d->stream>>>(
                                    a, op, (const T *)bpcu_ptr(x), bpcu_ptr(out), out->dtype)));
    } else if (dt == BP_BOOL) {
        bpcu_k_reduce_int<uint8_t><<<nb, BPCU_THREADS, 0, d->stream>>>(
            a, op, (const uint8_t *)bpcu_ptr(x), bpcu_ptr(out), out->dtype);
    } else {
        BPCU_DISPATCH_INT(dt, (bpcu_k_reduce_int<T><<<nb, BPCU_THREADS, 0, d->stream>>>(
                                  a, op, (const T *)bpcu_ptr(x), bpcu_ptr(out), out->dtype)));
    }
    return bpcu_check_launch(d, "reduce kernel");
}

/* ---- softmax ------------------------------------------------------------------- */

typedef struct bpcu_sm_args {
    int64_t rows, n, sx, so;
    int32_t lead;                  /* leading (row) axes */
    int64_t shape[BP_MAX_RANK], xstr[BP_MAX_RANK], ostr[BP_MAX_RANK];
} bpcu_sm_args;

template <class S>
__global__ void bpcu_k_softmax(bpcu_sm_args a, bool log_, const S *x, S *out)
{
    typedef bpcu_ft<S> F;
    BPCU_FOR(r, a.rows) {
        int64_t xo = 0, oo = 0, q = r;
        for (int32_t k = a.lead - 1; k >= 0; k--) {
            int64_t c = q % a.shape[k];
            q /= a.shape[k];
            xo += c * a.xstr[k];
            oo += c * a.ostr[k];
        }
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
            m = NAN; /* poison the row, as the naive formula would */
        for (int64_t i = 0; i < a.n; i++)
            s += exp((double)F::ld(px[i * a.sx]) - m);
        if (log_) {
            double add = -log(s);
            for (int64_t i = 0; i < a.n; i++)
                po[i * a.so] = F::std_(((double)F::ld(px[i * a.sx]) - m) * 1.0 + add);
        } else {
            double mul = 1.0 / s;
            for (int64_t i = 0; i < a.n; i++)
                po[i * a.so] = F::std_((exp((double)F::ld(px[i * a.sx]) - m) - 0.0) * mul + 0.0);
        }
    }
}

bp_status bpcu_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    if (bpcu_numel(x) == 0)
        return BP_OK;
    bpcu_sm_args a;
    memset(&a, 0, sizeof a);
    int32_t r = x->rank;
    a.n = r > 0 ? x->shape[r - 1] : 1;
    a.sx = r > 0 ? x->strides[r - 1] : 0;
    a.so = r > 0 ? out->strides[r - 1] : 0;
    a.lead = r > 0 ? r - 1 : 0;
    a.rows = 1;
    for (int32_t k = 0; k < a.lead; k++) {
        a.shape[k] = x->shape[k], a.xstr[k] = x->strides[k], a.ostr[k] = out->strides[k];
        a.rows *= x->shape[k];
    }
    unsigned nb = bpcu_blocks(a.rows);
    bool log_ = op == BP_OP_LOG_SOFTMAX;
    BPCU_DISPATCH_FLOAT(x->dtype, (bpcu_k_softmax<T><<<nb, BPCU_THREADS, 0, d->stream>>>(
                                      a, log_, (const T *)bpcu_ptr(x), (T *)bpcu_ptr(out))));
    if (!bp_dtype_is_float(x->dtype))
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s not implemented for %s",
                         bp_op_name(op), bp_dtype_name(x->dtype));
    return bpcu_check_launch(d, "softmax kernel");
}

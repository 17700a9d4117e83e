/* SCATTER_ELEMENTS and SCATTER_ND (ONNX ScatterElements, ScatterND): out
 * is a copy of x with updates written at indices, combined by p.i[1]
 * (bp_scatter_reduction). Indices are checked on the device (checks.h): an
 * update through a bad index is skipped, and a BP_ERR_INDEX deferred.
 *
 * scatter_elements: in x, indices, updates (indices' shape, x's rank),
 * p.i[0] axis: update u at coordinates c goes to c with c[axis] =
 * indices[c]. scatter_nd: in x, indices (tuples of m, its last extent),
 * updates (indices' shape without the last axis, then x's axes after m):
 * update (p, t) goes to x[indices[p, 0 .. m), t].
 *
 * none: on duplicate targets the update last in row-major order wins
 * (ops.h), deterministically: a first pass keeps, per target (per target
 * tuple for scatter_nd), the largest update position with atomicMax in
 * scratch, a second writes only the winners. add, mul, max, min: each
 * update is combined into its target with a compare-and-swap loop (on the
 * aligned 32-bit word for 8- and 16-bit dtypes); integers wrap, max and min
 * keep a NaN (bp_maximum, bp_minimum). Float add and mul of f16, bf16 and
 * f32 accumulate wide, as the reference: out's values go to an f64
 * accumulator in scratch, each update is combined into it (atomicAdd,
 * or a compare-and-swap loop for mul), and one last pass rounds every
 * element once into out. (Rounding to f16 at each update put a (300, 64)
 * <- (2000, 64) product 0.044 away, normalised, against the bound of 0.039.)
 * The order of the updates to one target is the device's, so float add and
 * mul over duplicate targets may round differently from run to run (f64:
 * in the last bits of the double); max, min and integers do not. */
#include "checks.h"
#include "op.h"

/* p.i[1]: ops.h's bp_scatter_reduction (a public header, not the plugin ABI) */
enum { RED_NONE = 0, RED_ADD = 1, RED_MUL = 2, RED_MAX = 3, RED_MIN = 4 };

typedef struct bpcu_sc_args {
    bool nd;
    int32_t red;                   /* bp_scatter_reduction */
    int32_t urank;                 /* updates' rank */
    int64_t n;                     /* updates' elements */
    int64_t ushape[BP_MAX_RANK], ustr[BP_MAX_RANK];
    int64_t istr[BP_MAX_RANK];     /* indices' strides */
    int64_t ostr[BP_MAX_RANK], odim[BP_MAX_RANK];
    int64_t wstr[BP_MAX_RANK];     /* row-major strides of the winner table's axes */
    int32_t axis;                  /* scatter_elements */
    int32_t m, q1;                 /* scatter_nd: tuple size, indices' rank - 1 */
    int64_t tcount;                /* scatter_nd: updates per tuple */
} bpcu_sc_args;

/* The row-major position in out of update u's target, given its winner
 * slot w (target() computes both): for scatter_elements the slot is that
 * position; for scatter_nd the slot is the tuple's, and u's trailing
 * coordinates (u % tcount) are the position within it. */
static __device__ __forceinline__ int64_t target_pos(const bpcu_sc_args &g, int64_t u, int64_t w)
{
    return g.nd ? w * g.tcount + u % g.tcount : w;
}

/* Update u's target: its offset in out (*oo), its winner slot (*w) and the
 * position that competes for it (*wv), and the update's offset (*uo);
 * false when an index it needs is out of range. */
static __device__ bool target(const bpcu_sc_args &g, const char *idx, bool i64, int64_t u,
                              int64_t *oo, int64_t *w, int64_t *wv, int64_t *uo,
                              unsigned long long *bad)
{
    int64_t r = u, io = 0, o = 0, wi = 0, uoff = 0;
    if (!g.nd) {
        for (int32_t k = g.urank - 1; k >= 0; k--) {
            int64_t c = r % g.ushape[k];
            r /= g.ushape[k];
            uoff += c * g.ustr[k];
            io += c * g.istr[k];
            if (k != g.axis)
                o += c * g.ostr[k], wi += c * g.wstr[k];
        }
        int64_t j = bpcu_load_index(idx, i64, io);
        if (!bpcu_index_ok(&j, g.odim[g.axis], u, bad))
            return false;
        *oo = o + j * g.ostr[g.axis];
        *w = wi + j * g.wstr[g.axis];
        *wv = u;
        *uo = uoff;
        return true;
    }
    for (int32_t k = g.urank - 1; k >= 0; k--) {
        int64_t c = r % g.ushape[k];
        r /= g.ushape[k];
        uoff += c * g.ustr[k];
        if (k >= g.q1)
            o += c * g.ostr[g.m + k - g.q1];
        else
            io += c * g.istr[k];
    }
    int64_t tuple = u / g.tcount;
    bool ok = true;
    for (int32_t j = 0; j < g.m; j++) {
        int64_t v = bpcu_load_index(idx, i64, io + j * g.istr[g.q1]);
        if (bpcu_index_ok(&v, g.odim[j], tuple * g.m + j, bad))
            o += v * g.ostr[j], wi += v * g.wstr[j];
        else
            ok = false;
    }
    *oo = o, *w = wi, *wv = tuple, *uo = uoff;
    return ok;
}

/* ---- none: claim, then write ----------------------------------------------------- */

__global__ void bpcu_k_scatter_claim(bpcu_sc_args g, const char *idx, bool i64, long long *win,
                                     unsigned long long *bad)
{
    BPCU_FOR(u, g.n) {
        int64_t oo, w, wv, uo;
        if (target(g, idx, i64, u, &oo, &w, &wv, &uo, bad))
            atomicMax(&win[w], (long long)wv);
    }
}

template <class T>
__global__ void bpcu_k_scatter_write(bpcu_sc_args g, const char *idx, bool i64,
                                     const long long *win, const T *upd, T *out,
                                     unsigned long long *bad)
{
    BPCU_FOR(u, g.n) {
        int64_t oo, w, wv, uo;
        if (target(g, idx, i64, u, &oo, &w, &wv, &uo, bad) && win[w] == wv)
            out[oo] = upd[uo];
    }
}

/* ---- add, mul, max, min ----------------------------------------------------------- */

template <class S> static __device__ __forceinline__ S combine(int red, S cur, S val)
{
    if constexpr (std::is_integral<S>::value) {
        typedef typename std::make_unsigned<S>::type U1;
        typedef typename std::conditional<sizeof(S) < 4, uint32_t, U1>::type U;
        switch (red) {
        case RED_ADD: return (S)(U1)((U)cur + (U)val);
        case RED_MUL: return (S)(U1)((U)cur * (U)val);
        case RED_MAX: return cur > val ? cur : val;
        default: return cur < val ? cur : val;
        }
    } else {
        typedef bpcu_ft<S> F;
        typename F::C a = F::ld(cur), b = F::ld(val);
        switch (red) {
        case RED_ADD: return F::st(a + b);
        case RED_MUL: return F::st(a * b);
        case RED_MAX: return (a > b || a != a) ? cur : val;
        default: return (a < b || a != a) ? cur : val;
        }
    }
}

/* *p = combine(*p, val), atomically: a compare-and-swap loop on p's own
 * word (4 and 8 bytes) or on the aligned 32-bit word holding it. */
template <class S> static __device__ void atomic_combine(S *p, S val, int red)
{
    if constexpr (sizeof(S) == 4 || sizeof(S) == 8) {
        typedef typename std::conditional<sizeof(S) == 4, unsigned int, unsigned long long>::type W;
        W *wp = (W *)p;
        W seen = *(volatile W *)wp;
        for (;;) {
            S cur, nv;
            memcpy(&cur, &seen, sizeof cur);
            nv = combine(red, cur, val);
            W nw;
            memcpy(&nw, &nv, sizeof nw);
            if (nw == seen)
                return;
            W prev = atomicCAS(wp, seen, nw);
            if (prev == seen)
                return;
            seen = prev;
        }
    } else {
        unsigned int *wp = (unsigned int *)((uintptr_t)p & ~(uintptr_t)3);
        unsigned int shift = (unsigned int)((uintptr_t)p & 3) * 8;
        unsigned int mask = sizeof(S) == 1 ? 0xffu : 0xffffu;
        unsigned int seen = *(volatile unsigned int *)wp;
        for (;;) {
            unsigned int bits = (seen >> shift) & mask, nb = 0;
            S cur, nv;
            memcpy(&cur, &bits, sizeof cur); /* little-endian: the low bytes */
            nv = combine(red, cur, val);
            memcpy(&nb, &nv, sizeof nv);
            unsigned int nw = (seen & ~(mask << shift)) | (nb << shift);
            if (nw == seen)
                return;
            unsigned int prev = atomicCAS(wp, seen, nw);
            if (prev == seen)
                return;
            seen = prev;
        }
    }
}

template <class S>
__global__ void bpcu_k_scatter_reduce(bpcu_sc_args g, const char *idx, bool i64, const S *upd,
                                      S *out, unsigned long long *bad)
{
    BPCU_FOR(u, g.n) {
        int64_t oo, w, wv, uo;
        if (target(g, idx, i64, u, &oo, &w, &wv, &uo, bad))
            atomic_combine(&out[oo], upd[uo], g.red);
    }
}

/* ---- float add and mul, accumulated wide ------------------------------------------------- */

/* Element r (row-major) of out, at its strides. */
static __device__ __forceinline__ int64_t out_off(const bpcu_sc_args &g, int32_t rank, int64_t r)
{
    int64_t o = 0;
    for (int32_t k = rank - 1; k >= 0; k--) {
        o += (r % g.odim[k]) * g.ostr[k];
        r /= g.odim[k];
    }
    return o;
}

/* acc[r] = out's element r (to_acc) or out's element r = acc[r] rounded once */
template <class S>
__global__ void bpcu_k_scatter_wide(bpcu_sc_args g, int32_t rank, int64_t n, S *out, double *acc,
                                    bool to_acc)
{
    typedef bpcu_ft<S> F;
    BPCU_FOR(r, n) {
        const int64_t o = out_off(g, rank, r);
        if (to_acc)
            acc[r] = (double)F::ld(out[o]);
        else
            out[o] = F::std_(acc[r]);
    }
}

template <class S>
__global__ void bpcu_k_scatter_wide_reduce(bpcu_sc_args g, const char *idx, bool i64,
                                           const S *upd, double *acc, unsigned long long *bad)
{
    typedef bpcu_ft<S> F;
    BPCU_FOR(u, g.n) {
        int64_t oo, w, wv, uo;
        if (!target(g, idx, i64, u, &oo, &w, &wv, &uo, bad))
            continue;
        const double v = (double)F::ld(upd[uo]);
        double *p = &acc[target_pos(g, u, w)];
        if (g.red == RED_ADD)
            atomicAdd(p, v); /* f64 atomics keep subnormals (f32's flush them) */
        else
            atomic_combine(p, v, RED_MUL);
    }
}

template <class S>
static cudaError_t launch_wide(bpcu_device *d, const bpcu_sc_args &g, int32_t rank, int64_t nout,
                               const char *ip, bool i64, const bp_view *upd, const bp_view *out,
                               double *acc, unsigned long long *bad)
{
    S *o = (S *)bpcu_ptr(out);
    cudaError_t e = bpcu_launch(d->stream, bpcu_blocks(nout), BPCU_THREADS, 0,
                                bpcu_k_scatter_wide<S>, g, rank, nout, o, acc, true);
    if (e == cudaSuccess)
        e = bpcu_launch(d->stream, bpcu_blocks(g.n), BPCU_THREADS, 0,
                        bpcu_k_scatter_wide_reduce<S>, g, ip, i64, (const S *)bpcu_ptr(upd), acc,
                        bad);
    if (e == cudaSuccess)
        e = bpcu_launch(d->stream, bpcu_blocks(nout), BPCU_THREADS, 0, bpcu_k_scatter_wide<S>, g,
                        rank, nout, o, acc, false);
    return e;
}

/* add and mul of f16, bf16 and f32 through an f64 accumulator of out's shape */
static bp_status scatter_wide(bpcu_device *d, const bpcu_sc_args &g, const bp_view *ind,
                              const bp_view *upd, const bp_view *out, unsigned long long *bad)
{
    const int64_t nout = bpcu_numel(out);
    double *acc = NULL;
    bp_status st = bpcu_scratch(d, (size_t)nout * sizeof(double), (void **)&acc);
    if (st != BP_OK)
        return st;
    const char *ip = bpcu_ptr(ind);
    const bool i64 = ind->dtype == BP_I64;
    cudaError_t e = cudaSuccess;
    switch (out->dtype) {
    case BP_F32: e = launch_wide<float>(d, g, out->rank, nout, ip, i64, upd, out, acc, bad); break;
    case BP_F16: e = launch_wide<bpcu_h16>(d, g, out->rank, nout, ip, i64, upd, out, acc, bad); break;
    default: e = launch_wide<bpcu_b16>(d, g, out->rank, nout, ip, i64, upd, out, acc, bad); break;
    }
    bpcu_scratch_free(d, acc);
    return bpcu_launched(d, e, "scatter kernel");
}

/* ---- the entry ------------------------------------------------------------------------ */

template <class T>
static cudaError_t launch_write(bpcu_device *d, const bpcu_sc_args &g, const char *ip, bool i64,
                                const long long *win, const bp_view *upd, const bp_view *out,
                                unsigned long long *bad)
{
    return bpcu_launch(d->stream, bpcu_blocks(g.n), BPCU_THREADS, 0, bpcu_k_scatter_write<T>, g,
                       ip, i64, win, (const T *)bpcu_ptr(upd), (T *)bpcu_ptr(out), bad);
}

/* none: claim the targets in scratch, then write the winners */
static bp_status scatter_none(bpcu_device *d, const bpcu_sc_args &g, int64_t wcount,
                              const bp_view *ind, const bp_view *upd, const bp_view *out,
                              unsigned long long *bad)
{
    void *win = NULL;
    size_t bytes = (size_t)wcount * sizeof(long long);
    bp_status st = bpcu_scratch(d, bytes, &win);
    if (st != BP_OK)
        return st;
    const char *ip = bpcu_ptr(ind);
    bool i64 = ind->dtype == BP_I64;
    cudaError_t e = cudaMemsetAsync(win, 0xff, bytes, d->stream); /* -1: no update yet */
    if (e == cudaSuccess)
        e = bpcu_launch(d->stream, bpcu_blocks(g.n), BPCU_THREADS, 0, bpcu_k_scatter_claim, g, ip,
                        i64, (long long *)win, bad);
    if (e == cudaSuccess) {
        const long long *w = (const long long *)win;
        switch (bp_dtype_size(out->dtype)) {
        case 1: e = launch_write<uint8_t>(d, g, ip, i64, w, upd, out, bad); break;
        case 2: e = launch_write<uint16_t>(d, g, ip, i64, w, upd, out, bad); break;
        case 4: e = launch_write<uint32_t>(d, g, ip, i64, w, upd, out, bad); break;
        default: e = launch_write<uint64_t>(d, g, ip, i64, w, upd, out, bad); break;
        }
    }
    bpcu_scratch_free(d, win);
    return bpcu_launched(d, e, "scatter kernel");
}

static bp_status scatter_reduce(bpcu_device *d, const bpcu_sc_args &g, const bp_view *ind,
                                const bp_view *upd, const bp_view *out, unsigned long long *bad)
{
    const char *ip = bpcu_ptr(ind);
    bool i64 = ind->dtype == BP_I64;
    bp_dtype dt = out->dtype;
    cudaError_t e = cudaSuccess;
#define LAUNCH_REDUCE                                                                         \
    e = bpcu_launch(d->stream, bpcu_blocks(g.n), BPCU_THREADS, 0, bpcu_k_scatter_reduce<T>, g, \
                    ip, i64, (const T *)bpcu_ptr(upd), (T *)bpcu_ptr(out), bad)
    if (bp_dtype_is_float(dt)) {
        BPCU_DISPATCH_FLOAT(dt, LAUNCH_REDUCE);
    } else if (bp_dtype_is_int(dt)) {
        BPCU_DISPATCH_INT(dt, LAUNCH_REDUCE);
    } else {
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: scatter with a reduction is not "
                         "implemented for %s", bp_dtype_name(dt));
    }
#undef LAUNCH_REDUCE
    return bpcu_launched(d, e, "scatter kernel");
}

/* g for scatter_elements or scatter_nd; wcount: entries of the winner table,
 * m, dims, axis0: what the index check needs. */
static bool describe(const bpcu_opcall *c, bpcu_sc_args *g, int64_t *wcount, int32_t *m,
                     const int64_t **dims, int32_t *axis0)
{
    const bp_view *x = c->in[0], *ind = c->in[1], *upd = c->in[2], *out = c->out[0];
    memset(g, 0, sizeof *g);
    g->nd = c->op == BP_OP_SCATTER_ND;
    g->red = (int32_t)c->p.i[1];
    g->urank = upd->rank;
    g->n = bpcu_numel(upd);
    for (int32_t k = 0; k < upd->rank; k++)
        g->ushape[k] = upd->shape[k], g->ustr[k] = upd->strides[k];
    for (int32_t k = 0; k < ind->rank; k++)
        g->istr[k] = ind->strides[k];
    for (int32_t k = 0; k < out->rank; k++)
        g->ostr[k] = out->strides[k], g->odim[k] = out->shape[k];
    int32_t wrank;
    if (!g->nd) {
        int64_t axis = c->p.i[0];
        if (axis < 0 || axis >= x->rank || ind->rank != x->rank || upd->rank != x->rank)
            return false;
        g->axis = (int32_t)axis;
        wrank = out->rank;
        *m = 1, *dims = &x->shape[axis], *axis0 = g->axis;
    } else {
        int64_t mm = ind->rank > 0 ? ind->shape[ind->rank - 1] : 0;
        if (mm < 1 || mm > x->rank || upd->rank != ind->rank - 1 + x->rank - mm)
            return false;
        g->m = (int32_t)mm, g->q1 = ind->rank - 1;
        g->tcount = 1;
        for (int32_t k = g->m; k < x->rank; k++)
            g->tcount *= x->shape[k];
        wrank = g->m;
        *m = g->m, *dims = &x->shape[0], *axis0 = 0;
    }
    *wcount = 1;
    for (int32_t k = wrank - 1; k >= 0; k--) {
        g->wstr[k] = *wcount;
        *wcount *= out->shape[k];
    }
    return g->red >= RED_NONE && g->red <= RED_MIN;
}

bp_status bpcu_op_scatter(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *ind = c->in[1], *upd = c->in[2], *out = c->out[0];
    bpcu_sc_args g;
    int64_t wcount;
    int32_t m, axis0;
    const int64_t *dims;
    if (!describe(c, &g, &wcount, &m, &dims, &axis0))
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: %s: reduction %lld, axis %lld, x of "
                         "rank %d, indices of rank %d and updates of rank %d do not fit",
                         bp_op_name(c->op), (long long)c->p.i[1], (long long)c->p.i[0],
                         (int)x->rank, (int)ind->rank, (int)upd->rank);
    bp_status st = bpcu_numel(out) > 0 ? bpcu_copy_view(d, x, out) : BP_OK;
    if (st != BP_OK || bpcu_numel(ind) == 0)
        return st;
    bpcu_index_check chk(d, c->op);
    if (chk.status != BP_OK)
        return chk.status;
    if (g.n == 0 || bpcu_numel(out) == 0) /* no update to make, but a bad index is reported */
        return chk.check_all(ind, m, dims, axis0);
    const bp_dtype dt = out->dtype;
    const bool wide = (g.red == RED_ADD || g.red == RED_MUL) &&
                      (dt == BP_F32 || dt == BP_F16 || dt == BP_BF16);
    if (g.red == RED_NONE)
        st = scatter_none(d, g, wcount, ind, upd, out, chk.bad());
    else if (wide)
        st = scatter_wide(d, g, ind, upd, out, chk.bad());
    else
        st = scatter_reduce(d, g, ind, upd, out, chk.bad());
    bp_status cs = chk.commit(ind, m, dims, axis0);
    return st != BP_OK ? st : cs;
}

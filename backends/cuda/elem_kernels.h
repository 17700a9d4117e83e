/* The elementwise loops (nvcc only): one kernel per (storage type,
 * functor) over strided, broadcast views collapsed on the host, and their
 * launchers; the functor carries the op as a run-time switch.
 * the elementwise ops of every ABI (elementwise.cu) share them, and
 * the integer helpers that wrap instead of trapping. */
#ifndef BPCU_ELEM_KERNELS_H
#define BPCU_ELEM_KERNELS_H

#include "bpcu.h"
#include "elem.h"

/* ---- packs: 16-byte loads and stores --------------------------------------- */

template <int B> struct bpcu_word_of;
template <> struct bpcu_word_of<16> { typedef uint4 T; };
template <> struct bpcu_word_of<8> { typedef uint2 T; };
template <> struct bpcu_word_of<4> { typedef unsigned int T; };
template <> struct bpcu_word_of<2> { typedef unsigned short T; };
template <> struct bpcu_word_of<1> { typedef unsigned char T; };

/* V elements of T moved as one aligned word (ld/st.global.v4 for 16 bytes):
 * p must be aligned to sizeof(T) V. */
template <class T, int V> struct bpcu_pack {
    typedef typename bpcu_word_of<(int)sizeof(T) * V>::T W;
    T v[V];
    static __device__ __forceinline__ bpcu_pack load(const T *p)
    {
        W w = *(const W *)p;
        bpcu_pack r;
        memcpy(&r.v, &w, sizeof w);
        return r;
    }
    /* cs 1: the V elements at p; cs 0: *p, V times (a broadcast element) */
    static __device__ __forceinline__ bpcu_pack load(const T *p, int64_t cs)
    {
        if (cs)
            return load(p);
        bpcu_pack r;
        const T e = *p;
#pragma unroll
        for (int k = 0; k < V; k++)
            r.v[k] = e;
        return r;
    }
    __device__ __forceinline__ void store(T *p) const
    {
        W w;
        memcpy(&w, &v, sizeof w);
        *(W *)p = w;
    }
};

/* Elements per 16-byte access of the widest of the types. */
template <class A, class B, class C = A> struct bpcu_vw {
    static constexpr size_t wa = sizeof(A) > sizeof(B) ? sizeof(A) : sizeof(B);
    static constexpr size_t w = wa > sizeof(C) ? wa : sizeof(C);
    static constexpr int V = (int)(16 / w);
};

/* Views of one shape (collapsed) as R rows of C elements: out at (r os +
 * c), input k at (r rs[k] + c cs[k]) with cs[k] 1 (a row; rs[k] = 0: the
 * same row every time, a row vector broadcast) or 0 (one element per row:
 * a column broadcast; rs[k] = 0 too: a scalar). Threads of x walk a row's
 * packs, blocks of y the rows, so a broadcast costs no index arithmetic
 * per element and a row vector is read from cache. vec: V-element packs
 * fit every row and pointer; else one element at a time. */
typedef struct bpcu_rc {
    int on;                        /* 0: the views are not of this form */
    int vec;
    int64_t R, C, os;
    int64_t rs[3], cs[3];
} bpcu_rc;

/* The rows form of ix (views: out, then nin inputs, at p[] with element
 * sizes es[]) for packs of V elements, or on = 0. */
static inline bpcu_rc bpcu_rc_plan(const bpcu_ix &ix, int nin, const void *const *p,
                                   const size_t *es, int V)
{
    bpcu_rc g;
    memset(&g, 0, sizeof g);
    const int32_t r = ix.rank;
    if (r > 2 || ix.strides[0][r - 1] != 1 || ix.n < 2)
        return g;
    g.R = r == 2 ? ix.shape[0] : 1;
    g.C = ix.shape[r - 1];
    g.os = r == 2 ? ix.strides[0][0] : 0;
    for (int k = 0; k < nin; k++) {
        g.cs[k] = ix.strides[1 + k][r - 1];
        g.rs[k] = r == 2 ? ix.strides[1 + k][0] : 0;
        if (g.cs[k] != 0 && g.cs[k] != 1)
            return g;
    }
    g.on = 1;
    bool vec = V > 1 && g.C % V == 0 && g.os % V == 0 &&
               (uintptr_t)p[0] % ((uintptr_t)V * es[0]) == 0;
    for (int k = 0; k < nin; k++)
        if (g.cs[k] == 1)
            vec = vec && g.rs[k] % V == 0 && (uintptr_t)p[1 + k] % ((uintptr_t)V * es[1 + k]) == 0;
    g.vec = vec;
    return g;
}

/* The grid of a rows-form kernel: x over a row's packs, y over the rows,
 * about 4096 blocks of BPCU_THREADS when there is that much work. */
static inline dim3 bpcu_rc_grid(const bpcu_rc &g, int V)
{
    const int64_t packs = g.C / (g.vec ? V : 1);
    int64_t bx = (packs + BPCU_THREADS - 1) / BPCU_THREADS;
    bx = bx < 1 ? 1 : bx > ((int64_t)1 << 20) ? ((int64_t)1 << 20) : bx;
    int64_t by = (4096 + bx - 1) / bx;
    by = by > g.R ? g.R : by;
    by = by < 1 ? 1 : by > 65535 ? 65535 : by;
    return dim3((unsigned)bx, (unsigned)by);
}

/* Functors that can do two 16-bit elements in one instruction (half2,
 * bfloat162 arithmetic) say so here, with a pair(x, y, out) member. */
template <class Fn> struct bpcu_pairs {
    static constexpr bool value = false;
};

/* ---- the loops ------------------------------------------------------------ */

/* Dense views (one axis, unit strides): each thread loads BPCU_UNROLL
 * elements, a block's width apart (every load instruction of a warp stays
 * coalesced), before it computes any, so a thread has that many loads in
 * flight instead of one. On an H100, add of 2^28 f32 ran at 0.79 of a
 * device-to-device copy's bandwidth one element per thread. Dense views
 * whose pointers are aligned move 16-byte packs instead (vec). */
#define BPCU_UNROLL 4

static inline unsigned bpcu_dense_blocks(const bpcu_ix &ix)
{
    return ix.dense ? bpcu_blocks((ix.n + BPCU_UNROLL - 1) / BPCU_UNROLL) : bpcu_blocks(ix.n);
}

template <class IT, class OT, class Fn>
__global__ void bpcu_k_unary(bpcu_ix ix, const IT *x, OT *out, Fn fn, bool vec)
{
    if (vec) { /* dense, aligned: packs of V, then the tail one by one */
        constexpr int V = bpcu_vw<IT, OT>::V;
        const int64_t nv = ix.n / V;
        BPCU_FOR(p, nv) {
            const bpcu_pack<IT, V> a = bpcu_pack<IT, V>::load(x + p * V);
            bpcu_pack<OT, V> o;
#pragma unroll
            for (int k = 0; k < V; k++)
                o.v[k] = fn(a.v[k]);
            o.store(out + p * V);
        }
        BPCU_FOR(t, ix.n - nv * V)
            out[nv * V + t] = fn(x[nv * V + t]);
        return;
    }
    if (ix.dense) {
        const int64_t span = (int64_t)blockDim.x * BPCU_UNROLL;
        for (int64_t b0 = (int64_t)blockIdx.x * span + threadIdx.x; b0 < ix.n;
             b0 += (int64_t)gridDim.x * span) {
            IT v[BPCU_UNROLL];
#pragma unroll
            for (int u = 0; u < BPCU_UNROLL; u++)
                if (b0 + (int64_t)u * blockDim.x < ix.n)
                    v[u] = x[b0 + (int64_t)u * blockDim.x];
#pragma unroll
            for (int u = 0; u < BPCU_UNROLL; u++)
                if (b0 + (int64_t)u * blockDim.x < ix.n)
                    out[b0 + (int64_t)u * blockDim.x] = fn(v[u]);
        }
        return;
    }
    int64_t off[2];
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<2>(ix, i, off);
        out[off[0]] = fn(x[off[1]]);
    }
}

/* The rows form of a binary op with packs of V (V = 1: element by element). */
template <int V, class IT, class OT, class Fn>
static __device__ __forceinline__ void bpcu_binary_rows(const bpcu_rc &g, const IT *a,
                                                        const IT *b, OT *out, const Fn &fn)
{
    const int64_t packs = g.C / V;
    for (int64_t r = blockIdx.y; r < g.R; r += gridDim.y) {
        const IT *pa = a + r * g.rs[0], *pb = b + r * g.rs[1];
        OT *po = out + r * g.os;
        for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < packs;
             c += (int64_t)gridDim.x * blockDim.x) {
            const bpcu_pack<IT, V> va = bpcu_pack<IT, V>::load(pa + c * V * g.cs[0], g.cs[0]);
            const bpcu_pack<IT, V> vb = bpcu_pack<IT, V>::load(pb + c * V * g.cs[1], g.cs[1]);
            bpcu_pack<OT, V> o;
            if constexpr (bpcu_pairs<Fn>::value && V % 2 == 0) {
#pragma unroll
                for (int k = 0; k < V; k += 2)
                    fn.pair(&va.v[k], &vb.v[k], &o.v[k]);
            } else {
#pragma unroll
                for (int k = 0; k < V; k++)
                    o.v[k] = fn(va.v[k], vb.v[k]);
            }
            o.store(po + c * V);
        }
    }
}

/* rc.on: the rows form (dense views included, when aligned); else the
 * collapsed views ix, dense or strided. */
template <class IT, class OT, class Fn>
__global__ void bpcu_k_binary(bpcu_ix ix, bpcu_rc rc, const IT *a, const IT *b, OT *out, Fn fn)
{
    if (rc.on) {
        if (rc.vec)
            bpcu_binary_rows<bpcu_vw<IT, OT>::V>(rc, a, b, out, fn);
        else
            bpcu_binary_rows<1>(rc, a, b, out, fn);
        return;
    }
    if (ix.dense) {
        const int64_t span = (int64_t)blockDim.x * BPCU_UNROLL;
        for (int64_t b0 = (int64_t)blockIdx.x * span + threadIdx.x; b0 < ix.n;
             b0 += (int64_t)gridDim.x * span) {
            IT va[BPCU_UNROLL], vb[BPCU_UNROLL];
#pragma unroll
            for (int u = 0; u < BPCU_UNROLL; u++)
                if (b0 + (int64_t)u * blockDim.x < ix.n)
                    va[u] = a[b0 + (int64_t)u * blockDim.x], vb[u] = b[b0 + (int64_t)u * blockDim.x];
#pragma unroll
            for (int u = 0; u < BPCU_UNROLL; u++)
                if (b0 + (int64_t)u * blockDim.x < ix.n)
                    out[b0 + (int64_t)u * blockDim.x] = fn(va[u], vb[u]);
        }
        return;
    }
    int64_t off[3];
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<3>(ix, i, off);
        out[off[0]] = fn(a[off[1]], b[off[2]]);
    }
}

/* ---- integer helpers: wrap, never trap ------------------------------------- */

template <class T> struct bpcu_int;
#define BPCU_INT(T, UT)                                                                 \
    template <> struct bpcu_int<T> {                                                    \
        typedef UT U;                                                                   \
    };
BPCU_INT(int8_t, uint32_t)
BPCU_INT(int32_t, uint32_t)
BPCU_INT(int64_t, uint64_t)
BPCU_INT(uint8_t, uint32_t)

template <class T> static __device__ __forceinline__ T i_neg(T a)
{
    typedef typename bpcu_int<T>::U U;
    return (T)((U)0 - (U)a);
}

/* v < 0, without a pointless-comparison warning for unsigned T */
template <class T> static __device__ __forceinline__ bool i_negative(T v)
{
    if constexpr (std::is_signed<T>::value)
        return v < 0;
    else
        return false;
}

/* ---- launchers ---------------------------------------------------------------- */

template <class IT, class OT, class Fn>
static bp_status launch_unary(bpcu_device *d, const bp_view *x, const bp_view *out, Fn fn)
{
    cudaError_t e = cudaSuccess;
    const bp_view *vs[2] = {out, x};
    bpcu_ix ix = bpcu_collapse(2, vs);
    if (ix.n == 0)
        return BP_OK;
    constexpr int V = bpcu_vw<IT, OT>::V;
    const IT *xp = (const IT *)bpcu_ptr(x);
    OT *op = (OT *)bpcu_ptr(out);
    const bool vec = ix.dense && ix.n >= V && (uintptr_t)xp % (V * sizeof(IT)) == 0 &&
                     (uintptr_t)op % (V * sizeof(OT)) == 0;
    const unsigned nb = vec ? bpcu_blocks(ix.n / V) : bpcu_dense_blocks(ix);
    e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_unary<IT, OT, Fn>, ix, xp, op, fn, vec);
    return bpcu_launched(d, e, "unary kernel");
}

template <class IT, class OT, class Fn>
static bp_status launch_binary(bpcu_device *d, const bp_view *a, const bp_view *b,
                               const bp_view *out, Fn fn)
{
    cudaError_t e = cudaSuccess;
    const bp_view *vs[3] = {out, a, b};
    bpcu_ix ix = bpcu_collapse(3, vs);
    if (ix.n == 0)
        return BP_OK;
    constexpr int V = bpcu_vw<IT, OT>::V;
    const void *ptrs[3] = {bpcu_ptr(out), bpcu_ptr(a), bpcu_ptr(b)};
    const size_t es[3] = {sizeof(OT), sizeof(IT), sizeof(IT)};
    bpcu_rc rc = bpcu_rc_plan(ix, 2, ptrs, es, V);
    if (ix.dense && !rc.vec)
        rc.on = 0; /* dense but unaligned: the unrolled loop */
    dim3 grid = rc.on ? bpcu_rc_grid(rc, V) : dim3(bpcu_dense_blocks(ix));
    e = bpcu_launch(d->stream, grid, BPCU_THREADS, 0, bpcu_k_binary<IT, OT, Fn>, ix, rc,
                    (const IT *)ptrs[1], (const IT *)ptrs[2], (OT *)bpcu_ptr(out), fn);
    return bpcu_launched(d, e, "binary kernel");
}

#endif

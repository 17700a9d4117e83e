/* The elementwise loops (nvcc only): one kernel per (storage type,
 * functor) over strided, broadcast views collapsed on the host, and their
 * launchers; the functor carries the op as a run-time switch.
 * the elementwise ops of every ABI (elementwise.cu) share them, and
 * the integer helpers that wrap instead of trapping. */
#ifndef BPCU_ELEM_KERNELS_H
#define BPCU_ELEM_KERNELS_H

#include "bpcu.h"
#include "elem.h"

/* ---- the loops ------------------------------------------------------------ */

/* Dense views (one axis, unit strides): each thread loads BPCU_UNROLL
 * elements, a block's width apart (every load instruction of a warp stays
 * coalesced), before it computes any, so a thread has that many loads in
 * flight instead of one. On an H100, add of 2^28 f32 ran at 0.79 of a
 * device-to-device copy's bandwidth one element per thread. */
#define BPCU_UNROLL 4

static inline unsigned bpcu_dense_blocks(const bpcu_ix &ix)
{
    return ix.dense ? bpcu_blocks((ix.n + BPCU_UNROLL - 1) / BPCU_UNROLL) : bpcu_blocks(ix.n);
}

template <class IT, class OT, class Fn>
__global__ void bpcu_k_unary(bpcu_ix ix, const IT *x, OT *out, Fn fn)
{
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

template <class IT, class OT, class Fn>
__global__ void bpcu_k_binary(bpcu_ix ix, const IT *a, const IT *b, OT *out, Fn fn)
{
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
    e = bpcu_launch(d->stream, bpcu_dense_blocks(ix), BPCU_THREADS, 0, bpcu_k_unary<IT, OT, Fn>,
        ix, (const IT *)bpcu_ptr(x), (OT *)bpcu_ptr(out), fn);
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
    e = bpcu_launch(d->stream, bpcu_dense_blocks(ix), BPCU_THREADS, 0, bpcu_k_binary<IT, OT, Fn>,
        ix, (const IT *)bpcu_ptr(a), (const IT *)bpcu_ptr(b), (OT *)bpcu_ptr(out), fn);
    return bpcu_launched(d, e, "binary kernel");
}

#endif

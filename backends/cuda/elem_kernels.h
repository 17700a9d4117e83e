/* The elementwise loops (nvcc only): one kernel per (storage type,
 * functor) over strided, broadcast views collapsed on the host, and their
 * launchers; the functor carries the op as a run-time switch.
 * elementwise.cu (ABI 1.0) and elementwise_more.cu (1.4) share them, and
 * the integer helpers that wrap instead of trapping. */
#ifndef BPCU_ELEM_KERNELS_H
#define BPCU_ELEM_KERNELS_H

#include "bpcu.h"
#include "elem.h"

/* ---- the loops ------------------------------------------------------------ */

template <class IT, class OT, class Fn>
__global__ void bpcu_k_unary(bpcu_ix ix, const IT *x, OT *out, Fn fn)
{
    int64_t off[2];
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<2>(ix, i, off);
        out[off[0]] = fn(x[off[1]]);
    }
}

template <class IT, class OT, class Fn>
__global__ void bpcu_k_binary(bpcu_ix ix, const IT *a, const IT *b, OT *out, Fn fn)
{
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
    e = bpcu_launch(d->stream, bpcu_blocks(ix.n), BPCU_THREADS, 0, bpcu_k_unary<IT, OT, Fn>,
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
    e = bpcu_launch(d->stream, bpcu_blocks(ix.n), BPCU_THREADS, 0, bpcu_k_binary<IT, OT, Fn>,
        ix, (const IT *)bpcu_ptr(a), (const IT *)bpcu_ptr(b), (OT *)bpcu_ptr(out), fn);
    return bpcu_launched(d, e, "binary kernel");
}

#endif

/* CLIP: min(max(x, lo), hi) with lo and hi optional tensors broadcast to x
 * (opcodes.h: in x, lo, hi; NULL when not given). max and min are
 * bp_maximum's and bp_minimum's: a NaN of x or of a bound is the result, as
 * NumPy's clip. The result is always one of the three elements, so it is
 * copied, never converted; f16/bf16 compare in f32. */
#include "elem_kernels.h"
#include "op.h"

/* a comparable value of storage S */
template <class S> static __device__ __forceinline__ S cmp_val(S v) { return v; }
static __device__ __forceinline__ float cmp_val(bpcu_h16 v) { return bp_f16_to_f32(v.v); }
static __device__ __forceinline__ float cmp_val(bpcu_b16 v) { return bp_bf16_to_f32(v.v); }

template <class S>
__global__ void bpcu_k_clip(bpcu_ix ix, const S *x, const S *lo, const S *hi, S *out, bool has_lo,
                            bool has_hi)
{
    int64_t off[4];
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<4>(ix, i, off);
        S r = x[off[1]];
        auto v = cmp_val(r);
        if (has_lo && v == v) { /* maximum(v, lo) */
            S l = lo[off[2]];
            auto lv = cmp_val(l);
            if (!(v > lv)) /* lo larger, equal (either is right), or NaN */
                r = l, v = lv;
        }
        if (has_hi && v == v) { /* minimum(v, hi) */
            S h = hi[off[3]];
            auto hv = cmp_val(h);
            if (!(v < hv))
                r = h;
        }
        out[off[0]] = r;
    }
}

template <class S>
static bp_status launch_clip(bpcu_device *d, const bp_view *x, const bp_view *lo,
                             const bp_view *hi, const bp_view *out)
{
    /* an absent bound walks x's geometry, never read */
    const bp_view *vs[4] = {out, x, lo ? lo : x, hi ? hi : x};
    bpcu_ix ix = bpcu_collapse(4, vs);
    if (ix.n == 0)
        return BP_OK;
    cudaError_t e = bpcu_launch(d->stream, bpcu_blocks(ix.n), BPCU_THREADS, 0, bpcu_k_clip<S>, ix,
                                (const S *)bpcu_ptr(x), (const S *)bpcu_ptr(vs[2]),
                                (const S *)bpcu_ptr(vs[3]), (S *)bpcu_ptr(out), lo != NULL,
                                hi != NULL);
    return bpcu_launched(d, e, "clip kernel");
}

bp_status bpcu_op_clip(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *lo = c->in[1], *hi = c->in[2], *out = c->out[0];
    bp_dtype dt = x->dtype;
    if (bp_dtype_is_float(dt))
        BPCU_DISPATCH_FLOAT(dt, return launch_clip<T>(d, x, lo, hi, out));
    BPCU_DISPATCH_INT(dt, return launch_clip<T>(d, x, lo, hi, out));
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: clip not implemented for %s",
                     bp_dtype_name(dt));
}

/* MOVEMENT: strided copies (copy, transpose, slice, concat, broadcast_to,
 * pad all arrive as one strided copy) and CAST. */
#include <string.h>

#include "bpcu.h"
#include "elem.h"

/* ---- copy / cast ------------------------------------------------------------ */

template <class T>
__global__ void bpcu_k_copy(bpcu_ix ix, const T *src, T *out)
{
    int64_t off[2];
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<2>(ix, i, off);
        out[off[0]] = src[off[1]];
    }
}

/* Casts switch on the dtypes at run time (uniform across the grid): one
 * kernel for all 72 pairs. Integer and bool sources go through int64
 * (exact), float sources through double, as the binary backend. */
__global__ void bpcu_k_cast(bpcu_ix ix, const char *src, bp_dtype sdt, char *out, bp_dtype odt)
{
    int64_t off[2];
    int64_t ss = (int64_t)bp_dtype_size(sdt), os = (int64_t)bp_dtype_size(odt);
    bool via_int = !bp_dtype_is_float(sdt);
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<2>(ix, i, off);
        if (via_int)
            bp_elem_store_i64(odt, out + off[0] * os, bp_elem_load_i64(sdt, src + off[1] * ss));
        else
            bp_elem_store_f64(odt, out + off[0] * os, bp_elem_load_f64(sdt, src + off[1] * ss));
    }
}

/* Copy src (any strides) into out with a dtype change when op is CAST; used
 * by matmul too. */
static bp_status copy_views(bpcu_device *d, bp_op op, const bp_view *src, const bp_view *out)
{
    const bp_view *vs[2] = {out, src};
    bpcu_ix ix = bpcu_collapse(2, vs);
    if (ix.n == 0)
        return BP_OK;
    unsigned nb = bpcu_blocks(ix.n);
    cudaError_t e = cudaSuccess;
    if (op == BP_OP_CAST && src->dtype != out->dtype) {
        e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_cast, ix, bpcu_ptr(src), src->dtype,
                        bpcu_ptr(out), out->dtype);
        return bpcu_launched(d, e, "cast kernel");
    }
    /* a dense copy is one memcpy on the stream */
    if (ix.dense) {
        size_t bytes = (size_t)ix.n * bp_dtype_size(out->dtype);
        e = cudaMemcpyAsync(bpcu_ptr(out), bpcu_ptr(src), bytes, cudaMemcpyDeviceToDevice,
                            d->stream);
        return e == cudaSuccess ? BP_OK : bpcu_cuda_fail(d, e, "device copy of %zu bytes", bytes);
    }
    switch (bp_dtype_size(out->dtype)) {
    case 1: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_copy<uint8_t>, ix, (const uint8_t *)bpcu_ptr(src), (uint8_t *)bpcu_ptr(out)); break;
    case 2: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_copy<uint16_t>, ix, (const uint16_t *)bpcu_ptr(src), (uint16_t *)bpcu_ptr(out)); break;
    case 4: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_copy<uint32_t>, ix, (const uint32_t *)bpcu_ptr(src), (uint32_t *)bpcu_ptr(out)); break;
    default: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_copy<uint64_t>, ix, (const uint64_t *)bpcu_ptr(src), (uint64_t *)bpcu_ptr(out)); break;
    }
    return bpcu_launched(d, e, "copy kernel");
}

bp_status bpcu_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, bp_op_name(op));
    return in.status != BP_OK ? in.status : copy_views(d, op, src, out);
}

bp_status bpcu_copy_view(bpcu_device *d, const bp_view *src, const bp_view *out)
{
    return copy_views(d, BP_OP_COPY, src, out);
}

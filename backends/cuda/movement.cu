/* Movement (strided copy and CAST), gather and the creation ops: fill,
 * arange and the counter-based random draws (philox.h, compiled for the
 * device, so every element matches the binary backend's). */
#include <string.h>

#include "bpcu.h"

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
    if (op == BP_OP_CAST && src->dtype != out->dtype) {
        bpcu_k_cast<<<nb, BPCU_THREADS, 0, d->stream>>>(ix, bpcu_ptr(src), src->dtype,
                                                         bpcu_ptr(out), out->dtype);
        return bpcu_check_launch(d, "cast kernel");
    }
    /* a dense copy is one memcpy on the stream */
    if (ix.dense) {
        size_t bytes = (size_t)ix.n * bp_dtype_size(out->dtype);
        cudaError_t e = cudaMemcpyAsync(bpcu_ptr(out), bpcu_ptr(src), bytes,
                                        cudaMemcpyDeviceToDevice, d->stream);
        if (e != cudaSuccess)
            return bpcu_fail(d, BP_ERR_BACKEND, "cuda: device copy of %zu bytes: %s", bytes,
                             cudaGetErrorString(e));
        return BP_OK;
    }
    switch (bp_dtype_size(out->dtype)) {
    case 1: bpcu_k_copy<uint8_t><<<nb, BPCU_THREADS, 0, d->stream>>>(ix, (const uint8_t *)bpcu_ptr(src), (uint8_t *)bpcu_ptr(out)); break;
    case 2: bpcu_k_copy<uint16_t><<<nb, BPCU_THREADS, 0, d->stream>>>(ix, (const uint16_t *)bpcu_ptr(src), (uint16_t *)bpcu_ptr(out)); break;
    case 4: bpcu_k_copy<uint32_t><<<nb, BPCU_THREADS, 0, d->stream>>>(ix, (const uint32_t *)bpcu_ptr(src), (uint32_t *)bpcu_ptr(out)); break;
    default: bpcu_k_copy<uint64_t><<<nb, BPCU_THREADS, 0, d->stream>>>(ix, (const uint64_t *)bpcu_ptr(src), (uint64_t *)bpcu_ptr(out)); break;
    }
    return bpcu_check_launch(d, "copy kernel");
}

bp_status bpcu_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    return st != BP_OK ? st : copy_views(d, op, src, out);
}

/* Exported to matmul.cu: a same-dtype strided copy. */
bp_status bpcu_copy_view(bpcu_device *d, const bp_view *src, const bp_view *out);
bp_status bpcu_copy_view(bpcu_device *d, const bp_view *src, const bp_view *out)
{
    return copy_views(d, BP_OP_COPY, src, out);
}

/* ---- fill / arange / random ----------------------------------------------------- */

template <class T>
__global__ void bpcu_k_fill(bpcu_ix ix, T *out, T v)
{
    int64_t off[1];
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<1>(ix, i, off);
        out[off[0]] = v;
    }
}

bp_status bpcu_fill(void *dev, const bp_view *out, const void *value)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    const bp_view *vs[1] = {out};
    bpcu_ix ix = bpcu_collapse(1, vs);
    if (ix.n == 0)
        return BP_OK;
    unsigned nb = bpcu_blocks(ix.n);
    /* raw bits of the element; bool normalised to 0/1 */
    switch (bp_dtype_size(out->dtype)) {
    case 1: {
        uint8_t v;
        memcpy(&v, value, 1);
        if (out->dtype == BP_BOOL)
            v = v != 0;
        bpcu_k_fill<uint8_t><<<nb, BPCU_THREADS, 0, d->stream>>>(ix, (uint8_t *)bpcu_ptr(out), v);
        break;
    }
    case 2: { uint16_t v; memcpy(&v, value, 2); bpcu_k_fill<uint16_t><<<nb, BPCU_THREADS, 0, d->stream>>>(ix, (uint16_t *)bpcu_ptr(out), v); break; }
    case 4: { uint32_t v; memcpy(&v, value, 4); bpcu_k_fill<uint32_t><<<nb, BPCU_THREADS, 0, d->stream>>>(ix, (uint32_t *)bpcu_ptr(out), v); break; }
    case 8: { uint64_t v; memcpy(&v, value, 8); bpcu_k_fill<uint64_t><<<nb, BPCU_THREADS, 0, d->stream>>>(ix, (uint64_t *)bpcu_ptr(out), v); break; }
    default:
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: fill not implemented for %s",
                         bp_dtype_name(out->dtype));
    }
    return bpcu_check_launch(d, "fill kernel");
}

__global__ void bpcu_k_arange(int64_t n, char *out, int64_t stride, bp_dtype dt, double start,
                              double step)
{
    int64_t es = (int64_t)bp_dtype_size(dt);
    BPCU_FOR(i, n)
        bp_elem_store_f64(dt, out + i * stride * es, start + (double)i * step); /* no FMA: --fmad=false */
}

bp_status bpcu_arange(void *dev, double start, double step, const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    int64_t n = out->rank > 0 ? out->shape[0] : 1;
    if (n == 0)
        return BP_OK;
    bpcu_k_arange<<<bpcu_blocks(n), BPCU_THREADS, 0, d->stream>>>(
        n, bpcu_ptr(out), out->rank > 0 ? out->strides[0] : 0, out->dtype, start, step);
    return bpcu_check_launch(d, "arange kernel");
}

/* Element i (row-major; collapsing keeps that order) draws position offset + i. */
__global__ void bpcu_k_random(bpcu_ix ix, char *out, bp_dtype dt, bool normal, uint64_t seed,
                              uint64_t offset, double p0, double p1)
{
    int64_t off[1], es = (int64_t)bp_dtype_size(dt);
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<1>(ix, i, off);
        uint64_t p = offset + (uint64_t)i;
        double v = normal ? p0 + p1 * bp_philox_normal01(seed, p)
                          : p0 + (p1 - p0) * bp_philox_uniform01(seed, p);
        bp_elem_store_f64(dt, out + off[0] * es, v);
    }
}

bp_status bpcu_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                      const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    if (op != BP_OP_RANDOM_NORMAL && op != BP_OP_RANDOM_UNIFORM)
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s is not a random op", bp_op_name(op));
    const bp_view *vs[1] = {out};
    bpcu_ix ix = bpcu_collapse(1, vs);
    if (ix.n == 0)
        return BP_OK;
    bpcu_k_random<<<bpcu_blocks(ix.n), BPCU_THREADS, 0, d->stream>>>(
        ix, bpcu_ptr(out), out->dtype, op == BP_OP_RANDOM_NORMAL, seed, offset, p0, p1);
    return bpcu_check_launch(d, "random kernel");
}

/* ---- gather ---------------------------------------------------------------------- */

typedef struct bpcu_gather_args {
    int32_t orank, axis, irank, xrank;
    int64_t n, dim;
    int64_t oshape[BP_MAX_RANK], ostr[BP_MAX_RANK];
    int64_t xstr[BP_MAX_RANK], istr[BP_MAX_RANK];
} bpcu_gather_args;

template <class T>
__global__ void bpcu_k_gather(bpcu_gather_args g, const T *x, const char *idx, bool i64, T *out)
{
    BPCU_FOR(i, g.n) {
        int64_t c[BP_MAX_RANK], r = i;
        for (int32_t k = g.orank - 1; k >= 0; k--) {
            c[k] = r % g.oshape[k];
            r /= g.oshape[k];
        }
        int64_t oo = 0, xo = 0, io = 0;
        for (int32_t k = 0; k < g.orank; k++)
            oo += c[k] * g.ostr[k];
        for (int32_t k = 0; k < g.axis; k++)
            xo += c[k] * g.xstr[k];
        for (int32_t k = 0; k < g.irank; k++)
            io += c[g.axis + k] * g.istr[k];
        int64_t j = i64 ? ((const int64_t *)idx)[io] : (int64_t)((const int32_t *)idx)[io];
        if (j < 0)
            j += g.dim;
        xo += j * g.xstr[g.axis];
        for (int32_t k = g.axis + 1; k < g.xrank; k++)
            xo += c[k - 1 + g.irank] * g.xstr[k];
        out[oo] = x[xo];
    }
}

bp_status bpcu_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                      const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    bpcu_gather_args g;
    memset(&g, 0, sizeof g);
    g.orank = out->rank, g.axis = axis, g.irank = indices->rank, g.xrank = x->rank;
    g.n = bpcu_numel(out);
    g.dim = x->shape[axis];
    if (g.n == 0)
        return BP_OK;
    for (int32_t k = 0; k < out->rank; k++)
        g.oshape[k] = out->shape[k], g.ostr[k] = out->strides[k];
    for (int32_t k = 0; k < x->rank; k++)
        g.xstr[k] = x->strides[k];
    for (int32_t k = 0; k < indices->rank; k++)
        g.istr[k] = indices->strides[k];
    bool i64 = indices->dtype == BP_I64;
    const char *ip = bpcu_ptr(indices) ? bpcu_ptr(indices) : NULL;
    unsigned nb = bpcu_blocks(g.n);
    switch (bp_dtype_size(x->dtype)) {
    case 1: bpcu_k_gather<uint8_t><<<nb, BPCU_THREADS, 0, d->stream>>>(g, (const uint8_t *)bpcu_ptr(x), ip, i64, (uint8_t *)bpcu_ptr(out)); break;
    case 2: bpcu_k_gather<uint16_t><<<nb, BPCU_THREADS, 0, d->stream>>>(g, (const uint16_t *)bpcu_ptr(x), ip, i64, (uint16_t *)bpcu_ptr(out)); break;
    case 4: bpcu_k_gather<uint32_t><<<nb, BPCU_THREADS, 0, d->stream>>>(g, (const uint32_t *)bpcu_ptr(x), ip, i64, (uint32_t *)bpcu_ptr(out)); break;
    default: bpcu_k_gather<uint64_t><<<nb, BPCU_THREADS, 0, d->stream>>>(g, (const uint64_t *)bpcu_ptr(x), ip, i64, (uint64_t *)bpcu_ptr(out)); break;
    }
    return bpcu_check_launch(d, "gather kernel");
}

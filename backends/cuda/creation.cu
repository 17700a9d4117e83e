/* The creation ops: fill, arange and the counter-based random draws
 * (philox.h), each element's value by the host kernels' own rules
 * (backends/kernels/creation_rules.h, compiled for the device), so every
 * element matches the binary backend's. */
#include <string.h>

#include "bpcu.h"
#include "elem.h"
#include "../kernels/creation_rules.h"

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
    cudaError_t e = cudaSuccess;
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "fill", out, {});
    if (in.status != BP_OK)
        return in.status;
    const bp_view *vs[1] = {out};
    bpcu_ix ix = bpcu_collapse(1, vs);
    if (ix.n == 0)
        return BP_OK;
    unsigned nb = bpcu_blocks(ix.n);
    const uint64_t v = bpk_fill_bits(out->dtype, value);
    void *o = bpcu_ptr(out);
    switch (bp_dtype_size(out->dtype)) {
    case 1: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_fill<uint8_t>, ix, (uint8_t *)o, (uint8_t)v); break;
    case 2: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_fill<uint16_t>, ix, (uint16_t *)o, (uint16_t)v); break;
    case 4: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_fill<uint32_t>, ix, (uint32_t *)o, (uint32_t)v); break;
    case 8: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_fill<uint64_t>, ix, (uint64_t *)o, v); break;
    default:
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: fill not implemented for %s",
                         bp_dtype_name(out->dtype));
    }
    return bpcu_launched(d, e, "fill kernel");
}

__global__ void bpcu_k_arange(int64_t n, char *out, int64_t stride, bp_dtype dt, double start,
                              double step)
{
    int64_t es = (int64_t)bp_dtype_size(dt);
    BPCU_FOR(i, n)
        bp_elem_store_f64(dt, out + i * stride * es, bpk_arange_at(start, step, i));
}

bp_status bpcu_arange(void *dev, double start, double step, const bp_view *out)
{
    cudaError_t e = cudaSuccess;
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "arange", out, {});
    if (in.status != BP_OK)
        return in.status;
    int64_t n = out->rank > 0 ? out->shape[0] : 1;
    if (n == 0)
        return BP_OK;
    e = bpcu_launch(d->stream, bpcu_blocks(n), BPCU_THREADS, 0, bpcu_k_arange,
        n, bpcu_ptr(out), out->rank > 0 ? out->strides[0] : 0, out->dtype, start, step);
    return bpcu_launched(d, e, "arange kernel");
}

/* Element i (row-major; collapsing keeps that order) draws position offset + i. */
__global__ void bpcu_k_random(bpcu_ix ix, char *out, bp_dtype dt, bool normal, uint64_t seed,
                              uint64_t offset, double p0, double p1)
{
    int64_t off[1], es = (int64_t)bp_dtype_size(dt);
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<1>(ix, i, off);
        uint64_t p = offset + (uint64_t)i;
        double v = normal ? bpk_normal_at(p0, p1, bp_philox_normal01(seed, p))
                          : bpk_uniform_at(p0, p1, bp_philox_uniform01(seed, p));
        bp_elem_store_f64(dt, out + off[0] * es, v);
    }
}

bp_status bpcu_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                      const bp_view *out)
{
    cudaError_t e = cudaSuccess;
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, bp_op_name(op), out, {});
    if (in.status != BP_OK)
        return in.status;
    if (op != BP_OP_RANDOM_NORMAL && op != BP_OP_RANDOM_UNIFORM)
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s is not a random op", bp_op_name(op));
    const bp_view *vs[1] = {out};
    bpcu_ix ix = bpcu_collapse(1, vs);
    if (ix.n == 0)
        return BP_OK;
    e = bpcu_launch(d->stream, bpcu_blocks(ix.n), BPCU_THREADS, 0, bpcu_k_random,
        ix, bpcu_ptr(out), out->dtype, op == BP_OP_RANDOM_NORMAL, seed, offset, p0, p1);
    return bpcu_launched(d, e, "random kernel");
}

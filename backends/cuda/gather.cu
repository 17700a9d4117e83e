/* GATHER (ONNX Gather): out = x.take(indices, axis). The indices are
 * checked on the device (checks.h): one out of range gives zero elements
 * and a deferred BP_ERR_INDEX, reported at the next synchronising call;
 * gather itself never waits. */
#include <string.h>

#include "checks.h"
#include "elem.h"

typedef struct bpcu_gather_args {
    int32_t orank, axis, irank, xrank;
    int64_t n, dim;
    int64_t oshape[BP_MAX_RANK], ostr[BP_MAX_RANK];
    int64_t xstr[BP_MAX_RANK], istr[BP_MAX_RANK];
    int64_t iflat[BP_MAX_RANK];    /* row-major strides of indices' shape: flat positions */
} bpcu_gather_args;

template <class T>
__global__ void bpcu_k_gather(bpcu_gather_args g, const T *x, const char *idx, bool i64, T *out,
                              unsigned long long *bad)
{
    BPCU_FOR(i, g.n) {
        int64_t c[BP_MAX_RANK], r = i;
        for (int32_t k = g.orank - 1; k >= 0; k--) {
            c[k] = r % g.oshape[k];
            r /= g.oshape[k];
        }
        int64_t oo = 0, xo = 0, io = 0, flat = 0;
        for (int32_t k = 0; k < g.orank; k++)
            oo += c[k] * g.ostr[k];
        for (int32_t k = 0; k < g.axis; k++)
            xo += c[k] * g.xstr[k];
        for (int32_t k = 0; k < g.irank; k++) {
            io += c[g.axis + k] * g.istr[k];
            flat += c[g.axis + k] * g.iflat[k];
        }
        int64_t j = i64 ? ((const int64_t *)idx)[io] : (int64_t)((const int32_t *)idx)[io];
        if (!bpcu_index_ok(&j, g.dim, flat, bad)) {
            out[oo] = (T)0;
            continue;
        }
        xo += j * g.xstr[g.axis];
        for (int32_t k = g.axis + 1; k < g.xrank; k++)
            xo += c[k - 1 + g.irank] * g.xstr[k];
        out[oo] = x[xo];
    }
}

bp_status bpcu_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                      const bp_view *out)
{
    cudaError_t e = cudaSuccess;
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "gather", out, {x, indices});
    if (in.status != BP_OK)
        return in.status;
    bpcu_gather_args g;
    memset(&g, 0, sizeof g);
    g.orank = out->rank, g.axis = axis, g.irank = indices->rank, g.xrank = x->rank;
    g.n = bpcu_numel(out);
    g.dim = x->shape[axis];
    if (g.n == 0) { /* nothing to gather, but a bad index is still reported */
        if (bpcu_numel(indices) == 0)
            return BP_OK;
        bpcu_index_check chk(d, BP_OP_GATHER);
        return chk.status != BP_OK ? chk.status
                                   : chk.check_all(indices, 1, &x->shape[axis], axis);
    }
    for (int32_t k = 0; k < out->rank; k++)
        g.oshape[k] = out->shape[k], g.ostr[k] = out->strides[k];
    for (int32_t k = 0; k < x->rank; k++)
        g.xstr[k] = x->strides[k];
    int64_t flat = 1;
    for (int32_t k = indices->rank - 1; k >= 0; k--) {
        g.istr[k] = indices->strides[k];
        g.iflat[k] = flat;
        flat *= indices->shape[k];
    }
    bool i64 = indices->dtype == BP_I64;
    const char *ip = bpcu_ptr(indices);
    unsigned nb = bpcu_blocks(g.n);
    bpcu_index_check chk(d, BP_OP_GATHER);
    if (chk.status != BP_OK)
        return chk.status;
    unsigned long long *bad = chk.bad();
    switch (bp_dtype_size(x->dtype)) {
    case 1: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_gather<uint8_t>, g, (const uint8_t *)bpcu_ptr(x), ip, i64, (uint8_t *)bpcu_ptr(out), bad); break;
    case 2: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_gather<uint16_t>, g, (const uint16_t *)bpcu_ptr(x), ip, i64, (uint16_t *)bpcu_ptr(out), bad); break;
    case 4: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_gather<uint32_t>, g, (const uint32_t *)bpcu_ptr(x), ip, i64, (uint32_t *)bpcu_ptr(out), bad); break;
    default: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_gather<uint64_t>, g, (const uint64_t *)bpcu_ptr(x), ip, i64, (uint64_t *)bpcu_ptr(out), bad); break;
    }
    bp_status st = chk.commit(indices, 1, &x->shape[axis], axis);
    return e != cudaSuccess ? bpcu_launched(d, e, "gather kernel") : st;
}

/* TRILU (ONNX Trilu): the upper (p.i[0]) or lower triangle of the last two
 * axes from diagonal k (p.i[1]), zero elsewhere. An element (row i, column
 * j) is kept when j - i >= k (upper) or j - i <= k (lower). Zero is the
 * all-zero bit pattern in every dtype, bool included. */
#include "op.h"

template <class T>
__global__ void bpcu_k_trilu(bpcu_ix ix, int64_t rows, int64_t cols, bool upper, int64_t k,
                             const T *x, T *out)
{
    int64_t off[2];
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<2>(ix, i, off);
        int64_t j = i % cols, r = (i / cols) % rows;
        bool keep = upper ? j - r >= k : j - r <= k;
        out[off[0]] = keep ? x[off[1]] : (T)0;
    }
}

bp_status bpcu_op_trilu(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *out = c->out[0];
    int32_t r = x->rank;
    if (r < 2)
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: trilu needs rank >= 2, not %d", (int)r);
    const bp_view *vs[2] = {out, x};
    bpcu_ix ix = bpcu_collapse(2, vs); /* row-major order kept: i still names (.., row, col) */
    if (ix.n == 0)
        return BP_OK;
    int64_t rows = x->shape[r - 2], cols = x->shape[r - 1];
    bool upper = c->p.i[0] != 0;
    int64_t k = c->p.i[1];
    unsigned nb = bpcu_blocks(ix.n);
    cudaError_t e;
    switch (bp_dtype_size(x->dtype)) {
    case 1: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_trilu<uint8_t>, ix, rows, cols, upper, k, (const uint8_t *)bpcu_ptr(x), (uint8_t *)bpcu_ptr(out)); break;
    case 2: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_trilu<uint16_t>, ix, rows, cols, upper, k, (const uint16_t *)bpcu_ptr(x), (uint16_t *)bpcu_ptr(out)); break;
    case 4: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_trilu<uint32_t>, ix, rows, cols, upper, k, (const uint32_t *)bpcu_ptr(x), (uint32_t *)bpcu_ptr(out)); break;
    default: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_trilu<uint64_t>, ix, rows, cols, upper, k, (const uint64_t *)bpcu_ptr(x), (uint64_t *)bpcu_ptr(out)); break;
    }
    return bpcu_launched(d, e, "trilu kernel");
}

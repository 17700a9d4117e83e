/* HARDMAX along the last axis (opcodes.h: the core moves the axis there):
 * 1 at the first maximum of each row, 0 elsewhere (ONNX Hardmax). The
 * winner is ARGMAX's (reduce.cu, into scratch): the first index on ties, and
 * a row with a NaN marks its first NaN, as argmax does. */
#include "op.h"

/* out (row-major index i = row * n + j, offsets from its collapse) */
template <class S>
__global__ void bpcu_k_hardmax(bpcu_ix ox, int64_t n, const int64_t *win, S *out)
{
    int64_t off[1];
    BPCU_FOR(i, ox.n) {
        bpcu_offsets<1>(ox, i, off);
        out[off[0]] = bpcu_ft<S>::std_(i % n == win[i / n] ? 1.0 : 0.0);
    }
}

bp_status bpcu_op_hardmax(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *out = c->out[0];
    int64_t total = bpcu_numel(out);
    if (total == 0)
        return BP_OK;
    bpcu_rows rows = bpcu_rows_of(x);
    int64_t n = x->rank > 0 ? x->shape[x->rank - 1] : 1;
    /* the winners: ARGMAX of x's last axis into a dense i64 scratch of the rows */
    bpcu_buf wb = bpcu_buf();
    wb.bytes = (size_t)rows.count * sizeof(int64_t);
    bp_status st = bpcu_scratch(d, wb.bytes, &wb.ptr);
    if (st != BP_OK)
        return st;
    bp_view wv;
    memset(&wv, 0, sizeof wv);
    wv.struct_size = sizeof wv;
    wv.buffer = &wb;
    wv.dtype = BP_I64;
    wv.rank = rows.lead;
    int64_t stride = 1;
    for (int32_t k = rows.lead - 1; k >= 0; k--) {
        wv.shape[k] = rows.shape[k];
        wv.strides[k] = stride;
        stride *= rows.shape[k];
    }
    bp_view xv = *x;
    if (x->rank == 0) { /* one element: a row of one */
        xv.rank = 1;
        xv.shape[0] = 1;
        xv.strides[0] = 1;
    }
    st = bpcu_reduce_run(d, BP_OP_ARGMAX, &xv, 1, &wv);
    if (st == BP_OK) {
        const bp_view *vs[1] = {out};
        bpcu_ix ox = bpcu_collapse(1, vs);
        cudaError_t e = cudaSuccess;
        BPCU_DISPATCH_FLOAT(out->dtype,
                            e = bpcu_launch(d->stream, bpcu_blocks(total), BPCU_THREADS, 0,
                                            bpcu_k_hardmax<T>, ox, n, (const int64_t *)wb.ptr,
                                            (T *)bpcu_ptr(out)));
        st = bpcu_launched(d, e, "hardmax kernel");
    }
    bpcu_scratch_free(d, wb.ptr);
    return st;
}

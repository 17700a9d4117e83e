/* ONE_HOT (ONNX OneHot): in indices (numeric; floats truncated toward
 * zero) and values (off, on), out of values' dtype with the depth axis
 * last (the core permutes it there), p.i[0] depth. out[p, t] = on where
 * indices[p], counted from the end when negative, is t; off elsewhere, and
 * in the whole row of an index outside [-depth, depth) (NaN included):
 * ONNX leaves those rows off, so there is nothing to report. */
#include "op.h"

template <class T>
__global__ void bpcu_k_one_hot(bpcu_ix ox, bpcu_ix ixv, int64_t depth, const char *idx,
                               bp_dtype idt, const T *values, int64_t vstride, T *out)
{
    int64_t off[1], io[1];
    int64_t es = (int64_t)bp_dtype_size(idt);
    T on = values[vstride], offv = values[0];
    BPCU_FOR(i, ox.n) {
        bpcu_offsets<1>(ox, i, off);
        int64_t p = i / depth, t = i - p * depth;
        bpcu_offsets<1>(ixv, p, io);
        const char *at = idx + io[0] * es;
        int64_t j = -1;
        if (bp_dtype_is_float(idt)) {
            double v = trunc(bp_elem_load_f64(idt, at));
            if (v >= -(double)depth && v < (double)depth)
                j = (int64_t)v;
            else
                j = depth; /* never a column */
        } else {
            j = bp_elem_load_i64(idt, at);
            if (j < -depth || j >= depth)
                j = depth;
        }
        if (j < 0)
            j += depth;
        out[off[0]] = j == t ? on : offv;
    }
}

bp_status bpcu_op_one_hot(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *ind = c->in[0], *values = c->in[1], *out = c->out[0];
    int64_t depth = c->p.i[0];
    if (depth < 1 || out->rank != ind->rank + 1 || out->shape[out->rank - 1] != depth ||
        values->rank != 1 || values->shape[0] != 2)
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: one_hot: depth %lld, indices of rank "
                         "%d, out of rank %d and values of rank %d do not fit", (long long)depth,
                         (int)ind->rank, (int)out->rank, (int)values->rank);
    const bp_view *vo[1] = {out}, *vi[1] = {ind};
    bpcu_ix ox = bpcu_collapse(1, vo), ixv = bpcu_collapse(1, vi);
    if (ox.n == 0)
        return BP_OK;
    unsigned nb = bpcu_blocks(ox.n);
    const char *ip = bpcu_ptr(ind);
    int64_t vs = values->strides[0];
    cudaError_t e;
    switch (bp_dtype_size(out->dtype)) {
    case 1: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_one_hot<uint8_t>, ox, ixv, depth, ip, ind->dtype, (const uint8_t *)bpcu_ptr(values), vs, (uint8_t *)bpcu_ptr(out)); break;
    case 2: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_one_hot<uint16_t>, ox, ixv, depth, ip, ind->dtype, (const uint16_t *)bpcu_ptr(values), vs, (uint16_t *)bpcu_ptr(out)); break;
    case 4: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_one_hot<uint32_t>, ox, ixv, depth, ip, ind->dtype, (const uint32_t *)bpcu_ptr(values), vs, (uint32_t *)bpcu_ptr(out)); break;
    default: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_one_hot<uint64_t>, ox, ixv, depth, ip, ind->dtype, (const uint64_t *)bpcu_ptr(values), vs, (uint64_t *)bpcu_ptr(out)); break;
    }
    return bpcu_launched(d, e, "one_hot kernel");
}

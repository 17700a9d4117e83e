/* GATHER_ELEMENTS and GATHER_ND (ONNX GatherElements, GatherND): elements
 * moved by index, copied as bytes. The core has checked every index (unless
 * the plugin defers: devsim checks them before calling these); negative
 * ones count from the end of their axis. */
#include <string.h>

#include "binary.h"

static inline int64_t load_index(const bp_view *v, int64_t at)
{
    const char *p = bpb_base(v) + at * (int64_t)bp_dtype_size(v->dtype);
    return v->dtype == BP_I32 ? *(const int32_t *)p : *(const int64_t *)p;
}

/* out[i] = x[i with its axis coordinate replaced by indices[i]]: out,
 * indices and x (x's strides, 0 along the axis) walked together. */
static void gather_elements(const bp_view *x, const bp_view *ind, int32_t axis,
                            const bp_view *out)
{
    size_t es = bp_dtype_size(x->dtype);
    bp_view xv = *ind;
    xv.dtype = x->dtype;
    xv.buffer = x->buffer;
    xv.offset = x->offset;
    for (int32_t k = 0; k < x->rank; k++)
        xv.strides[k] = k == axis ? 0 : x->strides[k];
    int64_t dim = x->shape[axis], step = x->strides[axis];
    bpb_iter it;
    int64_t pos[3];
    bpb_iter_init(&it, 3, (const bp_view *[]){out, ind, &xv});
    while (bpb_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            int64_t v = load_index(ind, pos[1] + i * it.inner_stride[1]);
            if (v < 0)
                v += dim;
            memcpy(bpb_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)es,
                   bpb_base(x) + (pos[2] + i * it.inner_stride[2] + v * step) * (int64_t)es, es);
        }
}

/* Index tuples (the last axis of indices, m components) address x's axes
 * b .. b + m - 1 after the b batch axes indices shares with x; each copies
 * the block of x's remaining axes to out's trailing axes. */
static void gather_nd(const bp_view *x, const bp_view *ind, int32_t b, const bp_view *out)
{
    size_t es = bp_dtype_size(x->dtype);
    int32_t q = ind->rank - 1, m = (int32_t)ind->shape[q];
    bp_view head[3] = {*out, *x, *ind}; /* the index positions */
    for (int v = 0; v < 3; v++) {
        head[v].rank = q;
        for (int32_t k = 0; k < q; k++) {
            head[v].shape[k] = ind->shape[k];
            head[v].strides[k] = v == 0 ? out->strides[k]
                                 : v == 1 ? (k < b ? x->strides[k] : 0)
                                          : ind->strides[k];
        }
    }
    bp_view tail[2] = {*out, *x}; /* x's axes after b + m, out's after q */
    int32_t nt = x->rank - b - m;
    for (int v = 0; v < 2; v++) {
        tail[v].rank = nt;
        for (int32_t k = 0; k < nt; k++) {
            tail[v].shape[k] = x->shape[b + m + k];
            tail[v].strides[k] = v == 0 ? out->strides[q + k] : x->strides[b + m + k];
        }
    }
    bpb_iter t0;
    bpb_iter_init(&t0, 2, (const bp_view *[]){&tail[0], &tail[1]});
    bpb_iter it;
    int64_t pos[3];
    bpb_iter_init(&it, 3, (const bp_view *[]){&head[0], &head[1], &head[2]});
    while (bpb_iter_next(&it, pos))
        for (int64_t h = 0; h < it.inner; h++) {
            int64_t src = pos[1] + h * it.inner_stride[1];
            int64_t at = pos[2] + h * it.inner_stride[2];
            for (int32_t j = 0; j < m; j++) {
                int64_t v = load_index(ind, at + j * ind->strides[q]);
                if (v < 0)
                    v += x->shape[b + j];
                src += v * x->strides[b + j];
            }
            char *dst = bpb_base(out) + (pos[0] + h * it.inner_stride[0]) * (int64_t)es;
            bpb_iter t = t0;
            int64_t tp[2];
            while (bpb_iter_next(&t, tp))
                for (int64_t i = 0; i < t.inner; i++)
                    memcpy(dst + (tp[0] + i * t.inner_stride[0]) * (int64_t)es,
                           bpb_base(x) + (src + tp[1] + i * t.inner_stride[1]) * (int64_t)es, es);
        }
}

bp_status bpb_op_gather_more(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                             const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)dev, (void)n_in, (void)n_out;
    if (bpb_numel(out_v[0]) == 0)
        return BP_OK;
    if (op == BP_OP_GATHER_ELEMENTS)
        gather_elements(in[0], in[1], (int32_t)p->i[0], out_v[0]);
    else
        gather_nd(in[0], in[1], (int32_t)p->i[0], out_v[0]);
    return BP_OK;
}

/* GATHER (ONNX Gather): out[pre, j..., post] = x[pre, indices[j...], post].
 * The binary backend's walk, split over the head positions per thread.
 *
 * out's leading axis + indices.rank axes (the "head") are walked with three
 * views of the same shape: out, x (stride 0 on the index axes) and indices
 * (stride 0 on the pre axes). Each head position then copies one block of
 * x's trailing axes, moved as raw elements of the dtype's size. */
#include <string.h>

#include "blas_cpu.h"

static int64_t load_index(bp_dtype dt, const char *p)
{
    return dt == BP_I32 ? *(const int32_t *)p : *(const int64_t *)p;
}

#define COPY_RUN(T)                                                   \
    for (int64_t i = 0; i < n; i++)                                   \
        ((T *)dst)[i * sd] = ((const T *)src)[i * ss]

static void copy_run(size_t esz, char *dst, int64_t sd, const char *src, int64_t ss, int64_t n)
{
    switch (esz) {
    case 1: COPY_RUN(uint8_t); break;
    case 2: COPY_RUN(uint16_t); break;
    case 4: COPY_RUN(uint32_t); break;
    default: COPY_RUN(uint64_t); break;
    }
}

typedef struct gather_ctx {
    const bp_view *x, *indices, *out;
    bp_view hv[3];
    bpc_iter tail0;
    int64_t dim, xstep;
    size_t esz, isz;
} gather_ctx;

static void gather_run(void *p, int64_t lo, int64_t hi)
{
    const gather_ctx *c = p;
    bpc_cursor cur;
    int64_t pos[3], n;
    bpc_cursor_init(&cur, 3, (const bp_view *[]){&c->hv[0], &c->hv[1], &c->hv[2]}, lo, hi);
    while (bpc_cursor_next(&cur, pos, &n))
        for (int64_t h = 0; h < n; h++) {
            int64_t idx = load_index(c->indices->dtype,
                                     bpc_base(c->indices) +
                                         (pos[2] + h * cur.it.inner_stride[2]) * (int64_t)c->isz);
            if (idx < 0)
                idx += c->dim;
            char *dst = bpc_base(c->out) + (pos[0] + h * cur.it.inner_stride[0]) * (int64_t)c->esz;
            const char *src = bpc_base(c->x) +
                              (pos[1] + h * cur.it.inner_stride[1] + idx * c->xstep) * (int64_t)c->esz;
            bpc_cursor t;
            int64_t tp[2], tn;
            bpc_cursor_from(&t, &c->tail0, 0, INT64_MAX);
            while (bpc_cursor_next(&t, tp, &tn))
                copy_run(c->esz, dst + tp[0] * (int64_t)c->esz, t.it.inner_stride[0],
                         src + tp[1] * (int64_t)c->esz, t.it.inner_stride[1], tn);
        }
}

bp_status bpc_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                     const bp_view *out)
{
    if (bpc_numel(out) == 0)
        return BP_OK;
    gather_ctx c = {.x = x, .indices = indices, .out = out};
    int32_t ir = indices->rank, head = axis + ir;
    c.dim = x->shape[axis];
    c.xstep = x->strides[axis];
    c.esz = bp_dtype_size(x->dtype);
    c.isz = bp_dtype_size(indices->dtype);
    c.hv[0] = *out, c.hv[1] = *x, c.hv[2] = *indices;
    for (int v = 0; v < 3; v++) {
        c.hv[v].rank = head;
        for (int32_t k = 0; k < head; k++) {
            c.hv[v].shape[k] = out->shape[k];
            bool pre = k < axis;
            c.hv[v].strides[k] = v == 0 ? out->strides[k]
                                 : v == 1 ? (pre ? x->strides[k] : 0)
                                          : (pre ? 0 : indices->strides[k - axis]);
        }
    }
    /* the trailing block: x's axes after `axis`, out's after the head */
    bp_view tv[2] = {*out, *x};
    int32_t tail = x->rank - axis - 1;
    int64_t block = 1;
    for (int v = 0; v < 2; v++) {
        tv[v].rank = tail;
        for (int32_t k = 0; k < tail; k++) {
            tv[v].shape[k] = x->shape[axis + 1 + k];
            tv[v].strides[k] = v == 0 ? out->strides[head + k] : x->strides[axis + 1 + k];
        }
    }
    for (int32_t k = 0; k < tail; k++)
        block *= x->shape[axis + 1 + k];
    bpc_iter_init(&c.tail0, 2, (const bp_view *[]){&tv[0], &tv[1]});
    int64_t heads = bpc_numel(&c.hv[0]);
    /* the grain counts heads: a head moves `block` elements */
    int64_t grain = BPC_GRAIN_LIGHT / (block > 0 ? block : 1);
    bpc_parallel(dev, heads, grain > 1 ? grain : 1, gather_run, &c);
    return BP_OK;
}

/* The gathers: GATHER (ONNX Gather), then GATHER_ELEMENTS and GATHER_ND.
 *
 * GATHER: out[pre, j..., post] = x[pre, indices[j...], post].
 *
 * out's leading axis + indices.rank axes (the "head") are walked with three
 * views of the same shape: out, x (stride 0 on the index axes) and indices
 * (stride 0 on the pre axes). Each head position then copies one block of
 * x's trailing axes, moved as raw elements of the dtype's size. */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

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

/* Gathering along the last axis with a 1-D index list and dense output rows:
 * out[pre, j] = x[pre, ix[j]], the indices normalised once, then one typed
 * loop per row (the general walk below costs ~5x more per element). */
#define TAKE_ROW(T)                                                                   \
    do {                                                                              \
        T *restrict o = (T *)bpk_base(out) + po;                                      \
        const T *restrict xr = (const T *)bpk_base(x) + px;                           \
        for (int64_t j = 0; j < n; j++)                                               \
            o[j] = xr[ix[j] * xs];                                                    \
    } while (0)

static bool take_last_axis(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                           const bp_view *out, bp_status *st)
{
    int32_t r = x->rank;
    if (axis != r - 1 || indices->rank != 1 || out->strides[r - 1] != 1)
        return false;
    int64_t n = indices->shape[0], dim = x->shape[axis], xs = x->strides[axis];
    int64_t *ix = malloc((size_t)(n > 0 ? n : 1) * sizeof *ix);
    if (!ix) {
        *st = bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "gather: no memory for %lld indices", (long long)n);
        return true;
    }
    size_t isz = bp_dtype_size(indices->dtype), esz = bp_dtype_size(x->dtype);
    for (int64_t j = 0; j < n; j++) {
        int64_t v = load_index(indices->dtype, bpk_base(indices) + j * indices->strides[0] * (int64_t)isz);
        ix[j] = v < 0 ? v + dim : v;
    }
    bp_view rows[2] = {*out, *x}; /* the leading axes, walked together */
    rows[0].rank = rows[1].rank = r - 1;
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){&rows[0], &rows[1]});
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            int64_t po = pos[0] + i * it.inner_stride[0], px = pos[1] + i * it.inner_stride[1];
            switch (esz) {
            case 1: TAKE_ROW(uint8_t); break;
            case 2: TAKE_ROW(uint16_t); break;
            case 4: TAKE_ROW(uint32_t); break;
            default: TAKE_ROW(uint64_t); break;
            }
        }
    free(ix);
    *st = BP_OK;
    return true;
}

/* how many indices ahead a gathered row is prefetched */
#define GATHER_AHEAD 8

bp_status bpk_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                     const bp_view *out)
{
    if (bpk_numel(out) == 0)
        return BP_OK;
    bp_status st;
    if (take_last_axis(dev, x, indices, axis, out, &st))
        return st;
    int32_t ir = indices->rank, head = axis + ir;
    int64_t dim = x->shape[axis], xstep = x->strides[axis];
    size_t esz = bp_dtype_size(x->dtype), isz = bp_dtype_size(indices->dtype);

    bp_view hv[3] = {*out, *x, *indices};
    for (int v = 0; v < 3; v++) {
        hv[v].rank = head;
        for (int32_t k = 0; k < head; k++) {
            hv[v].shape[k] = out->shape[k];
            bool pre = k < axis;
            hv[v].strides[k] = v == 0 ? out->strides[k]
                               : v == 1 ? (pre ? x->strides[k] : 0)
                                        : (pre ? 0 : indices->strides[k - axis]);
        }
    }
    /* the trailing block: x's axes after `axis`, out's after the head */
    bp_view tv[2] = {*out, *x};
    int32_t tail = x->rank - axis - 1;
    for (int v = 0; v < 2; v++) {
        tv[v].rank = tail;
        for (int32_t k = 0; k < tail; k++) {
            tv[v].shape[k] = x->shape[axis + 1 + k];
            tv[v].strides[k] = v == 0 ? out->strides[head + k] : x->strides[axis + 1 + k];
        }
    }
    bpk_iter tail0;
    bpk_iter_init(&tail0, 2, (const bp_view *[]){&tv[0], &tv[1]});
    /* the common case: the block is one dense run in both (or one element),
     * copied with one memcpy, without walking an iterator per index */
    bool dense = tail0.rank == 1 && (tail0.inner == 1 || (tail0.inner_stride[0] == 1 &&
                                                          tail0.inner_stride[1] == 1));
    size_t block = (size_t)tail0.inner * esz;

    bpk_iter it;
    int64_t pos[3];
    bpk_iter_init(&it, 3, (const bp_view *[]){&hv[0], &hv[1], &hv[2]});
    while (bpk_iter_next(&it, pos))
        for (int64_t h = 0; h < it.inner; h++) {
            int64_t idx = load_index(indices->dtype,
                                     bpk_base(indices) + (pos[2] + h * it.inner_stride[2]) * (int64_t)isz);
            if (idx < 0)
                idx += dim;
            char *dst = bpk_base(out) + (pos[0] + h * it.inner_stride[0]) * (int64_t)esz;
            const char *src =
                bpk_base(x) + (pos[1] + h * it.inner_stride[1] + idx * xstep) * (int64_t)esz;
            if (dense && block == esz) { /* one element: no call */
                switch (esz) {
                case 1: *(uint8_t *)dst = *(const uint8_t *)src; break;
                case 2: *(uint16_t *)dst = *(const uint16_t *)src; break;
                case 4: *(uint32_t *)dst = *(const uint32_t *)src; break;
                default: *(uint64_t *)dst = *(const uint64_t *)src; break;
                }
                continue;
            }
            if (dense) {
                /* rows taken in a random order defeat the hardware
                 * prefetcher: ask for the row GATHER_AHEAD indices on
                 * (its first 512 bytes), so that several are in flight */
                if (block >= 64 && h + GATHER_AHEAD < it.inner) {
                    int64_t nx = load_index(
                        indices->dtype,
                        bpk_base(indices) + (pos[2] + (h + GATHER_AHEAD) * it.inner_stride[2]) * (int64_t)isz);
                    if (nx < 0)
                        nx += dim;
                    const char *ps = bpk_base(x) +
                                     (pos[1] + (h + GATHER_AHEAD) * it.inner_stride[1] + nx * xstep) *
                                         (int64_t)esz;
                    for (size_t b = 0; b < block && b < 512; b += 64)
                        __builtin_prefetch(ps + b);
                }
                memcpy(dst, src, block);
                continue;
            }
            bpk_iter t = tail0;
            int64_t tp[2];
            while (bpk_iter_next(&t, tp))
                copy_run(esz, dst + tp[0] * (int64_t)esz, t.inner_stride[0],
                         src + tp[1] * (int64_t)esz, t.inner_stride[1], t.inner);
        }
    return BP_OK;
}

/* ---- GATHER_ELEMENTS and GATHER_ND (ONNX GatherElements, GatherND) ------------
 * Elements moved by index, copied as bytes. The core has checked every
 * index (unless the plugin defers: devsim checks them before calling
 * these); negative ones count from the end of their axis. */

/* Index `at` of an index view (i32 or i64). */
static inline int64_t index_at(const bp_view *v, int64_t at)
{
    return load_index(v->dtype, bpk_base(v) + at * (int64_t)bp_dtype_size(v->dtype));
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
    bpk_iter it;
    int64_t pos[3];
    bpk_iter_init(&it, 3, (const bp_view *[]){out, ind, &xv});
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            int64_t v = index_at(ind, pos[1] + i * it.inner_stride[1]);
            if (v < 0)
                v += dim;
            memcpy(bpk_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)es,
                   bpk_base(x) + (pos[2] + i * it.inner_stride[2] + v * step) * (int64_t)es, es);
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
    bpk_iter t0;
    bpk_iter_init(&t0, 2, (const bp_view *[]){&tail[0], &tail[1]});
    bpk_iter it;
    int64_t pos[3];
    bpk_iter_init(&it, 3, (const bp_view *[]){&head[0], &head[1], &head[2]});
    while (bpk_iter_next(&it, pos))
        for (int64_t h = 0; h < it.inner; h++) {
            int64_t src = pos[1] + h * it.inner_stride[1];
            int64_t at = pos[2] + h * it.inner_stride[2];
            for (int32_t j = 0; j < m; j++) {
                int64_t v = index_at(ind, at + j * ind->strides[q]);
                if (v < 0)
                    v += x->shape[b + j];
                src += v * x->strides[b + j];
            }
            char *dst = bpk_base(out) + (pos[0] + h * it.inner_stride[0]) * (int64_t)es;
            bpk_iter t = t0;
            int64_t tp[2];
            while (bpk_iter_next(&t, tp))
                for (int64_t i = 0; i < t.inner; i++)
                    memcpy(dst + (tp[0] + i * t.inner_stride[0]) * (int64_t)es,
                           bpk_base(x) + (src + tp[1] + i * t.inner_stride[1]) * (int64_t)es, es);
        }
}

bp_status bpk_op_gather_more(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                             const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)dev, (void)n_in, (void)n_out;
    if (bpk_numel(out_v[0]) == 0)
        return BP_OK;
    if (op == BP_OP_GATHER_ELEMENTS)
        gather_elements(in[0], in[1], (int32_t)p->i[0], out_v[0]);
    else
        gather_nd(in[0], in[1], (int32_t)p->i[0], out_v[0]);
    return BP_OK;
}

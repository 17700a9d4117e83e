/* The views a backend receives: dense, broadcast, permuted, reshaped. A view
 * is a window onto a tensor's storage (plugin.h's bp_view); building one
 * never copies data. */
#include <string.h>

#include "internal.h"

/* v zeroed and pointed at t's data, with t's dtype and the given rank */
static void view_of(const bp_tensor *t, int32_t rank, bp_view *v)
{
    memset(v, 0, sizeof *v);
    v->struct_size = sizeof *v;
    v->buffer = t->storage->buffer;
    v->offset = t->offset;
    v->dtype = t->dtype;
    v->rank = rank;
}

void bp__view_dense(const bp_tensor *t, bp_view *v)
{
    view_of(t, t->rank, v);
    int64_t stride = 1;
    for (int32_t k = t->rank - 1; k >= 0; k--) {
        v->shape[k] = t->shape[k];
        v->strides[k] = stride;
        stride *= t->shape[k];
    }
}

void bp__view_broadcast(const bp_tensor *t, int32_t rank, const int64_t *shape, bp_view *v)
{
    /* written in place, not as a dense view copied and patched: every
     * elementwise op makes one per input */
    view_of(t, rank, v);
    int64_t stride = 1;
    for (int32_t k = rank - 1, j = t->rank - 1; k >= 0; k--, j--) {
        v->shape[k] = shape[k];
        bool own = j >= 0 && t->shape[j] == shape[k] && shape[k] != 1;
        v->strides[k] = own ? stride : 0;
        if (j >= 0)
            stride *= t->shape[j];
    }
}

void bp__view_permute(bp_view *v, const int32_t *perm)
{
    int64_t shape[BP_MAX_RANK], strides[BP_MAX_RANK];
    for (int32_t k = 0; k < v->rank; k++) {
        shape[k] = v->shape[perm[k]];
        strides[k] = v->strides[perm[k]];
    }
    memcpy(v->shape, shape, sizeof shape);
    memcpy(v->strides, strides, sizeof strides);
}

/* Row-major strides for (rank, shape), replacing v's geometry (same buffer). */
void bp__view_set_dense(bp_view *v, int32_t rank, const int64_t *shape)
{
    int64_t stride = 1;
    v->rank = rank;
    for (int32_t k = rank - 1; k >= 0; k--) {
        v->shape[k] = shape[k];
        v->strides[k] = stride;
        stride *= shape[k] > 0 ? shape[k] : 1;
    }
}

/* Give v (a dense view of a tensor of `rank`, `shape`, in row-major order)
 * that geometry, right-aligned onto (out_rank, out_shape): missing leading
 * axes and size-1 axes that out extends get stride 0. */
void bp__view_broadcast_as(bp_view *v, int32_t rank, const int64_t *shape, int32_t out_rank,
                              const int64_t *out_shape)
{
    int64_t strides[BP_MAX_RANK], stride = 1;
    for (int32_t k = rank - 1; k >= 0; k--) {
        strides[k] = stride;
        stride *= shape[k] > 0 ? shape[k] : 1;
    }
    v->rank = out_rank;
    for (int32_t k = out_rank - 1, j = rank - 1; k >= 0; k--, j--) {
        v->shape[k] = out_shape[k];
        v->strides[k] = (j >= 0 && shape[j] == out_shape[k]) ? strides[j] : 0;
    }
}

bool bp__view_is_dense(const bp_view *v)
{
    int64_t want = 1;
    for (int32_t k = v->rank - 1; k >= 0; k--) {
        if (v->shape[k] != 1 && v->strides[k] != want)
            return false;
        want *= v->shape[k];
    }
    return true;
}

int64_t bp__view_numel(const bp_view *v)
{
    int64_t n = 1;
    for (int32_t k = 0; k < v->rank; k++)
        n *= v->shape[k];
    return n;
}

/* The strided odometer shared by every binary-backend kernel. */
#include "kernels.h"

void bpk_iter_init(bpk_iter *it, int n, const bp_view *const *views)
{
    const bp_view *v0 = views[0];
    it->n = n;
    it->rank = 0;
    it->started = false;
    it->done = false;
    /* keep only axes of extent != 1; an empty view is done at once */
    for (int32_t k = 0; k < v0->rank; k++) {
        if (v0->shape[k] == 0)
            it->done = true;
        if (v0->shape[k] == 1)
            continue;
        int32_t r = it->rank;
        /* merge with the previous kept axis when contiguous for every view */
        bool merge = r > 0;
        for (int j = 0; merge && j < n; j++)
            merge = it->strides[j][r - 1] == views[j]->strides[k] * v0->shape[k];
        if (merge) {
            it->shape[r - 1] *= v0->shape[k];
            for (int j = 0; j < n; j++)
                it->strides[j][r - 1] = views[j]->strides[k];
            continue;
        }
        it->shape[r] = v0->shape[k];
        for (int j = 0; j < n; j++)
            it->strides[j][r] = views[j]->strides[k];
        it->rank++;
    }
    if (it->rank == 0) { /* a single element */
        it->rank = 1;
        it->shape[0] = 1;
        for (int j = 0; j < n; j++)
            it->strides[j][0] = 0;
    }
    for (int32_t k = 0; k < it->rank; k++)
        it->idx[k] = 0;
    it->inner = it->shape[it->rank - 1];
    for (int j = 0; j < n; j++)
        it->inner_stride[j] = it->strides[j][it->rank - 1];
}

bool bpk_iter_next(bpk_iter *it, int64_t *pos)
{
    if (it->done)
        return false;
    if (it->started) {
        /* advance the outer axes (all but the innermost) */
        int32_t k = it->rank - 2;
        for (; k >= 0; k--) {
            if (++it->idx[k] < it->shape[k])
                break;
            it->idx[k] = 0;
        }
        if (k < 0) {
            it->done = true;
            return false;
        }
    }
    it->started = true;
    for (int j = 0; j < it->n; j++) {
        int64_t p = 0;
        for (int32_t k = 0; k < it->rank - 1; k++)
            p += it->idx[k] * it->strides[j][k];
        pos[j] = p;
    }
    return true;
}

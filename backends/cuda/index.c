/* bpcu_collapse (index.h): plain C, run on the host before each launch. */
#include "index.h"

#include <stdbool.h>
#include <string.h>

bpcu_ix bpcu_collapse(int nv, const bp_view *const *views)
{
    bpcu_ix ix;
    memset(&ix, 0, sizeof ix);
    const bp_view *v0 = views[0];
    ix.n = 1;
    for (int32_t k = 0; k < v0->rank; k++) {
        ix.n *= v0->shape[k];
        if (v0->shape[k] == 1)
            continue;
        int32_t r = ix.rank;
        bool merge = r > 0;
        for (int j = 0; merge && j < nv; j++)
            merge = ix.strides[j][r - 1] == views[j]->strides[k] * v0->shape[k];
        if (merge) {
            ix.shape[r - 1] *= v0->shape[k];
            for (int j = 0; j < nv; j++)
                ix.strides[j][r - 1] = views[j]->strides[k];
            continue;
        }
        ix.shape[r] = v0->shape[k];
        for (int j = 0; j < nv; j++)
            ix.strides[j][r] = views[j]->strides[k];
        ix.rank++;
    }
    if (ix.rank == 0) { /* one element */
        ix.rank = 1;
        ix.shape[0] = 1;
    }
    ix.dense = ix.rank == 1;
    for (int j = 0; j < nv; j++)
        ix.dense = ix.dense && (ix.strides[j][0] == 1 || ix.shape[0] == 1);
    return ix;
}

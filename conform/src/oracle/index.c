/* Row-major indexing and NumPy broadcasting, shared by every array oracle. */
#include "oracle.h"
#include "independent.h"

void cf_unravel(int32_t rank, const int64_t *shape, int64_t flat, int64_t *idx)
{
    for (int32_t k = rank - 1; k >= 0; k--) {
        idx[k] = shape[k] ? flat % shape[k] : 0;
        flat = shape[k] ? flat / shape[k] : 0;
    }
}

int64_t cf_ravel(int32_t rank, const int64_t *shape, const int64_t *idx)
{
    int64_t f = 0;
    for (int32_t k = 0; k < rank; k++)
        f = f * shape[k] + idx[k];
    return f;
}

int64_t cf_bcast_index(int32_t out_rank, const int64_t *idx, int32_t in_rank,
                       const int64_t *in_shape)
{
    int64_t f = 0;
    for (int32_t k = 0; k < in_rank; k++) {
        int64_t i = idx[out_rank - in_rank + k];
        f = f * in_shape[k] + (in_shape[k] == 1 ? 0 : i);
    }
    return f;
}

int32_t cf_broadcast_shape(int n, const cf_array *const *in, int64_t *shape)
{
    int32_t rank = 0;
    for (int k = 0; k < n; k++)
        if (in[k]->rank > rank)
            rank = in[k]->rank;
    for (int32_t d = 0; d < rank; d++) {
        int64_t s = 1;
        for (int k = 0; k < n; k++) {
            int32_t j = d - (rank - in[k]->rank);
            if (j >= 0 && in[k]->shape[j] != 1)
                s = in[k]->shape[j];
        }
        shape[d] = s;
    }
    return rank;
}

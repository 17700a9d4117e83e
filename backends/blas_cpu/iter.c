/* The strided iterator, with a cursor that can start at any element so that
 * each thread walks only its own slice of a view. */
#include "blas_cpu.h"

void bpc_iter_init(bpc_iter *it, int n, const bp_view *const *views)
{
    const bp_view *v0 = views[0];
    it->n = n;
    it->rank = 0;
    it->empty = false;
    /* keep only axes of extent != 1; an empty view has nothing to walk */
    for (int32_t k = 0; k < v0->rank; k++) {
        if (v0->shape[k] == 0)
            it->empty = true;
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
    it->inner = it->shape[it->rank - 1];
    for (int j = 0; j < n; j++)
        it->inner_stride[j] = it->strides[j][it->rank - 1];
}

void bpc_cursor_from(bpc_cursor *c, const bpc_iter *it, int64_t lo, int64_t hi)
{
    int64_t total = 1;
    for (int32_t k = 0; k < it->rank; k++)
        total *= it->shape[k];
    if (hi > total) /* so a caller may ask for "all" with INT64_MAX */
        hi = total;
    c->it = *it;
    c->left = it->empty || hi <= lo ? 0 : hi - lo;
    /* the multi-index of element lo, innermost axis fastest */
    for (int32_t k = it->rank - 1; k >= 0 && c->left > 0; k--) {
        c->idx[k] = lo % it->shape[k];
        lo /= it->shape[k];
    }
}

void bpc_cursor_init(bpc_cursor *c, int n, const bp_view *const *views, int64_t lo, int64_t hi)
{
    bpc_iter it;
    bpc_iter_init(&it, n, views);
    bpc_cursor_from(c, &it, lo, hi);
}

bool bpc_cursor_next(bpc_cursor *c, int64_t *pos, int64_t *len)
{
    if (c->left <= 0)
        return false;
    const bpc_iter *it = &c->it;
    int32_t last = it->rank - 1;
    int64_t run = it->inner - c->idx[last];
    if (run > c->left)
        run = c->left;
    for (int j = 0; j < it->n; j++) {
        int64_t p = 0;
        for (int32_t k = 0; k <= last; k++)
            p += c->idx[k] * it->strides[j][k];
        pos[j] = p;
    }
    *len = run;
    c->left -= run;
    /* advance by run: the innermost index either stays inside the row (the
     * slice ended) or wraps, carrying into the outer axes */
    c->idx[last] += run;
    for (int32_t k = last; k > 0 && c->idx[k] == it->shape[k]; k--) {
        c->idx[k] = 0;
        c->idx[k - 1]++;
    }
    return true;
}

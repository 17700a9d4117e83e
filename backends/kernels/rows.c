/* Helpers of the 1.4 kernels: walking the rows of views along their last
 * axis (the ops along one axis get that axis last from the core), reading
 * index tensors, and element offsets of row-major positions. */
#include "kernels.h"

void bpk_rows_init(bpk_rows *r, int n, const bp_view *const *views)
{
    bp_view lead[BPK_ITER_MAX];
    const bp_view *pv[BPK_ITER_MAX];
    for (int j = 0; j < n; j++) {
        lead[j] = *views[j];
        lead[j].rank = views[j]->rank > 0 ? views[j]->rank - 1 : 0;
        pv[j] = &lead[j];
    }
    /* the leading extents come from views[0]; the others share them */
    for (int j = 1; j < n; j++)
        for (int32_t k = 0; k < lead[0].rank; k++)
            lead[j].shape[k] = lead[0].shape[k];
    bpk_iter_init(&r->it, n, pv);
    r->n = n;
    r->t = 0;
    r->have = false;
}

bool bpk_rows_next(bpk_rows *r)
{
    if (!r->have || ++r->t >= r->it.inner) {
        if (!bpk_iter_next(&r->it, r->pos))
            return false;
        r->have = true;
        r->t = 0;
    }
    for (int j = 0; j < r->n; j++)
        r->at[j] = r->pos[j] + r->t * r->it.inner_stride[j];
    return true;
}

int64_t bpk_offset_of(const bp_view *v, const int64_t *idx)
{
    int64_t at = 0;
    for (int32_t k = 0; k < v->rank; k++)
        at += idx[k] * v->strides[k];
    return at;
}

int64_t bpk_index_at(const bp_view *indices, int64_t i)
{
    /* the position of flat element i, row-major, in the view's strides */
    int64_t at = 0;
    for (int32_t k = indices->rank - 1; k >= 0; k--) {
        int64_t e = indices->shape[k];
        at += (i % e) * indices->strides[k];
        i /= e;
    }
    const char *p = bpk_base(indices) + at * (int64_t)bp_dtype_size(indices->dtype);
    return indices->dtype == BP_I32 ? *(const int32_t *)p : *(const int64_t *)p;
}

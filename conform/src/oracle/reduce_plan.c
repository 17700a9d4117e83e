/* The plan of a reduction (reduce_plan.h), shared by the reduction oracles. */
#include "reduce_plan.h"
#include "independent.h"

void cf_plan_make(const cf_array *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                  cf_plan *p)
{
    bool red[BP_MAX_RANK] = {false};
    for (int32_t d = 0; d < x->rank; d++)
        red[d] = n_axes == 0;
    for (int32_t a = 0; a < n_axes; a++)
        red[axes[a] < 0 ? axes[a] + x->rank : axes[a]] = true;
    int64_t stride[BP_MAX_RANK], s = 1;
    for (int32_t d = x->rank - 1; d >= 0; d--) {
        stride[d] = s;
        s *= x->shape[d] ? x->shape[d] : 1;
    }
    p->krank = p->rrank = p->orank = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        if (red[d]) {
            p->rstride[p->rrank] = stride[d];
            p->rshape[p->rrank++] = x->shape[d];
            if (keepdims)
                p->oshape[p->orank++] = 1;
        } else {
            p->kstride[p->krank] = stride[d];
            p->kshape[p->krank++] = x->shape[d];
            p->oshape[p->orank++] = x->shape[d];
        }
    }
    p->K = cf_numel(p->rrank, p->rshape);
}

int64_t cf_plan_first(const cf_plan *p, int64_t o)
{
    int64_t idx[BP_MAX_RANK], at = 0;
    cf_unravel(p->krank, p->kshape, o, idx);
    for (int32_t j = 0; j < p->krank; j++)
        at += idx[j] * p->kstride[j];
    return at;
}

int64_t cf_plan_term(const cf_plan *p, int64_t base, int64_t r)
{
    int64_t idx[BP_MAX_RANK], at = base;
    cf_unravel(p->rrank, p->rshape, r, idx);
    for (int32_t j = 0; j < p->rrank; j++)
        at += idx[j] * p->rstride[j];
    return at;
}

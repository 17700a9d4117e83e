/* Planning a reduction: which axes are reduced, the permutation that puts
 * them last, and the output's shape (with or without the kept size-1 axes).
 * Every reduction, of ABI 1.0 or later, plans with this. */
#include <string.h>

#include "internal.h"

/* Resolve axes into reduced[k] flags. n_axes == 0: every axis. */
static bp_status resolve_axes(const char *fn, const bp_tensor *x, int32_t n_axes,
                              const int32_t *axes, bool reduced[BP_MAX_RANK])
{
    memset(reduced, 0, BP_MAX_RANK * sizeof reduced[0]);
    if (n_axes < 0 || (n_axes > 0 && axes == NULL))
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: n_axes is %d with axes %s; pass n_axes = 0 (and axes = NULL) to "
                         "reduce every axis, or n_axes > 0 entries in axes",
                         fn, (int)n_axes, axes ? "set" : "NULL");
    if (n_axes == 0) {
        for (int32_t k = 0; k < x->rank; k++)
            reduced[k] = true;
        return BP_OK;
    }
    for (int32_t i = 0; i < n_axes; i++) {
        int32_t ax = 0;
        BP__TRY(bp__normalize_axis(fn, axes[i], x->rank, &ax));
        if (reduced[ax])
            return bp__error(BP_ERR_SHAPE,
                             "%s: axis %d (given as axes[%d] = %d) appears twice; list each "
                             "axis once",
                             fn, (int)ax, (int)i, (int)axes[i]);
        reduced[ax] = true;
    }
    return BP_OK;
}

bp_status bp__reduce_plan_make(const char *fn, const bp_tensor *x, int32_t n_axes,
                               const int32_t *axes, bool keepdims, bp__reduce_plan *pl)
{
    bool reduced[BP_MAX_RANK];
    BP__TRY(resolve_axes(fn, x, n_axes, axes, reduced));
    memset(pl, 0, sizeof *pl);
    pl->kept_count = 1;
    pl->reduce_count = 1;
    /* perm: kept axes first, then reduced, each in order */
    for (int32_t k = 0; k < x->rank; k++) {
        if (!reduced[k]) {
            pl->perm[pl->n_kept] = k;
            pl->kept_shape[pl->n_kept++] = x->shape[k];
            pl->kept_count *= x->shape[k];
            pl->out_shape[pl->out_rank++] = x->shape[k];
        } else {
            pl->reduce_count *= x->shape[k];
            if (keepdims)
                pl->out_shape[pl->out_rank++] = 1;
        }
    }
    for (int32_t k = 0; k < x->rank; k++)
        if (reduced[k])
            pl->perm[pl->n_kept + pl->n_reduce++] = k;
    return BP_OK;
}

void bp__reduce_plan_views(const bp__reduce_plan *pl, const bp_tensor *x, const bp_tensor *res,
                           bp_view *vx, bp_view *vo)
{
    bp__view_dense(x, vx);
    bp__view_permute(vx, pl->perm);
    bp__view_dense(res, vo);
    bp__view_set_dense(vo, pl->n_kept, pl->kept_shape); /* the size-1 keepdims axes dropped */
}

void bp__axis_last_perm(int32_t rank, int32_t axis, int32_t *perm)
{
    int32_t n = 0;
    for (int32_t k = 0; k < rank; k++)
        if (k != axis)
            perm[n++] = k;
    perm[n] = axis;
}

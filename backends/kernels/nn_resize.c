/* Resize (ONNX Resize without a region of interest). Every axis k maps an
 * output index to its taps and weights (resize_taps.h, shared with the cuda
 * kernel) with the axis's scale s = p.f[8 + k]. The output is the sum over
 * the tensor product of the axes' taps (zero weights skipped) in double,
 * rounded once; nearest copies the element's bytes, so it is exact for every
 * dtype. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_nn.h"
#include "resize_taps.h"

/* Per axis, the taps of every output index. */
typedef struct plan {
    bpk_taps *axis[BP_MAX_RANK];
} plan;

static void plan_free(plan *pl, int32_t rank)
{
    for (int32_t k = 0; k < rank; k++)
        free(pl->axis[k]);
}

static bp_status plan_new(void *dev, const bp_op_params *p, const bp_view *x, const bp_view *y,
                          plan *pl)
{
    memset(pl, 0, sizeof *pl);
    const bpk_resize_axis ax = {(int)p->i[0], (int)p->i[1], (int)p->i[2], p->i[3] != 0, p->f[0]};
    for (int32_t k = 0; k < y->rank; k++) {
        pl->axis[k] = malloc((size_t)(y->shape[k] > 0 ? y->shape[k] : 1) * sizeof(bpk_taps));
        if (!pl->axis[k]) {
            plan_free(pl, k);
            return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "resize: out of memory for the taps");
        }
        for (int64_t o = 0; o < y->shape[k]; o++)
            bpk_resize_taps(&ax, x->shape[k], y->shape[k], p->f[8 + k], o, &pl->axis[k][o]);
    }
    return BP_OK;
}

/* Output element e: the weighted sum over its taps (nearest: the one tap's
 * bytes). */
static void one(const plan *pl, bool nearest, const bp_view *x, const bp_view *y, int64_t e)
{
    const int32_t r = y->rank;
    const bpk_taps *t[BP_MAX_RANK];
    int64_t rest = e;
    for (int32_t k = r - 1; k >= 0; k--) {
        t[k] = &pl->axis[k][rest % y->shape[k]];
        rest /= y->shape[k];
    }
    const int64_t es = (int64_t)bp_dtype_size(x->dtype);
    char *dst = bpk_elem_at(y, e);
    if (nearest) {
        int64_t off = 0;
        for (int32_t k = 0; k < r; k++)
            off += t[k]->idx[0] * x->strides[k];
        memcpy(dst, bpk_base(x) + off * es, (size_t)es);
        return;
    }
    int j[BP_MAX_RANK] = {0};
    double acc = 0;
    for (;;) {
        double w = 1;
        int64_t off = 0;
        for (int32_t k = 0; k < r; k++) {
            w *= t[k]->w[j[k]];
            off += t[k]->idx[j[k]] * x->strides[k];
        }
        if (w != 0.0)
            acc += w * bp_elem_load_f64(x->dtype, bpk_base(x) + off * es);
        int32_t k = r - 1;
        while (k >= 0 && ++j[k] == t[k]->n)
            j[k--] = 0;
        if (k < 0)
            break;
    }
    bp_elem_store_f64(y->dtype, dst, acc);
}

bp_status bpk_resize_elems(void *dev, const bp_op_params *p, const bp_view *x, const bp_view *y,
                           int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return BP_OK;
    plan pl;
    BPK_TRY(plan_new(dev, p, x, y, &pl));
    for (int64_t e = lo; e < hi; e++)
        one(&pl, p->i[0] == 0, x, y, e);
    plan_free(&pl, y->rank);
    return BP_OK;
}

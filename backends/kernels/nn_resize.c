/* Resize (ONNX Resize without a region of interest). Every axis k maps an
 * output index o to a coordinate in x by the coordinate transformation, with
 * the axis's scale s = p.f[8 + k] and the output length L = s D (ONNX's
 * output_width: a real number when scales are given):
 *   half_pixel (o + 0.5) / s - 0.5     asymmetric o / s
 *   align_corners o (D - 1) / (L - 1), 0 when L is 1
 *   pytorch_half_pixel as half_pixel, 0 when L is 1
 *   tf_half_pixel_for_nn (o + 0.5) / s
 * then to taps and weights: nearest one tap (rounded by the nearest mode),
 * linear two (floor, floor + 1), cubic four (floor - 1 .. floor + 2, ONNX's
 * cubic convolution with coefficient a). Taps outside x take the edge
 * element (ONNX's edge padding), or, cubic with exclude_outside, weight 0
 * with the rest renormalised. The output is the sum over the tensor product
 * of the axes' taps (zero weights skipped) in double, rounded once; nearest
 * copies the element's bytes, so it is exact for every dtype. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_nn.h"

typedef struct taps {
    int64_t idx[4];
    double w[4];
    int n;
} taps;

static double coordinate(int mode, double o, double s, int64_t in, int64_t out)
{
    double len = s * (double)in;
    if (fabs(len - (double)out) <= 1e-12 * len) /* s came from sizes: L is the size */
        len = (double)out;
    switch (mode) {
    case 1: return o / s;                                              /* asymmetric */
    case 2: return len == 1.0 ? 0.0 : o * (double)(in - 1) / (len - 1.0); /* align_corners */
    case 3: return len == 1.0 ? 0.0 : (o + 0.5) / s - 0.5;             /* pytorch_half_pixel */
    case 4: return (o + 0.5) / s;                                      /* tf_half_pixel_for_nn */
    default: return (o + 0.5) / s - 0.5;                               /* half_pixel */
    }
}

static double cubic(double a, double t) /* the kernel at distance t in [0, 2] */
{
    if (t <= 1.0)
        return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
}

static int64_t clamp(int64_t i, int64_t in) { return i < 0 ? 0 : i >= in ? in - 1 : i; }

static void axis_taps(const bp_op_params *p, int64_t in, int64_t out, double s, int64_t o,
                      taps *t)
{
    const double x = coordinate((int)p->i[1], (double)o, s, in, out);
    const double fl = floor(x), r = x - fl;
    const int64_t base = (int64_t)fl;
    if (p->i[0] == 0) { /* nearest */
        int64_t i;
        switch (p->i[2]) {
        case 1: i = r < 0.5 ? base : base + 1; break;   /* round_prefer_ceil */
        case 2: i = base; break;                        /* floor */
        case 3: i = (int64_t)ceil(x); break;            /* ceil */
        default: i = r <= 0.5 ? base : base + 1; break; /* round_prefer_floor */
        }
        t->n = 1;
        t->idx[0] = clamp(i, in);
        t->w[0] = 1.0;
        return;
    }
    if (p->i[0] == 1) { /* linear */
        t->n = 2;
        t->idx[0] = base;
        t->idx[1] = base + 1;
        t->w[0] = 1.0 - r;
        t->w[1] = r;
    } else { /* cubic */
        const double a = p->f[0];
        t->n = 4;
        for (int j = 0; j < 4; j++)
            t->idx[j] = base - 1 + j;
        t->w[0] = cubic(a, r + 1.0);
        t->w[1] = cubic(a, r);
        t->w[2] = cubic(a, 1.0 - r);
        t->w[3] = cubic(a, 2.0 - r);
    }
    double sum = 0;
    for (int j = 0; j < t->n; j++) {
        bool outside = t->idx[j] < 0 || t->idx[j] >= in;
        if (outside && p->i[3] && p->i[0] == 2)
            t->w[j] = 0.0;
        sum += t->w[j];
        t->idx[j] = clamp(t->idx[j], in);
    }
    if (p->i[3] && p->i[0] == 2)
        for (int j = 0; j < t->n; j++)
            t->w[j] /= sum;
}

/* Per axis, the taps of every output index. */
typedef struct plan {
    taps *axis[BP_MAX_RANK];
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
    for (int32_t k = 0; k < y->rank; k++) {
        pl->axis[k] = malloc((size_t)(y->shape[k] > 0 ? y->shape[k] : 1) * sizeof(taps));
        if (!pl->axis[k]) {
            plan_free(pl, k);
            return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "resize: out of memory for the taps");
        }
        for (int64_t o = 0; o < y->shape[k]; o++)
            axis_taps(p, x->shape[k], y->shape[k], p->f[8 + k], o, &pl->axis[k][o]);
    }
    return BP_OK;
}

/* Output element e: the weighted sum over its taps (nearest: the one tap's
 * bytes). */
static void one(const plan *pl, bool nearest, const bp_view *x, const bp_view *y, int64_t e)
{
    const int32_t r = y->rank;
    const taps *t[BP_MAX_RANK];
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

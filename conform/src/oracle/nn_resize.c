/* Resize as onnx/reference/ops/op_resize.py computes it, per axis:
 *   the original coordinate x of output index o (scale s, input length D,
 *   output length L = s D, or the size when sizes are given):
 *     half_pixel (o + 0.5) / s - 0.5; asymmetric o / s; align_corners
 *     o (D - 1) / (L - 1), 0 when L is 1; pytorch_half_pixel like half_pixel,
 *     0 when L is 1 (nn.h; ONNX's reference says -0.5); tf_half_pixel_for_nn
 *     (o + 0.5) / s;
 *   ratio = x - floor(x), or 1 when x is whole; the n nearest positions of
 *   the edge-padded input (ties to the smaller: ceil(x) - n/2 on), with
 *   coefficients nearest [ratio <= 0.5, ratio > 0.5] (prefer_ceil: < and >=,
 *   floor [1, 0], ceil [0, 1]; whole x: [0, 1]), linear [1 - ratio, ratio],
 *   cubic Keys' kernel with coefficient a (exclude_outside: positions outside
 *   the input weigh 0 and the rest are renormalised);
 * then the sum over the axes' tensor product of positions (zero weights
 * skipped, as the library does), in long double. terms: sum |w x|, k the
 * positions summed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "independent.h"

typedef struct axis_w {
    int n;
    int64_t idx[4];
    double w[4];
} axis_w;

static double original(const bp_resize_options *o, double out_i, double s, double L, int64_t D)
{
    switch (o->coordinates) {
    case BP_RESIZE_ASYMMETRIC: return out_i / s;
    case BP_RESIZE_ALIGN_CORNERS: return L == 1.0 ? 0.0 : out_i * (double)(D - 1) / (L - 1.0);
    case BP_RESIZE_PYTORCH_HALF_PIXEL: return L == 1.0 ? 0.0 : (out_i + 0.5) / s - 0.5;
    case BP_RESIZE_TF_HALF_PIXEL_FOR_NN: return (out_i + 0.5) / s;
    default: return (out_i + 0.5) / s - 0.5;
    }
}

static void coefficients(const bp_resize_options *o, double ratio, bool whole, double *c)
{
    const double A = o->cubic_coeff_a, r = ratio;
    switch (o->mode) {
    case BP_RESIZE_NEAREST:
        if (whole) {
            c[0] = 0, c[1] = 1;
            return;
        }
        switch (o->nearest) {
        case BP_NEAREST_ROUND_PREFER_CEIL: c[0] = r < 0.5, c[1] = r >= 0.5; return;
        case BP_NEAREST_FLOOR: c[0] = 1, c[1] = 0; return;
        case BP_NEAREST_CEIL: c[0] = 0, c[1] = 1; return;
        default: c[0] = r <= 0.5, c[1] = r > 0.5; return;
        }
    case BP_RESIZE_LINEAR:
        c[0] = 1 - r, c[1] = r;
        return;
    default:
        c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
        c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
        c[2] = ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1;
        c[3] = ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A;
        return;
    }
}

static void axis_weights(const bp_resize_options *o, double x, int64_t D, axis_w *a)
{
    a->n = o->mode == BP_RESIZE_CUBIC ? 4 : 2;
    const bool whole = x == floor(x);
    const double ratio = whole ? 1.0 : x - floor(x);
    coefficients(o, ratio, whole, a->w);
    const int64_t first = (int64_t)ceil(x) - a->n / 2;
    double sum = 0;
    for (int j = 0; j < a->n; j++) {
        int64_t i = first + j;
        if (o->mode == BP_RESIZE_CUBIC && o->exclude_outside && (i < 0 || i >= D))
            a->w[j] = 0;
        sum += a->w[j];
        a->idx[j] = i < 0 ? 0 : i >= D ? D - 1 : i;
    }
    if (o->mode == BP_RESIZE_CUBIC && o->exclude_outside)
        for (int j = 0; j < a->n; j++)
            a->w[j] /= sum;
}

bool cf_oracle_resize(const cf_array *x, const double *scales, const int64_t *sizes,
                      const bp_resize_options *options, cf_array *want, double **terms,
                      int64_t *k)
{
    bp_resize_options o = BP_RESIZE_OPTIONS_INIT;
    if (options)
        o = *options;
    int64_t shape[BP_MAX_RANK];
    double s[BP_MAX_RANK], L[BP_MAX_RANK];
    for (int32_t a = 0; a < x->rank; a++) {
        const int64_t D = x->shape[a];
        shape[a] = sizes ? sizes[a] : (int64_t)floor((double)D * scales[a]);
        s[a] = sizes ? (D > 0 ? (double)sizes[a] / (double)D : 1.0) : scales[a];
        L[a] = sizes ? (double)sizes[a] : scales[a] * (double)D;
    }
    if (terms)
        *terms = NULL;
    if (k)
        *k = 1;
    if (!cf_array_init(want, x->dt, x->rank, shape))
        return false;
    double *mag = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof *mag);
    if (!mag)
        return false;
    for (int64_t e = 0; e < want->n; e++) {
        int64_t oi[BP_MAX_RANK], j[BP_MAX_RANK] = {0}, ii[BP_MAX_RANK];
        axis_w aw[BP_MAX_RANK];
        cf_unravel(x->rank, shape, e, oi);
        int64_t taps = 1;
        for (int32_t a = 0; a < x->rank; a++) {
            axis_weights(&o, original(&o, (double)oi[a], s[a], L[a], x->shape[a]), x->shape[a],
                         &aw[a]);
            taps *= aw[a].n;
        }
        if (k && taps > *k)
            *k = taps;
        long double acc = 0;
        double m = 0;
        int64_t pick = -1;
        for (int64_t t = 0; t < taps; t++) {
            int64_t rest = t;
            double w = 1;
            for (int32_t a = x->rank - 1; a >= 0; a--) {
                j[a] = rest % aw[a].n;
                rest /= aw[a].n;
                w *= aw[a].w[j[a]];
                ii[a] = aw[a].idx[j[a]];
            }
            if (w == 0.0)
                continue;
            int64_t at = cf_ravel(x->rank, x->shape, ii);
            pick = at;
            if (cf_is_float(x->dt)) {
                acc += (long double)w * x->f[at];
                m += fabs(w * x->f[at]);
            }
        }
        if (!cf_is_float(x->dt)) /* nearest on integers: the one element */
            want->i[e] = x->i[pick];
        else if (o.mode == BP_RESIZE_NEAREST)
            want->f[e] = x->f[pick];
        else
            want->f[e] = (double)acc;
        mag[e] = m;
    }
    if (terms)
        *terms = mag;
    else
        free(mag);
    return true;
}

/* Resize's arithmetic that the host kernels (nn_resize.c) and the cuda
 * kernel (backends/cuda/resize.cu) share, stated once for both (host C and
 * CUDA device code, like backplane/cast.h): every axis maps an output index
 * o to a coordinate in x by the coordinate transformation, with the axis's
 * scale s and the output length L = s D (ONNX's output_width: a real number
 * when scales are given):
 *   half_pixel (o + 0.5) / s - 0.5     asymmetric o / s
 *   align_corners o (D - 1) / (L - 1), 0 when L is 1
 *   pytorch_half_pixel as half_pixel, 0 when L is 1
 *   tf_half_pixel_for_nn (o + 0.5) / s
 * then to taps and weights: nearest one tap (rounded by the nearest mode),
 * linear two (floor, floor + 1), cubic four (floor - 1 .. floor + 2, ONNX's
 * cubic convolution with coefficient a). Taps outside x take the edge
 * element (ONNX's edge padding), or, cubic with exclude_outside, weight 0
 * with the rest renormalised. Modes are nn.h's bp_resize_mode,
 * bp_resize_coordinates and bp_resize_nearest. */
#ifndef BPK_RESIZE_TAPS_H
#define BPK_RESIZE_TAPS_H

#include <math.h>
#include <stdint.h>

#include <backplane/dtype.h>

typedef struct bpk_taps {
    int64_t idx[4];
    double w[4];
    int n;
} bpk_taps;

/* How one axis is resized. */
typedef struct bpk_resize_axis {
    int mode, coordinates, nearest; /* nn.h's enums */
    int exclude_outside;
    double a;                       /* cubic_coeff_a */
} bpk_resize_axis;

BP_HOST_DEVICE static inline double bpk_resize_coordinate(int coordinates, double o, double s,
                                                          int64_t in, int64_t out)
{
    double len = s * (double)in;
    if (fabs(len - (double)out) <= 1e-12 * len) /* s came from sizes: L is the size */
        len = (double)out;
    switch (coordinates) {
    case 1: return o / s;                                              /* asymmetric */
    case 2: return len == 1.0 ? 0.0 : o * (double)(in - 1) / (len - 1.0); /* align_corners */
    case 3: return len == 1.0 ? 0.0 : (o + 0.5) / s - 0.5;             /* pytorch_half_pixel */
    case 4: return (o + 0.5) / s;                                      /* tf_half_pixel_for_nn */
    default: return (o + 0.5) / s - 0.5;                               /* half_pixel */
    }
}

/* The cubic convolution kernel at distance t in [0, 2]. */
BP_HOST_DEVICE static inline double bpk_resize_cubic(double a, double t)
{
    if (t <= 1.0)
        return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
}

BP_HOST_DEVICE static inline int64_t bpk_resize_clamp(int64_t i, int64_t in)
{
    return i < 0 ? 0 : i >= in ? in - 1 : i;
}

/* The taps of output index o on an axis of length in resized to out with
 * scale s. */
BP_HOST_DEVICE static inline void bpk_resize_taps(const bpk_resize_axis *ax, int64_t in,
                                                  int64_t out, double s, int64_t o, bpk_taps *t)
{
    const double x = bpk_resize_coordinate(ax->coordinates, (double)o, s, in, out);
    const double fl = floor(x), r = x - fl;
    const int64_t base = (int64_t)fl;
    if (ax->mode == 0) { /* nearest */
        int64_t i;
        switch (ax->nearest) {
        case 1: i = r < 0.5 ? base : base + 1; break;   /* round_prefer_ceil */
        case 2: i = base; break;                        /* floor */
        case 3: i = (int64_t)ceil(x); break;            /* ceil */
        default: i = r <= 0.5 ? base : base + 1; break; /* round_prefer_floor */
        }
        t->n = 1;
        t->idx[0] = bpk_resize_clamp(i, in);
        t->w[0] = 1.0;
        return;
    }
    if (ax->mode == 1) { /* linear */
        t->n = 2;
        t->idx[0] = base;
        t->idx[1] = base + 1;
        t->w[0] = 1.0 - r;
        t->w[1] = r;
    } else { /* cubic */
        t->n = 4;
        for (int j = 0; j < 4; j++)
            t->idx[j] = base - 1 + j;
        t->w[0] = bpk_resize_cubic(ax->a, r + 1.0);
        t->w[1] = bpk_resize_cubic(ax->a, r);
        t->w[2] = bpk_resize_cubic(ax->a, 1.0 - r);
        t->w[3] = bpk_resize_cubic(ax->a, 2.0 - r);
    }
    const int exclude = ax->exclude_outside && ax->mode == 2;
    double sum = 0;
    for (int j = 0; j < t->n; j++) {
        const int outside = t->idx[j] < 0 || t->idx[j] >= in;
        if (outside && exclude)
            t->w[j] = 0.0;
        sum += t->w[j];
        t->idx[j] = bpk_resize_clamp(t->idx[j], in);
    }
    if (exclude)
        for (int j = 0; j < t->n; j++)
            t->w[j] /= sum;
}

#endif

/* RESIZE (ONNX Resize without a region of interest), a thread per output
 * element, with backends/kernels/nn_resize.c's arithmetic in double, line
 * for line: every axis k maps output index o to a coordinate in x by the
 * coordinate transformation (p.i[1]) with the axis's scale s = p.f[8 + k]
 * and output length L = s D, then to taps and weights: nearest one tap
 * (rounded by the nearest mode p.i[2]), linear two, cubic four (coefficient
 * p.f[0]; p.i[3] exclude_outside). Taps outside x take the edge element.
 * The output is the sum over the tensor product of the axes' taps (zero
 * weights skipped) in the reference's order, rounded once; nearest copies
 * the element's bytes, exact for every dtype. */
#include <math.h>

#include "nn_common.h"

typedef struct resize_args {
    bpcu_nv x, y;
    int mode, coordinates, nearest;
    bool exclude_outside;
    double a;                      /* cubic_coeff_a */
    double scale[BP_MAX_RANK];
} resize_args;

typedef struct taps {
    int64_t idx[4];
    double w[4];
    int n;
} taps;

static __device__ double coordinate(int mode, double o, double s, int64_t in, int64_t out)
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

static __device__ double cubic(double a, double t) /* the kernel at distance t in [0, 2] */
{
    if (t <= 1.0)
        return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
}

static __device__ int64_t clamp_to(int64_t i, int64_t in) { return i < 0 ? 0 : i >= in ? in - 1 : i; }

static __device__ void axis_taps(const resize_args &p, int64_t in, int64_t out, double s,
                                 int64_t o, taps *t)
{
    const double x = coordinate(p.coordinates, (double)o, s, in, out);
    const double fl = floor(x), r = x - fl;
    const int64_t base = (int64_t)fl;
    if (p.mode == 0) { /* nearest */
        int64_t i;
        switch (p.nearest) {
        case 1: i = r < 0.5 ? base : base + 1; break;   /* round_prefer_ceil */
        case 2: i = base; break;                        /* floor */
        case 3: i = (int64_t)ceil(x); break;            /* ceil */
        default: i = r <= 0.5 ? base : base + 1; break; /* round_prefer_floor */
        }
        t->n = 1;
        t->idx[0] = clamp_to(i, in);
        t->w[0] = 1.0;
        return;
    }
    if (p.mode == 1) { /* linear */
        t->n = 2;
        t->idx[0] = base;
        t->idx[1] = base + 1;
        t->w[0] = 1.0 - r;
        t->w[1] = r;
    } else { /* cubic */
        t->n = 4;
        for (int j = 0; j < 4; j++)
            t->idx[j] = base - 1 + j;
        t->w[0] = cubic(p.a, r + 1.0);
        t->w[1] = cubic(p.a, r);
        t->w[2] = cubic(p.a, 1.0 - r);
        t->w[3] = cubic(p.a, 2.0 - r);
    }
    const bool exclude = p.exclude_outside && p.mode == 2;
    double sum = 0;
    for (int j = 0; j < t->n; j++) {
        const bool outside = t->idx[j] < 0 || t->idx[j] >= in;
        if (outside && exclude)
            t->w[j] = 0.0;
        sum += t->w[j];
        t->idx[j] = clamp_to(t->idx[j], in);
    }
    if (exclude)
        for (int j = 0; j < t->n; j++)
            t->w[j] /= sum;
}

__global__ void bpcu_k_resize(resize_args p, int64_t total)
{
    const int32_t r = p.y.rank;
    BPCU_FOR(e, total) {
        taps t[BP_MAX_RANK];
        int64_t rest = e;
        for (int32_t k = r - 1; k >= 0; k--) {
            axis_taps(p, p.x.shape[k], p.y.shape[k], p.scale[k], rest % p.y.shape[k], &t[k]);
            rest /= p.y.shape[k];
        }
        char *dst = p.y.p + bpcu_nv_off(p.y, e) * p.y.es;
        if (p.mode == 0) {
            int64_t off = 0;
            for (int32_t k = 0; k < r; k++)
                off += t[k].idx[0] * p.x.strides[k];
            memcpy(dst, p.x.p + off * p.x.es, (size_t)p.x.es);
            continue;
        }
        int j[BP_MAX_RANK];
        for (int32_t k = 0; k < r; k++)
            j[k] = 0;
        double acc = 0;
        for (;;) {
            double w = 1;
            int64_t off = 0;
            for (int32_t k = 0; k < r; k++) {
                w *= t[k].w[j[k]];
                off += t[k].idx[j[k]] * p.x.strides[k];
            }
            if (w != 0.0)
                acc += w * bpcu_nv_ld(p.x, off);
            int32_t k = r - 1;
            while (k >= 0 && ++j[k] == t[k].n)
                j[k--] = 0;
            if (k < 0)
                break;
        }
        bp_elem_store_f64(p.y.dt, dst, acc);
    }
}

bp_status bpcu_nn_resize(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *y = c->out[0];
    if (x->rank < 1 || y->rank != x->rank || c->p.i[0] < 0 || c->p.i[0] > 2)
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: resize: x and y must share a rank "
                         ">= 1 and the mode be nearest, linear or cubic");
    if (c->p.i[0] != 0 && !bp_dtype_is_float(x->dtype))
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: resize: linear and cubic modes are "
                         "for float dtypes, not %s", bp_dtype_name(x->dtype));
    const int64_t total = bpcu_numel(y);
    if (total == 0)
        return BP_OK;
    resize_args p;
    memset(&p, 0, sizeof p);
    p.x = bpcu_nv_of(x), p.y = bpcu_nv_of(y);
    p.mode = (int)c->p.i[0];
    p.coordinates = (int)c->p.i[1];
    p.nearest = (int)c->p.i[2];
    p.exclude_outside = c->p.i[3] != 0;
    p.a = c->p.f[0];
    for (int32_t k = 0; k < x->rank; k++)
        p.scale[k] = c->p.f[8 + k];
    cudaError_t e = bpcu_launch(d->stream, bpcu_blocks(total), BPCU_THREADS, 0, bpcu_k_resize, p,
                                total);
    return bpcu_launched(d, e, "resize kernel");
}

/* RESIZE (ONNX Resize without a region of interest), a thread per output
 * element: every axis k maps output index o to its taps and weights by the
 * host kernels' own arithmetic (backends/kernels/resize_taps.h, compiled for
 * the device: p.i[0] mode, p.i[1] coordinates, p.i[2] nearest mode, p.i[3]
 * exclude_outside, p.f[0] cubic_coeff_a) with the axis's scale
 * s = p.f[8 + k]. The output is the sum over the tensor product of the axes' taps (zero
 * weights skipped) in the reference's order, rounded once; nearest copies
 * the element's bytes, exact for every dtype. */
#include <math.h>

#include "nn_common.h"
#include "../kernels/resize_taps.h"

typedef struct resize_args {
    bpcu_nv x, y;
    bpk_resize_axis ax;            /* mode, coordinates, nearest, exclude_outside, a */
    double scale[BP_MAX_RANK];
} resize_args;

__global__ void bpcu_k_resize(resize_args p, int64_t total)
{
    const int32_t r = p.y.rank;
    BPCU_FOR(e, total) {
        bpk_taps t[BP_MAX_RANK];
        int64_t rest = e;
        for (int32_t k = r - 1; k >= 0; k--) {
            bpk_resize_taps(&p.ax, p.x.shape[k], p.y.shape[k], p.scale[k], rest % p.y.shape[k],
                            &t[k]);
            rest /= p.y.shape[k];
        }
        char *dst = p.y.p + bpcu_nv_off(p.y, e) * p.y.es;
        if (p.ax.mode == 0) {
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
    p.ax.mode = (int)c->p.i[0];
    p.ax.coordinates = (int)c->p.i[1];
    p.ax.nearest = (int)c->p.i[2];
    p.ax.exclude_outside = c->p.i[3] != 0;
    p.ax.a = c->p.f[0];
    for (int32_t k = 0; k < x->rank; k++)
        p.scale[k] = c->p.f[8 + k];
    cudaError_t e = bpcu_launch(d->stream, bpcu_blocks(total), BPCU_THREADS, 0, bpcu_k_resize, p,
                                total);
    return bpcu_launched(d, e, "resize kernel");
}

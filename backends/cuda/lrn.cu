/* LRN (ONNX LRN): local response normalisation across channels, a thread
 * per element of x (N, C, ...): x[n, c, s] / (bias + alpha / size * the sum
 * of x[n, k, s]^2 over the channels k = c - floor((size - 1) / 2) .. c +
 * ceil((size - 1) / 2) that exist) ^ beta, in double as
 * backends/kernels/nn_lrn.c, rounded once. p.i[0] size; p.f[0] alpha, p.f[1]
 * beta, p.f[2] bias. */
#include "nn_common.h"

typedef struct lrn_args {
    int64_t C, S, size;            /* channels, positions per channel, window */
    double alpha, beta, bias;
} lrn_args;

/* element e of x's row-major order: (n, c, s) with s the position over the
 * axes from 2 on */
__global__ void bpcu_k_lrn(lrn_args a, bpcu_nv x, bpcu_nv y, int64_t total)
{
    const int64_t before = (a.size - 1) / 2, after = a.size - 1 - before; /* floor, ceil */
    BPCU_FOR(e, total) {
        const int64_t s = e % a.S, c = e / a.S % a.C, n = e / a.S / a.C;
        /* x's offset of (n, 0, s), and the channel stride */
        int64_t xo = n * x.strides[0], yo = n * y.strides[0], r = s;
        for (int32_t d = x.rank - 1; d >= 2; d--) {
            xo += (r % x.shape[d]) * x.strides[d];
            yo += (r % x.shape[d]) * y.strides[d];
            r /= x.shape[d];
        }
        const int64_t lo = c - before > 0 ? c - before : 0;
        const int64_t hi = c + after < a.C ? c + after : a.C - 1;
        double sq = 0;
        for (int64_t k = lo; k <= hi; k++) {
            const double v = bpcu_nv_ld(x, xo + k * x.strides[1]);
            sq += v * v;
        }
        const double v = bpcu_nv_ld(x, xo + c * x.strides[1]);
        bpcu_nv_st(y, yo + c * y.strides[1], v / pow(a.bias + a.alpha / (double)a.size * sq, a.beta));
    }
}

bp_status bpcu_nn_lrn(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *y = c->out[0];
    if (x->rank < 2 || y->rank != x->rank || c->p.i[0] < 1)
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: lrn: x must be (N, C, ...) and "
                         "size >= 1");
    const int64_t total = bpcu_numel(x);
    if (total == 0)
        return BP_OK;
    lrn_args a;
    a.C = x->shape[1];
    a.S = total / (x->shape[0] * a.C);
    a.size = c->p.i[0];
    a.alpha = c->p.f[0], a.beta = c->p.f[1], a.bias = c->p.f[2];
    cudaError_t e = bpcu_launch(d->stream, bpcu_blocks(total), BPCU_THREADS, 0, bpcu_k_lrn, a,
                                bpcu_nv_of(x), bpcu_nv_of(y), total);
    return bpcu_launched(d, e, "lrn kernel");
}

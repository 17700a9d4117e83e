/* CONV_TRANSPOSE (ONNX ConvTranspose): through cuDNN's backward data
 * where it takes the op (dnn.cu), else here as cuBLAS + col2im, one image at a
 * time (any groups, strides, dilations, pads, negative pads included; 1 to
 * 3 spatial axes, padded to three at the front as
 * backends/kernels/nn_conv.c):
 *   col[m k, j] = sum over m's group's c of w[c, m, k] x[n, c, j]   (conv_gemm.cu: one cuBLAS
 *                                                                   call batched over groups,
 *                                                                   in the accumulator type)
 *   y[n, m, o]  = bias[m] + sum over the taps k and input positions j
 *                 with o = j st + k dl - pb of col[m k, j]           (col2im: a thread per
 *                                                                   output, in double, rounded
 *                                                                   once; no atomics)
 * x and w are used in place (the core hands them dense); col, one image's
 * (M x kernel x input positions), lives in scratch, reused for every
 * image. */
#include "nn_common.h"

__global__ void bpcu_k_col2im(bpcu_win g, const void *col, bool acc_f64, bpcu_nv bias, bpcu_nv y,
                              int64_t n, int64_t total)
{
    const int64_t nout = g.out[0] * g.out[1] * g.out[2], nk = g.k[0] * g.k[1] * g.k[2];
    const int64_t nin = g.in[0] * g.in[1] * g.in[2];
    BPCU_FOR(e, total) {
        const int64_t m = e / nout;
        int64_t o[3];
        bpcu_win_coords(g.out, e % nout, o);
        double v = 0;
        for (int64_t k = 0; k < nk; k++) {
            int64_t kk[3], jf = 0;
            bpcu_win_coords(g.k, k, kk);
            bool hit = true;
            for (int a = 0; a < 3 && hit; a++) {
                const int64_t t = o[a] + g.pb[a] - kk[a] * g.dl[a]; /* = j st */
                hit = t >= 0 && t % g.st[a] == 0 && t / g.st[a] < g.in[a];
                jf = jf * g.in[a] + (hit ? t / g.st[a] : 0);
            }
            if (!hit)
                continue;
            const int64_t at = (m * nk + k) * nin + jf;
            v += acc_f64 ? ((const double *)col)[at] : (double)((const float *)col)[at];
        }
        if (bias.p)
            v += bpcu_nv_ld(bias, m * bias.strides[0]);
        bpcu_nv_st(y, n * g.yn + m * g.yc + o[0] * g.ys[0] + o[1] * g.ys[1] + o[2] * g.ys[2], v);
    }
}

bp_status bpcu_nn_conv_transpose(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *w = c->in[1], *y = c->out[0];
    const int64_t G = c->p.i[15];
    if (x->rank < 3 || x->rank > 5 || w->rank != x->rank || y->rank != x->rank || G < 1 ||
        x->shape[1] % G != 0 || w->shape[0] != x->shape[1] || w->shape[1] * G != y->shape[1])
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: conv_transpose: x, w, y and groups "
                         "are not what opcodes.h describes");
    if (bpcu_numel(y) == 0)
        return BP_OK;
    bp_status dst;
    if (bpcu_dnn_conv(d, c, &dst)) /* cuDNN took it (dnn.cu) */
        return dst;
    const bpcu_win g = bpcu_win_of(&c->p, x, y);
    const int64_t C = x->shape[1], M = y->shape[1], cg = C / G, mg = M / G;
    const int64_t nk = bpcu_win_numel(g.k), nin = bpcu_win_numel(g.in);
    const int64_t nout = bpcu_win_numel(g.out);
    const size_t es = bp_dtype_size(x->dtype);
    bpcu_buf xb = bpcu_buf(), wb = bpcu_buf();
    bp_view xd, wd;
    const char *xp = NULL, *wp = NULL;
    void *col = NULL;
    bp_status st = bpcu_conv_operand(d, x, &xb, &xd, &xp);
    if (st == BP_OK)
        st = bpcu_conv_operand(d, w, &wb, &wd, &wp);
    if (st == BP_OK)
        st = bpcu_scratch(d, (size_t)(M * nk * nin) * bpcu_conv_acc_size(x->dtype), &col);
    const bpcu_nv bias = bpcu_nv_of(c->in[2]), yv = bpcu_nv_of(y);
    for (int64_t n = 0; n < g.N && st == BP_OK; n++) {
        /* column-major: col_g^T (nin x mg nk) = x_g^T (nin x cg) w_g (cg x mg nk), w_g
         * stored as its transpose (mg nk x cg, leading dimension mg nk) */
        st = bpcu_conv_gemm(d, x->dtype, CUBLAS_OP_N, CUBLAS_OP_T, nin, mg * nk, cg,
                            xp + (size_t)(n * C * nin) * es, nin, cg * nin, wp, mg * nk,
                            cg * mg * nk, col, nin, mg * nk * nin, G);
        if (st == BP_OK) {
            cudaError_t e = bpcu_launch(d->stream, bpcu_blocks(M * nout), BPCU_THREADS, 0,
                                        bpcu_k_col2im, g, (const void *)col, x->dtype == BP_F64,
                                        bias, yv, n, M * nout);
            st = bpcu_launched(d, e, "conv_transpose col2im kernel");
        }
    }
    bpcu_scratch_free(d, col);
    bpcu_scratch_free(d, xb.ptr);
    bpcu_scratch_free(d, wb.ptr);
    return st;
}

/* CONV (ONNX Conv): through cuDNN where it takes the op (dnn.cu), else
 * here as im2col + cuBLAS, one image at a time (any groups,
 * strides, dilations, pads; 1 to 3 spatial axes, padded to three at the
 * front as backends/kernels/nn_conv.c):
 *   col[c k, o] = x[n, c, o st + k dl - pb], 0 in the padding     (im2col: x's dtype, exact;
 *                                                                  c over all C channels, so
 *                                                                  group g's rows are a block)
 *   acc[m, o]   = sum over m's group's (c, k) of w[m, c, k] col   (conv_gemm.cu: one cuBLAS
 *                                                                  call batched over groups)
 *   y[n, m, o]  = acc[m, o] + bias[m]                             (in double, rounded once)
 * The unfolded matrix of one image (C x kernel x output positions) lives in
 * scratch, as does its product in the accumulator type; both are reused for
 * every image. w is used in place (the core hands it dense). */
#include "nn_common.h"

/* col, dense [C nk][nout] in x's dtype: element e is tap k = e / nout % nk
 * of channel e / nout / nk at output position e % nout. */
__global__ void bpcu_k_im2col(bpcu_win g, const char *x, int32_t es, int64_t n, char *col,
                              int64_t total)
{
    const int64_t nout = g.out[0] * g.out[1] * g.out[2], nk = g.k[0] * g.k[1] * g.k[2];
    BPCU_FOR(e, total) {
        const int64_t row = e / nout, c = row / nk;
        int64_t o[3], kk[3], off = n * g.xn + c * g.xc;
        bpcu_win_coords(g.out, e % nout, o);
        bpcu_win_coords(g.k, row % nk, kk);
        bool in = true;
        for (int j = 0; j < 3; j++) {
            const int64_t i = o[j] * g.st[j] + kk[j] * g.dl[j] - g.pb[j];
            in = in && i >= 0 && i < g.in[j];
            off += i * g.xs[j];
        }
        char *dst = col + e * es;
        if (in)
            memcpy(dst, x + off * es, (size_t)es);
        else
            memset(dst, 0, (size_t)es); /* +0.0 in every float dtype */
    }
}

/* y[n, m, o] = acc[m nout + o] + bias[m], for the M nout elements of image
 * n (conv_transpose.cu's col2im does the same with its own sum). */
__global__ void bpcu_k_conv_out(bpcu_win g, const void *acc, bool acc_f64, bpcu_nv bias,
                                bpcu_nv y, int64_t n, int64_t total)
{
    const int64_t nout = g.out[0] * g.out[1] * g.out[2];
    BPCU_FOR(e, total) {
        const int64_t m = e / nout;
        int64_t o[3];
        bpcu_win_coords(g.out, e % nout, o);
        double v = acc_f64 ? ((const double *)acc)[e] : (double)((const float *)acc)[e];
        if (bias.p)
            v += bpcu_nv_ld(bias, m * bias.strides[0]);
        bpcu_nv_st(y, n * g.yn + m * g.yc + o[0] * g.ys[0] + o[1] * g.ys[1] + o[2] * g.ys[2], v);
    }
}

/* A pointwise convolution (1x1 kernel, stride 1, no padding, one group) of
 * f16 or bf16, x and y dense: y[n] (M x P) = w (M x C) x[n] (C x P) with P
 * the spatial positions, one strided-batched cuBLAS product over the N
 * images, accumulated in f32 and rounded once into y (beta = 1 over the
 * bias written into y first, as dnn.cu does for cuDNN). cuDNN runs such a
 * convolution as the same matrix product, but its legacy entry point spent
 * some 75 us of host time per call on an H200 (a (32, 256, 56, 56) f16 input:
 * 0.098 ms against the product's 21 us); cuBLAS keeps its choice per shape.
 * Taken for 1024 positions or more (below). f32 stays with cuDNN (as fast
 * as PyTorch there). True when it took c (*st its status). */
static bool conv_1x1(bpcu_device *d, const bpcu_opcall *c, bp_status *st)
{
    const bp_view *x = c->in[0], *w = c->in[1], *bias = c->in[2], *y = c->out[0];
    if ((x->dtype != BP_F16 && x->dtype != BP_BF16) || c->p.i[15] != 1 ||
        !bpcu_conv_dense(x) || !bpcu_conv_dense(y) || !bpcu_conv_dense(w))
        return false;
    const bpcu_win g = bpcu_win_of(&c->p, x, y);
    for (int a = 0; a < 3; a++)
        if (g.k[a] != 1 || g.st[a] != 1 || g.pb[a] != 0 || g.pe[a] != 0 || g.in[a] != g.out[a])
            return false;
    const int64_t P = bpcu_win_numel(g.out), C = g.C, M = g.M;
    if (C == 0)
        return false; /* no product: the built-in path writes the bias (or zeros) */
    /* Each image's product is P rows tall: measured on an H200 at 56 x 56
     * positions (P 3136) this path matched PyTorch (0.022 ms against 0.098
     * through cuDNN's legacy call); at 7 x 7 (P 49) the batched product's
     * short tiles made it slower than cuDNN (0.077 ms against 0.059) */
    if (P < 1024)
        return false;
    if (bias) {
        cudaError_t e = bpcu_conv_bias_fill(d, y, bias);
        if (e != cudaSuccess) {
            *st = bpcu_cuda_fail(d, e, "conv bias kernel");
            return true;
        }
    }
    /* column-major: y_n^T (P x M) = x_n^T (P x C) w^T (C x M) */
    const cudaDataType t = x->dtype == BP_F16 ? CUDA_R_16F : CUDA_R_16BF;
    const float one = 1.0f, beta = bias ? 1.0f : 0.0f;
    cublasStatus_t bs;
    {
        std::lock_guard<std::mutex> lock(d->blas_mu);
        bs = cublasGemmStridedBatchedEx_64(d->blas, CUBLAS_OP_N, CUBLAS_OP_N, P, M, C, &one,
                                           bpcu_ptr(x), t, P, (long long)(C * P), bpcu_ptr(w), t,
                                           C, 0, &beta, bpcu_ptr(y), t, P, (long long)(M * P),
                                           g.N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
    *st = bs == CUBLAS_STATUS_SUCCESS ? BP_OK
                                      : bpcu_blas_fail(d, bs, "conv 1x1: cublasGemmStridedBatchedEx");
    return true;
}

bp_status bpcu_nn_conv(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *w = c->in[1], *y = c->out[0];
    const int64_t G = c->p.i[15];
    if (x->rank < 3 || x->rank > 5 || w->rank != x->rank || y->rank != x->rank || G < 1 ||
        x->shape[1] % G != 0 || y->shape[1] % G != 0 || w->shape[0] != y->shape[1] ||
        w->shape[1] * G != x->shape[1])
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: conv: x, w, y and groups are not "
                         "what opcodes.h describes");
    if (bpcu_numel(y) == 0)
        return BP_OK;
    bp_status dst;
    if (conv_1x1(d, c, &dst)) /* a pointwise f16 / bf16 convolution: one cuBLAS call */
        return dst;
    if (bpcu_dnn_conv(d, c, &dst)) /* cuDNN took it (dnn.cu) */
        return dst;
    const bpcu_win g = bpcu_win_of(&c->p, x, y);
    const int64_t C = x->shape[1], M = y->shape[1], cg = C / G, mg = M / G;
    const int64_t nk = bpcu_win_numel(g.k), nout = bpcu_win_numel(g.out), ck = cg * nk;
    const int32_t es = (int32_t)bp_dtype_size(x->dtype);
    bpcu_buf wb = bpcu_buf();
    bp_view wd;
    const char *wp = NULL;
    void *col = NULL, *acc = NULL;
    bp_status st = bpcu_conv_operand(d, w, &wb, &wd, &wp);
    if (st == BP_OK)
        st = bpcu_scratch(d, (size_t)(C * nk * nout) * (size_t)es, &col);
    if (st == BP_OK)
        st = bpcu_scratch(d, (size_t)(M * nout) * bpcu_conv_acc_size(x->dtype), &acc);
    const bpcu_nv bias = bpcu_nv_of(c->in[2]), yv = bpcu_nv_of(y);
    for (int64_t n = 0; n < g.N && st == BP_OK; n++) {
        const int64_t ncol = C * nk * nout;
        cudaError_t e = cudaSuccess;
        if (ncol > 0)
            e = bpcu_launch(d->stream, bpcu_blocks(ncol), BPCU_THREADS, 0, bpcu_k_im2col, g,
                            (const char *)bpcu_ptr(x), es, n, (char *)col, ncol);
        st = bpcu_launched(d, e, "conv im2col kernel");
        /* column-major: acc_g^T (nout x mg) = col_g^T (nout x ck) w_g^T (ck x mg) */
        if (st == BP_OK)
            st = bpcu_conv_gemm(d, x->dtype, CUBLAS_OP_N, CUBLAS_OP_N, nout, mg, ck, col, nout,
                                ck * nout, wp, ck, mg * ck, acc, nout, mg * nout, G);
        if (st == BP_OK) {
            e = bpcu_launch(d->stream, bpcu_blocks(M * nout), BPCU_THREADS, 0, bpcu_k_conv_out,
                            g, (const void *)acc, x->dtype == BP_F64, bias, yv, n, M * nout);
            st = bpcu_launched(d, e, "conv output kernel");
        }
    }
    bpcu_scratch_free(d, col);
    bpcu_scratch_free(d, acc);
    bpcu_scratch_free(d, wb.ptr);
    return st;
}

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

/* ---- windows that tile the output (kernel = stride) ---------------------------------------- */

/* y[n, m, j st + k] = bias[m] + col[n][(m nk + k) nin + j] for the planes
 * (n, m) of blockIdx.y and the input positions j of x's threads, each
 * thread writing its position's nk taps: every output element has exactly
 * one tap when the kernel equals the stride (no padding, no dilation), so
 * col2im's sum is a copy. Positions and taps in 32 bits (the caller checks
 * that a plane's extents fit). */
template <class S>
__global__ void bpcu_k_tile_out(const float *col, bpcu_nv bias, S *y, int64_t planes, int64_t M,
                                uint32_t nin, uint32_t nk, uint32_t in1, uint32_t in2,
                                uint32_t k1, uint32_t k2, uint32_t st0, uint32_t out1,
                                uint32_t out2)
{
    const uint64_t nout = (uint64_t)nin * nk;
    for (int64_t u = blockIdx.y; u < planes; u += gridDim.y) {
        const double b = bias.p ? bpcu_nv_ld(bias, u % M * bias.strides[0]) : 0.0;
        const float *src = col + (uint64_t)u * nout;
        S *dst = y + (uint64_t)u * nout;
        for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < nin;
             j += gridDim.x * blockDim.x) {
            const uint32_t j2 = j % in2, j1 = j / in2 % in1, j0 = j / in2 / in1;
            /* the output position of tap (0, 0, 0); tap k adds (k0, k1, k2) */
            const uint64_t base = ((uint64_t)j0 * st0 * out1 + (uint64_t)j1 * k1) * out2 +
                                  (uint64_t)j2 * k2;
            for (uint32_t k = 0; k < nk; k++) {
                const uint32_t t2 = k % k2, t1 = k / k2 % k1, t0 = k / k2 / k1;
                const double v = (double)src[(uint64_t)k * nin + j] + b;
                dst[base + ((uint64_t)t0 * out1 + t1) * out2 + t2] = bpcu_ft<S>::std_(v);
            }
        }
    }
}

/* A transposed convolution whose windows tile the output: f32, f16 or
 * bf16, one group, kernel = stride on every axis, no dilation, padding or
 * output padding, x, w and y dense (U-Net's and the detectors' 2x2 stride-2
 * up-sampling). Then y's image n is a matrix product, w^T x[n] (M nk x
 * nin), laid out tap by tap: one strided-batched cuBLAS product over the
 * images (conv_gemm.cu, the accumulator f32) into scratch, and one pass
 * that adds the bias and rounds each element once into its place in y.
 * cuDNN's deterministic backward-data algorithm took 0.55 ms on an H200 for
 * (32, 256, 28, 28) x (256, 128, 2, 2) in f32, PyTorch (the
 * non-deterministic one) 0.27. True when it took c (*st its status). */
static bool conv_transpose_tiled(bpcu_device *d, const bpcu_opcall *c, bp_status *st)
{
    const bp_view *x = c->in[0], *w = c->in[1], *y = c->out[0];
    const bp_dtype dt = x->dtype;
    if ((dt != BP_F32 && dt != BP_F16 && dt != BP_BF16) || c->p.i[15] != 1 ||
        !bpcu_conv_dense(x) || !bpcu_conv_dense(w) || !bpcu_conv_dense(y))
        return false;
    const bpcu_win g = bpcu_win_of(&c->p, x, y);
    for (int a = 0; a < 3; a++)
        if (g.k[a] != g.st[a] || (g.k[a] > 1 && g.dl[a] != 1) || g.pb[a] != 0 ||
            g.pe[a] != 0 || g.out[a] != g.in[a] * g.st[a])
            return false;
    const int64_t C = g.C, M = g.M, nk = bpcu_win_numel(g.k), nin = bpcu_win_numel(g.in);
    const int64_t per = M * nk * nin; /* one image's products */
    if (C == 0 || per == 0 || nin > INT32_MAX || nk > INT32_MAX || g.out[1] > INT32_MAX ||
        g.out[2] > INT32_MAX)
        return false;
    /* images at a time: their products within 256 MiB of scratch (at least one) */
    const int64_t most = ((int64_t)256 << 20) / (per * 4);
    const int64_t chunk = most < 1 ? 1 : most < g.N ? most : g.N;
    void *col = NULL;
    *st = bpcu_scratch(d, (size_t)(chunk * per) * 4, &col);
    const bpcu_nv bias = bpcu_nv_of(c->in[2]);
    const size_t es = bp_dtype_size(dt);
    for (int64_t n0 = 0; n0 < g.N && *st == BP_OK; n0 += chunk) {
        const int64_t nb = g.N - n0 < chunk ? g.N - n0 : chunk;
        /* column-major: col_n^T (nin x M nk) = x_n^T (nin x C) w (C x M nk), w stored
         * as its transpose (M nk x C, leading dimension M nk), the same for every image */
        *st = bpcu_conv_gemm(d, dt, CUBLAS_OP_N, CUBLAS_OP_T, nin, M * nk, C,
                             (const char *)bpcu_ptr(x) + (size_t)(n0 * C * nin) * es, nin,
                             C * nin, bpcu_ptr(w), M * nk, 0, col, nin, per, nb);
        if (*st != BP_OK)
            break;
        const int64_t planes = nb * M;
        int64_t bx = (nin + 255) / 256, by = planes;
        bx = bx > 64 ? 64 : bx;
        by = by > 65535 ? 65535 : by;
        const dim3 grid((unsigned)bx, (unsigned)by);
        const uint32_t a[9] = {(uint32_t)nin, (uint32_t)nk, (uint32_t)g.in[1], (uint32_t)g.in[2],
                               (uint32_t)g.k[1], (uint32_t)g.k[2], (uint32_t)g.st[0],
                               (uint32_t)g.out[1], (uint32_t)g.out[2]};
        char *yp = (char *)bpcu_ptr(y) + (size_t)(n0 * M * nk * nin) * es;
        cudaError_t e;
#define BPCU_TILE_LAUNCH(S)                                                                      \
    bpcu_launch(d->stream, grid, 256, 0, bpcu_k_tile_out<S>, (const float *)col, bias, (S *)yp, \
                planes, M, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])
        switch (dt) {
        case BP_F32: e = BPCU_TILE_LAUNCH(float); break;
        case BP_F16: e = BPCU_TILE_LAUNCH(bpcu_h16); break;
        default: e = BPCU_TILE_LAUNCH(bpcu_b16); break;
        }
#undef BPCU_TILE_LAUNCH
        *st = bpcu_launched(d, e, "conv_transpose output kernel");
    }
    bpcu_scratch_free(d, col);
    return true;
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
    if (conv_transpose_tiled(d, c, &dst)) /* windows that tile y: one cuBLAS call, one pass */
        return dst;
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

/* The products of the convolutions (conv.cu, conv_transpose.cu): one
 * strided-batched cuBLAS gemm (cublasGemmStridedBatchedEx_64) per image,
 * batched over the groups, its operands in the input's dtype and its result
 * in the accumulator type (f32 for f16, bf16 and f32; f64 for f64), so that
 * the kernel that adds the bias and rounds into y rounds once. f16 and bf16
 * accumulate in f32 (the handle disallows reduced-precision split-K
 * reductions, device.cu); f32 uses TF32 only with `tf32 = true`, as matmul
 * and gemm. */
#include <stdio.h>

#include "nn_common.h"

bp_status bpcu_conv_gemm(bpcu_device *d, bp_dtype dt, cublasOperation_t opa,
                         cublasOperation_t opb, int64_t m, int64_t n, int64_t k, const void *a,
                         int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb, void *c,
                         int64_t ldc, int64_t sc, int64_t batch)
{
    if (m == 0 || n == 0 || batch == 0)
        return BP_OK;
    if (k == 0) { /* nothing to multiply: the products are zeros (cuBLAS is not asked) */
        const size_t bytes = (size_t)(batch * sc) * bpcu_conv_acc_size(dt);
        cudaError_t e = cudaMemsetAsync(c, 0, bytes, d->stream);
        return e == cudaSuccess ? BP_OK : bpcu_cuda_fail(d, e, "zeroing a convolution's products");
    }
    cudaDataType t, tc;
    cublasComputeType_t ct;
    float af = 1.0f, bf = 0.0f;
    double ad = 1.0, bd = 0.0;
    const void *pal = &af, *pbe = &bf;
    switch (dt) {
    case BP_F64: t = tc = CUDA_R_64F, ct = CUBLAS_COMPUTE_64F, pal = &ad, pbe = &bd; break;
    case BP_F32:
        t = tc = CUDA_R_32F;
        ct = d->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        break;
    case BP_F16: t = CUDA_R_16F, tc = CUDA_R_32F, ct = CUBLAS_COMPUTE_32F; break;
    default: t = CUDA_R_16BF, tc = CUDA_R_32F, ct = CUBLAS_COMPUTE_32F; break;
    }
    cublasStatus_t bs;
    {
        std::lock_guard<std::mutex> lock(d->blas_mu);
        bs = cublasGemmStridedBatchedEx_64(d->blas, opa, opb, m, n, k, pal, a, t, lda,
                                           (long long)sa, b, t, ldb, (long long)sb, pbe, c, tc,
                                           ldc, (long long)sc, batch, ct, CUBLAS_GEMM_DEFAULT);
    }
    if (bs == CUBLAS_STATUS_SUCCESS)
        return BP_OK;
    char what[200];
    snprintf(what, sizeof what, "cublasGemmStridedBatchedEx (m=%lld n=%lld k=%lld batch=%lld %s)",
             (long long)m, (long long)n, (long long)k, (long long)batch, bp_dtype_name(dt));
    return bpcu_blas_fail(d, bs, what);
}

/* ---- the bias, written into y before cuDNN or cuBLAS adds the convolution ------------------ */

/* y[n, m, ...] = bias[m]: blocks of y walk the (n, m) planes, x's threads
 * the plane; the bias element read once per plane */
template <class S>
__global__ void bpcu_k_bias_fill(S *y, bpcu_nv bias, int64_t M, int64_t planes, int64_t inner)
{
    for (int64_t u = blockIdx.y; u < planes; u += gridDim.y) {
        const int64_t m = u % M;
        const S v = bpcu_ft<S>::std_(bpcu_nv_ld(bias, m * bias.strides[0])); /* exact: same dtype */
        S *py = y + u * inner;
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < inner;
             i += (int64_t)gridDim.x * blockDim.x)
            py[i] = v;
    }
}

cudaError_t bpcu_conv_bias_fill(bpcu_device *d, const bp_view *y, const bp_view *bias)
{
    const int64_t M = y->shape[1], planes = y->shape[0] * M;
    const int64_t inner = planes > 0 ? bpcu_numel(y) / planes : 0;
    if (inner == 0)
        return cudaSuccess;
    int64_t bx = (inner + 255) / 256, by = planes;
    bx = bx > 64 ? 64 : bx;
    by = by > 65535 ? 65535 : by;
    const bpcu_nv b = bpcu_nv_of(bias);
    const dim3 grid((unsigned)bx, (unsigned)by);
    cudaError_t e = cudaSuccess;
    switch (y->dtype) {
    case BP_F32: e = bpcu_launch(d->stream, grid, 256, 0, bpcu_k_bias_fill<float>, (float *)bpcu_ptr(y), b, M, planes, inner); break;
    case BP_F16: e = bpcu_launch(d->stream, grid, 256, 0, bpcu_k_bias_fill<bpcu_h16>, (bpcu_h16 *)bpcu_ptr(y), b, M, planes, inner); break;
    default: e = bpcu_launch(d->stream, grid, 256, 0, bpcu_k_bias_fill<bpcu_b16>, (bpcu_b16 *)bpcu_ptr(y), b, M, planes, inner); break;
    }
    return e;
}

bool bpcu_conv_dense(const bp_view *v)
{
    int64_t expect = 1;
    for (int32_t k = v->rank - 1; k >= 0; k--) {
        if (v->shape[k] != 1 && v->strides[k] != expect)
            return false;
        expect *= v->shape[k];
    }
    return true;
}

bp_status bpcu_conv_operand(bpcu_device *d, const bp_view *v, bpcu_buf *buf, bp_view *dense,
                            const char **p)
{
    if (bpcu_conv_dense(v)) {
        *p = bpcu_ptr(v);
        return BP_OK;
    }
    bp_status st = bpcu_densify(d, v, buf, dense);
    *p = st == BP_OK ? bpcu_ptr(dense) : NULL;
    return st;
}

/* MATMUL: a [..., M, K] x b [..., K, N] -> out [..., M, N].
 *
 * Floats go to cuBLAS (cublasGemmStridedBatchedEx_64): row-major by operand
 * swap (C^T = B^T A^T in cuBLAS's column-major terms), each operand's matrix
 * either row-major (op N) or column-major (op T) with its leading dimension,
 * and the batch axes collapsed to one stride (0 for a broadcast operand).
 * An operand that does not fit that form is first copied to a dense scratch
 * with the copy kernel; an output that does not is computed into scratch and
 * copied back. f16/bf16 accumulate in f32 and round once (compute 32F), as
 * the binary backend; f32 uses TF32 tensor cores only when tf32 = true.
 * Integers: one thread per output, 64-bit wrapping sums. */
#include <stdio.h>
#include <string.h>

#include "bpcu.h"
#include "elem.h"

/* ---- integers --------------------------------------------------------------- */

typedef struct bpcu_mm_args {
    int32_t nb;                    /* batch axes */
    int64_t n, M, N, K;
    int64_t bshape[BP_MAX_RANK];
    int64_t bstr[3][BP_MAX_RANK];  /* out, a, b batch strides */
    int64_t ars, acs, brs, bcs, ors, ocs;
} bpcu_mm_args;

template <class T>
__global__ void bpcu_k_matmul_int(bpcu_mm_args g, const T *a, const T *b, char *out, bp_dtype dt)
{
    BPCU_FOR(i, g.n) {
        int64_t j = i % g.N, r = i / g.N, m = r % g.M, q = r / g.M;
        int64_t oo = 0, ao = 0, bo = 0;
        for (int32_t k = g.nb - 1; k >= 0; k--) {
            int64_t c = q % g.bshape[k];
            q /= g.bshape[k];
            oo += c * g.bstr[0][k], ao += c * g.bstr[1][k], bo += c * g.bstr[2][k];
        }
        const T *pa = a + ao + m * g.ars, *pb = b + bo + j * g.bcs;
        uint64_t acc = 0;
        for (int64_t k = 0; k < g.K; k++)
            acc += (uint64_t)(int64_t)pa[k * g.acs] * (uint64_t)(int64_t)pb[k * g.brs];
        bpcu_st_wrap(dt, out + (oo + m * g.ors + j * g.ocs) * (int64_t)sizeof(T), acc);
    }
}

static bp_status matmul_int(bpcu_device *d, const bp_view *a, const bp_view *b, const bp_view *out)
{
    cudaError_t e = cudaSuccess;
    int32_t r = out->rank;
    bpcu_mm_args g;
    memset(&g, 0, sizeof g);
    g.nb = r - 2;
    g.M = out->shape[r - 2], g.N = out->shape[r - 1], g.K = a->shape[r - 1];
    g.n = bpcu_numel(out);
    for (int32_t k = 0; k < g.nb; k++) {
        g.bshape[k] = out->shape[k];
        g.bstr[0][k] = out->strides[k], g.bstr[1][k] = a->strides[k], g.bstr[2][k] = b->strides[k];
    }
    g.ars = a->strides[r - 2], g.acs = a->strides[r - 1];
    g.brs = b->strides[r - 2], g.bcs = b->strides[r - 1];
    g.ors = out->strides[r - 2], g.ocs = out->strides[r - 1];
    unsigned nb = bpcu_blocks(g.n);
    BPCU_DISPATCH_INT(out->dtype, (e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0,
                                                   bpcu_k_matmul_int<T>, g, (const T *)bpcu_ptr(a),
                                                   (const T *)bpcu_ptr(b), bpcu_ptr(out),
                                                   out->dtype)));
    return bpcu_launched(d, e, "integer matmul kernel");
}

/* ---- floats through cuBLAS --------------------------------------------------------- */

/* One operand in cuBLAS terms. */
typedef struct gemm_op {
    cublasOperation_t op;
    int64_t ld;
    long long batch_stride;
} gemm_op;

/* The batch axes of v (out's batch shape) as a single stride, if they are one. */
static bool batch_stride(const bp_view *v, const bp_view *out, long long *stride)
{
    int32_t nb = out->rank - 2;
    int64_t s = 0, inner = 1;
    bool have = false;
    for (int32_t k = nb - 1; k >= 0; k--) {
        int64_t n = out->shape[k];
        if (n != 1) {
            if (!have) {
                s = v->strides[k] / (inner ? inner : 1);
                if (v->strides[k] != s * inner)
                    return false;
                have = true;
            } else if (v->strides[k] != s * inner) {
                return false;
            }
        }
        inner *= n;
    }
    *stride = (long long)s;
    return true;
}

/* row-major data is op N with ld = rs; column-major data is op T with
 * ld = cs (bpcu.h) */
bool bpcu_matrix_form(int64_t rows, int64_t cols, int64_t rs, int64_t cs, cublasOperation_t *op,
                      int64_t *ld)
{
    if (cols == 1 || cs == 1) {
        int64_t l = rows == 1 ? (cols > 1 ? cols : 1) : rs;
        if (l >= cols && l >= 1) {
            *op = CUBLAS_OP_N, *ld = l;
            return true;
        }
    }
    if (rows == 1 || rs == 1) {
        int64_t l = cols == 1 ? (rows > 1 ? rows : 1) : cs;
        if (l >= rows && l >= 1) {
            *op = CUBLAS_OP_T, *ld = l;
            return true;
        }
    }
    return false;
}

static bool gemm_form(const bp_view *v, const bp_view *out, gemm_op *g)
{
    int32_t r = v->rank;
    return batch_stride(v, out, &g->batch_stride) &&
           bpcu_matrix_form(v->shape[r - 2], v->shape[r - 1], v->strides[r - 2],
                            v->strides[r - 1], &g->op, &g->ld);
}

/* A dense row-major view of v's shape over scratch (bpcu.h). */
bp_status bpcu_densify(bpcu_device *d, const bp_view *v, bpcu_buf *buf, bp_view *dense)
{
    *dense = *v;
    dense->offset = 0;
    int64_t n = 1;
    for (int32_t k = v->rank - 1; k >= 0; k--) {
        dense->strides[k] = n;
        n *= v->shape[k];
    }
    buf->bytes = (size_t)n * bp_dtype_size(v->dtype);
    bp_status st = bpcu_scratch(d, buf->bytes, &buf->ptr);
    if (st != BP_OK)
        return st;
    dense->buffer = buf;
    return bpcu_copy_view(d, v, dense);
}

bp_status bpcu_blas_fail(bpcu_device *d, cublasStatus_t bs, const char *what)
{
    /* a sticky error of earlier work makes cuBLAS fail too: name it */
    cudaError_t ce = cudaStreamQuery(d->stream);
    if (ce != cudaSuccess && ce != cudaErrorNotReady && bpcu_note_lost(d, ce))
        return bpcu_cuda_fail(d, ce, "%s", what);
    return bpcu_fail(d, bs == CUBLAS_STATUS_ALLOC_FAILED ? BP_ERR_OUT_OF_MEMORY : BP_ERR_BACKEND,
                     "cuda: %s failed: %s", what, cublasGetStatusString(bs));
}

static bp_status matmul_blas(bpcu_device *d, const bp_view *a, const bp_view *b, const bp_view *out)
{
    int32_t r = out->rank;
    int64_t M = out->shape[r - 2], N = out->shape[r - 1], K = a->shape[r - 1];
    int64_t batch = 1;
    for (int32_t k = 0; k < r - 2; k++)
        batch *= out->shape[k];

    bpcu_buf sa = bpcu_buf(), sb = bpcu_buf(), sc = bpcu_buf();
    bp_view da, db, dc;
    const bp_view *pa = a, *pb = b, *pc = out;
    gemm_op ga, gb, gc;
    bp_status st = BP_OK;
    if (!gemm_form(a, out, &ga)) {
        if ((st = bpcu_densify(d, a, &sa, &da)) != BP_OK)
            goto done;
        pa = &da;
        gemm_form(pa, out, &ga);
    }
    if (!gemm_form(b, out, &gb)) {
        if ((st = bpcu_densify(d, b, &sb, &db)) != BP_OK)
            goto done;
        pb = &db;
        gemm_form(pb, out, &gb);
    }
    /* the output must be row-major (op N) with a nonzero batch stride */
    if (!gemm_form(out, out, &gc) || gc.op != CUBLAS_OP_N || (batch > 1 && gc.batch_stride == 0)) {
        dc = *out;
        dc.offset = 0;
        int64_t n = 1;
        for (int32_t k = r - 1; k >= 0; k--)
            dc.strides[k] = n, n *= out->shape[k];
        sc.bytes = (size_t)n * bp_dtype_size(out->dtype);
        if ((st = bpcu_scratch(d, sc.bytes, &sc.ptr)) != BP_OK)
            goto done;
        dc.buffer = &sc;
        pc = &dc;
        gemm_form(pc, out, &gc);
    }
    {
        cudaDataType t;
        cublasComputeType_t ct;
        float alpha_f = 1.0f, beta_f = 0.0f;
        double alpha_d = 1.0, beta_d = 0.0;
        const void *alpha = &alpha_f, *beta = &beta_f;
        switch (out->dtype) {
        case BP_F64: t = CUDA_R_64F, ct = CUBLAS_COMPUTE_64F, alpha = &alpha_d, beta = &beta_d; break;
        case BP_F32: t = CUDA_R_32F, ct = d->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F; break;
        case BP_F16: t = CUDA_R_16F, ct = CUBLAS_COMPUTE_32F; break;
        default: t = CUDA_R_16BF, ct = CUBLAS_COMPUTE_32F; break;
        }
        /* column-major: C^T (N x M) = op(B)^T-side (N x K) * op(A)-side (K x M) */
        std::lock_guard<std::mutex> lock(d->blas_mu);
        cublasStatus_t bs = cublasGemmStridedBatchedEx_64(
            d->blas, gb.op, ga.op, N, M, K, alpha, bpcu_ptr(pb), t, gb.ld, gb.batch_stride,
            bpcu_ptr(pa), t, ga.ld, ga.batch_stride, beta, bpcu_ptr(pc), t, gc.ld,
            gc.batch_stride, batch, ct, CUBLAS_GEMM_DEFAULT);
        if (bs != CUBLAS_STATUS_SUCCESS) {
            char what[160];
            snprintf(what, sizeof what, "cublasGemmStridedBatchedEx (M=%lld N=%lld K=%lld "
                     "batch=%lld %s)", (long long)M, (long long)N, (long long)K,
                     (long long)batch, bp_dtype_name(out->dtype));
            st = bpcu_blas_fail(d, bs, what);
            goto done;
        }
    }
    /* cuBLAS reported its own launch; the copy back checks its kernel. (No
     * cudaGetLastError here: it could pick up an error cuBLAS handled.) */
    if (pc != out)
        st = bpcu_copy_view(d, pc, out);
done:
    bpcu_scratch_free(d, sa.ptr);
    bpcu_scratch_free(d, sb.ptr);
    bpcu_scratch_free(d, sc.ptr);
    return st;
}

bp_status bpcu_matmul(void *dev, const bp_view *a, const bp_view *b, const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "matmul", out, {a, b});
    if (in.status != BP_OK)
        return in.status;
    if (bpcu_numel(out) == 0)
        return BP_OK;
    int32_t r = out->rank;
    if (a->shape[r - 1] == 0) { /* K = 0: zeros (all-zero bits is 0 in every dtype) */
        uint64_t zero = 0;
        return bpcu_fill(dev, out, &zero);
    }
    if (bp_dtype_is_float(out->dtype))
        return matmul_blas(d, a, b, out);
    if (bp_dtype_is_int(out->dtype))
        return matmul_int(d, a, b, out);
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: matmul not implemented for %s",
                     bp_dtype_name(out->dtype));
}

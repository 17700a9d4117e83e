/* GEMM (ONNX Gemm): out = alpha a b + beta c, with a (M, K) and b (K, N) as
 * the core hands them (a transpose is a view with swapped strides) and c
 * broadcast to (M, N) or absent (p.i[0]); p.f[0] alpha, p.f[1] beta.
 *
 * Floats: cuBLAS (cublasGemmEx_64), row-major by operand swap as matmul.cu,
 * a transposed view given to cuBLAS as CUBLAS_OP_T with its leading
 * dimension, never copied (only a view that is neither row- nor
 * column-major is densified first). c is copied (broadcast) into out
 * first and cuBLAS adds beta times it; f16/bf16 accumulate in f32 and round
 * once, f32 uses TF32 only with tf32 = true (as matmul). As in BLAS, beta =
 * 0 does not read c, so a NaN or infinity in c does not reach the result
 * then; K = 0 gives beta c (or zeros).
 *
 * Integers: a thread per output, the products summed in 64 bits
 * (wrapping); with alpha and beta whole numbers the result is
 * alpha P + beta c in wrapping integer arithmetic, otherwise it is
 * computed in double from the wrapped P and converted by the cast rules. */
#include <math.h>
#include <stdio.h>

#include "elem.h"
#include "op.h"

/* ---- integers ------------------------------------------------------------------- */

typedef struct bpcu_gemm_args {
    int64_t M, N, K;
    int64_t ars, acs, brs, bcs, crs, ccs, ors, ocs;
    bool has_c, whole;
    long long ai, bi;              /* alpha, beta as integers (whole) */
    double af, bf;                 /* alpha, beta */
    bp_dtype dt;
} bpcu_gemm_args;

template <class T>
__global__ void bpcu_k_gemm_int(bpcu_gemm_args g, const T *a, const T *b, const T *c, char *out)
{
    BPCU_FOR(i, g.M * g.N) {
        int64_t m = i / g.N, n = i - m * g.N;
        uint64_t acc = 0;
        for (int64_t k = 0; k < g.K; k++)
            acc += (uint64_t)(int64_t)a[m * g.ars + k * g.acs] *
                   (uint64_t)(int64_t)b[k * g.brs + n * g.bcs];
        int64_t cv = g.has_c ? (int64_t)c[m * g.crs + n * g.ccs] : 0;
        char *p = out + (m * g.ors + n * g.ocs) * (int64_t)sizeof(T);
        if (g.whole) {
            bpcu_st_wrap(g.dt, p, (uint64_t)g.ai * acc + (uint64_t)g.bi * (uint64_t)cv);
        } else {
            T prod;
            bpcu_st_wrap(g.dt, (char *)&prod, acc); /* P as the dtype holds it */
            bp_elem_store_f64(g.dt, p, g.af * (double)prod + (g.has_c ? g.bf * (double)cv : 0.0));
        }
    }
}

static bool whole(double v, long long *out)
{
    if (!(v >= -9.2e18 && v <= 9.2e18) || v != floor(v))
        return false;
    *out = (long long)v;
    return true;
}

static bp_status gemm_int(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *a = c->in[0], *b = c->in[1], *cc = c->in[2], *out = c->out[0];
    bpcu_gemm_args g;
    memset(&g, 0, sizeof g);
    g.M = out->shape[0], g.N = out->shape[1], g.K = a->shape[1];
    g.ars = a->strides[0], g.acs = a->strides[1], g.brs = b->strides[0], g.bcs = b->strides[1];
    g.ors = out->strides[0], g.ocs = out->strides[1];
    g.has_c = cc != NULL;
    if (cc)
        g.crs = cc->strides[0], g.ccs = cc->strides[1];
    g.af = c->p.f[0], g.bf = c->p.f[1];
    g.whole = whole(g.af, &g.ai) && whole(g.bf, &g.bi);
    g.dt = out->dtype;
    const char *cp = cc ? bpcu_ptr(cc) : bpcu_ptr(a); /* not read without c */
    cudaError_t e = cudaSuccess;
    unsigned nb = bpcu_blocks(g.M * g.N);
    BPCU_DISPATCH_INT(g.dt, e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_gemm_int<T>, g,
                                            (const T *)bpcu_ptr(a), (const T *)bpcu_ptr(b),
                                            (const T *)cp, bpcu_ptr(out)));
    return bpcu_launched(d, e, "integer gemm kernel");
}

/* ---- floats through cuBLAS --------------------------------------------------------- */

/* K = 0 (cuBLAS is not asked to multiply nothing): out = beta * c (in out
 * already) when use_c, else zeros (out's memory is not read then) */
template <class S> __global__ void bpcu_k_gemm_empty_k(bpcu_ix ix, bool use_c, double beta, S *out)
{
    int64_t off[1];
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<1>(ix, i, off);
        double v = use_c ? beta * (double)bpcu_ft<S>::ld(out[off[0]]) : 0.0;
        out[off[0]] = bpcu_ft<S>::std_(v);
    }
}

static bp_status gemm_empty_k(bpcu_device *d, const bp_view *out, bool use_c, double beta)
{
    const bp_view *vs[1] = {out};
    bpcu_ix ix = bpcu_collapse(1, vs);
    cudaError_t e = cudaSuccess;
    BPCU_DISPATCH_FLOAT(out->dtype, e = bpcu_launch(d->stream, bpcu_blocks(ix.n), BPCU_THREADS, 0,
                                                    bpcu_k_gemm_empty_k<T>, ix, use_c, beta,
                                                    (T *)bpcu_ptr(out)));
    return bpcu_launched(d, e, "gemm kernel (K = 0)");
}

/* v (rows x cols) as a cuBLAS operand, densified into scratch if it is
 * neither row- nor column-major. */
static bp_status operand(bpcu_device *d, const bp_view *v, bpcu_buf *buf, bp_view *dense,
                         const bp_view **use, cublasOperation_t *op, int64_t *ld)
{
    *use = v;
    if (bpcu_matrix_form(v->shape[0], v->shape[1], v->strides[0], v->strides[1], op, ld))
        return BP_OK;
    bp_status st = bpcu_densify(d, v, buf, dense);
    if (st != BP_OK)
        return st;
    *use = dense;
    bpcu_matrix_form(v->shape[0], v->shape[1], dense->strides[0], dense->strides[1], op, ld);
    return BP_OK;
}

static bp_status gemm_blas(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *a = c->in[0], *b = c->in[1], *cc = c->in[2], *out = c->out[0];
    int64_t M = out->shape[0], N = out->shape[1], K = a->shape[1];
    double alpha = c->p.f[0], beta = c->p.f[1];
    bool use_c = cc != NULL && beta != 0.0;
    bpcu_buf sa = bpcu_buf(), sb = bpcu_buf(), so = bpcu_buf();
    bp_view da, db, dout;
    const bp_view *pa = a, *pb = b, *po = out;
    cublasOperation_t opa = CUBLAS_OP_N, opb = CUBLAS_OP_N, opo = CUBLAS_OP_N;
    int64_t lda = 1, ldb = 1, ldo = 1;
    bp_status st = BP_OK;
    /* the output as cuBLAS's C: row-major (op N), else computed in dense scratch */
    if (!bpcu_matrix_form(M, N, out->strides[0], out->strides[1], &opo, &ldo) ||
        opo != CUBLAS_OP_N) {
        dout = *out;
        dout.offset = 0;
        dout.strides[0] = N, dout.strides[1] = 1;
        so.bytes = (size_t)(M * N) * bp_dtype_size(out->dtype);
        if ((st = bpcu_scratch(d, so.bytes, &so.ptr)) != BP_OK)
            return st;
        dout.buffer = &so;
        po = &dout;
        bpcu_matrix_form(M, N, N, 1, &opo, &ldo);
    }
    if (use_c)
        st = bpcu_copy_view(d, cc, po); /* c broadcast into C */
    /* alpha 0 never reads a and b (BLAS's rule; cuBLAS's f16 path multiplied
     * them: NaN there gave NaN, seen on an H200): the empty product's code. */
    const bool product = K > 0 && alpha != 0.0;
    if (st == BP_OK && !product)
        st = gemm_empty_k(d, po, use_c, beta);
    if (st == BP_OK && product)
        st = operand(d, a, &sa, &da, &pa, &opa, &lda);
    if (st == BP_OK && product)
        st = operand(d, b, &sb, &db, &pb, &opb, &ldb);
    if (st == BP_OK && product) {
        cudaDataType t;
        cublasComputeType_t ct;
        float af = (float)alpha, bf = use_c ? (float)beta : 0.0f;
        double ad = alpha, bd = use_c ? beta : 0.0;
        const void *pal = &af, *pbe = &bf;
        switch (out->dtype) {
        case BP_F64: t = CUDA_R_64F, ct = CUBLAS_COMPUTE_64F, pal = &ad, pbe = &bd; break;
        case BP_F32: t = CUDA_R_32F, ct = d->tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F; break;
        case BP_F16: t = CUDA_R_16F, ct = CUBLAS_COMPUTE_32F; break;
        default: t = CUDA_R_16BF, ct = CUBLAS_COMPUTE_32F; break;
        }
        /* column-major: C^T (N x M) = op(B)^T-side (N x K) * op(A)-side (K x M) */
        cublasStatus_t bs;
        {
            std::lock_guard<std::mutex> lock(d->blas_mu);
            bs = cublasGemmEx_64(d->blas, opb, opa, N, M, K, pal, bpcu_ptr(pb), t, ldb,
                                 bpcu_ptr(pa), t, lda, pbe, bpcu_ptr(po), t, ldo, ct,
                                 CUBLAS_GEMM_DEFAULT);
        }
        if (bs != CUBLAS_STATUS_SUCCESS) {
            char what[160];
            snprintf(what, sizeof what, "cublasGemmEx (M=%lld N=%lld K=%lld %s)", (long long)M,
                     (long long)N, (long long)K, bp_dtype_name(out->dtype));
            st = bpcu_blas_fail(d, bs, what);
        }
    }
    if (st == BP_OK && po != out)
        st = bpcu_copy_view(d, po, out);
    bpcu_scratch_free(d, sa.ptr);
    bpcu_scratch_free(d, sb.ptr);
    bpcu_scratch_free(d, so.ptr);
    return st;
}

bp_status bpcu_op_gemm(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *a = c->in[0], *b = c->in[1], *out = c->out[0];
    if (a->rank != 2 || b->rank != 2 || out->rank != 2 || a->shape[0] != out->shape[0] ||
        b->shape[1] != out->shape[1] || a->shape[1] != b->shape[0] ||
        (c->in[2] && c->in[2]->rank != 2))
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: gemm: a, b, c and out do not form "
                         "(M, K) x (K, N) -> (M, N)");
    if (bpcu_numel(out) == 0)
        return BP_OK;
    if (bp_dtype_is_float(out->dtype))
        return gemm_blas(d, c);
    if (bp_dtype_is_int(out->dtype))
        return gemm_int(d, c);
    return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: gemm not implemented for %s",
                     bp_dtype_name(out->dtype));
}

/* Matrix multiply: a [..., M, K] x b [..., K, N] -> out [..., M, N].
 *
 * f32 and f64 go to OpenBLAS (cblas_sgemm / cblas_dgemm), one call per batch
 * slice, on the operands in place whenever a slice is a row-major matrix or
 * the transpose of one (CblasTrans); otherwise the slice is packed into a
 * dense temporary first. When b is the same matrix for every batch and a's
 * batch and row axes are one dense block (x @ W on a batch of rows), the whole
 * batch is a single gemm with M * batch rows.
 *
 * f16/bf16 are widened to f32, multiplied by sgemm (so they accumulate in
 * f32, as the binary backend does) and rounded once to the dtype. Integers
 * use a plain loop in 64-bit wrapping arithmetic, rows split across threads. */
#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "blas_cpu.h"

/* One 2-D slice: element (i, j) at p + (i * rs + j * cs) * esz. */
typedef struct mat2 {
    char *p;
    int64_t rows, cols, rs, cs;
} mat2;

/* How cblas can read m in place: row-major (NoTrans, lda = rs) or as the
 * transpose of a row-major matrix (Trans, lda = cs). Strides of extent-1
 * axes do not matter, so they never prevent a layout. */
static bool blas_layout(const mat2 *m, CBLAS_TRANSPOSE *tr, int64_t *ld)
{
    int64_t r = m->rows, c = m->cols;
    if ((m->cs == 1 || c == 1) && (r == 1 || m->rs >= c)) {
        *tr = CblasNoTrans;
        *ld = r == 1 ? (c > 1 ? c : 1) : m->rs;
        return *ld <= INT_MAX;
    }
    if ((m->rs == 1 || r == 1) && (c == 1 || m->cs >= r)) {
        *tr = CblasTrans;
        *ld = c == 1 ? (r > 1 ? r : 1) : m->cs;
        return *ld <= INT_MAX;
    }
    return false;
}

/* Copy m (elements of esz bytes) into dense row-major dst. */
static void pack(const mat2 *m, size_t esz, char *dst)
{
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++)
            memcpy(dst + (i * m->cols + j) * (int64_t)esz,
                   m->p + (i * m->rs + j * m->cs) * (int64_t)esz, esz);
}

/* C = A B for f32/f64 slices. scratch holds at least M*K + K*N + M*N elements
 * when any operand needs packing (NULL otherwise: then none does). */
static void gemm_float(bp_dtype dt, const mat2 *A, const mat2 *B, const mat2 *C, char *scratch)
{
    size_t esz = bp_dtype_size(dt);
    int64_t M = C->rows, N = C->cols, K = A->cols;
    CBLAS_TRANSPOSE ta, tb, tc;
    int64_t lda, ldb, ldc;
    mat2 a = *A, b = *B;
    char *pa = scratch, *pb = scratch ? scratch + M * K * (int64_t)esz : NULL;
    char *pc = pb ? pb + K * N * (int64_t)esz : NULL;
    if (!blas_layout(&a, &ta, &lda)) {
        pack(&a, esz, pa);
        a = (mat2){pa, M, K, K, 1};
        blas_layout(&a, &ta, &lda);
    }
    if (!blas_layout(&b, &tb, &ldb)) {
        pack(&b, esz, pb);
        b = (mat2){pb, K, N, N, 1};
        blas_layout(&b, &tb, &ldb);
    }
    bool c_direct = blas_layout(C, &tc, &ldc) && tc == CblasNoTrans;
    char *cp = c_direct ? C->p : pc;
    if (!c_direct)
        ldc = N > 1 ? N : 1;
    if (dt == BP_F32)
        cblas_sgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)K, 1.0f, (const float *)a.p,
                    (int)lda, (const float *)b.p, (int)ldb, 0.0f, (float *)cp, (int)ldc);
    else
        cblas_dgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)K, 1.0, (const double *)a.p,
                    (int)lda, (const double *)b.p, (int)ldb, 0.0, (double *)cp, (int)ldc);
    if (!c_direct) /* scatter the dense result */
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++)
                memcpy(C->p + (i * C->rs + j * C->cs) * (int64_t)esz,
                       cp + (i * N + j) * (int64_t)esz, esz);
}

/* f16/bf16: widen A and B into dense f32 (scratch: M*K + K*N + M*N floats),
 * sgemm, round C once. */
static void gemm_half(bp_dtype dt, const mat2 *A, const mat2 *B, const mat2 *C, float *scratch)
{
    int64_t M = C->rows, N = C->cols, K = A->cols;
    float *fa = scratch, *fb = fa + M * K, *fc = fb + K * N;
    bool f16 = dt == BP_F16;
    for (int64_t i = 0; i < M; i++)
        for (int64_t k = 0; k < K; k++) {
            uint16_t h = *(const uint16_t *)(A->p + (i * A->rs + k * A->cs) * 2);
            fa[i * K + k] = f16 ? bp_f16_to_f32(h) : bp_bf16_to_f32(h);
        }
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++) {
            uint16_t h = *(const uint16_t *)(B->p + (k * B->rs + j * B->cs) * 2);
            fb[k * N + j] = f16 ? bp_f16_to_f32(h) : bp_bf16_to_f32(h);
        }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, fa,
                (int)(K > 1 ? K : 1), fb, (int)(N > 1 ? N : 1), 0.0f, fc, (int)(N > 1 ? N : 1));
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float v = fc[i * N + j];
            *(uint16_t *)(C->p + (i * C->rs + j * C->cs) * 2) =
                f16 ? bp_f32_to_f16(v) : bp_f32_to_bf16(v);
        }
}

/* ---- integers: 64-bit wrapping, stored back as the low bits ---- */

static int64_t ld_int(bp_dtype dt, const char *p)
{
    switch (dt) {
    case BP_U8: return *(const uint8_t *)p;
    case BP_I8: return *(const int8_t *)p;
    case BP_I32: return *(const int32_t *)p;
    default: return *(const int64_t *)p;
    }
}

/* Two's-complement reinterpretation of the low `bits` bits, without relying
 * on implementation-defined unsigned-to-signed conversion. */
static int64_t low_bits_signed(uint64_t u, int bits)
{
    uint64_t sign = (uint64_t)1 << (bits - 1);
    u &= bits == 64 ? ~(uint64_t)0 : (sign << 1) - 1;
    return (u & sign) ? (int64_t)(u - sign) - (int64_t)(sign - 1) - 1 : (int64_t)u;
}

static void st_int_wrap(bp_dtype dt, char *p, uint64_t v)
{
    switch (dt) {
    case BP_U8: *(uint8_t *)p = (uint8_t)v; break;
    case BP_I8: *(int8_t *)p = (int8_t)low_bits_signed(v, 8); break;
    case BP_I32: *(int32_t *)p = (int32_t)low_bits_signed(v, 32); break;
    default: *(int64_t *)p = low_bits_signed(v, 64); break;
    }
}

typedef struct int_job {
    bp_dtype dt;
    size_t esz;
    mat2 A, C;
    const uint64_t *bd;  /* B as dense K x N uint64 */
    _Atomic bool oom;
} int_job;

/* Rows [lo, hi) of C: for each, acc[j] = sum_k A[i][k] * B[k][j], i-k-j order
 * so the inner loop streams a row of B. */
static void int_rows(void *p, int64_t lo, int64_t hi)
{
    int_job *j = p;
    int64_t N = j->C.cols, K = j->A.cols;
    uint64_t *acc = malloc((size_t)N * sizeof *acc);
    if (!acc) {
        j->oom = true;
        return;
    }
    for (int64_t i = lo; i < hi; i++) {
        memset(acc, 0, (size_t)N * sizeof *acc);
        for (int64_t k = 0; k < K; k++) {
            uint64_t aik = (uint64_t)ld_int(j->dt, j->A.p + (i * j->A.rs + k * j->A.cs) * (int64_t)j->esz);
            const uint64_t *brow = j->bd + k * N;
            for (int64_t c = 0; c < N; c++)
                acc[c] += aik * brow[c];
        }
        for (int64_t c = 0; c < N; c++)
            st_int_wrap(j->dt, j->C.p + (i * j->C.rs + c * j->C.cs) * (int64_t)j->esz, acc[c]);
    }
    free(acc);
}

static bp_status gemm_int(void *dev, bp_dtype dt, const mat2 *A, const mat2 *B, const mat2 *C,
                          uint64_t *bd)
{
    size_t esz = bp_dtype_size(dt);
    for (int64_t k = 0; k < B->rows; k++)
        for (int64_t c = 0; c < B->cols; c++)
            bd[k * B->cols + c] = (uint64_t)ld_int(dt, B->p + (k * B->rs + c * B->cs) * (int64_t)esz);
    int_job j = {.dt = dt, .esz = esz, .A = *A, .C = *C, .bd = bd};
    j.oom = false;
    int64_t work = A->cols * C->cols;
    int64_t grain = BPC_GRAIN_LIGHT / (work > 0 ? work : 1);
    bpc_parallel(dev, C->rows, grain > 1 ? grain : 1, int_rows, &j);
    if (j.oom)
        return bpc_fail(dev, BP_ERR_OUT_OF_MEMORY, "matmul: no memory for an accumulator row");
    return BP_OK;
}

/* ---- the entry ---- */

static bool dense_rows(const bp_view *v, int32_t upto)
{
    /* axes [0, upto) of v are row-major over the rest of the tensor */
    int64_t expect = v->strides[upto - 1] * v->shape[upto - 1];
    for (int32_t k = upto - 2; k >= 0; k--) {
        if (v->shape[k] != 1 && v->strides[k] != expect)
            return false;
        expect *= v->shape[k];
    }
    return true;
}

bp_status bpc_matmul(void *dev, const bp_view *a, const bp_view *b, const bp_view *out)
{
    int32_t r = out->rank;
    int64_t M = out->shape[r - 2], N = out->shape[r - 1], K = a->shape[r - 1];
    bp_dtype dt = out->dtype;
    size_t esz = bp_dtype_size(dt);
    if (bpc_numel(out) == 0)
        return BP_OK;
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX)
        return bpc_fail(dev, BP_ERR_BACKEND,
                        "matmul: a dimension over %d (M=%lld N=%lld K=%lld) is beyond cblas's "
                        "int sizes",
                        INT_MAX, (long long)M, (long long)N, (long long)K);

    /* batch dims: one cursor over the three views' leading axes */
    bp_view bv[3] = {*out, *a, *b};
    for (int v = 0; v < 3; v++) {
        bv[v].rank = r - 2;
        for (int32_t k = 0; k < r - 2; k++)
            bv[v].shape[k] = out->shape[k];
    }
    int64_t batch = bpc_numel(&bv[0]);
    mat2 A = {bpc_base(a), M, K, a->strides[r - 2], a->strides[r - 1]};
    mat2 B = {bpc_base(b), K, N, b->strides[r - 2], b->strides[r - 1]};
    mat2 C = {bpc_base(out), M, N, out->strides[r - 2], out->strides[r - 1]};

    if (K == 0) { /* an empty sum: zeros (all-zero bits is 0 in every dtype) */
        bpc_cursor it;
        int64_t pos[3], len;
        bpc_cursor_init(&it, 3, (const bp_view *[]){&bv[0], &bv[1], &bv[2]}, 0, batch);
        while (bpc_cursor_next(&it, pos, &len))
            for (int64_t t = 0; t < len; t++)
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++)
                        memset(C.p + ((pos[0] + t * it.it.inner_stride[0]) + i * C.rs + j * C.cs) *
                                         (int64_t)esz,
                               0, esz);
        return BP_OK;
    }

    /* x @ W over a batch: one gemm of batch * M rows */
    bool b_shared = true;
    for (int32_t k = 0; k < r - 2; k++)
        b_shared = b_shared && (b->strides[k] == 0 || b->shape[k] == 1);
    if (batch > 1 && b_shared && (dt == BP_F32 || dt == BP_F64) && dense_rows(a, r - 1) &&
        dense_rows(out, r - 1) && A.cs == 1 && C.cs == 1 && batch * M <= INT_MAX) {
        A.rows = C.rows = batch * M;
        M = batch * M;
        batch = 1;
        bv[0].rank = bv[1].rank = bv[2].rank = 0;
    }

    /* scratch: packing room for floats (used only if a slice needs it), the
     * f32 copies for f16/bf16, dense B for integers */
    bool is_float = dt == BP_F32 || dt == BP_F64, is_half = dt == BP_F16 || dt == BP_BF16;
    CBLAS_TRANSPOSE tr;
    int64_t ld;
    bool needs_pack = is_float && (!blas_layout(&A, &tr, &ld) || !blas_layout(&B, &tr, &ld) ||
                                   !blas_layout(&C, &tr, &ld) || tr != CblasNoTrans);
    size_t bytes = 0;
    if (needs_pack)
        bytes = (size_t)(M * K + K * N + M * N) * esz;
    else if (is_half)
        bytes = (size_t)(M * K + K * N + M * N) * sizeof(float);
    else if (!is_float)
        bytes = (size_t)(K * N) * sizeof(uint64_t);
    char *scratch = bytes ? malloc(bytes) : NULL;
    if (bytes && !scratch)
        return bpc_fail(dev, BP_ERR_OUT_OF_MEMORY,
                        "matmul: no memory for %zu bytes of scratch (M=%lld N=%lld K=%lld)", bytes,
                        (long long)M, (long long)N, (long long)K);

    bp_status st = BP_OK;
    bpc_cursor it;
    int64_t pos[3], len;
    bpc_cursor_init(&it, 3, (const bp_view *[]){&bv[0], &bv[1], &bv[2]}, 0, batch);
    while (st == BP_OK && bpc_cursor_next(&it, pos, &len))
        for (int64_t t = 0; st == BP_OK && t < len; t++) {
            mat2 Ab = A, Bb = B, Cb = C;
            Cb.p += (pos[0] + t * it.it.inner_stride[0]) * (int64_t)esz;
            Ab.p += (pos[1] + t * it.it.inner_stride[1]) * (int64_t)esz;
            Bb.p += (pos[2] + t * it.it.inner_stride[2]) * (int64_t)esz;
            if (is_float)
                gemm_float(dt, &Ab, &Bb, &Cb, scratch);
            else if (is_half)
                gemm_half(dt, &Ab, &Bb, &Cb, (float *)scratch);
            else
                st = gemm_int(dev, dt, &Ab, &Bb, &Cb, (uint64_t *)scratch);
        }
    free(scratch);
    return st;
}

/* Matrix multiply: a [..., M, K] x b [..., K, N] -> out [..., M, N].
 *
 * f32 and f64 go to OpenBLAS (cblas_sgemm / cblas_dgemm), one call per batch
 * slice, on the operands in place whenever a slice is a row-major matrix or
 * the transpose of one (CblasTrans); otherwise the slice is packed into a
 * dense temporary first. When b is the same matrix for every batch and a's
 * batch and row axes are one dense block (x @ W on a batch of rows), the whole
 * batch is a single gemm with M * batch rows.
 *
 * f16/bf16 and integers are rare here: they run the reference kernel
 * (bpk_matmul: f16/bf16 accumulate in f32, integers wrap in 64 bits), with
 * the batch and row axes split across threads, so they give the binary
 * backend's bits. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "openblas.h"
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

/* C = A B for f32/f64 slices, on d's pool (d NULL: on this thread).
 * scratch holds at least M*K + K*N + M*N elements when any operand needs
 * packing (NULL otherwise: then none does). */
static void gemm_float(bpc_dev *d, bp_dtype dt, const mat2 *A, const mat2 *B, const mat2 *C,
                       char *scratch)
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
    bpc_gemm_on_pool(d, dt, ta, tb, M, N, K, 1.0, a.p, lda, b.p, ldb, 0.0, cp, ldc);
    if (!c_direct) /* scatter the dense result */
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++)
                memcpy(C->p + (i * C->rs + j * C->cs) * (int64_t)esz,
                       cp + (i * N + j) * (int64_t)esz, esz);
}

/* f16/bf16/integers: the reference kernel on slabs of rows (and batches). */
static bp_status ref_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo, int64_t hi)
{
    return bpk_matmul(d, &v[1], &v[2], &v[0]);
}

static bp_status matmul_ref(bpc_dev *d, const bp_view *a, const bp_view *b, const bp_view *out)
{
    /* out's batch axes run along a's and b's (already broadcast to out's
     * shape); out's row axis along a's rows only: b is whole in every slab */
    int32_t r = out->rank, vax[3][BP_MAX_RANK];
    for (int32_t k = 0; k < r; k++)
        vax[0][k] = vax[1][k] = vax[2][k] = k;
    vax[2][r - 2] = -1;
    int64_t M = out->shape[r - 2], N = out->shape[r - 1], K = a->shape[r - 1];
    int64_t work = bpk_numel(out) / (M > 0 ? M : 1) * M * N * (K > 0 ? K : 1);
    return bpc_split(d, 3, (const bp_view *[]){out, a, b}, r - 1,
                     (const int32_t(*)[BP_MAX_RANK])vax, false, work, ref_slab, NULL);
}

/* ---- batches across threads ---- */

/* A batch of independent gemms (none needs packing): the batches go to the
 * kernel pool, each a single-threaded OpenBLAS call, instead of one
 * multithreaded call after another (OpenBLAS splits every call of 128^3
 * and more across its threads and joins them again: per call, a few
 * microseconds of hand-over on a 100-microsecond gemm; measured: f64
 * 64 x 128^3 ~1.2x faster, f32 unchanged, docs/performance.md). A single
 * gemm is cut into blocks on the pool instead (bpc_gemm_on_pool). */
typedef struct batch_job {
    bp_dtype dt;
    const mat2 *A, *B, *C;
    const int64_t *off; /* per batch: element offsets of C, A, B */
} batch_job;

static void batch_item(void *ctx, int64_t t)
{
    const batch_job *j = ctx;
    size_t esz = bp_dtype_size(j->dt);
    mat2 Ab = *j->A, Bb = *j->B, Cb = *j->C;
    Cb.p += j->off[3 * t] * (int64_t)esz;
    Ab.p += j->off[3 * t + 1] * (int64_t)esz;
    Bb.p += j->off[3 * t + 2] * (int64_t)esz;
    gemm_float(NULL, j->dt, &Ab, &Bb, &Cb, NULL);
}

static bool batch_parallel(bpc_dev *d, bp_dtype dt, const mat2 *A, const mat2 *B, const mat2 *C,
                           bpk_iter *it, int64_t batch)
{
    int team = d->threads < batch ? d->threads : (int)batch;
    if (team < 2 || batch > ((int64_t)1 << 24))
        return false;
    int64_t *off = malloc((size_t)batch * 3 * sizeof *off);
    if (!off)
        return false; /* the sequential loop needs no memory */
    int64_t pos[3], t = 0;
    while (bpk_iter_next(it, pos))
        for (int64_t i = 0; i < it->inner; i++, t++)
            for (int v = 0; v < 3; v++)
                off[3 * t + v] = pos[v] + i * it->inner_stride[v];
    batch_job j = {dt, A, B, C, off};
    bpc_blas_one_thread(); /* the pool's threads run one gemm each */
    bpc_pool_run(d->pool, team, batch, batch_item, &j);
    free(off);
    return true;
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
    if (bpk_numel(out) == 0)
        return BP_OK;
    if ((dt != BP_F32 && dt != BP_F64) || K == 0) /* K == 0: the reference writes the zeros */
        return matmul_ref(dev, a, b, out);
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX)
        return bpk_fail(dev, BP_ERR_BACKEND,
                        "matmul: a dimension over %d (M=%lld N=%lld K=%lld) is beyond cblas's "
                        "int sizes",
                        INT_MAX, (long long)M, (long long)N, (long long)K);

    /* batch dims: one iterator over the three views' leading axes */
    bp_view bv[3] = {*out, *a, *b};
    for (int v = 0; v < 3; v++) {
        bv[v].rank = r - 2;
        for (int32_t k = 0; k < r - 2; k++)
            bv[v].shape[k] = out->shape[k];
    }
    int64_t batch = bpk_numel(&bv[0]);
    mat2 A = {bpk_base(a), M, K, a->strides[r - 2], a->strides[r - 1]};
    mat2 B = {bpk_base(b), K, N, b->strides[r - 2], b->strides[r - 1]};
    mat2 C = {bpk_base(out), M, N, out->strides[r - 2], out->strides[r - 1]};

    /* x @ W over a batch: one gemm of batch * M rows */
    bool b_shared = true;
    for (int32_t k = 0; k < r - 2; k++)
        b_shared = b_shared && (b->strides[k] == 0 || b->shape[k] == 1);
    if (batch > 1 && b_shared && dense_rows(a, r - 1) && dense_rows(out, r - 1) && A.cs == 1 &&
        C.cs == 1 && batch * M <= INT_MAX) {
        A.rows = C.rows = batch * M;
        M = batch * M;
        batch = 1;
        bv[0].rank = bv[1].rank = bv[2].rank = 0;
    }

    /* scratch: packing room, used only if a slice has no cblas layout */
    CBLAS_TRANSPOSE tr;
    int64_t ld;
    bool needs_pack = !blas_layout(&A, &tr, &ld) || !blas_layout(&B, &tr, &ld) ||
                      !blas_layout(&C, &tr, &ld) || tr != CblasNoTrans;
    size_t bytes = needs_pack ? (size_t)(M * K + K * N + M * N) * esz : 0;
    char *scratch = bytes ? malloc(bytes) : NULL;
    if (bytes && !scratch)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY,
                        "matmul: no memory for %zu bytes of scratch (M=%lld N=%lld K=%lld)", bytes,
                        (long long)M, (long long)N, (long long)K);

    bpk_iter it;
    int64_t pos[3];
    bpk_iter_init(&it, 3, (const bp_view *[]){&bv[0], &bv[1], &bv[2]});
    if (!scratch && batch >= 2 && batch_parallel(dev, dt, &A, &B, &C, &it, batch))
        return BP_OK;
    while (bpk_iter_next(&it, pos))
        for (int64_t t = 0; t < it.inner; t++) {
            mat2 Ab = A, Bb = B, Cb = C;
            Cb.p += (pos[0] + t * it.inner_stride[0]) * (int64_t)esz;
            Ab.p += (pos[1] + t * it.inner_stride[1]) * (int64_t)esz;
            Bb.p += (pos[2] + t * it.inner_stride[2]) * (int64_t)esz;
            gemm_float(dev, dt, &Ab, &Bb, &Cb, scratch);
        }
    free(scratch);
    return BP_OK;
}

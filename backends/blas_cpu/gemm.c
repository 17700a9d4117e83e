/* GEMM: out = alpha op(a) op(b) + beta c with OpenBLAS for f32 and f64.
 *
 * The core hands a transposed operand as a view with swapped strides; here
 * such a view is given to cblas_?gemm as CblasTrans on the operand's own
 * memory, so x @ w.T reads w in place and nothing is copied (a view that is
 * neither row-major nor a transpose of one, which the core never makes for
 * gemm, would be packed). c is broadcast into the output first (one pass,
 * any strides: a bias row has stride 0 down the rows) and BLAS scales and
 * adds it with beta, in the same call. alpha and beta go to sgemm as floats.
 *
 * As the reference (backends/kernels/gemm.c) and BLAS itself define it:
 * beta == 0 or no c leaves c unread; alpha == 0 leaves a and b unread (the
 * reference runs that case). f16/bf16 and integers run the reference kernel
 * with the rows split across threads, as matmul does (the same bits as the
 * binary backend). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "openblas.h"
#include "blas_cpu.h"
#include "op.h"

/* How cblas reads a rows x cols view in place: row-major (NoTrans, ld =
 * the row stride) or the transpose of a row-major matrix (Trans, ld = the
 * column stride); extent-1 axes may have any stride. */
static bool in_place(const bp_view *v, CBLAS_TRANSPOSE *tr, int64_t *ld)
{
    int64_t r = v->shape[0], c = v->shape[1], rs = v->strides[0], cs = v->strides[1];
    if ((cs == 1 || c == 1) && (r == 1 || rs >= c)) {
        *tr = CblasNoTrans;
        *ld = r == 1 ? (c > 1 ? c : 1) : rs;
        return *ld <= INT_MAX;
    }
    if ((rs == 1 || r == 1) && (c == 1 || cs >= r)) {
        *tr = CblasTrans;
        *ld = c == 1 ? (r > 1 ? r : 1) : cs;
        return *ld <= INT_MAX;
    }
    return false;
}

/* A dense row-major copy of v in dst (elements of esz bytes). */
static void pack(const bp_view *v, size_t esz, char *dst, bp_view *dv)
{
    int64_t r = v->shape[0], c = v->shape[1];
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++)
            memcpy(dst + (i * c + j) * (int64_t)esz,
                   bpk_base(v) + (i * v->strides[0] + j * v->strides[1]) * (int64_t)esz, esz);
    *dv = *v;
    dv->buffer = dst;
    dv->offset = 0;
    dv->strides[0] = c;
    dv->strides[1] = 1;
}

/* out (dense M x N) = c broadcast, element by element. */
static void broadcast_c(const bp_view *c, const bp_view *out, size_t esz)
{
    int64_t m = out->shape[0], n = out->shape[1];
    char *o = bpk_base(out);
    const char *src = bpk_base(c);
    for (int64_t i = 0; i < m; i++) {
        const char *row = src + i * c->strides[0] * (int64_t)esz;
        if (c->strides[1] == 1) {
            memcpy(o + i * n * (int64_t)esz, row, (size_t)n * esz);
            continue;
        }
        for (int64_t j = 0; j < n; j++)
            memcpy(o + (i * n + j) * (int64_t)esz, row + j * c->strides[1] * (int64_t)esz, esz);
    }
}

/* ---- one gemm in blocks on the pool ----------------------------------------------- */

/* OpenBLAS's own threads would take turns with the pool's (an op on the
 * pool, then a gemm on OpenBLAS's threads), and each team spins (OpenBLAS:
 * sched_yield) while the other works: 11% of ShuffleNet's samples on two
 * cores, from the one Gemm at its end. So OpenBLAS runs single-threaded
 * and a gemm is cut into blocks of C for the pool: of rows (each block packs
 * its rows of A, and all of B again) or of columns (its columns of B, all
 * of A again), whichever side of C is longer; at least 16 rows or 64
 * columns (OpenBLAS's kernels want width), two blocks per thread. */
typedef struct pool_gemm {
    bp_dtype dt;
    CBLAS_TRANSPOSE ta, tb;
    int64_t m, n, k, lda, ldb, ldc, block;
    bool by_rows;
    double alpha, beta;
    const char *a, *b;
    char *c;
} pool_gemm;

/* y (len, incy apart) := alpha op(M) x + beta y, op(M) rows x cols, by
 * cblas_?gemv. beta = 0 zeroes y first: OpenBLAS scales y by beta, and y
 * may be uninitialised memory (0 x NaN is NaN). */
static void one_gemv(bp_dtype dt, CBLAS_TRANSPOSE t, int64_t rows, int64_t cols, double alpha,
                     const void *mat, int64_t ld, const void *x, int64_t incx, double beta,
                     void *y, int64_t incy)
{
    const int64_t len = t == CblasNoTrans ? rows : cols;
    if (beta == 0.0) {
        for (int64_t i = 0; i < len; i++)
            if (dt == BP_F32)
                ((float *)y)[i * incy] = 0.0f;
            else
                ((double *)y)[i * incy] = 0.0;
        beta = 1.0;
    }
    if (dt == BP_F32)
        cblas_sgemv(CblasRowMajor, t, (int)rows, (int)cols, (float)alpha, mat, (int)ld, x,
                    (int)incx, (float)beta, y, (int)incy);
    else
        cblas_dgemv(CblasRowMajor, t, (int)rows, (int)cols, alpha, mat, (int)ld, x, (int)incx,
                    beta, y, (int)incy);
}

bool bpc_gemm_as_gemv(bp_dtype dt, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
                      int64_t k, double alpha, const void *a, int64_t lda, const void *b,
                      int64_t ldb, double beta, void *c, int64_t ldc)
{
    if (k < 1 || (m != 1 && n != 1))
        return false;
    if (m == 1) /* c's row = a's row (stride 1, or lda down a stored column) . op(B) */
        one_gemv(dt, tb == CblasNoTrans ? CblasTrans : CblasNoTrans,
                 tb == CblasNoTrans ? k : n, tb == CblasNoTrans ? n : k, alpha, b, ldb, a,
                 ta == CblasNoTrans ? 1 : lda, beta, c, 1);
    else /* c's column (ldc apart) = op(A) . b's column (ldb apart, or stride 1) */
        one_gemv(dt, ta, ta == CblasNoTrans ? m : k, ta == CblasNoTrans ? k : m, alpha, a, lda, b,
                 tb == CblasNoTrans ? ldb : 1, beta, c, ldc);
    return true;
}

static void one_gemm(bp_dtype dt, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
                     int64_t k, double alpha, const void *a, int64_t lda, const void *b,
                     int64_t ldb, double beta, void *c, int64_t ldc)
{
    if (bpc_gemm_as_gemv(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
        return;
    if (dt == BP_F32)
        cblas_sgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, (float)alpha, a, (int)lda, b,
                    (int)ldb, (float)beta, c, (int)ldc);
    else
        cblas_dgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, alpha, a, (int)lda, b,
                    (int)ldb, beta, c, (int)ldc);
}

static void pool_gemm_block(void *ctx, int64_t t)
{
    const pool_gemm *g = ctx;
    const int64_t es = (int64_t)bp_dtype_size(g->dt), lo = t * g->block;
    const int64_t ext = g->by_rows ? g->m : g->n, len = ext - lo < g->block ? ext - lo : g->block;
    if (g->by_rows) /* rows lo.. of A (row lo, or column lo of the stored transpose) and C */
        one_gemm(g->dt, g->ta, g->tb, len, g->n, g->k, g->alpha,
                 g->a + (g->ta == CblasNoTrans ? lo * g->lda : lo) * es, g->lda, g->b, g->ldb,
                 g->beta, g->c + lo * g->ldc * es, g->ldc);
    else /* columns lo.. of B and C */
        one_gemm(g->dt, g->ta, g->tb, g->m, len, g->k, g->alpha, g->a, g->lda,
                 g->b + (g->tb == CblasNoTrans ? lo : lo * g->ldb) * es, g->ldb, g->beta,
                 g->c + lo * es, g->ldc);
}

void bpc_gemm_on_pool(bpc_dev *d, bp_dtype dt, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m,
                      int64_t n, int64_t k, double alpha, const void *a, int64_t lda,
                      const void *b, int64_t ldb, double beta, void *c, int64_t ldc)
{
    bpc_blas_one_thread();
    pool_gemm g = {.dt = dt, .ta = ta, .tb = tb, .m = m, .n = n, .k = k, .lda = lda,
                   .ldb = ldb, .ldc = ldc, .alpha = alpha, .beta = beta, .a = a, .b = b,
                   .c = c, .by_rows = m > n};
    /* a multiply-add is about a quarter of an elementwise op's element */
    const int team = d ? bpc_team(d, m * n * (k > 0 ? k : 1) / 4) : 1;
    const int64_t ext = g.by_rows ? m : n, least = g.by_rows ? 16 : 64;
    int64_t blocks = 2 * (int64_t)team < ext / least ? 2 * (int64_t)team : ext / least;
    if (team < 2 || blocks < 2) {
        one_gemm(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    g.block = (ext + blocks - 1) / blocks;
    g.block = (g.block + 7) / 8 * 8; /* blocks of columns start on whole vectors */
    blocks = (ext + g.block - 1) / g.block;
    bpc_pool_run(d->pool, team, blocks, pool_gemm_block, &g);
}

/* The reference on slabs of rows: out's and c's rows along a's, b whole. */
static bp_status ref_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo, int64_t hi)
{
    const bpc_op_call *call = args;
    const bp_view *in[3] = {&v[1], &v[2], call->in[2] ? &v[3] : NULL};
    return bpk_op(d, BP_OP_GEMM, call->p, 3, in, 1, (const bp_view *[]){&v[0]});
}

static bp_status gemm_ref(bpc_dev *d, const bpc_op_call *call)
{
    const bp_view *a = call->in[0], *b = call->in[1], *c = call->in[2], *out = call->out[0];
    int32_t vax[4][BP_MAX_RANK] = {{0}, {0}, {-1}, {0}};
    int64_t work = out->shape[0] * out->shape[1] * (a->shape[1] > 0 ? a->shape[1] : 1);
    const bp_view *v[4] = {out, a, b, c ? c : out};
    return bpc_split(d, c ? 4 : 3, v, 1, (const int32_t(*)[BP_MAX_RANK])vax, false, work, ref_slab,
                     call);
}

bp_status bpc_gemm(bpc_dev *d, const bpc_op_call *call)
{
    const bp_view *a = call->in[0], *b = call->in[1], *out = call->out[0];
    const double alpha = call->p->f[0], beta = call->p->f[1];
    const bp_view *c = call->in[2] && beta != 0 ? call->in[2] : NULL;
    bp_dtype dt = out->dtype;
    int64_t m = out->shape[0], n = out->shape[1], k = a->shape[1];
    if (m == 0 || n == 0)
        return BP_OK;
    if ((dt != BP_F32 && dt != BP_F64) || alpha == 0 || k == 0)
        return gemm_ref(d, call);
    if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        return bpk_fail(d, BP_ERR_BACKEND,
                        "gemm: a dimension over %d (M=%lld N=%lld K=%lld) is beyond cblas's int "
                        "sizes", INT_MAX, (long long)m, (long long)n, (long long)k);
    size_t esz = bp_dtype_size(dt);
    CBLAS_TRANSPOSE ta = CblasNoTrans, tb = CblasNoTrans;
    int64_t lda = 1, ldb = 1;
    bp_view pa = *a, pb = *b;
    bool pack_a = !in_place(a, &ta, &lda), pack_b = !in_place(b, &tb, &ldb);
    size_t bytes = ((pack_a ? (size_t)(m * k) : 0) + (pack_b ? (size_t)(k * n) : 0)) * esz;
    char *scratch = bytes ? malloc(bytes) : NULL;
    if (bytes && !scratch)
        return bpk_fail(d, BP_ERR_OUT_OF_MEMORY, "gemm: no memory for %zu bytes of packing",
                        bytes);
    if (pack_a) {
        pack(a, esz, scratch, &pa);
        in_place(&pa, &ta, &lda);
    }
    if (pack_b) {
        pack(b, esz, scratch + (pack_a ? m * k * (int64_t)esz : 0), &pb);
        in_place(&pb, &tb, &ldb);
    }
    if (c)
        broadcast_c(c, out, esz);
    bpc_gemm_on_pool(d, dt, ta, tb, m, n, k, alpha, bpk_base(&pa), lda, bpk_base(&pb), ldb,
                     c ? beta : 0.0, bpk_base(out), n > 1 ? n : 1);
    free(scratch);
    return BP_OK;
}

/* matmul (NumPy semantics): 1-D operands promoted and the promoted axis
 * dropped, batch dimensions broadcast. Floats summed in double, in order,
 * like the reductions; integers exactly, wrapping. */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"
#include "independent.h"

/* One output element: row i of A (from ao) times column j of B (from bo). */
static void dot(const cf_array *a, const cf_array *b, int64_t ao, int64_t bo, int64_t K,
                int64_t N, int64_t i, int64_t j, cf_array *want, int64_t o, double *sc)
{
    if (a->f) {
        double s = 0.0, mag = 0.0;
        for (int64_t k = 0; k < K; k++) {
            double p = a->f[ao + i * K + k] * b->f[bo + k * N + j];
            s += p;
            mag += fabs(p);
        }
        want->f[o] = s;
        sc[o] = mag;
    } else {
        uint64_t s = 0;
        for (int64_t k = 0; k < K; k++)
            s += (uint64_t)a->i[ao + i * K + k] * (uint64_t)b->i[bo + k * N + j];
        want->i[o] = cf_wrap(a->dt, (int64_t)s);
    }
}

bool cf_oracle_matmul(const cf_array *a_in, const cf_array *b_in, cf_array *want, double **scale,
                      int64_t *k)
{
    cf_array a = *a_in, b = *b_in; /* shapes only: the values stay the callers' */
    bool drop_m = a.rank == 1, drop_n = b.rank == 1;
    if (drop_m) {
        a.rank = 2;
        a.shape[1] = a.shape[0];
        a.shape[0] = 1;
    }
    if (drop_n) {
        b.rank = 2;
        b.shape[1] = 1;
    }
    int64_t M = a.shape[a.rank - 2], K = a.shape[a.rank - 1], N = b.shape[b.rank - 1];
    if (scale)
        *scale = NULL;
    if (k)
        *k = K;
    /* batch dimensions broadcast: the shapes without the matrix axes */
    cf_array ab[2] = {a, b};
    ab[0].rank -= 2;
    ab[1].rank -= 2;
    const cf_array *batch[2] = {&ab[0], &ab[1]};
    int64_t bshape[BP_MAX_RANK], bidx[BP_MAX_RANK], oshape[BP_MAX_RANK];
    int32_t brank = cf_broadcast_shape(2, batch, bshape), orank = 0;
    for (int32_t d = 0; d < brank; d++)
        oshape[orank++] = bshape[d];
    if (!drop_m)
        oshape[orank++] = M;
    if (!drop_n)
        oshape[orank++] = N;
    if (!cf_array_init(want, a.dt, orank, oshape))
        return false;
    double *sc = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof *sc);
    if (!sc)
        return false;
    int64_t nb = cf_numel(brank, bshape);
    for (int64_t bi = 0; bi < nb; bi++) {
        cf_unravel(brank, bshape, bi, bidx);
        int64_t ao = cf_bcast_index(brank, bidx, ab[0].rank, ab[0].shape) * M * K;
        int64_t bo = cf_bcast_index(brank, bidx, ab[1].rank, ab[1].shape) * K * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++)
                dot(&a, &b, ao, bo, K, N, i, j, want, (bi * M + i) * N + j, sc);
    }
    if (scale)
        *scale = sc;
    else
        free(sc);
    return true;
}

/* ONNX Gemm as ops.h and the BLAS convention define it: alpha op(a) op(b) +
 * beta c, with op(a) a's transpose when trans_a; alpha == 0 leaves a and b
 * unread, beta == 0 (or no c) leaves c unread, so their NaNs do not count.
 * Floats: the products summed in double, *scale = |alpha| sum |a b| +
 * |beta c|, *k = K + 1. Integers: the product wraps to the dtype (as
 * matmul's); integral alpha and beta scale it in wrapping integers, others
 * in double with the cast rules. */
bool cf_oracle_gemm(const cf_array *a, const cf_array *b, const cf_array *c, double alpha,
                    double beta, bool trans_a, bool trans_b, cf_array *want, double **scale,
                    int64_t *k)
{
    int64_t M = a->shape[trans_a ? 1 : 0], K = a->shape[trans_a ? 0 : 1];
    int64_t N = b->shape[trans_b ? 0 : 1];
    const int64_t shape[2] = {M, N};
    bool use_c = c && beta != 0;
    if (scale)
        *scale = NULL;
    if (k)
        *k = K + 1;
    if (!cf_array_init(want, a->dt, 2, shape))
        return false;
    double *sc = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof *sc);
    if (!sc)
        return false;
    bool ints = !a->f && alpha == trunc(alpha) && beta == trunc(beta) && fabs(alpha) < 9.2e18 &&
                fabs(beta) < 9.2e18;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            int64_t o = i * N + j, idx[2] = {i, j};
            int64_t ci = use_c ? cf_bcast_index(2, idx, c->rank, c->shape) : 0;
            double f = 0, mag = 0;
            uint64_t u = 0;
            for (int64_t t = 0; alpha != 0 && t < K; t++) {
                int64_t ia = trans_a ? t * M + i : i * K + t;
                int64_t ib = trans_b ? j * K + t : t * N + j;
                if (a->f) {
                    f += a->f[ia] * b->f[ib];
                    mag += fabs(a->f[ia] * b->f[ib]);
                } else {
                    u += (uint64_t)a->i[ia] * (uint64_t)b->i[ib];
                }
            }
            if (a->f) {
                want->f[o] = (alpha != 0 ? alpha * f : 0) + (use_c ? beta * c->f[ci] : 0);
                sc[o] = fabs(alpha) * mag + (use_c ? fabs(beta * c->f[ci]) : 0);
            } else {
                int64_t p = cf_wrap(a->dt, (int64_t)u), cv = use_c ? c->i[ci] : 0;
                if (ints)
                    want->i[o] = cf_wrap(a->dt, (int64_t)((uint64_t)(int64_t)alpha * (uint64_t)p +
                                                          (uint64_t)(int64_t)beta * (uint64_t)cv));
                else
                    cf_set_f(want, o, alpha * (double)p + (use_c ? beta * (double)cv : 0));
            }
        }
    if (scale)
        *scale = sc;
    else
        free(sc);
    return true;
}

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

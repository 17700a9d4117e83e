/* bp_matmul: NumPy matmul semantics (1-D promotion, broadcast batch
 * dimensions), every numeric dtype, every backend, against an oracle computed
 * here in double (floats) or wrapping int64 (integers). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "oracle.h"

/* The NumPy matmul result shape and, per output element, the operands' flat
 * offsets. */
typedef struct mm {
    int32_t ra, rb, ro;
    int64_t sa[8], sb[8], so[8];
    int64_t M, K, N, nbatch;
    int32_t rbatch;
    int64_t sbatch[8];
    int32_t rba, rbb;
    int64_t sba[8], sbb[8];
    bool a1, b1;
} mm;

static mm mm_plan(int32_t ra, const int64_t *sa, int32_t rb, const int64_t *sb)
{
    mm p;
    memset(&p, 0, sizeof p);
    p.ra = ra;
    p.rb = rb;
    memcpy(p.sa, sa, sizeof(int64_t) * (size_t)ra);
    memcpy(p.sb, sb, sizeof(int64_t) * (size_t)rb);
    p.a1 = ra == 1;
    p.b1 = rb == 1;
    p.M = p.a1 ? 1 : sa[ra - 2];
    p.K = sa[ra - 1];
    p.N = p.b1 ? 1 : sb[rb - 1];
    p.rba = p.a1 ? 0 : ra - 2;
    p.rbb = p.b1 ? 0 : rb - 2;
    memcpy(p.sba, sa, sizeof(int64_t) * (size_t)p.rba);
    memcpy(p.sbb, sb, sizeof(int64_t) * (size_t)p.rbb);
    p.rbatch = p.rba > p.rbb ? p.rba : p.rbb;
    p.nbatch = 1;
    for (int32_t k = 0; k < p.rbatch; k++) {
        int32_t ka = k - (p.rbatch - p.rba), kb = k - (p.rbatch - p.rbb);
        int64_t da = ka >= 0 ? p.sba[ka] : 1, db = kb >= 0 ? p.sbb[kb] : 1;
        p.sbatch[k] = da == 1 ? db : da;
        p.nbatch *= p.sbatch[k];
    }
    memcpy(p.so, p.sbatch, sizeof(int64_t) * (size_t)p.rbatch);
    p.ro = p.rbatch;
    if (!p.a1)
        p.so[p.ro++] = p.M;
    if (!p.b1)
        p.so[p.ro++] = p.N;
    return p;
}

/* Offsets of A[batch, i, k] and B[batch, k, j]. */
static int64_t a_off(const mm *p, int64_t batch, int64_t i, int64_t k)
{
    int64_t bi = orc_bcast_index(p->rbatch, p->sbatch, batch, p->rba, p->sba);
    return (bi * p->M + i) * p->K + k;
}
static int64_t b_off(const mm *p, int64_t batch, int64_t k, int64_t j)
{
    int64_t bi = orc_bcast_index(p->rbatch, p->sbatch, batch, p->rbb, p->sbb);
    return (bi * p->K + k) * p->N + j;
}

/* want[o] and the sum of |a b| for each output (row-major over batch, M, N). */
static void mm_oracle_f(const mm *p, const double *a, const double *b, double *want, double *absum)
{
    for (int64_t bt = 0; bt < p->nbatch; bt++)
        for (int64_t i = 0; i < p->M; i++)
            for (int64_t j = 0; j < p->N; j++) {
                double s = 0, s_abs = 0;
                for (int64_t k = 0; k < p->K; k++) {
                    double t = a[a_off(p, bt, i, k)] * b[b_off(p, bt, k, j)];
                    s += t;
                    s_abs += fabs(t);
                }
                int64_t o = (bt * p->M + i) * p->N + j;
                want[o] = s;
                if (absum)
                    absum[o] = s_abs;
            }
}

static void mm_oracle_i(const mm *p, bp_dtype dt, const int64_t *a, const int64_t *b, int64_t *want)
{
    for (int64_t bt = 0; bt < p->nbatch; bt++)
        for (int64_t i = 0; i < p->M; i++)
            for (int64_t j = 0; j < p->N; j++) {
                uint64_t s = 0;
                for (int64_t k = 0; k < p->K; k++)
                    s += (uint64_t)a[a_off(p, bt, i, k)] * (uint64_t)b[b_off(p, bt, k, j)];
                want[(bt * p->M + i) * p->N + j] = cf_wrap(dt, (int64_t)s);
            }
}

/* Small integers: every product and partial sum exact in every float dtype
 * (u8 stores the negatives as 0; integers wrap). */
static void small_ints(double *x, int64_t n, int seed)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = (double)(((i + 1) * (seed * 2 + 5)) % 7) - 3.0;
}

/* Run one exact case (small ints) for the given dtype. */
static void exact_case(bp_backend *be, bp_dtype dt, int32_t ra, const int64_t *sa, int32_t rb,
                       const int64_t *sb)
{
    mm p = mm_plan(ra, sa, rb, sb);
    int64_t na = orc_numel(ra, sa), nb = orc_numel(rb, sb), no = orc_numel(p.ro, p.so);
    double *a = calloc((size_t)na + 1, 8), *b = calloc((size_t)nb + 1, 8);
    double *ar = calloc((size_t)na + 1, 8), *br = calloc((size_t)nb + 1, 8);
    double *want = calloc((size_t)no + 1, 8);
    small_ints(a, na, 1);
    small_ints(b, nb, 2);
    for (int64_t i = 0; i < na; i++)
        ar[i] = cf_round(dt, a[i]);
    for (int64_t i = 0; i < nb; i++)
        br[i] = cf_round(dt, b[i]);
    bp_tensor *ta = orc_tensor(be, dt, ra, sa, a), *tb = orc_tensor(be, dt, rb, sb, b), *o = NULL;
    BPT_OK(bp_matmul(ta, tb, &o));
    if (bp_dtype_is_float(dt)) {
        mm_oracle_f(&p, ar, br, want, NULL);
        orc_expect("matmul", o, dt, p.ro, p.so, want, orc_exact());
    } else { /* integers wrap: oracle in int64 */
        int64_t *ia = calloc((size_t)na + 1, 8), *ib = calloc((size_t)nb + 1, 8);
        int64_t *iw = calloc((size_t)no + 1, 8);
        for (int64_t i = 0; i < na; i++)
            ia[i] = (int64_t)ar[i];
        for (int64_t i = 0; i < nb; i++)
            ib[i] = (int64_t)br[i];
        mm_oracle_i(&p, dt, ia, ib, iw);
        orc_expect_i64("matmul", o, dt, p.ro, p.so, iw);
        free(ia);
        free(ib);
        free(iw);
    }
    bp_tensor_release(ta);
    bp_tensor_release(tb);
    bp_tensor_release(o);
    free(a);
    free(b);
    free(ar);
    free(br);
    free(want);
}

static void exact_all_dtypes(int32_t ra, const int64_t *sa, int32_t rb, const int64_t *sb)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = orc_numeric_dtypes[d];
            if (!orc_supports(be, BP_OP_MATMUL, dt))
                continue;
            exact_case(be, dt, ra, sa, rb, sb);
        }
    }
    bp_context_destroy(ctx);
}

Test(matmul, two_by_three_times_three_by_two_for_every_numeric_dtype)
{
    exact_all_dtypes(2, (int64_t[]){2, 3}, 2, (int64_t[]){3, 2});
}

Test(matmul, vector_times_matrix_drops_the_promoted_axis)
{
    /* (K,) x (K,N) -> (N,) */
    exact_all_dtypes(1, (int64_t[]){5}, 2, (int64_t[]){5, 3});
}

Test(matmul, matrix_times_vector_drops_the_promoted_axis)
{
    /* (M,K) x (K,) -> (M,) */
    exact_all_dtypes(2, (int64_t[]){4, 5}, 1, (int64_t[]){5});
}

Test(matmul, vector_times_vector_is_rank_zero)
{
    /* (K,) x (K,) -> () */
    exact_all_dtypes(1, (int64_t[]){7}, 1, (int64_t[]){7});
}

Test(matmul, batch_dimensions_broadcast)
{
    /* (2,1,3,4) x (5,4,2) -> (2,5,3,2) */
    exact_all_dtypes(4, (int64_t[]){2, 1, 3, 4}, 3, (int64_t[]){5, 4, 2});
}

Test(matmul, vector_times_batched_matrix_broadcasts)
{
    /* (4,) x (2,4,3) -> (2,3) and (2,3,4) x (4,) -> (2,3) */
    exact_all_dtypes(1, (int64_t[]){4}, 3, (int64_t[]){2, 4, 3});
    exact_all_dtypes(3, (int64_t[]){2, 3, 4}, 1, (int64_t[]){4});
}

Test(matmul, equal_batch_dimensions_pair_up)
{
    exact_all_dtypes(3, (int64_t[]){3, 2, 4}, 3, (int64_t[]){3, 4, 5});
}

Test(matmul, sixty_four_cubed_of_small_integers_is_exact_in_floats)
{
    /* any summation order is exact: every partial sum is a small integer */
    exact_all_dtypes(2, (int64_t[]){64, 64}, 2, (int64_t[]){64, 64});
}

Test(matmul, non_tile_multiple_sizes_match_the_double_oracle)
{
    enum { M = 67, K = 129, N = 33 };
    double *a = malloc(M * K * 8), *b = malloc(K * N * 8), *ar = malloc(M * K * 8),
           *br = malloc(K * N * 8), *want = malloc(M * N * 8), *absum = malloc(M * N * 8);
    orc_fill_random(a, M * K, 11, -1.0, 1.0);
    orc_fill_random(b, K * N, 12, -2.0, 2.0);
    int64_t sa[2] = {M, K}, sb[2] = {K, N}, so[2] = {M, N};
    mm p = mm_plan(2, sa, 2, sb);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = orc_float_dtypes[d];
            if (!orc_supports(be, BP_OP_MATMUL, dt))
                continue;
            for (int i = 0; i < M * K; i++)
                ar[i] = cf_round(dt, a[i]);
            for (int i = 0; i < K * N; i++)
                br[i] = cf_round(dt, b[i]);
            mm_oracle_f(&p, ar, br, want, absum);
            bp_tensor *ta = orc_tensor(be, dt, 2, sa, a), *tb = orc_tensor(be, dt, 2, sb, b);
            bp_tensor *o = NULL;
            BPT_OK(bp_matmul(ta, tb, &o));
            orc_expect_meta("matmul 67x129x33", o, dt, 2, so);
            double *g = orc_read(o);
            /* f64: ~K eps; f32 and the halves (accumulated in f32): ~K 2^-24,
             * plus one rounding to the output type */
            double rel = dt == BP_F64 ? 1e-13 : 1e-5;
            for (int i = 0; i < M * N; i++) {
                double tol = rel * absum[i] + (dt == BP_F64 || dt == BP_F32 ? 0.0 : cf_ulp(dt, want[i]));
                if (dt == BP_F32)
                    tol += cf_ulp(dt, want[i]) * 0.5;
                if (!(fabs(g[i] - want[i]) <= tol)) {
                    cr_expect(false, "matmul 67x129x33 [%s] on %s: element %d (%d,%d): expected %.10g, "
                            "got %.10g (tolerance %.3g)",
                            bp_dtype_name(dt), bp_backend_name(be), i, i / N, i % N, want[i],
                            g[i], tol);
                    break;
                }
            }
            free(g);
            bp_tensor_release(ta);
            bp_tensor_release(tb);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
    free(a);
    free(b);
    free(ar);
    free(br);
    free(want);
    free(absum);
}

Test(matmul, integer_matmul_is_exact_and_wraps)
{
    /* full-range values: the result is the exact sum of products mod 2^bits */
    int64_t sa[3] = {2, 5, 9}, sb[2] = {9, 6};
    mm p = mm_plan(3, sa, 2, sb);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = orc_int_dtypes[d];
            if (!orc_supports(be, BP_OP_MATMUL, dt))
                continue;
            int64_t a[90], b[54], want[60];
            uint64_t s = 99;
            for (int i = 0; i < 90; i++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                a[i] = cf_wrap(dt, (int64_t)(s >> 3));
            }
            for (int i = 0; i < 54; i++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                b[i] = cf_wrap(dt, (int64_t)(s >> 5));
            }
            a[0] = cf_int_min(dt);
            b[0] = cf_int_max(dt);
            mm_oracle_i(&p, dt, a, b, want);
            bp_tensor *ta = orc_tensor_i64(be, dt, 3, sa, a), *tb = orc_tensor_i64(be, dt, 2, sb, b);
            bp_tensor *o = NULL;
            BPT_OK(bp_matmul(ta, tb, &o));
            orc_expect_i64("integer matmul", o, dt, p.ro, p.so, want);
            bp_tensor_release(ta);
            bp_tensor_release(tb);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(matmul, i8_accumulation_wraps_like_i8)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        /* 100*2 + 100*1 = 300 -> 44 in i8; i32: 65536 * 65536 -> 0 */
        bp_tensor *a = orc_vec(be, BP_I8, 2, (double[]){100, 100});
        bp_tensor *b = orc_vec(be, BP_I8, 2, (double[]){2, 1}), *o = NULL;
        BPT_OK(bp_matmul(a, b, &o));
        orc_expect_i64("i8 dot", o, BP_I8, 0, NULL, (int64_t[]){44});
        bp_tensor *c = orc_vec(be, BP_I32, 1, (double[]){65536}), *d = NULL, *e = NULL;
        int64_t s11[2] = {1, 1};
        BPT_OK(bp_reshape(c, 2, s11, &d));
        BPT_OK(bp_matmul(d, d, &e));
        orc_expect_i64("i32 1x1", e, BP_I32, 2, s11, (int64_t[]){0});
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(o);
        bp_tensor_release(c);
        bp_tensor_release(d);
        bp_tensor_release(e);
    }
    bp_context_destroy(ctx);
}

Test(matmul, empty_inner_dimension_gives_zeros)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = orc_numeric_dtypes[d];
            int64_t sa[2] = {2, 0}, sb[2] = {0, 3}, so[2] = {2, 3};
            bp_tensor *a = orc_tensor(be, dt, 2, sa, NULL), *b = orc_tensor(be, dt, 2, sb, NULL);
            bp_tensor *o = NULL;
            BPT_OK(bp_matmul(a, b, &o));
            orc_expect("matmul (2,0)x(0,3)", o, dt, 2, so, (double[]){0, 0, 0, 0, 0, 0}, orc_exact());
            bp_tensor_release(a);
            bp_tensor_release(b);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(matmul, empty_outer_dimension_gives_an_empty_result)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t sa[2] = {0, 3}, sb[2] = {3, 2}, so[2] = {0, 2};
        bp_tensor *a = orc_tensor(be, BP_F32, 2, sa, NULL);
        bp_tensor *b = orc_tensor(be, BP_F32, 2, sb, (double[]){1, 2, 3, 4, 5, 6}), *o = NULL;
        BPT_OK(bp_matmul(a, b, &o));
        orc_expect_meta("matmul (0,3)x(3,2)", o, BP_F32, 2, so);
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(o);
    }
    bp_context_destroy(ctx);
}

Test(matmul, nan_and_inf_propagate)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 4; d++) {
            bp_dtype dt = orc_float_dtypes[d];
            int64_t s[2] = {2, 2};
            bp_tensor *a = orc_tensor(be, dt, 2, s, (double[]){NAN, 0, 1, INFINITY});
            bp_tensor *b = orc_tensor(be, dt, 2, s, (double[]){1, 0, 0, 1}), *o = NULL;
            BPT_OK(bp_matmul(a, b, &o));
            /* [NaN*1 + 0*0, NaN*0 + 0*1; 1*1 + inf*0, 1*0 + inf*1] */
            orc_expect("matmul specials", o, dt, 2, s, (double[]){NAN, NAN, NAN, INFINITY},
                       orc_exact());
            bp_tensor_release(a);
            bp_tensor_release(b);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(matmul, inner_dimension_mismatch_is_a_shape_error)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t sa[2] = {2, 3}, sb[2] = {4, 2}, sc[3] = {2, 3, 3}, sd[3] = {3, 3, 2};
        bp_tensor *a = orc_tensor(be, BP_F32, 2, sa, (double[6]){0});
        bp_tensor *b = orc_tensor(be, BP_F32, 2, sb, (double[8]){0});
        bp_tensor *c = orc_tensor(be, BP_F32, 3, sc, (double[18]){0});
        bp_tensor *d = orc_tensor(be, BP_F32, 3, sd, (double[18]){0});
        bp_tensor *s = orc_scalar(be, BP_F32, 1), *o = NULL;
        BPT_FAILS(BP_ERR_SHAPE, bp_matmul(a, b, &o));
        cr_expect_null(o);
        BPT_FAILS(BP_ERR_SHAPE, bp_matmul(c, d, &o)); /* batch 2 vs 3 */
        cr_expect_null(o);
        BPT_FAILS(BP_ERR_SHAPE, bp_matmul(s, a, &o)); /* rank 0 */
        cr_expect_null(o);
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(c);
        bp_tensor_release(d);
        bp_tensor_release(s);
    }
    bp_context_destroy(ctx);
}

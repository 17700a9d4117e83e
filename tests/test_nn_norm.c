/* Normalisation (nn.h bp_batch_norm, bp_instance_norm, bp_layer_norm,
 * bp_rms_norm) on every backend and float dtype against the oracle, compared
 * norm-wise by the magnitude of the terms (|x r s| + |m r s| + |b|), and the
 * statistics layer_norm returns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpt.h"
#include "expect_nn.h"

/* The statistics are computed in double for f32 and the halves: only the
 * output's roundings count there (k 1); f64 also sees their accumulation. */
static int64_t terms_k(bp_dtype dt, int64_t k) { return dt == BP_F64 ? k : 1; }

static void release_all(bp_tensor **t, int n)
{
    for (int i = 0; i < n; i++)
        bp_tensor_release(t[i]);
}

static void free_all(cf_array *a, int n)
{
    for (int i = 0; i < n; i++)
        cf_array_free(&a[i]);
}

static void check_batch(int32_t rank, const int64_t *xs)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < CF_COUNT(cf_float_dtypes); d++) {
            bp_dtype dt = cf_float_dtypes[d];
            if (!bpt_supports(be, BP_OP_BATCH_NORM, dt))
                continue;
            cf_array a[6];
            a[0] = bpt_random_array(dt, rank, xs, 81, -4, 4);
            for (int k = 1; k < 5; k++) /* scale, bias, mean, var (> 0) */
                a[k] = bpt_random_array(dt, 1, &xs[1], 81 + k, k == 4 ? 0.1 : -2, 2);
            double *terms;
            int64_t kk;
            cr_assert(cf_oracle_batch_norm(&a[0], &a[1], &a[2], &a[3], &a[4], 1e-3, &a[5],
                                           &terms, &kk));
            bp_tensor *t[6];
            for (int k = 0; k < 5; k++)
                t[k] = bpt_tensor_of(be, &a[k]);
            t[5] = NULL;
            BPT_OK(bp_batch_norm(t[0], t[1], t[2], t[3], t[4], 1e-3, &t[5]));
            bpt_expect_norm("batch_norm", t[5], &a[5], terms, kk, 4);
            release_all(t, 6);
            free_all(a, 6);
            free(terms);
        }
    }
    bp_context_destroy(ctx);
}

Test(nn_norm, batch_norm_normalises_each_channel_with_its_statistics)
{
    check_batch(2, (int64_t[]){5, 3});
    check_batch(4, (int64_t[]){2, 3, 4, 5});
    check_batch(3, (int64_t[]){0, 2, 3});
}

static void check_instance(int32_t rank, const int64_t *xs)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < CF_COUNT(cf_float_dtypes); d++) {
            bp_dtype dt = cf_float_dtypes[d];
            if (!bpt_supports(be, BP_OP_INSTANCE_NORM, dt))
                continue;
            cf_array a[4];
            a[0] = bpt_random_array(dt, rank, xs, 91, 3, 9); /* a mean far from 0 */
            a[1] = bpt_random_array(dt, 1, &xs[1], 92, -2, 2);
            a[2] = bpt_random_array(dt, 1, &xs[1], 93, -2, 2);
            double *terms;
            int64_t kk;
            cr_assert(cf_oracle_instance_norm(&a[0], &a[1], &a[2], 1e-5, &a[3], &terms, &kk));
            bp_tensor *t[4] = {bpt_tensor_of(be, &a[0]), bpt_tensor_of(be, &a[1]),
                               bpt_tensor_of(be, &a[2]), NULL};
            BPT_OK(bp_instance_norm(t[0], t[1], t[2], 1e-5, &t[3]));
            bpt_expect_norm("instance_norm", t[3], &a[3], terms, terms_k(dt, kk), 4);
            release_all(t, 4);
            free_all(a, 4);
            free(terms);
        }
    }
    bp_context_destroy(ctx);
}

Test(nn_norm, instance_norm_normalises_each_image_channel_over_its_spatial_axes)
{
    check_instance(3, (int64_t[]){2, 3, 17});
    check_instance(4, (int64_t[]){2, 2, 5, 6});
    check_instance(5, (int64_t[]){1, 2, 3, 2, 4});
}

/* layer_norm (rms: rms_norm) over the axes from axis on, scale of shape ss
 * (rank sr; 0: NULL for rms), bias likewise (-1: none). */
typedef struct trailing_case {
    int32_t rank;
    int64_t x[4];
    int32_t axis;
    int32_t sr;
    int64_t s[4];
    bool bias;
} trailing_case;

static void check_trailing(bool rms, const trailing_case *c, bool stats)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    bp_op op = rms ? BP_OP_RMS_NORM : BP_OP_LAYER_NORM;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < CF_COUNT(cf_float_dtypes); d++) {
            bp_dtype dt = cf_float_dtypes[d];
            if (!bpt_supports(be, op, dt))
                continue;
            cf_array a[6];
            a[0] = bpt_random_array(dt, c->rank, c->x, 101, -3, 5);
            a[1] = bpt_random_array(dt, c->sr, c->s, 102, -2, 2);
            a[2] = bpt_random_array(dt, c->sr, c->s, 103, -2, 2);
            bool scaled = !rms || c->sr > 0;
            double *terms;
            int64_t kk;
            bool ok = rms ? cf_oracle_rms_norm(&a[0], c->axis, scaled ? &a[1] : NULL, 1e-5, &a[3],
                                               &terms, &kk)
                          : cf_oracle_layer_norm(&a[0], c->axis, &a[1], c->bias ? &a[2] : NULL,
                                                 1e-5, &a[3], &a[4], &a[5], &terms, &kk);
            cr_assert(ok);
            bp_tensor *t[6] = {bpt_tensor_of(be, &a[0]), bpt_tensor_of(be, &a[1]),
                               bpt_tensor_of(be, &a[2]), NULL, NULL, NULL};
            if (rms)
                BPT_OK(bp_rms_norm(t[0], c->axis, scaled ? t[1] : NULL, 1e-5, &t[3]));
            else
                BPT_OK(bp_layer_norm(t[0], c->axis, t[1], c->bias ? t[2] : NULL, 1e-5, &t[3],
                                     stats ? &t[4] : NULL, stats ? &t[5] : NULL));
            char what[64];
            snprintf(what, sizeof what, "%s axis %d", bp_op_name(op), (int)c->axis);
            bpt_expect_norm(what, t[3], &a[3], terms, terms_k(dt, kk), 4);
            if (stats) { /* f32 for the half types: exact to f32's rounding */
                bpt_expect_array("layer_norm mean", t[4], &a[4], bpt_math(a[4].dt));
                bpt_expect_array("layer_norm inv_std", t[5], &a[5], bpt_math(a[5].dt));
            }
            release_all(t, 6);
            if (rms)
                free_all(a, 4);
            else
                free_all(a, 6);
            free(terms);
        }
    }
    bp_context_destroy(ctx);
}

Test(nn_norm, layer_norm_normalises_the_trailing_axes)
{
    check_trailing(false, &(trailing_case){2, {5, 7}, -1, 1, {7}, true}, false);
    check_trailing(false, &(trailing_case){3, {2, 3, 4}, 1, 2, {3, 4}, true}, false);
    check_trailing(false, &(trailing_case){3, {2, 3, 4}, 0, 1, {4}, false}, false);
    check_trailing(false, &(trailing_case){3, {2, 3, 4}, -2, 2, {3, 1}, true}, false);
}

Test(nn_norm, layer_norm_returns_mean_and_inv_std)
{
    check_trailing(false, &(trailing_case){3, {2, 3, 5}, -1, 1, {5}, true}, true);
    check_trailing(false, &(trailing_case){3, {2, 3, 5}, 1, 1, {1}, false}, true);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F16, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 4, 4});
        bp_tensor *s = bpt_tensor(be, BP_F16, 1, (int64_t[]){3}, (double[]){1, 1, 1});
        bp_tensor *y = NULL, *m = NULL, *r = NULL;
        BPT_OK(bp_layer_norm(x, -1, s, NULL, 0.0, &y, &m, &r));
        bpt_expect("mean (f32 for f16 x)", m, BP_F32, 2, (int64_t[]){2, 1}, (double[]){2, 4},
                   bpt_exact());
        bpt_expect_meta("inv_std (f32 for f16 x)", r, BP_F32, 2, (int64_t[]){2, 1});
        bp_tensor *handles[5] = {x, s, y, m, r};
        release_all(handles, 5);
    }
    bp_context_destroy(ctx);
}

Test(nn_norm, layer_norm_over_empty_axes_gives_a_nan_mean_and_inv_std_on_every_backend)
{
    /* found by fuzz_graph: blas_cpu counted its rows as elements / row
     * length, 0 for rows of no elements, so it wrote neither mean nor
     * inv_std and returned the new tensors' memory as it was (binary and
     * devsim give the NaN of 0 / 0) */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = NULL, *s = NULL, *y = NULL, *m = NULL, *r = NULL;
        BPT_OK(bp_zeros(be, BP_F32, 3, (int64_t[]){2, 3, 0}, &x));
        BPT_OK(bp_zeros(be, BP_F32, 1, (int64_t[]){0}, &s));
        BPT_OK(bp_layer_norm(x, -1, s, NULL, 1e-5, &y, &m, &r));
        bpt_expect_meta("mean", m, BP_F32, 3, (int64_t[]){2, 3, 1});
        float mv[6], rv[6];
        BPT_OK(bp_tensor_to_host(m, mv, sizeof mv));
        BPT_OK(bp_tensor_to_host(r, rv, sizeof rv));
        for (int i = 0; i < 6; i++)
            cr_expect(isnan(mv[i]) && isnan(rv[i]), "on %s: row %d: mean %g, inv_std %g, want NaN",
                      bp_backend_name(be), i, (double)mv[i], (double)rv[i]);
        bp_tensor *handles[5] = {x, s, y, m, r};
        release_all(handles, 5);
    }
    bp_context_destroy(ctx);
}

Test(nn_norm, layer_norm_rows_long_enough_for_the_fused_path)
{
    check_trailing(false, &(trailing_case){2, {64, 300}, -1, 1, {300}, true}, true);
    check_trailing(false, &(trailing_case){3, {3, 4, 100}, 1, 2, {4, 100}, true}, true);
    check_trailing(true, &(trailing_case){2, {33, 257}, -1, 1, {257}, false}, false);
}

Test(nn_norm, layer_norm_of_a_constant_row_is_the_bias)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    double xv[40], sv[20], bv[20];
    for (int i = 0; i < 40; i++)
        xv[i] = i < 20 ? 3.25 : -7.5;
    for (int i = 0; i < 20; i++)
        sv[i] = i + 1, bv[i] = 0.5 * i - 3;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F32, 2, (int64_t[]){2, 20}, xv);
        bp_tensor *s = bpt_vec(be, BP_F32, 20, sv), *b = bpt_vec(be, BP_F32, 20, bv), *y = NULL;
        BPT_OK(bp_layer_norm(x, -1, s, b, 1e-5, &y, NULL, NULL));
        double want[40];
        for (int i = 0; i < 40; i++)
            want[i] = bv[i % 20];
        bpt_expect("layer_norm of constants", y, BP_F32, 2, (int64_t[]){2, 20}, want, bpt_exact());
        bp_tensor *handles[4] = {x, s, b, y};
        release_all(handles, 4);
    }
    bp_context_destroy(ctx);
}

Test(nn_norm, rms_norm_divides_by_the_root_mean_square)
{
    check_trailing(true, &(trailing_case){2, {5, 7}, -1, 1, {7}, false}, false);
    check_trailing(true, &(trailing_case){3, {2, 3, 4}, 1, 0, {0}, false}, false);
    check_trailing(true, &(trailing_case){3, {2, 3, 4}, -2, 2, {3, 4}, false}, false);
}

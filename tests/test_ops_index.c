/* Indexing ops: trilu, one_hot, gather_elements, gather_nd,
 * scatter_elements and scatter_nd with every reduction, on every backend
 * against the oracle; index bounds refused at once on host backends and at
 * the next wait on the device-like one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

#define NV(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* ---- trilu -------------------------------------------------------------------------- */

Test(index, trilu_upper_and_lower_for_every_diagonal_and_dtype)
{
    double x[2 * 3 * 4];
    for (int i = 0; i < 24; i++)
        x[i] = 1 + i % 7;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            if (!bpt_supports(be, BP_OP_TRILU, dt))
                continue;
            cf_array xa = bpt_array(dt, 3, (const int64_t[]){2, 3, 4}, x);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (int upper = 0; upper < 2; upper++)
                for (int64_t k = -4; k <= 5; k++) {
                    cf_array want;
                    cr_assert(cf_oracle_trilu(&xa, upper, k, &want));
                    bp_tensor *o = NULL;
                    BPT_OK(bp_trilu(t, upper, k, &o));
                    char what[48];
                    snprintf(what, sizeof what, "trilu upper=%d k=%lld", upper, (long long)k);
                    bpt_expect_array(what, o, &want, bpt_exact());
                    bp_tensor_release(o);
                    cf_array_free(&want);
                }
            bp_tensor_release(t);
            cf_array_free(&xa);
        }
    }
    bp_context_destroy(ctx);
}

Test(index, trilu_upper_main_diagonal_written_out)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_I32, 2, (const int64_t[]){3, 3},
                                  (const double[]){1, 2, 3, 4, 5, 6, 7, 8, 9}), *o = NULL;
        BPT_OK(bp_trilu(x, true, 0, &o));
        bpt_expect_i64("triu", o, BP_I32, 2, (const int64_t[]){3, 3},
                       (const int64_t[]){1, 2, 3, 0, 5, 6, 0, 0, 9});
        bp_tensor_release(o);
        BPT_OK(bp_trilu(x, false, -1, &o));
        bpt_expect_i64("tril k=-1", o, BP_I32, 2, (const int64_t[]){3, 3},
                       (const int64_t[]){0, 0, 0, 4, 0, 0, 7, 8, 0});
        bp_tensor_release(o), bp_tensor_release(x);
    }
    bp_context_destroy(ctx);
}

/* ---- one_hot ------------------------------------------------------------------------- */

Test(index, one_hot_along_every_axis_with_negative_and_out_of_range_indices)
{
    static const double idx[] = {0, 2, -1, 5, -4, 3};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype it = cf_numeric_dtypes[d];
            if (!bpt_supports(be, BP_OP_ONE_HOT, it))
                continue;
            cf_array ia = bpt_array(it, 2, (const int64_t[]){2, 3}, idx);
            cf_array va = bpt_array(BP_F32, 1, (const int64_t[]){2}, (const double[]){-1, 7});
            bp_tensor *ti = bpt_tensor_of(be, &ia), *tv = bpt_tensor_of(be, &va);
            for (int32_t axis = -3; axis < 3; axis++) {
                cf_array want;
                cr_assert(cf_oracle_one_hot(&ia, 4, axis, &va, &want));
                bp_tensor *o = NULL;
                BPT_OK(bp_one_hot(ti, 4, axis, tv, &o));
                char what[64];
                snprintf(what, sizeof what, "one_hot of %s axis %d", bp_dtype_name(it), axis);
                bpt_expect_array(what, o, &want, bpt_exact());
                bp_tensor_release(o);
                cf_array_free(&want);
            }
            bp_tensor_release(ti), bp_tensor_release(tv);
            cf_array_free(&ia), cf_array_free(&va);
        }
    }
    bp_context_destroy(ctx);
}

Test(index, one_hot_truncates_float_indices_and_ignores_nan)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *i = bpt_vec(be, BP_F32, 4, (const double[]){1.9, -0.5, NAN, -2.7});
        bp_tensor *v = bpt_vec(be, BP_I64, 2, (const double[]){0, 1}), *o = NULL;
        BPT_OK(bp_one_hot(i, 3, -1, v, &o));
        bpt_expect_i64("one_hot of floats", o, BP_I64, 2, (const int64_t[]){4, 3},
                       (const int64_t[]){0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0});
        bp_tensor_release(o), bp_tensor_release(i), bp_tensor_release(v);
    }
    bp_context_destroy(ctx);
}

/* ---- gathers ------------------------------------------------------------------------- */

Test(index, gather_elements_along_every_axis_for_every_dtype)
{
    double x[3 * 4];
    for (int i = 0; i < 12; i++)
        x[i] = i + 1;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            cf_array xa = bpt_array(dt, 2, (const int64_t[]){3, 4}, x);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (int32_t axis = 0; axis < 2; axis++)
                for (int w = 0; w < 2; w++) {
                    bp_dtype idt = w ? BP_I64 : BP_I32;
                    /* indices (2, 3): smaller than x off the axis, any values in range */
                    int64_t dim = axis ? 4 : 3;
                    int64_t iv[6] = {0, dim - 1, -1, -dim, 1, 0};
                    cf_array ia = bpt_array_i64(idt, 2, (const int64_t[]){2, 3}, iv), want;
                    cr_assert(cf_oracle_gather_elements(&xa, &ia, axis, &want));
                    bp_tensor *ti = bpt_tensor_of(be, &ia), *o = NULL;
                    BPT_OK(bp_gather_elements(t, ti, axis - 2, &o));
                    bpt_expect_array("gather_elements", o, &want, bpt_exact());
                    bp_tensor_release(o), bp_tensor_release(ti);
                    cf_array_free(&ia), cf_array_free(&want);
                }
            bp_tensor_release(t);
            cf_array_free(&xa);
        }
    }
    bp_context_destroy(ctx);
}

Test(index, gather_nd_with_and_without_batch_dims)
{
    double x[2 * 3 * 4];
    for (int i = 0; i < 24; i++)
        x[i] = i;
    static const struct { int32_t ir; int64_t is[3]; int64_t iv[8]; int32_t b; } cases[] = {
        {2, {2, 3}, {1, 2, 0, 0, -3, 3}, 0},         /* tuples of 3: single elements */
        {2, {3, 1}, {1, 0, -1}, 0},                   /* tuples of 1: slabs (3, 4) */
        {3, {2, 2, 2}, {0, 1, 1, 2, 1, 0, -1, -1}, 0}, /* tuples of 2: rows of 4 */
        {2, {2, 2}, {2, 3, 0, -1}, 1},                /* batch 1, tuples of 2 */
        {3, {2, 1, 1}, {1, 2}, 1},                    /* batch 1, tuples of 1 */
    };
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            cf_array xa = bpt_array(dt, 3, (const int64_t[]){2, 3, 4}, x);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                cf_array ia = bpt_array_i64(BP_I64, cases[c].ir, cases[c].is, cases[c].iv), want;
                cr_assert(cf_oracle_gather_nd(&xa, &ia, cases[c].b, &want));
                bp_tensor *ti = bpt_tensor_of(be, &ia), *o = NULL;
                BPT_OK(bp_gather_nd(t, ti, cases[c].b, &o));
                char what[48];
                snprintf(what, sizeof what, "gather_nd case %zu", c);
                bpt_expect_array(what, o, &want, bpt_exact());
                bp_tensor_release(o), bp_tensor_release(ti);
                cf_array_free(&ia), cf_array_free(&want);
            }
            bp_tensor_release(t);
            cf_array_free(&xa);
        }
    }
    bp_context_destroy(ctx);
}

/* ---- scatters ------------------------------------------------------------------------- */

static const char *RED[] = {"none", "add", "mul", "max", "min"};

static void check_scatter_elements(bp_backend *be, bp_dtype dt, bp_dtype idt, int32_t axis,
                                   bp_scatter_reduction red)
{
    double x[3 * 4], u[2 * 4];
    for (int i = 0; i < 12; i++)
        x[i] = (i % 5) - 1;
    for (int i = 0; i < 8; i++)
        u[i] = (i % 3) + 1;
    /* duplicates on purpose: (0, 0) and (1, 2) twice along the axis */
    int64_t dim = axis ? 4 : 3;
    int64_t iv[8] = {0, 1, 2, dim - 1, 0, -dim, -1, 1};
    int64_t ishape[2] = {2, axis ? 4 : 4};
    if (axis) { /* (3, 2) along axis 1 */
        ishape[0] = 3, ishape[1] = 2;
        iv[0] = 0, iv[1] = 0, iv[2] = 2, iv[3] = -2, iv[4] = 3, iv[5] = -1;
    }
    cf_array xa = bpt_array(dt, 2, (const int64_t[]){3, 4}, x);
    cf_array ia = bpt_array_i64(idt, 2, ishape, iv);
    cf_array ua = bpt_array(dt, 2, ishape, u), want;
    cr_assert(cf_oracle_scatter_elements(&xa, &ia, &ua, axis, red, &want, NULL, NULL));
    bp_tensor *t = bpt_tensor_of(be, &xa), *ti = bpt_tensor_of(be, &ia), *tu = bpt_tensor_of(be, &ua);
    bp_tensor *o = NULL;
    BPT_OK(bp_scatter_elements(t, ti, tu, axis, red, &o));
    char what[80];
    snprintf(what, sizeof what, "scatter_elements axis %d reduction %s idx %s", axis, RED[red],
             bp_dtype_name(idt));
    bpt_expect_array(what, o, &want, bpt_exact());
    bp_tensor_release(o), bp_tensor_release(t), bp_tensor_release(ti), bp_tensor_release(tu);
    cf_array_free(&xa), cf_array_free(&ia), cf_array_free(&ua), cf_array_free(&want);
}

Test(index, scatter_elements_every_reduction_axis_and_dtype)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++)
            for (int red = 0; red < 5; red++) {
                if (cf_all_dtypes[d] == BP_BOOL && red != 0)
                    continue;
                for (int axis = 0; axis < 2; axis++)
                    check_scatter_elements(be, cf_all_dtypes[d], axis ? BP_I32 : BP_I64, axis,
                                           (bp_scatter_reduction)red);
            }
    }
    bp_context_destroy(ctx);
}

Test(index, scatter_elements_add_accumulates_duplicates)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_F32, 4, (const double[]){10, 20, 30, 40});
        bp_tensor *i = bpt_tensor_i64(be, BP_I64, 1, (const int64_t[]){5},
                                      (const int64_t[]){1, 3, 1, 1, -1});
        bp_tensor *u = bpt_vec(be, BP_F32, 5, (const double[]){1, 2, 3, 4, 5}), *o = NULL;
        BPT_OK(bp_scatter_elements(x, i, u, 0, BP_SCATTER_ADD, &o));
        bpt_expect("scatter-add of duplicates", o, BP_F32, 1, (const int64_t[]){4},
                   (const double[]){10, 28, 30, 47}, bpt_exact());
        bp_tensor_release(o);
        BPT_OK(bp_scatter_elements(x, i, u, 0, BP_SCATTER_NONE, &o));
        bpt_expect("scatter: the last duplicate wins", o, BP_F32, 1, (const int64_t[]){4},
                   (const double[]){10, 4, 30, 5}, bpt_exact());
        bp_tensor_release(o);
        bp_tensor_release(x), bp_tensor_release(i), bp_tensor_release(u);
    }
    bp_context_destroy(ctx);
}

Test(index, scatter_add_of_f16_rounds_once_after_summing_in_double)
{
    /* 2048 + 1 + 1: stepwise in f16 each +1 would round back to 2048 */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_F16, 1, (const double[]){2048});
        bp_tensor *i = bpt_tensor_i64(be, BP_I32, 1, (const int64_t[]){2}, (const int64_t[]){0, 0});
        bp_tensor *u = bpt_vec(be, BP_F16, 2, (const double[]){1, 1}), *o = NULL;
        BPT_OK(bp_scatter_elements(x, i, u, 0, BP_SCATTER_ADD, &o));
        bpt_expect("f16 scatter-add", o, BP_F16, 1, (const int64_t[]){1}, (const double[]){2050},
                   bpt_exact());
        bp_tensor_release(o), bp_tensor_release(x), bp_tensor_release(i), bp_tensor_release(u);
    }
    bp_context_destroy(ctx);
}

Test(index, scatter_max_and_min_propagate_nan)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_F64, 3, (const double[]){NAN, 1, 1});
        bp_tensor *i = bpt_tensor_i64(be, BP_I64, 1, (const int64_t[]){3}, (const int64_t[]){0, 1, 2});
        bp_tensor *u = bpt_vec(be, BP_F64, 3, (const double[]){5, NAN, 0}), *o = NULL;
        BPT_OK(bp_scatter_elements(x, i, u, 0, BP_SCATTER_MAX, &o));
        double *r = bpt_read(o);
        cr_expect(isnan(r[0]) && isnan(r[1]) && r[2] == 1, "scatter max with NaN on %s: %g %g %g",
                  bp_backend_name(be), r[0], r[1], r[2]);
        free(r);
        bp_tensor_release(o);
        BPT_OK(bp_scatter_elements(x, i, u, 0, BP_SCATTER_MIN, &o));
        r = bpt_read(o);
        cr_expect(isnan(r[0]) && isnan(r[1]) && r[2] == 0, "scatter min with NaN on %s: %g %g %g",
                  bp_backend_name(be), r[0], r[1], r[2]);
        free(r);
        bp_tensor_release(o), bp_tensor_release(x), bp_tensor_release(i), bp_tensor_release(u);
    }
    bp_context_destroy(ctx);
}

Test(index, scatter_elements_add_is_gathers_gradient_at_scale)
{
    /* embedding-gradient shape: x (V, D), indices (B, D) along axis 0 */
    int64_t V = 50, D = 64, B = 3000;
    double *u = malloc((size_t)(B * D) * sizeof *u);
    int64_t *iv = malloc((size_t)(B * D) * sizeof *iv);
    cr_assert(u && iv);
    bpt_fill_random(u, B * D, 4, -1, 1);
    /* Multiples of 2^-20: each sum is exact in f64 whatever the order of its
     * additions (a GPU adds with atomics in no fixed order). */
    for (int64_t k = 0; k < B * D; k++) {
        u[k] = nearbyint(ldexp(u[k], 20)) * 0x1p-20;
        iv[k] = (k * 7919 / D) % V;
    }
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 3; d++) {
            bp_dtype dt = (const bp_dtype[]){BP_F32, BP_F64, BP_I32}[d];
            cf_array xa = bpt_array(dt, 2, (const int64_t[]){V, D}, NULL);
            cf_array ia = bpt_array_i64(BP_I64, 2, (const int64_t[]){B, D}, iv);
            cf_array ua = bpt_array(dt, 2, (const int64_t[]){B, D}, u), want;
            cr_assert(cf_oracle_scatter_elements(&xa, &ia, &ua, 0, BP_SCATTER_ADD, &want, NULL,
                                                 NULL));
            bp_tensor *t = bpt_tensor_of(be, &xa), *ti = bpt_tensor_of(be, &ia),
                      *tu = bpt_tensor_of(be, &ua), *o = NULL;
            BPT_OK(bp_scatter_elements(t, ti, tu, 0, BP_SCATTER_ADD, &o));
            bpt_expect_array("large scatter-add", o, &want, bpt_math(dt));
            bp_tensor_release(o), bp_tensor_release(t), bp_tensor_release(ti), bp_tensor_release(tu);
            cf_array_free(&xa), cf_array_free(&ia), cf_array_free(&ua), cf_array_free(&want);
        }
    }
    bp_context_destroy(ctx);
    free(u);
    free(iv);
}

Test(index, scatter_elements_add_along_the_last_axis_at_scale)
{
    /* rows scattered into independently: the threaded backends cut the rows */
    int64_t R = 64, C = 50, B = 3000;
    double *u = malloc((size_t)(R * B) * sizeof *u);
    int64_t *iv = malloc((size_t)(R * B) * sizeof *iv);
    cr_assert(u && iv);
    bpt_fill_random(u, R * B, 6, -1, 1);
    for (int64_t k = 0; k < R * B; k++)
        iv[k] = (k * 104729) % (2 * C) - C; /* negative ones too */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        cf_array xa = bpt_array(BP_F32, 2, (const int64_t[]){R, C}, u);
        cf_array ia = bpt_array_i64(BP_I32, 2, (const int64_t[]){R, B}, iv);
        cf_array ua = bpt_array(BP_F32, 2, (const int64_t[]){R, B}, u), want;
        cr_assert(cf_oracle_scatter_elements(&xa, &ia, &ua, -1, BP_SCATTER_ADD, &want, NULL, NULL));
        bp_tensor *t = bpt_tensor_of(be, &xa), *ti = bpt_tensor_of(be, &ia),
                  *tu = bpt_tensor_of(be, &ua), *o = NULL;
        BPT_OK(bp_scatter_elements(t, ti, tu, -1, BP_SCATTER_ADD, &o));
        /* in f64 in row-major order, rounded once: the oracle's own sums */
        bpt_expect_array("scatter-add along the last axis", o, &want, bpt_exact());
        bp_tensor_release(o), bp_tensor_release(t), bp_tensor_release(ti), bp_tensor_release(tu);
        cf_array_free(&xa), cf_array_free(&ia), cf_array_free(&ua), cf_array_free(&want);
    }
    bp_context_destroy(ctx);
    free(u);
    free(iv);
}

Test(index, scatter_nd_every_reduction_with_slices_and_elements)
{
    double x[3 * 4], u[2 * 4];
    for (int i = 0; i < 12; i++)
        x[i] = i - 3;
    for (int i = 0; i < 8; i++)
        u[i] = i % 4 + 1;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            for (int red = 0; red < 5; red++) {
                if (dt == BP_BOOL && red != 0)
                    continue;
                cf_array xa = bpt_array(dt, 2, (const int64_t[]){3, 4}, x);
                /* rows by tuples of 1 (a duplicate row), then elements by tuples of 2 */
                cf_array i1 = bpt_array_i64(BP_I64, 2, (const int64_t[]){2, 1},
                                            (const int64_t[]){2, -1});
                cf_array u1 = bpt_array(dt, 2, (const int64_t[]){2, 4}, u);
                cf_array i2 = bpt_array_i64(BP_I32, 2, (const int64_t[]){3, 2},
                                            (const int64_t[]){0, 1, 2, -1, 0, 1});
                cf_array u2 = bpt_array(dt, 1, (const int64_t[]){3}, u);
                cf_array w1, w2;
                cr_assert(cf_oracle_scatter_nd(&xa, &i1, &u1, (bp_scatter_reduction)red, &w1,
                                               NULL, NULL));
                cr_assert(cf_oracle_scatter_nd(&xa, &i2, &u2, (bp_scatter_reduction)red, &w2,
                                               NULL, NULL));
                bp_tensor *t = bpt_tensor_of(be, &xa), *ti1 = bpt_tensor_of(be, &i1),
                          *tu1 = bpt_tensor_of(be, &u1), *ti2 = bpt_tensor_of(be, &i2),
                          *tu2 = bpt_tensor_of(be, &u2), *o1 = NULL, *o2 = NULL;
                BPT_OK(bp_scatter_nd(t, ti1, tu1, (bp_scatter_reduction)red, &o1));
                BPT_OK(bp_scatter_nd(t, ti2, tu2, (bp_scatter_reduction)red, &o2));
                char what[64];
                snprintf(what, sizeof what, "scatter_nd rows reduction %s", RED[red]);
                bpt_expect_array(what, o1, &w1, bpt_exact());
                snprintf(what, sizeof what, "scatter_nd elements reduction %s", RED[red]);
                bpt_expect_array(what, o2, &w2, bpt_exact());
                bp_tensor_release(t), bp_tensor_release(ti1), bp_tensor_release(tu1);
                bp_tensor_release(ti2), bp_tensor_release(tu2), bp_tensor_release(o1);
                bp_tensor_release(o2);
                cf_array_free(&xa), cf_array_free(&i1), cf_array_free(&u1), cf_array_free(&i2);
                cf_array_free(&u2), cf_array_free(&w1), cf_array_free(&w2);
            }
        }
    }
    bp_context_destroy(ctx);
}

/* ---- index bounds ----------------------------------------------------------------------- */

/* The call's status: BP_ERR_INDEX at once on a host backend; on devsim
 * (deferred errors) the call returns and the next wait reports it. */
static void expect_index_error(bp_backend *be, bp_status st, bp_tensor *out, const char *what,
                               const char *needle)
{
    if (st == BP_OK) {
        bp_device_info info = {.struct_size = sizeof info};
        BPT_OK(bp_backend_device_info(be, &info));
        cr_assert_not(info.host_addressable, "%s on %s: an index out of range was accepted",
                      what, bp_backend_name(be));
        bp_status w = bp_backend_synchronize(be);
        cr_assert_eq(w, BP_ERR_INDEX, "%s on %s: the wait returned %s, not BP_ERR_INDEX", what,
                     bp_backend_name(be), bp_status_string(w));
        bp_tensor_release(out);
    } else {
        cr_assert_eq(st, BP_ERR_INDEX, "%s on %s: %s", what, bp_backend_name(be),
                     bp_status_string(st));
    }
    cr_assert(strstr(bp_last_error(), needle), "%s on %s: the message does not say '%s': %s",
              what, bp_backend_name(be), needle, bp_last_error());
}

Test(index, every_gather_and_scatter_refuses_an_index_out_of_range)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F32, 2, (const int64_t[]){3, 4}, NULL);
        bp_tensor *bad = bpt_tensor_i64(be, BP_I64, 2, (const int64_t[]){1, 2},
                                        (const int64_t[]){0, 4});
        bp_tensor *u = bpt_tensor(be, BP_F32, 2, (const int64_t[]){1, 2}, NULL), *o = NULL;
        bp_status st = bp_gather_elements(x, bad, 1, &o);
        expect_index_error(be, st, o, "gather_elements", "is 4, out of range for axis 1");
        o = NULL;
        st = bp_scatter_elements(x, bad, u, 1, BP_SCATTER_ADD, &o);
        expect_index_error(be, st, o, "scatter_elements", "is 4, out of range for axis 1");
        o = NULL;
        st = bp_gather_nd(x, bad, 0, &o); /* tuples (0, 4): axis 1 has 4 */
        expect_index_error(be, st, o, "gather_nd", "indices[1]");
        bp_tensor *u0 = bpt_tensor(be, BP_F32, 1, (const int64_t[]){1}, NULL);
        o = NULL;
        st = bp_scatter_nd(x, bad, u0, BP_SCATTER_NONE, &o);
        expect_index_error(be, st, o, "scatter_nd", "out of range for axis 1 of extent 4");
        bp_tensor_release(x), bp_tensor_release(bad), bp_tensor_release(u), bp_tensor_release(u0);
    }
    bp_context_destroy(ctx);
}

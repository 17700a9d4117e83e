/* The ops of ABI 1.4 the core composes from others (ops_compose.c,
 * ops_einsum.c): split, tile, depth_to_space, space_to_depth, the variadic
 * max/min/sum/mean and einsum, on every backend against oracles that state
 * each result directly (cf_oracle_split, ..., cf_oracle_einsum by its
 * definition), and einsum's refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

static void seq(double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = (double)(i % 13) - 6;
}

/* ---- split ------------------------------------------------------------------------ */

Test(compose, split_into_equal_parts_and_given_sizes_along_every_axis)
{
    double x[4 * 6];
    seq(x, 24);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            cf_array xa = bpt_array(dt, 2, (const int64_t[]){4, 6}, x);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            static const struct { int32_t axis, n; int64_t sizes[3]; bool given; } cases[] = {
                {0, 2, {0}, false}, {1, 3, {0}, false}, {-1, 3, {1, 0, 5}, true},
                {0, 1, {4}, true},  {-2, 3, {2, 1, 1}, true},
            };
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                cf_array want[3];
                const int64_t *sizes = cases[c].given ? cases[c].sizes : NULL;
                cr_assert(cf_oracle_split(&xa, cases[c].axis, cases[c].n, sizes, want));
                bp_tensor *outs[3] = {NULL, NULL, NULL};
                BPT_OK(bp_split(t, cases[c].axis, cases[c].n, sizes, outs));
                for (int32_t p = 0; p < cases[c].n; p++) {
                    char what[48];
                    snprintf(what, sizeof what, "split case %zu part %d", c, (int)p);
                    bpt_expect_array(what, outs[p], &want[p], bpt_exact());
                    bp_tensor_release(outs[p]);
                    cf_array_free(&want[p]);
                }
            }
            bp_tensor_release(t);
            cf_array_free(&xa);
        }
    }
    bp_context_destroy(ctx);
}

/* ---- tile ---------------------------------------------------------------------------- */

Test(compose, tile_repeats_along_every_axis_including_zero_times)
{
    double x[2 * 3];
    seq(x, 6);
    static const int64_t reps[][3] = {{1, 1, 1}, {2, 1, 3}, {1, 3, 1}, {0, 2, 2}, {3, 2, 1}};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            cf_array xa = bpt_array(dt, 3, (const int64_t[]){2, 1, 3}, x);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (size_t r = 0; r < sizeof reps / sizeof reps[0]; r++) {
                cf_array want;
                cr_assert(cf_oracle_tile(&xa, reps[r], &want));
                bp_tensor *o = NULL;
                BPT_OK(bp_tile(t, reps[r], &o));
                bpt_expect_array("tile", o, &want, bpt_exact());
                cr_assert_neq(o, t, "tile returned its input, not a tensor of its own");
                bp_tensor_release(o);
                cf_array_free(&want);
            }
            bp_tensor_release(t);
            cf_array_free(&xa);
        }
    }
    bp_context_destroy(ctx);
}

/* ---- depth and space -------------------------------------------------------------------- */

Test(compose, depth_to_space_in_dcr_and_crd_mode_and_space_to_depth_inverts_dcr)
{
    double x[2 * 8 * 2 * 3];
    seq(x, 96);
    for (int i = 0; i < 96; i++)
        x[i] = i; /* distinct: a wrong position cannot pass */
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            cf_array xa = bpt_array(dt, 4, (const int64_t[]){2, 8, 2, 3}, x);
            bp_tensor *t = bpt_tensor_of(be, &xa);
            for (int crd = 0; crd < 2; crd++) {
                cf_array want;
                cr_assert(cf_oracle_depth_to_space(&xa, 2, crd, &want));
                bp_tensor *o = NULL, *back = NULL;
                BPT_OK(bp_depth_to_space(t, 2, crd, &o));
                bpt_expect_array(crd ? "depth_to_space CRD" : "depth_to_space DCR", o, &want,
                                 bpt_exact());
                if (!crd) { /* space_to_depth is DCR's inverse */
                    BPT_OK(bp_space_to_depth(o, 2, &back));
                    cf_array again;
                    cr_assert(cf_oracle_space_to_depth(&want, 2, &again));
                    bpt_expect_array("space_to_depth", back, &again, bpt_exact());
                    bpt_expect_array("space_to_depth(depth_to_space(x))", back, &xa,
                                     bpt_exact());
                    cf_array_free(&again);
                    bp_tensor_release(back);
                }
                bp_tensor_release(o);
                cf_array_free(&want);
            }
            bp_tensor_release(t);
            cf_array_free(&xa);
        }
    }
    bp_context_destroy(ctx);
}

Test(compose, space_to_depth_with_blocksize_three)
{
    double x[1 * 2 * 3 * 6];
    for (int i = 0; i < 36; i++)
        x[i] = i;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        cf_array xa = bpt_array(BP_F32, 4, (const int64_t[]){1, 2, 3, 6}, x), want;
        cr_assert(cf_oracle_space_to_depth(&xa, 3, &want));
        bp_tensor *t = bpt_tensor_of(be, &xa), *o = NULL;
        BPT_OK(bp_space_to_depth(t, 3, &o));
        bpt_expect_array("space_to_depth b=3", o, &want, bpt_exact());
        bp_tensor_release(t), bp_tensor_release(o);
        cf_array_free(&xa), cf_array_free(&want);
    }
    bp_context_destroy(ctx);
}

/* ---- variadic --------------------------------------------------------------------------- */

typedef bp_status (*var_fn)(int32_t, const bp_tensor *const *, bp_tensor **);
typedef bool (*var_oracle)(int32_t, const cf_array *const *, cf_array *);

static void check_variadic(var_fn f, var_oracle orc, const char *name, const bp_dtype *dts,
                           int ndt)
{
    double v[3][12];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 12; i++)
            v[k][i] = (double)((i * (k + 3)) % 7) - 3;
    v[1][2] = NAN; /* floats only; integers store 0 */
    static const int32_t ranks[3] = {2, 1, 0};
    static const int64_t shapes[3][2] = {{3, 4}, {4}, {0}};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < ndt; d++) {
            bp_dtype dt = dts[d];
            cf_array a[3];
            bp_tensor *t[3];
            const cf_array *pa[3];
            for (int k = 0; k < 3; k++) {
                a[k] = bpt_array(dt, ranks[k], shapes[k], v[k]);
                t[k] = bpt_tensor_of(be, &a[k]);
                pa[k] = &a[k];
            }
            for (int32_t n = 1; n <= 3; n++) {
                cf_array want;
                cr_assert(orc(n, pa, &want));
                bp_tensor *o = NULL;
                BPT_OK(f(n, (const bp_tensor *const *)t, &o));
                char what[48];
                snprintf(what, sizeof what, "%s of %d tensors", name, (int)n);
                bpt_expect_array(what, o, &want,
                                 strcmp(name, "mean_n") ? bpt_exact() : bpt_math(dt));
                cr_assert(n > 1 || o != t[0], "%s of one tensor returned it, not a copy", name);
                bp_tensor_release(o);
                cf_array_free(&want);
            }
            for (int k = 0; k < 3; k++) {
                bp_tensor_release(t[k]);
                cf_array_free(&a[k]);
            }
        }
    }
    bp_context_destroy(ctx);
}

Test(compose, max_n_and_min_n_broadcast_and_propagate_nan)
{
    check_variadic(bp_max_n, cf_oracle_max_n, "max_n", cf_numeric_dtypes, 8);
    check_variadic(bp_min_n, cf_oracle_min_n, "min_n", cf_numeric_dtypes, 8);
}

Test(compose, sum_n_and_mean_n_of_one_two_and_three_tensors)
{
    check_variadic(bp_sum_n, cf_oracle_sum_n, "sum_n", cf_numeric_dtypes, 8);
    check_variadic(bp_mean_n, cf_oracle_mean_n, "mean_n", cf_float_dtypes, 4);
}

/* ---- einsum --------------------------------------------------------------------------------- */

static void check_einsum(const char *eq, int32_t n, int32_t r0, const int64_t *s0, int32_t r1,
                         const int64_t *s1)
{
    double v[2][256];
    seq(v[0], 256);
    for (int i = 0; i < 256; i++)
        v[1][i] = (double)((i * 5) % 7) - 3;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 8; d++) {
            bp_dtype dt = cf_numeric_dtypes[d];
            cf_array a[2];
            bp_tensor *t[2] = {NULL, NULL};
            const cf_array *pa[2] = {&a[0], &a[1]};
            a[0] = bpt_array(dt, r0, s0, v[0]);
            t[0] = bpt_tensor_of(be, &a[0]);
            if (n == 2) {
                a[1] = bpt_array(dt, r1, s1, v[1]);
                t[1] = bpt_tensor_of(be, &a[1]);
            }
            cf_array want;
            cr_assert(cf_oracle_einsum(eq, n, pa, &want, NULL, NULL));
            bp_tensor *o = NULL;
            BPT_OK(bp_einsum(eq, n, (const bp_tensor *const *)t, &o));
            char what[64];
            snprintf(what, sizeof what, "einsum \"%s\"", eq);
            /* small integers: exact in every dtype except f16/bf16's rounding of
             * partial sums the composition keeps in the dtype */
            bool half = dt == BP_F16 || dt == BP_BF16;
            bpt_expect_array(what, o, &want, half ? (bpt_tol){0, 0, 2} : bpt_exact());
            cr_assert(o != t[0] && o != t[1], "einsum \"%s\" returned an input", eq);
            bp_tensor_release(o);
            cf_array_free(&want);
            for (int k = 0; k < n; k++) {
                bp_tensor_release(t[k]);
                cf_array_free(&a[k]);
            }
        }
    }
    bp_context_destroy(ctx);
}

Test(compose, einsum_matrix_products_and_batched_products)
{
    check_einsum("ij,jk->ik", 2, 2, (const int64_t[]){3, 4}, 2, (const int64_t[]){4, 5});
    check_einsum("ij,kj->ik", 2, 2, (const int64_t[]){3, 4}, 2, (const int64_t[]){5, 4});
    check_einsum("bij,bjk->bik", 2, 3, (const int64_t[]){2, 3, 4}, 3, (const int64_t[]){2, 4, 5});
    check_einsum("bij,bjk->bki", 2, 3, (const int64_t[]){2, 3, 4}, 3, (const int64_t[]){2, 4, 5});
    check_einsum("ij,jk", 2, 2, (const int64_t[]){3, 4}, 2, (const int64_t[]){4, 2});
}

Test(compose, einsum_outer_dot_and_sums)
{
    check_einsum("i,j->ij", 2, 1, (const int64_t[]){4}, 1, (const int64_t[]){3});
    check_einsum("i,i->", 2, 1, (const int64_t[]){7}, 1, (const int64_t[]){7});
    check_einsum("ij,jk->i", 2, 2, (const int64_t[]){3, 4}, 2, (const int64_t[]){4, 5});
    check_einsum("abc,cd->da", 2, 3, (const int64_t[]){2, 3, 4}, 2, (const int64_t[]){4, 2});
}

Test(compose, einsum_of_one_operand_transposes_and_sums)
{
    check_einsum("ij->ji", 1, 2, (const int64_t[]){3, 4}, 0, NULL);
    check_einsum("ij->i", 1, 2, (const int64_t[]){3, 4}, 0, NULL);
    check_einsum("ijk->kij", 1, 3, (const int64_t[]){2, 3, 4}, 0, NULL);
    check_einsum("ij->", 1, 2, (const int64_t[]){3, 4}, 0, NULL);
    check_einsum("ij", 1, 2, (const int64_t[]){3, 4}, 0, NULL);
    check_einsum("ba", 1, 2, (const int64_t[]){3, 4}, 0, NULL); /* implicit: "ab", a transpose */
}

static void einsum_refuses(const char *eq, int32_t n, const char *needle)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *a = bpt_tensor(be, BP_F32, 2, (const int64_t[]){3, 3}, NULL);
        const bp_tensor *xs[3] = {a, a, a};
        bp_tensor *o = (bp_tensor *)(uintptr_t)0x10;
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_einsum(eq, n, xs, &o));
        cr_assert_null(o, "einsum \"%s\" failed but left *out set", eq);
        cr_assert(strstr(bp_last_error(), needle), "einsum \"%s\": the message does not say '%s': "
                  "%s", eq, needle, bp_last_error());
        bp_tensor_release(a);
    }
    bp_context_destroy(ctx);
}

Test(compose, einsum_refuses_a_diagonal_naming_it)
{
    einsum_refuses("ii->i", 1, "diagonals");
}

Test(compose, einsum_refuses_ellipses_and_three_operands)
{
    einsum_refuses("...ij->ij", 1, "ellipses");
    einsum_refuses("ij,jk,kl->il", 3, "contract two at a time");
    einsum_refuses("ij,jk->iz", 2, "names no axis");
    einsum_refuses("ij,jk->ik", 1, "names 2 operands but 1 were given");
}

/* A variadic op of n >= 2 tensors is n - 1 binary ops, and no copy of the
 * first tensor before them (a plan of sum_n(a, b) is one add); of one
 * tensor, a copy. */
Test(compose, variadic_ops_record_n_minus_one_binary_ops_and_no_copy)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    const int64_t shape[2] = {2, 3};
    for (int32_t n = 1; n <= 3; n++) {
        bp_graph *g = NULL;
        bp_tensor *xs[3] = {NULL, NULL, NULL}, *y = NULL;
        BPT_OK(bp_graph_create(be, &g));
        for (int32_t k = 0; k < n; k++)
            BPT_OK(bp_graph_input(g, BP_F32, 2, shape, &xs[k]));
        BPT_OK(bp_sum_n(n, (const bp_tensor *const *)xs, &y));
        BPT_OK(bp_graph_output(g, y));
        bp_graph_stats st;
        bp_graph_exec *e = bpt_graph_compile(g, false, &st);
        cr_expect_eq(st.nodes_planned, n == 1 ? 1 : n - 1, "sum_n of %d: %lld nodes", (int)n,
                     (long long)st.nodes_planned);
        char text[1024];
        BPT_OK(bp_graph_exec_format(e, text, sizeof text, NULL));
        cr_expect_eq(strstr(text, "broadcast_to") != NULL, n == 1, "sum_n of %d:\n%s", (int)n,
                     text);
        bp_graph_exec_release(e);
        for (int32_t k = 0; k < n; k++)
            bp_tensor_release(xs[k]);
        bp_tensor_release(y);
        bp_graph_release(g);
    }
    bp_context_destroy(ctx);
}

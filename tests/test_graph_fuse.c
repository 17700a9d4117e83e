/* Fused groups (graph.h's bp_graph_stats.fused_groups, plugin.h's
 * bp_fused_group): chains of elementwise nodes that a backend with the
 * fused entries (blas_cpu) runs as one call, in blocks. On every backend
 * the results equal eager's bit for bit; on a fusing one the values a group
 * keeps to itself get no buffer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"
#include "models.h"

static bool fuses(const bp_backend *be) { return strncmp(bp_backend_name(be), "blas_cpu:", 9) == 0; }

static bp_tensor *run1(bp_graph_exec *exe, bp_tensor *x)
{
    bp_tensor *y = NULL;
    BPT_OK(bp_graph_run(exe, 1, &x, 1, &y));
    return y;
}

Test(graph_fuse, gelu_of_primitive_ops_runs_as_one_group_with_no_buffer_and_eagers_bits)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        /* several blocks, a tail, and enough work for the pool's threads */
        const int64_t sizes[] = {1, 7, 4096, 4097, (1 << 17) + 3};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            bp_graph *g = NULL;
            bp_tensor *sx = NULL;
            BPT_OK(bp_graph_create(be, &g));
            BPT_OK(bp_graph_input(g, BP_F32, 1, &sizes[i], &sx));
            bp_tensor *sy = bpt_gelu_tanh(be, sx);
            BPT_OK(bp_graph_output(g, sy));
            bp_graph_stats st;
            bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
            if (fuses(be))
                cr_expect(st.fused_groups == 1 && st.nodes_fused == 9 && st.peak_bytes == 0 &&
                              st.buffers == 0,
                          "on %s, %lld elements: %lld groups of %lld nodes, %lld buffers",
                          bp_backend_name(be), (long long)sizes[i], (long long)st.fused_groups,
                          (long long)st.nodes_fused, (long long)st.buffers);
            else
                cr_expect_eq(st.fused_groups, 0, "on %s", bp_backend_name(be));
            cr_expect_eq(st.sum_bytes, 8 * sizes[i] * 4, "every intermediate is still counted");
            bp_tensor *x = bpt_random_f32(be, 1, &sizes[i], 40 + i);
            bp_tensor *want = bpt_gelu_tanh(be, x), *got = run1(exe, x);
            cr_expect(bpt_same_bytes(got, want), "on %s, %lld elements",
                      bp_backend_name(be), (long long)sizes[i]);
            bp_tensor *all[] = {sx, sy, x, want, got};
            for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
                bp_tensor_release(all[k]);
            bp_graph_exec_release(exe);
            bp_graph_release(g);
        }
    }
    bp_context_destroy(ctx);
}

/* y = 2 relu(x + b) x^T: a row broadcast, a transposed view and a
 * scalar in one group; t = x + b is also read by a sum after the group. */
static void broadcast_model(bp_backend *be, const bp_tensor *x, const bp_tensor *b,
                            bp_tensor **y, bp_tensor **s)
{
    bp_tensor *t = NULL, *r = NULL, *xt = NULL, *m = NULL, *two = bpt_constant(be, BP_F32, 2.0);
    BPT_OK(bp_transpose(x, (const int32_t[]){1, 0}, &xt)); /* a view: no node */
    BPT_OK(bp_add(x, b, &t));
    BPT_OK(bp_relu(t, &r));
    BPT_OK(bp_mul(r, xt, &m));
    BPT_OK(bp_mul(m, two, y));
    BPT_OK(bp_sum(t, 0, NULL, false, s));
    bp_tensor *tmp[] = {t, r, xt, m, two};
    for (size_t k = 0; k < sizeof tmp / sizeof tmp[0]; k++)
        bp_tensor_release(tmp[k]);
}

Test(graph_fuse, broadcast_transposed_and_scalar_operands_and_a_value_read_later_keep_eagers_bits)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        const int64_t n = 300; /* (300, 300): 22 blocks, rows crossing blocks */
        bp_graph *g = NULL;
        bp_tensor *sx = NULL, *sb = NULL, *sy = NULL, *ss = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F32, 2, (const int64_t[]){n, n}, &sx));
        BPT_OK(bp_graph_input(g, BP_F32, 1, &n, &sb));
        broadcast_model(be, sx, sb, &sy, &ss);
        BPT_OK(bp_graph_output(g, sy));
        BPT_OK(bp_graph_output(g, ss));
        bp_graph_stats st;
        bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
        if (fuses(be))
            cr_expect(st.fused_groups == 1 && st.nodes_fused == 4, "on %s: %lld groups, %lld nodes",
                      bp_backend_name(be), (long long)st.fused_groups,
                      (long long)st.nodes_fused);
        bp_tensor *x = bpt_random_f32(be, 2, (const int64_t[]){n, n}, 5);
        bp_tensor *b = bpt_random_f32(be, 1, &n, 6);
        bp_tensor *wy = NULL, *ws = NULL, *out[2] = {NULL, NULL};
        broadcast_model(be, x, b, &wy, &ws);
        BPT_OK(bp_graph_run(exe, 2, (bp_tensor *[]){x, b}, 2, out));
        cr_expect(bpt_same_bytes(out[0], wy), "y on %s", bp_backend_name(be));
        cr_expect(bpt_same_bytes(out[1], ws), "the sum of the value read after the group, on %s",
                  bp_backend_name(be));
        bp_tensor *all[] = {sx, sb, sy, ss, x, b, wy, ws, out[0], out[1]};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);
        bp_graph_exec_release(exe);
        bp_graph_release(g);
    }
    bp_context_destroy(ctx);
}

/* y = f32(u == v) for a column u and a row v (a one-hot, as magika's Equal
 * -> Cast): the column's element repeated along each row of the group, in
 * every element size, with eager's bits. */
static bp_tensor *one_hot_model(const bp_tensor *u, const bp_tensor *v)
{
    bp_tensor *e = NULL, *y = NULL;
    BPT_OK(bp_eq(u, v, &e));
    BPT_OK(bp_cast(e, BP_F32, &y));
    bp_tensor_release(e);
    return y;
}

Test(graph_fuse, a_column_broadcast_along_rows_keeps_eagers_bits_in_every_element_size)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    static const bp_dtype dts[] = {BP_U8, BP_F16, BP_I32, BP_F64};
    const int64_t n = 300, m = 257; /* several blocks, rows crossing them */
    double *cu = malloc((size_t)n * sizeof *cu), *rv = malloc((size_t)m * sizeof *rv);
    cr_assert(cu && rv);
    for (int64_t i = 0; i < n; i++)
        cu[i] = (double)((i * 37) % 251);
    for (int64_t j = 0; j < m; j++)
        rv[j] = (double)(j % 251);
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            if (!bpt_supports(be, BP_OP_EQ, dts[d]))
                continue;
            bp_graph *g = NULL;
            bp_tensor *su = NULL, *sv = NULL;
            BPT_OK(bp_graph_create(be, &g));
            BPT_OK(bp_graph_input(g, dts[d], 2, (const int64_t[]){n, 1}, &su));
            BPT_OK(bp_graph_input(g, dts[d], 2, (const int64_t[]){1, m}, &sv));
            bp_tensor *sy = one_hot_model(su, sv);
            BPT_OK(bp_graph_output(g, sy));
            bp_graph_stats st;
            bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
            if (fuses(be))
                cr_expect(st.fused_groups == 1 && st.nodes_fused == 2, "%s on %s: %lld groups",
                          bp_dtype_name(dts[d]), bp_backend_name(be), (long long)st.fused_groups);
            bp_tensor *u = bpt_tensor(be, dts[d], 2, (const int64_t[]){n, 1}, cu);
            bp_tensor *v = bpt_tensor(be, dts[d], 2, (const int64_t[]){1, m}, rv);
            bp_tensor *want = one_hot_model(u, v), *got = NULL;
            BPT_OK(bp_graph_run(exe, 2, (bp_tensor *[]){u, v}, 1, &got));
            cr_expect(bpt_same_bytes(got, want), "%s on %s", bp_dtype_name(dts[d]),
                      bp_backend_name(be));
            bp_tensor *all[] = {su, sv, sy, u, v, want, got};
            for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
                bp_tensor_release(all[k]);
            bp_graph_exec_release(exe);
            bp_graph_release(g);
        }
    }
    free(cu), free(rv);
    bp_context_destroy(ctx);
}

Test(graph_fuse, no_fuse_runs_every_node_alone_with_the_same_bits)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        const int64_t n = 10000;
        bp_graph *g = NULL;
        bp_tensor *sx = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F32, 1, &n, &sx));
        bp_tensor *sy = bpt_gelu_tanh(be, sx);
        BPT_OK(bp_graph_output(g, sy));
        bp_graph_stats alone, fused;
        bp_graph_exec *e1 = bpt_graph_compile(g, false, &alone);
        bp_graph_exec *e2 = bpt_graph_compile(g, true, &fused);
        cr_expect_eq(alone.fused_groups, 0);
        cr_expect_eq(alone.nodes_fused, 0);
        cr_expect_gt(alone.peak_bytes, fused.fused_groups > 0 ? fused.peak_bytes : -1);
        bp_tensor *x = bpt_random_f32(be, 1, &n, 9);
        bp_tensor *a = run1(e1, x), *b = run1(e2, x);
        cr_expect(bpt_same_bytes(a, b), "on %s", bp_backend_name(be));
        bp_tensor *all[] = {sx, sy, x, a, b};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);
        bp_graph_exec_release(e1);
        bp_graph_exec_release(e2);
        bp_graph_release(g);
    }
    bp_context_destroy(ctx);
}

/* a' = 2 m and b' = m + a' in one group, a' paired with m: the group reads
 * every element of m before it writes that element of a' over it. */
Test(graph_fuse, a_group_writing_over_a_donated_input_it_reads_reads_each_element_first)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        const int64_t n = (1 << 17) + 5;
        bp_graph *g = NULL;
        bp_tensor *sm = NULL, *sa = NULL, *sb = NULL, *two = bpt_constant(be, BP_F32, 2.0);
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F32, 1, &n, &sm));
        BPT_OK(bp_mul(sm, two, &sa));
        BPT_OK(bp_add(sm, sa, &sb));
        BPT_OK(bp_graph_output(g, sa));
        BPT_OK(bp_graph_output(g, sb));
        bp_graph_stats st;
        bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
        /* one by one, m is read after a' is written: a' cannot take it */
        cr_expect_eq(st.donatable_outputs, fuses(be) ? 1 : 0, "on %s", bp_backend_name(be));
        bp_tensor *m = bpt_random_f32(be, 1, &n, 3), *out[2] = {NULL, NULL};
        double *mv = bpt_read(m);
        BPT_OK(bp_graph_run_donating(exe, 1, &m, (const bool[]){true}, 2, out));
        double *av = bpt_read(out[0]), *bv = bpt_read(out[1]);
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++)
            bad += av[i] != (double)(float)(2 * (float)mv[i]) ||
                   bv[i] != (double)((float)mv[i] + (float)av[i]);
        cr_expect_eq(bad, 0, "on %s: %lld elements read after they were overwritten",
                     bp_backend_name(be), (long long)bad);
        free(mv), free(av), free(bv);
        bp_tensor *all[] = {sm, sa, sb, two, m, out[0], out[1]};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);
        bp_graph_exec_release(exe);
        bp_graph_release(g);
    }
    bp_context_destroy(ctx);
}

Test(graph_fuse, mixed_dtypes_comparisons_where_and_casts_fuse_with_eagers_bits)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        const int64_t n = 9000;
        bp_graph *g = NULL;
        bp_tensor *sx = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F32, 1, &n, &sx));
        bp_tensor *ys[2] = {NULL, NULL};
        for (int pass = 0; pass < 2; pass++) {
            bp_tensor *x = sx;
            if (pass)
                x = bpt_random_f32(be, 1, &n, 12);
            bp_tensor *zero = bpt_constant(be, BP_F32, 0.0), *pos = NULL, *d = NULL, *e = NULL,
                      *w = NULL, *y = NULL;
            BPT_OK(bp_gt(x, zero, &pos));          /* bool */
            BPT_OK(bp_cast(x, BP_F64, &d));        /* f64 */
            BPT_OK(bp_exp(d, &e));
            BPT_OK(bp_where(pos, d, e, &w));
            BPT_OK(bp_cast(w, BP_F32, &y));
            ys[pass] = y;
            bp_tensor *tmp[] = {zero, pos, d, e, w};
            for (size_t k = 0; k < sizeof tmp / sizeof tmp[0]; k++)
                bp_tensor_release(tmp[k]);
            if (pass) {
                BPT_OK(bp_graph_output(g, ys[0]));
                bp_graph_stats st;
                bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
                if (fuses(be))
                    cr_expect_eq(st.nodes_fused, 5, "on %s", bp_backend_name(be));
                bp_tensor *got = run1(exe, x);
                cr_expect(bpt_same_bytes(got, y), "on %s", bp_backend_name(be));
                bp_tensor_release(got);
                bp_tensor_release(x);
                bp_graph_exec_release(exe);
            }
        }
        bp_tensor_release(ys[0]);
        bp_tensor_release(ys[1]);
        bp_tensor_release(sx);
        bp_graph_release(g);
    }
    bp_context_destroy(ctx);
}

/* relu(x * x - 0.5) + sqrt(|x|) * exp(-x) / 3: ops the template declares. */
static bp_tensor *template_chain(bp_backend *be, const bp_tensor *x)
{
    bp_tensor *h = bpt_constant(be, BP_F32, 0.5), *three = bpt_constant(be, BP_F32, 3.0);
    bp_tensor *t[9] = {NULL};
    BPT_OK(bp_mul(x, x, &t[0]));
    BPT_OK(bp_sub(t[0], h, &t[1]));
    BPT_OK(bp_relu(t[1], &t[2]));
    BPT_OK(bp_abs(x, &t[3]));
    BPT_OK(bp_sqrt(t[3], &t[4]));
    BPT_OK(bp_neg(x, &t[5]));
    BPT_OK(bp_exp(t[5], &t[6]));
    BPT_OK(bp_mul(t[4], t[6], &t[7]));
    BPT_OK(bp_div(t[7], three, &t[8]));
    bp_tensor *y = NULL;
    BPT_OK(bp_add(t[2], t[8], &y));
    for (int k = 0; k < 9; k++)
        bp_tensor_release(t[k]);
    bp_tensor_release(h);
    bp_tensor_release(three);
    return y;
}

typedef bp_status (*reduce_fn)(const bp_tensor *, int32_t, const int32_t *, bool, bp_tensor **);

/* d = (a - b)^2; r = red(d) over axes; d itself too if keep_d. */
static void squared_error(const bp_tensor *a, const bp_tensor *b, reduce_fn red, int32_t n_axes,
                          const int32_t *axes, bool keepdims, bp_tensor **r, bp_tensor **d_out)
{
    bp_tensor *diff = NULL, *d = NULL;
    BPT_OK(bp_sub(a, b, &diff));
    BPT_OK(bp_mul(diff, diff, &d));
    BPT_OK(red(d, n_axes, axes, keepdims, r));
    bp_tensor_release(diff);
    if (d_out)
        *d_out = d;
    else
        bp_tensor_release(d);
}

Test(graph_fuse, a_reduction_of_trailing_axes_ends_the_group_with_eagers_bits)
{
    static const struct {
        int32_t rank;
        int64_t shape[3];
        int32_t n_axes, axes[3];
        bool keepdims, keep_d;
        int64_t fused; /* nodes in the group on blas_cpu */
    } cases[] = {
        {2, {37, 100}, 1, {1}, false, false, 3},
        {3, {3, 5, 64}, 2, {1, 2}, true, false, 3},
        {1, {5000}, 0, {0}, false, false, 3},     /* every axis: one row */
        {2, {37, 100}, 1, {-1}, true, true, 3},   /* the squares are a result too */
        {2, {64, 30}, 1, {0}, false, false, 2},   /* a leading axis */
    };
    static const reduce_fn reds[] = {bp_sum, bp_mean, bp_max, bp_argmax};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (size_t f = 0; f < sizeof reds / sizeof reds[0]; f++) {
                bp_graph *g = NULL;
                bp_tensor *sa = NULL, *sb = NULL, *sr = NULL, *sd = NULL;
                int32_t rank = cases[c].rank;
                const int64_t *shape = cases[c].shape;
                BPT_OK(bp_graph_create(be, &g));
                BPT_OK(bp_graph_input(g, BP_F32, rank, shape, &sa));
                BPT_OK(bp_graph_input(g, BP_F32, rank, shape, &sb));
                squared_error(sa, sb, reds[f], cases[c].n_axes, cases[c].axes, cases[c].keepdims,
                              &sr, cases[c].keep_d ? &sd : NULL);
                BPT_OK(bp_graph_output(g, sr));
                if (sd)
                    BPT_OK(bp_graph_output(g, sd));
                bp_graph_stats st;
                bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
                char what[128];
                snprintf(what, sizeof what, "on %s, case %zu, reduction %zu",
                         bp_backend_name(be), c, f);
                if (fuses(be))
                    cr_expect(st.fused_groups == 1 && st.nodes_fused == cases[c].fused &&
                                  (cases[c].fused == 2 || st.buffers == 0),
                              "%s: %lld groups of %lld nodes, %lld buffers", what,
                              (long long)st.fused_groups, (long long)st.nodes_fused,
                              (long long)st.buffers);
                bp_tensor *a = bpt_random_f32(be, rank, shape, 70 + c);
                bp_tensor *b = bpt_random_f32(be, rank, shape, 80 + c);
                bp_tensor *want = NULL, *want_d = NULL, *got[2] = {NULL, NULL};
                squared_error(a, b, reds[f], cases[c].n_axes, cases[c].axes, cases[c].keepdims,
                              &want, cases[c].keep_d ? &want_d : NULL);
                BPT_OK(bp_graph_run(exe, 2, (bp_tensor *[]){a, b}, sd ? 2 : 1, got));
                cr_expect(bpt_same_bytes(got[0], want), "%s", what);
                if (sd)
                    cr_expect(bpt_same_bytes(got[1], want_d), "%s: the squares", what);
                bp_tensor *all[] = {sa, sb, sr, sd, a, b, want, want_d, got[0], got[1]};
                for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
                    bp_tensor_release(all[k]);
                bp_graph_exec_release(exe);
                bp_graph_release(g);
            }
    }
    bp_context_destroy(ctx);
}

/* Rows longer than blas_cpu's block (8192): the sum, mean, max and min of
 * f32 and f64 fold each block's part of a row in double and combine the
 * chunks' partials in order; argmax is declined (the chain fuses alone).
 * max, min and argmax have eager's bits. A sum (mean) is eager's up to the
 * association of its double accumulator: both add the same values in
 * double, each within n 2^-53 sum|x| of the exact sum (n <= 2^19 here: far
 * below half an f32 ulp of these sums of squares, all positive), so the f32
 * results are equal or adjacent; for f64 the bound itself is checked. */
Test(graph_fuse, a_reduction_of_rows_longer_than_a_block_folds_partials_in_double)
{
    static const struct {
        int32_t rank;
        int64_t shape[2];
        int32_t n_axes, axes[2];
    } cases[] = {
        {2, {4, 9000}, 1, {1}},
        {1, {300001}, 0, {0}}, /* every axis: one row, cut among the threads */
        {2, {3, 70000}, 1, {-1}},
    };
    static const reduce_fn reds[] = {bp_sum, bp_mean, bp_max, bp_min, bp_argmax};
    static const bp_dtype dts[] = {BP_F32, BP_F64};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (size_t f = 0; f < sizeof reds / sizeof reds[0]; f++)
                for (size_t d = 0; d < 2; d++) {
                    int32_t rank = cases[c].rank;
                    const int64_t *shape = cases[c].shape;
                    bp_graph *g = NULL;
                    bp_tensor *sa = NULL, *sb = NULL, *sr = NULL;
                    BPT_OK(bp_graph_create(be, &g));
                    BPT_OK(bp_graph_input(g, dts[d], rank, shape, &sa));
                    BPT_OK(bp_graph_input(g, dts[d], rank, shape, &sb));
                    squared_error(sa, sb, reds[f], cases[c].n_axes, cases[c].axes, false, &sr,
                                  NULL);
                    BPT_OK(bp_graph_output(g, sr));
                    bp_graph_stats st;
                    bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
                    char what[128];
                    snprintf(what, sizeof what, "on %s, case %zu, reduction %zu, %s",
                             bp_backend_name(be), c, f, bp_dtype_name(dts[d]));
                    bool arg = reds[f] == bp_argmax;
                    if (fuses(be))
                        cr_expect(st.fused_groups == 1 && st.nodes_fused == (arg ? 2 : 3),
                                  "%s: %lld groups of %lld nodes", what,
                                  (long long)st.fused_groups, (long long)st.nodes_fused);
                    bp_tensor *a32 = bpt_random_f32(be, rank, shape, 90 + c);
                    bp_tensor *b32 = bpt_random_f32(be, rank, shape, 95 + c);
                    bp_tensor *a = NULL, *b = NULL, *want = NULL, *got = NULL;
                    BPT_OK(bp_cast(a32, dts[d], &a));
                    BPT_OK(bp_cast(b32, dts[d], &b));
                    squared_error(a, b, reds[f], cases[c].n_axes, cases[c].axes, false, &want,
                                  NULL);
                    BPT_OK(bp_graph_run(exe, 2, (bp_tensor *[]){a, b}, 1, &got));
                    bool sums = reds[f] == bp_sum || reds[f] == bp_mean;
                    if (!sums) {
                        cr_expect(bpt_same_bytes(got, want), "%s", what);
                    } else {
                        int64_t rows = bp_tensor_numel(want), n = bp_tensor_numel(a) / rows;
                        double *x = bpt_read(got), *y = bpt_read(want);
                        for (int64_t r = 0; r < rows; r++) {
                            /* y >= 0: |x| and |y| bound the sum of |terms| (mean: / n) */
                            double bound = dts[d] == BP_F32
                                               ? (double)(nextafterf((float)y[r], INFINITY) -
                                                          (float)y[r])
                                               : 2.0 * (double)n * 0x1p-53 * y[r];
                            cr_expect(fabs(x[r] - y[r]) <= bound, "%s, row %lld: %.17g, eager %.17g",
                                      what, (long long)r, x[r], y[r]);
                        }
                        free(x);
                        free(y);
                    }
                    bp_tensor *all[] = {sa, sb, sr, a32, b32, a, b, want, got};
                    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
                        bp_tensor_release(all[k]);
                    bp_graph_exec_release(exe);
                    bp_graph_release(g);
                }
    bp_context_destroy(ctx);
}

Test(graph_fuse, the_template_plugins_fused_groups_give_what_its_ops_give_one_by_one)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, BPT_TEMPLATE_PATH, &be));
    const int64_t shape[2] = {33, 17};
    bp_graph *g = NULL;
    bp_tensor *sx = NULL;
    BPT_OK(bp_graph_create(be, &g));
    BPT_OK(bp_graph_input(g, BP_F32, 2, shape, &sx));
    bp_tensor *sy = template_chain(be, sx);
    BPT_OK(bp_graph_output(g, sy));
    bp_graph_stats fused, alone;
    bp_graph_exec *e1 = bpt_graph_compile(g, true, &fused);
    bp_graph_exec *e2 = bpt_graph_compile(g, false, &alone);
    cr_expect(fused.fused_groups == 1 && fused.nodes_fused == 10 && fused.peak_bytes == 0,
              "%lld groups of %lld nodes, peak %lld", (long long)fused.fused_groups,
              (long long)fused.nodes_fused, (long long)fused.peak_bytes);
    cr_expect_eq(alone.fused_groups, 0);
    bp_tensor *x = bpt_random_f32(be, 2, shape, 77);
    bp_tensor *want = template_chain(be, x), *a = run1(e1, x), *b = run1(e2, x);
    cr_expect(bpt_same_bytes(a, want), "fused");
    cr_expect(bpt_same_bytes(b, want), "one by one");
    bp_tensor *all[] = {sx, sy, x, want, a, b};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        bp_tensor_release(all[k]);
    bp_graph_exec_release(e1);
    bp_graph_exec_release(e2);
    bp_graph_release(g);
    bp_context_destroy(ctx);
}

Test(graph_fuse, a_plans_listing_shows_each_node_its_fused_group_and_where_values_live)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        const int64_t n = 4097;
        bp_graph *g = NULL;
        bp_tensor *sx = NULL, *ss = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F32, 1, &n, &sx));
        bp_tensor *sy = bpt_gelu_tanh(be, sx);
        BPT_OK(bp_sum(sy, 0, NULL, false, &ss));
        BPT_OK(bp_graph_output(g, ss));
        bp_graph_stats st;
        bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
        size_t need = 0;
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_graph_exec_format(exe, NULL, 0, &need));
        cr_assert_gt(need, 100);
        char small[16];
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_graph_exec_format(exe, small, sizeof small, NULL));
        cr_expect_eq(strlen(small), sizeof small - 1, "the beginning, cut and terminated");
        char *text = malloc(need);
        cr_assert(text);
        BPT_OK(bp_graph_exec_format(exe, text, need, NULL));
        cr_expect_eq(strlen(text) + 1, need);
        cr_expect(strstr(text, "input 0: v0 : f32 (4097,)") && strstr(text, "= tanh(") &&
                      strstr(text, "= sum(") && strstr(text, ": f32 ()  [output 0]") &&
                      strstr(text, "output 0: v"),
                  "on %s:\n%s", bp_backend_name(be), text);
        if (fuses(be))
            cr_expect(strstr(text, "fused group 0: 10 nodes") && /* the sum ends it */
                          strstr(text, "[kept in the group]") && strstr(text, "10 of them in 1") &&
                          strstr(text, "0 buffer(s)"),
                      "on %s:\n%s", bp_backend_name(be), text);
        else
            cr_expect(!strstr(text, "fused group 0") && strstr(text, "[buffer 0]"),
                      "on %s:\n%s", bp_backend_name(be), text);
        free(text);
        bp_tensor *all[] = {sx, sy, ss};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);
        bp_graph_exec_release(exe);
        bp_graph_release(g);
    }
    bp_context_destroy(ctx);
}

/* concat writes its result in parts, one node each: the listing says which
 * part of the value each writes, not as if the value were written twice. */
Test(graph_fuse, a_plans_listing_names_each_part_of_a_value_written_in_parts)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_graph *g = NULL;
        bp_tensor *sa = NULL, *sb = NULL, *ea = NULL, *nb = NULL, *cat = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F32, 2, (const int64_t[]){2, 3}, &sa));
        BPT_OK(bp_graph_input(g, BP_F32, 2, (const int64_t[]){4, 3}, &sb));
        BPT_OK(bp_exp(sa, &ea));
        BPT_OK(bp_neg(sb, &nb));
        BPT_OK(bp_concat(2, (const bp_tensor *[]){ea, nb}, 0, &cat));
        BPT_OK(bp_graph_output(g, cat));
        bp_graph_stats st;
        bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
        size_t need = 0;
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_graph_exec_format(exe, NULL, 0, &need));
        char *text = malloc(need);
        cr_assert(text);
        BPT_OK(bp_graph_exec_format(exe, text, need, NULL));
        cr_expect(strstr(text, " (part 1 of 2) = concat(") && strstr(text, ": f32 (2, 3)") &&
                      strstr(text, " (part 2 of 2) = concat(") && strstr(text, ": f32 (4, 3)") &&
                      !strstr(text, " (part 3"),
                  "on %s:\n%s", bp_backend_name(be), text);
        cr_expect(strstr(text, "= exp(v0) : f32 (2, 3)") && !strstr(text, "v2 (part"),
                  "a value written once has no part: on %s:\n%s", bp_backend_name(be), text);
        free(text);
        bp_tensor *all[] = {sa, sb, ea, nb, cat};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);
        bp_graph_exec_release(exe);
        bp_graph_release(g);
    }
    bp_context_destroy(ctx);
}

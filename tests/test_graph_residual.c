/* Epilogue chains (plugin.h's prepare_epilogues; graph.h's
 * bp_graph_stats.epilogues_fused): a compiled plan's residual add after a
 * prepared convolution, the only reader of its output, and the Relu after
 * the add, are computed by the convolution as it stores (blas_cpu: its
 * direct kernel's tiles, or each GEMM tile while it is in the cache)
 * instead of running as a fused group after it. The result must be the
 * bits of the same plan's convolution followed by the add and the Relu,
 * whichever input of the add the convolution is; a bind that replaces the
 * weights runs the nodes as recorded; a chain whose values anything else
 * reads stops before them; and the last value, now written by the
 * convolution, never shares memory with what the convolution or the add
 * read.
 *
 * A plan's convolution on the direct kernel is within the op's tolerance
 * of the eager one, not its bits (docs/graphs.md), and whether a 1x1 runs
 * direct depends on the machine (bpt_blas_cpu_in_place_direct): results
 * are compared with the same plan's convolution, and with the eager op
 * only where it stays on the GEMM path. ctest's
 * graph_residual.openblas_prescott runs this suite on OpenBLAS's SSE
 * kernels, which sends the 1x1 cases direct on an AVX-512 machine. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect_nn.h"

#define WIN(...) ((bp_window){.struct_size = sizeof(bp_window), __VA_ARGS__})

typedef struct res_case {
    const char *what;
    bp_dtype dt;
    int64_t x[4], w[4], y[4];
    bp_window win;
} res_case;

/* The direct kernel's 3x3 (where the CPU has fma; the GEMM path elsewhere),
 * a 1x1 on the GEMM path (OpenBLAS reading x in place; direct against
 * OpenBLAS kernels narrower than an AVX-512 level), a strided 1x1 (a
 * residual network's projection: unfolded), a kernel along one axis (one
 * GEMM per tap) and f64 (the GEMM path), each with filters and positions
 * that cut tiles unevenly. */
static const res_case cases[] = {
    {"3x3 pads 1", BP_F32, {1, 16, 13, 13}, {40, 16, 3, 3}, {1, 40, 13, 13},
     WIN(.pads = {1, 1, 1, 1})},
    {"1x1", BP_F32, {2, 48, 13, 13}, {70, 48, 1, 1}, {2, 70, 13, 13}, WIN(.groups = 0)},
    {"1x1 stride 2", BP_F32, {1, 24, 15, 15}, {56, 24, 1, 1}, {1, 56, 8, 8},
     WIN(.strides = {2, 2})},
    {"1x5 pads 2 (one axis)", BP_F32, {1, 64, 1, 200}, {32, 64, 1, 5}, {1, 32, 1, 200},
     WIN(.pads = {0, 2, 0, 2})},
    {"f64 3x3", BP_F64, {1, 6, 11, 11}, {20, 6, 3, 3}, {1, 20, 11, 11},
     WIN(.pads = {1, 1, 1, 1})},
};

/* How a graph ends after conv(x, w, b): add(y, r) or add(r, y), then relu
 * or not. */
typedef struct tail {
    bool residual_first, relu;
} tail;

/* x and r inputs, w and b captured: conv, then the tail (none: the
 * convolution alone). */
static bp_graph_exec *compile(bp_backend *be, const res_case *c, bp_tensor *w, bp_tensor *b,
                              const tail *t, bp_graph_stats *st)
{
    bp_graph *g = NULL;
    bp_tensor *sx = NULL, *sr = NULL, *sy = NULL, *sa = NULL, *sz = NULL;
    BPT_OK(bp_graph_create(be, &g));
    BPT_OK(bp_graph_input(g, c->dt, 4, c->x, &sx));
    BPT_OK(bp_graph_input(g, c->dt, 4, c->y, &sr));
    BPT_OK(bp_conv(sx, w, b, &c->win, &sy));
    bp_tensor *last = sy;
    if (t) {
        BPT_OK(t->residual_first ? bp_add(sr, sy, &sa) : bp_add(sy, sr, &sa));
        last = sa;
        if (t->relu) {
            BPT_OK(bp_relu(sa, &sz));
            last = sz;
        }
    }
    BPT_OK(bp_graph_output(g, last));
    bp_graph_exec *exe = bpt_graph_compile(g, true, st);
    bp_tensor *all[] = {sx, sr, sy, sa, sz};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        bp_tensor_release(all[k]);
    bp_graph_release(g);
    return exe;
}

/* Values from seed with a NaN at the first element and -0 at the second
 * (the add and the Relu keep both as they would alone). */
static bp_tensor *values(bp_backend *be, bp_dtype dt, const int64_t *shape, uint64_t seed)
{
    cf_array a = bpt_random_array(dt, 4, shape, seed, -1, 1);
    a.f[0] = NAN;
    a.f[1] = -0.0;
    bp_tensor *t = bpt_tensor_of(be, &a);
    cf_array_free(&a);
    return t;
}

Test(graph_residual, add_and_relu_after_a_prepared_convolution_run_inside_it)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    const tail tails[] = {{false, true}, {true, true}, {false, false}, {true, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const res_case *c = &cases[i];
        const int64_t m = c->w[0];
        cf_array wa = bpt_random_array(c->dt, 4, c->w, 12 + i, -1, 1);
        cf_array ba = bpt_random_array(c->dt, 1, &m, 13 + i, -1, 1);
        bp_tensor *w = bpt_tensor_of(be, &wa), *b = bpt_tensor_of(be, &ba);
        bp_tensor *in[2] = {values(be, c->dt, c->x, 11 + i), values(be, c->dt, c->y, 14 + i)};
        bp_graph_stats alone;
        bp_graph_exec *conv = compile(be, c, w, b, NULL, &alone);
        bp_tensor *y = NULL;
        BPT_OK(bp_graph_run(conv, 2, in, 1, &y));
        for (size_t k = 0; k < sizeof tails / sizeof tails[0]; k++) {
            const tail *t = &tails[k];
            bp_graph_stats st;
            bp_graph_exec *exe = compile(be, c, w, b, t, &st);
            cr_expect_eq(st.epilogues_fused, 1, "%s, tail %zu: %lld epilogues", c->what, k,
                         (long long)st.epilogues_fused);
            cr_expect_eq(st.nodes_prepared, 1, "%s, tail %zu: the convolution prepared",
                         c->what, k);
            cr_expect_eq(st.fused_groups, 0, "%s, tail %zu: no group left", c->what, k);
            bp_tensor *sum = NULL, *want = NULL;
            BPT_OK(t->residual_first ? bp_add(in[1], y, &sum) : bp_add(y, in[1], &sum));
            if (t->relu)
                BPT_OK(bp_relu(sum, &want));
            for (int run = 0; run < 2; run++) {
                bp_tensor *got = NULL;
                BPT_OK(bp_graph_run(exe, 2, in, 1, &got));
                cr_expect(bpt_same_bytes(got, t->relu ? want : sum),
                          "%s, tail %zu, run %d: not the bits of conv, add%s", c->what, k,
                          run, t->relu ? ", relu" : "");
                bp_tensor_release(got);
            }
            bp_tensor_release(sum);
            bp_tensor_release(want);
            bp_graph_exec_release(exe);
        }
        bp_graph_exec_release(conv);
        bp_tensor *all[] = {w, b, in[0], in[1], y};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);
        cf_array_free(&wa);
        cf_array_free(&ba);
    }
    bp_context_destroy(ctx);
}

/* After bp_graph_exec_bind replaces the weights, the convolution, the add
 * and the Relu run through their op entries: the eager results, bit for
 * bit; the first weights bound back give the first result. */
Test(graph_residual, chain_runs_as_recorded_once_bind_replaces_the_weights)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    const res_case *c = &cases[1];
    const tail t = {false, true};
    cf_array w1a = bpt_random_array(BP_F32, 4, c->w, 51, -1, 1);
    cf_array w2a = bpt_random_array(BP_F32, 4, c->w, 52, -1, 1);
    bp_tensor *w1 = bpt_tensor_of(be, &w1a), *w2 = bpt_tensor_of(be, &w2a);
    bp_tensor *in[2] = {values(be, BP_F32, c->x, 53), values(be, BP_F32, c->y, 54)};
    bp_graph_stats st;
    bp_graph_exec *exe = compile(be, c, w1, NULL, &t, &st);
    cr_expect_eq(st.epilogues_fused, 1);
    bp_tensor *first = NULL, *second = NULL, *again = NULL, *e[3] = {NULL, NULL, NULL};
    BPT_OK(bp_graph_run(exe, 2, in, 1, &first));
    BPT_OK(bp_graph_exec_bind(exe, w1, w2));
    BPT_OK(bp_graph_run(exe, 2, in, 1, &second));
    BPT_OK(bp_conv(in[0], w2, NULL, &c->win, &e[0]));
    BPT_OK(bp_add(e[0], in[1], &e[1]));
    BPT_OK(bp_relu(e[1], &e[2]));
    cr_expect(bpt_same_bytes(second, e[2]), "after the bind: eager conv, add, relu");
    BPT_OK(bp_graph_exec_bind(exe, w2, w1));
    BPT_OK(bp_graph_run(exe, 2, in, 1, &again));
    cr_expect(bpt_same_bytes(again, first), "the first weights bound back: the first result");
    bp_tensor *all[] = {w1, w2, in[0], in[1], first, second, again, e[0], e[1], e[2]};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        bp_tensor_release(all[k]);
    bp_graph_exec_release(exe);
    cf_array_free(&w1a);
    cf_array_free(&w2a);
    bp_context_destroy(ctx);
}

/* The convolution's output and the add's, inside the chain, are never
 * written while the convolution computes the chain: the plan gives them no
 * buffer (conv -> add -> relu with x, the residual and the result the
 * plan's inputs and output: nothing left to plan), says so in its text,
 * and a bind that has the nodes run one by one gives them buffers for
 * that run: the eager bits, run after run. */
Test(graph_residual, values_inside_the_chain_take_no_buffer_until_it_runs_node_by_node)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    const tail t = {false, true};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const res_case *c = &cases[i];
        cf_array w1a = bpt_random_array(c->dt, 4, c->w, 91 + i, -1, 1);
        cf_array w2a = bpt_random_array(c->dt, 4, c->w, 92 + i, -1, 1);
        bp_tensor *w1 = bpt_tensor_of(be, &w1a), *w2 = bpt_tensor_of(be, &w2a);
        bp_tensor *in[2] = {values(be, c->dt, c->x, 93 + i), values(be, c->dt, c->y, 94 + i)};
        bp_graph_stats st;
        bp_graph_exec *exe = compile(be, c, w1, NULL, &t, &st);
        cr_expect_eq(st.epilogues_fused, 1, "%s", c->what);
        cr_expect_eq(st.buffers, 0, "%s: %lld buffers", c->what, (long long)st.buffers);
        cr_expect_eq(st.peak_bytes, 0, "%s: peak %lld bytes", c->what,
                     (long long)st.peak_bytes);
        char text[4096];
        BPT_OK(bp_graph_exec_format(exe, text, sizeof text, NULL));
        const char *mark = strstr(text, "[no buffer: a bind that has the chain run node by node");
        cr_expect(mark && strstr(mark + 1, "[no buffer: a bind"), "both values:\n%s", text);
        bp_tensor *e[3] = {NULL, NULL, NULL};
        BPT_OK(bp_conv(in[0], w2, NULL, &c->win, &e[0]));
        BPT_OK(bp_add(e[0], in[1], &e[1]));
        BPT_OK(bp_relu(e[1], &e[2]));
        BPT_OK(bp_graph_exec_bind(exe, w1, w2));
        for (int run = 0; run < 2; run++) {
            bp_tensor *got = NULL;
            BPT_OK(bp_graph_run(exe, 2, in, 1, &got));
            cr_expect(bpt_same_bytes(got, e[2]), "%s, run %d node by node: not the eager bits",
                      c->what, run);
            bp_tensor_release(got);
        }
        bp_graph_exec_release(exe);
        bp_tensor *all[] = {w1, w2, in[0], in[1], e[0], e[1], e[2]};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);
        cf_array_free(&w1a);
        cf_array_free(&w2a);
    }
    bp_context_destroy(ctx);
}

/* The add's result read by two nodes (sum and relu(sum) both outputs): the
 * chain stops at the add (the Relu runs alone); the convolution's output
 * an output of the plan: no chain, the add and the Relu fuse as a group
 * after it; the add broadcasting its other input (a per-channel shift):
 * not a chain step. Each result is the plan's convolution (compiled alone:
 * the same path) followed by the eager ops, and where the 1x1 stays on the
 * GEMM path (not prepared), the eager one. */
Test(graph_residual, chain_stops_where_another_node_reads_its_values)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    const res_case *c = &cases[1];
    cf_array wa = bpt_random_array(BP_F32, 4, c->w, 61, -1, 1);
    bp_tensor *w = bpt_tensor_of(be, &wa);
    bp_tensor *in[2] = {values(be, BP_F32, c->x, 62), values(be, BP_F32, c->y, 63)};
    const int64_t shift_shape[4] = {1, c->y[1], 1, 1};
    bp_tensor *shift = values(be, BP_F32, shift_shape, 64);
    /* the plan's conv, then eager: add, relu, conv + shift */
    bp_tensor *e[4] = {NULL, NULL, NULL, NULL}, *eager = NULL;
    bp_graph_stats alone;
    bp_graph_exec *conv = compile(be, c, w, NULL, NULL, &alone);
    BPT_OK(bp_graph_run(conv, 2, in, 1, &e[0]));
    bp_graph_exec_release(conv);
    BPT_OK(bp_conv(in[0], w, NULL, &c->win, &eager));
    const bool direct = bpt_blas_cpu_in_place_direct(be);
    cr_expect_eq(alone.nodes_prepared, direct ? 1 : 0, "the 1x1 alone: %lld prepared (%s)",
                 (long long)alone.nodes_prepared, direct ? "direct" : "on the GEMM");
    if (!direct)
        cr_expect(bpt_same_bytes(e[0], eager), "the 1x1 on the GEMM path: not the eager bits");
    BPT_OK(bp_add(e[0], in[1], &e[1]));
    BPT_OK(bp_relu(e[1], &e[2]));
    BPT_OK(bp_add(e[0], shift, &e[3]));
    for (int shape = 0; shape < 3; shape++) {
        bp_graph *g = NULL;
        bp_tensor *sx = NULL, *sr = NULL, *sy = NULL, *sa = NULL, *sz = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F32, 4, c->x, &sx));
        BPT_OK(bp_graph_input(g, BP_F32, 4, c->y, &sr));
        BPT_OK(bp_conv(sx, w, NULL, &c->win, &sy));
        BPT_OK(bp_add(sy, shape == 2 ? shift : sr, &sa));
        BPT_OK(bp_relu(sa, &sz));
        int n_out = 0;
        bp_tensor *want[2] = {NULL, NULL};
        if (shape == 0) { /* sum and relu(sum) */
            BPT_OK(bp_graph_output(g, sa));
            BPT_OK(bp_graph_output(g, sz));
            want[0] = e[1], want[1] = e[2], n_out = 2;
        } else if (shape == 1) { /* y and relu(y + r) */
            BPT_OK(bp_graph_output(g, sy));
            BPT_OK(bp_graph_output(g, sz));
            want[0] = e[0], want[1] = e[2], n_out = 2;
        } else { /* y + shift, broadcast */
            BPT_OK(bp_graph_output(g, sa));
            want[0] = e[3], n_out = 1;
        }
        bp_graph_stats st;
        bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
        char text[4096];
        BPT_OK(bp_graph_exec_format(exe, text, sizeof text, NULL));
        const char *expect[3] = {"[prepared, with the add after it]", NULL, NULL};
        cr_expect_eq(st.epilogues_fused, shape == 0 ? 1 : 0, "shape %d: %lld epilogues\n%s",
                     shape, (long long)st.epilogues_fused, text);
        if (expect[shape])
            cr_expect(strstr(text, expect[shape]) != NULL, "shape %d:\n%s", shape, text);
        if (shape == 1)
            cr_expect_eq(st.fused_groups, 1, "shape 1: add and relu as a group\n%s", text);
        bp_tensor *out[2] = {NULL, NULL};
        BPT_OK(bp_graph_run(exe, 2, in, n_out, out));
        for (int k = 0; k < n_out; k++)
            cr_expect(bpt_same_bytes(out[k], want[k]),
                      "shape %d, output %d: not the plan's convolution then the eager ops", shape,
                      k);
        bp_tensor *all[] = {sx, sr, sy, sa, sz, out[0], out[1]};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);
        bp_graph_exec_release(exe);
        bp_graph_release(g);
    }
    bp_tensor *all[] = {w, in[0], in[1], shift, e[0], e[1], e[2], e[3], eager};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        bp_tensor_release(all[k]);
    cf_array_free(&wa);
    bp_context_destroy(ctx);
}

/* A residual block as ResNet's: h = relu(conv1(x)), out = relu(conv2(h) +
 * x'), x' = neg(x) computed in the plan (its memory the plan's own), then a
 * 1x1 conv of out. The chain's last value is written by conv2 while conv2
 * reads h and the add's x' is still to be read: it may take neither's
 * memory, nor may a later value take x''s before conv2 has read it. The
 * result is the bits of the same plan compiled without fusion (the same
 * kernels, each node alone), with one and with three threads. */
Test(graph_residual, last_value_never_shares_memory_with_what_the_chain_reads)
{
    const char *inis[2] = {"[backend.blas_cpu]\nthreads = 1\n",
                           "[backend.blas_cpu]\nthreads = 3\n"};
    for (int th = 0; th < 2; th++) {
        bp_backend *be = NULL;
        bp_context *ctx = bpt_context_ini(inis[th], "blas_cpu", &be);
        const int64_t xs[4] = {1, 32, 9, 9}, ws[4] = {32, 32, 1, 1}, w3[4] = {32, 32, 3, 3};
        const bp_window one = WIN(.groups = 0), three = WIN(.pads = {1, 1, 1, 1});
        cf_array xa = bpt_random_array(BP_F32, 4, xs, 71, -1, 1);
        cf_array w1a = bpt_random_array(BP_F32, 4, w3, 72, -1, 1);
        cf_array w2a = bpt_random_array(BP_F32, 4, ws, 73, -1, 1);
        cf_array w3a = bpt_random_array(BP_F32, 4, ws, 74, -1, 1);
        bp_tensor *x = bpt_tensor_of(be, &xa), *w1 = bpt_tensor_of(be, &w1a);
        bp_tensor *w2 = bpt_tensor_of(be, &w2a), *w3t = bpt_tensor_of(be, &w3a);
        bp_graph *g = NULL;
        bp_tensor *s[8] = {NULL};
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F32, 4, xs, &s[0]));
        BPT_OK(bp_neg(s[0], &s[1]));
        BPT_OK(bp_conv(s[1], w1, NULL, &three, &s[2]));
        BPT_OK(bp_relu(s[2], &s[3]));
        BPT_OK(bp_conv(s[3], w2, NULL, &one, &s[4]));
        BPT_OK(bp_add(s[4], s[1], &s[5]));
        BPT_OK(bp_relu(s[5], &s[6]));
        BPT_OK(bp_conv(s[6], w3t, NULL, &one, &s[7]));
        BPT_OK(bp_graph_output(g, s[7]));
        bp_graph_stats st, plain;
        bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
        bp_graph_exec *ref = bpt_graph_compile(g, false, &plain);
        cr_expect_eq(st.epilogues_fused, 2, "the first Relu and the add, relu chain: %lld",
                     (long long)st.epilogues_fused);
        cr_expect_eq(plain.epilogues_fused, 0);
        bp_tensor *want = NULL;
        BPT_OK(bp_graph_run(ref, 1, &x, 1, &want));
        for (int run = 0; run < 3; run++) {
            bp_tensor *got = NULL;
            BPT_OK(bp_graph_run(exe, 1, &x, 1, &got));
            cr_expect(bpt_same_bytes(got, want),
                      "threads %s, run %d: not the bits of the nodes run alone",
                      th ? "3" : "1", run);
            bp_tensor_release(got);
        }
        bp_tensor_release(want);
        bp_graph_exec_release(exe);
        bp_graph_exec_release(ref);
        bp_graph_release(g);
        for (int k = 0; k < 8; k++)
            bp_tensor_release(s[k]);
        bp_tensor *all[] = {x, w1, w2, w3t};
        for (size_t k = 0; k < 4; k++)
            bp_tensor_release(all[k]);
        cf_array_free(&xa);
        cf_array_free(&w1a);
        cf_array_free(&w2a);
        cf_array_free(&w3a);
        bp_context_destroy(ctx);
    }
}

/* The plan's text names the chain the convolution computes and marks its
 * nodes; the profile counts the three nodes as one step; the binary
 * backend (no prepare) chains nothing. */
Test(graph_residual, plan_text_and_profile_show_the_chain_as_one_step)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    bp_backend *bin = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &bin));
    const res_case *c = &cases[0];
    const tail t = {false, true};
    bp_backend *on[2] = {be, bin};
    for (int k = 0; k < 2; k++) {
        cf_array wa = bpt_random_array(BP_F32, 4, c->w, 81, -1, 1);
        bp_tensor *w = bpt_tensor_of(on[k], &wa);
        bp_tensor *in[2] = {values(on[k], BP_F32, c->x, 82), values(on[k], BP_F32, c->y, 83)};
        bp_graph_stats st;
        bp_graph_exec *exe = compile(on[k], c, w, NULL, &t, &st);
        const bool chained = k == 0;
        BPT_OK(bp_graph_exec_profile(exe, true));
        bp_tensor *got = NULL;
        BPT_OK(bp_graph_run(exe, 2, in, 1, &got));
        char text[4096];
        BPT_OK(bp_graph_exec_format(exe, text, sizeof text, NULL));
        cr_expect_eq(st.epilogues_fused, chained ? 1 : 0, "%s", bp_backend_name(on[k]));
        if (chained)
            cr_expect_eq(st.fused_groups, 0, "%s", bp_backend_name(on[k]));
        cr_expect_eq(strstr(text, "[prepared, with the add and relu after it]") != NULL,
                     chained, "%s", text);
        const char *mark = strstr(text, "[in the prepared node before]");
        cr_expect_eq(mark != NULL && strstr(mark + 1, "[in the prepared node before]") != NULL,
                     chained, "both nodes marked:\n%s", text);
        const int32_t n = bp_graph_exec_profile_count(exe);
        if (chained) {
            cr_expect_eq(n, 1, "one step:\n%s", text);
            bp_graph_step_time s = {.struct_size = sizeof s};
            BPT_OK(bp_graph_exec_profile_step(exe, 0, &s));
            cr_expect_eq(s.nodes, 3, "the step runs conv, add and relu: %d", (int)s.nodes);
        }
        bp_tensor_release(got);
        bp_graph_exec_release(exe);
        bp_tensor *all[] = {w, in[0], in[1]};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            bp_tensor_release(all[i]);
        cf_array_free(&wa);
    }
    bp_context_destroy(ctx);
}

/* Epilogues (plugin.h's prepare_epilogue; graph.h's
 * bp_graph_stats.epilogues_fused): a compiled plan's Relu right after a
 * prepared convolution, the only reader of its output, is computed by the
 * convolution as it stores (blas_cpu: its direct kernel's tiles, or each
 * GEMM tile while it is in the cache) and does not run. The result must be
 * the bits of the same plan's convolution followed by a Relu; a bind that
 * replaces the weights runs both nodes as recorded; a convolution whose
 * output anything else reads keeps its Relu; and the Relu's output, now
 * written one node earlier, never shares memory with what the convolution
 * reads.
 *
 * A plan's prepared convolution on the direct kernel is within the op's
 * tolerance of the eager one, not its bits (docs/graphs.md); which path a
 * 1x1 takes depends on the machine (an AVX-512 level against OpenBLAS
 * kernels of 256 bits or fewer: direct; bpt_blas_cpu_in_place_direct). So
 * the results here are compared with the same plan's convolution, and with
 * the eager op only where the convolution stays on the GEMM path. ctest's
 * graph_epilogue.openblas_prescott runs this suite on OpenBLAS's SSE
 * kernels, which sends the 1x1 cases direct on an AVX-512 machine. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect_nn.h"

#define WIN(...) ((bp_window){.struct_size = sizeof(bp_window), __VA_ARGS__})

typedef struct relu_case {
    const char *what;
    bp_dtype dt;
    int64_t x[4], w[4];
    bp_window win;
} relu_case;

/* conv(x, w, b) then relu, x an input, w and b captured; with_relu false:
 * the convolution alone. */
static bp_graph_exec *compile(bp_backend *be, const relu_case *c, bp_tensor *w, bp_tensor *b,
                              bool with_relu, bp_graph_stats *st)
{
    bp_graph *g = NULL;
    bp_tensor *sx = NULL, *sy = NULL, *sr = NULL;
    BPT_OK(bp_graph_create(be, &g));
    BPT_OK(bp_graph_input(g, c->dt, 4, c->x, &sx));
    BPT_OK(bp_conv(sx, w, b, &c->win, &sy));
    if (with_relu)
        BPT_OK(bp_relu(sy, &sr));
    BPT_OK(bp_graph_output(g, with_relu ? sr : sy));
    bp_graph_exec *exe = bpt_graph_compile(g, true, st);
    bp_tensor_release(sx);
    bp_tensor_release(sy);
    bp_tensor_release(sr);
    bp_graph_release(g);
    return exe;
}

/* x's values from seed, with a NaN at its first element (relu keeps NaN). */
static bp_tensor *input_with_nan(bp_backend *be, const relu_case *c, uint64_t seed)
{
    cf_array xa = bpt_random_array(c->dt, 4, c->x, seed, -1, 1);
    xa.f[0] = NAN;
    bp_tensor *x = bpt_tensor_of(be, &xa);
    cf_array_free(&xa);
    return x;
}

/* The direct kernel's 3x3 (where the CPU has fma; the GEMM path elsewhere),
 * a 1x1 on the GEMM path (OpenBLAS reading x in place, or the direct
 * kernel against narrower OpenBLAS kernels), a strided 3x3, a
 * kernel along one axis (one GEMM per tap) and f64 (the GEMM path), each
 * with filters and positions that cut tiles unevenly. */
static const relu_case cases[] = {
    {"3x3 pads 1", BP_F32, {1, 16, 13, 13}, {40, 16, 3, 3}, WIN(.pads = {1, 1, 1, 1})},
    {"1x1", BP_F32, {2, 48, 13, 13}, {70, 48, 1, 1}, WIN(.groups = 0)},
    {"3x3 stride 2", BP_F32, {1, 8, 23, 23}, {24, 8, 3, 3}, WIN(.strides = {2, 2})},
    {"1x5 pads 2 (one axis)", BP_F32, {1, 64, 1, 200}, {32, 64, 1, 5},
     WIN(.pads = {0, 2, 0, 2})},
    {"f64 3x3", BP_F64, {1, 6, 11, 11}, {20, 6, 3, 3}, WIN(.pads = {1, 1, 1, 1})},
};

Test(graph_epilogue, relu_after_a_prepared_convolution_runs_inside_it)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const relu_case *c = &cases[i];
        const int64_t m = c->w[0];
        cf_array wa = bpt_random_array(c->dt, 4, c->w, 12 + i, -1, 1);
        cf_array ba = bpt_random_array(c->dt, 1, &m, 13 + i, -1, 1);
        bp_tensor *w = bpt_tensor_of(be, &wa), *b = bpt_tensor_of(be, &ba);
        bp_tensor *x = input_with_nan(be, c, 11 + i);
        bp_graph_stats alone, fused;
        bp_graph_exec *conv = compile(be, c, w, b, false, &alone);
        bp_graph_exec *both = compile(be, c, w, b, true, &fused);
        cr_expect_eq(fused.epilogues_fused, 1, "%s: %lld epilogues", c->what,
                     (long long)fused.epilogues_fused);
        cr_expect_eq(fused.nodes_prepared, 1, "%s: the convolution prepared", c->what);
        cr_expect_eq(alone.epilogues_fused, 0, "%s: no Relu, no epilogue", c->what);
        bp_tensor *y = NULL, *want = NULL, *got = NULL;
        BPT_OK(bp_graph_run(conv, 1, &x, 1, &y));
        BPT_OK(bp_relu(y, &want));
        for (int run = 0; run < 2; run++) {
            BPT_OK(bp_graph_run(both, 1, &x, 1, &got));
            cr_expect(bpt_same_bytes(got, want), "%s, run %d: not the bits of conv then relu",
                      c->what, run);
            bp_tensor_release(got);
        }
        bp_graph_exec_release(conv);
        bp_graph_exec_release(both);
        bp_tensor *all[] = {w, b, x, y, want};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);
        cf_array_free(&wa);
        cf_array_free(&ba);
    }
    bp_context_destroy(ctx);
}

/* After bp_graph_exec_bind replaces the weights, the convolution runs
 * through the op entry and the Relu runs again: eager conv then relu, bit
 * for bit; the first weights bound back give the first result. */
Test(graph_epilogue, relu_runs_as_recorded_once_bind_replaces_the_weights)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    const relu_case *c = &cases[0];
    cf_array w1a = bpt_random_array(BP_F32, 4, c->w, 51, -1, 1);
    cf_array w2a = bpt_random_array(BP_F32, 4, c->w, 52, -1, 1);
    bp_tensor *w1 = bpt_tensor_of(be, &w1a), *w2 = bpt_tensor_of(be, &w2a);
    bp_tensor *x = input_with_nan(be, c, 53);
    bp_graph_stats st;
    bp_graph_exec *exe = compile(be, c, w1, NULL, true, &st);
    cr_expect_eq(st.epilogues_fused, 1);
    bp_tensor *first = NULL, *second = NULL, *again = NULL, *conv2 = NULL, *eager2 = NULL;
    BPT_OK(bp_graph_run(exe, 1, &x, 1, &first));
    BPT_OK(bp_graph_exec_bind(exe, w1, w2));
    BPT_OK(bp_graph_run(exe, 1, &x, 1, &second));
    BPT_OK(bp_conv(x, w2, NULL, &c->win, &conv2));
    BPT_OK(bp_relu(conv2, &eager2));
    cr_expect(bpt_same_bytes(second, eager2), "after the bind: eager conv then relu");
    BPT_OK(bp_graph_exec_bind(exe, w2, w1));
    BPT_OK(bp_graph_run(exe, 1, &x, 1, &again));
    cr_expect(bpt_same_bytes(again, first), "the first weights bound back: the first result");
    bp_tensor *all[] = {w1, w2, x, first, second, again, conv2, eager2};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        bp_tensor_release(all[k]);
    bp_graph_exec_release(exe);
    cf_array_free(&w1a);
    cf_array_free(&w2a);
    bp_context_destroy(ctx);
}

/* The convolution's output read by another node too, or an output of the
 * plan: it must be written, so the Relu stays a node of its own; the
 * results are the plan's convolution (compiled alone: the same path)
 * followed by the eager ops, and where the 1x1 stays on the GEMM path (not
 * prepared), the eager ones. */
Test(graph_epilogue, relu_over_a_convolution_read_elsewhere_is_not_fused)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    const relu_case *c = &cases[1];
    cf_array wa = bpt_random_array(BP_F32, 4, c->w, 61, -1, 1);
    bp_tensor *w = bpt_tensor_of(be, &wa), *x = input_with_nan(be, c, 62);
    bp_tensor *ey = NULL, *er = NULL, *es = NULL, *eager = NULL;
    bp_graph_stats alone;
    bp_graph_exec *conv = compile(be, c, w, NULL, false, &alone);
    BPT_OK(bp_graph_run(conv, 1, &x, 1, &ey));
    bp_graph_exec_release(conv);
    BPT_OK(bp_relu(ey, &er));
    BPT_OK(bp_add(ey, er, &es));
    BPT_OK(bp_conv(x, w, NULL, &c->win, &eager));
    const bool direct = bpt_blas_cpu_in_place_direct(be);
    cr_expect_eq(alone.nodes_prepared, direct ? 1 : 0, "the 1x1 alone: %lld prepared (%s)",
                 (long long)alone.nodes_prepared, direct ? "direct" : "on the GEMM");
    if (!direct)
        cr_expect(bpt_same_bytes(ey, eager), "the 1x1 on the GEMM path: not the eager bits");
    for (int shape = 0; shape < 2; shape++) { /* 0: y + relu(y); 1: y and relu(y) both out */
        bp_graph *g = NULL;
        bp_tensor *sx = NULL, *sy = NULL, *sr = NULL, *ss = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F32, 4, c->x, &sx));
        BPT_OK(bp_conv(sx, w, NULL, &c->win, &sy));
        BPT_OK(bp_relu(sy, &sr));
        if (shape == 0) {
            BPT_OK(bp_add(sy, sr, &ss));
            BPT_OK(bp_graph_output(g, ss));
        } else {
            BPT_OK(bp_graph_output(g, sy));
            BPT_OK(bp_graph_output(g, sr));
        }
        bp_graph_stats st;
        bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
        cr_expect_eq(st.epilogues_fused, 0, "shape %d: %lld epilogues", shape,
                     (long long)st.epilogues_fused);
        bp_tensor *out[2] = {NULL, NULL};
        BPT_OK(bp_graph_run(exe, 1, &x, shape == 0 ? 1 : 2, out));
        if (shape == 0)
            cr_expect(bpt_same_bytes(out[0], es), "y + relu(y) as the plan's y then eager ops");
        else
            cr_expect(bpt_same_bytes(out[0], ey) && bpt_same_bytes(out[1], er),
                      "y and relu(y) as the plan's y then eager ops");
        bp_tensor *all[] = {sx, sy, sr, ss, out[0], out[1]};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);
        bp_graph_exec_release(exe);
        bp_graph_release(g);
    }
    bp_tensor *all[] = {w, x, ey, er, es, eager};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        bp_tensor_release(all[k]);
    cf_array_free(&wa);
    bp_context_destroy(ctx);
}

/* neg(x) -> 1x1 conv (same size) -> relu -> 1x1 conv: the Relu's output is
 * the size of the first convolution's input, whose memory frees at that
 * convolution; written by the convolution itself, it must not take that
 * memory (the 1x1 GEMM reads its input in place while it writes). The
 * result is the bits of the same plan compiled without fusion (the same
 * kernels, each node alone), and where the 1x1 convolutions stay on the
 * GEMM path, the eager ops'. */
Test(graph_epilogue, relu_output_never_shares_memory_with_the_convolution_input)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    const int64_t xs[4] = {1, 32, 9, 9}, ws[4] = {32, 32, 1, 1};
    const bp_window win = WIN(.groups = 0);
    cf_array xa = bpt_random_array(BP_F32, 4, xs, 71, -1, 1);
    cf_array w1a = bpt_random_array(BP_F32, 4, ws, 72, -1, 1);
    cf_array w2a = bpt_random_array(BP_F32, 4, ws, 73, -1, 1);
    bp_tensor *x = bpt_tensor_of(be, &xa), *w1 = bpt_tensor_of(be, &w1a);
    bp_tensor *w2 = bpt_tensor_of(be, &w2a);
    bp_tensor *t[4] = {NULL, NULL, NULL, NULL}; /* eager: neg, conv, relu, conv */
    BPT_OK(bp_neg(x, &t[0]));
    BPT_OK(bp_conv(t[0], w1, NULL, &win, &t[1]));
    BPT_OK(bp_relu(t[1], &t[2]));
    BPT_OK(bp_conv(t[2], w2, NULL, &win, &t[3]));
    bp_graph *g = NULL;
    bp_tensor *s[5] = {NULL, NULL, NULL, NULL, NULL};
    BPT_OK(bp_graph_create(be, &g));
    BPT_OK(bp_graph_input(g, BP_F32, 4, xs, &s[0]));
    BPT_OK(bp_neg(s[0], &s[1]));
    BPT_OK(bp_conv(s[1], w1, NULL, &win, &s[2]));
    BPT_OK(bp_relu(s[2], &s[3]));
    BPT_OK(bp_conv(s[3], w2, NULL, &win, &s[4]));
    BPT_OK(bp_graph_output(g, s[4]));
    bp_graph_stats st, plain;
    bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
    bp_graph_exec *ref = bpt_graph_compile(g, false, &plain);
    cr_expect_eq(st.epilogues_fused, 1);
    cr_expect_eq(plain.epilogues_fused, 0);
    bp_tensor *got = NULL, *want = NULL;
    BPT_OK(bp_graph_run(exe, 1, &x, 1, &got));
    BPT_OK(bp_graph_run(ref, 1, &x, 1, &want));
    cr_expect(bpt_same_bytes(got, want), "the plan's result is not that of its nodes run alone");
    if (!bpt_blas_cpu_in_place_direct(be))
        cr_expect(bpt_same_bytes(got, t[3]), "the 1x1s on the GEMM path: not the eager result");
    bp_tensor_release(got);
    bp_tensor_release(want);
    bp_graph_exec_release(exe);
    bp_graph_exec_release(ref);
    bp_graph_release(g);
    for (int k = 0; k < 5; k++)
        bp_tensor_release(s[k]);
    for (int k = 0; k < 4; k++)
        bp_tensor_release(t[k]);
    bp_tensor *all[] = {x, w1, w2};
    for (size_t k = 0; k < 3; k++)
        bp_tensor_release(all[k]);
    cf_array_free(&xa);
    cf_array_free(&w1a);
    cf_array_free(&w2a);
    bp_context_destroy(ctx);
}

/* The plan's text says which node computes the Relu; other unary ops after
 * a convolution (sigmoid) and the binary backend (no prepare) fuse none. */
Test(graph_epilogue, plan_text_names_the_relu_a_convolution_computes)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    bp_backend *bin = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &bin));
    const relu_case *c = &cases[0];
    bp_backend *on[2] = {be, bin};
    for (int k = 0; k < 2; k++) {
        cf_array wa = bpt_random_array(BP_F32, 4, c->w, 81, -1, 1);
        bp_tensor *w = bpt_tensor_of(on[k], &wa);
        bp_graph_stats st;
        bp_graph_exec *exe = compile(on[k], c, w, NULL, true, &st);
        char text[4096];
        BPT_OK(bp_graph_exec_format(exe, text, sizeof text, NULL));
        const bool fused = k == 0;
        cr_expect_eq(st.epilogues_fused, fused ? 1 : 0, "%s", bp_backend_name(on[k]));
        cr_expect_eq(strstr(text, "[prepared, with the relu after it]") != NULL, fused, "%s",
                     text);
        cr_expect_eq(strstr(text, "[in the prepared node before]") != NULL, fused, "%s", text);
        bp_graph_exec_release(exe);
        /* sigmoid: not an epilogue blas_cpu takes; the convolution is
         * prepared alone where its kernel is */
        bp_graph *g = NULL;
        bp_tensor *sx = NULL, *sy = NULL, *sz = NULL;
        BPT_OK(bp_graph_create(on[k], &g));
        BPT_OK(bp_graph_input(g, BP_F32, 4, c->x, &sx));
        BPT_OK(bp_conv(sx, w, NULL, &c->win, &sy));
        BPT_OK(bp_sigmoid(sy, &sz));
        BPT_OK(bp_graph_output(g, sz));
        exe = bpt_graph_compile(g, true, &st);
        cr_expect_eq(st.epilogues_fused, 0, "sigmoid on %s", bp_backend_name(on[k]));
        bp_graph_exec_release(exe);
        bp_graph_release(g);
        bp_tensor *all[] = {w, sx, sy, sz};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            bp_tensor_release(all[i]);
        cf_array_free(&wa);
    }
    bp_context_destroy(ctx);
}

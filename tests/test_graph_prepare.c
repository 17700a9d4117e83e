/* Prepared nodes (plugin.h's prepare, prepared_op and prepared_free; graph.h's
 * bp_graph_stats.nodes_prepared): a compiled graph's node that reads
 * captured tensors lets its backend do the work that depends on them alone
 * once, at compile. blas_cpu reorders a convolution's constant weights for
 * its direct kernel (conv_direct.c), and keeps a depthwise 3x3 one's for
 * its f32 kernel (conv_depthwise.c), where its vector level has fma: those
 * plans must match the oracle as the eager op does, at every geometry the
 * kernels' blocks and lines cut unevenly; a bind that replaces the weights
 * must run the new ones; and what the kernels do not take is not
 * prepared. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlpack/dlpack.h>

#include "openblas_check.h"
#include "bpt.h"
#include "expect_nn.h"

#define WIN(...) ((bp_window){.struct_size = sizeof(bp_window), __VA_ARGS__})

typedef struct conv_case {
    const char *what;
    int32_t rank;
    int64_t x[5], w[5];
    bool bias;
    bp_window win;
} conv_case;

/* Whether blas_cpu's widest level here has the direct kernel (fma). */
static bool cpu_has_fma(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

/* Whether this CPU runs blas_cpu's AVX-512 level (x86-64-v4). */
static bool cpu_has_avx512(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return cpu_has_fma() && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd");
#else
    return false;
#endif
}

/* c's convolution recorded on be with x an input and the weights (and
 * bias) captured, compiled; *st its stats. */
static bp_graph_exec *compile_conv(bp_backend *be, const conv_case *c, bp_tensor *w,
                                   bp_tensor *b, bp_graph_stats *st)
{
    bp_graph *g = NULL;
    bp_tensor *sx = NULL, *sy = NULL;
    BPT_OK(bp_graph_create(be, &g));
    BPT_OK(bp_graph_input(g, BP_F32, c->rank, c->x, &sx));
    BPT_OK(bp_conv(sx, w, b, &c->win, &sy));
    BPT_OK(bp_graph_output(g, sy));
    bp_graph_exec *exe = bpt_graph_compile(g, true, st);
    bp_tensor_release(sx);
    bp_tensor_release(sy);
    bp_graph_release(g);
    return exe;
}

/* Each case through a plan on blas_cpu (of ini's configuration) against
 * the oracle; every one prepared exactly when `prepared`. */
/* prepared: whether each case is prepared; grouped: whether those of more
 * than one group are (they differ only for the pointwise cases on a device
 * whose grouped in-place convolutions stay on the GEMM) */
static void check_cases_grouped(const char *ini, const conv_case *cases, size_t n,
                                bool prepared, bool grouped)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini(ini, "blas_cpu", &be);
    for (size_t i = 0; i < n; i++) {
        const conv_case *c = &cases[i];
        const int64_t m = c->w[0];
        cf_array xa = bpt_random_array(BP_F32, c->rank, c->x, 21, -1, 1);
        cf_array wa = bpt_random_array(BP_F32, c->rank, c->w, 22, -1, 1);
        cf_array ba = bpt_random_array(BP_F32, 1, &m, 23, -1, 1);
        cf_array want;
        double *terms = NULL;
        int64_t k = 0;
        cr_assert(cf_oracle_conv(&xa, &wa, c->bias ? &ba : NULL, &c->win, &want, &terms, &k),
                  "oracle out of memory");
        bp_tensor *x = bpt_tensor_of(be, &xa), *w = bpt_tensor_of(be, &wa);
        bp_tensor *b = c->bias ? bpt_tensor_of(be, &ba) : NULL, *y = NULL;
        bp_graph_stats st;
        bp_graph_exec *exe = compile_conv(be, c, w, b, &st);
        const bool expect_prepared = c->win.groups > 1 ? grouped : prepared;
        cr_expect_eq(st.nodes_prepared, expect_prepared ? 1 : 0, "%s: %lld nodes prepared", c->what,
                     (long long)st.nodes_prepared);
        for (int run = 0; run < 2; run++) { /* the prepared weights serve every run */
            BPT_OK(bp_graph_run(exe, 1, &x, 1, &y));
            bpt_expect_norm(c->what, y, &want, terms, k, 2);
            bp_tensor_release(y);
        }
        bp_graph_exec_release(exe);
        bp_tensor_release(x);
        bp_tensor_release(w);
        bp_tensor_release(b);
        cf_array_free(&xa);
        cf_array_free(&wa);
        cf_array_free(&ba);
        cf_array_free(&want);
        free(terms);
    }
    bp_context_destroy(ctx);
}

static void check_cases(const char *ini, const conv_case *cases, size_t n, bool prepared)
{
    check_cases_grouped(ini, cases, n, prepared, prepared);
}

/* Filters not a multiple of 16 (a short last block), of 32 (a lone block
 * after pairs: AVX-512 takes two blocks at once), positions not a multiple
 * of the 12 of a run (nor of AVX2's 6), chunks of 240 positions and a
 * short one,
 * channels across the blocks of 128 (and of 32 over planes of 512 positions
 * or more), strides, dilations, asymmetric and no
 * padding, 1-D, 2-D and 3-D windows, two images, wide kernels over few
 * channels (a first layer), and runs of positions along one output row or
 * crossing into the next, at strides 1 and 2 (AVX-512's two-pointer block)
 * as well as across three rows (its pointer per position). */
static const conv_case cases[] = {
    {"3x3 pads 1, 17 filters, 2 images", 4, {2, 5, 9, 11}, {17, 5, 3, 3}, true,
     WIN(.pads = {1, 1, 1, 1})},
    {"strided, dilated, asymmetric pads", 4, {1, 3, 30, 29}, {20, 3, 3, 2}, true,
     WIN(.strides = {2, 3}, .pads = {1, 0, 2, 1}, .dilations = {2, 1})},
    {"1-D over 300 positions", 3, {2, 4, 300}, {8, 4, 5}, false, WIN(.pads = {2, 2})},
    {"3-D", 5, {1, 3, 6, 7, 5}, {5, 3, 2, 3, 2}, true, WIN(.pads = {1, 0, 1, 0, 1, 0})},
    {"130 channels (two blocks)", 4, {1, 130, 9, 9}, {16, 130, 3, 3}, true,
     WIN(.pads = {1, 1, 1, 1})},
    {"7x7 stride 2 over 3 channels", 4, {1, 3, 40, 40}, {32, 3, 7, 7}, true,
     WIN(.strides = {2, 2}, .pads = {3, 3, 3, 3})},
    {"no padding, no bias", 4, {1, 8, 12, 12}, {16, 8, 3, 3}, false, WIN(.groups = 0)},
    {"one filter over 4900 positions", 4, {1, 2, 70, 70}, {1, 2, 3, 3}, true,
     WIN(.pads = {1, 1, 1, 1})},
    {"40 filters (a pair of blocks and a short one)", 4, {1, 6, 7, 9}, {40, 6, 3, 3}, true,
     WIN(.pads = {1, 1, 1, 1})},
    {"rows of 30: runs along one row or across into the next", 4, {1, 7, 11, 30},
     {48, 7, 3, 3}, true, WIN(.pads = {1, 1, 1, 1})},
    {"45 channels over 24 x 24 (a wide plane: passes of fewer channels)", 4, {1, 45, 24, 24},
     {20, 45, 3, 3}, true, WIN(.pads = {1, 1, 1, 1})},
    /* depthwise 3x3 (one input channel per group): the plane as one line
     * at stride 1, rows at other strides */
    {"depthwise over 7 x 7 planes, 2 images", 4, {2, 24, 7, 7}, {24, 1, 3, 3}, true,
     WIN(.groups = 24, .pads = {1, 1, 1, 1})},
    {"depthwise stride 2 over 28 x 28", 4, {1, 12, 28, 28}, {12, 1, 3, 3}, true,
     WIN(.groups = 12, .strides = {2, 2}, .pads = {1, 1, 1, 1})},
    {"depthwise over 56 x 56, no bias", 4, {1, 3, 56, 56}, {3, 1, 3, 3}, false,
     WIN(.groups = 3, .pads = {1, 1, 1, 1})},
    {"depthwise dilated, asymmetric pads, strides (1, 3)", 4, {1, 5, 17, 23}, {5, 1, 3, 3},
     true, WIN(.groups = 5, .strides = {1, 3}, .pads = {2, 0, 1, 2}, .dilations = {2, 1})},
    {"depthwise, 2 filters a channel, stride (2, 1), no padding", 4, {1, 4, 13, 10},
     {8, 1, 3, 3}, true, WIN(.groups = 4, .strides = {2, 1})},
    {"depthwise, no padding", 4, {2, 6, 9, 12}, {6, 1, 3, 3}, false, WIN(.groups = 6)},
    /* groups of several channels: each block of filters within one group */
    {"3 groups of 40 filters (a pair of blocks and a short one), 2 images", 4, {2, 15, 9, 8},
     {120, 5, 3, 3}, true, WIN(.groups = 3, .pads = {1, 1, 1, 1})},
    {"2 groups of 9 filters, strided", 4, {1, 8, 13, 11}, {18, 4, 3, 3}, false,
     WIN(.groups = 2, .strides = {2, 2}, .pads = {0, 1, 1, 0})},
};

/* The first depthwise case of cases. */
#define DEPTHWISE_FIRST 11

Test(graph_prepare, conv_with_captured_weights_is_prepared_and_matches_the_oracle)
{
    check_cases("[backend.blas_cpu]\n", cases, sizeof cases / sizeof cases[0], cpu_has_fma());
}

Test(graph_prepare, conv_prepared_on_three_threads_matches_the_oracle)
{
    check_cases("[backend.blas_cpu]\nthreads = 3\n", cases, sizeof cases / sizeof cases[0],
                cpu_has_fma());
}

Test(graph_prepare, conv_prepared_on_the_avx2_level_matches_the_oracle)
{
    if (!cpu_has_fma())
        cr_skip_test("this CPU has no AVX2 and fma");
    check_cases("[backend.blas_cpu]\nsimd = avx2\n", cases, sizeof cases / sizeof cases[0], true);
}

/* The levels' kernels hold the filters and positions in registers of
 * different widths but add each output's products in the same order: the
 * same bits. */
Test(graph_prepare, conv_prepared_gives_the_same_bits_on_avx512_and_avx2)
{
    if (!cpu_has_avx512())
        cr_skip_test("this CPU does not run the AVX-512 level");
    bp_backend *wide = NULL, *narrow = NULL;
    bp_context *cw = bpt_context_ini("[backend.blas_cpu]\nsimd = avx512\n", "blas_cpu", &wide);
    bp_context *cn = bpt_context_ini("[backend.blas_cpu]\nsimd = avx2\n", "blas_cpu", &narrow);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const conv_case *c = &cases[i];
        const int64_t m = c->w[0];
        cf_array xa = bpt_random_array(BP_F32, c->rank, c->x, 51, -1, 1);
        cf_array wa = bpt_random_array(BP_F32, c->rank, c->w, 52, -1, 1);
        cf_array ba = bpt_random_array(BP_F32, 1, &m, 53, -1, 1);
        bp_tensor *y[2] = {NULL, NULL};
        bp_backend *on[2] = {wide, narrow};
        for (int l = 0; l < 2; l++) {
            bp_tensor *x = bpt_tensor_of(on[l], &xa), *w = bpt_tensor_of(on[l], &wa);
            bp_tensor *b = c->bias ? bpt_tensor_of(on[l], &ba) : NULL;
            bp_graph_stats st;
            bp_graph_exec *exe = compile_conv(on[l], c, w, b, &st);
            cr_expect_eq(st.nodes_prepared, 1, "%s: level %d prepared", c->what, l);
            BPT_OK(bp_graph_run(exe, 1, &x, 1, &y[l]));
            bp_graph_exec_release(exe);
            bp_tensor_release(x);
            bp_tensor_release(w);
            bp_tensor_release(b);
        }
        cr_expect(bpt_same_bytes(y[0], y[1]), "%s: AVX-512 and AVX2 differ", c->what);
        bp_tensor_release(y[0]);
        bp_tensor_release(y[1]);
        cf_array_free(&xa);
        cf_array_free(&wa);
        cf_array_free(&ba);
    }
    bp_context_destroy(cw);
    bp_context_destroy(cn);
}

/* The convolutions whose GEMM reads x in place (1x1 kernels, kernels along
 * one axis over many channels): direct where the level holds 16 filters in
 * a register (AVX-512) and OpenBLAS's kernels are 256-bit or narrower, on
 * the GEMM with AVX2 (OpenBLAS reads x in place faster than AVX2's block
 * does) and against OpenBLAS's AVX-512 kernels. Which kernels OpenBLAS runs is this
 * machine's (the test never sets OPENBLAS_CORETYPE; ctest's
 * graph_prepare.openblas_prescott runs it with SSE ones named): the
 * device's detail states them and the decision, and the two must agree. */
static const conv_case pointwise[] = {
    {"1x1, 40 filters", 4, {2, 24, 9, 11}, {40, 24, 1, 1}, true, WIN(.groups = 0)},
    {"1x1 stride 2", 4, {1, 20, 14, 13}, {33, 20, 1, 1}, false, WIN(.strides = {2, 2})},
    {"1x1, 4 groups of 28 filters over 16 channels", 4, {1, 64, 14, 14}, {112, 16, 1, 1}, true,
     WIN(.groups = 4)},
    {"5 taps along one axis over 64 channels", 3, {1, 64, 100}, {8, 64, 5}, false,
     WIN(.pads = {2, 2})},
    {"5 x 1 taps over 80 channels and 70 positions, 2 images (magika's form)", 4,
     {2, 80, 70, 1}, {20, 80, 5, 1}, true, WIN(.pads = {2, 0, 2, 0})},
};

/* The device's detail for INI: OpenBLAS's core name ("OpenBLAS kernels
 * NAME", into core), whether it runs the convolutions above direct, and
 * (grouped, may be NULL) whether those of more than one group too. */
static bool detail_in_place_direct_grouped(const char *ini, char *core, size_t cap,
                                           bool *grouped)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini(ini, "blas_cpu", &be);
    bp_device_info info = {.struct_size = sizeof info};
    BPT_OK(bp_backend_device_info(be, &info));
    const char *k = strstr(info.detail, "OpenBLAS kernels ");
    cr_assert(k, "no kernels in the detail: %s", info.detail);
    k += strlen("OpenBLAS kernels ");
    snprintf(core, cap, "%.*s", (int)strcspn(k, " ,;("), k);
    const bool direct = strstr(info.detail, "1x1 and one-axis convolutions: direct") != NULL;
    cr_assert(direct || strstr(info.detail, "1x1 and one-axis convolutions: OpenBLAS"),
              "the detail does not say where 1x1 and one-axis convolutions run: %s",
              info.detail);
    if (grouped)
        *grouped = direct && !strstr(info.detail, "(grouped ones: OpenBLAS)");
    bp_context_destroy(ctx);
    return direct;
}

static bool detail_in_place_direct(const char *ini, char *core, size_t cap)
{
    return detail_in_place_direct_grouped(ini, core, cap, NULL);
}

Test(graph_prepare, conv_in_place_is_prepared_where_the_auto_rule_says)
{
    if (!cpu_has_fma())
        cr_skip_test("this CPU has no AVX2 and fma");
    char core[64];
    if (cpu_has_avx512()) {
        const char *ini = "[backend.blas_cpu]\nsimd = avx512\n";
        bool grouped;
        const bool direct = detail_in_place_direct_grouped(ini, core, sizeof core, &grouped);
        bpc_cpu_features cpu;
        bpc_cpu_probe(&cpu);
        cr_expect_eq(direct, bpc_in_place_direct_auto(true, bpc_isa_of_core(core), &cpu),
                     "OpenBLAS kernels %s, CPU family 0x%x: 1x1 %s", core, (unsigned)cpu.family,
                     direct ? "direct" : "on the GEMM");
        cr_expect_eq(grouped, bpc_in_place_grouped_direct_auto(true, bpc_isa_of_core(core)),
                     "OpenBLAS kernels %s: grouped 1x1 %s", core,
                     grouped ? "direct" : "on the GEMM");
        check_cases_grouped(ini, pointwise, sizeof pointwise / sizeof pointwise[0], direct,
                            grouped);
    }
    const char *ini = "[backend.blas_cpu]\nsimd = avx2\n";
    cr_expect_not(detail_in_place_direct(ini, core, sizeof core), "AVX2 level, kernels %s", core);
    check_cases(ini, pointwise, sizeof pointwise / sizeof pointwise[0], false);
}

/* conv_in_place = direct or openblas takes that path whatever the rule
 * says (the detail names the key), each within the oracle's tolerance;
 * direct without the avx512 level is refused naming the key */
Test(graph_prepare, conv_in_place_key_chooses_either_path)
{
    if (!cpu_has_avx512())
        cr_skip_test("this CPU has no AVX-512: only the GEMM path exists");
    char core[64];
    const char *direct = "[backend.blas_cpu]\nsimd = avx512\nconv_in_place = direct\n";
    const char *gemm = "[backend.blas_cpu]\nsimd = avx512\nconv_in_place = openblas\n";
    bool grouped;
    cr_expect(detail_in_place_direct_grouped(direct, core, sizeof core, &grouped),
              "conv_in_place = direct");
    cr_expect(grouped, "conv_in_place = direct: grouped ones direct too");
    check_cases(direct, pointwise, sizeof pointwise / sizeof pointwise[0], true);
    cr_expect_not(detail_in_place_direct(gemm, core, sizeof core), "conv_in_place = openblas");
    check_cases(gemm, pointwise, sizeof pointwise / sizeof pointwise[0], false);
    bp_context *ctx = NULL;
    bp_backend *be = NULL;
    char path[] = "/tmp/bpt_ini_XXXXXX";
    const int fd = mkstemp(path);
    cr_assert_geq(fd, 0, "mkstemp failed");
    const char *bad = "[backend.blas_cpu]\nsimd = avx2\nconv_in_place = direct\n";
    cr_assert_eq(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
    close(fd);
    BPT_OK(bp_context_create(path, &ctx));
    unlink(path);
    const bp_status st = bp_backend_get(ctx, "blas_cpu", &be);
    cr_expect_eq(st, BP_ERR_CONFIG, "simd = avx2 with conv_in_place = direct: %s",
                 bp_status_string(st));
    cr_expect(strstr(bp_last_error(), "conv_in_place") && strstr(bp_last_error(), "avx512"),
              "the error names the key and the level: %s", bp_last_error());
    bp_context_destroy(ctx);
}

Test(graph_prepare, baseline_vector_level_prepares_nothing_and_still_matches_the_oracle)
{
    check_cases("[backend.blas_cpu]\nsimd = baseline\n", cases, 2, false);
    check_cases("[backend.blas_cpu]\nsimd = baseline\n", cases + DEPTHWISE_FIRST, 2, false);
}

/* A depthwise 3x3 convolution whose weights hold an infinity or a NaN is
 * not prepared: the f32 kernel computes the padding's taps (0 w, NaN for an
 * infinite w) where the eager op skips them. The plan then gives the eager
 * op's bits. */
Test(graph_prepare, depthwise_with_a_non_finite_weight_is_not_prepared)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    const conv_case *c = &cases[DEPTHWISE_FIRST];
    cr_assert(c->win.groups == c->x[1] && c->w[1] == 1, "cases[DEPTHWISE_FIRST] is depthwise");
    const double bad[] = {INFINITY, -INFINITY, NAN};
    for (int i = 0; i < 3; i++) {
        cf_array xa = bpt_random_array(BP_F32, c->rank, c->x, 31, -1, 1);
        cf_array wa = bpt_random_array(BP_F32, c->rank, c->w, 32, -1, 1);
        wa.f[9 * 5] = bad[i]; /* filter 5's first tap: in the padding at the top row */
        bp_tensor *x = bpt_tensor_of(be, &xa), *w = bpt_tensor_of(be, &wa);
        bp_tensor *eager = NULL, *y = NULL;
        BPT_OK(bp_conv(x, w, NULL, &c->win, &eager));
        bp_graph_stats st;
        bp_graph_exec *exe = compile_conv(be, c, w, NULL, &st);
        cr_expect_eq(st.nodes_prepared, 0, "weight %g: prepared", bad[i]);
        BPT_OK(bp_graph_run(exe, 1, &x, 1, &y));
        cr_expect(bpt_same_bytes(y, eager), "weight %g: the plan is not the eager op's bits",
                  bad[i]);
        bp_graph_exec_release(exe);
        bp_tensor *all[] = {x, w, eager, y};
        for (int k = 0; k < 4; k++)
            bp_tensor_release(all[k]);
        cf_array_free(&xa);
        cf_array_free(&wa);
    }
    bp_context_destroy(ctx);
}

/* What the direct kernel does not take runs as before, unprepared: groups
 * of a quarter of a block of filters, groups of fewer than 16 products per
 * output, f64, weights that are an input of the graph rather than
 * captured, and the binary backend, which has no prepare. */
Test(graph_prepare, conv_the_direct_kernel_does_not_take_is_not_prepared)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    bp_backend *bin = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &bin));
    const conv_case grouped = {"groups of 4 filters (a quarter of a block)", 4, {1, 8, 10, 10},
                               {8, 4, 3, 3}, false, WIN(.groups = 2)};
    const conv_case plain = {"3x3", 4, {1, 8, 10, 10}, {16, 8, 3, 3}, false, WIN(.groups = 0)};
    const conv_case few = {"1x1 over groups of 6 channels (6 products an output)", 4,
                           {1, 24, 14, 14}, {112, 6, 1, 1}, false, WIN(.groups = 4)};
    const conv_case *c[] = {&grouped, &few, &plain};
    bp_backend *on[] = {be, be, bin};
    for (int i = 0; i < 3; i++) {
        cf_array wa = bpt_random_array(BP_F32, c[i]->rank, c[i]->w, 5, -1, 1);
        bp_tensor *w = bpt_tensor_of(on[i], &wa);
        bp_graph_stats st;
        bp_graph_exec *exe = compile_conv(on[i], c[i], w, NULL, &st);
        cr_expect_eq(st.nodes_prepared, 0, "%s on %s", c[i]->what, bp_backend_name(on[i]));
        bp_graph_exec_release(exe);
        bp_tensor_release(w);
        cf_array_free(&wa);
    }
    /* f64 */
    {
        cf_array wa = bpt_random_array(BP_F64, 4, plain.w, 5, -1, 1);
        bp_tensor *w = bpt_tensor_of(be, &wa), *sx = NULL, *sy = NULL;
        bp_graph *g = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F64, 4, plain.x, &sx));
        BPT_OK(bp_conv(sx, w, NULL, &plain.win, &sy));
        BPT_OK(bp_graph_output(g, sy));
        bp_graph_stats st;
        bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
        cr_expect_eq(st.nodes_prepared, 0, "f64");
        bp_graph_exec_release(exe);
        bp_tensor *all[] = {w, sx, sy};
        for (int k = 0; k < 3; k++)
            bp_tensor_release(all[k]);
        bp_graph_release(g);
        cf_array_free(&wa);
    }
    /* weights as an input of the graph: nothing constant to prepare */
    {
        bp_graph *g = NULL;
        bp_tensor *sx = NULL, *sw = NULL, *sy = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F32, 4, plain.x, &sx));
        BPT_OK(bp_graph_input(g, BP_F32, 4, plain.w, &sw));
        BPT_OK(bp_conv(sx, sw, NULL, &plain.win, &sy));
        BPT_OK(bp_graph_output(g, sy));
        bp_graph_stats st;
        bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
        cr_expect_eq(st.nodes_prepared, 0, "weights as an input");
        bp_graph_exec_release(exe);
        bp_tensor *all[] = {sx, sw, sy};
        for (int k = 0; k < 3; k++)
            bp_tensor_release(all[k]);
        bp_graph_release(g);
    }
    bp_context_destroy(ctx);
}

/* bp_graph_exec_bind replacing the weights of a prepared node: the runs
 * after it compute with the new weights (through the op entry: the eager
 * op's bits), and binding the first weights back runs the prepared ones
 * again (their result as before, bit for bit). */
Test(graph_prepare, bind_replacing_prepared_weights_runs_the_new_weights)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    const conv_case c = {"3x3", 4, {1, 6, 12, 12}, {20, 6, 3, 3}, true,
                         WIN(.pads = {1, 1, 1, 1})};
    const int64_t m = c.w[0];
    cf_array xa = bpt_random_array(BP_F32, 4, c.x, 31, -1, 1);
    cf_array w1a = bpt_random_array(BP_F32, 4, c.w, 32, -1, 1);
    cf_array w2a = bpt_random_array(BP_F32, 4, c.w, 33, -1, 1);
    cf_array ba = bpt_random_array(BP_F32, 1, &m, 34, -1, 1);
    bp_tensor *x = bpt_tensor_of(be, &xa), *w1 = bpt_tensor_of(be, &w1a);
    bp_tensor *w2 = bpt_tensor_of(be, &w2a), *b = bpt_tensor_of(be, &ba);
    bp_graph_stats st;
    bp_graph_exec *exe = compile_conv(be, &c, w1, b, &st);
    bp_tensor *first = NULL, *second = NULL, *again = NULL, *eager2 = NULL;
    BPT_OK(bp_graph_run(exe, 1, &x, 1, &first));
    BPT_OK(bp_graph_exec_bind(exe, w1, w2));
    BPT_OK(bp_graph_run(exe, 1, &x, 1, &second));
    BPT_OK(bp_conv(x, w2, b, &c.win, &eager2));
    cr_expect(bpt_same_bytes(second, eager2), "after the bind: the new weights, as eager");
    cr_expect(!bpt_same_bytes(second, first), "after the bind: not the old weights' result");
    BPT_OK(bp_graph_exec_bind(exe, w2, w1));
    BPT_OK(bp_graph_run(exe, 1, &x, 1, &again));
    cr_expect(bpt_same_bytes(again, first), "the first weights bound back: the first result");
    bp_tensor *all[] = {x, w1, w2, b, first, second, again, eager2};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        bp_tensor_release(all[k]);
    bp_graph_exec_release(exe);
    cf_array *arrays[] = {&xa, &w1a, &w2a, &ba};
    for (size_t k = 0; k < 4; k++)
        cf_array_free(arrays[k]);
    bp_context_destroy(ctx);
}

/* Weights over memory another library may write are no constant: lent out
 * (DLPack) after the plan compiled, the prepared node goes back to the op
 * entry and reads what the other library wrote; taken from another library
 * before compiling, the node is not prepared at all. */
Test(graph_prepare, weights_lent_to_another_library_are_read_at_every_run)
{
    bp_backend *be = NULL;
    bp_context *ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &be);
    const conv_case c = {"3x3", 4, {1, 4, 10, 10}, {16, 4, 3, 3}, false,
                         WIN(.pads = {1, 1, 1, 1})};
    cf_array xa = bpt_random_array(BP_F32, 4, c.x, 41, -1, 1);
    cf_array wa = bpt_random_array(BP_F32, 4, c.w, 42, -1, 1);
    bp_tensor *x = bpt_tensor_of(be, &xa), *w = bpt_tensor_of(be, &wa);
    bp_graph_stats st;
    bp_graph_exec *exe = compile_conv(be, &c, w, NULL, &st);
    cr_expect_eq(st.nodes_prepared, cpu_has_fma() ? 1 : 0);
    struct DLManagedTensor *lent = NULL;
    BPT_OK(bp_tensor_to_dlpack(w, &lent));
    float *mem = (float *)((char *)lent->dl_tensor.data + lent->dl_tensor.byte_offset);
    for (int64_t i = 0; i < 16 * 4 * 9; i++) /* the other library writes the weights */
        mem[i] = 0.5f * mem[i] + 0.25f;
    bp_tensor *got = NULL, *want = NULL;
    BPT_OK(bp_graph_run(exe, 1, &x, 1, &got));
    BPT_OK(bp_conv(x, w, NULL, &c.win, &want));
    cr_expect(bpt_same_bytes(got, want), "the plan read the weights as written, as eager does");
    bp_tensor_release(got);
    bp_graph_exec_release(exe);
    /* compiled with the weights already lent: nothing prepared */
    exe = compile_conv(be, &c, w, NULL, &st);
    cr_expect_eq(st.nodes_prepared, 0, "weights lent out before compiling");
    bp_graph_exec_release(exe);
    lent->deleter(lent);
    bp_tensor_release(want);
    bp_tensor_release(x);
    bp_tensor_release(w);
    cf_array_free(&xa);
    cf_array_free(&wa);
    bp_context_destroy(ctx);
}

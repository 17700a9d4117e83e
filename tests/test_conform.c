/* libbackplane_conform's API (<backplane/conform.h>) as a plugin author's
 * test runner uses it, and a few facts of the shared oracle the op suites
 * rely on. The whole suite against every backend is ctest's conformance.*
 * entries; here a few ops keep it quick. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <backplane/conform.h>

#include "bpt.h"
#include "expect.h"

static bp_conform_options only(const char *const *ops, size_t n)
{
    bp_conform_options o = {.struct_size = sizeof o, .ops = ops, .n_ops = n};
    return o;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

Test(conform, run_on_the_binary_backend_passes_and_counts_its_cases)
{
    const char *ops[] = {"neg"};
    bp_conform_options o = only(ops, 1);
    size_t n = 0;
    BPT_OK(bp_conform_list(&o, NULL, &n));
    bp_conform_results *res = NULL;
    BPT_OK(bp_conform_run("binary", &o, &res));
    bp_conform_totals t = {.struct_size = sizeof t};
    BPT_OK(bp_conform_get_totals(res, &t));
    cr_expect_str_eq(t.backend, "binary:0");
    cr_expect_eq(t.failed + t.crashed, 0, "%zu failed, %zu crashed", t.failed, t.crashed);
    cr_expect_eq(t.passed + t.unsupported, n, "every listed case ran: %zu + %zu of %zu", t.passed,
                 t.unsupported, n);
    bp_conform_free(res);
}

/* The index ops whose values the core checks on the host (binary,
 * blas_cpu) record like every other op, their values checked when the
 * plan runs: graph mode passes every case that passes eagerly. */
Test(conform, graph_mode_passes_what_eager_passes_gathers_scatters_and_losses_included)
{
    const char *ops[] = {"layer_norm", "gather", "scatter_elements", "softmax_cross_entropy_loss"};
    const char *backends[] = {"binary", "blas_cpu"};
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
        bp_conform_options o = only(ops, sizeof ops / sizeof ops[0]);
        bp_conform_results *eager = NULL, *res = NULL;
        bp_status st = bp_conform_run(backends[b], &o, &eager);
        if (st != BP_OK && b > 0)
            continue; /* blas_cpu is built only where OpenBLAS is */
        BPT_OK(st);
        bp_conform_totals te = {.struct_size = sizeof te}, t = {.struct_size = sizeof t};
        BPT_OK(bp_conform_get_totals(eager, &te));
        o.graph = true;
        BPT_OK(bp_conform_run(backends[b], &o, &res));
        BPT_OK(bp_conform_get_totals(res, &t));
        cr_expect_eq(t.failed + t.crashed, 0, "on %s: %zu failed, %zu crashed", backends[b],
                     t.failed, t.crashed);
        cr_expect_gt(t.passed, 0);
        cr_expect_eq(t.passed, te.passed, "on %s: %zu cases passed in graph mode, %zu eagerly",
                     backends[b], t.passed, te.passed);
        cr_expect_eq(t.unsupported, te.unsupported, "on %s: %zu unsupported in graph mode, %zu "
                     "eagerly", backends[b], t.unsupported, te.unsupported);
        bp_conform_free(eager);
        bp_conform_free(res);
    }
}

Test(conform, an_unknown_backend_is_an_error_that_names_it)
{
    const char *ops[] = {"neg"};
    bp_conform_options o = only(ops, 1);
    bp_conform_results *res = NULL;
    cr_expect_neq(bp_conform_run("nosuch", &o, &res), BP_OK);
    cr_expect_null(res, "no results when the backend did not open");
    cr_expect(strstr(bp_conform_last_error(), "cannot open backend nosuch") != NULL, "%s",
              bp_conform_last_error());
}

Test(conform, a_device_that_is_not_here_is_a_skip)
{
    const char *ops[] = {"neg"};
    bp_conform_options o = only(ops, 1);
    bp_conform_results *res = NULL;
    BPT_FAILS(BP_ERR_UNSUPPORTED_DEVICE, bp_conform_run("binary:7", &o, &res));
    cr_expect(strstr(bp_conform_last_error(), "not available here") != NULL, "%s",
              bp_conform_last_error());
}

Test(conform, options_without_struct_size_are_refused)
{
    bp_conform_options o;
    memset(&o, 0, sizeof o);
    size_t n;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_conform_list(&o, NULL, &n));
    cr_expect(strstr(bp_conform_last_error(), "struct_size") != NULL);
}

Test(conform, options_from_an_older_header_keep_the_defaults)
{
    /* a caller whose struct ends before `progress`: the library reads no further */
    bp_conform_options o = {.struct_size = offsetof(bp_conform_options, progress)};
    size_t all = 0;
    BPT_OK(bp_conform_list(&o, NULL, &all));
    BPT_OK(bp_conform_list(NULL, NULL, &all)); /* NULL options: every case */
    cr_expect_gt(all, 4000);
}

Test(conform, patterns_select_by_name_and_nothing_is_not_an_error_to_list)
{
    const char *ops[] = {"log*"}, *none[] = {"nosuch"};
    bp_conform_options o = only(ops, 1), z = only(none, 1);
    size_t n = 0, zero = 1;
    BPT_OK(bp_conform_list(&o, NULL, &n));
    BPT_OK(bp_conform_list(&z, NULL, &zero));
    cr_expect_gt(n, 0);
    cr_expect_eq(zero, 0);
    bp_conform_results *res = NULL;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_conform_run("binary", &z, &res));
}

Test(conform, a_bad_tolerance_file_is_named_with_its_line)
{
    char path[] = "/tmp/bpt_tolXXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char text[] = "# fine\nadd f32 ulp 1\n";
    cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    bp_conform_options o = {.struct_size = sizeof o, .tolerances = path};
    BPT_FAILS(BP_ERR_FORMAT, bp_conform_list(&o, NULL, NULL));
    char want[64];
    snprintf(want, sizeof want, "%s:2: no reason", path);
    cr_expect(strstr(bp_conform_last_error(), want) != NULL, "%s", bp_conform_last_error());
    unlink(path);
    o.tolerances = "/nonexistent/tolerances.txt";
    BPT_FAILS(BP_ERR_IO, bp_conform_list(&o, NULL, NULL));
}

Test(conform, json_lines_merge_into_the_matrix_of_several_runs)
{
    const char *ops[] = {"neg", "contract.abi"};
    bp_conform_options o = only(ops, 2);
    bp_conform_results *res = NULL;
    BPT_OK(bp_conform_run("binary", &o, &res));
    char json[] = "/tmp/bpt_jsonXXXXXX", md[] = "/tmp/bpt_mdXXXXXX";
    int fj = mkstemp(json), fm = mkstemp(md);
    cr_assert(fj >= 0 && fm >= 0);
    close(fj);
    close(fm);
    BPT_OK(bp_conform_write_json(res, json));
    bp_conform_free(res);
    const char *text = slurp(json);
    const char head[] = "{\"backend\":\"binary:0\",\"plugin_version\":";
    cr_expect(strncmp(text, head, sizeof head - 1) == 0, "%.80s", text);
    const char *files[] = {json, json};
    BPT_OK(bp_conform_merge_matrix(files, 2, md));
    text = slurp(md);
    cr_expect(strstr(text, "| neg | binary:0 |  | pass | pass |") != NULL, "%s", text);
    cr_expect(strstr(text, "| contract.abi | binary:0 |") != NULL);
    const char *missing[] = {"/nonexistent/x.json"};
    BPT_FAILS(BP_ERR_IO, bp_conform_merge_matrix(missing, 1, md));
    cr_expect(strstr(bp_conform_last_error(), "cannot read /nonexistent/x.json") != NULL);
    unlink(json);
    unlink(md);
}

Test(conform, totals_respect_the_callers_struct_size)
{
    const char *ops[] = {"contract.abi"};
    bp_conform_options o = only(ops, 1);
    bp_conform_results *res = NULL;
    BPT_OK(bp_conform_run("binary", &o, &res));
    bp_conform_totals t;
    memset(&t, 0xAB, sizeof t);
    t.struct_size = offsetof(bp_conform_totals, backend); /* counts only */
    BPT_OK(bp_conform_get_totals(res, &t));
    cr_expect_eq(t.passed, 1);
    unsigned char tail[sizeof t - offsetof(bp_conform_totals, backend)];
    memset(tail, 0xAB, sizeof tail);
    cr_expect(memcmp((char *)&t + offsetof(bp_conform_totals, backend), tail, sizeof tail) == 0,
              "wrote past the caller's struct_size");
    t.struct_size = 4;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_conform_get_totals(res, &t));
    bp_conform_free(res);
}

/* ---- the shared oracle ---------------------------------------------------------- */

Test(conform, the_oracle_slices_like_onnx_at_the_edges)
{
    /* a backward start before the front clamps to index 0; an empty axis
     * stays empty */
    int64_t n = 5, zero = 0;
    cf_array x = bpt_array(BP_I32, 1, &n, (double[]){10, 11, 12, 13, 14});
    cf_array e = bpt_array(BP_I32, 1, &zero, NULL), w;
    cr_assert(cf_oracle_slice(&x, (int64_t[]){-100}, (int64_t[]){INT64_MIN}, (int64_t[]){-1}, &w));
    cr_expect_eq(w.n, 1);
    cr_expect_eq(w.i[0], 10);
    cf_array_free(&w);
    cr_assert(cf_oracle_slice(&e, (int64_t[]){0}, NULL, (int64_t[]){-1}, &w));
    cr_expect_eq(w.n, 0);
    cf_array_free(&w);
    cf_array_free(&x);
    cf_array_free(&e);
}

Test(conform, the_oracle_wraps_integers_and_keeps_float_nan)
{
    cr_expect_eq(cf_binary_i(BP_OP_DIV, BP_I32, INT32_MIN, -1), INT32_MIN);
    cr_expect_eq(cf_binary_i(BP_OP_MOD, BP_I8, -7, 3), 2);
    cr_expect_eq(cf_unary_i(BP_OP_ABS, BP_I8, -128), -128);
    cr_expect(isnan(cf_binary_f(BP_OP_MAXIMUM, NAN, 1)));
    cr_expect_eq(cf_elementwise_dtype(BP_OP_LT, BP_F16), BP_BOOL);
}

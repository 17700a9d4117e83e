#include "bpt.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bp_context *bpt_context(void)
{
    bp_context *ctx = NULL;
    bp_status st = bp_context_create(NULL, &ctx);
    cr_assert_eq(st, BP_OK, "bp_context_create: %s: %s", bp_status_string(st), bp_last_error());
    cr_assert_not_null(ctx);
    return ctx;
}

bp_context *bpt_context_ini(const char *ini, const char *name, bp_backend **be)
{
    char path[] = "/tmp/bpt_ini_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0, "mkstemp failed");
    const size_t n = strlen(ini);
    cr_assert_eq(write(fd, ini, n), (ssize_t)n, "writing %s failed", path);
    /* BPT_BLAS_CPU_KEY ("conv_in_place = openblas"): one more blas_cpu key for
     * every context of the run (ctest's *.conv_in_place_openblas entries) */
    const char *key = getenv("BPT_BLAS_CPU_KEY");
    if (key && *key) {
        char extra[256];
        const int m = snprintf(extra, sizeof extra, "\n[backend.blas_cpu]\n%s\n", key);
        cr_assert(m > 0 && (size_t)m < sizeof extra, "BPT_BLAS_CPU_KEY is too long");
        cr_assert_eq(write(fd, extra, (size_t)m), (ssize_t)m, "writing %s failed", path);
    }
    close(fd);
    bp_context *ctx = NULL;
    bp_status st = bp_context_create(path, &ctx);
    unlink(path);
    cr_assert_eq(st, BP_OK, "bp_context_create: %s: %s", bp_status_string(st), bp_last_error());
    const bp_status got = bp_backend_get(ctx, name, be);
    if (got == BP_ERR_CONFIG) { /* the test's own configuration: a failure, never a skip */
        char why[512];
        snprintf(why, sizeof why, "%s", bp_last_error());
        bp_context_destroy(ctx);
        cr_assert_fail("the %s backend refused the test's configuration: %s", name, why);
    }
    if (got != BP_OK) {
        bp_context_destroy(ctx);
        cr_skip_test("the %s backend is not available here", name);
    }
    return ctx;
}

size_t bpt_backends(bp_context *ctx, bp_backend **out, size_t max)
{
    size_t n = 0, count = bp_context_plugin_count(ctx);
    for (size_t i = 0; i < count && n < max; i++) {
        bp_plugin_record rec = {.struct_size = sizeof rec};
        if (bp_context_plugin(ctx, i, &rec) != BP_OK || (rec.load_tried && !rec.loaded))
            continue;
        bp_backend *be = NULL;
        if (bp_backend_get(ctx, rec.name, &be) == BP_OK)
            out[n++] = be;
    }
    /* the device-like test backend, which no plugin directory holds */
    bp_backend *sim = NULL;
    if (n < max && bp_backend_get(ctx, BPT_DEVSIM_PATH, &sim) == BP_OK) {
        bool seen = false;
        for (size_t i = 0; i < n; i++)
            seen = seen || out[i] == sim;
        if (!seen)
            out[n++] = sim;
    }
    return n;
}

bp_graph_exec *bpt_graph_compile(bp_graph *g, bool fuse, bp_graph_stats *st)
{
    bp_graph_options o = BP_GRAPH_OPTIONS_INIT;
    o.no_fuse = !fuse;
    bp_graph_exec *exe = NULL;
    BPT_OK(bp_graph_compile(g, &o, &exe));
    st->struct_size = sizeof *st;
    BPT_OK(bp_graph_exec_stats(exe, st));
    return exe;
}

bool bpt_blas_cpu_in_place_direct(bp_backend *be)
{
    bp_device_info info = {.struct_size = sizeof info};
    BPT_OK(bp_backend_device_info(be, &info));
    const bool direct = strstr(info.detail, "1x1 and one-axis convolutions: direct") != NULL;
    cr_assert(direct || strstr(info.detail, "1x1 and one-axis convolutions: OpenBLAS"),
              "the detail does not say where 1x1 and one-axis convolutions run: %s",
              info.detail);
    return direct;
}

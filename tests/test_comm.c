/* Communicators in one process: the checks of bp_comm_create, the [comm]
 * section of the configuration, the nccl engine's failures on a machine
 * without NCCL or a GPU, and a job of one process. The collectives across
 * processes run under mpirun (tests/comm/collectives.c). */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpt.h"

#include <backplane/comm_engine.h>

#define ENGINE_DIR BPT_BUILD_PLUGIN_DIR
#define MPI_ENGINE ENGINE_DIR "/comm_mpi.so"
#define NCCL_ENGINE ENGINE_DIR "/comm_nccl.so"

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static bp_backend *binary(bp_context *ctx)
{
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    return be;
}

/* ---- bp_comm_create's checks -------------------------------------------------- */

Test(comm, create_refuses_null_arguments)
{
    bp_context *ctx = bpt_context();
    bp_comm *c = (bp_comm *)&c;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_comm_create(NULL, NULL, &c));
    cr_assert_null(c, "a failed create leaves *out NULL");
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_comm_create(binary(ctx), NULL, NULL));
    cr_assert_eq(bp_comm_rank(NULL), -1);
    cr_assert_eq(bp_comm_size(NULL), -1);
    bp_comm_destroy(NULL);
    bp_context_destroy(ctx);
}

Test(comm, create_refuses_a_graphs_recording_backend)
{
    /* found by fuzz_comm: a communicator for the backend of a symbolic
     * tensor was made (with the default options, MPI was initialised for
     * it), though none of its collectives could ever carry a tensor */
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1); /* where comm_lying.so is */
    bp_context *ctx = bpt_context();
    bp_graph *g = NULL;
    bp_tensor *x = NULL;
    BPT_OK(bp_graph_create(binary(ctx), &g));
    BPT_OK(bp_graph_input(g, BP_F32, 1, (const int64_t[]){4}, &x));
    bp_comm *c = (bp_comm *)&c;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_comm_create(bp_tensor_backend(x), NULL, &c));
    cr_assert_null(c, "a failed create leaves *out NULL");
    cr_assert(strstr(bp_last_error(), "recording backend") &&
                  strstr(bp_last_error(), "bp_graph_run"),
              "the message says neither what the backend is nor what to do: %s", bp_last_error());
    bp_comm_options o = BP_COMM_OPTIONS_INIT;
    o.engine = "lying"; /* an engine that opens (tests/plugins/comm_lying.c) */
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_comm_create(bp_tensor_backend(x), &o, &c));
    bp_tensor_release(x);
    bp_graph_release(g);
    bp_context_destroy(ctx);
}

Test(comm, create_refuses_options_smaller_than_any_layout)
{
    bp_context *ctx = bpt_context();
    bp_comm_options o = BP_COMM_OPTIONS_INIT;
    o.struct_size = 4;
    bp_comm *c = NULL;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_comm_create(binary(ctx), &o, &c));
    cr_assert(strstr(bp_last_error(), "BP_COMM_OPTIONS_INIT"), "%s", bp_last_error());
    bp_context_destroy(ctx);
}

Test(comm, create_refuses_a_timeout_that_is_not_a_positive_number)
{
    bp_context *ctx = bpt_context();
    const double bad[] = {-1.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bp_comm_options o = BP_COMM_OPTIONS_INIT;
        o.timeout_s = bad[i];
        bp_comm *c = NULL;
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_comm_create(binary(ctx), &o, &c));
        cr_assert(strstr(bp_last_error(), "timeout_s"), "%s", bp_last_error());
    }
    bp_context_destroy(ctx);
}

Test(comm, create_refuses_an_engine_name_that_is_not_one)
{
    bp_context *ctx = bpt_context();
    bp_comm_options o = BP_COMM_OPTIONS_INIT;
    o.engine = "../evil";
    bp_comm *c = NULL;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_comm_create(binary(ctx), &o, &c));
    cr_assert(strstr(bp_last_error(), "not an engine name"), "%s", bp_last_error());
    bp_context_destroy(ctx);
}

Test(comm, create_says_where_it_looked_for_an_engine_that_is_not_installed)
{
    bp_context *ctx = bpt_context();
    bp_comm_options o = BP_COMM_OPTIONS_INIT;
    o.engine = "gloo";
    bp_comm *c = NULL;
    BPT_FAILS(BP_ERR_NOT_FOUND, bp_comm_create(binary(ctx), &o, &c));
    cr_assert(strstr(bp_last_error(), "comm_gloo.so") && strstr(bp_last_error(), ENGINE_DIR),
              "the message names neither the file nor the directory: %s", bp_last_error());
    bp_context_destroy(ctx);
}

Test(comm, create_refuses_nccl_for_host_memory_naming_mpi)
{
    bp_context *ctx = bpt_context();
    bp_comm_options o = BP_COMM_OPTIONS_INIT;
    o.engine = "nccl";
    bp_comm *c = NULL;
    BPT_FAILS(BP_ERR_UNSUPPORTED_DEVICE, bp_comm_create(binary(ctx), &o, &c));
    cr_assert(strstr(bp_last_error(), "host memory") && strstr(bp_last_error(), "\"mpi\""),
              "%s", bp_last_error());
    bp_context_destroy(ctx);
}

Test(comm, reduce_op_names_every_op)
{
    cr_assert_str_eq(bp_reduce_op_name(BP_REDUCE_SUM), "sum");
    cr_assert_str_eq(bp_reduce_op_name(BP_REDUCE_PROD), "prod");
    cr_assert_str_eq(bp_reduce_op_name(BP_REDUCE_MAX), "max");
    cr_assert_str_eq(bp_reduce_op_name(BP_REDUCE_MIN), "min");
    cr_assert_str_eq(bp_reduce_op_name(BP_REDUCE_AVG), "avg");
    cr_assert_str_eq(bp_reduce_op_name((bp_reduce_op)9), "?");
}

/* ---- an engine that reports a job no job is ------------------------------------- */

/* bp_comm_create on the binary backend with comm_lying.so (tests/plugins/)
 * reporting rank of size. */
static bp_status create_on_lying_engine(const char *rank, const char *size, bp_context **ctx,
                                        bp_comm **c)
{
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    setenv("BPT_LYING_RANK", rank, 1);
    setenv("BPT_LYING_SIZE", size, 1);
    *ctx = bpt_context();
    bp_comm_options o = BP_COMM_OPTIONS_INIT;
    o.engine = "lying";
    *c = (bp_comm *)c;
    return bp_comm_create(binary(*ctx), &o, c);
}

static void assert_lying_engine_refused(const char *rank, const char *size)
{
    bp_context *ctx = NULL;
    bp_comm *c = NULL;
    bp_status st = create_on_lying_engine(rank, size, &ctx, &c);
    cr_assert_eq(st, BP_ERR_PLUGIN, "rank %s of %s: %s (%s)", rank, size, bp_status_string(st),
                 st == BP_OK ? "accepted" : bp_last_error());
    cr_assert_null(c, "a refused create leaves *out NULL");
    char said[64];
    snprintf(said, sizeof said, "rank %s of a job of %s processes", rank, size);
    cr_assert(strstr(bp_last_error(), BPT_PLUGIN_DIR "/comm_lying.so") &&
                  strstr(bp_last_error(), said) && strstr(bp_last_error(), "defect in the engine"),
              "the message names neither the engine's file nor what it reported: %s",
              bp_last_error());
    bp_context_destroy(ctx);
}

Test(comm, create_accepts_an_engine_reporting_a_job_of_one)
{
    bp_context *ctx = NULL;
    bp_comm *c = NULL;
    bp_status st = create_on_lying_engine("0", "1", &ctx, &c);
    cr_assert_eq(st, BP_OK, "%s: %s", bp_status_string(st), bp_last_error());
    cr_assert_eq(bp_comm_size(c), 1);
    float in[4] = {1, 2, 3, 4}, out[4];
    bp_tensor *x = NULL, *y = NULL;
    BPT_OK(bp_tensor_from_host(binary(ctx), BP_F32, 1, (const int64_t[]){4}, in, &x));
    BPT_OK(bp_reduce_scatter(c, x, BP_REDUCE_SUM, 0, &y));
    BPT_OK(bp_tensor_to_host(y, out, sizeof out));
    cr_assert(memcmp(in, out, sizeof in) == 0);
    bp_tensor_release(y);
    bp_tensor_release(x);
    bp_comm_destroy(c);
    bp_context_destroy(ctx);
}

/* Zero elements, but the gathered extent makes the non-zero ones overflow:
 * refused before the engine runs, naming the result's shape (not the
 * engine's [size, x...] layout, which holds the same elements). */
Test(comm, all_gather_refuses_a_result_too_large_naming_its_shape)
{
    bp_context *ctx = NULL;
    bp_comm *c = NULL;
    BPT_OK(create_on_lying_engine("0", "2", &ctx, &c));
    const int64_t big = INT64_C(360287978531779057); /* x 9 fits an f16 count, x 18 not */
    bp_tensor *x = NULL, *y = NULL;
    BPT_OK(bp_zeros(binary(ctx), BP_F16, 4, (const int64_t[]){big, 3, 0, 3}, &x));
    for (int32_t axis = 0; axis < 4; axis += 1) {
        bp_status st = bp_all_gather(c, x, axis, &y);
        if (axis == 2) { /* the zero extent doubles: still zero elements, and no overflow */
            BPT_OK(st);
            cr_assert_eq(bp_tensor_shape(y)[2], 0);
            bp_tensor_release(y);
            y = NULL;
            continue;
        }
        cr_assert_eq(st, BP_ERR_SHAPE, "axis %d: %s", (int)axis, bp_status_string(st));
        cr_assert_null(y);
        char want[96];
        snprintf(want, sizeof want, "shape (%lld, %d, 0, %d)",
                 (long long)(axis == 0 ? 2 * big : big), axis == 1 ? 6 : 3, axis == 3 ? 6 : 3);
        cr_assert(strstr(bp_last_error(), want) && strstr(bp_last_error(), "too large"),
                  "axis %d: the message does not name the result's shape %s: %s", (int)axis,
                  want, bp_last_error());
    }
    bp_tensor_release(x);
    bp_comm_destroy(c);
    bp_context_destroy(ctx);
}

/* Zero elements scattered on an axis > 0: the engine's [.., size, part, ..]
 * layout would count size among the non-zero extents and overflow where x
 * and the result do not; no layout is needed, and the call succeeds. */
Test(comm, reduce_scatter_of_zero_elements_on_a_later_axis_needs_no_layout)
{
    bp_context *ctx = NULL;
    bp_comm *c = NULL;
    BPT_OK(create_on_lying_engine("0", "2", &ctx, &c));
    const int64_t big = INT64_C(360287978531779057); /* x 9 fits an f16 count, x 18 not */
    bp_tensor *x = NULL, *y = NULL;
    BPT_OK(bp_zeros(binary(ctx), BP_F16, 3, (const int64_t[]){big, 0, 9}, &x));
    BPT_OK(bp_reduce_scatter(c, x, BP_REDUCE_SUM, 1, &y));
    cr_assert_eq(bp_tensor_rank(y), 3);
    const int64_t *s = bp_tensor_shape(y);
    cr_assert(s[0] == big && s[1] == 0 && s[2] == 9, "shape (%lld, %lld, %lld)",
              (long long)s[0], (long long)s[1], (long long)s[2]);
    bp_tensor_release(y);
    bp_tensor_release(x);
    bp_comm_destroy(c);
    bp_context_destroy(ctx);
}

Test(comm, create_refuses_an_engine_reporting_size_zero)
{
    assert_lying_engine_refused("0", "0");
}

Test(comm, create_refuses_an_engine_reporting_a_negative_size)
{
    assert_lying_engine_refused("0", "-1");
}

Test(comm, create_refuses_an_engine_reporting_a_rank_past_its_size)
{
    assert_lying_engine_refused("5", "2");
    assert_lying_engine_refused("2", "2");
}

Test(comm, create_refuses_an_engine_reporting_a_negative_rank)
{
    assert_lying_engine_refused("-1", "2");
}

Test(comm, create_refuses_an_engine_reporting_an_absurd_size)
{
    assert_lying_engine_refused("0", "2147483647");
}

/* ---- the [comm] section ----------------------------------------------------------- */

/* bp_context_create on a file holding text: its status (the file is removed). */
static bp_status context_from(const char *text, bp_context **ctx)
{
    char path[] = "/tmp/bp_comm_test_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    *ctx = NULL;
    bp_status st = bp_context_create(path, ctx);
    unlink(path);
    return st;
}

static const char *setting_value(bp_context *ctx, const char *section, const char *key,
                                 const char **origin)
{
    for (size_t i = 0; i < bp_context_setting_count(ctx); i++) {
        bp_setting s = {.struct_size = sizeof s};
        BPT_OK(bp_context_setting(ctx, i, &s));
        if (strcmp(s.section, section) == 0 && strcmp(s.key, key) == 0) {
            *origin = s.origin;
            return s.value;
        }
    }
    return NULL;
}

Test(comm, timeout_defaults_to_300_seconds)
{
    bp_context *ctx = bpt_context();
    const char *origin = NULL;
    const char *v = setting_value(ctx, "comm", "timeout_s", &origin);
    cr_assert(v && strcmp(v, "300") == 0 && strcmp(origin, "default") == 0,
              "[comm] timeout_s = %s (%s)", v ? v : "(unset)", origin ? origin : "");
    bp_context_destroy(ctx);
}

Test(comm, timeout_in_the_config_file_is_read)
{
    bp_context *ctx = NULL;
    BPT_OK(context_from("[comm]\ntimeout_s = 2.5\n", &ctx));
    const char *origin = NULL;
    const char *v = setting_value(ctx, "comm", "timeout_s", &origin);
    cr_assert(v && strcmp(v, "2.5") == 0 && strstr(origin, ":2"), "[comm] timeout_s = %s (%s)",
              v ? v : "(unset)", origin ? origin : "");
    bp_context_destroy(ctx);
}

Test(comm, timeout_in_the_config_file_must_be_a_positive_number)
{
    const char *bad[] = {"0", "-3", "soon", "5s", "nan", "1e99"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "[comm]\ntimeout_s = %s\n", bad[i]);
        bp_context *ctx = NULL;
        BPT_FAILS(BP_ERR_CONFIG, context_from(text, &ctx));
        cr_assert(strstr(bp_last_error(), ":2:") && strstr(bp_last_error(), "timeout_s"),
                  "'%s': the message names no line or key: %s", bad[i], bp_last_error());
    }
}

Test(comm, comm_section_knows_only_timeout_s)
{
    bp_context *ctx = NULL;
    BPT_FAILS(BP_ERR_CONFIG, context_from("[comm]\ntimout_s = 5\n", &ctx));
    cr_assert(strstr(bp_last_error(), "unknown key 'timout_s' in [comm]") &&
                  strstr(bp_last_error(), "timeout_s)"),
              "%s", bp_last_error());
}

/* ---- the nccl engine without NCCL or a GPU ------------------------------------------ */

static char engine_error[1024];

static void host_log(void *host, bp_log_level level, const char *fmt, ...)
{
    (void)host;
    (void)level;
    (void)fmt;
}

static void host_set_error(void *host, const char *fmt, ...)
{
    (void)host;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(engine_error, sizeof engine_error, fmt, ap);
    va_end(ap);
}

/* Open the nccl engine directly, as bp_comm_create would for cuda:0. */
static bp_status open_nccl_engine(void)
{
    void *so = dlopen(NCCL_ENGINE, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(so, "dlopen %s: %s", NCCL_ENGINE, dlerror());
    bp_comm_engine_entry_fn entry;
    void *sym = dlsym(so, BP_COMM_ENGINE_ENTRY_SYMBOL);
    cr_assert_not_null(sym, "%s exports no %s", NCCL_ENGINE, BP_COMM_ENGINE_ENTRY_SYMBOL);
    memcpy(&entry, &sym, sizeof entry);
    const bp_comm_engine *e = entry();
    cr_assert_str_eq(e->name, "nccl");
    bp_comm_engine_host host = {sizeof host, NULL, host_log, host_set_error};
    bp_comm_engine_args args = {.struct_size = sizeof args, .memory_kind = BP_MEMORY_CUDA,
                                .device = 0, .timeout_s = 5};
    void *state = NULL;
    engine_error[0] = '\0';
    bp_status st = e->open(&host, &args, &state);
    cr_assert_null(state, "a failed open returned state");
    return st;
}

Test(comm, nccl_engine_without_nccl_fails_cleanly_naming_it)
{
    if (!exists(NCCL_ENGINE))
        cr_skip_test("the collective engines are not built (no MPI)");
    setenv("BP_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
    BPT_FAILS(BP_ERR_PLUGIN, open_nccl_engine());
    cr_assert(strstr(engine_error, "NCCL cannot be loaded") &&
                  strstr(engine_error, "/nonexistent/libnccl.so.2") &&
                  strstr(engine_error, "BP_NCCL_LIBRARY"),
              "%s", engine_error);
}

Test(comm, nccl_engine_refuses_a_library_that_is_not_nccl)
{
    if (!exists(NCCL_ENGINE))
        cr_skip_test("the collective engines are not built (no MPI)");
    setenv("BP_NCCL_LIBRARY", "libm.so.6", 1);
    BPT_FAILS(BP_ERR_PLUGIN, open_nccl_engine());
    cr_assert(strstr(engine_error, "not a usable NCCL") && strstr(engine_error, "ncclGet"),
              "%s", engine_error);
}

#ifdef BPT_FAKE_NCCL
Test(comm, nccl_engine_without_a_gpu_fails_cleanly_naming_the_driver)
{
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver) {
        dlclose(driver);
        cr_skip_test("this machine has a CUDA driver");
    }
    setenv("BP_NCCL_LIBRARY", BPT_FAKE_NCCL, 1);
    bp_status st = open_nccl_engine();
    cr_assert_eq(st, BP_ERR_UNSUPPORTED_DEVICE, "%s: %s", bp_status_string(st), engine_error);
    cr_assert(strstr(engine_error, "no CUDA driver") && strstr(engine_error, "libcuda.so.1"),
              "%s", engine_error);
}
#endif

/* ---- a job of one process ----------------------------------------------------------- */

Test(comm, a_process_run_without_mpirun_is_a_communicator_of_one)
{
    if (!exists(MPI_ENGINE))
        cr_skip_test("the collective engines are not built (no MPI)");
    bp_context *ctx = bpt_context();
    bp_backend *be = binary(ctx);
    bp_comm *c = NULL;
    BPT_OK(bp_comm_create(be, NULL, &c));
    cr_assert_eq(bp_comm_rank(c), 0);
    cr_assert_eq(bp_comm_size(c), 1);
    float in[6] = {1, -2, 3.5f, 4, 5, 6}, out[6];
    bp_tensor *x = NULL, *y = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F32, 2, (const int64_t[]){2, 3}, in, &x));
    for (int op = BP_REDUCE_SUM; op <= BP_REDUCE_AVG; op++) {
        BPT_OK(bp_all_reduce(c, x, (bp_reduce_op)op, &y));
        BPT_OK(bp_tensor_to_host(y, out, sizeof out));
        cr_assert(memcmp(in, out, sizeof in) == 0, "%s over one rank changed x",
                  bp_reduce_op_name((bp_reduce_op)op));
        bp_tensor_release(y);
    }
    BPT_OK(bp_all_gather(c, x, 1, &y));
    cr_assert_eq(bp_tensor_shape(y)[1], 3);
    bp_tensor_release(y);
    BPT_OK(bp_reduce_scatter(c, x, BP_REDUCE_SUM, 1, &y));
    cr_assert_eq(bp_tensor_shape(y)[1], 3);
    bp_tensor_release(y);
    BPT_OK(bp_broadcast(c, x, 0, &y));
    bp_tensor_release(y);
    BPT_OK(bp_barrier(c));
    bp_tensor_release(x);
    bp_comm_destroy(c);
    bp_context_destroy(ctx);
}

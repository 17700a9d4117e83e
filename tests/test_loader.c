/* The plugin loader, against real, deliberately broken .so files
 * (tests/plugins/), built by the test build. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpt.h" /* before criterion/redirect.h, which needs criterion.h first */

#include <criterion/redirect.h>

#define PLUGIN(stem) BPT_PLUGIN_DIR "/" stem ".so"

/* A context that also scans the directory of broken plugins. */
static bp_context *with_test_plugins(void)
{
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    return bpt_context();
}

/* The record of the file ending in path_suffix, after trying to load and
 * open it (plugins are only loaded when first needed). */
static const bp_plugin_record *find_record(bp_context *ctx, const char *path_suffix,
                                           bp_plugin_record *rec)
{
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++) {
        rec->struct_size = sizeof *rec;
        BPT_OK(bp_context_plugin(ctx, i, rec));
        size_t n = strlen(rec->path), m = strlen(path_suffix);
        if (n >= m && strcmp(rec->path + n - m, path_suffix) == 0) {
            (void)bp_context_plugin_open(ctx, i);
            BPT_OK(bp_context_plugin(ctx, i, rec));
            return rec;
        }
    }
    return NULL;
}

Test(loader, finds_the_builtin_binary_plugin_beside_the_library)
{
    bp_context *ctx = bpt_context();
    bp_plugin_record rec = {.struct_size = sizeof rec};
    cr_assert_not_null(find_record(ctx, "/backplane/bp_binary.so", &rec));
    cr_assert(rec.loaded);
    cr_assert_str_eq(rec.name, "binary");
    cr_assert_eq(rec.abi_major, BP_ABI_MAJOR);
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    cr_assert_str_eq(bp_backend_name(be), "binary:0");
    bp_context_destroy(ctx);
}

Test(loader, refuses_a_wrong_abi_major_naming_file_and_both_versions)
{
    bp_context *ctx = with_test_plugins();
    bp_plugin_record rec = {.struct_size = sizeof rec};
    cr_assert_not_null(find_record(ctx, "/bp_wrong_abi.so", &rec));
    cr_assert_not(rec.loaded);
    cr_assert_eq(rec.status, BP_ERR_PLUGIN);
    cr_assert(strstr(rec.message, "99.5"), "message: %s", rec.message); /* toy.h's minor */
    char ours[32];
    snprintf(ours, sizeof ours, "%d.%d", BP_ABI_MAJOR, BP_ABI_MINOR);
    cr_assert(strstr(rec.message, ours), "message: %s", rec.message);
    BPT_FAILS(BP_ERR_PLUGIN, bp_backend_get(ctx, "wrong_abi", &(bp_backend *){NULL}));
    cr_assert(strstr(bp_last_error(), "bp_wrong_abi.so"), "%s", bp_last_error());
    bp_context_destroy(ctx);
}

Test(loader, refuses_a_plugin_without_the_entry_symbol)
{
    bp_context *ctx = with_test_plugins();
    bp_plugin_record rec = {.struct_size = sizeof rec};
    cr_assert_not_null(find_record(ctx, "/bp_no_entry.so", &rec));
    cr_assert_not(rec.loaded);
    cr_assert(strstr(rec.message, "bp_plugin_entry"), "message: %s", rec.message);
    bp_context_destroy(ctx);
}

Test(loader, refuses_a_descriptor_smaller_than_its_abi_requires)
{
    bp_context *ctx = with_test_plugins();
    bp_plugin_record rec = {.struct_size = sizeof rec};
    cr_assert_not_null(find_record(ctx, "/bp_too_small.so", &rec));
    cr_assert_not(rec.loaded);
    cr_assert(strstr(rec.message, "smaller"), "message: %s", rec.message);
    bp_context_destroy(ctx);
}

Test(loader, reports_dlopen_error_text_when_the_file_cannot_be_loaded)
{
    bp_context *ctx = with_test_plugins();
    bp_plugin_record rec = {.struct_size = sizeof rec};
    cr_assert_not_null(find_record(ctx, "/bp_unresolved.so", &rec));
    cr_assert_not(rec.loaded);
    cr_assert(strstr(rec.message, "bpt_symbol_that_nothing_defines"), "message: %s", rec.message);
    bp_context_destroy(ctx);
}

Test(loader, broken_plugins_never_stop_the_others)
{
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    BPT_OK(bp_backend_get(ctx, "crashy", &be));
    bp_context_destroy(ctx);
}

Test(loader, a_failed_open_is_reported_with_the_plugins_reason)
{
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_UNSUPPORTED_DEVICE, bp_backend_get(ctx, "open_fails", &be));
    cr_assert_null(be);
    cr_assert(strstr(bp_last_error(), "no widget device found"), "%s", bp_last_error());
    cr_assert(strstr(bp_last_error(), "bp_open_fails.so"), "%s", bp_last_error());
    bp_context_destroy(ctx);
}

Test(loader, default_backend_list_skips_a_failing_backend_and_says_why)
{
    /* open_fails opens nowhere; wrong_abi is found but refused at load */
    setenv("BP_DEFAULT_BACKEND", "open_fails, wrong_abi, binary", 1);
    setenv("BP_LOG_LEVEL", "error", 1); /* the skips are warnings: keep test output quiet */
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(ctx, &be));
    cr_assert_str_eq(bp_backend_name(be), "binary:0");
    const char *why = bp_context_default_reason(ctx);
    cr_assert(strstr(why, "open_fails: skipped") && strstr(why, "no widget device found"), "%s", why);
    cr_assert(strstr(why, "remedy: plug in a widget"), "the whole reason: %s", why);
    cr_assert(strstr(why, "wrong_abi: skipped"), "%s", why);
    cr_assert(strstr(why, "binary: chosen"), "%s", why);
    bp_context_destroy(ctx);
}

Test(loader, default_backend_naming_no_plugin_is_a_config_error_naming_the_nearest)
{
    /* a typo must not quietly run the work on the next backend */
    static const char *const lists[][2] = {
        {"open_fail, binary", "'open_fails'"}, /* an installed plugin */
        {"binry, open_fails", "'binary'"},
        {"blascpu, binary", "'blas_cpu'"},     /* backplane's own, installed or not */
    };
    setenv("BP_LOG_LEVEL", "off", 1);
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        setenv("BP_DEFAULT_BACKEND", lists[i][0], 1);
        bp_context *ctx = with_test_plugins();
        bp_backend *be = NULL;
        BPT_FAILS(BP_ERR_CONFIG, bp_backend_default(ctx, &be));
        cr_assert_null(be, "fell through to the next backend");
        const char *e = bp_last_error();
        cr_assert(strstr(e, "did you mean") && strstr(e, lists[i][1]), "%s: %s", lists[i][0], e);
        cr_assert(strstr(e, "env BP_DEFAULT_BACKEND"), "names where the list came from: %s", e);
        bp_context_destroy(ctx);
    }
    setenv("BP_DEFAULT_BACKEND", "bogus", 1);
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_CONFIG, bp_backend_default(ctx, &be));
    cr_assert(strstr(bp_last_error(), "'bogus'") && strstr(bp_last_error(), "Installed here:") &&
                  !strstr(bp_last_error(), "did you mean"),
              "nothing close enough to suggest: %s", bp_last_error());
    bp_context_destroy(ctx);
}

Test(loader, default_backend_skips_backplane_backends_that_cannot_open_or_are_not_installed)
{
    /* cuda, on this machine: not installed (a build without it), or installed
     * and unable to open without a GPU, or the chosen one; never a
     * configuration error */
    setenv("BP_DEFAULT_BACKEND", "cuda, binary", 1);
    setenv("BP_LOG_LEVEL", "off", 1);
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(ctx, &be));
    const char *why = bp_context_default_reason(ctx);
    if (strcmp(bp_backend_plugin_name(be), "cuda") != 0)
        cr_assert(strstr(why, "cuda: skipped") && strstr(why, "binary: chosen"), "%s", why);
    bp_context_destroy(ctx);
}

Test(loader, a_skipped_backend_is_logged_with_every_line_of_its_reason, .init = cr_redirect_stderr)
{
    setenv("BP_DEFAULT_BACKEND", "open_fails, binary", 1);
    setenv("BP_LOG_LEVEL", "warn", 1);
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(ctx, &be));
    bp_context_destroy(ctx);
    fflush(stderr);
    char log[4096] = "";
    size_t n = fread(log, 1, sizeof log - 1, cr_get_redirected_stderr());
    log[n] = '\0';
    const char *first = strstr(log, "skipping 'open_fails': ");
    first = first ? strstr(first, "no widget device found") : NULL;
    const char *second = strstr(log, "\n  remedy: plug in a widget, or choose another backend\n");
    cr_assert(first && second && first < second,
              "the second line of the reason follows, indented: %s", log);
}

Test(loader, default_backend_fails_listing_every_reason_when_none_opens)
{
    setenv("BP_DEFAULT_BACKEND", "open_fails", 1);
    setenv("BP_LOG_LEVEL", "error", 1);
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_NOT_FOUND, bp_backend_default(ctx, &be));
    cr_assert(strstr(bp_last_error(), "no widget device found"), "%s", bp_last_error());
    bp_context_destroy(ctx);
}

Test(loader, an_unknown_backend_name_lists_every_plugin_tried)
{
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_NOT_FOUND, bp_backend_get(ctx, "nosuch", &be));
    const char *e = bp_last_error();
    cr_assert(strstr(e, "nosuch") && strstr(e, "bp_binary.so") && strstr(e, "bp_wrong_abi.so"),
              "%s", e);
    bp_context_destroy(ctx);
}

Test(loader, a_plugin_named_by_path_is_loaded)
{
    bp_context *ctx = bpt_context(); /* the test directory is not scanned */
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, PLUGIN("bp_crashy"), &be));
    cr_assert_str_eq(bp_backend_name(be), "crashy:0");
    BPT_FAILS(BP_ERR_PLUGIN, bp_backend_get(ctx, PLUGIN("bp_no_entry"), &be));
    BPT_FAILS(BP_ERR_PLUGIN, bp_backend_get(ctx, BPT_PLUGIN_DIR "/missing.so", &be));
    cr_assert(strstr(bp_last_error(), "missing.so"), "%s", bp_last_error());
    bp_context_destroy(ctx);
}

Test(loader, a_device_index_beyond_the_plugins_devices_is_refused)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_UNSUPPORTED_DEVICE, bp_backend_get(ctx, "binary:3", &be));
    cr_assert(strstr(bp_last_error(), "binary:0"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_backend_get(ctx, "binary:x", &be));
    bp_context_destroy(ctx);
}

/* Crashes are not contained in-process (the conformance tool forks for
 * that); the loader's part is that loading and opening such a plugin is
 * fine and the crash happens only in the op. */
Test(loader, a_plugin_whose_op_crashes_loads_and_crashes_only_in_that_op, .signal = SIGSEGV)
{
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "crashy", &be));
    bp_tensor *x = NULL, *y = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F32, 1, (int64_t[]){2}, (float[]){1, 2}, &x));
    bp_neg(x, &y); /* raises SIGSEGV inside the plugin */
}

Test(loader, plugin_config_keys_reach_the_plugin_and_bad_values_name_file_and_line)
{
    char path[] = "/tmp/bpt_loader_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("[backplane]\nlog_level = error\n\n[backend.crashy]\nanswer = 41\n", f);
    fclose(f);
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_CONFIG, bp_backend_get(ctx, "crashy", &be));
    char where[300];
    snprintf(where, sizeof where, "%s:5", path);
    cr_assert(strstr(bp_last_error(), where) && strstr(bp_last_error(), "answer") &&
                  strstr(bp_last_error(), "must be 42"), "%s", bp_last_error());
    bp_context_destroy(ctx);
    unlink(path);
}

Test(loader, an_unknown_key_in_a_plugins_section_is_a_config_error_when_it_opens)
{
    char path[] = "/tmp/bpt_loader_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("[backend.crashy]\nanswer = 42\nquestion = 6x9\n", f);
    fclose(f);
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx)); /* nothing is opened yet */
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_CONFIG, bp_backend_get(ctx, "crashy", &be));
    char where[300];
    snprintf(where, sizeof where, "%s:3", path);
    cr_assert(strstr(bp_last_error(), where) && strstr(bp_last_error(), "question"), "%s",
              bp_last_error());
    bp_context_destroy(ctx);
    unlink(path);
}

Test(loader, a_section_for_a_plugin_not_installed_is_a_warning_not_an_error, .init = cr_redirect_stderr)
{
    char path[] = "/tmp/bpt_loader_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("[backend.cuda]\ntf32 = true\n", f);
    fclose(f);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    bp_context_destroy(ctx);
    unlink(path);
}

Test(loader, plugins_unload_at_context_destroy_and_reload_in_a_new_context)
{
    for (int i = 0; i < 3; i++) {
        bp_context *ctx = with_test_plugins();
        bp_backend *be = NULL;
        bp_tensor *t = NULL;
        BPT_OK(bp_backend_get(ctx, "crashy", &be));
        BPT_OK(bp_tensor_from_host(be, BP_I32, 1, (int64_t[]){1}, (int32_t[]){7}, &t));
        bp_tensor_release(t);
        bp_context_destroy(ctx);
    }
}

/* ---- broken files on the plugin path ----------------------------- */

/* A fresh directory holding broken files named like plugins. */
static void make_broken_dir(char *dir)
{
    cr_assert_not_null(mkdtemp(dir));
    char src[512], dst[512];
    snprintf(src, sizeof src, "%s/bp_binary.so", BPT_BUILD_PLUGIN_DIR);
    FILE *in = fopen(src, "rb");
    cr_assert_not_null(in, "%s", src);
    snprintf(dst, sizeof dst, "%s/bp_truncated.so", dir);
    FILE *out = fopen(dst, "wb");
    char buf[1000];
    size_t n = fread(buf, 1, sizeof buf, in);
    cr_assert_eq(n, sizeof buf);
    fwrite(buf, 1, n, out); /* `head -c 1000 bp_binary.so > bp_truncated.so` */
    fclose(out);
    fclose(in);
    snprintf(dst, sizeof dst, "%s/bp_empty.so", dir);
    fclose(fopen(dst, "wb"));
    snprintf(dst, sizeof dst, "%s/bp_directory.so", dir);
    cr_assert_eq(mkdir(dst, 0755), 0);
    snprintf(dst, sizeof dst, "%s/bp_loop.so", dir);
    cr_assert_eq(symlink(dst, dst), 0);
    snprintf(dst, sizeof dst, "%s/bp_text.so", dir);
    out = fopen(dst, "wb");
    fputs("this is not an ELF file\n", out);
    fclose(out);
}

static void expect_rejected(bp_context *ctx, const char *suffix, const char *reason)
{
    bp_plugin_record rec = {.struct_size = sizeof rec};
    cr_assert_not_null(find_record(ctx, suffix, &rec), "no record for %s", suffix);
    cr_assert_not(rec.loaded, "%s loaded", suffix);
    cr_assert_eq(rec.status, BP_ERR_PLUGIN, "%s: %s", suffix, bp_status_string(rec.status));
    cr_assert(strstr(rec.message, reason), "%s: %s", suffix, rec.message);
}

Test(loader, truncated_empty_and_non_elf_files_are_rejected_before_dlopen)
{
    char dir[] = "/tmp/bpt_broken_XXXXXX";
    make_broken_dir(dir);
    setenv("BP_PLUGIN_PATH", dir, 1);
    bp_context *ctx = bpt_context(); /* a SIGBUS inside dlopen would end the test here */
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    bp_context_plugin_open(ctx, 0); /* opening all is what `backplane info` does */
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++)
        bp_context_plugin_open(ctx, i);
    expect_rejected(ctx, "/bp_truncated.so", "truncated");
    expect_rejected(ctx, "/bp_empty.so", "empty");
    expect_rejected(ctx, "/bp_text.so", "not an ELF");
    expect_rejected(ctx, "/bp_directory.so", "not a regular file");
    expect_rejected(ctx, "/bp_loop.so", "symbolic links");
    bp_context_destroy(ctx);
}

Test(loader, an_unreadable_plugin_file_is_rejected_with_the_reason)
{
    char dir[] = "/tmp/bpt_unreadable_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof path, "%s/bp_secret.so", dir);
    FILE *f = fopen(path, "wb");
    fputs("x", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0), 0);
    cr_assert_eq(chmod(dir, 0755), 0);
    if (geteuid() == 0) /* root reads anything: test as nobody (each test is its own process) */
        cr_assert_eq(setuid(65534), 0);
    setenv("BP_PLUGIN_PATH", dir, 1);
    setenv("HOME", dir, 1); /* a home nobody may read */
    unsetenv("XDG_CONFIG_HOME");
    bp_context *ctx = bpt_context();
    expect_rejected(ctx, "/bp_secret.so", "Permission denied");
    bp_context_destroy(ctx);
}

Test(loader, a_descriptor_too_small_for_its_version_fields_says_so)
{
    bp_context *ctx = with_test_plugins();
    bp_plugin_record rec = {.struct_size = sizeof rec};
    bp_backend *be = NULL;
    bp_backend_get(ctx, "tiny_descriptor", &be); /* loads it, if loading is lazy */
    cr_assert_not_null(find_record(ctx, "/bp_tiny_descriptor.so", &rec));
    cr_assert_not(rec.loaded);
    cr_assert(strstr(rec.message, "descriptor too small (11 bytes, need"), "%s", rec.message);
    cr_assert_null(strstr(rec.message, "ABI 0.0"), "%s", rec.message);
    bp_context_destroy(ctx);
}

Test(loader, a_status_that_is_not_a_bp_status_becomes_backend_error_naming_the_entry)
{
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    bp_status st = bp_backend_get(ctx, "bad_status_open", &be);
    cr_assert_eq(st, BP_ERR_BACKEND, "%d: %s", (int)st, bp_last_error());
    cr_assert(strstr(bp_last_error(), "open") && strstr(bp_last_error(), "1234") &&
                  strstr(bp_last_error(), "bp_bad_status_open.so"), "%s", bp_last_error());
    /* asked again: the recorded status is the same known code */
    BPT_FAILS(BP_ERR_BACKEND, bp_backend_get(ctx, "bad_status_open", &be));

    BPT_OK(bp_backend_get(ctx, "bad_status", &be));
    bp_tensor *t = NULL;
    st = bp_tensor_from_host(be, BP_F32, 1, (int64_t[]){2}, (float[]){1, 2}, &t);
    cr_assert_eq(st, BP_ERR_BACKEND, "%d: %s", (int)st, bp_last_error());
    cr_assert_null(t);
    cr_assert(strstr(bp_last_error(), "alloc") && strstr(bp_last_error(), "-7"), "%s",
              bp_last_error());
    bp_context_destroy(ctx);
}

Test(loader, an_absurd_device_count_is_refused_as_a_plugin_defect)
{
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_PLUGIN, bp_backend_get(ctx, "huge_devices", &be));
    cr_assert(strstr(bp_last_error(), "2147483647") && strstr(bp_last_error(), "4096"), "%s",
              bp_last_error());
    bp_context_destroy(ctx);
}

Test(loader, a_records_message_stays_valid_after_a_failed_open)
{
    bp_context *ctx = with_test_plugins();
    size_t idx = 0;
    bool found = false;
    bp_plugin_record rec = {.struct_size = sizeof rec};
    for (size_t i = 0; i < bp_context_plugin_count(ctx) && !found; i++) {
        BPT_OK(bp_context_plugin(ctx, i, &rec));
        if (strstr(rec.path, "/bp_open_fails.so"))
            found = true, idx = i;
    }
    cr_assert(found);
    BPT_OK(bp_context_plugin(ctx, idx, &rec));
    const char *before = rec.message; /* documented: valid for the context's life */
    char copy[512];
    snprintf(copy, sizeof copy, "%s", before);
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_UNSUPPORTED_DEVICE, bp_backend_get(ctx, "open_fails", &be));
    cr_assert_str_eq(before, copy); /* ASan: heap-use-after-free if it was freed */
    BPT_OK(bp_context_plugin(ctx, idx, &rec));
    cr_assert(strstr(rec.message, "no widget device found"), "%s", rec.message);
    bp_context_destroy(ctx);
}

typedef struct race_arg {
    bp_context *ctx;
    int failures;
} race_arg;

static void *race_default(void *p)
{
    race_arg *a = p;
    for (int i = 0; i < 200; i++) {
        bp_backend *be = NULL;
        if (bp_backend_default(a->ctx, &be) != BP_ERR_NOT_FOUND || be != NULL ||
            !strstr(bp_last_error(), "open_fails"))
            a->failures++;
        const char *why = bp_context_default_reason(a->ctx);
        if (!strstr(why, "open_fails: skipped"))
            a->failures++;
    }
    return NULL;
}

Test(loader, default_backend_is_safe_from_many_threads_when_nothing_opens)
{
    setenv("BP_DEFAULT_BACKEND", "open_fails, wrong_abi", 1);
    setenv("BP_LOG_LEVEL", "off", 1);
    bp_context *ctx = with_test_plugins();
    pthread_t th[8];
    race_arg args[8];
    for (int i = 0; i < 8; i++) {
        args[i] = (race_arg){ctx, 0};
        cr_assert_eq(pthread_create(&th[i], NULL, race_default, &args[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(args[i].failures, 0, "thread %d saw %d wrong answers", i, args[i].failures);
    }
    bp_context_destroy(ctx);
}

/* ---- versioning ------------------------------------------------- */

static const bp_plugin_record *record_named(bp_context *ctx, const char *name,
                                            bp_plugin_record *rec)
{
    bp_backend *be = NULL;
    (void)bp_backend_get(ctx, name, &be); /* loads it, if loading is lazy */
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++) {
        rec->struct_size = sizeof *rec;
        BPT_OK(bp_context_plugin(ctx, i, rec));
        if (strcmp(rec->name, name) == 0)
            return rec;
    }
    return NULL;
}

Test(loader, config_keys_are_read_with_the_plugins_own_key_size)
{
    bp_context *ctx = with_test_plugins();
    bp_plugin_record rec;
    cr_assert_not_null(record_named(ctx, "big_keys", &rec));
    cr_assert(rec.loaded, "%s", rec.message);
    const bp_config_key *k = rec.config_keys;
    cr_assert_str_eq(k[0].name, "alpha");
    cr_assert_str_eq(k[0].default_value, "1");
    cr_assert_str_eq(k[1].name, "beta");
    cr_assert_null(k[1].default_value);
    cr_assert_null(k[2].name);
    bp_context_destroy(ctx);
}

Test(loader, a_plugin_built_against_abi_1_0_loads_and_keeps_its_keys)
{
    bp_context *ctx = with_test_plugins();
    bp_plugin_record rec;
    cr_assert_not_null(record_named(ctx, "abi_1_0", &rec));
    cr_assert(rec.loaded, "%s", rec.message);
    cr_assert_eq(rec.abi_minor, 0);
    cr_assert_str_eq(rec.config_keys[0].name, "speed");
    cr_assert_null(rec.config_keys[1].name);
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "abi_1_0", &be));
    bp_context_destroy(ctx);
}

Test(loader, getters_never_write_past_the_callers_struct_size_nor_change_it)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    /* a caller built against a newer, larger struct: the tail stays its own */
    unsigned char buf[sizeof(bp_device_info) + 64];
    memset(buf, 0xAB, sizeof buf);
    uint32_t size = (uint32_t)sizeof buf;
    memcpy(buf, &size, sizeof size);
    BPT_OK(bp_backend_device_info(be, (bp_device_info *)(void *)buf));
    uint32_t after;
    memcpy(&after, buf, sizeof after);
    cr_assert_eq(after, size, "struct_size was changed to %u", after);
    for (size_t i = sizeof(bp_device_info); i < sizeof buf; i++)
        cr_assert_eq(buf[i], 0xAB, "byte %zu past the library's struct was written", i);
    cr_assert_str_eq(((bp_device_info *)(void *)buf)->name, "host CPU (reference)");
    /* a caller that forgot struct_size is told how to set it */
    bp_memory_info m = {.struct_size = 0};
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_backend_memory_info(be, &m));
    cr_assert(strstr(bp_last_error(), "struct_size = sizeof(bp_memory_info)"), "%s",
              bp_last_error());
    bp_plugin_record rec = {.struct_size = 4};
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_context_plugin(ctx, 0, &rec));
    bp_context_destroy(ctx);
}

/* ---- pay only for what you use ---------------------------------- */

/* Whether the dynamic loader has path mapped in this process. */
static bool is_mapped(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (h)
        dlclose(h);
    return h != NULL;
}

Test(loader, context_create_opens_no_plugin)
{
    bp_context *ctx = with_test_plugins();
    cr_assert_gt(bp_context_plugin_count(ctx), 5);
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++) {
        bp_plugin_record rec = {.struct_size = sizeof rec};
        BPT_OK(bp_context_plugin(ctx, i, &rec));
        cr_assert_not(rec.loaded || rec.opened, "%s was loaded at create", rec.path);
        cr_assert_not(is_mapped(rec.path), "%s is mapped after bp_context_create", rec.path);
    }
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be)); /* loads that one only */
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++) {
        bp_plugin_record rec = {.struct_size = sizeof rec};
        BPT_OK(bp_context_plugin(ctx, i, &rec));
        bool is_binary = strcmp(rec.name, "binary") == 0;
        cr_assert_eq(is_mapped(rec.path), is_binary, "%s", rec.path);
    }
    bp_context_destroy(ctx);
}

Test(loader, builtin_default_skips_cuda_quietly_without_driver, .init = cr_redirect_stderr)
{
    /* The built-in list is "cuda, blas_cpu, binary": on a machine without a
     * GPU (or without the cuda plugin) cuda is skipped at info level, so a
     * program on a CPU-only machine prints nothing. */
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(ctx, &be));
    const char *why = bp_context_default_reason(ctx);
    cr_assert(strstr(why, "the built-in default"), "%s", why);
    if (strcmp(bp_backend_plugin_name(be), "cuda") != 0)
        cr_assert(strstr(why, "cuda: skipped"), "%s", why);
    bp_context_destroy(ctx);
    fflush(stderr);
    char log[512] = "";
    size_t n = fread(log, 1, sizeof log - 1, cr_get_redirected_stderr());
    log[n] = '\0';
    /* Lines but blas_cpu's warning that this machine's OpenBLAS runs kernels
     * older than its CPU, a real condition it must report
     * (test_blas_cpu_openblas.c). */
    char other[512] = "";
    size_t len = 0;
    for (const char *line = log; *line;) {
        const size_t l = strcspn(line, "\n") + (line[strcspn(line, "\n")] == '\n');
        if (!memmem(line, l, "blas_cpu: OpenBLAS runs its", 27)) {
            memcpy(other + len, line, l);
            len += l;
        }
        line += l;
    }
    other[len] = '\0';
    cr_assert_str_empty(other, "stderr: %s", log);
}

static const char *write_config(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/bpt_loader_XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

Test(loader, bad_plugin_value_stops_the_preference_list)
{
    const char *path = write_config("[backplane]\ndefault_backend = crashy, binary\n"
                                    "log_level = error\n[backend.crashy]\nanswer = 41\n");
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_CONFIG, bp_backend_default(ctx, &be));
    cr_assert_null(be, "fell through to the next backend");
    char where[128];
    snprintf(where, sizeof where, "%s:5", path);
    cr_assert(strstr(bp_last_error(), where) && strstr(bp_last_error(), "answer") &&
                  strstr(bp_last_error(), "must be 42"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_CONFIG, bp_backend_default(ctx, &be)); /* and again, the same */
    bp_context_destroy(ctx);
    unlink(path);
}

Test(loader, a_missing_plugin_path_entry_is_a_warning_naming_it, .init = cr_redirect_stderr)
{
    const char *path = write_config("[backplane]\nplugin_path = /nonexistent/bpt_plugins\n");
    setenv("BP_PLUGIN_PATH", "/nonexistent/bpt_env_dir", 1);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    bp_context_destroy(ctx);
    unlink(path);
    fflush(stderr);
    char log[2048] = "";
    size_t n = fread(log, 1, sizeof log - 1, cr_get_redirected_stderr());
    log[n] = '\0';
    char where[128];
    snprintf(where, sizeof where, "%s:2", path);
    cr_assert(strstr(log, "plugin_path entry '/nonexistent/bpt_plugins'") && strstr(log, where),
              "%s", log);
    cr_assert(strstr(log, "$BP_PLUGIN_PATH entry '/nonexistent/bpt_env_dir'"), "%s", log);
}

/* A copy of a built test plugin under another file name in dir. */
static void copy_plugin(const char *stem, const char *dir, const char *as)
{
    char src[512], dst[512], cmd[1200];
    snprintf(src, sizeof src, "%s/%s.so", BPT_PLUGIN_DIR, stem);
    snprintf(dst, sizeof dst, "%s/%s", dir, as);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", src, dst);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(loader, not_found_lists_every_directory_searched_and_near_miss_files)
{
    char dir[] = "/tmp/bpt_near_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    copy_plugin("bp_crashy", dir, "libbp_crashy.so");
    copy_plugin("bp_crashy", dir, "crashy.so");
    copy_plugin("bp_crashy", dir, "bp_crashy.so.1");
    setenv("BP_PLUGIN_PATH", dir, 1);
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_NOT_FOUND, bp_backend_get(ctx, "crashy", &be));
    const char *e = bp_last_error();
    cr_assert(strstr(e, "$BP_PLUGIN_PATH") && strstr(e, dir), "%s", e);
    cr_assert(strstr(e, "built-in"), "%s", e);
    cr_assert(strstr(e, "libbp_crashy.so") && strstr(e, "PREFIX"), "%s", e);
    cr_assert(strstr(e, "/crashy.so has no 'bp_' prefix"), "%s", e);
    cr_assert(strstr(e, "bp_crashy.so.1 has a version suffix"), "%s", e);
    cr_assert(strstr(e, "rename it"), "%s", e);
    bp_context_destroy(ctx);
}

Test(loader, a_bare_file_name_in_the_current_directory_is_tried_as_dot_slash_name)
{
    char dir[] = "/tmp/bpt_cwd_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    copy_plugin("bp_crashy", dir, "bp_crashy.so");
    cr_assert_eq(chdir(dir), 0);
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "bp_crashy.so", &be));
    cr_assert_str_eq(bp_backend_name(be), "crashy:0");
    BPT_FAILS(BP_ERR_NOT_FOUND, bp_backend_get(ctx, "bp_absent.so", &be));
    cr_assert(strstr(bp_last_error(), "no file 'bp_absent.so' in the current directory"), "%s",
              bp_last_error());
    bp_context_destroy(ctx);
}

Test(loader, a_file_whose_name_promises_another_backend_is_refused_with_the_fix)
{
    char dir[] = "/tmp/bpt_misnamed_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    copy_plugin("bp_crashy", dir, "bp_other.so");
    setenv("BP_PLUGIN_PATH", dir, 1);
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_PLUGIN, bp_backend_get(ctx, "other", &be));
    cr_assert(strstr(bp_last_error(), "holds backend 'crashy'") &&
                  strstr(bp_last_error(), "rename it to bp_crashy.so"),
              "%s", bp_last_error());
    bp_context_destroy(ctx);
}

/* A plugin directory that exists but cannot be opened is an error naming it
 * and the cause, not a silent "no plugins" (found by the allocation sweep:
 * opendir failing with ENOMEM; EMFILE here, which needs no injection). */
Test(loader, a_plugin_directory_that_cannot_be_opened_is_reported)
{
    struct rlimit old;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
    int fds[4096], n = 0;
    struct rlimit low = {old.rlim_cur, old.rlim_max};
    if (low.rlim_cur > 256)
        low.rlim_cur = 256;
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
    while (n < 4096 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0) /* every descriptor */
        n++;
    bp_context *ctx = (bp_context *)(uintptr_t)0x10;
    bp_status st = bp_context_create(NULL, &ctx);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", bp_last_error());
    while (n > 0)
        close(fds[--n]);
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
    if (st == BP_OK)
        bp_context_destroy(ctx);
    cr_assert_eq(st, BP_ERR_IO, "got %s: %s", bp_status_string(st), msg);
    cr_assert_null(ctx);
    cr_assert(strstr(msg, "plugin directory") && strstr(msg, "too many files open"), "%s", msg);
}

/* A copy of the binary plugin under another backend's file name is refused
 * (its name promises another backend), and the refused record never answers
 * to "binary": the real plugin stays reachable, before and after the copy
 * was tried, and the record keeps its file's name. */
Test(loader, a_misnamed_copy_of_a_plugin_never_hides_the_real_backend)
{
    char dir[] = "/tmp/bpt_dup_XXXXXX", cmd[600];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "cp '%s/bp_binary.so' '%s/bp_dup_binary.so'", BPT_BUILD_PLUGIN_DIR,
             dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    setenv("BP_PLUGIN_PATH", dir, 1); /* searched before the built-in directory */
    for (int binary_first = 0; binary_first < 2; binary_first++) {
        bp_context *ctx = bpt_context();
        bp_backend *be = NULL;
        if (binary_first)
            BPT_OK(bp_backend_get(ctx, "binary", &be));
        BPT_FAILS(BP_ERR_PLUGIN, bp_backend_get(ctx, "dup_binary", &be));
        cr_assert(strstr(bp_last_error(), "rename it to bp_binary.so"), "%s", bp_last_error());
        BPT_OK(bp_backend_get(ctx, "binary", &be));
        cr_assert_str_eq(bp_backend_name(be), "binary:0");
        bp_plugin_record rec;
        const bp_plugin_record *dup = find_record(ctx, "/bp_dup_binary.so", &rec);
        cr_assert_not_null(dup);
        cr_assert_str_eq(dup->name, "dup_binary", "the refused record took the name '%s'",
                         dup->name);
        for (size_t i = 0; i < bp_context_plugin_count(ctx); i++)
            (void)bp_context_plugin_open(ctx, i); /* as backplane info does */
        BPT_OK(bp_backend_get(ctx, "binary", &be));
        bp_context_destroy(ctx);
    }
    snprintf(cmd, sizeof cmd, "rm -r '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

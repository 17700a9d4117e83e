/* The plugin loader, against real, deliberately broken .so files
 * (tests/plugins/), built by the test build. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h" /* before criterion/redirect.h, which needs criterion.h first */

#include <criterion/redirect.h>

#define PLUGIN(stem) BPT_PLUGIN_DIR "/" stem ".so"

/* A context that also scans the directory of broken plugins. */
static bp_context *with_test_plugins(void)
{
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    return bpt_context();
}

static const bp_plugin_record *find_record(bp_context *ctx, const char *path_suffix,
                                           bp_plugin_record *rec)
{
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++) {
        BPT_OK(bp_context_plugin(ctx, i, rec));
        size_t n = strlen(rec->path), m = strlen(path_suffix);
        if (n >= m && strcmp(rec->path + n - m, path_suffix) == 0)
            return rec;
    }
    return NULL;
}

Test(loader, finds_the_builtin_binary_plugin_beside_the_library)
{
    bp_context *ctx = bpt_context();
    bp_plugin_record rec;
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
    bp_plugin_record rec;
    cr_assert_not_null(find_record(ctx, "/bp_wrong_abi.so", &rec));
    cr_assert_not(rec.loaded);
    cr_assert_eq(rec.status, BP_ERR_PLUGIN);
    cr_assert(strstr(rec.message, "99.0"), "message: %s", rec.message);
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
    bp_plugin_record rec;
    cr_assert_not_null(find_record(ctx, "/bp_no_entry.so", &rec));
    cr_assert_not(rec.loaded);
    cr_assert(strstr(rec.message, "bp_plugin_entry"), "message: %s", rec.message);
    bp_context_destroy(ctx);
}

Test(loader, refuses_a_descriptor_smaller_than_its_abi_requires)
{
    bp_context *ctx = with_test_plugins();
    bp_plugin_record rec;
    cr_assert_not_null(find_record(ctx, "/bp_too_small.so", &rec));
    cr_assert_not(rec.loaded);
    cr_assert(strstr(rec.message, "smaller"), "message: %s", rec.message);
    bp_context_destroy(ctx);
}

Test(loader, reports_dlopen_error_text_when_the_file_cannot_be_loaded)
{
    bp_context *ctx = with_test_plugins();
    bp_plugin_record rec;
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
    setenv("BP_DEFAULT_BACKEND", "open_fails, nosuch, binary", 1);
    setenv("BP_LOG_LEVEL", "error", 1); /* the skips are warnings: keep test output quiet */
    bp_context *ctx = with_test_plugins();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(ctx, &be));
    cr_assert_str_eq(bp_backend_name(be), "binary:0");
    const char *why = bp_context_default_reason(ctx);
    cr_assert(strstr(why, "open_fails: skipped") && strstr(why, "no widget device found"), "%s", why);
    cr_assert(strstr(why, "nosuch: skipped"), "%s", why);
    cr_assert(strstr(why, "binary: chosen"), "%s", why);
    bp_context_destroy(ctx);
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

Test(loader, an_unknown_key_in_a_plugins_section_is_a_config_error)
{
    char path[] = "/tmp/bpt_loader_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("[backend.crashy]\nanswer = 42\nquestion = 6x9\n", f);
    fclose(f);
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    bp_context *ctx = NULL;
    BPT_FAILS(BP_ERR_CONFIG, bp_context_create(path, &ctx));
    cr_assert_null(ctx);
    char where[300];
    snprintf(where, sizeof where, "%s:3", path);
    cr_assert(strstr(bp_last_error(), where) && strstr(bp_last_error(), "question"), "%s",
              bp_last_error());
    unlink(path);
}

Test(loader, a_section_for_a_plugin_not_installed_is_ignored)
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

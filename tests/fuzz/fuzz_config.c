/* fuzz_config: the input is an ini file. bp_context_create must either refuse
 * it (a known status, a message, no context) or give a context whose every
 * setting and plugin record can be read, whose default backend resolves to a
 * known status, and which destroys cleanly (LeakSanitizer checks the rest).
 * Seeds: tests/fuzz/corpus/fuzz_config (conf/backplane.ini and variants). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <backplane/backplane.h>

#include "fz_anchor.h"
#include "fz_oracle.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fz_path[600];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = fz_setup();
    snprintf(fz_path, sizeof fz_path, "%s/backplane.ini", dir);
    fz_anchor(dir);
    return 0;
}

static void check_str(const char *what, const char *s)
{
    if (!s)
        fz_fail("%s is NULL", what);
    (void)strlen(s); /* ASan: a readable, terminated string */
}

static void walk_settings(bp_context *ctx)
{
    size_t n = bp_context_setting_count(ctx);
    for (size_t i = 0; i < n; i++) {
        bp_setting s = {.struct_size = sizeof(bp_setting)};
        fz_mark();
        bp_status st = bp_context_setting(ctx, i, &s);
        fz_status("bp_context_setting", st);
        if (st != BP_OK)
            fz_fail("bp_context_setting(%zu) of %zu failed: %s", i, n, bp_last_error());
        check_str("setting.section", s.section);
        check_str("setting.key", s.key);
        check_str("setting.value", s.value);
        check_str("setting.origin", s.origin);
    }
    bp_setting s = {.struct_size = sizeof(bp_setting)};
    fz_mark();
    bp_status st = bp_context_setting(ctx, n, &s);
    fz_status("bp_context_setting(past the end)", st);
    if (st == BP_OK)
        fz_fail("bp_context_setting accepted index %zu of %zu settings", n, n);
}

static void walk_plugins(bp_context *ctx)
{
    size_t n = bp_context_plugin_count(ctx);
    for (size_t i = 0; i < n; i++) {
        bp_plugin_record r = {.struct_size = sizeof(bp_plugin_record)};
        bp_status opened = BP_ERR_NOT_FOUND;
        for (int pass = 0; pass < 2; pass++) {
            fz_mark();
            bp_status st = bp_context_plugin(ctx, i, &r);
            fz_status("bp_context_plugin", st);
            if (st != BP_OK)
                fz_fail("bp_context_plugin(%zu) of %zu failed: %s", i, n, bp_last_error());
            check_str("record.name", r.name);
            check_str("record.path", r.path);
            check_str("record.version", r.version);
            check_str("record.message", r.message);
            fz_known("record.status", r.status);
            for (const bp_config_key *k = r.config_keys; k && k->name; k++)
                check_str("config key help", k->help);
            if (pass == 1) {
                if (opened == BP_OK && !r.loaded)
                    fz_fail("plugin %s opened though its record says it is not loaded", r.path);
                break;
            }
            fz_mark();
            opened = bp_context_plugin_open(ctx, i);
            fz_status("bp_context_plugin_open", opened);
        }
        if (r.opened && r.device_count < 0)
            fz_fail("plugin %s is open with %d devices", r.path, (int)r.device_count);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(fz_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        fz_fail("cannot write %s", fz_path);

    bp_context *ctx = (bp_context *)(uintptr_t)0x10; /* must become NULL on failure */
    fz_mark();
    bp_status st = bp_context_create(fz_path, &ctx);
    fz_status("bp_context_create", st);
    if (st != BP_OK) {
        if (ctx)
            fz_fail("bp_context_create failed with %s but left *out = %p", bp_status_string(st),
                    (void *)ctx);
        fz_stdout_check();
        return 0;
    }
    if (!ctx)
        fz_fail("bp_context_create returned BP_OK without a context");
    check_str("bp_context_config_path", bp_context_config_path(ctx));
    if (bp_context_log_level(ctx) < BP_LOG_DEBUG || bp_context_log_level(ctx) > BP_LOG_OFF)
        fz_fail("log level %d", (int)bp_context_log_level(ctx));
    walk_settings(ctx);

    bp_backend *be = (bp_backend *)(uintptr_t)0x10;
    fz_mark();
    st = bp_backend_default(ctx, &be);
    fz_status("bp_backend_default", st);
    if ((st == BP_OK) != (be != NULL))
        fz_fail("bp_backend_default returned %s with backend %p", bp_status_string(st),
                (void *)be);
    if (be && !*bp_backend_name(be))
        fz_fail("the default backend has no name");
    check_str("bp_context_default_reason", bp_context_default_reason(ctx));
    if (!*bp_context_default_reason(ctx))
        fz_fail("bp_backend_default left no reason");

    walk_plugins(ctx);
    bp_context_destroy(ctx);
    fz_stdout_check();
    return 0;
}

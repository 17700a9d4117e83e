/* Configuration: layering (defaults < file < environment), file discovery,
 * validation with file/line/key in every message. Tested through the public
 * API (the internal bp__config_* symbols are hidden in libbackplane.so). Each
 * Criterion test runs in its own process, so setenv/unsetenv stay local. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpt.h" /* before criterion/redirect.h, which needs criterion.h first */

#include <criterion/redirect.h>

#define SYSTEM_CONFIG "/etc/backplane/backplane.ini"

/* ---- fixture: a private temp dir as HOME and XDG_CONFIG_HOME -------------- */

static char tmpdir[64];
static char files[16][256];
static size_t n_files;
static char dirs[8][256];
static size_t n_dirs;

static void isolate(void)
{
    static const char *const vars[] = {"BP_CONFIG", "BP_DEFAULT_BACKEND", "BP_LOG_LEVEL",
                                       "BP_PLUGIN_PATH"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/bp_config_test_XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp: %s", strerror(errno));
    setenv("HOME", tmpdir, 1);
    setenv("XDG_CONFIG_HOME", tmpdir, 1);
}

static void cleanup(void)
{
    for (size_t i = n_files; i-- > 0;) {
        chmod(files[i], 0600);
        unlink(files[i]);
    }
    for (size_t i = n_dirs; i-- > 0;)
        rmdir(dirs[i]);
    if (tmpdir[0])
        rmdir(tmpdir);
    n_files = n_dirs = 0;
    tmpdir[0] = '\0';
}

TestSuite(config, .init = isolate, .fini = cleanup);

/* cr_skip_test leaves without running .fini: clean up first. */
#define SKIP(...)              \
    do {                       \
        cleanup();             \
        cr_skip_test(__VA_ARGS__); \
    } while (0)

static const char *track_dir(const char *path)
{
    cr_assert_lt(n_dirs, sizeof dirs / sizeof dirs[0]);
    snprintf(dirs[n_dirs], sizeof dirs[0], "%s", path);
    cr_assert(mkdir(dirs[n_dirs], 0700) == 0 || errno == EEXIST, "mkdir %s: %s", path,
              strerror(errno));
    return dirs[n_dirs++];
}

/* Write text to path (tracked for cleanup). */
static const char *write_file_at(const char *path, const char *text)
{
    cr_assert_lt(n_files, sizeof files / sizeof files[0]);
    snprintf(files[n_files], sizeof files[0], "%s", path);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
    cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    cr_assert_eq(fclose(f), 0);
    return files[n_files++];
}

/* A fresh ini file in the private temp dir holding text. */
static const char *write_ini(const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/cfgXXXXXX", tmpdir);
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
    close(fd);
    return write_file_at(path, text);
}

/* The effective setting (section, key); fails the test if absent. */
static bp_setting setting(bp_context *ctx, const char *section, const char *key)
{
    size_t n = bp_context_setting_count(ctx);
    for (size_t i = 0; i < n; i++) {
        bp_setting s = {.struct_size = sizeof s};
        BPT_OK(bp_context_setting(ctx, i, &s));
        if (strcmp(s.section, section) == 0 && strcmp(s.key, key) == 0)
            return s;
    }
    cr_assert_fail("no setting [%s] %s", section, key);
    return (bp_setting){0};
}

static void assert_setting(bp_context *ctx, const char *key, const char *value,
                           const char *origin)
{
    bp_setting s = setting(ctx, "backplane", key);
    cr_assert_str_eq(s.value, value, "[backplane] %s = '%s', wanted '%s'", key, s.value, value);
    cr_assert_str_eq(s.origin, origin, "[backplane] %s origin '%s', wanted '%s'", key, s.origin,
                     origin);
}

static void assert_defaults(bp_context *ctx)
{
    assert_setting(ctx, "default_backend", "cuda, blas_cpu, binary", "default");
    assert_setting(ctx, "log_level", "warn", "default");
    assert_setting(ctx, "plugin_path", "", "default");
    cr_assert_eq(bp_context_log_level(ctx), BP_LOG_WARN);
}

/* "FILE:LINE" */
static const char *at(const char *path, int line)
{
    static char buf[320];
    snprintf(buf, sizeof buf, "%s:%d", path, line);
    return buf;
}

/* bp_context_create(path) fails with code and the message holds each of the
 * NULL-terminated strings. */
static void assert_create_fails(bp_status code, const char *path, ...)
{
    bp_context *ctx = NULL;
    bp_status st = bp_context_create(path, &ctx);
    cr_assert_eq(st, code, "bp_context_create(%s) -> %s (wanted %s): %s", path ? path : "NULL",
                 bp_status_string(st), bp_status_string(code), bp_last_error());
    cr_assert_null(ctx);
    const char *msg = bp_last_error();
    va_list ap;
    va_start(ap, path);
    for (const char *want; (want = va_arg(ap, const char *)) != NULL;)
        cr_assert_not_null(strstr(msg, want), "message lacks '%s': %s", want, msg);
    va_end(ap);
}

static bool system_config_present(void)
{
    return access(SYSTEM_CONFIG, F_OK) == 0;
}

/* ---- layering ----------------------------------------------------------- */

Test(config, config_without_file_uses_builtin_defaults)
{
    if (system_config_present())
        SKIP("%s exists on this machine", SYSTEM_CONFIG);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(NULL, &ctx));
    cr_assert_null(bp_context_config_path(ctx));
    assert_defaults(ctx);
    bp_context_destroy(ctx);
}

Test(config, config_file_overrides_defaults_with_file_and_line_origin)
{
    const char *path = write_ini("; comment\n[backplane]\nlog_level = error\n"
                                 "default_backend = blas_cpu, binary\n");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    cr_assert_str_eq(bp_context_config_path(ctx), path);
    assert_setting(ctx, "log_level", "error", at(path, 3));
    assert_setting(ctx, "default_backend", "blas_cpu, binary", at(path, 4));
    assert_setting(ctx, "plugin_path", "", "default");
    cr_assert_eq(bp_context_log_level(ctx), BP_LOG_ERROR);
    bp_context_destroy(ctx);
}

Test(config, config_env_overrides_file)
{
    const char *path = write_ini("[backplane]\nlog_level = error\ndefault_backend = blas_cpu\n");
    setenv("BP_LOG_LEVEL", "debug", 1);
    setenv("BP_DEFAULT_BACKEND", "binary", 1);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    assert_setting(ctx, "log_level", "debug", "env BP_LOG_LEVEL");
    assert_setting(ctx, "default_backend", "binary", "env BP_DEFAULT_BACKEND");
    cr_assert_eq(bp_context_log_level(ctx), BP_LOG_DEBUG);
    bp_context_destroy(ctx);
}

Test(config, config_env_overrides_defaults_without_file)
{
    if (system_config_present())
        SKIP("%s exists on this machine", SYSTEM_CONFIG);
    setenv("BP_LOG_LEVEL", "  Info ", 1); /* trimmed, case-insensitive */
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(NULL, &ctx));
    cr_assert_null(bp_context_config_path(ctx));
    assert_setting(ctx, "log_level", "Info", "env BP_LOG_LEVEL");
    cr_assert_eq(bp_context_log_level(ctx), BP_LOG_INFO);
    bp_context_destroy(ctx);
}

Test(config, config_empty_env_value_counts_as_unset)
{
    if (system_config_present())
        SKIP("%s exists on this machine", SYSTEM_CONFIG);
    setenv("BP_CONFIG", "", 1);
    setenv("BP_LOG_LEVEL", "", 1);
    setenv("BP_DEFAULT_BACKEND", "", 1);
    setenv("XDG_CONFIG_HOME", "", 1);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(NULL, &ctx));
    cr_assert_null(bp_context_config_path(ctx));
    assert_defaults(ctx);
    bp_context_destroy(ctx);
}

Test(config, config_bp_config_names_the_file)
{
    const char *path = write_ini("[backplane]\nlog_level = info\n");
    setenv("BP_CONFIG", path, 1);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(NULL, &ctx));
    cr_assert_str_eq(bp_context_config_path(ctx), path);
    assert_setting(ctx, "log_level", "info", at(path, 2));
    bp_context_destroy(ctx);
}

Test(config, config_explicit_path_beats_bp_config)
{
    const char *named = write_ini("[backplane]\nlog_level = info\n");
    const char *given = write_ini("[backplane]\nlog_level = error\n");
    setenv("BP_CONFIG", named, 1);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(given, &ctx));
    cr_assert_str_eq(bp_context_config_path(ctx), given);
    assert_setting(ctx, "log_level", "error", at(given, 2));
    bp_context_destroy(ctx);
}

Test(config, config_user_file_found_in_xdg_config_home)
{
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/backplane", tmpdir);
    track_dir(dir);
    snprintf(path, sizeof path, "%s/backplane.ini", dir);
    write_file_at(path, "[backplane]\nlog_level = error\n");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(NULL, &ctx));
    cr_assert_str_eq(bp_context_config_path(ctx), path);
    assert_setting(ctx, "log_level", "error", at(path, 2));
    bp_context_destroy(ctx);
}

Test(config, config_user_file_found_in_home_when_xdg_is_empty)
{
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/.config", tmpdir);
    track_dir(dir);
    snprintf(dir, sizeof dir, "%s/.config/backplane", tmpdir);
    track_dir(dir);
    snprintf(path, sizeof path, "%s/backplane.ini", dir);
    write_file_at(path, "[backplane]\nlog_level = off\n");
    setenv("XDG_CONFIG_HOME", "", 1);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(NULL, &ctx));
    cr_assert_str_eq(bp_context_config_path(ctx), path);
    assert_setting(ctx, "log_level", "off", at(path, 2));
    cr_assert_eq(bp_context_log_level(ctx), BP_LOG_OFF);
    bp_context_destroy(ctx);
}

Test(config, config_bp_config_beats_user_file)
{
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/backplane", tmpdir);
    track_dir(dir);
    snprintf(path, sizeof path, "%s/backplane.ini", dir);
    write_file_at(path, "[backplane]\nlog_level = error\n");
    const char *named = write_ini("[backplane]\nlog_level = info\n");
    setenv("BP_CONFIG", named, 1);
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(NULL, &ctx));
    cr_assert_str_eq(bp_context_config_path(ctx), named);
    assert_setting(ctx, "log_level", "info", at(named, 2));
    bp_context_destroy(ctx);
}

Test(config, config_empty_file_gives_defaults)
{
    const char *path = write_ini("");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    cr_assert_str_eq(bp_context_config_path(ctx), path);
    assert_defaults(ctx);
    bp_context_destroy(ctx);
}

Test(config, config_comments_blank_lines_and_inline_comments_are_accepted)
{
    const char *path = write_ini("\xEF\xBB\xBF; utf-8 BOM, then a comment\r\n"
                                 "# another comment\r\n"
                                 "\r\n"
                                 "[backplane]\r\n"
                                 "   ; an indented comment\r\n"
                                 "log_level = info ; inline comment\r\n"
                                 "default_backend: binary\r\n"
                                 "[backplane]\r\n"
                                 "plugin_path = /opt/a:/opt/b\r\n");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    assert_setting(ctx, "log_level", "info", at(path, 6));
    assert_setting(ctx, "default_backend", "binary", at(path, 7));
    assert_setting(ctx, "plugin_path", "/opt/a:/opt/b", at(path, 9));
    bp_context_destroy(ctx);
}

Test(config, config_example_file_loads)
{
    const char *path = BPT_SOURCE_DIR "/conf/backplane.ini";
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    cr_assert_str_eq(bp_context_config_path(ctx), path);
    bp_setting s = setting(ctx, "backplane", "default_backend");
    cr_assert_not_null(strstr(s.origin, "backplane.ini:"), "origin %s", s.origin);
    bp_context_destroy(ctx);
}

Test(config, the_example_file_sets_and_names_the_built_in_defaults)
{
    /* conf/backplane.ini says its values are the built-in ones, and each
     * key's "; Default:" comment names that value */
    static const char *const keys[] = {"default_backend", "plugin_path", "log_level"};
    const char *path = BPT_SOURCE_DIR "/conf/backplane.ini";
    bp_context *none = NULL, *example = NULL;
    BPT_OK(bp_context_create(write_ini(""), &none));
    BPT_OK(bp_context_create(path, &example));
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        bp_setting builtin = setting(none, "backplane", keys[i]);
        bp_setting set = setting(example, "backplane", keys[i]);
        cr_assert_str_eq(set.value, builtin.value, "%s: the example sets '%s', the built-in "
                         "default is '%s'", keys[i], set.value, builtin.value);
        /* the last "; Default: " before the key's line */
        char line[64];
        snprintf(line, sizeof line, "\n%s =", keys[i]);
        const char *at = strstr(text, line), *doc = NULL;
        cr_assert_not_null(at, "no line '%s =' in the example", keys[i]);
        for (const char *p = text; (p = strstr(p, "; Default: ")) && p < at; p++)
            doc = p + strlen("; Default: ");
        cr_assert_not_null(doc, "%s has no '; Default:' comment", keys[i]);
        const char *want = builtin.value[0] ? builtin.value : "empty";
        cr_assert(strncmp(doc, want, strlen(want)) == 0, "%s: the comment says 'Default: %.40s', "
                  "the built-in default is '%s'", keys[i], doc, want);
    }
    bp_context_destroy(none);
    bp_context_destroy(example);
}

/* ---- errors ------------------------------------------------------------- */

Test(config, config_unknown_key_is_config_error_naming_file_line_and_key)
{
    const char *path = write_ini("[backplane]\nlog_level = warn\ncolour = red\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 3), "'colour'", "[backplane]",
                        "default_backend", "plugin_path", "log_level", NULL);
}

Test(config, config_unknown_section_is_config_error)
{
    /* An empty section is still checked. */
    const char *path = write_ini("[backplane]\nlog_level = warn\n\n[backplain]\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 4), "[backplain]", "[backend.NAME]", NULL);
}

Test(config, config_bad_backend_section_name_is_config_error)
{
    const char *path = write_ini("[backend.CUDA]\ndevices = 0\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 1), "backend.CUDA", "a-z", NULL);
}

Test(config, config_key_outside_any_section_is_config_error)
{
    const char *path = write_ini("log_level = info\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 1), "'log_level'", "[backplane]", NULL);
}

Test(config, config_bad_log_level_is_config_error)
{
    const char *path = write_ini("[backplane]\nlog_level = loud\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 2), "'loud'", "log_level", "[backplane]",
                        "debug", "off", NULL);
}

Test(config, config_bad_default_backend_is_config_error)
{
    static const char *const bad[] = {"CUDA", "cuda:x", "cuda:", "blas-cpu", "cuda 0", "cuda:0:1",
                                      ",", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "[backplane]\n\ndefault_backend = %s\n", bad[i]);
        const char *path = write_ini(text);
        assert_create_fails(BP_ERR_CONFIG, path, at(path, 3), "default_backend", "[backplane]",
                            NULL);
    }
}

Test(config, config_duplicate_key_is_config_error)
{
    const char *path = write_ini("[backplane]\nlog_level = info\n[backplane]\nlog_level = debug\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 4), "'log_level'", "line 2", NULL);
}

Test(config, config_indented_continuation_is_config_error)
{
    /* ini syntax would read line 3 as more of default_backend's value. */
    const char *path = write_ini("[backplane]\ndefault_backend = binary\n  log_level = info\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 3), "indent", NULL);
}

Test(config, config_indented_key_is_config_error_wherever_it_is)
{
    /* right after a section header ini syntax would read it as a key, so it
     * used to be accepted there and refused after another key */
    const char *path = write_ini("[backplane]\n  log_level = info\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 2), "indent", "log_level", NULL);
    path = write_ini("; comment\n\t[backplane]\nlog_level = info\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 2), "indent", NULL);
    path = write_ini("[backplane]\nlog_level = info\n\n   default_backend = binary\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 4), "indent", NULL);
}

Test(config, config_syntax_error_names_line)
{
    const char *path = write_ini("[backplane]\nlog_level = warn\n\nthis is not ini\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 4), "this is not ini", NULL);
}

Test(config, config_unclosed_section_header_is_syntax_error)
{
    const char *path = write_ini("; x\n[backplane\nlog_level = warn\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 2), "']'", NULL);
}

Test(config, config_too_long_line_is_config_error)
{
    char text[1024];
    int n = snprintf(text, sizeof text, "[backplane]\nplugin_path = /");
    memset(text + n, 'a', 600);
    snprintf(text + n + 600, sizeof text - (size_t)n - 600, "\nlog_level = warn\n");
    const char *path = write_ini(text);
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 2), "longer than", NULL);
}

Test(config, config_first_error_is_reported)
{
    const char *path = write_ini("[backplane]\ncolour = red\n[nope]\n???\n");
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 2), "'colour'", NULL);
}

Test(config, config_missing_explicit_file_is_io_error)
{
    char path[256];
    snprintf(path, sizeof path, "%s/does-not-exist.ini", tmpdir);
    assert_create_fails(BP_ERR_IO, path, path, strerror(ENOENT), NULL);
}

Test(config, config_missing_bp_config_file_is_io_error)
{
    char path[256];
    snprintf(path, sizeof path, "%s/does-not-exist.ini", tmpdir);
    setenv("BP_CONFIG", path, 1);
    assert_create_fails(BP_ERR_IO, NULL, path, "BP_CONFIG", strerror(ENOENT), NULL);
}

Test(config, config_directory_as_file_is_io_error)
{
    assert_create_fails(BP_ERR_IO, tmpdir, tmpdir, "directory", NULL);
}

/* Expect bp_context_create(path) (path may be NULL) to fail with BP_ERR_IO
 * naming want, the file that cannot be read. As root (which reads mode-000 files), the check
 * runs in a child that drops to uid/gid 65534 first; skipped if that fails. */
static void assert_unreadable_is_io_error(const char *path, const char *want)
{
    if (access(want, R_OK) != 0) {
        assert_create_fails(BP_ERR_IO, path, want, strerror(EACCES), NULL);
        return;
    }
    if (geteuid() != 0)
        SKIP("this user can read a mode-000 file");
    cr_assert_eq(chmod(tmpdir, 0755), 0); /* let the unprivileged child reach it */
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0 || access(want, R_OK) == 0)
            _exit(77);
        bp_context *ctx = NULL;
        bp_status st = bp_context_create(path, &ctx);
        const char *msg = bp_last_error();
        bool ok = st == BP_ERR_IO && !ctx && strstr(msg, want) && strstr(msg, strerror(EACCES));
        if (!ok)
            fprintf(stderr, "got %s: %s\n", bp_status_string(st), msg);
        _exit(ok ? 0 : 1);
    }
    int ws = 0;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_assert(WIFEXITED(ws), "child died (status %d)", ws);
    if (WEXITSTATUS(ws) == 77)
        SKIP("cannot drop root privileges to test an unreadable file");
    cr_assert_eq(WEXITSTATUS(ws), 0, "unreadable %s was not BP_ERR_IO naming it (see stderr)",
                 want);
}

Test(config, config_unreadable_file_is_io_error)
{
    const char *path = write_ini("[backplane]\nlog_level = warn\n");
    cr_assert_eq(chmod(path, 0), 0, "chmod: %s", strerror(errno));
    assert_unreadable_is_io_error(path, path);
}

Test(config, config_unreadable_user_file_is_io_error)
{
    /* The user's file is optional, but one that exists and cannot be read
     * is an error, not silently skipped. */
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/backplane", tmpdir);
    track_dir(dir);
    cr_assert_eq(chmod(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/backplane.ini", dir);
    write_file_at(path, "[backplane]\n");
    cr_assert_eq(chmod(path, 0), 0, "chmod: %s", strerror(errno));
    assert_unreadable_is_io_error(NULL, path);
}

Test(config, config_read_failure_is_io_error)
{
    /* /proc/self/mem opens but reading offset 0 fails (EIO). */
    if (access("/proc/self/mem", F_OK) != 0)
        SKIP("no /proc/self/mem");
    assert_create_fails(BP_ERR_IO, "/proc/self/mem", "/proc/self/mem", NULL);
}

Test(config, config_bad_env_value_names_variable)
{
    setenv("BP_LOG_LEVEL", "loud", 1);
    assert_create_fails(BP_ERR_CONFIG, NULL, "BP_LOG_LEVEL", "'loud'", "debug", NULL);
}

Test(config, config_bad_env_default_backend_names_variable)
{
    const char *path = write_ini("[backplane]\ndefault_backend = binary\n");
    setenv("BP_DEFAULT_BACKEND", "Bad Name", 1);
    assert_create_fails(BP_ERR_CONFIG, path, "BP_DEFAULT_BACKEND", "'Bad Name'", NULL);
}

Test(config, config_file_error_wins_over_env)
{
    /* The file is read first; its error is reported even if the env is fine. */
    const char *path = write_ini("[backplane]\nlog_level = loud\n");
    setenv("BP_LOG_LEVEL", "info", 1);
    assert_create_fails(BP_ERR_CONFIG, path, at(path, 2), "log_level", NULL);
}

/* ---- [backend.NAME] ------------------------------------------------------ */

Test(config, unknown_key_in_a_backend_section_fails_when_that_plugin_opens)
{
    const char *path = write_ini("[backplane]\ndefault_backend = binary\n\n[backend.binary]\n"
                                 "no_such_key = 1\n");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx)); /* no plugin is opened here */
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_CONFIG, bp_backend_get(ctx, "binary", &be));
    const char *msg = bp_last_error();
    cr_assert(strstr(msg, at(path, 5)) && strstr(msg, "'no_such_key'") &&
                  strstr(msg, "[backend.binary]") && strstr(msg, "binary plugin"),
              "%s", msg);
    bp_context_destroy(ctx);
}

Test(config, misspelled_backend_section_is_reported, .init = cr_redirect_stderr)
{
    const char *path = write_ini("[backend.binnary]\nthreads = 1\n");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx)); /* a warning, not an error */
    bp_setting s = setting(ctx, "backend.binnary", "threads");
    cr_assert_str_eq(s.value, "1");
    cr_assert_str_eq(s.origin, at(path, 2));
    cr_assert_not(s.used, "a key of a section no plugin reads is marked unused");
    bp_context_destroy(ctx);
    fflush(stderr);
    char log[2048] = "";
    FILE *f = cr_get_redirected_stderr();
    size_t n = fread(log, 1, sizeof log - 1, f);
    log[n] = '\0';
    cr_assert(strstr(log, "no backend plugin 'binnary' is installed") &&
                  strstr(log, "did you mean [backend.binary]?") && strstr(log, at(path, 2)),
              "stderr: %s", log);
}

Test(config, keys_a_plugin_declares_are_marked_used)
{
    const char *path = write_ini("[backplane]\nlog_level = warn\n");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    cr_assert(setting(ctx, "backplane", "log_level").used);
    bp_context_destroy(ctx);
}

/* ---- lists (bp__list_foreach, seen through default_backend) -------------- */

Test(config, list_foreach_trims_and_skips_empty)
{
    const char *path = write_ini("[backplane]\ndefault_backend = ,\t binary \t,, no_such_xyz:1 ,\n");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(ctx, &be));
    cr_assert_str_eq(bp_backend_plugin_name(be), "binary");
    bp_context_destroy(ctx);
}

Test(config, list_foreach_skips_unavailable_backends_in_order)
{
    /* plugins that are found but do not open here: skipped, in order */
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    setenv("BP_DEFAULT_BACKEND", "open_fails, wrong_abi:3 ,binary", 1);
    setenv("BP_LOG_LEVEL", "error", 1);
    const char *path = write_ini("");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(ctx, &be));
    cr_assert_str_eq(bp_backend_plugin_name(be), "binary");
    const char *why = bp_context_default_reason(ctx);
    const char *a = strstr(why, "open_fails: skipped"), *b = strstr(why, "wrong_abi:3: skipped");
    cr_assert(a && b && a < b, "reason lists the skipped backends in order: %s", why);
    bp_context_destroy(ctx);
}

Test(config, a_typo_in_the_file_s_default_backend_is_a_config_error_naming_file_line_and_fix)
{
    const char *path = write_ini("[backplane]\nlog_level = off\ndefault_backend = blascpu, binary\n");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    bp_backend *be = NULL;
    BPT_FAILS(BP_ERR_CONFIG, bp_backend_default(ctx, &be));
    cr_assert_null(be, "ran on binary instead");
    const char *e = bp_last_error();
    cr_assert(strstr(e, at(path, 3)) && strstr(e, "'blascpu'") && strstr(e, "did you mean 'blas_cpu'"),
              "%s", e);
    bp_context_destroy(ctx);
}

Test(config, bp_context_log_writes_one_line_to_stderr_at_or_above_the_level,
     .init = cr_redirect_stderr)
{
    const char *path = write_ini("[backplane]\nlog_level = warn\n");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    bp_context_log(ctx, BP_LOG_INFO, "an info line, below the level");
    bp_context_log(ctx, BP_LOG_WARN, "mylib: the same shape keeps changing");
    bp_context_log(NULL, BP_LOG_ERROR, "no context: the default level");
    bp_context_log(ctx, BP_LOG_WARN, NULL);
    bp_context_destroy(ctx);
    fflush(stderr);
    char log[2048] = "";
    FILE *f = cr_get_redirected_stderr();
    size_t n = fread(log, 1, sizeof log - 1, f);
    log[n] = '\0';
    cr_assert_str_eq(log,
                     "backplane: warn: mylib: the same shape keeps changing\n"
                     "backplane: error: no context: the default level\n"
                     "backplane: warn: \n");
}

/* Finding: when a plugin directory cannot be opened for any reason, the
 * loader treats it as absent (bp__scan_dir logs at debug level and returns
 * BP_OK). With the built-in directory that means a context with no plugins
 * at all, created successfully, and a misleading error later:
 * "no backend plugin named 'binary'. Plugins tried: (none found)".
 * ENOENT is the one reason to skip a directory quietly; ENOMEM (found by the
 * allocation-failure sweep: opendir failed as allocation k=42), EMFILE or
 * EACCES should be reported (BP_ERR_OUT_OF_MEMORY / BP_ERR_IO naming the
 * directory), or at least recorded for `backplane info`.
 *
 * This reproducer uses EMFILE: it fills the file-descriptor table, then
 * creates a context with the built-in defaults.
 *   cc -o /tmp/dir-repro findings/plugin-dir-open-error-swallowed/repro.c -Icore/include \
 *      -Lbuild/lib -lbackplane -Wl,-rpath,$PWD/build/lib && /tmp/dir-repro
 * (In a sanitized build add ASAN_OPTIONS=detect_leaks=0: LeakSanitizer needs a
 * descriptor at exit.)
 * Seen:  bp_context_create -> BP_OK, 0 plugin record(s)
 *        bp_backend_get(binary) -> BP_ERR_NOT_FOUND: no backend plugin named 'binary' ... (none found)
 * (with BP_LOG_LEVEL=debug: "plugin directory .../backplane: Too many open files") */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <backplane/backplane.h>

int main(void)
{
    setenv("HOME", "/nonexistent", 1);
    setenv("XDG_CONFIG_HOME", "/nonexistent", 1);
    unsetenv("BP_CONFIG");
    unsetenv("BP_PLUGIN_PATH");
    struct rlimit rl = {64, 64};
    setrlimit(RLIMIT_NOFILE, &rl);
    while (open("/dev/null", O_RDONLY) >= 0) /* use every descriptor */
        ;
    bp_context *ctx = NULL;
    bp_status st = bp_context_create(NULL, &ctx);
    printf("bp_context_create -> %s, %zu plugin record(s)\n", bp_status_string(st),
           bp_context_plugin_count(ctx));
    bp_backend *b = NULL;
    st = bp_backend_get(ctx, "binary", &b);
    printf("bp_backend_get(binary) -> %s: %s\n", bp_status_string(st), st ? bp_last_error() : "");
    fflush(stdout);
    bp_context_destroy(ctx);
    return 0;
}

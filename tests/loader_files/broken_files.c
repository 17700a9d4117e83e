/* Broken files in a plugin directory (docs/reliability.md). The loader scans
 * plugin_path directories for bp_*.so; whatever such a file is, it must be
 * recorded as rejected with a reason while the context is made and the other
 * plugins work: "one broken file never stops the others". Each case runs in
 * a child process with a time limit, so that a crash or a hang is reported
 * for that case and the others still run.
 *
 * usage: broken_files [CASE...]   (default: every case)
 * exit: 0 when every case held. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <backplane/backplane.h>

#define LIMIT_SECONDS 20

static char builtin_binary[4096]; /* the real bp_binary.so, for truncated copies */

/* ---- making the broken files ------------------------------------------------ */

static bool copy_prefix(const char *to, long bytes)
{
    FILE *in = fopen(builtin_binary, "rb"), *out = fopen(to, "wb");
    bool ok = in && out;
    if (ok && bytes < 0) { /* half of the file */
        fseek(in, 0, SEEK_END);
        bytes = ftell(in) / 2;
        fseek(in, 0, SEEK_SET);
    }
    for (long i = 0; ok && (bytes < 0 || i < bytes); i++) {
        int c = fgetc(in);
        if (c == EOF)
            break;
        fputc(c, out);
    }
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        ok = false;
    return ok;
}

static bool make_dir(const char *p) { return mkdir(p, 0755) == 0; }
static bool make_empty(const char *p) { return copy_prefix(p, 0); }
static bool make_text(const char *p)
{
    FILE *f = fopen(p, "w");
    return f && fputs("not a shared object\n", f) >= 0 && fclose(f) == 0;
}
static bool make_dev_zero(const char *p) { return symlink("/dev/zero", p) == 0; }
static bool make_dangling(const char *p) { return symlink("/nonexistent/bp_x.so", p) == 0; }
static bool make_loop(const char *p) { return symlink(p, p) == 0; }
static bool make_truncated_header(const char *p) { return copy_prefix(p, 3000); }
static bool make_truncated_half(const char *p) { return copy_prefix(p, -1); }
static bool make_fifo(const char *p) { return mkfifo(p, 0644) == 0; }
static bool make_socket(const char *p)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(p) >= sizeof a.sun_path)
        return false;
    strcpy(a.sun_path, p);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    return fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0; /* left open */
}

typedef struct broken_case {
    const char *name;            /* the behaviour checked */
    const char *file;            /* its name in the plugin directory */
    bool (*make)(const char *path);
} broken_case;

static const broken_case cases[] = {
    {"a_directory_named_like_a_plugin_is_rejected", "bp_dir.so", make_dir},
    {"an_empty_file_is_rejected", "bp_empty.so", make_empty},
    {"a_text_file_is_rejected", "bp_text.so", make_text},
    {"a_link_to_dev_zero_is_rejected", "bp_zero.so", make_dev_zero},
    {"a_dangling_link_is_rejected", "bp_dangling.so", make_dangling},
    {"a_link_loop_is_rejected", "bp_loop.so", make_loop},
    {"a_plugin_truncated_inside_its_headers_is_rejected", "bp_trunc3k.so", make_truncated_header},
    {"a_plugin_truncated_to_half_is_rejected", "bp_trunchalf.so", make_truncated_half},
    {"a_fifo_is_rejected_without_blocking", "bp_fifo.so", make_fifo},
    {"a_socket_is_rejected", "bp_socket.so", make_socket},
};

/* ---- one case, in a child ------------------------------------------------------ */

static int child(const char *dir, const char *file)
{
    char ini[4200], broken[4200];
    snprintf(ini, sizeof ini, "%s.ini", dir);
    snprintf(broken, sizeof broken, "%s/%s", dir, file);
    FILE *f = fopen(ini, "w");
    if (!f || fprintf(f, "[backplane]\nplugin_path = %s\nlog_level = off\n", dir) < 0 ||
        fclose(f) != 0)
        return 3;
    bp_context *ctx = NULL;
    bp_status st = bp_context_create(ini, &ctx);
    if (st != BP_OK) {
        fprintf(stderr, "bp_context_create failed: %s: %s\n", bp_status_string(st), bp_last_error());
        return 1;
    }
    int bad = 0;
    bp_backend *b = NULL;
    if ((st = bp_backend_get(ctx, "binary", &b)) != BP_OK) {
        fprintf(stderr, "the binary backend no longer opens: %s\n", bp_last_error());
        bad = 1;
    }
    bool recorded = false;
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++) {
        bp_plugin_record r = {.struct_size = sizeof(bp_plugin_record)};
        if (bp_context_plugin(ctx, i, &r) != BP_OK || strcmp(r.path, broken) != 0)
            continue;
        /* plugins load on first use: load this one now, as `backplane info` does */
        if (bp_context_plugin_open(ctx, i) == BP_OK) {
            fprintf(stderr, "%s: bp_context_plugin_open succeeded\n", file);
            bad = 1;
        }
        if (bp_context_plugin(ctx, i, &r) != BP_OK) {
            fprintf(stderr, "%s: the record cannot be read after the load\n", file);
            bad = 1;
        }
        recorded = true;
        if (r.loaded || !*r.message) {
            fprintf(stderr, "%s: loaded %d, reason \"%s\"\n", file, r.loaded, r.message);
            bad = 1;
        }
    }
    if (!recorded) {
        fprintf(stderr, "%s has no plugin record saying why it was rejected\n", file);
        bad = 1;
    }
    bp_context_destroy(ctx);
    return bad;
}

static int run_case(const broken_case *c, const char *tmp)
{
    char dir[4096], log[4200], cmd[8500];
    snprintf(dir, sizeof dir, "%s/%s", tmp, c->name);
    snprintf(log, sizeof log, "%s.log", dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, c->file);
    if (!make_dir(dir) || !c->make(path)) {
        printf("  %-56s SETUP FAILED (%s)\n", c->name, strerror(errno));
        return 1;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
            dup2(fd, 2);
        alarm(LIMIT_SECONDS);
        _exit(child(dir, c->file));
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    char what[200];
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0)
        snprintf(what, sizeof what, "ok");
    else if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGALRM)
        snprintf(what, sizeof what, "FAILED: hung (killed after %d s)", LIMIT_SECONDS);
    else if (WIFSIGNALED(ws))
        snprintf(what, sizeof what, "FAILED: killed by %s", strsignal(WTERMSIG(ws)));
    else
        snprintf(what, sizeof what, "FAILED: exit status %d", WEXITSTATUS(ws));
    printf("  %-56s %s\n", c->name, what);
    if (strcmp(what, "ok") != 0) {
        snprintf(cmd, sizeof cmd, "grep -m3 -E 'ERROR|failed|rejected|record|opens' '%s' | sed 's/^/      /'", log);
        fflush(stdout);
        if (system(cmd) < 0)
            perror("system");
    }
    return strcmp(what, "ok") != 0;
}

int main(int argc, char **argv)
{
    /* the real plugin's file, from a context with the built-in plugins */
    bp_context *ctx = NULL;
    if (bp_context_create(NULL, &ctx) != BP_OK) {
        fprintf(stderr, "broken_files: %s\n", bp_last_error());
        return 2;
    }
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++) {
        bp_plugin_record r = {.struct_size = sizeof(bp_plugin_record)};
        if (bp_context_plugin(ctx, i, &r) == BP_OK && strcmp(r.name, "binary") == 0)
            snprintf(builtin_binary, sizeof builtin_binary, "%s", r.path);
    }
    bp_context_destroy(ctx);
    char tmp[] = "/tmp/bp-broken-files-XXXXXX";
    if (!*builtin_binary || !mkdtemp(tmp)) {
        fprintf(stderr, "broken_files: no built-in binary plugin, or no temporary directory\n");
        return 2;
    }
    int failed = 0, ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            wanted = wanted || strcmp(argv[a], cases[i].name) == 0;
        if (wanted) {
            failed += run_case(&cases[i], tmp);
            ran++;
        }
    }
    printf("broken plugin files: %d of %d case(s) failed", failed, ran);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (failed)
        printf(" (logs in %s)\n", tmp);
    else if (printf("\n") < 0 || system(cmd) != 0)
        fprintf(stderr, "broken_files: could not remove %s\n", tmp);
    return failed ? 1 : 0;
}

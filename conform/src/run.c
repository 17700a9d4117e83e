/* Running the cases in worker processes.
 *
 * The parent never creates a context or loads a plugin (CUDA cannot survive a
 * fork): it forks a worker, which opens the backend, turns on guard bytes,
 * and runs the selected cases in order, announcing each on the result pipe
 * before running it and reporting its result after. Plugin stdout goes to a
 * temporary file the parent inspects (a plugin must never write to stdout).
 * If the worker dies, or a case runs past the timeout (the parent kills the
 * worker), the announced case is CRASH / TIMEOUT and a new worker starts from
 * the next case. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void put(int fd, const char *s)
{
    size_t len = strlen(s);
    while (len > 0) {
        ssize_t w = write(fd, s, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            _exit(3);
        }
        s += w;
        len -= (size_t)w;
    }
}

static void clean(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\t' || *s == '\r')
            *s = ' ';
}

static bool truthy(const char *v)
{
    return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0 ||
                 strcmp(v, "on") == 0);
}

/* ---- the worker --------------------------------------------------------------- */

static void worker(const cf_options *opt, const cf_case *cases, const int *selected, size_t from,
                   size_t n_sel, int wfd, int out_fd)
{
    char line[1400];
    struct rlimit no_core = {0, 0}; /* a crashing plugin must not drop a core per case */
    setrlimit(RLIMIT_CORE, &no_core);
    if (dup2(out_fd, STDOUT_FILENO) < 0)
        _exit(4);
    bp_context *ctx = NULL;
    bp_status st = bp_context_create(opt->config, &ctx);
    if (st != BP_OK) {
        char reason[1200];
        snprintf(reason, sizeof reason, "could not create the context: %s", bp_last_error());
        clean(reason);
        snprintf(line, sizeof line, "X %d\t%s", (int)st, reason);
        put(wfd, line);
        put(wfd, "\n");
        _exit(0);
    }
    bp_context_set_debug_guards(ctx, 64);
    bp_backend *be = NULL;
    const char *name = opt->target;
    st = bp_backend_get(ctx, name, &be);
    if (st != BP_OK) {
        const char *why = bp_last_error();
        /* the plugin's own reason is on its record when the open failed */
        size_t stem = strcspn(name, ":");
        for (size_t i = 0; (!why || !why[0]) && i < bp_context_plugin_count(ctx); i++) {
            bp_plugin_record rec = {.struct_size = sizeof rec};
            if (bp_context_plugin(ctx, i, &rec) == BP_OK &&
                ((strlen(rec.name) == stem && strncmp(rec.name, name, stem) == 0) ||
                 strcmp(rec.path, name) == 0))
                why = rec.message;
        }
        char reason[1200];
        snprintf(reason, sizeof reason, "%s", why ? why : "");
        clean(reason);
        snprintf(line, sizeof line, "X %d\t%s", (int)st, reason);
        put(wfd, line);
        put(wfd, "\n");
        bp_context_destroy(ctx);
        _exit(0);
    }
    cf_worker_env env = {ctx, be, opt->plugin_path, false, opt->tols};
    const char *plugin = bp_backend_plugin_name(be);
    const char *version = "";
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++) {
        bp_plugin_record rec = {.struct_size = sizeof rec};
        if (bp_context_plugin(ctx, i, &rec) == BP_OK && rec.loaded && strcmp(rec.name, plugin) == 0) {
            version = rec.version;
            if (!env.plugin_path)
                env.plugin_path = rec.path;
        }
    }
    /* TF32 hook: the ABI has no declaration yet; the config's
     * [backend.NAME] tf32 = true loosens f32 matmul (tolerances.txt). */
    char section[96];
    snprintf(section, sizeof section, "backend.%s", plugin);
    for (size_t i = 0; i < bp_context_setting_count(ctx); i++) {
        bp_setting s = {.struct_size = sizeof s};
        if (bp_context_setting(ctx, i, &s) == BP_OK && strcmp(s.section, section) == 0 &&
            strcmp(s.key, "tf32") == 0)
            env.tf32 = truthy(s.value);
    }
    snprintf(line, sizeof line, "O %s\t%s\n", bp_backend_name(be), version);
    put(wfd, line);
    for (size_t p = from; p < n_sel; p++) {
        snprintf(line, sizeof line, "S %zu\n", p);
        put(wfd, line);
        cf_result r;
        memset(&r, 0, sizeof r);
        cf_exec_case(&env, &cases[selected[p]], &r);
        clean(r.message);
        snprintf(line, sizeof line, "R %zu\t%d\t%.17g\t%.17g\t%d\t%s\n", p, (int)r.status,
                 r.max_error, r.tolerance, r.supports_mismatch ? 1 : 0, r.message);
        put(wfd, line);
    }
    bp_context_destroy(ctx);
    _exit(0);
}

/* ---- the parent ----------------------------------------------------------------- */

static void fill_names(cf_result *r, const cf_case *c)
{
    snprintf(r->op, sizeof r->op, "%s", c->name);
    snprintf(r->dtype, sizeof r->dtype, "%s", (int)c->dtype >= 0 ? bp_dtype_name(c->dtype) : "-");
    snprintf(r->shape, sizeof r->shape, "%s", c->label);
}

static void progress(const cf_options *opt, const cf_case *cases, const int *selected, size_t p,
                     size_t n_sel, const char **last_op)
{
    if (!opt->progress)
        return;
    const char *op = cases[selected[p]].name;
    if (*last_op && strcmp(*last_op, op) == 0)
        return;
    *last_op = op;
    fprintf(stderr, "conform: [%zu/%zu] %s\n", p + 1, n_sel, op);
}

bool cf_run_cases(const cf_options *opt, const cf_case *cases, const int *selected, size_t n_sel,
                  cf_run *run)
{
    memset(run, 0, sizeof *run);
    run->results = calloc(n_sel + 2, sizeof *run->results);
    if (!run->results)
        return false;
    FILE *captured = tmpfile();
    if (!captured)
        return false;
    int out_fd = fileno(captured);
    size_t next = 0;
    const char *last_op = NULL;
    bool fatal = false;
    bool *done = calloc(n_sel + 1, sizeof *done);
    if (!done) {
        fclose(captured);
        return false;
    }
    while (next < n_sel && !fatal) {
        int fds[2];
        if (pipe(fds) != 0)
            break;
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid < 0) {
            close(fds[0]);
            close(fds[1]);
            break;
        }
        if (pid == 0) {
            close(fds[0]);
            worker(opt, cases, selected, next, n_sel, fds[1], out_fd);
            _exit(0);
        }
        close(fds[1]);
        char buf[8192];
        size_t used = 0;
        long current = -1;
        double started = now();
        double startup = opt->timeout * 6 > 60 ? opt->timeout * 6 : 60;
        bool eof = false;
        while (!eof) {
            double limit = current >= 0 ? opt->timeout : startup;
            double left = limit - (now() - started);
            struct pollfd pf = {fds[0], POLLIN, 0};
            int pr = left > 0 ? poll(&pf, 1, (int)ceil(left * 1000)) : 0;
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr == 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                if (current >= 0) {
                    cf_result *r = &run->results[current];
                    fill_names(r, &cases[selected[current]]);
                    r->index = selected[current];
                    r->status = CF_TIMEOUT;
                    snprintf(r->message, sizeof r->message,
                             "%s [%s] %s: no result within %g s (--timeout); the worker was killed",
                             r->op, r->dtype, r->shape, opt->timeout);
                    done[current] = true;
                    next = (size_t)current + 1;
                } else {
                    run->open_status = BP_ERR_BACKEND;
                    snprintf(run->open_message, sizeof run->open_message,
                             "the worker did not open the backend within %g s", startup);
                    fatal = true;
                }
                close(fds[0]);
                goto next_worker;
            }
            ssize_t n = read(fds[0], buf + used, sizeof buf - 1 - used);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                eof = true;
                break;
            }
            used += (size_t)n;
            buf[used] = '\0';
            char *line = buf, *nl;
            while ((nl = strchr(line, '\n')) != NULL) {
                *nl = '\0';
                if (line[0] == 'O') {
                    char *tab = strchr(line + 2, '\t');
                    if (tab)
                        *tab = '\0';
                    snprintf(run->backend_name, sizeof run->backend_name, "%s", line + 2);
                    snprintf(run->plugin_version, sizeof run->plugin_version, "%s",
                             tab ? tab + 1 : "");
                    run->opened = true;
                } else if (line[0] == 'X') {
                    char *tab = strchr(line + 2, '\t');
                    run->open_status = atoi(line + 2);
                    snprintf(run->open_message, sizeof run->open_message, "%s", tab ? tab + 1 : "");
                    fatal = true;
                } else if (line[0] == 'S') {
                    current = atol(line + 2);
                    started = now();
                    progress(opt, cases, selected, (size_t)current, n_sel, &last_op);
                } else if (line[0] == 'R') {
                    char *f[6];
                    char *s = line + 2;
                    int nf = 0;
                    while (nf < 6) {
                        f[nf++] = s;
                        char *tab = strchr(s, '\t');
                        if (!tab || nf == 6)
                            break;
                        *tab = '\0';
                        s = tab + 1;
                    }
                    long p = atol(f[0]);
                    if (nf == 6 && p >= 0 && (size_t)p < n_sel) {
                        cf_result *r = &run->results[p];
                        fill_names(r, &cases[selected[p]]);
                        r->index = selected[p];
                        r->status = (cf_status)atoi(f[1]);
                        r->max_error = strtod(f[2], NULL);
                        r->tolerance = strtod(f[3], NULL);
                        r->supports_mismatch = atoi(f[4]) != 0;
                        snprintf(r->message, sizeof r->message, "%s", f[5]);
                        done[p] = true;
                        next = (size_t)p + 1;
                    }
                    current = -1;
                    started = now();
                }
                line = nl + 1;
            }
            used = strlen(line);
            memmove(buf, line, used + 1);
            if (used >= sizeof buf - 1) /* a line longer than the buffer: drop it */
                used = 0;
        }
        close(fds[0]);
        int wst = 0;
        waitpid(pid, &wst, 0);
        if (current >= 0) {
            cf_result *r = &run->results[current];
            fill_names(r, &cases[selected[current]]);
            r->index = selected[current];
            r->status = CF_CRASH;
            if (WIFSIGNALED(wst))
                snprintf(r->message, sizeof r->message, "%s [%s] %s: the worker died with signal %d (%s)",
                         r->op, r->dtype, r->shape, WTERMSIG(wst), strsignal(WTERMSIG(wst)));
            else
                snprintf(r->message, sizeof r->message, "%s [%s] %s: the worker exited with status %d "
                         "inside the op (a plugin must never exit)", r->op, r->dtype, r->shape,
                         WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
            done[current] = true;
            next = (size_t)current + 1;
        } else if (!run->opened && !fatal) {
            run->open_status = BP_ERR_BACKEND;
            snprintf(run->open_message, sizeof run->open_message,
                     "the worker died while opening the backend (status 0x%x)", wst);
            fatal = true;
        }
    next_worker:;
    }
    free(done);
    run->n_results = fatal && !run->opened ? 0 : n_sel;
    if (run->opened) {
        if (opt->row_supports) {
            cf_result *r = &run->results[run->n_results++];
            memset(r, 0, sizeof *r);
            r->index = -1;
            snprintf(r->op, sizeof r->op, "contract.supports");
            snprintf(r->dtype, sizeof r->dtype, "-");
            snprintf(r->shape, sizeof r->shape, "every case");
            size_t bad = 0;
            const char *first = NULL;
            for (size_t i = 0; i < n_sel; i++)
                if (run->results[i].supports_mismatch && bad++ == 0)
                    first = run->results[i].message;
            r->status = bad ? CF_FAIL : CF_PASS;
            if (bad)
                snprintf(r->message, sizeof r->message,
                         "contract.supports: %zu case(s) where supports() disagrees with the op; first: %.400s",
                         bad, first);
        }
        if (opt->row_stdout) {
            cf_result *r = &run->results[run->n_results++];
            memset(r, 0, sizeof *r);
            r->index = -1;
            snprintf(r->op, sizeof r->op, "contract.stdout");
            snprintf(r->dtype, sizeof r->dtype, "-");
            snprintf(r->shape, sizeof r->shape, "every case");
            struct stat sb;
            fflush(captured);
            long size = fstat(out_fd, &sb) == 0 ? (long)sb.st_size : 0;
            r->status = size ? CF_FAIL : CF_PASS;
            if (size) {
                char head[121] = "";
                ssize_t got = pread(out_fd, head, sizeof head - 1, 0);
                head[got > 0 ? got : 0] = '\0';
                clean(head);
                snprintf(r->message, sizeof r->message,
                         "contract.stdout: the plugin wrote %ld byte(s) to stdout (it must never); "
                         "first: \"%s\"", size, head);
            }
        }
    }
    fclose(captured);
    return true;
}

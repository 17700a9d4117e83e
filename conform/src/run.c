/* Running the cases in worker processes (the parent's side; worker.c is the
 * other).
 *
 * The parent never creates a context or loads a plugin (CUDA cannot survive a
 * fork): it forks a worker, which opens the backend and runs the selected
 * cases in order, announcing each on the result pipe before running it and
 * reporting its result after. Plugin stdout goes to a temporary file the
 * parent inspects (a plugin must never write to stdout). If the worker dies,
 * or a case runs past the timeout (the parent kills the worker), the
 * announced case is CRASH / TIMEOUT and a new worker starts from the next
 * case. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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

/* The whole run, as the parent sees it. */
typedef struct supervisor {
    const cf_options *opt;
    const cf_case *cases;
    const int *selected;
    size_t n_sel;
    cf_run *run;
    size_t next;          /* the first case no worker has finished */
    bool fatal;           /* the backend cannot be opened: stop */
    /* progress on stderr */
    size_t n_rows;        /* every row the report will count: the cases and the parent's rows */
    bool tty;             /* one line, rewritten in place; else a line per tenth */
    const char *last_op;
    size_t last_tenth;
    size_t shown_width;   /* of the line on the terminal, to clear it */
    double shown_at;      /* when it was last rewritten */
} supervisor;

/* One worker. */
typedef struct worker {
    pid_t pid;
    int fd;               /* the read end of its result pipe */
    long current;         /* the case it announced and has not finished, or -1 */
    double started;       /* when it started that case (or itself) */
    char buf[8192];       /* a partial line */
    size_t used;
} worker;

/* The result slot of selected case p, named. */
static cf_result *result_for(supervisor *s, size_t p)
{
    cf_result *r = &s->run->results[p];
    const cf_case *c = &s->cases[s->selected[p]];
    snprintf(r->op, sizeof r->op, "%s", c->name);
    snprintf(r->dtype, sizeof r->dtype, "%s", (int)c->dtype >= 0 ? bp_dtype_name(c->dtype) : "-");
    snprintf(r->shape, sizeof r->shape, "%s", c->label);
    r->index = s->selected[p];
    return r;
}

/* Row p (0-based, of n_rows) named op is starting. On a terminal one line,
 * rewritten as the op changes and at most five times a second; elsewhere (a log, CI) a line each time another
 * tenth of the rows is reached, so a run writes at most eleven. */
static void progress_at(supervisor *s, size_t p, const char *op)
{
    if (!s->opt->progress)
        return;
    if (s->tty) {
        double t = now();
        if (s->last_op && strcmp(s->last_op, op) == 0 && t - s->shown_at < 0.2 &&
            p + 1 < s->n_rows)
            return; /* the same op, shown a moment ago */
        s->last_op = op;
        s->shown_at = t;
        char line[160];
        int n = snprintf(line, sizeof line, "conform: [%zu/%zu] %s", p + 1, s->n_rows, op);
        size_t len = n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
        fprintf(stderr, "\r%s%*s", line,
                s->shown_width > len ? (int)(s->shown_width - len) : 0, "");
        fflush(stderr);
        s->shown_width = len;
        return;
    }
    size_t tenth = (p + 1) * 10 / s->n_rows;
    if (p == 0 || tenth > s->last_tenth) {
        s->last_tenth = tenth;
        fprintf(stderr, "conform: [%zu/%zu] %3zu%% %s\n", p + 1, s->n_rows, (p + 1) * 100 / s->n_rows,
                op);
    }
}

static void progress(supervisor *s, size_t p)
{
    progress_at(s, p, s->cases[s->selected[p]].name);
}

/* The run is over: take the terminal's line away (the caller reports). */
static void progress_end(supervisor *s)
{
    if (s->opt->progress && s->tty && s->shown_width)
        fprintf(stderr, "\r%*s\r", (int)s->shown_width, "");
}

/* ---- the lines of the result pipe (worker.c) ----------------------------------- */

static void on_opened(supervisor *s, char *rest)
{
    char *tab = strchr(rest, '\t');
    if (tab)
        *tab = '\0';
    snprintf(s->run->backend_name, sizeof s->run->backend_name, "%s", rest);
    snprintf(s->run->plugin_version, sizeof s->run->plugin_version, "%s", tab ? tab + 1 : "");
    s->run->opened = true;
}

static void on_open_failed(supervisor *s, const char *rest)
{
    const char *tab = strchr(rest, '\t');
    s->run->open_status = atoi(rest);
    snprintf(s->run->open_message, sizeof s->run->open_message, "%s", tab ? tab + 1 : "");
    cf_unescape_lines(s->run->open_message);
    s->fatal = true;
}

/* "p<TAB>status<TAB>max_error<TAB>tolerance<TAB>mismatch<TAB>message" */
static void on_result(supervisor *s, char *rest)
{
    char *f[6];
    int nf = 0;
    while (nf < 6) {
        f[nf++] = rest;
        char *tab = strchr(rest, '\t');
        if (!tab || nf == 6)
            break;
        *tab = '\0';
        rest = tab + 1;
    }
    long p = atol(f[0]);
    if (nf < 6 || p < 0 || (size_t)p >= s->n_sel)
        return;
    cf_result *r = result_for(s, (size_t)p);
    r->status = (cf_status)atoi(f[1]);
    r->max_error = strtod(f[2], NULL);
    r->tolerance = strtod(f[3], NULL);
    r->supports_mismatch = atoi(f[4]) != 0;
    snprintf(r->message, sizeof r->message, "%s", f[5]);
    s->next = (size_t)p + 1;
}

static void on_line(supervisor *s, worker *w, char *line)
{
    switch (line[0]) {
    case 'O': on_opened(s, line + 2); break;
    case 'X': on_open_failed(s, line + 2); break;
    case 'S':
        w->current = atol(line + 2);
        w->started = now();
        progress(s, (size_t)w->current);
        break;
    case 'R':
        on_result(s, line + 2);
        w->current = -1;
        w->started = now();
        break;
    default: break;
    }
}

/* Take the complete lines of what was read; keep a partial one. */
static void take_lines(supervisor *s, worker *w)
{
    char *line = w->buf, *nl;
    while ((nl = strchr(line, '\n')) != NULL) {
        *nl = '\0';
        on_line(s, w, line);
        line = nl + 1;
    }
    w->used = strlen(line);
    memmove(w->buf, line, w->used + 1);
    if (w->used >= sizeof w->buf - 1) /* a line longer than the buffer: drop it */
        w->used = 0;
}

/* ---- a worker's life ----------------------------------------------------------- */

/* Fork a worker for the cases from s->next. false if none could be made. */
static bool spawn(supervisor *s, int out_fd, worker *w)
{
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        close(fds[0]);
        cf_worker_main(s->opt, s->cases, s->selected, s->next, s->n_sel, fds[1], out_fd);
    }
    close(fds[1]);
    memset(w, 0, sizeof *w);
    w->pid = pid;
    w->fd = fds[0];
    w->current = -1;
    w->started = now();
    return true;
}

/* No line in time: kill the worker. A case running is a TIMEOUT; a worker
 * that never opened the backend ends the run. */
static void on_timeout(supervisor *s, worker *w, double startup)
{
    kill(w->pid, SIGKILL);
    waitpid(w->pid, NULL, 0);
    if (w->current >= 0) {
        cf_result *r = result_for(s, (size_t)w->current);
        r->status = CF_TIMEOUT;
        snprintf(r->message, sizeof r->message,
                 "%s [%s] %s: no result within %g s (--timeout); the worker was killed", r->op,
                 r->dtype, r->shape, s->opt->timeout);
        s->next = (size_t)w->current + 1;
    } else {
        s->run->open_status = BP_ERR_BACKEND;
        snprintf(s->run->open_message, sizeof s->run->open_message,
                 "the worker did not open the backend within %g s", startup);
        s->fatal = true;
    }
}

/* The worker ended (wst from waitpid). A case running crashed; a worker that
 * died before opening the backend ends the run. */
static void on_exit_status(supervisor *s, worker *w, int wst)
{
    if (w->current >= 0) {
        cf_result *r = result_for(s, (size_t)w->current);
        r->status = CF_CRASH;
        if (WIFSIGNALED(wst))
            snprintf(r->message, sizeof r->message, "%s [%s] %s: the worker died with signal %d (%s)",
                     r->op, r->dtype, r->shape, WTERMSIG(wst), strsignal(WTERMSIG(wst)));
        else
            snprintf(r->message, sizeof r->message, "%s [%s] %s: the worker exited with status %d "
                     "inside the op (a plugin must never exit)", r->op, r->dtype, r->shape,
                     WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
        s->next = (size_t)w->current + 1;
    } else if (!s->run->opened && !s->fatal) {
        s->run->open_status = BP_ERR_BACKEND;
        snprintf(s->run->open_message, sizeof s->run->open_message,
                 "the worker died while opening the backend (status 0x%x)", wst);
        s->fatal = true;
    }
}

/* Read the worker's lines until it ends or falls silent past its time: the
 * timeout per case, or a generous start-up allowance (6 timeouts, at least
 * 60 s) to open the backend. */
static void supervise(supervisor *s, worker *w)
{
    double startup = s->opt->timeout * 6 > 60 ? s->opt->timeout * 6 : 60;
    for (;;) {
        double limit = w->current >= 0 ? s->opt->timeout : startup;
        double left = limit - (now() - w->started);
        struct pollfd pf = {w->fd, POLLIN, 0};
        int pr = left > 0 ? poll(&pf, 1, (int)ceil(left * 1000)) : 0;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0) {
            on_timeout(s, w, startup);
            break;
        }
        /* take_lines keeps used below sizeof buf - 1; saying so here also
         * tells GCC 13's fortified read (-Wstringop-overflow) the room left. */
        size_t room = w->used < sizeof w->buf - 1 ? sizeof w->buf - 1 - w->used : 0;
        if (room == 0)
            w->used = 0, room = sizeof w->buf - 1;
        ssize_t n = read(w->fd, w->buf + w->used, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int wst = 0;
            waitpid(w->pid, &wst, 0);
            on_exit_status(s, w, wst);
            break;
        }
        w->used += (size_t)n;
        w->buf[w->used] = '\0';
        take_lines(s, w);
    }
    close(w->fd);
}

/* ---- the rows the parent adds --------------------------------------------------- */

static cf_result *contract_row(cf_run *run, const char *name)
{
    cf_result *r = &run->results[run->n_results++];
    memset(r, 0, sizeof *r);
    r->index = -1;
    snprintf(r->op, sizeof r->op, "%s", name);
    snprintf(r->dtype, sizeof r->dtype, "-");
    snprintf(r->shape, sizeof r->shape, "every case");
    return r;
}

/* contract.supports: no case where supports() disagreed with the op. */
static void supports_row(cf_run *run, size_t n_sel)
{
    cf_result *r = contract_row(run, "contract.supports");
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

/* contract.stdout: the workers wrote nothing to stdout. */
static void stdout_row(cf_run *run, FILE *captured)
{
    cf_result *r = contract_row(run, "contract.stdout");
    int fd = fileno(captured);
    struct stat sb;
    fflush(captured);
    long size = fstat(fd, &sb) == 0 ? (long)sb.st_size : 0;
    r->status = size ? CF_FAIL : CF_PASS;
    if (size) {
        char head[121] = "";
        ssize_t got = pread(fd, head, sizeof head - 1, 0);
        head[got > 0 ? got : 0] = '\0';
        cf_one_line(head);
        snprintf(r->message, sizeof r->message,
                 "contract.stdout: the plugin wrote %ld byte(s) to stdout (it must never); "
                 "first: \"%s\"", size, head);
    }
}

bool cf_run_cases(const cf_options *opt, const cf_case *cases, const int *selected, size_t n_sel,
                  cf_run *run)
{
    memset(run, 0, sizeof *run);
    run->results = calloc(n_sel + 2, sizeof *run->results);
    FILE *captured = run->results ? tmpfile() : NULL;
    if (!captured)
        return false;
    supervisor s = {.opt = opt, .cases = cases, .selected = selected, .n_sel = n_sel, .run = run,
                    .n_rows = n_sel + (opt->row_supports ? 1 : 0) + (opt->row_stdout ? 1 : 0),
                    .tty = isatty(STDERR_FILENO) != 0};
    worker w;
    bool started = true;
    /* at least one worker, to open the backend even when only the parent's
     * rows are selected */
    do {
        if (!spawn(&s, fileno(captured), &w)) {
            started = false;
            break;
        }
        supervise(&s, &w);
    } while (s.next < n_sel && !s.fatal);
    if (started) {
        run->n_results = s.fatal && !run->opened ? 0 : n_sel;
        size_t row = n_sel;
        if (run->opened && opt->row_supports) {
            progress_at(&s, row++, "contract.supports");
            supports_row(run, n_sel);
        }
        if (run->opened && opt->row_stdout) {
            progress_at(&s, row++, "contract.stdout");
            stdout_row(run, captured);
        }
    }
    progress_end(&s);
    fclose(captured);
    return started;
}

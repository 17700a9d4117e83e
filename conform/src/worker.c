/* The worker process: it opens the backend (the parent never does: CUDA
 * cannot survive a fork), turns on guard bytes, and runs the selected cases
 * from `from` on, in order, telling the parent on the result pipe, one line
 * each (fields separated by tabs, messages on one line):
 *   O name<TAB>version             the backend opened
 *   X status<TAB>reason            it did not (status: the bp_status; the reason's
 *                                  newlines, tabs and backslashes escaped as \n \t \\)
 *   S p                            case p (a position in the selection) starts
 *   R p<TAB>status<TAB>max_error<TAB>tolerance<TAB>supports_mismatch<TAB>message
 * Its stdout is the parent's capture file: a plugin must never write to it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"

/* Write all of s; the worker ends if the pipe breaks (the parent is gone or
 * gave up on it). */
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

void cf_one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\t' || *s == '\r')
            *s = ' ';
}

/* A message of several lines as one field: "\\" for a backslash, "\\n" for
 * a newline, "\\t" for a tab (cf_unescape_lines reverses it). */
static void escape_lines(const char *in, char *out, size_t size)
{
    size_t o = 0;
    for (; *in && o + 3 < size; in++) {
        char c = *in;
        if (c == '\\' || c == '\n' || c == '\t') {
            out[o++] = '\\';
            out[o++] = c == '\n' ? 'n' : c == '\t' ? 't' : '\\';
        } else if (c != '\r') {
            out[o++] = c;
        }
    }
    out[o] = '\0';
}

void cf_unescape_lines(char *s)
{
    char *o = s;
    for (const char *p = s; *p; p++) {
        if (*p == '\\' && (p[1] == 'n' || p[1] == 't' || p[1] == '\\')) {
            p++;
            *o++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : '\\';
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

static bool truthy(const char *v)
{
    return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0 ||
                 strcmp(v, "on") == 0);
}

/* "X status<TAB>reason": the backend did not open; the reason keeps its
 * lines (escaped). */
static void put_open_failure(int wfd, bp_status st, const char *why)
{
    char reason[CF_OPEN_MESSAGE_MAX], line[CF_OPEN_MESSAGE_MAX + 32];
    escape_lines(why ? why : "", reason, sizeof reason);
    snprintf(line, sizeof line, "X %d\t%s\n", (int)st, reason);
    put(wfd, line);
}

/* Why target did not open: the error, else the reason on its plugin's
 * record (where the loader keeps a failed open's message). */
static const char *open_reason(bp_context *ctx, const char *target)
{
    const char *why = bp_last_error();
    size_t stem = strcspn(target, ":");
    for (size_t i = 0; (!why || !why[0]) && i < bp_context_plugin_count(ctx); i++) {
        bp_plugin_record rec = {.struct_size = sizeof rec};
        if (bp_context_plugin(ctx, i, &rec) == BP_OK &&
            ((strlen(rec.name) == stem && strncmp(rec.name, target, stem) == 0) ||
             strcmp(rec.path, target) == 0))
            why = rec.message;
    }
    return why;
}

/* The context and backend for the cases; false after telling the parent why
 * not. */
static bool open_backend(const cf_options *opt, int wfd, bp_context **ctx, bp_backend **be)
{
    bp_status st = bp_context_create(opt->config, ctx);
    if (st != BP_OK) {
        char why[CF_OPEN_MESSAGE_MAX];
        snprintf(why, sizeof why, "could not create the context: %s", bp_last_error());
        put_open_failure(wfd, st, why);
        return false;
    }
    bp_context_set_debug_guards(*ctx, 64);
    st = bp_backend_get(*ctx, opt->target, be);
    if (st != BP_OK) {
        put_open_failure(wfd, st, open_reason(*ctx, opt->target));
        bp_context_destroy(*ctx);
        return false;
    }
    return true;
}

/* What the cases need to know about the backend beyond its handle: its
 * plugin's file and version, and whether it computes f32 matmuls in TF32
 * (the ABI has no declaration yet: the config's [backend.NAME] tf32 = true
 * loosens f32 matmul, tolerances.txt). */
static void describe(cf_worker_env *env, const char **version)
{
    const char *plugin = bp_backend_plugin_name(env->be);
    *version = "";
    for (size_t i = 0; i < bp_context_plugin_count(env->ctx); i++) {
        bp_plugin_record rec = {.struct_size = sizeof rec};
        if (bp_context_plugin(env->ctx, i, &rec) == BP_OK && rec.loaded &&
            strcmp(rec.name, plugin) == 0) {
            *version = rec.version;
            if (!env->plugin_path)
                env->plugin_path = rec.path;
        }
    }
    char section[96];
    snprintf(section, sizeof section, "backend.%s", plugin);
    for (size_t i = 0; i < bp_context_setting_count(env->ctx); i++) {
        bp_setting s = {.struct_size = sizeof s};
        if (bp_context_setting(env->ctx, i, &s) == BP_OK && strcmp(s.section, section) == 0 &&
            strcmp(s.key, "tf32") == 0)
            env->tf32 = truthy(s.value);
    }
}

_Noreturn void cf_worker_main(const cf_options *opt, const cf_case *cases, const int *selected,
                              size_t from, size_t n_sel, int wfd, int out_fd)
{
    char line[1400];
    struct rlimit no_core = {0, 0}; /* a crashing plugin must not drop a core per case */
    setrlimit(RLIMIT_CORE, &no_core);
    if (dup2(out_fd, STDOUT_FILENO) < 0)
        _exit(4);
    cf_worker_env env = {.plugin_path = opt->plugin_path, .graph = opt->graph, .tols = opt->tols};
    if (!open_backend(opt, wfd, &env.ctx, &env.be))
        _exit(0);
    const char *version;
    describe(&env, &version);
    snprintf(line, sizeof line, "O %s\t%s\n", bp_backend_name(env.be), version);
    put(wfd, line);
    for (size_t p = from; p < n_sel; p++) {
        snprintf(line, sizeof line, "S %zu\n", p);
        put(wfd, line);
        cf_result r;
        memset(&r, 0, sizeof r);
        cf_exec_case(&env, &cases[selected[p]], &r);
        cf_one_line(r.message);
        snprintf(line, sizeof line, "R %zu\t%d\t%.17g\t%.17g\t%d\t%s\n", p, (int)r.status,
                 r.max_error, r.tolerance, r.supports_mismatch ? 1 : 0, r.message);
        put(wfd, line);
    }
    bp_context_destroy(env.ctx);
    _exit(0);
}

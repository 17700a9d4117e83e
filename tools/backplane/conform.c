/* backplane conform: the command line of libbackplane_conform
 * (conform/include/backplane/conform.h), which does all the work.
 *
 *   backplane conform --backend NAME | --plugin PATH [--op PATTERN ...]
 *                     [--json FILE] [--matrix FILE] [--config FILE]
 *                     [--timeout S] [--tolerances FILE] [--graph] [--list]
 *   backplane conform --matrix-from A.json,B.json --matrix FILE
 *
 * Progress goes to stderr: one line rewritten in place on a terminal, else a
 * line per tenth of the cases. stdout gets one line per FAIL / CRASH / TIMEOUT
 * (op, dtype, shape, why), a summary by op and the totals line
 * "N passed, N failed, N unsupported, N crashed" (timeouts count as crashed).
 * Exit 0 when nothing failed or crashed, 1 otherwise, 2 on usage errors,
 * 77 when the backend's device is not available here (a skip, not a pass). */
#include <stdlib.h>
#include <string.h>

#include <backplane/conform.h>

#include "cli.h"

static const char *const CMD = "conform";

enum { MAX_PATTERNS = 64 };

/* The command line, parsed. */
typedef struct args {
    const char *backend, *plugin, *config, *json, *matrix, *matrix_from, *tolerances;
    const char *patterns[MAX_PATTERNS];
    size_t n_patterns;
    double timeout;
    bool list, graph;
} args;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: backplane conform (--backend NAME | --plugin PATH) [--op PATTERN ...]\n"
            "                         [--json FILE] [--matrix FILE] [--config FILE]\n"
            "                         [--timeout S] [--tolerances FILE] [--graph] [--list]\n"
            "       backplane conform --matrix-from A.json[,B.json...] --matrix FILE\n"
            "\n"
            "Run the conformance suite against one backend: every op and dtype, edge shapes,\n"
            "special values and random data, compared with a double-precision host oracle,\n"
            "with guard bytes around every tensor, plus the plugin contract (descriptor,\n"
            "buffer round trips, supports() answers, no stdout). Each case runs in a worker\n"
            "process: a crash or a hang is reported for that case and the rest still run.\n"
            "\n"
            "options:\n"
            "  --backend NAME     a backend by name (\"binary\", \"cuda:1\")\n"
            "  --plugin PATH      a plugin file to load and test (e.g. your own .so)\n"
            "  --op PATTERN       only ops matching this fnmatch glob (repeat; e.g. 'log*',\n"
            "                     'contract.*')\n"
            "  --json FILE        write one JSON line per case to FILE\n"
            "  --matrix FILE      write the op x dtype matrix (Markdown) to FILE\n"
            "  --matrix-from LIST merge the JSON files (comma-separated) of several backends\n"
            "                     into one op x backend x dtype table, written to --matrix\n"
            "  --config FILE      the ini file for the worker's context\n"
            "  --timeout S        seconds per case before it counts as TIMEOUT (default 10)\n"
            "  --tolerances FILE  use FILE instead of the built-in tolerance table\n"
            "  --graph            also record each case that passed on a graph, compile and\n"
            "                     run it, and require the eager results bit for bit (a node\n"
            "                     the backend prepared: within the case's tolerance)\n"
            "  --list             print the selected cases and exit\n"
            "  -h, --help         show this help and exit\n"
            "\n"
            "Output: one line per FAIL/CRASH/TIMEOUT, a summary by op, then\n"
            "\"N passed, N failed, N unsupported, N crashed\". Exit status: 0 all passed or\n"
            "unsupported; 1 something failed or crashed; 2 usage error; %d the backend's\n"
            "device is not available here (skipped).\n",
            CLI_EXIT_SKIP);
}

/* One option of argv at *i into a; 1 consumed, 0 not an option of ours,
 * or a CLI_EXIT_* code (negated) on a usage error. */
static int parse_option(int argc, char **argv, int *i, args *a)
{
    const struct {
        const char *name;
        const char **dst;
    } strings[] = {
        {"--backend", &a->backend}, {"--plugin", &a->plugin},           {"--config", &a->config},
        {"--json", &a->json},       {"--matrix-from", &a->matrix_from}, {"--matrix", &a->matrix},
        {"--tolerances", &a->tolerances},
    };
    const char *v = NULL;
    int m;
    for (size_t k = 0; k < sizeof strings / sizeof strings[0]; k++) {
        if ((m = cli_option_value(CMD, argc, argv, i, strings[k].name, &v)) != 0) {
            if (m < 0)
                return -CLI_EXIT_USAGE;
            *strings[k].dst = v;
            return 1;
        }
    }
    if ((m = cli_option_value(CMD, argc, argv, i, "--op", &v)) != 0) {
        if (m < 0)
            return -CLI_EXIT_USAGE;
        if (a->n_patterns == MAX_PATTERNS)
            return -cli_usage_error(CMD, "at most %d --op patterns", MAX_PATTERNS);
        a->patterns[a->n_patterns++] = v;
        return 1;
    }
    if ((m = cli_option_value(CMD, argc, argv, i, "--timeout", &v)) != 0) {
        if (m < 0)
            return -CLI_EXIT_USAGE;
        if (!cli_parse_f64(v, &a->timeout) || a->timeout <= 0)
            return -cli_usage_error(CMD, "--timeout wants a positive number of seconds, not '%s'",
                                    v);
        return 1;
    }
    return 0;
}

/* argv into a. -1: go on; otherwise the exit code (help, usage errors). */
static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->timeout = 10;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--list") == 0) {
            a->list = true;
            continue;
        }
        if (strcmp(argv[i], "--graph") == 0) {
            a->graph = true;
            continue;
        }
        int m = parse_option(argc, argv, &i, a);
        if (m < 0)
            return -m;
        if (m == 0)
            return cli_usage_error(CMD, "unknown argument '%s'", argv[i]);
    }
    return -1;
}

/* --matrix-from A,B,...: merge the runs' JSON files into one table. */
static int merge(const args *a)
{
    if (!a->matrix)
        return cli_usage_error(CMD, "--matrix-from needs --matrix FILE to write");
    if (a->backend || a->plugin)
        return cli_usage_error(CMD, "--matrix-from does not run a backend; drop --backend/--plugin");
    char *list = strdup(a->matrix_from);
    const char **paths = calloc(strlen(a->matrix_from) / 2 + 1, sizeof *paths);
    if (!list || !paths) {
        free(list);
        free(paths);
        return cli_error(CMD, "out of memory");
    }
    size_t n = 0;
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save))
        paths[n++] = name;
    int rc = CLI_EXIT_OK;
    if (bp_conform_merge_matrix(paths, n, a->matrix) != BP_OK)
        rc = cli_error(CMD, "%s", bp_conform_last_error());
    free(list);
    free(paths);
    return rc;
}

/* The run's outputs: --json, --matrix, the report; the exit code. */
static int report(const args *a, const bp_conform_results *res, double seconds)
{
    bp_conform_totals t = {.struct_size = sizeof t};
    bp_conform_get_totals(res, &t);
    fprintf(stderr, "conform: %s done in %.1f s\n", t.backend, seconds);
    int rc = CLI_EXIT_OK;
    if (a->json && bp_conform_write_json(res, a->json) != BP_OK)
        rc = cli_error(CMD, "%s", bp_conform_last_error());
    if (a->matrix && bp_conform_write_matrix(res, a->matrix) != BP_OK)
        rc = cli_error(CMD, "%s", bp_conform_last_error());
    bp_conform_print_report(res, stdout);
    if (t.failed || t.crashed)
        rc = CLI_EXIT_FAILURE;
    return rc;
}

/* An error of the library, its later lines indented under the first. */
static int fail_with(const char *message)
{
    const char *nl = strchr(message, '\n');
    cli_error(CMD, "%.*s", (int)(nl ? (size_t)(nl - message) : strlen(message)), message);
    if (nl)
        cli_print_block(stderr, nl + 1, "  ");
    return CLI_EXIT_FAILURE;
}

static int run(const args *a, const bp_conform_options *opt)
{
    const char *target = a->plugin ? a->plugin : a->backend;
    bp_conform_results *res = NULL;
    double t0 = cli_now();
    bp_status st = bp_conform_run(target, opt, &res);
    if (st == BP_ERR_UNSUPPORTED_DEVICE) {
        const char *why = bp_conform_last_error(), *nl = strchr(why, '\n');
        printf("SKIPPED: %.*s\n", (int)(nl ? (size_t)(nl - why) : strlen(why)), why);
        if (nl)
            cli_print_block(stdout, nl + 1, "  ");
        return CLI_EXIT_SKIP;
    }
    if (st != BP_OK)
        return fail_with(bp_conform_last_error());
    int rc = report(a, res, cli_now() - t0);
    bp_conform_free(res);
    return rc;
}

int cli_conform(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.matrix_from)
        return merge(&a);
    bp_conform_options opt = {
        .struct_size = sizeof opt,
        .config = a.config,
        .ops = a.patterns,
        .n_ops = a.n_patterns,
        .timeout_s = a.timeout,
        .tolerances = a.tolerances,
        .progress = true,
        .graph = a.graph,
    };
    /* the tolerance table is checked even for --list, so a bad file is found early */
    size_t n_cases = 0;
    if (bp_conform_list(&opt, a.list ? stdout : NULL, &n_cases) != BP_OK)
        return cli_error(CMD, "%s", bp_conform_last_error());
    if (a.list)
        return CLI_EXIT_OK;
    if (!a.backend == !a.plugin)
        return cli_usage_error(CMD, "give exactly one of --backend NAME or --plugin PATH");
    if (n_cases == 0)
        return cli_usage_error(CMD, "no case matches the --op patterns (see --list)");
    return run(&a, &opt);
}

/* backplane conform: run the conformance suite against one backend.
 *
 *   backplane conform --backend NAME | --plugin PATH [--op PATTERN ...]
 *                     [--json FILE] [--matrix FILE] [--config FILE]
 *                     [--timeout S] [--tolerances FILE] [--list]
 *   backplane conform --matrix-from A.json,B.json --matrix FILE
 *
 * Progress goes to stderr. stdout gets one line per FAIL / CRASH / TIMEOUT
 * (op, dtype, shape, why), a summary by op and the totals line
 * "N passed, N failed, N unsupported, N crashed" (timeouts count as crashed).
 * Exit 0 when nothing failed or crashed, 1 otherwise, 2 on usage errors,
 * 77 when the backend's device is not available here (a skip, not a pass). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "conform.h"

static const char *const CMD = "conform";

enum { MAX_PATTERNS = 64 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: backplane conform (--backend NAME | --plugin PATH) [--op PATTERN ...]\n"
            "                         [--json FILE] [--matrix FILE] [--config FILE]\n"
            "                         [--timeout S] [--tolerances FILE] [--list]\n"
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
            "  --list             print the selected cases and exit\n"
            "  -h, --help         show this help and exit\n"
            "\n"
            "Output: one line per FAIL/CRASH/TIMEOUT, a summary by op, then\n"
            "\"N passed, N failed, N unsupported, N crashed\". Exit status: 0 all passed or\n"
            "unsupported; 1 something failed or crashed; 2 usage error; %d the backend's\n"
            "device is not available here (skipped).\n",
            CLI_EXIT_SKIP);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

int cli_conform(int argc, char **argv)
{
    cf_options opt = {0};
    opt.timeout = 10;
    const char *patterns[MAX_PATTERNS];
    size_t n_patterns = 0;
    const char *json = NULL, *matrix = NULL, *matrix_from = NULL, *tol_file = NULL;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--list") == 0) {
            list = true;
            continue;
        }
#define OPTION(name, dst)                                                    \
    if ((m = cli_option_value(CMD, argc, argv, &i, name, &v)) != 0) {         \
        if (m < 0)                                                           \
            return CLI_EXIT_USAGE;                                           \
        dst = v;                                                             \
        continue;                                                            \
    }
        OPTION("--backend", opt.backend)
        OPTION("--plugin", opt.plugin)
        OPTION("--config", opt.config)
        OPTION("--json", json)
        OPTION("--matrix-from", matrix_from)
        OPTION("--matrix", matrix)
        OPTION("--tolerances", tol_file)
#undef OPTION
        if ((m = cli_option_value(CMD, argc, argv, &i, "--op", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (n_patterns == MAX_PATTERNS)
                return cli_usage_error(CMD, "at most %d --op patterns", MAX_PATTERNS);
            patterns[n_patterns++] = v;
            continue;
        }
        if ((m = cli_option_value(CMD, argc, argv, &i, "--timeout", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!cli_parse_f64(v, &opt.timeout) || opt.timeout <= 0)
                return cli_usage_error(CMD, "--timeout wants a positive number of seconds, not '%s'", v);
            continue;
        }
        return cli_usage_error(CMD, "unknown argument '%s'", argv[i]);
    }

    if (matrix_from) {
        if (!matrix)
            return cli_usage_error(CMD, "--matrix-from needs --matrix FILE to write");
        if (opt.backend || opt.plugin)
            return cli_usage_error(CMD, "--matrix-from does not run a backend; drop --backend/--plugin");
        char err[512];
        if (!cf_write_matrix_from(matrix, matrix_from, err, sizeof err))
            return cli_error(CMD, "%s", err);
        return CLI_EXIT_OK;
    }

    /* the tolerance table: checked even for --list, so a bad file is found early */
    char err[512];
    char *tol_text = NULL;
    if (tol_file) {
        tol_text = read_file(tol_file);
        if (!tol_text)
            return cli_error(CMD, "cannot read the tolerance file %s", tol_file);
    }
    bool tol_ok = cf_tol_load(tol_text, tol_file ? tol_file : "tests/conformance/tolerances.txt",
                              err, sizeof err);
    if (!tol_ok) {
        free(tol_text);
        return cli_error(CMD, "%s", err);
    }

    cf_case *cases = NULL;
    size_t n_cases = cf_cases_build(&cases);
    if (n_cases == 0) {
        free(tol_text);
        return cli_error(CMD, "out of memory building the case table");
    }
    int *selected = malloc(n_cases * sizeof *selected);
    size_t n_sel = 0;
    for (size_t i = 0; selected && i < n_cases; i++)
        if (cf_case_selected(&cases[i], patterns, n_patterns))
            selected[n_sel++] = (int)i;
    cf_case probe_s = {.name = "contract.supports"}, probe_o = {.name = "contract.stdout"};
    opt.row_supports = cf_case_selected(&probe_s, patterns, n_patterns);
    opt.row_stdout = cf_case_selected(&probe_o, patterns, n_patterns);

    int rc = CLI_EXIT_OK;
    if (!selected) {
        rc = cli_error(CMD, "out of memory");
    } else if (list) {
        for (size_t i = 0; i < n_sel; i++) {
            const cf_case *c = &cases[selected[i]];
            printf("%s %s %s\n", c->name, (int)c->dtype >= 0 ? bp_dtype_name(c->dtype) : "-", c->label);
        }
        if (opt.row_supports)
            printf("contract.supports - every case\n");
        if (opt.row_stdout)
            printf("contract.stdout - every case\n");
        printf("%zu cases\n", n_sel + opt.row_supports + opt.row_stdout);
    } else if (!opt.backend == !opt.plugin) {
        rc = cli_usage_error(CMD, "give exactly one of --backend NAME or --plugin PATH");
    } else if (n_sel == 0 && !opt.row_supports && !opt.row_stdout) {
        rc = cli_usage_error(CMD, "no case matches the --op patterns (see --list)");
    } else {
        cf_run run;
        double t0 = cli_now();
        if (!cf_run_cases(&opt, cases, selected, n_sel, &run)) {
            rc = cli_error(CMD, "could not start the worker process");
        } else if (!run.opened) {
            const char *what = opt.plugin ? opt.plugin : opt.backend;
            if (run.open_status == BP_ERR_UNSUPPORTED_DEVICE) {
                printf("SKIPPED: backend %s is not available here: %s\n", what, run.open_message);
                rc = CLI_EXIT_SKIP;
            } else {
                fprintf(stderr, "backplane conform: cannot open backend %s: %s\n", what,
                        run.open_message);
                rc = CLI_EXIT_FAILURE;
            }
        } else {
            if (!opt.quiet_progress)
                fprintf(stderr, "conform: %s done in %.1f s\n", run.backend_name, cli_now() - t0);
            if (json) {
                FILE *f = fopen(json, "w");
                if (!f) {
                    rc = cli_error(CMD, "cannot write %s", json);
                } else {
                    for (size_t i = 0; i < run.n_results; i++)
                        cf_write_json_line(f, &run, &run.results[i]);
                    if (fclose(f) != 0)
                        rc = cli_error(CMD, "cannot write %s", json);
                }
            }
            if (matrix && !cf_write_matrix(matrix, &run))
                rc = cli_error(CMD, "cannot write %s", matrix);
            cf_print_report(stdout, &run);
            size_t p, fl, u, c;
            if (!cf_totals(&run, &p, &fl, &u, &c))
                rc = CLI_EXIT_FAILURE;
        }
        free(run.results);
    }
    free(selected);
    free(cases);
    free(tol_text);
    return rc;
}

/* The public bp_conform_* functions (include/backplane/conform.h): the
 * caller's options read by their struct_size, the tolerance table and the
 * selected cases made per call (no global state), results handed back as
 * one object. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Whether the struct at p (with its struct_size) holds member m entirely. */
#define HAS_MEMBER(p, type, m) ((p)->struct_size >= offsetof(type, m) + sizeof((p)->m))

/* The caller's options with every member this library knows: those the
 * caller's struct lacks keep their zero defaults. */
static bp_status read_options(const bp_conform_options *in, bp_conform_options *out)
{
    memset(out, 0, sizeof *out);
    if (in) {
        if (in->struct_size < offsetof(bp_conform_options, config))
            return cf_fail(BP_ERR_INVALID_ARGUMENT,
                           "bp_conform_options.struct_size is %u: set it to "
                           "sizeof(bp_conform_options)",
                           (unsigned)in->struct_size);
        memcpy(out, in, in->struct_size < sizeof *out ? in->struct_size : sizeof *out);
    }
    out->struct_size = sizeof *out;
    if (out->n_ops && !out->ops)
        return cf_fail(BP_ERR_INVALID_ARGUMENT, "bp_conform_options.ops is NULL but n_ops is %zu",
                       out->n_ops);
    if (!(out->timeout_s > 0))
        out->timeout_s = 10;
    return BP_OK;
}

/* What one call works on: the tolerances and the selected cases. */
typedef struct suite {
    cf_tol_table *tols;
    cf_case *cases;
    int *selected;    /* indices into cases */
    size_t n_selected;
    bool row_supports, row_stdout; /* the parent-side contract rows */
} suite;

static void suite_free(suite *s)
{
    cf_tol_free(s->tols);
    free(s->cases);
    free(s->selected);
    memset(s, 0, sizeof *s);
}

static bp_status suite_load(const bp_conform_options *o, suite *s)
{
    memset(s, 0, sizeof *s);
    bp_status st;
    char err[512];
    s->tols = cf_tol_load(o->tolerances, &st, err, sizeof err);
    if (!s->tols)
        return cf_fail(st, "%s", err);
    size_t n_cases = cf_cases_build(&s->cases);
    s->selected = n_cases ? malloc(n_cases * sizeof *s->selected) : NULL;
    if (!s->selected) {
        suite_free(s);
        return cf_fail(BP_ERR_OUT_OF_MEMORY, "out of memory building the case table");
    }
    const char *const *pats = o->ops;
    for (size_t i = 0; i < n_cases; i++)
        if (cf_case_selected(&s->cases[i], pats, o->n_ops))
            s->selected[s->n_selected++] = (int)i;
    cf_case probe_s = {.name = "contract.supports"}, probe_o = {.name = "contract.stdout"};
    s->row_supports = cf_case_selected(&probe_s, pats, o->n_ops);
    s->row_stdout = cf_case_selected(&probe_o, pats, o->n_ops);
    return BP_OK;
}

static size_t suite_count(const suite *s)
{
    return s->n_selected + s->row_supports + s->row_stdout;
}

bp_status bp_conform_list(const bp_conform_options *options, FILE *f, size_t *n_cases)
{
    bp_conform_options o;
    suite s;
    bp_status st = read_options(options, &o);
    if (st == BP_OK)
        st = suite_load(&o, &s);
    if (st != BP_OK)
        return st;
    if (f) {
        for (size_t i = 0; i < s.n_selected; i++) {
            const cf_case *c = &s.cases[s.selected[i]];
            fprintf(f, "%s %s %s\n", c->name, (int)c->dtype >= 0 ? bp_dtype_name(c->dtype) : "-",
                    c->label);
        }
        if (s.row_supports)
            fprintf(f, "contract.supports - every case\n");
        if (s.row_stdout)
            fprintf(f, "contract.stdout - every case\n");
        fprintf(f, "%zu cases\n", suite_count(&s));
    }
    if (n_cases)
        *n_cases = suite_count(&s);
    suite_free(&s);
    cf_clear_error();
    return BP_OK;
}

/* As the core decides (bp_backend_get): a '/' or a ".so" ending names a file. */
static bool names_a_file(const char *backend)
{
    size_t n = strlen(backend);
    return strchr(backend, '/') != NULL || (n > 3 && strcmp(backend + n - 3, ".so") == 0);
}

/* The backend did not open in the worker: the error for bp_conform_run. */
static bp_status open_failure(const char *backend, const cf_run *run)
{
    bp_status st = run->open_status != BP_OK ? (bp_status)run->open_status : BP_ERR_BACKEND;
    if (st == BP_ERR_UNSUPPORTED_DEVICE)
        return cf_fail(st, "backend %s is not available here: %s", backend, run->open_message);
    return cf_fail(st, "cannot open backend %s: %s", backend, run->open_message);
}

bp_status bp_conform_run(const char *backend, const bp_conform_options *options,
                         bp_conform_results **out)
{
    if (out)
        *out = NULL;
    if (!backend || !out)
        return cf_fail(BP_ERR_INVALID_ARGUMENT, "bp_conform_run: %s is NULL",
                       !backend ? "backend" : "out");
    bp_conform_options o;
    suite s;
    bp_status st = read_options(options, &o);
    if (st == BP_OK)
        st = suite_load(&o, &s);
    if (st != BP_OK)
        return st;
    if (suite_count(&s) == 0) {
        suite_free(&s);
        return cf_fail(BP_ERR_INVALID_ARGUMENT, "no case matches the op patterns");
    }
    cf_options run_opt = {
        .target = backend,
        .plugin_path = names_a_file(backend) ? backend : NULL,
        .config = o.config,
        .timeout = o.timeout_s,
        .progress = o.progress,
        .row_supports = s.row_supports,
        .row_stdout = s.row_stdout,
        .graph = o.graph,
        .tols = s.tols,
    };
    bp_conform_results *res = calloc(1, sizeof *res);
    if (!res) {
        suite_free(&s);
        return cf_fail(BP_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (!cf_run_cases(&run_opt, s.cases, s.selected, s.n_selected, &res->run))
        st = cf_fail(BP_ERR_IO, "could not start the worker process");
    else if (!res->run.opened)
        st = open_failure(backend, &res->run);
    suite_free(&s);
    if (st != BP_OK) {
        bp_conform_free(res);
        return st;
    }
    cf_clear_error();
    *out = res;
    return BP_OK;
}

bp_status bp_conform_get_totals(const bp_conform_results *results, bp_conform_totals *out)
{
    if (!results || !out || !HAS_MEMBER(out, bp_conform_totals, crashed))
        return cf_fail(BP_ERR_INVALID_ARGUMENT,
                       "bp_conform_get_totals: NULL, or out->struct_size too small "
                       "(set it to sizeof(bp_conform_totals))");
    size_t p, f, u, c;
    cf_totals(&results->run, &p, &f, &u, &c);
    out->passed = p;
    out->failed = f;
    out->unsupported = u;
    out->crashed = c;
    if (HAS_MEMBER(out, bp_conform_totals, backend))
        out->backend = results->run.backend_name;
    if (HAS_MEMBER(out, bp_conform_totals, plugin_version))
        out->plugin_version = results->run.plugin_version;
    return BP_OK;
}

bp_status bp_conform_print_report(const bp_conform_results *results, FILE *f)
{
    if (!results || !f)
        return cf_fail(BP_ERR_INVALID_ARGUMENT, "bp_conform_print_report: NULL argument");
    cf_print_report(f, &results->run);
    if (fflush(f) != 0 || ferror(f))
        return cf_fail(BP_ERR_IO, "cannot write the report");
    return BP_OK;
}

bp_status bp_conform_write_json(const bp_conform_results *results, const char *path)
{
    if (!results || !path)
        return cf_fail(BP_ERR_INVALID_ARGUMENT, "bp_conform_write_json: NULL argument");
    if (!cf_write_json(path, &results->run))
        return cf_fail(BP_ERR_IO, "cannot write %s", path);
    return BP_OK;
}

bp_status bp_conform_write_matrix(const bp_conform_results *results, const char *path)
{
    if (!results || !path)
        return cf_fail(BP_ERR_INVALID_ARGUMENT, "bp_conform_write_matrix: NULL argument");
    if (!cf_write_matrix(path, &results->run))
        return cf_fail(BP_ERR_IO, "cannot write %s", path);
    return BP_OK;
}

bp_status bp_conform_merge_matrix(const char *const *json_paths, size_t n_paths, const char *path)
{
    if ((n_paths && !json_paths) || !path)
        return cf_fail(BP_ERR_INVALID_ARGUMENT, "bp_conform_merge_matrix: NULL argument");
    bp_status st = BP_OK;
    char err[512];
    if (!cf_merge_matrix(json_paths, n_paths, path, &st, err, sizeof err))
        return cf_fail(st, "%s", err);
    return BP_OK;
}

void bp_conform_free(bp_conform_results *results)
{
    if (!results)
        return;
    free(results->run.results);
    free(results);
}

/* backplane conform: results as JSON lines, the summary printed on stdout,
 * and the Markdown matrices (one backend: op x dtype; several backends, from
 * their JSON files: op x backend x dtype for docs/conformance.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "conform.h"

static const char *const DTYPES[] = {"bool", "u8", "i8", "i32", "i64", "f16", "bf16", "f32", "f64", "-"};
enum { N_DT = 10, MAX_OPS = 96, MAX_BACKENDS = 8 };

const char *cf_status_name(cf_status s)
{
    switch (s) {
    case CF_PASS: return "PASS";
    case CF_FAIL: return "FAIL";
    case CF_UNSUPPORTED: return "UNSUPPORTED";
    case CF_CRASH: return "CRASH";
    case CF_TIMEOUT: return "TIMEOUT";
    }
    return "?";
}

static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

void cf_write_json_line(FILE *f, const cf_run *run, const cf_result *r)
{
    fputs("{\"backend\":", f);
    cli_json_string(f, run->backend_name);
    fputs(",\"plugin_version\":", f);
    cli_json_string(f, run->plugin_version);
    fputs(",\"op\":", f);
    cli_json_string(f, r->op);
    fputs(",\"dtype\":", f);
    cli_json_string(f, r->dtype);
    fputs(",\"shape\":", f);
    cli_json_string(f, r->shape);
    fputs(",\"status\":", f);
    cli_json_string(f, cf_status_name(r->status));
    fputs(",\"max_error\":", f);
    json_number(f, r->max_error);
    fputs(",\"tolerance\":", f);
    json_number(f, r->tolerance);
    fputs(",\"message\":", f);
    cli_json_string(f, r->message);
    fputs("}\n", f);
}

bool cf_totals(const cf_run *run, size_t *pass, size_t *fail, size_t *unsup, size_t *crash)
{
    *pass = *fail = *unsup = *crash = 0;
    for (size_t i = 0; i < run->n_results; i++) {
        switch (run->results[i].status) {
        case CF_PASS: (*pass)++; break;
        case CF_FAIL: (*fail)++; break;
        case CF_UNSUPPORTED: (*unsup)++; break;
        case CF_CRASH: case CF_TIMEOUT: (*crash)++; break;
        }
    }
    return *fail == 0 && *crash == 0;
}

typedef struct op_count {
    const char *op;
    size_t n[5];
} op_count;

void cf_print_report(FILE *f, const cf_run *run)
{
    for (size_t i = 0; i < run->n_results; i++) {
        const cf_result *r = &run->results[i];
        if (r->status == CF_FAIL || r->status == CF_CRASH || r->status == CF_TIMEOUT)
            fprintf(f, "%-7s %s %s %s: %s\n", cf_status_name(r->status), r->op, r->dtype, r->shape,
                    r->message);
    }
    op_count ops[MAX_OPS];
    size_t n_ops = 0;
    for (size_t i = 0; i < run->n_results; i++) {
        const cf_result *r = &run->results[i];
        size_t k = 0;
        while (k < n_ops && strcmp(ops[k].op, r->op) != 0)
            k++;
        if (k == n_ops) {
            if (n_ops == MAX_OPS)
                continue;
            memset(&ops[n_ops], 0, sizeof ops[n_ops]);
            ops[n_ops++].op = r->op;
        }
        ops[k].n[r->status]++;
    }
    fprintf(f, "\nbackend %s (plugin version %s), by op:\n", run->backend_name,
            run->plugin_version[0] ? run->plugin_version : "?");
    fprintf(f, "  %-20s %7s %7s %12s %8s\n", "op", "passed", "failed", "unsupported", "crashed");
    for (size_t k = 0; k < n_ops; k++)
        fprintf(f, "  %-20s %7zu %7zu %12zu %8zu\n", ops[k].op, ops[k].n[CF_PASS], ops[k].n[CF_FAIL],
                ops[k].n[CF_UNSUPPORTED], ops[k].n[CF_CRASH] + ops[k].n[CF_TIMEOUT]);
    size_t p, fl, u, c;
    cf_totals(run, &p, &fl, &u, &c);
    fprintf(f, "%zu passed, %zu failed, %zu unsupported, %zu crashed\n", p, fl, u, c);
}

/* ---- matrices ------------------------------------------------------------------- */

typedef struct cell_table {
    char backends[MAX_BACKENDS][64];
    int n_backends;
    char ops[MAX_OPS][48];
    int n_ops;
    /* per op, backend, dtype: bit 0 pass, 1 fail, 2 unsupported, 3 crash */
    unsigned char bits[MAX_OPS][MAX_BACKENDS][N_DT];
} cell_table;

static int dtype_col(const char *d)
{
    for (int i = 0; i < N_DT; i++)
        if (strcmp(DTYPES[i], d) == 0)
            return i;
    return N_DT - 1;
}

static void table_add(cell_table *t, const char *backend, const char *op, const char *dtype,
                      const char *status)
{
    int b = 0;
    while (b < t->n_backends && strcmp(t->backends[b], backend) != 0)
        b++;
    if (b == t->n_backends) {
        if (b == MAX_BACKENDS)
            return;
        snprintf(t->backends[t->n_backends++], sizeof t->backends[0], "%s", backend);
    }
    int o = 0;
    while (o < t->n_ops && strcmp(t->ops[o], op) != 0)
        o++;
    if (o == t->n_ops) {
        if (o == MAX_OPS)
            return;
        snprintf(t->ops[t->n_ops++], sizeof t->ops[0], "%s", op);
    }
    int bit = strcmp(status, "PASS") == 0 ? 1 : strcmp(status, "FAIL") == 0 ? 2
              : strcmp(status, "UNSUPPORTED") == 0 ? 4 : 8;
    t->bits[o][b][dtype_col(dtype)] |= (unsigned char)bit;
}

static const char *cell(unsigned char bits)
{
    if (bits & 8)
        return "CRASH";
    if (bits & 2)
        return "FAIL";
    if (bits & 1)
        return "pass";
    if (bits & 4)
        return "n.s.";
    return "";
}

static void write_table(FILE *f, const cell_table *t)
{
    fputs("| op | backend |", f);
    for (int d = 0; d < N_DT; d++)
        fprintf(f, " %s |", DTYPES[d]);
    fputs("\n|---|---|", f);
    for (int d = 0; d < N_DT; d++)
        fputs("---|", f);
    fputc('\n', f);
    for (int o = 0; o < t->n_ops; o++)
        for (int b = 0; b < t->n_backends; b++) {
            fprintf(f, "| %s | %s |", b == 0 ? t->ops[o] : "", t->backends[b]);
            for (int d = 0; d < N_DT; d++)
                fprintf(f, " %s |", cell(t->bits[o][b][d]));
            fputc('\n', f);
        }
}

static const char LEGEND[] =
    "Cells: `pass` every case of that op and dtype passed; `FAIL` at least one gave a wrong\n"
    "value, a wrong shape or dtype, damaged guard bytes, or was refused although `supports()`\n"
    "said yes; `n.s.` the backend declares it not supported; `CRASH` a case crashed or hung\n"
    "(it ran in a worker process, so the rest still ran); empty: the op does not accept\n"
    "that dtype. The `-` column holds the plugin-contract rows (`contract.*`).\n";

bool cf_write_matrix(const char *path, const cf_run *run)
{
    cell_table *t = calloc(1, sizeof *t);
    FILE *f = t ? fopen(path, "w") : NULL;
    if (!f) {
        free(t);
        return false;
    }
    for (size_t i = 0; i < run->n_results; i++)
        table_add(t, run->backend_name, run->results[i].op, run->results[i].dtype,
                  cf_status_name(run->results[i].status));
    size_t p, fl, u, c;
    cf_totals(run, &p, &fl, &u, &c);
    fprintf(f, "# Conformance of %s (plugin version %s)\n\n%zu passed, %zu failed, %zu unsupported, "
            "%zu crashed\n\n", run->backend_name, run->plugin_version, p, fl, u, c);
    fputs(LEGEND, f);
    fputc('\n', f);
    write_table(f, t);
    free(t);
    return fclose(f) == 0;
}

/* The value of "key":"..." in a JSON line written by cf_write_json_line. */
static bool json_field(const char *line, const char *key, char *out, size_t cap)
{
    char pat[40];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(line, pat);
    if (!p)
        return false;
    p += strlen(pat);
    size_t n = 0;
    while (*p && *p != '"' && n + 1 < cap) {
        if (*p == '\\' && p[1])
            p++;
        out[n++] = *p++;
    }
    out[n] = '\0';
    return true;
}

bool cf_write_matrix_from(const char *path, const char *json_files, char *err, size_t err_size)
{
    cell_table *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, err_size, "out of memory");
        return false;
    }
    char files[4096];
    snprintf(files, sizeof files, "%s", json_files);
    size_t totals[MAX_BACKENDS][4] = {{0}};
    char versions[MAX_BACKENDS][64] = {{0}};
    for (char *name = strtok(files, ","); name; name = strtok(NULL, ",")) {
        FILE *in = fopen(name, "r");
        if (!in) {
            snprintf(err, err_size, "cannot read %s", name);
            free(t);
            return false;
        }
        char line[4096];
        while (fgets(line, sizeof line, in)) {
            char be[64], op[48], dt[16], st[16], ver[64] = "";
            if (!json_field(line, "backend", be, sizeof be) || !json_field(line, "op", op, sizeof op) ||
                !json_field(line, "dtype", dt, sizeof dt) || !json_field(line, "status", st, sizeof st))
                continue;
            json_field(line, "plugin_version", ver, sizeof ver);
            table_add(t, be, op, dt, st);
            for (int b = 0; b < t->n_backends; b++)
                if (strcmp(t->backends[b], be) == 0) {
                    int k = strcmp(st, "PASS") == 0 ? 0 : strcmp(st, "FAIL") == 0 ? 1
                            : strcmp(st, "UNSUPPORTED") == 0 ? 2 : 3;
                    totals[b][k]++;
                    snprintf(versions[b], sizeof versions[b], "%s", ver);
                }
        }
        fclose(in);
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, err_size, "cannot write %s", path);
        free(t);
        return false;
    }
    fputs("# Conformance matrix\n\n"
          "Generated by `backplane conform`; do not edit by hand. To regenerate (from a build\n"
          "directory, here `build/`):\n\n"
          "```sh\n"
          "build/bin/backplane conform --backend binary   --json /tmp/binary.json\n"
          "build/bin/backplane conform --backend blas_cpu --json /tmp/blas_cpu.json\n"
          "build/bin/backplane conform --matrix-from /tmp/binary.json,/tmp/blas_cpu.json \\\n"
          "    --matrix docs/conformance.md\n"
          "```\n\n"
          "Each backend ran the whole suite (`tests/conformance/`, `tools/backplane/conform*.c`):\n"
          "every op and dtype with edge shapes (rank 0, zero elements, size-1 and broadcast\n"
          "dimensions, lengths 1, 7, 33, 1023 and sizes past the threading thresholds), special\n"
          "values (NaN, +-Inf, -0, subnormals, integer limits) and random data from the\n"
          "library's keyed generator, against a double-precision host oracle, with guard bytes\n"
          "around every tensor. Tolerances, each with its reason, are in\n"
          "`tests/conformance/tolerances.txt`. A backend of your own: `backplane conform\n"
          "--plugin path/to/plugin.so --json mine.json`, then add it to `--matrix-from`.\n\n", f);
    fputs("| backend | plugin version | passed | failed | unsupported | crashed |\n"
          "|---|---|---|---|---|---|\n", f);
    for (int b = 0; b < t->n_backends; b++)
        fprintf(f, "| %s | %s | %zu | %zu | %zu | %zu |\n", t->backends[b], versions[b],
                totals[b][0], totals[b][1], totals[b][2], totals[b][3]);
    fputc('\n', f);
    fputs(LEGEND, f);
    fputc('\n', f);
    write_table(f, t);
    free(t);
    if (fclose(f) != 0) {
        snprintf(err, err_size, "cannot write %s", path);
        return false;
    }
    return true;
}

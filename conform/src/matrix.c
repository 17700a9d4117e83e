/* The Markdown matrices: one run as op x dtype, and several runs (read back
 * from their JSON lines) as op x backend x dtype, the form of
 * docs/conformance.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const DTYPES[] = {"bool", "u8",  "i8",   "i16", "u16", "i32", "u32",
                                     "i64",  "u64", "f16", "bf16", "f32", "f64", "-"};
enum { N_DT = sizeof DTYPES / sizeof DTYPES[0], MAX_OPS = 192, MAX_BACKENDS = 8 };

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

/* Per backend of a merged table: the counts by status and the plugin version. */
typedef struct backend_totals {
    size_t n[4]; /* passed, failed, unsupported, crashed */
    char version[64];
} backend_totals;

static void count_row(cell_table *t, backend_totals *totals, const cf_json_row *row)
{
    table_add(t, row->backend, row->op, row->dtype, row->status);
    for (int b = 0; b < t->n_backends; b++)
        if (strcmp(t->backends[b], row->backend) == 0) {
            const char *st = row->status;
            int k = strcmp(st, "PASS") == 0 ? 0 : strcmp(st, "FAIL") == 0 ? 1
                    : strcmp(st, "UNSUPPORTED") == 0 ? 2 : 3;
            totals[b].n[k]++;
            snprintf(totals[b].version, sizeof totals[b].version, "%s", row->plugin_version);
        }
}

/* Add every result line of one JSON-lines file. */
static bool read_runs(const char *name, cell_table *t, backend_totals *totals, bp_status *status,
                      char *err, size_t err_size)
{
    FILE *in = fopen(name, "r");
    if (!in) {
        *status = BP_ERR_IO;
        snprintf(err, err_size, "cannot read %s", name);
        return false;
    }
    char *line = NULL;
    size_t cap = 0;
    cf_json_row row;
    while (getline(&line, &cap, in) >= 0)
        if (cf_json_parse_row(line, &row))
            count_row(t, totals, &row);
    bool failed = ferror(in) != 0;
    free(line);
    fclose(in);
    if (failed) {
        *status = BP_ERR_IO;
        snprintf(err, err_size, "cannot read %s", name);
    }
    return !failed;
}

static const char MERGED_HEADER[] =
    "# Conformance matrix\n\n"
    "Generated by `backplane conform`; do not edit by hand. To regenerate (from a build\n"
    "directory, here `build/`):\n\n"
    "```sh\n"
    "build/bin/backplane conform --backend binary   --json /tmp/binary.json\n"
    "build/bin/backplane conform --backend blas_cpu --json /tmp/blas_cpu.json\n"
    "build/bin/backplane conform --matrix-from /tmp/binary.json,/tmp/blas_cpu.json \\\n"
    "    --matrix docs/conformance.md\n"
    "```\n\n"
    "Each backend ran the whole suite (`conform/`, the library behind `backplane conform`):\n"
    "every op and dtype with edge shapes (rank 0, zero elements, size-1 and broadcast\n"
    "dimensions, lengths 1, 7, 33, 1023 and sizes past the threading thresholds), special\n"
    "values (NaN, +-Inf, -0, subnormals, integer limits) and random data from the\n"
    "library's keyed generator, against a double-precision host oracle, with guard bytes\n"
    "around every tensor. Tolerances, each with its reason, are in\n"
    "`conform/tolerances.txt`. A backend of your own: `backplane conform\n"
    "--plugin path/to/plugin.so --json mine.json`, then add it to `--matrix-from`.\n\n";

/* Sections other tools write below the matrix (tests/onnx/doc.py: the ONNX
 * node tests) start with a line beginning KEEP_MARK; rewriting the matrix
 * keeps everything from there to the end of the file it replaces. */
static const char KEEP_MARK[] = "<!-- kept by backplane conform";

/* The kept tail of the file at path (malloc'd), or NULL if none. */
static char *kept_tail(const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return NULL;
    char *text = NULL;
    size_t cap = 0;
    ssize_t n = getdelim(&text, &cap, '\0', in); /* the whole file */
    fclose(in);
    char *at = n > 0 ? text : NULL; /* the first line that begins with KEEP_MARK */
    while (at && strncmp(at, KEEP_MARK, sizeof KEEP_MARK - 1) != 0) {
        at = strchr(at, '\n');
        at = at ? at + 1 : NULL;
    }
    if (!at) {
        free(text);
        return NULL;
    }
    memmove(text, at, strlen(at) + 1);
    return text;
}

static bool write_merged(const char *path, const cell_table *t, const backend_totals *totals)
{
    char *kept = kept_tail(path);
    FILE *f = fopen(path, "w");
    if (!f) {
        free(kept);
        return false;
    }
    fputs(MERGED_HEADER, f);
    fputs("| backend | plugin version | passed | failed | unsupported | crashed |\n"
          "|---|---|---|---|---|---|\n", f);
    for (int b = 0; b < t->n_backends; b++)
        fprintf(f, "| %s | %s | %zu | %zu | %zu | %zu |\n", t->backends[b], totals[b].version,
                totals[b].n[0], totals[b].n[1], totals[b].n[2], totals[b].n[3]);
    fputc('\n', f);
    fputs(LEGEND, f);
    fputc('\n', f);
    write_table(f, t);
    if (kept) {
        fputc('\n', f);
        fputs(kept, f);
        free(kept);
    }
    return fclose(f) == 0;
}

bool cf_merge_matrix(const char *const *json_paths, size_t n_paths, const char *path,
                     bp_status *status, char *err, size_t err_size)
{
    cell_table *t = calloc(1, sizeof *t);
    backend_totals *totals = calloc(MAX_BACKENDS, sizeof *totals);
    bool ok = t && totals;
    if (!ok) {
        *status = BP_ERR_OUT_OF_MEMORY;
        snprintf(err, err_size, "out of memory");
    }
    for (size_t i = 0; ok && i < n_paths; i++)
        ok = read_runs(json_paths[i], t, totals, status, err, err_size);
    if (ok && !write_merged(path, t, totals)) {
        ok = false;
        *status = BP_ERR_IO;
        snprintf(err, err_size, "cannot write %s", path);
    }
    free(t);
    free(totals);
    return ok;
}

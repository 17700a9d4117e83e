/* backplane bench: how fast each backend runs a few representative ops.
 *
 * For every op, size and backend: inputs are made once (uniform random f32,
 * outside the timing), one untimed warm-up call, then timed samples until at
 * least --min-reps samples and --min-time seconds. One sample is `inner`
 * back-to-back calls, inner chosen so a sample lasts >= 1 ms (only tiny ops
 * get inner > 1; the clock's own cost then stays out of the result). Each
 * call makes its output and releases it, so the time includes allocating the
 * result, as NumPy's `a + b` does; the backend is synchronised before the
 * clock stops. The median sample / inner is reported, with the throughput
 * (GFLOP/s for matmul, GB/s of operand traffic for the rest) and the ratio of
 * throughputs to the first backend named. Progress goes to stderr. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const CMD = "bench";

enum { MAX_ITEMS = 16, MAX_SAMPLES = 100000 };

typedef enum op_kind { K_MATMUL, K_ADD, K_EXP, K_SUM, K_SOFTMAX, K_ADD_TINY } op_kind;

typedef struct op_def {
    const char *name;
    op_kind kind;
    const char *default_sizes; /* comma-separated */
    const char *what;
} op_def;

static const op_def OPS[] = {
    {"matmul", K_MATMUL, "128,1024", "f32 N x N times N x N (GFLOP/s = 2 N^3 / t)"},
    {"add", K_ADD, "16777216", "f32 a + b, N elements (GB/s counts 3 N * 4 bytes)"},
    {"exp", K_EXP, "16777216", "f32 exp(x), N elements (GB/s counts 2 N * 4 bytes)"},
    {"sum", K_SUM, "16777216", "f32 sum of N elements to a scalar (GB/s counts N * 4 bytes)"},
    {"softmax", K_SOFTMAX, "4096x1024", "f32 softmax over the rows of R x C (GB/s: 2 R C * 4)"},
    {"add_tiny", K_ADD_TINY, "4", "f32 a + b on N (4) elements: the per-op overhead"},
};
#define N_OPS (sizeof OPS / sizeof OPS[0])

typedef struct result {
    const char *op, *backend;
    char size[32];
    double median, throughput;
    const char *unit;
    int64_t samples, inner;
} result;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: backplane bench [--backend NAME ...] [--op NAME ...] [--size S ...]\n"
            "                       [--json] [--config FILE] [--min-time SEC] [--min-reps N]\n"
            "\n"
            "Time ops on each backend: a warm-up, then samples until the median is stable\n"
            "(at least --min-reps samples and --min-time seconds). Prints the median time,\n"
            "GFLOP/s or GB/s, and the throughput ratio to the first backend named.\n"
            "\n"
            "options:\n"
            "  --backend NAME  a backend to time (repeat for several; default: the\n"
            "                  configured default backend)\n"
            "  --op NAME       an op to time (repeat; default: all of them)\n"
            "  --size S        a size for every chosen op instead of its defaults (repeat);\n"
            "                  N, 2^K, or RxC for softmax (N alone: N x 1024)\n"
            "  --json          print a JSON array of results on stdout instead of a table\n"
            "  --config FILE   read FILE instead of the layered defaults\n"
            "  --min-time SEC  least total time per measurement (default 0.2)\n"
            "  --min-reps N    least number of samples (default 5)\n"
            "  -h, --help      show this help and exit\n"
            "\n"
            "ops:\n");
    for (size_t i = 0; i < N_OPS; i++)
        fprintf(f, "  %-9s %s; default size %s\n", OPS[i].name, OPS[i].what,
                OPS[i].default_sizes);
}

/* "N", "2^K" or "RxC" -> rows, cols (cols 0 when not given). */
static bool parse_size(const char *s, int64_t *rows, int64_t *cols)
{
    char buf[32];
    if (strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    char *x = strchr(buf, 'x');
    *cols = 0;
    if (x) {
        *x = '\0';
        if (!cli_parse_i64(x + 1, 1, (int64_t)1 << 40, cols))
            return false;
    }
    char *caret = strchr(buf, '^');
    if (caret) {
        int64_t base, e;
        *caret = '\0';
        if (!cli_parse_i64(buf, 2, 2, &base) || !cli_parse_i64(caret + 1, 0, 40, &e))
            return false;
        *rows = (int64_t)1 << e;
        return true;
    }
    return cli_parse_i64(buf, 1, (int64_t)1 << 40, rows);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The inputs of one measurement and the call being timed. */
typedef struct job {
    op_kind kind;
    bp_tensor *a, *b;
} job;

static bp_status run_once(const job *j)
{
    bp_tensor *out = NULL;
    bp_status st;
    switch (j->kind) {
    case K_MATMUL: st = bp_matmul(j->a, j->b, &out); break;
    case K_ADD: case K_ADD_TINY: st = bp_add(j->a, j->b, &out); break;
    case K_EXP: st = bp_exp(j->a, &out); break;
    case K_SUM: st = bp_sum(j->a, 0, NULL, false, &out); break;
    default: st = bp_softmax(j->a, -1, &out); break;
    }
    bp_tensor_release(out);
    return st;
}

/* Make the inputs, warm up, sample. */
static int measure(bp_backend *be, const op_def *op, int64_t rows, int64_t cols, double min_time,
                   int64_t min_reps, result *r)
{
    job j = {op->kind, NULL, NULL};
    int64_t shape_a[2], shape_b[2];
    int32_t rank = 1;
    double flops = 0, bytes = 0;
    switch (op->kind) {
    case K_MATMUL:
        rank = 2;
        shape_a[0] = shape_a[1] = shape_b[0] = shape_b[1] = rows;
        flops = 2.0 * (double)rows * (double)rows * (double)rows;
        snprintf(r->size, sizeof r->size, "%lld", (long long)rows);
        break;
    case K_SOFTMAX:
        rank = 2;
        shape_a[0] = rows;
        shape_a[1] = cols ? cols : 1024;
        bytes = 2.0 * 4 * (double)shape_a[0] * (double)shape_a[1];
        snprintf(r->size, sizeof r->size, "%lldx%lld", (long long)shape_a[0], (long long)shape_a[1]);
        break;
    default:
        shape_a[0] = shape_b[0] = cols ? rows * cols : rows;
        bytes = (op->kind == K_ADD || op->kind == K_ADD_TINY ? 3.0 : op->kind == K_EXP ? 2.0 : 1.0) *
                4 * (double)shape_a[0];
        snprintf(r->size, sizeof r->size, "%lld", (long long)shape_a[0]);
        break;
    }
    bp_status st = bp_random_uniform(be, BP_F32, rank, shape_a, 1, 0, -1.0, 1.0, &j.a);
    if (st == BP_OK && (op->kind == K_MATMUL || op->kind == K_ADD || op->kind == K_ADD_TINY))
        st = bp_random_uniform(be, BP_F32, rank, op->kind == K_MATMUL ? shape_b : shape_a, 2, 0,
                               -1.0, 1.0, &j.b);
    if (st == BP_OK)
        st = run_once(&j); /* warm-up: first-touch of buffers, thread start-up */
    if (st == BP_OK)
        st = bp_backend_synchronize(be);
    if (st != BP_OK) {
        int rc = cli_fail(CMD, op->name, st);
        bp_tensor_release(j.a);
        bp_tensor_release(j.b);
        return rc;
    }
    /* calibrate: calls per sample so that a sample lasts >= 1 ms */
    int64_t inner = 1;
    for (;;) {
        double t0 = cli_now();
        for (int64_t i = 0; i < inner && st == BP_OK; i++)
            st = run_once(&j);
        if (st == BP_OK)
            st = bp_backend_synchronize(be);
        if (st != BP_OK || cli_now() - t0 >= 1e-3 || inner >= ((int64_t)1 << 24))
            break;
        inner *= 4;
    }
    double *samples = malloc(MAX_SAMPLES * sizeof *samples);
    int64_t n = 0;
    double start = cli_now();
    while (st == BP_OK && samples && n < MAX_SAMPLES &&
           (n < min_reps || cli_now() - start < min_time)) {
        double t0 = cli_now();
        for (int64_t i = 0; i < inner && st == BP_OK; i++)
            st = run_once(&j);
        if (st == BP_OK)
            st = bp_backend_synchronize(be);
        samples[n++] = (cli_now() - t0) / (double)inner;
    }
    int rc = CLI_EXIT_OK;
    if (st != BP_OK)
        rc = cli_fail(CMD, op->name, st);
    else if (!samples)
        rc = cli_error(CMD, "out of memory");
    if (rc == CLI_EXIT_OK) {
        qsort(samples, (size_t)n, sizeof *samples, cmp_double);
        r->median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
        r->samples = n;
        r->inner = inner;
        if (op->kind == K_MATMUL) {
            r->throughput = flops / r->median * 1e-9;
            r->unit = "GFLOP/s";
        } else {
            r->throughput = bytes / r->median * 1e-9;
            r->unit = "GB/s";
        }
    }
    free(samples);
    bp_tensor_release(j.a);
    bp_tensor_release(j.b);
    return rc;
}

static void print_time(char *buf, size_t cap, double s)
{
    if (s >= 1.0)
        snprintf(buf, cap, "%.3f s", s);
    else if (s >= 1e-3)
        snprintf(buf, cap, "%.3f ms", s * 1e3);
    else if (s >= 1e-6)
        snprintf(buf, cap, "%.3f us", s * 1e6);
    else
        snprintf(buf, cap, "%.1f ns", s * 1e9);
}

/* The first backend's result for the same op and size, or NULL. */
static const result *baseline(const result *rs, size_t n, const result *r, const char *first)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rs[i].op, r->op) == 0 && strcmp(rs[i].size, r->size) == 0 &&
            strcmp(rs[i].backend, first) == 0)
            return &rs[i];
    return NULL;
}

static void print_results(const result *rs, size_t n, const char *first, bool json)
{
    if (json) {
        printf("[\n");
        for (size_t i = 0; i < n; i++) {
            const result *r = &rs[i], *b = baseline(rs, n, r, first);
            printf("  {\"op\": ");
            cli_json_string(stdout, r->op);
            printf(", \"size\": ");
            cli_json_string(stdout, r->size);
            printf(", \"backend\": ");
            cli_json_string(stdout, r->backend);
            printf(", \"median_s\": %.9g, \"throughput\": %.6g, \"unit\": \"%s\", "
                   "\"samples\": %lld, \"calls_per_sample\": %lld, \"ratio\": %.4g}%s\n",
                   r->median, r->throughput, r->unit, (long long)r->samples, (long long)r->inner,
                   b ? b->median / r->median : 1.0, i + 1 < n ? "," : "");
        }
        printf("]\n");
        return;
    }
    printf("%-9s %-10s %-10s %12s %16s %9s\n", "op", "size", "backend", "median", "throughput",
           "ratio");
    for (size_t i = 0; i < n; i++) {
        const result *r = &rs[i], *b = baseline(rs, n, r, first);
        char t[32], tp[32];
        print_time(t, sizeof t, r->median);
        snprintf(tp, sizeof tp, "%.2f %s", r->throughput, r->unit);
        printf("%-9s %-10s %-10s %12s %16s %9.3f\n", r->op, r->size, r->backend, t, tp,
               b ? b->median / r->median : 1.0);
    }
    printf("(ratio: throughput relative to %s; higher is faster)\n", first);
}

int cli_bench(int argc, char **argv)
{
    const char *backends[MAX_ITEMS], *ops[MAX_ITEMS], *sizes[MAX_ITEMS], *config = NULL;
    size_t n_backends = 0, n_ops = 0, n_sizes = 0;
    bool json = false;
    double min_time = 0.2;
    int64_t min_reps = 5;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--backend", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (n_backends == MAX_ITEMS)
                return cli_usage_error(CMD, "at most %d --backend options", MAX_ITEMS);
            backends[n_backends++] = v;
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--op", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            size_t k = 0;
            while (k < N_OPS && strcmp(OPS[k].name, v) != 0)
                k++;
            if (k == N_OPS)
                return cli_usage_error(CMD, "unknown op '%s'", v);
            if (n_ops == MAX_ITEMS)
                return cli_usage_error(CMD, "at most %d --op options", MAX_ITEMS);
            ops[n_ops++] = v;
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--size", &v)) != 0) {
            int64_t r, c;
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!parse_size(v, &r, &c))
                return cli_usage_error(CMD, "bad size '%s' (N, 2^K or RxC)", v);
            if (n_sizes == MAX_ITEMS)
                return cli_usage_error(CMD, "at most %d --size options", MAX_ITEMS);
            sizes[n_sizes++] = v;
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--config", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            config = v;
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--min-time", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!cli_parse_f64(v, &min_time) || min_time < 0)
                return cli_usage_error(CMD, "bad --min-time '%s'", v);
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--min-reps", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!cli_parse_i64(v, 1, 100000, &min_reps))
                return cli_usage_error(CMD, "bad --min-reps '%s'", v);
        } else {
            return cli_usage_error(CMD, "unknown argument '%s'", argv[i]);
        }
    }
    if (n_ops == 0)
        for (size_t k = 0; k < N_OPS; k++)
            ops[n_ops++] = OPS[k].name;

    bp_context *ctx = NULL;
    bp_status st = bp_context_create(config, &ctx);
    if (st != BP_OK)
        return cli_fail(CMD, "bp_context_create", st);
    bp_backend *bes[MAX_ITEMS];
    if (n_backends == 0) {
        st = bp_backend_default(ctx, &bes[0]);
        if (st != BP_OK) {
            int rc = cli_fail(CMD, "bp_backend_default", st);
            bp_context_destroy(ctx);
            return rc;
        }
        backends[n_backends++] = bp_backend_name(bes[0]);
    } else {
        for (size_t b = 0; b < n_backends; b++) {
            st = bp_backend_get(ctx, backends[b], &bes[b]);
            if (st != BP_OK) {
                int rc = cli_fail(CMD, backends[b], st);
                bp_context_destroy(ctx);
                return rc;
            }
        }
    }

    /* every (op, size) for every backend, backends adjacent so machine noise
     * hits them alike */
    result rs[MAX_ITEMS * 4 * MAX_ITEMS];
    size_t n_rs = 0, total = 0, done = 0;
    for (size_t o = 0; o < n_ops; o++) {
        const op_def *op = NULL;
        for (size_t k = 0; k < N_OPS; k++)
            if (strcmp(OPS[k].name, ops[o]) == 0)
                op = &OPS[k];
        total += (n_sizes ? n_sizes : (size_t)(strchr(op->default_sizes, ',') ? 2 : 1)) * n_backends;
    }
    int rc = CLI_EXIT_OK;
    for (size_t o = 0; o < n_ops && rc == CLI_EXIT_OK; o++) {
        const op_def *op = NULL;
        for (size_t k = 0; k < N_OPS; k++)
            if (strcmp(OPS[k].name, ops[o]) == 0)
                op = &OPS[k];
        char defaults[64];
        const char *list[MAX_ITEMS];
        size_t n_list = 0;
        if (n_sizes) {
            for (size_t s = 0; s < n_sizes; s++)
                list[n_list++] = sizes[s];
        } else {
            snprintf(defaults, sizeof defaults, "%s", op->default_sizes);
            for (char *tok = strtok(defaults, ","); tok && n_list < MAX_ITEMS; tok = strtok(NULL, ","))
                list[n_list++] = tok;
        }
        for (size_t s = 0; s < n_list && rc == CLI_EXIT_OK; s++) {
            int64_t rows, cols;
            parse_size(list[s], &rows, &cols);
            for (size_t b = 0; b < n_backends && rc == CLI_EXIT_OK; b++) {
                result *r = &rs[n_rs];
                memset(r, 0, sizeof *r);
                r->op = op->name;
                r->backend = backends[b];
                fprintf(stderr, "bench: [%zu/%zu] %s %s on %s...\n", ++done, total, op->name,
                        list[s], backends[b]);
                rc = measure(bes[b], op, rows, cols, min_time, min_reps, r);
                if (rc == CLI_EXIT_OK)
                    n_rs++;
            }
        }
    }
    if (n_rs)
        print_results(rs, n_rs, backends[0], json);
    bp_context_destroy(ctx);
    return rc;
}

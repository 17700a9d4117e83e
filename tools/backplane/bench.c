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
    double flops, bytes; /* work per call, for the throughput */
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

/* calls back to back, then a synchronise: one sample */
static bp_status run_calls(bp_backend *be, const job *j, int64_t calls)
{
    bp_status st = BP_OK;
    for (int64_t i = 0; i < calls && st == BP_OK; i++)
        st = run_once(j);
    return st == BP_OK ? bp_backend_synchronize(be) : st;
}

/* The inputs' shapes for op at rows x cols, the work per call, and the size
 * as printed. */
static int32_t job_shapes(const op_def *op, int64_t rows, int64_t cols, int64_t *shape_a,
                          int64_t *shape_b, job *j, result *r)
{
    switch (op->kind) {
    case K_MATMUL:
        shape_a[0] = shape_a[1] = shape_b[0] = shape_b[1] = rows;
        j->flops = 2.0 * (double)rows * (double)rows * (double)rows;
        snprintf(r->size, sizeof r->size, "%lld", (long long)rows);
        return 2;
    case K_SOFTMAX:
        shape_a[0] = rows;
        shape_a[1] = cols ? cols : 1024;
        j->bytes = 2.0 * 4 * (double)shape_a[0] * (double)shape_a[1];
        snprintf(r->size, sizeof r->size, "%lldx%lld", (long long)shape_a[0], (long long)shape_a[1]);
        return 2;
    default:
        shape_a[0] = shape_b[0] = cols ? rows * cols : rows;
        j->bytes = (op->kind == K_ADD || op->kind == K_ADD_TINY ? 3.0 : op->kind == K_EXP ? 2.0 : 1.0) *
                   4 * (double)shape_a[0];
        snprintf(r->size, sizeof r->size, "%lld", (long long)shape_a[0]);
        return 1;
    }
}

/* Uniform f32 values in [-1, 1) made on the host (xorshift64*, keyed by
 * seed) and copied in: a plugin without random ops can be benchmarked too. */
static bp_status host_uniform(bp_backend *be, int32_t rank, const int64_t *shape, uint64_t seed,
                              bp_tensor **out)
{
    int64_t n = 1;
    for (int32_t k = 0; k < rank; k++)
        n *= shape[k];
    float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v)
        return BP_ERR_OUT_OF_MEMORY;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        v[i] = (float)((double)((x * 0x2545F4914F6CDD1Dull) >> 11) * 0x1p-52 - 1.0);
    }
    bp_status st = bp_tensor_from_host(be, BP_F32, rank, shape, v, out);
    free(v);
    return st;
}

/* Make the inputs (uniform random f32) and run one untimed warm-up call:
 * first-touch of buffers, thread start-up. */
static bp_status prepare(bp_backend *be, const op_def *op, int64_t rows, int64_t cols, job *j,
                         result *r)
{
    int64_t shape_a[2], shape_b[2];
    memset(j, 0, sizeof *j);
    j->kind = op->kind;
    int32_t rank = job_shapes(op, rows, cols, shape_a, shape_b, j, r);
    bp_status st = host_uniform(be, rank, shape_a, 1, &j->a);
    if (st == BP_OK && (op->kind == K_MATMUL || op->kind == K_ADD || op->kind == K_ADD_TINY))
        st = host_uniform(be, rank, op->kind == K_MATMUL ? shape_b : shape_a, 2, &j->b);
    return st == BP_OK ? run_calls(be, j, 1) : st;
}

/* Calls per sample, so that a sample lasts >= 1 ms. */
static bp_status calibrate(bp_backend *be, const job *j, int64_t *inner)
{
    *inner = 1;
    for (;;) {
        double t0 = cli_now();
        bp_status st = run_calls(be, j, *inner);
        if (st != BP_OK || cli_now() - t0 >= 1e-3 || *inner >= ((int64_t)1 << 24))
            return st;
        *inner *= 4;
    }
}

/* Samples (seconds per call) until min_reps of them and min_time. */
static bp_status sample(bp_backend *be, const job *j, int64_t inner, double min_time,
                        int64_t min_reps, double *samples, int64_t *n)
{
    bp_status st = BP_OK;
    double start = cli_now();
    *n = 0;
    while (st == BP_OK && *n < MAX_SAMPLES && (*n < min_reps || cli_now() - start < min_time)) {
        double t0 = cli_now();
        st = run_calls(be, j, inner);
        samples[(*n)++] = (cli_now() - t0) / (double)inner;
    }
    return st;
}

/* The median and the throughput. */
static void summarize(const job *j, double *samples, int64_t n, int64_t inner, result *r)
{
    qsort(samples, (size_t)n, sizeof *samples, cmp_double);
    r->median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    r->samples = n;
    r->inner = inner;
    bool flops = j->kind == K_MATMUL;
    r->throughput = (flops ? j->flops : j->bytes) / r->median * 1e-9;
    r->unit = flops ? "GFLOP/s" : "GB/s";
}

/* Make the inputs, warm up, calibrate, sample. */
static int measure(bp_backend *be, const op_def *op, int64_t rows, int64_t cols, double min_time,
                   int64_t min_reps, result *r)
{
    job j;
    int64_t inner = 1, n = 0;
    double *samples = NULL;
    bp_status st = prepare(be, op, rows, cols, &j, r);
    if (st == BP_OK)
        st = calibrate(be, &j, &inner);
    if (st == BP_OK && !(samples = malloc(MAX_SAMPLES * sizeof *samples))) {
        bp_tensor_release(j.a);
        bp_tensor_release(j.b);
        return cli_error(CMD, "out of memory");
    }
    if (st == BP_OK)
        st = sample(be, &j, inner, min_time, min_reps, samples, &n);
    int rc = CLI_EXIT_OK;
    if (st != BP_OK)
        rc = cli_fail(CMD, op->name, st);
    else
        summarize(&j, samples, n, inner, r);
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

/* The command line, parsed. */
typedef struct args {
    const char *backends[MAX_ITEMS], *ops[MAX_ITEMS], *sizes[MAX_ITEMS], *config;
    size_t n_backends, n_ops, n_sizes;
    bool json;
    double min_time;
    int64_t min_reps;
} args;

static const op_def *find_op(const char *name)
{
    for (size_t k = 0; k < N_OPS; k++)
        if (strcmp(OPS[k].name, name) == 0)
            return &OPS[k];
    return NULL;
}

/* Append v to list (of n, at most MAX_ITEMS); a usage error past that. */
static int add_item(const char **list, size_t *n, const char *v, const char *option)
{
    if (*n == MAX_ITEMS)
        return cli_usage_error(CMD, "at most %d %s options", MAX_ITEMS, option);
    list[(*n)++] = v;
    return CLI_EXIT_OK;
}

/* The value v of option name into a; a CLI_EXIT_* code. */
static int take_value(args *a, const char *name, const char *v)
{
    int64_t r, c;
    if (strcmp(name, "--backend") == 0)
        return add_item(a->backends, &a->n_backends, v, name);
    if (strcmp(name, "--op") == 0) {
        if (!find_op(v))
            return cli_usage_error(CMD, "unknown op '%s'", v);
        return add_item(a->ops, &a->n_ops, v, name);
    }
    if (strcmp(name, "--size") == 0) {
        if (!parse_size(v, &r, &c))
            return cli_usage_error(CMD, "bad size '%s' (N, 2^K or RxC)", v);
        return add_item(a->sizes, &a->n_sizes, v, name);
    }
    if (strcmp(name, "--config") == 0) {
        a->config = v;
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--min-time") == 0) {
        if (!cli_parse_f64(v, &a->min_time) || a->min_time < 0)
            return cli_usage_error(CMD, "bad --min-time '%s'", v);
        return CLI_EXIT_OK;
    }
    if (!cli_parse_i64(v, 1, 100000, &a->min_reps))
        return cli_usage_error(CMD, "bad --min-reps '%s'", v);
    return CLI_EXIT_OK;
}

/* argv into a. -1: go on; otherwise the exit code (help, usage errors). */
static int parse_args(int argc, char **argv, args *a)
{
    static const char *const valued[] = {"--backend", "--op",       "--size",
                                         "--config",  "--min-time", "--min-reps"};
    memset(a, 0, sizeof *a);
    a->min_time = 0.2;
    a->min_reps = 5;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--json") == 0) {
            a->json = true;
            continue;
        }
        size_t k = 0;
        const char *v = NULL;
        int m = 0;
        while (k < sizeof valued / sizeof valued[0] &&
               (m = cli_option_value(CMD, argc, argv, &i, valued[k], &v)) == 0)
            k++;
        if (m < 0)
            return CLI_EXIT_USAGE;
        if (m == 0)
            return cli_usage_error(CMD, "unknown argument '%s'", argv[i]);
        int rc = take_value(a, valued[k], v);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (a->n_ops == 0)
        for (size_t k = 0; k < N_OPS; k++)
            a->ops[a->n_ops++] = OPS[k].name;
    return -1;
}

/* The backends named (or the default one) into bes; names them in a when
 * none was. A CLI_EXIT_* code. */
static int open_backends(bp_context *ctx, args *a, bp_backend **bes)
{
    if (a->n_backends == 0) {
        bp_status st = bp_backend_default(ctx, &bes[0]);
        if (st != BP_OK)
            return cli_fail(CMD, "bp_backend_default", st);
        a->backends[a->n_backends++] = bp_backend_name(bes[0]);
        return CLI_EXIT_OK;
    }
    for (size_t b = 0; b < a->n_backends; b++) {
        bp_status st = bp_backend_get(ctx, a->backends[b], &bes[b]);
        if (st != BP_OK)
            return cli_fail(CMD, a->backends[b], st);
    }
    return CLI_EXIT_OK;
}

/* The sizes to time op at: --size, else the op's defaults (split into buf). */
static size_t op_sizes(const args *a, const op_def *op, char *buf, size_t cap, const char **list)
{
    size_t n = 0;
    if (a->n_sizes) {
        for (size_t s = 0; s < a->n_sizes; s++)
            list[n++] = a->sizes[s];
        return n;
    }
    snprintf(buf, cap, "%s", op->default_sizes);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok && n < MAX_ITEMS; tok = strtok_r(NULL, ",", &save))
        list[n++] = tok;
    return n;
}

/* Every (op, size) for every backend, backends adjacent so machine noise hits
 * them alike; results into rs. A CLI_EXIT_* code. */
static int run_all(const args *a, bp_backend **bes, result *rs, size_t *n_rs)
{
    size_t total = 0, done = 0;
    char buf[64];
    const char *list[MAX_ITEMS];
    for (size_t o = 0; o < a->n_ops; o++)
        total += op_sizes(a, find_op(a->ops[o]), buf, sizeof buf, list) * a->n_backends;
    for (size_t o = 0; o < a->n_ops; o++) {
        const op_def *op = find_op(a->ops[o]);
        size_t n_list = op_sizes(a, op, buf, sizeof buf, list);
        for (size_t s = 0; s < n_list; s++) {
            int64_t rows, cols;
            parse_size(list[s], &rows, &cols);
            for (size_t b = 0; b < a->n_backends; b++) {
                result *r = &rs[*n_rs];
                memset(r, 0, sizeof *r);
                r->op = op->name;
                r->backend = a->backends[b];
                fprintf(stderr, "bench: [%zu/%zu] %s %s on %s...\n", ++done, total, op->name,
                        list[s], a->backends[b]);
                int rc = measure(bes[b], op, rows, cols, a->min_time, a->min_reps, r);
                if (rc != CLI_EXIT_OK)
                    return rc;
                (*n_rs)++;
            }
        }
    }
    return CLI_EXIT_OK;
}

int cli_bench(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    bp_context *ctx = NULL;
    bp_status st = bp_context_create(a.config, &ctx);
    if (st != BP_OK)
        return cli_fail(CMD, "bp_context_create", st);
    bp_backend *bes[MAX_ITEMS];
    /* room for every op x size x backend the options allow */
    result *rs = calloc((size_t)MAX_ITEMS * MAX_ITEMS * MAX_ITEMS, sizeof *rs);
    size_t n_rs = 0;
    rc = rs ? open_backends(ctx, &a, bes) : cli_error(CMD, "out of memory");
    if (rc == CLI_EXIT_OK)
        rc = run_all(&a, bes, rs, &n_rs);
    if (n_rs)
        print_results(rs, n_rs, a.backends[0], a.json);
    free(rs);
    bp_context_destroy(ctx);
    return rc;
}

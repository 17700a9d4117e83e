/* backplane bench: how fast each backend runs an op.
 *
 * An op is named by a spec, NAME[:MOD]... (see usage()): any unary, binary
 * or reduction op by its name, and matmul, where, softmax, log_softmax, cast,
 * gather, concat, pad, slice and transpose, and of ABI 1.4's ops gemm (beside
 * gemm_old, the same by transpose, matmul and add), cumsum, topk and
 * scatter_add; the modifiers choose dtypes and axes. For every op, size and backend: inputs are made once on the host
 * (uniform random values, outside the timing) and copied in, one untimed
 * warm-up call, then timed samples until at least --min-reps samples and
 * --min-time seconds. One sample is `inner` back-to-back calls, inner chosen
 * so a sample lasts >= 1 ms (only tiny ops get inner > 1; the clock's own
 * cost then stays out of the result). Each call makes its output and
 * releases it, so the time includes allocating the result, as NumPy's
 * `a + b` does; the backend is synchronised before the clock stops. The
 * median sample / inner is reported, with the throughput (GFLOP/s for
 * matmul, GB/s of operand traffic for the rest) and the ratio of
 * throughputs to the first backend named. Progress goes to stderr.
 * bench/numpy_compare.py times the same specs in NumPy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/cast.h>

#include "cli.h"

static const char *const CMD = "bench";

enum { MAX_ITEMS = 16, MAX_SAMPLES = 100000, MAX_DIMS = 4 };

typedef enum fam {
    F_MATMUL, F_UNARY, F_BINARY, F_WHERE, F_REDUCE, F_SOFTMAX, F_CAST, F_GATHER, F_CONCAT,
    F_PAD, F_SLICE, F_TRANSPOSE, F_GEMM, F_GEMM_OLD, F_CUMSUM, F_TOPK, F_SCATTER_ADD
} fam;

/* A parsed op spec. */
typedef struct spec {
    fam f;
    bp_op op;
    bp_dtype dt, dt2;           /* the inputs' dtype; cast: the target */
    int n_dt;                   /* dtypes given */
    bool axes_given, all_axes;
    int32_t n_axes, axes[BP_MAX_RANK];
} spec;

/* The ops of the default run (no --op) and their default sizes. */
static const struct {
    const char *name, *default_sizes;
} DEFAULTS[] = {
    {"matmul", "128,1024"}, {"add", "16777216"},      {"exp", "16777216"},
    {"sum", "16777216"},    {"softmax", "4096x1024"}, {"add_tiny", "4"},
};
#define N_DEFAULTS (sizeof DEFAULTS / sizeof DEFAULTS[0])

typedef struct result {
    const char *op, *backend;
    char size[48];
    double median, throughput;
    const char *unit;
    int64_t samples, inner;
} result;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: backplane bench [--backend NAME ...] [--op SPEC ...] [--size S ...]\n"
            "                       [--json] [--config FILE] [--min-time SEC] [--min-reps N]\n"
            "\n"
            "Time ops on each backend: a warm-up, then samples until the median is stable\n"
            "(at least --min-reps samples and --min-time seconds). Prints the median time,\n"
            "GFLOP/s or GB/s, and the throughput ratio to the first backend named.\n"
            "\n"
            "options:\n"
            "  --backend NAME  a backend to time (repeat for several; default: the\n"
            "                  configured default backend)\n"
            "  --op SPEC       an op to time (repeat; default: matmul add exp sum softmax\n"
            "                  add_tiny)\n"
            "  --size S        a shape for every chosen op instead of its defaults (repeat):\n"
            "                  extents joined by x, each N or 2^K (4096x4096, 2^24)\n"
            "  --json          print a JSON array of results on stdout instead of a table\n"
            "  --config FILE   read FILE instead of the layered defaults\n"
            "  --min-time SEC  least total time per measurement (default 0.2)\n"
            "  --min-reps N    least number of samples (default 5)\n"
            "  -h, --help      show this help and exit\n"
            "\n"
            "op specs: NAME[:MOD]..., a MOD being a dtype (f32, the default; f64 f16 bf16\n"
            "i32 i64 u8 i8 bool), an axis list (0 or 0,2 or -1) or `all`. Inputs are\n"
            "uniform random on the host (floats: each input's domain in the op's schema,\n"
            "opcodes.h's BP_OP_SCHEMA, else [-1, 1); integers [-1000, 1000)). The\n"
            "default dtype is f32, i32 for integer-only ops, bool for logical ones.\n"
            "  UNARY          every elementwise op of one tensor (neg exp tanh ... celu),\n"
            "                 its parameters at their defaults; shape S\n"
            "  BINARY         every one of two tensors (add ... pow, eq ... ge,\n"
            "                 logical_and ..., bitwise_and ...); two of shape S\n"
            "  add_tiny       add at size 4 by default: the per-op overhead\n"
            "  REDUCE[:AXES]  every reduction: sum prod mean max min argmax argmin logsumexp\n"
            "                 l1 l2 var std any ... (default: all)\n"
            "  softmax[:AXIS], log_softmax[:AXIS]   default -1; S = N means N x 1024\n"
            "  matmul         S = N (N x N times N x N), MxKxN, or BxMxKxN (batched)\n"
            "  where          bool cond ? a : b, all of shape S\n"
            "  cast:SRC:DST   convert S elements of SRC to DST\n"
            "  gather[:AXIS]  take extent-of-AXIS random rows (i64 indices) of S (axis 0)\n"
            "  concat[:AXIS]  join two tensors of shape S (axis 0)\n"
            "  pad            one zero before and after every axis of S\n"
            "  slice          [1:-1] on every axis of S\n"
            "  transpose[:PERM]  a copy with the axes permuted (default reversed)\n"
            "  gemm           x @ w.T + bias by bp_gemm (trans_b); S = N: N x N (GFLOP/s)\n"
            "  gemm_old       the same the old way: transpose, matmul, add\n"
            "  cumsum[:AXIS]  along the rows of R x C (default -1); cumsum_cols: axis 0\n"
            "  topk           the top 8 of each row of R x C\n"
            "  scatter_add    scatter_elements add of R x C updates into a 1000 x C x\n"
            "                 along axis 0, an embedding's gradient (each update row to\n"
            "                 one random row; GB/s: R C * 16)\n"
            "default sizes: 2^24 elements (4096x4096 for reductions), softmax, cumsum and\n"
            "topk 4096x1024, matmul and gemm 128 and 1024, scatter_add 65536x64, add_tiny 4.\n");
}

/* "N", "2^K" or "AxBx..." -> extents (at most MAX_DIMS). */
static bool parse_size(const char *s, int64_t *dims, int *nd)
{
    char buf[48];
    if (strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    *nd = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, "x", &save); tok; tok = strtok_r(NULL, "x", &save)) {
        if (*nd == MAX_DIMS)
            return false;
        char *caret = strchr(tok, '^');
        int64_t v;
        if (caret) {
            int64_t base, e;
            *caret = '\0';
            if (!cli_parse_i64(tok, 2, 2, &base) || !cli_parse_i64(caret + 1, 0, 40, &e))
                return false;
            v = (int64_t)1 << e;
        } else if (!cli_parse_i64(tok, 1, (int64_t)1 << 40, &v)) {
            return false;
        }
        dims[(*nd)++] = v;
    }
    return *nd > 0;
}

static bool parse_dtype(const char *s, bp_dtype *dt)
{
    for (int d = 0; d < BP_DTYPE_COUNT; d++)
        if (strcmp(s, bp_dtype_name((bp_dtype)d)) == 0) {
            *dt = (bp_dtype)d;
            return true;
        }
    return false;
}

/* "0", "-1", "0,2" */
static bool parse_axes(const char *s, spec *sp)
{
    char buf[48];
    if (strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    sp->n_axes = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int64_t v;
        if (sp->n_axes == BP_MAX_RANK || !cli_parse_i64(tok, -BP_MAX_RANK, BP_MAX_RANK - 1, &v))
            return false;
        sp->axes[sp->n_axes++] = (int32_t)v;
    }
    sp->axes_given = true;
    return sp->n_axes > 0;
}

static bool find_family(const char *name, spec *sp)
{
    static const struct {
        const char *name;
        fam f;
        bp_op op;
    } named[] = {
        {"matmul", F_MATMUL, BP_OP_MATMUL}, {"add_tiny", F_BINARY, BP_OP_ADD},
        {"where", F_WHERE, BP_OP_WHERE},    {"softmax", F_SOFTMAX, BP_OP_SOFTMAX},
        {"log_softmax", F_SOFTMAX, BP_OP_LOG_SOFTMAX},
        {"cast", F_CAST, BP_OP_CAST},       {"gather", F_GATHER, BP_OP_GATHER},
        {"concat", F_CONCAT, BP_OP_CONCAT}, {"pad", F_PAD, BP_OP_PAD},
        {"slice", F_SLICE, BP_OP_SLICE},    {"transpose", F_TRANSPOSE, BP_OP_TRANSPOSE},
        {"gemm", F_GEMM, BP_OP_GEMM},       {"gemm_old", F_GEMM_OLD, BP_OP_GEMM},
        {"cumsum", F_CUMSUM, BP_OP_CUMSUM}, {"cumsum_cols", F_CUMSUM, BP_OP_CUMSUM},
        {"topk", F_TOPK, BP_OP_TOPK},       {"scatter_add", F_SCATTER_ADD, BP_OP_SCATTER_ELEMENTS},
    };
    for (size_t k = 0; k < sizeof named / sizeof named[0]; k++)
        if (strcmp(name, named[k].name) == 0) {
            sp->f = named[k].f;
            sp->op = named[k].op;
            if (strcmp(name, "cumsum_cols") == 0) /* axis 0 unless axes are given */
                sp->axes_given = true, sp->n_axes = 1, sp->axes[0] = 0;
            return true;
        }
    /* every op of a unary, binary or reduce kind, by the op table */
    for (int op = 0; op < BP_OP_COUNT; op++) {
        const bp_op_info *info = bp_op_info_of((bp_op)op);
        if (strcmp(name, info->name) != 0)
            continue;
        switch (info->kind) {
        case BP_KIND_UNARY: sp->f = F_UNARY; break;
        case BP_KIND_BINARY: sp->f = F_BINARY; break;
        case BP_KIND_REDUCE: sp->f = F_REDUCE; break;
        default: return false;
        }
        sp->op = (bp_op)op;
        return true;
    }
    return false;
}

/* NAME[:MOD]... into sp; false if it names no op or a modifier is bad. */
static bool parse_spec(const char *s, spec *sp)
{
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    memset(sp, 0, sizeof *sp);
    char *save = NULL, *tok = strtok_r(buf, ":", &save);
    if (!tok || !find_family(tok, sp))
        return false;
    /* the default dtype: f32, or the first the op's dtype class allows */
    switch (bp_op_info_of(sp->op)->dtypes) {
    case BP_DTYPES_BOOL: sp->dt = BP_BOOL; break;
    case BP_DTYPES_INTEGER: sp->dt = BP_I32; break;
    default: sp->dt = BP_F32; break;
    }
    sp->dt2 = sp->dt;
    while ((tok = strtok_r(NULL, ":", &save))) {
        bp_dtype dt;
        if (parse_dtype(tok, &dt)) {
            if (sp->n_dt == 2)
                return false;
            *(sp->n_dt++ ? &sp->dt2 : &sp->dt) = dt;
        } else if (strcmp(tok, "all") == 0) {
            sp->axes_given = sp->all_axes = true;
        } else if (!parse_axes(tok, sp)) {
            return false;
        }
    }
    return sp->f != F_CAST || sp->n_dt == 2;
}

static const char *default_sizes(const char *name, const spec *sp)
{
    for (size_t k = 0; k < N_DEFAULTS; k++)
        if (strcmp(DEFAULTS[k].name, name) == 0)
            return DEFAULTS[k].default_sizes;
    switch (sp->f) {
    case F_MATMUL: case F_GEMM: case F_GEMM_OLD: return "128,1024";
    case F_SOFTMAX: case F_CUMSUM: case F_TOPK: return "4096x1024";
    case F_SCATTER_ADD: return "65536x64";
    case F_REDUCE: return "4096x4096";
    default: return "16777216";
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The inputs of one measurement and the call being timed. */
typedef struct job {
    spec s;
    bp_tensor *in[3];
    int32_t rank;
    int64_t lo[BP_MAX_RANK], hi[BP_MAX_RANK]; /* pad: before/after; slice: starts/stops */
    double flops, bytes;                      /* work per call, for the throughput */
} job;

/* The ops of ABI 1.4 (and the old way to x @ w.T + bias, for comparison). */
static bp_status run_more(const job *j, int32_t axis, bp_tensor **out)
{
    bp_tensor *t = NULL, *u = NULL;
    bp_status st;
    switch (j->s.f) {
    case F_GEMM: return bp_gemm(j->in[0], j->in[1], j->in[2], 1, 1, false, true, out);
    case F_GEMM_OLD:
        st = bp_transpose(j->in[1], NULL, &t);
        if (st == BP_OK)
            st = bp_matmul(j->in[0], t, &u);
        if (st == BP_OK)
            st = bp_add(u, j->in[2], out);
        bp_tensor_release(t);
        bp_tensor_release(u);
        return st;
    case F_CUMSUM: return bp_cumsum(j->in[0], axis, false, false, out);
    case F_TOPK:
        st = bp_topk(j->in[0], 8, -1, true, true, out, &t);
        bp_tensor_release(t);
        return st;
    default: return bp_scatter_elements(j->in[0], j->in[1], j->in[2], 0, BP_SCATTER_ADD, out);
    }
}

static bp_status run_once(const job *j)
{
    bp_tensor *out = NULL;
    bp_status st;
    const spec *s = &j->s;
    int32_t n_axes = s->all_axes || !s->axes_given ? 0 : s->n_axes;
    const int32_t *axes = n_axes ? s->axes : NULL;
    switch (s->f) {
    case F_MATMUL: st = bp_matmul(j->in[0], j->in[1], &out); break;
    case F_UNARY: st = bp_unary(s->op, j->in[0], &out); break;
    case F_BINARY: st = bp_binary(s->op, j->in[0], j->in[1], &out); break;
    case F_WHERE: st = bp_where(j->in[0], j->in[1], j->in[2], &out); break;
    case F_REDUCE: st = bp_reduce(s->op, j->in[0], n_axes, axes, false, &out); break;
    case F_SOFTMAX:
        st = s->op == BP_OP_SOFTMAX ? bp_softmax(j->in[0], n_axes ? axes[0] : -1, &out)
                                    : bp_log_softmax(j->in[0], n_axes ? axes[0] : -1, &out);
        break;
    case F_CAST: st = bp_cast(j->in[0], s->dt2, &out); break;
    case F_GATHER: st = bp_gather(j->in[0], j->in[1], n_axes ? axes[0] : 0, &out); break;
    case F_CONCAT: st = bp_concat(2, (const bp_tensor *const *)j->in, n_axes ? axes[0] : 0, &out); break;
    case F_PAD: st = bp_pad(j->in[0], j->lo, j->hi, 0.0, &out); break;
    case F_SLICE: st = bp_slice(j->in[0], j->lo, j->hi, NULL, &out); break;
    case F_TRANSPOSE: st = bp_transpose(j->in[0], n_axes ? axes : NULL, &out); break;
    default: st = run_more(j, n_axes ? axes[0] : -1, &out); break;
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

/* Uniform values in [lo, hi) made on the host (xorshift64*, keyed by seed),
 * stored with the cast rules (integers: floor; bool: > 0), and copied in: a
 * plugin without random ops can be benchmarked too. */
static bp_status host_uniform(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                              uint64_t seed, double lo, double hi, bp_tensor **out)
{
    int64_t n = 1;
    size_t esz = bp_dtype_size(dt);
    for (int32_t k = 0; k < rank; k++)
        n *= shape[k];
    char *v = malloc((size_t)(n > 0 ? n : 1) * esz);
    if (!v)
        return BP_ERR_OUT_OF_MEMORY;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        double u = lo + (hi - lo) * ((double)((x * 0x2545F4914F6CDD1Dull) >> 11) * 0x1p-53);
        if (dt == BP_F32)
            ((float *)v)[i] = (float)u;
        else if (dt == BP_BOOL)
            v[i] = u > 0;
        else if (bp_dtype_is_float(dt))
            bp_elem_store_f64(dt, v + i * (int64_t)esz, u);
        else
            bp_elem_store_i64(dt, v + i * (int64_t)esz, (int64_t)floor(u));
    }
    bp_status st = bp_tensor_from_host(be, dt, rank, shape, v, out);
    free(v);
    return st;
}

/* The random range of input `which`: its domain in the op's schema
 * (opcodes.h's BP_OP_SCHEMA), else [-1, 1]; integers and casts [-1000,
 * 1000]. */
static void value_range(const spec *s, int which, double *lo, double *hi)
{
    *lo = -1.0, *hi = 1.0;
    if (!bp_dtype_is_float(s->dt) || s->f == F_CAST) {
        *lo = -1000.0, *hi = 1000.0;
        return;
    }
    char name[32];
    double l, h;
    bool integral;
    const bp_op_info *row = bp_op_info_of(s->op);
    if (row && *bp_op_arg_name(row->in, which, name, sizeof name) &&
        bp_op_domain(s->op, name, s->dt, &l, &h, &integral) == BP_OK)
        *lo = l, *hi = h;
}

static int64_t numel(int32_t rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int32_t k = 0; k < rank; k++)
        n *= shape[k];
    return n;
}

/* gemm and gemm_old (S = N: x and w N x N, a bias row of N) and scatter_add
 * (S = R x C, or R: C = 64; x 1000 x C; i64 row indices (R, 1) broadcast
 * to the updates' R x C, so each update row goes to one random row). */
static bp_status more_inputs(bp_backend *be, job *j, const int64_t *dims, int nd, result *r)
{
    const spec *s = &j->s;
    bp_status st;
    if (s->f != F_SCATTER_ADD) {
        if (nd != 1)
            return BP_ERR_SHAPE;
        int64_t n = dims[0], sq[2] = {n, n};
        j->flops = 2.0 * (double)n * (double)n * (double)n;
        snprintf(r->size, sizeof r->size, "%lld", (long long)n);
        st = host_uniform(be, s->dt, 2, sq, 1, -1.0, 1.0, &j->in[0]);
        if (st == BP_OK)
            st = host_uniform(be, s->dt, 2, sq, 2, -1.0, 1.0, &j->in[1]);
        return st == BP_OK ? host_uniform(be, s->dt, 1, &n, 3, -1.0, 1.0, &j->in[2]) : st;
    }
    if (nd > 2)
        return BP_ERR_SHAPE;
    int64_t upd[2] = {dims[0], nd == 2 ? dims[1] : 64}, xs[2] = {1000, upd[1]};
    int64_t col[2] = {upd[0], 1};
    j->bytes = 16.0 * (double)upd[0] * (double)upd[1];
    snprintf(r->size, sizeof r->size, "%lldx%lld", (long long)upd[0], (long long)upd[1]);
    bp_tensor *rows_idx = NULL;
    st = host_uniform(be, s->dt, 2, xs, 1, -1.0, 1.0, &j->in[0]);
    if (st == BP_OK)
        st = host_uniform(be, BP_I64, 2, col, 4, 0.0, (double)xs[0], &rows_idx);
    if (st == BP_OK)
        st = bp_broadcast_to(rows_idx, 2, upd, &j->in[1]);
    bp_tensor_release(rows_idx);
    return st == BP_OK ? host_uniform(be, s->dt, 2, upd, 5, -1.0, 1.0, &j->in[2]) : st;
}

/* The inputs' shapes for s at dims, the work per call, and the size as
 * printed; then the inputs themselves. */
static bp_status make_inputs(bp_backend *be, job *j, const int64_t *dims, int nd, result *r)
{
    const spec *s = &j->s;
    int64_t sa[BP_MAX_RANK], sb[BP_MAX_RANK];
    int32_t rank = nd;
    size_t n = 0, esz = bp_dtype_size(s->dt);
    for (int k = 0; k < nd; k++) {
        sa[k] = sb[k] = dims[k];
        n += (size_t)snprintf(r->size + n, sizeof r->size - n, "%s%lld", k ? "x" : "",
                              (long long)dims[k]);
    }
    if (s->f == F_GEMM || s->f == F_GEMM_OLD || s->f == F_SCATTER_ADD)
        return more_inputs(be, j, dims, nd, r);
    if (s->f == F_MATMUL) {
        int64_t B = nd == 4 ? dims[0] : 1, M = dims[nd == 4], K = nd == 1 ? M : dims[1 + (nd == 4)];
        int64_t N = nd == 1 ? M : dims[2 + (nd == 4)];
        if (nd == 2)
            return BP_ERR_SHAPE;
        rank = nd == 4 ? 3 : 2;
        sa[0] = sb[0] = B;
        sa[rank - 2] = M, sa[rank - 1] = K, sb[rank - 2] = K, sb[rank - 1] = N;
        j->flops = 2.0 * (double)B * (double)M * (double)N * (double)K;
    } else if ((s->f == F_SOFTMAX || s->f == F_CUMSUM || s->f == F_TOPK) && nd == 1) {
        rank = 2;
        sa[1] = 1024;
        snprintf(r->size, sizeof r->size, "%lldx1024", (long long)dims[0]);
    }
    j->rank = rank;
    int64_t count = numel(rank, sa);
    double lo, hi;
    value_range(s, 0, &lo, &hi);
    bp_dtype dt0 = s->f == F_WHERE ? BP_BOOL : s->dt;
    bp_status st = host_uniform(be, dt0, rank, sa, 1, lo, hi, &j->in[0]);
    int n_in = s->f == F_MATMUL || s->f == F_BINARY || s->f == F_CONCAT ? 2
               : s->f == F_WHERE                                     ? 3
                                                                     : 1;
    for (int i = 1; st == BP_OK && i < n_in; i++) {
        value_range(s, i, &lo, &hi);
        st = host_uniform(be, s->dt, rank, s->f == F_MATMUL ? sb : sa, (uint64_t)i + 1, lo, hi,
                          &j->in[i]);
    }
    double in_bytes = (double)count * (double)esz * (s->f == F_WHERE ? 2 : n_in);
    switch (s->f) {
    case F_GATHER: {
        int32_t ax = s->n_axes && !s->all_axes ? s->axes[0] : 0;
        ax = ax < 0 ? ax + rank : ax;
        if (ax < 0 || ax >= rank)
            return BP_ERR_INVALID_ARGUMENT;
        if (st == BP_OK)
            st = host_uniform(be, BP_I64, 1, &sa[ax], 3, 0.0, (double)sa[ax], &j->in[1]);
        j->bytes = 2.0 * in_bytes;
        break;
    }
    case F_PAD:
    case F_SLICE:
        for (int32_t k = 0; k < rank; k++) {
            j->lo[k] = 1;
            j->hi[k] = s->f == F_PAD ? 1 : -1;
        }
        j->bytes = 2.0 * in_bytes;
        break;
    case F_REDUCE: case F_TOPK: j->bytes = in_bytes; break;
    case F_CAST: j->bytes = (double)count * (double)(esz + bp_dtype_size(s->dt2)); break;
    default:
        j->bytes = in_bytes + (double)count * (double)esz;
        break;
    }
    return st;
}

/* Make the inputs and run one untimed warm-up call: first-touch of buffers,
 * thread start-up. */
static bp_status prepare(bp_backend *be, const spec *s, const int64_t *dims, int nd, job *j,
                         result *r)
{
    memset(j, 0, sizeof *j);
    j->s = *s;
    bp_status st = make_inputs(be, j, dims, nd, r);
    return st == BP_OK ? run_calls(be, j, 1) : st;
}

static void release_inputs(job *j)
{
    for (int i = 0; i < 3; i++)
        bp_tensor_release(j->in[i]);
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
    bool flops = j->s.f == F_MATMUL || j->s.f == F_GEMM || j->s.f == F_GEMM_OLD;
    r->throughput = (flops ? j->flops : j->bytes) / r->median * 1e-9;
    r->unit = flops ? "GFLOP/s" : "GB/s";
}

/* Make the inputs, warm up, calibrate, sample. */
static int measure(bp_backend *be, const char *name, const spec *s, const int64_t *dims, int nd,
                   double min_time, int64_t min_reps, result *r)
{
    job j;
    int64_t inner = 1, n = 0;
    double *samples = NULL;
    bp_status st = prepare(be, s, dims, nd, &j, r);
    if (st == BP_OK)
        st = calibrate(be, &j, &inner);
    if (st == BP_OK && !(samples = malloc(MAX_SAMPLES * sizeof *samples))) {
        release_inputs(&j);
        return cli_error(CMD, "out of memory");
    }
    if (st == BP_OK)
        st = sample(be, &j, inner, min_time, min_reps, samples, &n);
    int rc = CLI_EXIT_OK;
    if (st != BP_OK)
        rc = cli_fail(CMD, name, st);
    else
        summarize(&j, samples, n, inner, r);
    free(samples);
    release_inputs(&j);
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
    printf("%-16s %-14s %-10s %12s %16s %9s\n", "op", "size", "backend", "median", "throughput",
           "ratio");
    for (size_t i = 0; i < n; i++) {
        const result *r = &rs[i], *b = baseline(rs, n, r, first);
        char t[32], tp[32];
        print_time(t, sizeof t, r->median);
        snprintf(tp, sizeof tp, "%.2f %s", r->throughput, r->unit);
        printf("%-16s %-14s %-10s %12s %16s %9.3f\n", r->op, r->size, r->backend, t, tp,
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
    int64_t dims[MAX_DIMS];
    int nd;
    spec sp;
    if (strcmp(name, "--backend") == 0)
        return add_item(a->backends, &a->n_backends, v, name);
    if (strcmp(name, "--op") == 0) {
        if (!parse_spec(v, &sp))
            return cli_usage_error(CMD, "unknown op '%s' (see --help for the specs)", v);
        return add_item(a->ops, &a->n_ops, v, name);
    }
    if (strcmp(name, "--size") == 0) {
        if (!parse_size(v, dims, &nd))
            return cli_usage_error(CMD, "bad size '%s' (extents N or 2^K joined by x)", v);
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
        for (size_t k = 0; k < N_DEFAULTS; k++)
            a->ops[a->n_ops++] = DEFAULTS[k].name;
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
static size_t op_sizes(const args *a, const char *name, char *buf, size_t cap, const char **list)
{
    size_t n = 0;
    if (a->n_sizes) {
        for (size_t s = 0; s < a->n_sizes; s++)
            list[n++] = a->sizes[s];
        return n;
    }
    spec sp;
    parse_spec(name, &sp);
    snprintf(buf, cap, "%s", default_sizes(name, &sp));
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
        total += op_sizes(a, a->ops[o], buf, sizeof buf, list) * a->n_backends;
    for (size_t o = 0; o < a->n_ops; o++) {
        const char *name = a->ops[o];
        spec sp;
        parse_spec(name, &sp);
        size_t n_list = op_sizes(a, name, buf, sizeof buf, list);
        for (size_t s = 0; s < n_list; s++) {
            int64_t dims[MAX_DIMS];
            int nd;
            parse_size(list[s], dims, &nd);
            for (size_t b = 0; b < a->n_backends; b++) {
                result *r = &rs[*n_rs];
                memset(r, 0, sizeof *r);
                r->op = name;
                r->backend = a->backends[b];
                fprintf(stderr, "bench: [%zu/%zu] %s %s on %s...\n", ++done, total, name,
                        list[s], a->backends[b]);
                int rc = measure(bes[b], name, &sp, dims, nd, a->min_time, a->min_reps, r);
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

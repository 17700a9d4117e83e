/* The collectives under mpirun (tests/comm/CMakeLists.txt runs it with 2 and
 * 4 processes). Criterion runs each test in a process of its own, and MPI
 * can be initialised once per process with every rank taking part in the
 * same order, so this is a program of its own: each check below is one
 * behaviour, named like a Criterion test, run by every rank in turn; rank 0
 * prints "ok NAME" or "FAIL NAME" (each rank prints its own reasons) and
 * the exit status is non-zero if any failed.
 *
 *   collectives [--devsim PATH]     every check on binary (and blas_cpu,
 *                                   and devsim, staged, when given)
 *   collectives --fault leaves|dies a rank leaves (or dies) before a
 *                                   collective; the others must fail
 *                                   within the timeout, naming it
 *
 * Expected values are computed here, independently of the engine, from
 * the rule the API documents: element by element in rank order, floats in
 * double rounded once, integers wrapping. */
#define _GNU_SOURCE
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <backplane/backplane.h>
#include <backplane/cast.h>

typedef struct env {
    bp_context *ctx;
    bp_backend *be;
    bp_comm *comm;
    int rank, size;
    bool failed;          /* this check failed on this rank */
    const char *check;
} env;

static void fail(env *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(env *e, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "rank %d: FAIL %s on %s: %s\n", e->rank, e->check, bp_backend_name(e->be),
            msg);
    e->failed = true;
}

#define CHECK(e, cond, ...)          \
    do {                             \
        if (!(cond)) {               \
            fail((e), __VA_ARGS__);  \
            return;                  \
        }                            \
    } while (0)

#define CHECK_OK(e, call)                                                                      \
    do {                                                                                       \
        bp_status st_ = (call);                                                                \
        CHECK(e, st_ == BP_OK, "%s -> %s: %s", #call, bp_status_string(st_), bp_last_error()); \
    } while (0)

/* ---- inputs and the reference ---------------------------------------------------- */

static const bp_dtype NUMERIC[] = {BP_U8,  BP_I8,  BP_I16, BP_U16,  BP_I32, BP_U32,
                                   BP_I64, BP_U64, BP_F16, BP_BF16, BP_F32, BP_F64};
static const bp_dtype ALL[] = {BP_BOOL, BP_U8,  BP_I8,  BP_I16, BP_U16,  BP_I32, BP_U32,
                               BP_I64,  BP_U64, BP_F16, BP_BF16, BP_F32, BP_F64};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
/* Sizes: one element, odd ones, ones past the engine's single-message size
 * (16 KiB) and past one block of a part (512 KiB). */
static const int64_t SIZES[] = {1, 7, 1001, 40001, 300007};

/* Rank r's element i, as a double, for op (PROD stays near 1, so products
 * of four ranks neither overflow nor vanish; MAX/MIN see a NaN now and
 * then). */
static double value_of(int r, int64_t i, bp_reduce_op op, bool is_float)
{
    int64_t h = (i * 37 + (int64_t)r * 101) % 97;
    if (op == BP_REDUCE_PROD)
        return is_float ? 1.0 + (double)(h - 48) / 512.0 : (double)(h % 5 - 2);
    if (is_float && (op == BP_REDUCE_MAX || op == BP_REDUCE_MIN) && i % 251 == 17 && r == 1)
        return NAN;
    if (is_float)
        return (double)(h - 48) * 0.3125 + (double)r / 3.0 + (double)i * 1e-3;
    return (double)(h - 48) * 3 + r;
}

/* Rank r's input as the bytes of dt (the cast rules of cast.h). */
static void *input_of(int r, bp_dtype dt, int64_t n, bp_reduce_op op)
{
    size_t es = bp_dtype_size(dt);
    unsigned char *p = malloc(n ? (size_t)n * es : 1);
    for (int64_t i = 0; p && i < n; i++) {
        double v = value_of(r, i, op, bp_dtype_is_float(dt));
        if (dt == BP_BOOL)
            v = (double)((i + r) % 3 == 0);
        bp_elem_store_f64(dt, p + (size_t)i * es, v);
        if (dt == BP_U64 && i % 2) { /* u64 above 2^63: max and min order it unsigned */
            uint64_t u;
            memcpy(&u, p + (size_t)i * es, 8);
            u ^= (uint64_t)1 << 63;
            memcpy(p + (size_t)i * es, &u, 8);
        }
    }
    return p;
}

/* The documented result of op over every rank's input, as dt's bytes. */
static void *expected_of(int size, bp_dtype dt, int64_t n, bp_reduce_op op)
{
    size_t es = bp_dtype_size(dt);
    void **in = calloc((size_t)size, sizeof *in);
    unsigned char *out = malloc(n ? (size_t)n * es : 1);
    for (int r = 0; r < size; r++)
        in[r] = input_of(r, dt, n, op);
    for (int64_t i = 0; i < n; i++) {
        if (bp_dtype_is_float(dt)) {
            double acc = bp_elem_load_f64(dt, (unsigned char *)in[0] + (size_t)i * es);
            for (int r = 1; r < size; r++) {
                double v = bp_elem_load_f64(dt, (unsigned char *)in[r] + (size_t)i * es);
                switch (op) {
                case BP_REDUCE_SUM:
                case BP_REDUCE_AVG: acc = acc + v; break;
                case BP_REDUCE_PROD: acc = acc * v; break;
                case BP_REDUCE_MAX: acc = isnan(acc) || isnan(v) ? NAN : fmax(acc, v); break;
                case BP_REDUCE_MIN: acc = isnan(acc) || isnan(v) ? NAN : fmin(acc, v); break;
                }
            }
            if (op == BP_REDUCE_AVG)
                acc /= size;
            bp_elem_store_f64(dt, out + (size_t)i * es, acc);
        } else {
            uint64_t acc = (uint64_t)bp_elem_load_i64(dt, (unsigned char *)in[0] + (size_t)i * es);
            for (int r = 1; r < size; r++) {
                int64_t v = bp_elem_load_i64(dt, (unsigned char *)in[r] + (size_t)i * es);
                switch (op) {
                case BP_REDUCE_SUM:
                case BP_REDUCE_AVG: acc += (uint64_t)v; break;
                case BP_REDUCE_PROD: acc *= (uint64_t)v; break;
                case BP_REDUCE_MAX:
                    acc = (dt == BP_U64 ? (uint64_t)v > acc : v > (int64_t)acc) ? (uint64_t)v : acc;
                    break;
                case BP_REDUCE_MIN:
                    acc = (dt == BP_U64 ? (uint64_t)v < acc : v < (int64_t)acc) ? (uint64_t)v : acc;
                    break;
                }
            }
            /* wrap to the dtype's width: its low bytes (little-endian) */
            memcpy(out + (size_t)i * es, &acc, es);
        }
    }
    for (int r = 0; r < size; r++)
        free(in[r]);
    free(in);
    return out;
}

/* Equal element by element: bits, except that any NaN equals any NaN. */
static int64_t first_difference(bp_dtype dt, const void *a, const void *b, int64_t n)
{
    size_t es = bp_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *x = (const unsigned char *)a + (size_t)i * es;
        const unsigned char *y = (const unsigned char *)b + (size_t)i * es;
        if (memcmp(x, y, es) == 0)
            continue;
        if (bp_dtype_is_float(dt) && isnan(bp_elem_load_f64(dt, x)) &&
            isnan(bp_elem_load_f64(dt, y)))
            continue;
        return i;
    }
    return -1;
}

static bp_tensor *tensor_of(env *e, bp_dtype dt, int32_t rank, const int64_t *shape,
                            const void *data)
{
    bp_tensor *t = NULL;
    bp_status st = bp_tensor_from_host(e->be, dt, rank, shape, data, &t);
    if (st != BP_OK)
        fail(e, "bp_tensor_from_host: %s", bp_last_error());
    return t;
}

/* t's elements against want (numel elements of dt). */
static bool matches(env *e, const bp_tensor *t, bp_dtype dt, const void *want, int64_t numel,
                    const char *what)
{
    if (bp_tensor_dtype(t) != dt || bp_tensor_numel(t) != numel) {
        fail(e, "%s: got %s with %lld elements, wanted %s with %lld", what,
             bp_dtype_name(bp_tensor_dtype(t)), (long long)bp_tensor_numel(t),
             bp_dtype_name(dt), (long long)numel);
        return false;
    }
    size_t bytes = (size_t)numel * bp_dtype_size(dt);
    void *got = malloc(bytes ? bytes : 1);
    bp_status st = bp_tensor_to_host(t, got, bytes);
    int64_t at = st == BP_OK ? first_difference(dt, got, want, numel) : -1;
    if (st != BP_OK)
        fail(e, "%s: bp_tensor_to_host: %s", what, bp_last_error());
    else if (at >= 0)
        fail(e, "%s: element %lld is %g, wanted %g", what, (long long)at,
             bp_elem_load_f64(dt, (char *)got + (size_t)at * bp_dtype_size(dt)),
             bp_elem_load_f64(dt, (const char *)want + (size_t)at * bp_dtype_size(dt)));
    free(got);
    return st == BP_OK && at < 0;
}

/* ---- the checks -------------------------------------------------------------------- */

static bool op_takes(bp_reduce_op op, bp_dtype dt)
{
    return op != BP_REDUCE_AVG || bp_dtype_is_float(dt);
}

/* Whether e's backend holds dt at all: a plugin built before a dtype
 * arrived (devsim: i16, u16 and u32 came with plugin ABI 1.10) holds none. */
static bool holds(const env *e, bp_dtype dt) { return bp_backend_supports(e->be, BP_OP_COPY, dt); }

static void all_reduce_combines_every_rank_in_rank_order_for_every_dtype_op_and_size(env *e)
{
    for (size_t s = 0; s < COUNT(SIZES); s++) {
        for (size_t d = 0; d < COUNT(NUMERIC); d++) {
            for (int op = BP_REDUCE_SUM; op <= BP_REDUCE_AVG; op++) {
                bp_dtype dt = NUMERIC[d];
                if (!op_takes((bp_reduce_op)op, dt) || !holds(e, dt))
                    continue;
                int64_t n = SIZES[s];
                void *in = input_of(e->rank, dt, n, (bp_reduce_op)op);
                void *want = expected_of(e->size, dt, n, (bp_reduce_op)op);
                bp_tensor *x = tensor_of(e, dt, 1, &n, in), *y = NULL;
                bp_status st = x ? bp_all_reduce(e->comm, x, (bp_reduce_op)op, &y) : BP_ERR_IO;
                char what[96];
                snprintf(what, sizeof what, "%s %s of %lld", bp_reduce_op_name((bp_reduce_op)op),
                         bp_dtype_name(dt), (long long)n);
                if (x && st != BP_OK)
                    fail(e, "%s: %s", what, bp_last_error());
                else if (x)
                    matches(e, y, dt, want, n, what);
                bp_tensor_release(x);
                bp_tensor_release(y);
                free(in);
                free(want);
                if (e->failed)
                    return;
            }
        }
    }
}

static void all_reduce_keeps_the_shape(env *e)
{
    const int64_t shape[3] = {2, 3, 5};
    float in[30], want[30];
    for (int i = 0; i < 30; i++) {
        in[i] = (float)(i + e->rank);
        want[i] = 0;
        for (int r = 0; r < e->size; r++)
            want[i] += (float)(i + r);
    }
    bp_tensor *x = tensor_of(e, BP_F32, 3, shape, in), *y = NULL;
    CHECK(e, x, "no input");
    CHECK_OK(e, bp_all_reduce(e->comm, x, BP_REDUCE_SUM, &y));
    CHECK(e, bp_tensor_rank(y) == 3 && memcmp(bp_tensor_shape(y), shape, sizeof shape) == 0,
          "the result's shape is not (2, 3, 5)");
    matches(e, y, BP_F32, want, 30, "sum of (2, 3, 5)");
    bp_tensor_release(x);
    bp_tensor_release(y);
}

static void all_reduce_of_f16_accumulates_wide_and_rounds_once(env *e)
{
    /* 1 + 2^-11 on every other rank: an f16 running sum rounds each
     * 2^-11 away (a tie, to even), the wide sum keeps them. */
    uint16_t in = bp_f32_to_f16(e->rank == 0 ? 1.0f : 0.00048828125f), got = 0;
    int64_t one = 1;
    bp_tensor *x = tensor_of(e, BP_F16, 1, &one, &in), *y = NULL;
    CHECK(e, x, "no input");
    CHECK_OK(e, bp_all_reduce(e->comm, x, BP_REDUCE_SUM, &y));
    CHECK_OK(e, bp_tensor_to_host(y, &got, sizeof got));
    double exact = 1.0 + (e->size - 1) * 0.00048828125;
    CHECK(e, got == bp_f64_to_f16(exact), "the sum over %d ranks is %g, wanted %g (%g rounded once)",
          e->size, (double)bp_f16_to_f32(got), (double)bp_f16_to_f32(bp_f64_to_f16(exact)), exact);
    bp_tensor_release(x);
    bp_tensor_release(y);
}

static void all_reduce_gives_the_same_bits_in_every_run(env *e)
{
    /* Ten runs of a sum whose float rounding depends on the order. */
    int64_t n = 50001;
    float *in = malloc((size_t)n * sizeof *in), *first = malloc((size_t)n * sizeof *first),
          *again = malloc((size_t)n * sizeof *again);
    for (int64_t i = 0; i < n; i++)
        in[i] = (float)(1e8 * (e->rank % 2 ? -1 : 1)) + (float)(i % 7) * 0.1f + (float)e->rank;
    bp_tensor *x = tensor_of(e, BP_F32, 1, &n, in);
    for (int run = 0; x && run < 10 && !e->failed; run++) {
        bp_tensor *y = NULL;
        bp_status st = bp_all_reduce(e->comm, x, BP_REDUCE_SUM, &y);
        if (st != BP_OK) {
            fail(e, "run %d: %s", run, bp_last_error());
        } else {
            bp_tensor_to_host(y, run ? again : first, (size_t)n * sizeof *in);
            if (run && memcmp(first, again, (size_t)n * sizeof *in) != 0)
                fail(e, "run %d differs from run 0", run);
        }
        bp_tensor_release(y);
    }
    /* ... and on every rank: rank 0's bits reach everyone by broadcast */
    bp_tensor *mine = tensor_of(e, BP_F32, 1, &n, first), *zeros = NULL;
    if (mine && !e->failed && bp_broadcast(e->comm, mine, 0, &zeros) == BP_OK) {
        bp_tensor_to_host(zeros, again, (size_t)n * sizeof *in);
        if (memcmp(first, again, (size_t)n * sizeof *in) != 0)
            fail(e, "this rank's sum differs from rank 0's");
    }
    bp_tensor_release(zeros);
    bp_tensor_release(mine);
    bp_tensor_release(x);
    free(in);
    free(first);
    free(again);
}

static void broadcast_gives_every_rank_the_roots_values(env *e)
{
    for (int root = 0; root < e->size; root++) {
        for (size_t d = 0; d < COUNT(ALL); d++) {
            for (size_t s = 0; s < COUNT(SIZES); s++) {
                bp_dtype dt = ALL[d];
                if (!holds(e, dt))
                    continue;
                int64_t n = SIZES[s];
                void *in = input_of(e->rank, dt, n, BP_REDUCE_SUM);
                void *want = input_of(root, dt, n, BP_REDUCE_SUM);
                bp_tensor *x = tensor_of(e, dt, 1, &n, in), *y = NULL;
                bp_status st = x ? bp_broadcast(e->comm, x, root, &y) : BP_ERR_IO;
                char what[96];
                snprintf(what, sizeof what, "broadcast of %lld %s from rank %d", (long long)n,
                         bp_dtype_name(dt), root);
                if (x && st != BP_OK)
                    fail(e, "%s: %s", what, bp_last_error());
                else if (x)
                    matches(e, y, dt, want, n, what);
                bp_tensor_release(x);
                bp_tensor_release(y);
                free(in);
                free(want);
                if (e->failed)
                    return;
            }
        }
    }
}

/* x of rank r: element (i, j, k) = r * 1000 + i * 100 + j * 10 + k. */
static void gather_case(env *e, int32_t rank, const int64_t *shape, int32_t axis)
{
    int64_t numel = 1, out_shape[4];
    for (int k = 0; k < rank; k++) {
        numel *= shape[k];
        out_shape[k] = shape[k];
    }
    int32_t ax = axis < 0 ? axis + rank : axis;
    out_shape[ax] *= e->size;
    int32_t *in = malloc((size_t)(numel ? numel : 1) * sizeof *in);
    int64_t total = numel * e->size;
    int32_t *want = malloc((size_t)(total > 0 ? total : 1) * sizeof *want);
    int64_t idx[4] = {0};
    for (int64_t f = 0; f < numel; f++) {
        int64_t v = 0;
        for (int k = 0; k < rank; k++)
            v = v * 10 + idx[k];
        in[f] = (int32_t)(e->rank * 1000 + v);
        for (int k = rank - 1; k >= 0 && ++idx[k] == shape[k]; k--)
            idx[k] = 0;
    }
    /* the concatenation, element by element of the output */
    memset(idx, 0, sizeof idx);
    for (int64_t f = 0; f < numel * e->size; f++) {
        int r = (int)(idx[ax] / shape[ax]);
        int64_t v = 0;
        for (int k = 0; k < rank; k++)
            v = v * 10 + (k == ax ? idx[k] % shape[ax] : idx[k]);
        want[f] = (int32_t)(r * 1000 + v);
        for (int k = rank - 1; k >= 0 && ++idx[k] == out_shape[k]; k--)
            idx[k] = 0;
    }
    bp_tensor *x = tensor_of(e, BP_I32, rank, shape, in), *y = NULL;
    char what[96];
    snprintf(what, sizeof what, "gather of a rank-%d tensor on axis %d", (int)rank, (int)axis);
    if (x) {
        bp_status st = bp_all_gather(e->comm, x, axis, &y);
        if (st != BP_OK)
            fail(e, "%s: %s", what, bp_last_error());
        else if (bp_tensor_rank(y) != rank ||
                 memcmp(bp_tensor_shape(y), out_shape, (size_t)rank * sizeof *out_shape) != 0)
            fail(e, "%s: wrong result shape", what);
        else
            matches(e, y, BP_I32, want, numel * e->size, what);
    }
    bp_tensor_release(x);
    bp_tensor_release(y);
    free(in);
    free(want);
}

static void all_gather_concatenates_in_rank_order_on_every_axis(env *e)
{
    gather_case(e, 1, (const int64_t[]){5}, 0);
    gather_case(e, 2, (const int64_t[]){3, 5}, 0);
    gather_case(e, 2, (const int64_t[]){3, 5}, 1);
    gather_case(e, 2, (const int64_t[]){3, 5}, -1);
    gather_case(e, 3, (const int64_t[]){2, 3, 4}, 1);
    gather_case(e, 3, (const int64_t[]){2, 3, 4}, 2);
    gather_case(e, 2, (const int64_t[]){3001, 3}, 0);  /* past one message */
    gather_case(e, 2, (const int64_t[]){3, 3001}, 1);
    gather_case(e, 2, (const int64_t[]){0, 3}, 0);     /* nothing */
    gather_case(e, 2, (const int64_t[]){0, 3}, 1);
}

static void all_gather_carries_every_dtype(env *e)
{
    for (size_t d = 0; d < COUNT(ALL); d++) {
        bp_dtype dt = ALL[d];
        if (!holds(e, dt))
            continue;
        int64_t n = 1001;
        void *in = input_of(e->rank, dt, n, BP_REDUCE_SUM);
        size_t es = bp_dtype_size(dt);
        unsigned char *want = malloc((size_t)n * es * (size_t)e->size);
        for (int r = 0; r < e->size; r++) {
            void *p = input_of(r, dt, n, BP_REDUCE_SUM);
            memcpy(want + (size_t)r * (size_t)n * es, p, (size_t)n * es);
            free(p);
        }
        bp_tensor *x = tensor_of(e, dt, 1, &n, in), *y = NULL;
        if (x && bp_all_gather(e->comm, x, 0, &y) != BP_OK)
            fail(e, "gather of %s: %s", bp_dtype_name(dt), bp_last_error());
        else if (x)
            matches(e, y, dt, want, n * e->size, bp_dtype_name(dt));
        bp_tensor_release(x);
        bp_tensor_release(y);
        free(in);
        free(want);
        if (e->failed)
            return;
    }
}

/* reduce_scatter on axis of (rows, cols): rank r gets the r-th part of the
 * all_reduce result along axis. */
static void scatter_case(env *e, bp_dtype dt, bp_reduce_op op, int64_t rows, int64_t cols,
                         int32_t axis)
{
    int64_t n = rows * cols, shape[2] = {rows, cols};
    void *in = input_of(e->rank, dt, n, op);
    void *full = expected_of(e->size, dt, n, op);
    size_t es = bp_dtype_size(dt);
    int64_t part_rows = axis == 0 ? rows / e->size : rows;
    int64_t part_cols = axis == 0 ? cols : cols / e->size;
    int64_t part = part_rows * part_cols;
    unsigned char *want = malloc((size_t)(part > 0 ? part : 1) * es);
    for (int64_t i = 0; i < part_rows; i++)
        for (int64_t j = 0; j < part_cols; j++) {
            int64_t si = axis == 0 ? e->rank * part_rows + i : i;
            int64_t sj = axis == 0 ? j : e->rank * part_cols + j;
            memcpy(want + (size_t)(i * part_cols + j) * es,
                   (unsigned char *)full + (size_t)(si * cols + sj) * es, es);
        }
    bp_tensor *x = tensor_of(e, dt, 2, shape, in), *y = NULL;
    char what[128];
    snprintf(what, sizeof what, "reduce_scatter %s of (%lld, %lld) %s on axis %d",
             bp_reduce_op_name(op), (long long)rows, (long long)cols, bp_dtype_name(dt),
             (int)axis);
    if (x) {
        bp_status st = bp_reduce_scatter(e->comm, x, op, axis, &y);
        const int64_t ps[2] = {part_rows, part_cols};
        if (st != BP_OK)
            fail(e, "%s: %s", what, bp_last_error());
        else if (bp_tensor_rank(y) != 2 || memcmp(bp_tensor_shape(y), ps, sizeof ps) != 0)
            fail(e, "%s: wrong result shape", what);
        else
            matches(e, y, dt, want, part_rows * part_cols, what);
    }
    bp_tensor_release(x);
    bp_tensor_release(y);
    free(in);
    free(full);
    free(want);
}

static void reduce_scatter_gives_rank_r_the_rth_part(env *e)
{
    int p = e->size;
    for (size_t d = 0; d < COUNT(NUMERIC) && !e->failed; d++)
        for (int op = BP_REDUCE_SUM; op <= BP_REDUCE_AVG && !e->failed; op++)
            if (op_takes((bp_reduce_op)op, NUMERIC[d]) && holds(e, NUMERIC[d]))
                scatter_case(e, NUMERIC[d], (bp_reduce_op)op, 3 * p, 7, 0);
    scatter_case(e, BP_F32, BP_REDUCE_SUM, 5, 3 * p, 1);
    scatter_case(e, BP_F64, BP_REDUCE_MAX, 7, 5 * p, -1);
    scatter_case(e, BP_F32, BP_REDUCE_SUM, 50001 * p, 3, 0); /* past one block */
    scatter_case(e, BP_I32, BP_REDUCE_SUM, 3, 20001 * p, 1);
    scatter_case(e, BP_F16, BP_REDUCE_SUM, 4 * p, 9, 0);
    scatter_case(e, BP_F32, BP_REDUCE_SUM, 0, 3 * p, 1);      /* nothing */
}

static void reduce_scatter_refuses_an_extent_the_ranks_cannot_share(env *e)
{
    int64_t shape[2] = {e->size + 1, 2};
    float in[64] = {0};
    bp_tensor *x = tensor_of(e, BP_F32, 2, shape, in), *y = NULL;
    CHECK(e, x, "no input");
    bp_status st = bp_reduce_scatter(e->comm, x, BP_REDUCE_SUM, 0, &y);
    CHECK(e, st == BP_ERR_SHAPE, "%s: %s", bp_status_string(st), bp_last_error());
    CHECK(e, strstr(bp_last_error(), "cannot share"), "message: %s", bp_last_error());
    bp_tensor_release(x);
}

static void barrier_returns_on_every_rank(env *e)
{
    for (int i = 0; i < 5; i++)
        CHECK_OK(e, bp_barrier(e->comm));
}

static void zero_size_tensors_pass_through_every_collective(env *e)
{
    int64_t shape[2] = {0, 4};
    bp_tensor *x = tensor_of(e, BP_F32, 2, shape, NULL), *y = NULL;
    CHECK(e, x, "no input");
    CHECK_OK(e, bp_all_reduce(e->comm, x, BP_REDUCE_SUM, &y));
    CHECK(e, bp_tensor_numel(y) == 0 && bp_tensor_rank(y) == 2, "all_reduce: not (0, 4)");
    bp_tensor_release(y);
    CHECK_OK(e, bp_broadcast(e->comm, x, e->size - 1, &y));
    CHECK(e, bp_tensor_numel(y) == 0, "broadcast: not empty");
    bp_tensor_release(y);
    CHECK_OK(e, bp_all_gather(e->comm, x, 1, &y));
    CHECK(e, bp_tensor_shape(y)[1] == 4 * e->size, "all_gather: not (0, %d)", 4 * e->size);
    bp_tensor_release(y);
    CHECK_OK(e, bp_reduce_scatter(e->comm, x, BP_REDUCE_MAX, 0, &y));
    CHECK(e, bp_tensor_numel(y) == 0, "reduce_scatter: not empty");
    bp_tensor_release(y);
    bp_tensor_release(x);
}

/* Every rank fails with code and a message naming the last rank; then the
 * communicator still works. */
static void expect_disagreement(env *e, bp_status st, bp_status code, const char *needle)
{
    CHECK(e, st == code, "got %s, wanted %s: %s", bp_status_string(st), bp_status_string(code),
          bp_last_error());
    char rank_k[32];
    snprintf(rank_k, sizeof rank_k, "rank %d", e->size - 1);
    CHECK(e, strstr(bp_last_error(), rank_k) && strstr(bp_last_error(), needle) &&
                 strstr(bp_last_error(), "stays usable"),
          "the message does not name %s and '%s': %s", rank_k, needle, bp_last_error());
    CHECK_OK(e, bp_barrier(e->comm));
}

static void a_shape_that_differs_across_ranks_fails_every_rank_naming_it(env *e)
{
    /* small (one message) and large (records first) alike */
    int64_t sizes[2][2] = {{3, 4}, {40000, 4}};
    for (int k = 0; k < 2 && !e->failed; k++) {
        int64_t shape[2] = {sizes[k][0], sizes[k][1] + (e->rank == e->size - 1)};
        float *in = calloc((size_t)(shape[0] * shape[1]), sizeof *in);
        bp_tensor *x = tensor_of(e, BP_F32, 2, shape, in), *y = NULL;
        if (x)
            expect_disagreement(e, bp_all_reduce(e->comm, x, BP_REDUCE_SUM, &y), BP_ERR_SHAPE,
                                "passed shape");
        if (!e->failed && y)
            fail(e, "a result came back");
        bp_tensor_release(x);
        bp_tensor_release(y);
        free(in);
    }
}

static void a_size_that_differs_greatly_across_ranks_fails_every_rank(env *e)
{
    /* one rank small enough for one message, the others not */
    int64_t n = e->rank == e->size - 1 ? 3 : 100000;
    float *in = calloc((size_t)n, sizeof *in);
    bp_tensor *x = tensor_of(e, BP_F32, 1, &n, in), *y = NULL;
    if (x)
        expect_disagreement(e, bp_all_gather(e->comm, x, 0, &y), BP_ERR_SHAPE, "passed shape");
    bp_tensor_release(x);
    bp_tensor_release(y);
    free(in);
}

/* Payloads past the 4 KiB a record carries inside its message (but within
 * what rides with it) follow in a message of their own: when the calls
 * differ, every rank fails alike and the payloads are received and dropped,
 * so that a later call that agrees meets none of them. */
static void payloads_that_follow_their_records_and_differ_are_dropped(env *e)
{
    /* f32 elements here and on the last rank: 4004 against 8008 bytes (both
     * follow), then 2000 (inside) against 4004 (follows) */
    const int64_t counts[2][2] = {{1001, 2002}, {500, 1001}};
    for (int c = 0; c < 2 && !e->failed; c++) {
        int64_t n = counts[c][e->rank == e->size - 1];
        float *in = calloc((size_t)n, sizeof *in);
        bp_tensor *x = tensor_of(e, BP_F32, 1, &n, in), *y = NULL;
        if (x)
            expect_disagreement(e, bp_all_reduce(e->comm, x, BP_REDUCE_SUM, &y), BP_ERR_SHAPE,
                                "passed shape");
        bp_tensor_release(x);
        bp_tensor_release(y);
        free(in);
    }
    if (e->failed)
        return;
    int64_t n = 1001;
    void *in = input_of(e->rank, BP_F32, n, BP_REDUCE_SUM);
    void *want = expected_of(e->size, BP_F32, n, BP_REDUCE_SUM);
    bp_tensor *x = tensor_of(e, BP_F32, 1, &n, in), *y = NULL;
    bp_status st = x ? bp_all_reduce(e->comm, x, BP_REDUCE_SUM, &y) : BP_ERR_IO;
    if (x && st != BP_OK)
        fail(e, "the call after the ones that differed: %s", bp_last_error());
    else if (x)
        matches(e, y, BP_F32, want, n, "the sum after the calls that differed");
    bp_tensor_release(x);
    bp_tensor_release(y);
    free(in);
    free(want);
}

static void a_dtype_that_differs_across_ranks_fails_every_rank_naming_it(env *e)
{
    int64_t n = 5;
    double in[5] = {0};
    bp_tensor *x = tensor_of(e, e->rank == e->size - 1 ? BP_F64 : BP_F32, 1, &n, in), *y = NULL;
    if (x)
        expect_disagreement(e, bp_broadcast(e->comm, x, 0, &y), BP_ERR_DTYPE, "f64");
    bp_tensor_release(x);
    bp_tensor_release(y);
}

static void a_rank_calling_another_collective_fails_every_rank(env *e)
{
    int64_t n = 5;
    float in[5] = {0};
    bp_tensor *x = tensor_of(e, BP_F32, 1, &n, in), *y = NULL;
    if (!x)
        return;
    bp_status st = e->rank == e->size - 1 ? bp_broadcast(e->comm, x, 0, &y)
                                          : bp_all_reduce(e->comm, x, BP_REDUCE_SUM, &y);
    expect_disagreement(e, st, BP_ERR_INVALID_ARGUMENT, "bp_broadcast");
    bp_tensor_release(x);
    bp_tensor_release(y);
}

static void an_op_that_differs_across_ranks_fails_every_rank(env *e)
{
    int64_t n = 5;
    float in[5] = {0};
    bp_tensor *x = tensor_of(e, BP_F32, 1, &n, in), *y = NULL;
    if (x)
        expect_disagreement(e, bp_all_reduce(e->comm, x,
                                             e->rank == e->size - 1 ? BP_REDUCE_MAX : BP_REDUCE_SUM,
                                             &y),
                            BP_ERR_INVALID_ARGUMENT, "op max");
    bp_tensor_release(x);
    bp_tensor_release(y);
}

static void local_argument_errors_are_refused_before_any_rank_waits(env *e)
{
    int64_t n = 3;
    int32_t ints[3] = {1, 2, 3};
    uint8_t bools[3] = {1, 0, 1};
    bp_tensor *i = tensor_of(e, BP_I32, 1, &n, ints), *b = tensor_of(e, BP_BOOL, 1, &n, bools);
    bp_tensor *y = NULL;
    CHECK(e, i && b, "no inputs");
    bp_status st = bp_all_reduce(e->comm, i, BP_REDUCE_AVG, &y);
    CHECK(e, st == BP_ERR_DTYPE && strstr(bp_last_error(), "float"), "avg of i32: %s: %s",
          bp_status_string(st), bp_last_error());
    st = bp_all_reduce(e->comm, b, BP_REDUCE_SUM, &y);
    CHECK(e, st == BP_ERR_DTYPE && strstr(bp_last_error(), "bool"), "sum of bool: %s: %s",
          bp_status_string(st), bp_last_error());
    st = bp_all_reduce(e->comm, i, (bp_reduce_op)17, &y);
    CHECK(e, st == BP_ERR_INVALID_ARGUMENT, "op 17: %s", bp_status_string(st));
    st = bp_broadcast(e->comm, i, e->size, &y);
    CHECK(e, st == BP_ERR_INVALID_ARGUMENT && strstr(bp_last_error(), "root"), "root %d: %s",
          e->size, bp_last_error());
    st = bp_all_gather(e->comm, i, 1, &y);
    CHECK(e, st == BP_ERR_SHAPE, "axis 1 of a rank-1 tensor: %s", bp_status_string(st));
    st = bp_all_reduce(NULL, i, BP_REDUCE_SUM, &y);
    CHECK(e, st == BP_ERR_INVALID_ARGUMENT, "NULL comm: %s", bp_status_string(st));
    st = bp_all_reduce(e->comm, i, BP_REDUCE_SUM, NULL);
    CHECK(e, st == BP_ERR_INVALID_ARGUMENT, "NULL out: %s", bp_status_string(st));
    CHECK(e, y == NULL, "a refused call made a tensor");
    /* and the communicator is still in step on every rank */
    CHECK_OK(e, bp_barrier(e->comm));
    bp_tensor_release(i);
    bp_tensor_release(b);
}

static void a_tensor_of_another_backend_is_refused_naming_both(env *e)
{
    bp_backend *other = NULL;
    const char *name = strncmp(bp_backend_name(e->be), "binary", 6) == 0 ? "blas_cpu" : "binary";
    if (bp_backend_get(e->ctx, name, &other) != BP_OK)
        return; /* only one host backend built */
    int64_t n = 2;
    float in[2] = {1, 2};
    bp_tensor *x = NULL, *y = NULL;
    CHECK_OK(e, bp_tensor_from_host(other, BP_F32, 1, &n, in, &x));
    bp_status st = bp_all_reduce(e->comm, x, BP_REDUCE_SUM, &y);
    CHECK(e, st == BP_ERR_BACKEND_MISMATCH && strstr(bp_last_error(), "bp_backend_copy"),
          "%s: %s", bp_status_string(st), bp_last_error());
    bp_tensor_release(x);
}

/* The engine the communicators use (--engine NAME); NULL: the backend's. */
static const char *engine_name;

static void a_communicator_spans_the_applications_own_mpi_comm(env *e)
{
    /* even and odd ranks apart: each half sums over itself only */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, e->rank % 2, e->rank, &half);
    bp_comm_options o = BP_COMM_OPTIONS_INIT;
    o.mpi_comm = &half;
    o.engine = engine_name;
    bp_comm *c = NULL;
    bp_status st = bp_comm_create(e->be, &o, &c);
    if (st != BP_OK) {
        fail(e, "bp_comm_create on a split communicator: %s", bp_last_error());
    } else {
        int expect_size = e->size / 2 + (e->size % 2 && e->rank % 2 == 0);
        int64_t n = 1;
        double v = e->rank, got = -1, want = 0;
        for (int r = e->rank % 2; r < e->size; r += 2)
            want += r;
        bp_tensor *x = tensor_of(e, BP_F64, 1, &n, &v), *y = NULL;
        if (bp_comm_size(c) != expect_size || bp_comm_rank(c) != e->rank / 2)
            fail(e, "rank %d of %d in the half, wanted %d of %d", bp_comm_rank(c),
                 bp_comm_size(c), e->rank / 2, expect_size);
        else if (x && bp_all_reduce(c, x, BP_REDUCE_SUM, &y) != BP_OK)
            fail(e, "sum over the half: %s", bp_last_error());
        else if (x && (bp_tensor_to_host(y, &got, sizeof got) != BP_OK || got != want))
            fail(e, "sum over the half is %g, wanted %g", got, want);
        bp_tensor_release(x);
        bp_tensor_release(y);
        bp_comm_destroy(c);
    }
    MPI_Comm_free(&half);
}

/* ---- running them ------------------------------------------------------------------ */

typedef struct check {
    const char *name;
    void (*run)(env *e);
    int min_ranks; /* a disagreement between ranks needs two of them */
} check;

#define C(fn) {#fn, fn, 1}
#define C2(fn) {#fn, fn, 2}
static const check CHECKS[] = {
    C(all_reduce_combines_every_rank_in_rank_order_for_every_dtype_op_and_size),
    C(all_reduce_keeps_the_shape),
    C(all_reduce_of_f16_accumulates_wide_and_rounds_once),
    C(all_reduce_gives_the_same_bits_in_every_run),
    C(broadcast_gives_every_rank_the_roots_values),
    C(all_gather_concatenates_in_rank_order_on_every_axis),
    C(all_gather_carries_every_dtype),
    C(reduce_scatter_gives_rank_r_the_rth_part),
    C2(reduce_scatter_refuses_an_extent_the_ranks_cannot_share),
    C(barrier_returns_on_every_rank),
    C(zero_size_tensors_pass_through_every_collective),
    C2(a_shape_that_differs_across_ranks_fails_every_rank_naming_it),
    C2(a_size_that_differs_greatly_across_ranks_fails_every_rank),
    C2(payloads_that_follow_their_records_and_differ_are_dropped),
    C2(a_dtype_that_differs_across_ranks_fails_every_rank_naming_it),
    C2(a_rank_calling_another_collective_fails_every_rank),
    C2(an_op_that_differs_across_ranks_fails_every_rank),
    C(local_argument_errors_are_refused_before_any_rank_waits),
    C(a_tensor_of_another_backend_is_refused_naming_both),
    C(a_communicator_spans_the_applications_own_mpi_comm),
};

/* Every check on one backend; the number that failed on any rank. */
static int run_checks(bp_context *ctx, bp_backend *be, int rank, int size)
{
    env e = {ctx, be, NULL, rank, size, false, "bp_comm_create"};
    /* a check that fails on one rank leaves the others waiting: not for long */
    bp_comm_options o = BP_COMM_OPTIONS_INIT;
    o.timeout_s = 60;
    o.engine = engine_name;
    bp_status st = bp_comm_create(be, &o, &e.comm);
    int bad = st != BP_OK, any = 0;
    if (bad)
        fprintf(stderr, "rank %d: bp_comm_create on %s: %s\n", rank, bp_backend_name(be),
                bp_last_error());
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
        bp_comm_destroy(e.comm);
        return (int)COUNT(CHECKS);
    }
    if (bp_comm_rank(e.comm) != rank || bp_comm_size(e.comm) != size)
        fprintf(stderr, "rank %d: the communicator says rank %d of %d\n", rank,
                bp_comm_rank(e.comm), bp_comm_size(e.comm));
    int failures = 0;
    for (size_t i = 0; i < COUNT(CHECKS); i++) {
        if (size < CHECKS[i].min_ranks) {
            if (rank == 0)
                printf("skip %s on %s (needs %d ranks)\n", CHECKS[i].name, bp_backend_name(be),
                       CHECKS[i].min_ranks);
            continue;
        }
        e.failed = false;
        e.check = CHECKS[i].name;
        CHECKS[i].run(&e);
        int mine = e.failed, worst = 0;
        MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        failures += worst;
        if (rank == 0)
            printf("%s %s on %s (%d ranks)\n", worst ? "FAIL" : "ok", CHECKS[i].name,
                   bp_backend_name(be), size);
        fflush(stdout);
    }
    bp_comm_destroy(e.comm);
    return failures;
}

/* ---- faults ------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The last rank leaves (or dies) instead of calling bp_all_reduce; the
 * others must fail within the timeout ([comm] timeout_s of the config the
 * test names), with a message naming the collective and that rank, and the
 * communicator must then refuse at once. MPI is never touched here: the
 * engine initialises and finalises it. */
static int run_fault(const char *how)
{
    bp_context *ctx = NULL;
    bp_backend *be = NULL;
    bp_comm *comm = NULL;
    if (bp_context_create(NULL, &ctx) != BP_OK || bp_backend_get(ctx, "binary", &be) != BP_OK ||
        bp_comm_create(be, NULL, &comm) != BP_OK) {
        fprintf(stderr, "setup: %s\n", bp_last_error());
        return 1;
    }
    int rank = bp_comm_rank(comm), size = bp_comm_size(comm);
    const char *name = strcmp(how, "dies") == 0 ? "a_rank_that_dies_is_named_within_the_timeout"
                                                : "a_rank_that_leaves_is_named_within_the_timeout";
    int64_t n = 1000;
    float *in = calloc((size_t)n, sizeof *in);
    bp_tensor *x = NULL, *y = NULL;
    bp_tensor_from_host(be, BP_F32, 1, &n, in, &x);
    free(in);
    bp_status st = bp_barrier(comm); /* everyone is here */
    if (rank == size - 1) {
        if (strcmp(how, "dies") == 0)
            _exit(3); /* no MPI_Finalize: a crash, as far as the others can tell */
        bp_tensor_release(x);
        bp_comm_destroy(comm);
        bp_context_destroy(ctx);
        return st == BP_OK ? 0 : 1; /* MPI is finalised at exit */
    }
    double t0 = now_s();
    st = bp_all_reduce(comm, x, BP_REDUCE_SUM, &y);
    double took = now_s() - t0;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", bp_last_error());
    char rank_k[32];
    snprintf(rank_k, sizeof rank_k, "rank %d", size - 1);
    int ok = st == BP_ERR_BACKEND && strstr(msg, "bp_all_reduce") && strstr(msg, rank_k) &&
             strstr(msg, "did not arrive") && took < 2.0 + 10.0 && y == NULL;
    if (!ok)
        fprintf(stderr, "rank %d: FAIL %s: after %.1f s, %s: %s\n", rank, name, took,
                bp_status_string(st), msg);
    st = bp_barrier(comm); /* refused at once */
    if (st != BP_ERR_BACKEND || !strstr(bp_last_error(), "failed earlier")) {
        fprintf(stderr, "rank %d: FAIL %s: the failed communicator answered %s: %s\n", rank, name,
                bp_status_string(st), bp_last_error());
        ok = 0;
    }
    if (rank == 0)
        printf("%s %s (%d ranks, failed after %.1f s)\n  %s\n", ok ? "ok" : "FAIL", name, size,
               took, msg);
    fflush(stdout);
    bp_tensor_release(x);
    bp_comm_destroy(comm);
    bp_context_destroy(ctx);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--fault") == 0)
        return run_fault(argv[2]);
    const char *devsim = argc == 3 && strcmp(argv[1], "--devsim") == 0 ? argv[2] : NULL;
    if (argc == 3 && strcmp(argv[1], "--engine") == 0)
        engine_name = argv[2]; /* another engine than the backend's default */
    /* The application initialises MPI here (the engine then leaves it be). */
    int provided = 0, rank = 0, size = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bp_context *ctx = NULL;
    if (bp_context_create(NULL, &ctx) != BP_OK) {
        fprintf(stderr, "bp_context_create: %s\n", bp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char *names[] = {"binary", "blas_cpu", devsim};
    int failures = 0;
    for (size_t i = 0; i < COUNT(names); i++) {
        bp_backend *be = NULL;
        if (!names[i] || bp_backend_get(ctx, names[i], &be) != BP_OK)
            continue;
        failures += run_checks(ctx, be, rank, size);
    }
    bp_context_destroy(ctx);
    if (rank == 0)
        printf("%d check(s) failed\n", failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}

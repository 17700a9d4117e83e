/* The blas_cpu backend against the binary reference: tensors of the two never
 * mix, copies between them are exact, its [backend.blas_cpu] keys are honoured
 * or refused, and sizes past its threading threshold still agree with the
 * reference (bit for bit where the op is exact, closely for sums/matmul).
 * Every test is skipped when the plugin was not built (no OpenBLAS). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpt.h"
#include "expect.h"

/* The two backends of a default context, or skip the test. */
static bp_context *two_backends(bp_backend **bin, bp_backend **blas)
{
    bp_context *ctx = bpt_context();
    BPT_OK(bp_backend_get(ctx, "binary", bin));
    if (bp_backend_get(ctx, "blas_cpu", blas) != BP_OK) {
        bp_context_destroy(ctx);
        cr_skip_test("the blas_cpu plugin is not available: %s", bp_last_error());
    }
    return ctx;
}

static const char *write_ini(char *path, const char *text)
{
    strcpy(path, "/tmp/bpt_blas_XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* ctx's blas_cpu, or the test skipped (ctx destroyed and the ini at path
 * removed) when the plugin is not there. */
static bp_backend *blas_or_skip(bp_context *ctx, const char *path)
{
    bp_backend *blas = NULL;
    if (bp_backend_get(ctx, "blas_cpu", &blas) != BP_OK) {
        bp_context_destroy(ctx);
        unlink(path);
        cr_skip_test("the blas_cpu plugin is not available");
    }
    return blas;
}

/* Deterministic values of every kind: negatives, fractions, big and small. */
static void fill_values(double *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)((i * 7919) % 2001 - 1000) / 37.0;
}

static bp_tensor *make(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape)
{
    int64_t n = cf_numel(rank, shape);
    double *v = malloc((size_t)n * sizeof *v);
    fill_values(v, n);
    bp_tensor *t = bpt_tensor(be, dt, rank, shape, v);
    free(v);
    return t;
}

static void expect_same_bytes(const char *what, const bp_tensor *a, const bp_tensor *b)
{
    cr_assert_eq(bp_tensor_nbytes(a), bp_tensor_nbytes(b), "%s: sizes differ", what);
    cr_expect(bpt_same_bytes(a, b), "%s: blas_cpu differs from binary", what);
}

/* max |a - b| / max |b| over f32 tensors */
static double rel_diff_f32(const bp_tensor *a, const bp_tensor *b)
{
    int64_t n = bp_tensor_numel(a);
    float *pa = bpt_read_bytes(a), *pb = bpt_read_bytes(b);
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)pa[i] - (double)pb[i]);
        num = d > num ? d : num;
        den = fabs((double)pb[i]) > den ? fabs((double)pb[i]) : den;
    }
    free(pa);
    free(pb);
    return den > 0 ? num / den : num;
}

Test(blas_cpu, add_refuses_a_binary_tensor_and_a_blas_cpu_tensor)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    bp_tensor *a = make(bin, BP_F32, 1, (int64_t[]){4}), *b = make(blas, BP_F32, 1, (int64_t[]){4});
    bp_tensor *c = NULL;
    BPT_FAILS(BP_ERR_BACKEND_MISMATCH, bp_add(a, b, &c));
    cr_expect_null(c);
    cr_expect(strstr(bp_last_error(), "bp_backend_copy") != NULL, "no remedy in: %s", bp_last_error());
    BPT_FAILS(BP_ERR_BACKEND_MISMATCH, bp_matmul(b, a, &c));
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_context_destroy(ctx);
}

Test(blas_cpu, backend_copy_round_trips_every_dtype_exactly)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    for (int d = 0; d < CF_COUNT(cf_all_dtypes); d++) {
        bp_dtype dt = cf_all_dtypes[d];
        bp_tensor *a = make(bin, dt, 2, (int64_t[]){3, 5}), *b = NULL, *back = NULL;
        BPT_OK(bp_backend_copy(a, blas, &b));
        cr_expect_eq(bp_tensor_backend(b), blas);
        BPT_OK(bp_backend_copy(b, bin, &back));
        expect_same_bytes(bp_dtype_name(dt), a, back);
        expect_same_bytes(bp_dtype_name(dt), a, b);
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(back);
    }
    bp_context_destroy(ctx);
}

Test(blas_cpu, threads_key_is_honoured)
{
    char path[64];
    write_ini(path, "[backend.blas_cpu]\nthreads = 1\ncache_mb = 0\n");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    bp_backend *blas = blas_or_skip(ctx, path);
    bp_device_info info = {.struct_size = sizeof info};
    BPT_OK(bp_backend_device_info(blas, &info));
    cr_expect(strstr(info.detail, "1 threads") != NULL, "detail: %s", info.detail);
    cr_expect(strstr(info.detail, "OpenBLAS") != NULL, "detail: %s", info.detail);
    /* single-threaded, the big add still works */
    bp_tensor *a = make(blas, BP_F32, 1, (int64_t[]){1 << 18}), *c = NULL;
    BPT_OK(bp_add(a, a, &c));
    bp_tensor_release(a);
    bp_tensor_release(c);
    bp_context_destroy(ctx);
    unlink(path);
}

/* The pool's threads in this process: those named bp_blas_cpu in
 * /proc/self/task (OpenBLAS starts its own, one per core but one, when the
 * plugin loads it: 15 on a 16-core machine). */
static int process_threads(void)
{
    int n = 0;
    DIR *dir = opendir("/proc/self/task");
    cr_assert_not_null(dir);
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], name[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue; /* a thread that ended meanwhile */
        if (fgets(name, sizeof name, f) && strcmp(name, "bp_blas_cpu\n") == 0)
            n++;
        fclose(f);
    }
    closedir(dir);
    return n;
}

/* Opening the backend starts no pool thread: a job that wants a team starts
 * them (and keeps them for the next). A configuration of 64 threads opened
 * and closed in a loop costs nothing then. */
Test(blas_cpu, pool_threads_start_when_work_first_needs_them)
{
    char path[64];
    write_ini(path, "[backend.blas_cpu]\nthreads = 64\n");
    bp_context *ctx = NULL;
    BPT_OK(bp_context_create(path, &ctx));
    int before = process_threads();
    bp_backend *blas = blas_or_skip(ctx, path);
    int opened = process_threads();
    bp_tensor *a = make(blas, BP_F32, 1, (int64_t[]){1 << 22}), *s = NULL;
    BPT_OK(bp_sum(a, 0, NULL, false, &s));
    int worked = process_threads();
    bp_tensor_release(a);
    bp_tensor_release(s);
    bp_context_destroy(ctx);
    unlink(path);
    cr_assert_eq(opened - before, 0, "opening the backend started %d pool threads", opened - before);
    cr_assert_gt(worked, opened, "a sum of 2^22 elements ran without its team (%d threads)",
                 worked);
}

/* A worker that finishes a job watches for the next one for a few tens of
 * microseconds before it sleeps. Closing the backend in that window (right
 * after back-to-back parallel jobs) still stops and joins every worker, and
 * the jobs' results are whole. */
Test(blas_cpu, pool_workers_watching_for_work_stop_when_the_backend_closes)
{
    char path[64];
    write_ini(path, "[backend.blas_cpu]\nthreads = 2\n");
    for (int round = 0; round < 20; round++) {
        bp_context *ctx = NULL;
        BPT_OK(bp_context_create(path, &ctx));
        bp_backend *blas = blas_or_skip(ctx, path);
        int64_t n = (int64_t)1 << 20;
        bp_tensor *ones = NULL, *twos = NULL, *s = NULL;
        BPT_OK(bp_full(blas, BP_F32, 1, &n, 1.0, &ones));
        BPT_OK(bp_add(ones, ones, &twos)); /* 2^20 elements: a team of two */
        BPT_OK(bp_sum(twos, 0, NULL, false, &s));
        double total = 0;
        BPT_OK(bp_item_f64(s, &total));
        cr_expect_eq(total, 2.0 * (double)n, "round %d: sum %.17g", round, total);
        bp_tensor_release(ones);
        bp_tensor_release(twos);
        bp_tensor_release(s);
        bp_context_destroy(ctx); /* the worker is still watching for a job */
        cr_assert_eq(process_threads(), 0, "round %d: workers outlived their backend", round);
    }
    unlink(path);
}

Test(blas_cpu, bad_threads_values_are_config_errors)
{
    static const char *const bad[] = {"0", "-2", "many", "4x", "", "100000"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[64], text[128];
        snprintf(text, sizeof text, "[backend.blas_cpu]\nthreads = %s\n", bad[i]);
        write_ini(path, text);
        bp_context *ctx = NULL;
        bp_status st = bp_context_create(path, &ctx);
        if (st == BP_OK) { /* the plugin reads its keys when it opens */
            bp_backend *blas = NULL;
            st = bp_backend_get(ctx, "blas_cpu", &blas);
            if (st == BP_ERR_NOT_FOUND || st == BP_ERR_PLUGIN) {
                bp_context_destroy(ctx);
                unlink(path);
                cr_skip_test("the blas_cpu plugin is not available");
            }
        }
        cr_expect_eq(st, BP_ERR_CONFIG, "threads = '%s' gave %s: %s", bad[i], bp_status_string(st),
                     bp_last_error());
        cr_expect(strstr(bp_last_error(), "threads") != NULL, "message: %s", bp_last_error());
        if (ctx)
            bp_context_destroy(ctx);
        unlink(path);
    }
}

/* Sizes past the threading threshold (and an odd length, so the slices do
 * not divide evenly): blas_cpu must give the reference's bits for exact ops. */
Test(blas_cpu, large_add_and_casts_match_the_reference_bit_for_bit)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    const int64_t shape[2] = {513, 1031};
    static const bp_dtype dts[] = {BP_F32, BP_F64, BP_I32, BP_I8, BP_F16, BP_BF16};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        bp_tensor *a0 = make(bin, dts[d], 2, shape), *a1 = NULL, *b1 = NULL;
        bp_tensor *b0 = make(bin, dts[d], 1, (int64_t[]){1031}); /* broadcast along rows */
        BPT_OK(bp_backend_copy(a0, blas, &a1));
        BPT_OK(bp_backend_copy(b0, blas, &b1));
        bp_tensor *r0 = NULL, *r1 = NULL;
        BPT_OK(bp_add(a0, b0, &r0));
        BPT_OK(bp_add(a1, b1, &r1));
        expect_same_bytes("add", r0, r1);
        bp_tensor_release(r0);
        bp_tensor_release(r1);
        for (size_t e = 0; e < sizeof dts / sizeof dts[0]; e++) {
            if (e == d)
                continue;
            BPT_OK(bp_cast(a0, dts[e], &r0));
            BPT_OK(bp_cast(a1, dts[e], &r1));
            expect_same_bytes("cast", r0, r1);
            bp_tensor_release(r0);
            bp_tensor_release(r1);
        }
        bp_tensor_release(a0);
        bp_tensor_release(b0);
        bp_tensor_release(a1);
        bp_tensor_release(b1);
    }
    bp_context_destroy(ctx);
}

Test(blas_cpu, large_exp_random_and_where_match_the_reference)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    const int64_t shape[1] = {300001};
    bp_tensor *a0 = make(bin, BP_F32, 1, shape), *a1 = NULL, *r0 = NULL, *r1 = NULL;
    BPT_OK(bp_backend_copy(a0, blas, &a1));
    BPT_OK(bp_exp(a0, &r0));
    BPT_OK(bp_exp(a1, &r1));
    /* a vectorised exp: within one f32 ulp of libm's, element by element */
    float *e0 = bpt_read_bytes(r0), *e1 = bpt_read_bytes(r1);
    int64_t off = 0;
    for (int64_t i = 0; i < shape[0]; i++)
        off += fabs((double)e1[i] - (double)e0[i]) > 0x1p-23 * fabs((double)e0[i]);
    cr_expect_eq(off, 0, "exp: %lld elements more than 1 ulp from the reference", (long long)off);
    free(e0), free(e1);
    bp_tensor_release(r0);
    bp_tensor_release(r1);
    /* the random streams are positions, whoever draws them */
    BPT_OK(bp_random_normal(bin, BP_F32, 1, shape, 7, 11, 0.5, 2.0, &r0));
    BPT_OK(bp_random_normal(blas, BP_F32, 1, shape, 7, 11, 0.5, 2.0, &r1));
    expect_same_bytes("random_normal", r0, r1);
    bp_tensor_release(r0);
    bp_tensor_release(r1);
    bp_tensor_release(a0);
    bp_tensor_release(a1);
    bp_context_destroy(ctx);
}

Test(blas_cpu, large_sum_softmax_and_matmul_agree_closely)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    const int64_t shape[2] = {777, 1029};
    bp_tensor *a0 = make(bin, BP_F32, 2, shape), *a1 = NULL, *r0 = NULL, *r1 = NULL;
    BPT_OK(bp_backend_copy(a0, blas, &a1));

    BPT_OK(bp_sum(a0, 0, NULL, false, &r0)); /* all axes: one output */
    BPT_OK(bp_sum(a1, 0, NULL, false, &r1));
    cr_expect_leq(rel_diff_f32(r1, r0), 1e-6, "sum of all");
    bp_tensor_release(r0);
    bp_tensor_release(r1);
    BPT_OK(bp_sum(a0, 1, (int32_t[]){0}, false, &r0)); /* columns */
    BPT_OK(bp_sum(a1, 1, (int32_t[]){0}, false, &r1));
    expect_same_bytes("sum over axis 0", r0, r1);
    bp_tensor_release(r0);
    bp_tensor_release(r1);
    BPT_OK(bp_softmax(a0, -1, &r0));
    BPT_OK(bp_softmax(a1, -1, &r1));
    cr_expect_leq(rel_diff_f32(r1, r0), 1e-6, "softmax");
    bp_tensor_release(r0);
    bp_tensor_release(r1);

    bp_tensor *t0 = NULL, *t1 = NULL;
    BPT_OK(bp_transpose(a0, NULL, &t0));
    BPT_OK(bp_transpose(a1, NULL, &t1));
    BPT_OK(bp_matmul(a0, t0, &r0));
    BPT_OK(bp_matmul(a1, t1, &r1));
    cr_expect_leq(rel_diff_f32(r1, r0), 1e-5, "matmul");
    bp_tensor_release(r0);
    bp_tensor_release(r1);
    bp_tensor_release(t0);
    bp_tensor_release(t1);
    bp_tensor_release(a0);
    bp_tensor_release(a1);
    bp_context_destroy(ctx);
}

Test(blas_cpu, batched_and_integer_matmul_match_the_reference)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    /* a batch against one shared b (one gemm of batch * M rows) */
    bp_tensor *a0 = make(bin, BP_F64, 3, (int64_t[]){5, 7, 9}), *b0 = make(bin, BP_F64, 2, (int64_t[]){9, 4});
    bp_tensor *a1 = NULL, *b1 = NULL, *r0 = NULL, *r1 = NULL;
    BPT_OK(bp_backend_copy(a0, blas, &a1));
    BPT_OK(bp_backend_copy(b0, blas, &b1));
    BPT_OK(bp_matmul(a0, b0, &r0));
    BPT_OK(bp_matmul(a1, b1, &r1));
    double *p0 = bpt_read_bytes(r0), *p1 = bpt_read_bytes(r1);
    for (int64_t i = 0; i < 5 * 7 * 4; i++)
        cr_expect_leq(fabs(p0[i] - p1[i]), 1e-12 * (1 + fabs(p0[i])), "element %lld", (long long)i);
    free(p0), free(p1);
    bp_tensor_release(r0), bp_tensor_release(r1);
    bp_tensor_release(a0), bp_tensor_release(b0), bp_tensor_release(a1), bp_tensor_release(b1);
    /* a b per batch, plain and broadcast (3, 1) x (1, 4): the batches go to
     * the kernel pool, one single-threaded gemm each */
    static const int64_t bsa[2][4] = {{6, 7, 9}, {3, 1, 7, 9}}, bsb[2][4] = {{6, 9, 4}, {1, 4, 9, 5}};
    static const bp_dtype bdt[2] = {BP_F64, BP_F32};
    for (int c = 0; c < 2; c++) {
        int32_t rk = c ? 4 : 3;
        a0 = make(bin, bdt[c], rk, bsa[c]), b0 = make(bin, bdt[c], rk, bsb[c]);
        BPT_OK(bp_backend_copy(a0, blas, &a1));
        BPT_OK(bp_backend_copy(b0, blas, &b1));
        BPT_OK(bp_matmul(a0, b0, &r0));
        BPT_OK(bp_matmul(a1, b1, &r1));
        if (bdt[c] == BP_F32) {
            cr_expect_leq(rel_diff_f32(r1, r0), 1e-5, "broadcast batched matmul");
        } else {
            p0 = bpt_read_bytes(r0), p1 = bpt_read_bytes(r1);
            for (int64_t i = 0; i < bp_tensor_numel(r0); i++)
                cr_expect_leq(fabs(p0[i] - p1[i]), 1e-12 * (1 + fabs(p0[i])), "batched element %lld",
                              (long long)i);
            free(p0), free(p1);
        }
        bp_tensor_release(r0), bp_tensor_release(r1);
        bp_tensor_release(a0), bp_tensor_release(b0), bp_tensor_release(a1), bp_tensor_release(b1);
    }
    /* integers wrap identically, rows split across threads */
    a0 = make(bin, BP_I32, 2, (int64_t[]){300, 200});
    b0 = make(bin, BP_I32, 2, (int64_t[]){200, 250});
    BPT_OK(bp_backend_copy(a0, blas, &a1));
    BPT_OK(bp_backend_copy(b0, blas, &b1));
    BPT_OK(bp_matmul(a0, b0, &r0));
    BPT_OK(bp_matmul(a1, b1, &r1));
    expect_same_bytes("i32 matmul", r0, r1);
    bp_tensor_release(r0), bp_tensor_release(r1);
    bp_tensor_release(a0), bp_tensor_release(b0), bp_tensor_release(a1), bp_tensor_release(b1);
    bp_context_destroy(ctx);
}

Test(blas_cpu, freed_buffers_are_cached_and_reused)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    bp_tensor *a = make(blas, BP_F32, 1, (int64_t[]){1 << 20}), *c = NULL;
    BPT_OK(bp_add(a, a, &c));
    bp_tensor_release(c);
    bp_memory_info m1 = {.struct_size = sizeof m1}, m2 = {.struct_size = sizeof m2};
    BPT_OK(bp_backend_memory_info(blas, &m1));
    cr_expect_geq(m1.reserved, (uint64_t)4 << 20, "the freed output is kept: %llu",
                  (unsigned long long)m1.reserved);
    BPT_OK(bp_add(a, a, &c)); /* takes it back */
    BPT_OK(bp_backend_memory_info(blas, &m2));
    cr_expect_lt(m2.reserved, m1.reserved);
    bp_tensor_release(c);
    bp_tensor_release(a);
    bp_context_destroy(ctx);
}

/* blas_cpu threads by cutting views into slabs for the reference kernels:
 * every family, cut along a leading, an inner or an index axis, must give
 * the reference's bits. */
Test(blas_cpu, slabs_of_every_family_match_the_reference_bit_for_bit)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    bp_tensor *x0 = make(bin, BP_F32, 3, (int64_t[]){1, 3, 70001}), *x1 = NULL;
    bp_tensor *y0 = make(bin, BP_F32, 1, (int64_t[]){70001}), *y1 = NULL;
    BPT_OK(bp_backend_copy(x0, blas, &x1));
    BPT_OK(bp_backend_copy(y0, blas, &y1));
    bp_tensor *c0 = NULL, *c1 = NULL, *r0 = NULL, *r1 = NULL;
    BPT_OK(bp_gt(x0, y0, &c0)); /* cut along axis 1: axis 0 has extent 1 */
    BPT_OK(bp_gt(x1, y1, &c1));
    expect_same_bytes("gt", c0, c1);
    BPT_OK(bp_where(c0, x0, y0, &r0));
    BPT_OK(bp_where(c1, x1, y1, &r1));
    expect_same_bytes("where", r0, r1);
    bp_tensor_release(r0), bp_tensor_release(r1), bp_tensor_release(c0), bp_tensor_release(c1);
    BPT_OK(bp_transpose(x0, NULL, &r0)); /* a strided copy */
    BPT_OK(bp_transpose(x1, NULL, &r1));
    expect_same_bytes("transpose", r0, r1);
    bp_tensor_release(r0), bp_tensor_release(r1);
    BPT_OK(bp_log_softmax(x0, -1, &r0)); /* blas_cpu's fused f32 row: float exp */
    BPT_OK(bp_log_softmax(x1, -1, &r1));
    cr_expect_leq(rel_diff_f32(r1, r0), 1e-6, "log_softmax");
    bp_tensor_release(r0), bp_tensor_release(r1);
    bp_tensor_release(x0), bp_tensor_release(x1), bp_tensor_release(y0), bp_tensor_release(y1);

    /* reductions cut over their outputs: rows, columns, arg* */
    x0 = make(bin, BP_F64, 2, (int64_t[]){513, 1031});
    BPT_OK(bp_backend_copy(x0, blas, &x1));
    static const bp_op red[] = {BP_OP_MAX,  BP_OP_ARGMAX, BP_OP_LOGSUMEXP, BP_OP_SUM,
                                BP_OP_PROD, BP_OP_MIN,    BP_OP_ARGMIN,    BP_OP_MEAN};
    for (size_t i = 0; i < sizeof red / sizeof red[0]; i++)
        for (int32_t ax = -1; ax < 2; ax++) { /* -1: every axis */
            BPT_OK(bp_reduce(red[i], x0, ax >= 0, ax >= 0 ? &ax : NULL, false, &r0));
            BPT_OK(bp_reduce(red[i], x1, ax >= 0, ax >= 0 ? &ax : NULL, false, &r1));
            if (red[i] == BP_OP_LOGSUMEXP || red[i] == BP_OP_PROD ||
                (ax < 0 && (red[i] == BP_OP_SUM || red[i] == BP_OP_MEAN))) {
                /* blas_cpu's own kernels (max, then one pass of a vectorised
                 * exp; eight partial products), or chunks summed in parallel:
                 * another rounding (the sum cancels: 1e-8 absolute is ~K eps
                 * sum|x|) */
                double *p0 = bpt_read_bytes(r0), *p1 = bpt_read_bytes(r1);
                for (int64_t k = 0; k < bp_tensor_numel(r0); k++) /* equal infs, both NaN, or close */
                    cr_expect(p0[k] == p1[k] || (p0[k] != p0[k] && p1[k] != p1[k]) ||
                                  fabs(p0[k] - p1[k]) <= 1e-13 * fabs(p0[k]) + 1e-8,
                              "%s axis %d element %lld: %.17g vs %.17g", bp_op_name(red[i]), ax,
                              (long long)k, p0[k], p1[k]);
                free(p0), free(p1);
            } else {
                expect_same_bytes(bp_op_name(red[i]), r0, r1);
            }
            bp_tensor_release(r0), bp_tensor_release(r1);
        }
    bp_tensor_release(x0), bp_tensor_release(x1);

    /* PROD again on values near 1, whose products stay finite (those of the
     * values above overflow), with row 0 holding a 0 and two 1e300 in three
     * of the eight lanes: the lanes multiply to 0 * inf = NaN, which is
     * redone in one pass to the reference's 0 */
    {
        const int64_t ps[2] = {513, 1031};
        double *pv = malloc((size_t)(ps[0] * ps[1]) * sizeof *pv);
        cr_assert(pv);
        fill_values(pv, ps[0] * ps[1]);
        for (int64_t k = 0; k < ps[0] * ps[1]; k++)
            pv[k] = 1.0 + pv[k] / 4000.0;
        pv[3] = 0.0, pv[700] = 1e300, pv[701] = 1e300; /* row 0: lanes 0, 1e300, 1e300 */
        x0 = bpt_tensor(bin, BP_F64, 2, ps, pv);
        free(pv);
        BPT_OK(bp_backend_copy(x0, blas, &x1));
        for (int32_t ax = -1; ax < 2; ax++) {
            BPT_OK(bp_reduce(BP_OP_PROD, x0, ax >= 0, ax >= 0 ? &ax : NULL, false, &r0));
            BPT_OK(bp_reduce(BP_OP_PROD, x1, ax >= 0, ax >= 0 ? &ax : NULL, false, &r1));
            double *p0 = bpt_read_bytes(r0), *p1 = bpt_read_bytes(r1);
            for (int64_t k = 0; k < bp_tensor_numel(r0); k++)
                cr_expect(p0[k] == p1[k] || fabs(p0[k] - p1[k]) <= 1e-13 * fabs(p0[k]),
                          "prod near 1, axis %d element %lld: %.17g vs %.17g", ax, (long long)k,
                          p0[k], p1[k]);
            free(p0), free(p1);
            bp_tensor_release(r0), bp_tensor_release(r1);
        }
        bp_tensor_release(x0), bp_tensor_release(x1);
    }
    x0 = make(bin, BP_F64, 2, (int64_t[]){513, 1031});
    BPT_OK(bp_backend_copy(x0, blas, &x1));
    BPT_OK(bp_softmax(x0, 0, &r0)); /* f64: the reference kernel on slabs */
    BPT_OK(bp_softmax(x1, 0, &r1));
    expect_same_bytes("softmax f64", r0, r1);
    bp_tensor_release(r0), bp_tensor_release(r1);

    /* gather cut along x's leading axis, and along the index axis */
    int64_t idx[97];
    for (int i = 0; i < 97; i++)
        idx[i] = (i * 37) % 513 - (i % 3 == 0 ? 513 : 0);
    bp_tensor *i0 = bpt_tensor_i64(bin, BP_I64, 1, (int64_t[]){97}, idx), *i1 = NULL;
    BPT_OK(bp_backend_copy(i0, blas, &i1));
    for (int32_t ax = 0; ax < 2; ax++) {
        BPT_OK(bp_gather(x0, i0, ax, &r0));
        BPT_OK(bp_gather(x1, i1, ax, &r1));
        expect_same_bytes("gather", r0, r1);
        bp_tensor_release(r0), bp_tensor_release(r1);
    }
    bp_tensor_release(i0), bp_tensor_release(i1), bp_tensor_release(x0), bp_tensor_release(x1);

    /* random: slabs are row-major ranges even behind a size-1 axis, and with
     * an uneven leading axis */
    static const int64_t rshape[2][3] = {{1, 5, 30011}, {3, 40001, 1}};
    for (int s = 0; s < 2; s++) {
        BPT_OK(bp_random_uniform(bin, BP_F32, 3, rshape[s], 3, 99, -1.0, 1.0, &r0));
        BPT_OK(bp_random_uniform(blas, BP_F32, 3, rshape[s], 3, 99, -1.0, 1.0, &r1));
        expect_same_bytes("random_uniform", r0, r1);
        bp_tensor_release(r0), bp_tensor_release(r1);
    }

    /* f16 and batched integer matmul run the reference kernel on row slabs */
    static const bp_dtype mdt[] = {BP_F16, BP_I32};
    for (int d = 0; d < 2; d++) {
        bp_tensor *a0 = make(bin, mdt[d], 3, (int64_t[]){3, 100, 120});
        bp_tensor *b0 = make(bin, mdt[d], 2, (int64_t[]){120, 90}), *a1 = NULL, *b1 = NULL;
        BPT_OK(bp_backend_copy(a0, blas, &a1));
        BPT_OK(bp_backend_copy(b0, blas, &b1));
        BPT_OK(bp_matmul(a0, b0, &r0));
        BPT_OK(bp_matmul(a1, b1, &r1));
        expect_same_bytes(bp_dtype_name(mdt[d]), r0, r1);
        bp_tensor_release(r0), bp_tensor_release(r1);
        bp_tensor_release(a0), bp_tensor_release(b0), bp_tensor_release(a1), bp_tensor_release(b1);
    }
    bp_context_destroy(ctx);
}

/* blas_cpu's vectorised unary kernels (vmath.c): the exact ones give the
 * reference's bits; the transcendental ones, evaluated in double, are within
 * one f32 ulp of the reference (libm in double, rounded once) and within
 * 1e-14 relative in f64. Values cover every quadrant, the patched ranges
 * (NaN, infinities, zeros, huge arguments) and tiny ones. */
Test(blas_cpu, vectorised_unary_kernels_match_the_reference)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    enum { N = 100003 };
    double *v = malloc(N * sizeof *v);
    for (int64_t i = 0; i < N; i++) {
        double t = (double)((i * 7919) % 20011 - 10005);
        v[i] = i % 5 == 0 ? t / 37.0 : i % 5 == 1 ? t * 1e-9 : i % 5 == 2 ? t * 11.0 : t / 1001.0;
    }
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e30, -1e30, 3e5,
                                     709.5, -745.2, 88.8, -103.9, 1e-310, 0x1p-20, 20.0};
    for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
        v[k * 7] = special[k];
    static const bp_op ops[] = {BP_OP_EXP,  BP_OP_LOG,   BP_OP_SIN,   BP_OP_COS,  BP_OP_TAN,
                                BP_OP_TANH, BP_OP_SIGMOID, BP_OP_SQRT, BP_OP_RSQRT,
                                BP_OP_FLOOR, BP_OP_CEIL, BP_OP_ROUND, BP_OP_ABS, BP_OP_NEG,
                                BP_OP_RELU};
    for (int d = 0; d < 2; d++) {
        bp_dtype dt = d ? BP_F64 : BP_F32;
        bp_tensor *x0 = bpt_tensor(bin, dt, 1, (int64_t[]){N}, v), *x1 = NULL;
        BPT_OK(bp_backend_copy(x0, blas, &x1));
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            bp_tensor *r0 = NULL, *r1 = NULL;
            BPT_OK(bp_unary(ops[k], x0, &r0));
            BPT_OK(bp_unary(ops[k], x1, &r1));
            bool exact = ops[k] >= BP_OP_SQRT && ops[k] != BP_OP_SIN && ops[k] != BP_OP_COS &&
                         ops[k] != BP_OP_TAN && ops[k] != BP_OP_TANH && ops[k] != BP_OP_SIGMOID;
            if (exact) {
                expect_same_bytes(bp_op_name(ops[k]), r0, r1);
            } else {
                int64_t off = 0;
                void *b0 = bpt_read_bytes(r0), *b1 = bpt_read_bytes(r1);
                for (int64_t i = 0; i < N; i++) {
                    double a = d ? ((double *)b0)[i] : ((float *)b0)[i];
                    double b = d ? ((double *)b1)[i] : ((float *)b1)[i];
                    double tol = d ? 1e-14 * fabs(a) : 0x1p-23 * fabs(a);
                    bool same = (a != a && b != b) || a == b || fabs(a - b) <= tol;
                    if (!same && off++ < 3)
                        cr_log_error("%s %s x=%.17g: %.17g vs %.17g", bp_op_name(ops[k]),
                                     bp_dtype_name(dt), v[i], a, b);
                }
                cr_expect_eq(off, 0, "%s %s: %lld elements apart", bp_op_name(ops[k]),
                             bp_dtype_name(dt), (long long)off);
                free(b0), free(b1);
            }
            bp_tensor_release(r0), bp_tensor_release(r1);
        }
        bp_tensor_release(x0), bp_tensor_release(x1);
    }
    free(v);
    bp_context_destroy(ctx);
}

/* Softmax over a leading or middle axis reaches blas_cpu as a strided last
 * axis: f32 goes by columns (bpc_softmax_cols_f32), a column whose max is not
 * finite (NaN, +inf, all -inf) by the reference. */
Test(blas_cpu, softmax_over_leading_axes_agrees_with_the_reference)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    const int64_t shape[3] = {5, 301, 2100};
    int64_t n = shape[0] * shape[1] * shape[2];
    double *v = malloc((size_t)n * sizeof *v);
    cr_assert(v);
    fill_values(v, n);
    for (int64_t i = 0; i < shape[1]; i++) { /* columns 3, 4, 5 of the first block */
        v[i * shape[2] + 3] = i == 7 ? NAN : v[i * shape[2] + 3];
        v[i * shape[2] + 4] = i == 9 ? INFINITY : v[i * shape[2] + 4];
        v[i * shape[2] + 5] = -INFINITY;
        v[i * shape[2] + 6] = i == 11 ? 0.0 : -200.0; /* exp underflows to 0 */
    }
    bp_tensor *x0 = bpt_tensor(bin, BP_F32, 3, shape, v), *x1 = NULL;
    free(v);
    BPT_OK(bp_backend_copy(x0, blas, &x1));
    for (int lg = 0; lg < 2; lg++)
        for (int32_t ax = 0; ax < 2; ax++) {
            bp_tensor *r0 = NULL, *r1 = NULL;
            BPT_OK(lg ? bp_log_softmax(x0, ax, &r0) : bp_softmax(x0, ax, &r0));
            BPT_OK(lg ? bp_log_softmax(x1, ax, &r1) : bp_softmax(x1, ax, &r1));
            float *p0 = bpt_read_bytes(r0), *p1 = bpt_read_bytes(r1);
            int64_t off = 0;
            for (int64_t i = 0; i < n; i++) {
                double a = p0[i], b = p1[i];
                /* the norm-wise error of the op tests: relative to the row's
                 * sum (1) for softmax, absolute after the log for log_softmax */
                bool same = (a != a && b != b) || a == b || fabs(a - b) <= 4e-6 * fabs(a) + 1e-7;
                if (!same && off++ < 3)
                    cr_log_error("%s axis %d element %lld: %.9g vs %.9g", lg ? "log_softmax" : "softmax",
                                 ax, (long long)i, a, b);
            }
            cr_expect_eq(off, 0, "%s axis %d: %lld elements apart", lg ? "log_softmax" : "softmax", ax,
                         (long long)off);
            free(p0), free(p1);
            bp_tensor_release(r0), bp_tensor_release(r1);
        }
    bp_tensor_release(x0), bp_tensor_release(x1);
    bp_context_destroy(ctx);
}

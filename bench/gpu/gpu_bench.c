/* The cuda backend against its targets, measured side by side in
 * one run on one device, printed as tables (docs/gpu.md):
 *
 *   matmul f32/f16/bf16 4096^3      vs cuBLAS called directly       >= 0.95
 *   add of 2^28 f32                 vs a device-to-device copy      >= 0.8 (bandwidth)
 *   sum (full, rows, columns) and
 *   softmax of 8192 x 8192 f32      vs the same copy bandwidth      >= 0.7
 *   host -> device, device -> host  vs cudaMemcpy from pinned       >= 0.8
 *   (from / to pinned memory; from / to pageable memory reported)
 *   4-element add (launch overhead) vs PyTorch                      time <= 1.0x
 *   add, sum, softmax, matmul,
 *   transpose                       vs PyTorch                      (reported)
 *
 * and, with --table FILE (bench/gpu/ops.txt), the wide table: every op
 * family of ops.h and nn.h at real models' shapes against PyTorch on the
 * same device (every family >= 0.8x PyTorch's speed, the geometric mean
 * >= 1.0x, the convolutions >= 0.9x), TF32 off on both sides and the TF32
 * rows apart; the cost of opening the backend and of the first
 * convolution (--startup, in a fresh process) beside PyTorch's.
 *
 * usage: bp_gpu_bench [--torch FILE] [--table FILE] [--no-classic]
 *        bp_gpu_bench --table FILE --list      the rows, as torch_bench.py --list prints them
 *        bp_gpu_bench --table FILE --dry-run   each row once on the binary backend with every
 *                                              extent capped at 8 (no GPU needed)
 *        bp_gpu_bench --startup                opening cost, in this (fresh) process
 * FILE after --torch: "name seconds" lines from torch_bench.py (run.sh does
 * both sides). Each time is the best of three batches of back-to-back
 * calls after a warm-up, each batch ending in a synchronisation. "ratio" is
 * the speed of backplane relative to the reference for the same work
 * (bandwidth for memory-bound rows): above 1 is faster. Exit status: 0,
 * 1 when a call failed, 2 on a usage or table error. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/backplane.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "timing.h"
#include "wide.h"

static bp_backend *gpu;
static cublasHandle_t blas;

#define DIE(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), exit(1))
#define BP(x) do { bp_status s_ = (x); if (s_ != BP_OK) DIE("%s: %s", #x, bp_last_error()); } while (0)
#define CU(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) DIE("%s: %s", #x, cudaGetErrorString(e_)); } while (0)
#define CB(x) do { cublasStatus_t b_ = (x); if (b_ != CUBLAS_STATUS_SUCCESS) DIE("%s: %d", #x, (int)b_); } while (0)

/* ---- timing ----------------------------------------------------------------- */

typedef void (*step_fn)(void *arg);
static void sync_bp(void) { BP(bp_backend_synchronize(gpu)); }
static void sync_cuda(void) { CU(cudaDeviceSynchronize()); }

/* Seconds per call of fn(arg): the best of three batches of >= 0.1 s. */
static double timeit(step_fn fn, void *arg, void (*sync)(void))
{
    return bench_time(fn, arg, sync, 0.1);
}

/* ---- the table ---------------------------------------------------------------- */

static void row(const char *item, double t_bp, const char *ref, double t_ref, double work,
                double target)
{
    if (t_ref <= 0) {
        printf("%-34s %10.3f ms  %-24s %10s  %6s  %6s  %s\n", item, t_bp * 1e3, ref, "n/a", "-",
               "-", "no reference");
        return;
    }
    double ratio = work * t_ref / t_bp;
    printf("%-34s %10.3f ms  %-24s %7.3f ms  %6.2f  %6.2f  %s\n", item, t_bp * 1e3, ref,
           t_ref * 1e3, ratio, target, target <= 0 ? "-" : ratio >= target ? "MET" : "MISSED");
}

/* PyTorch's seconds for `name` from the file, or 0. */
static double torch_time(const char *file, const char *name)
{
    FILE *f = file ? fopen(file, "r") : NULL;
    char key[128];
    double s, found = 0;
    while (f && fscanf(f, "%127s %lf", key, &s) == 2)
        if (strcmp(key, name) == 0)
            found = s;
    if (f)
        fclose(f);
    return found;
}

/* ---- steps -------------------------------------------------------------------- */

typedef struct binop { bp_tensor *a, *b; bp_status (*fn)(const bp_tensor *, const bp_tensor *, bp_tensor **); } binop;
static void step_binop(void *p)
{
    binop *o = p;
    bp_tensor *c = NULL;
    BP(o->fn(o->a, o->b, &c));
    bp_tensor_release(c);
}

typedef struct red { bp_tensor *x; int32_t n_axes, axis; } red;
static void step_sum(void *p)
{
    red *r = p;
    bp_tensor *y = NULL;
    BP(bp_sum(r->x, r->n_axes, r->n_axes ? &r->axis : NULL, false, &y));
    bp_tensor_release(y);
}
static void step_softmax(void *p)
{
    red *r = p;
    bp_tensor *y = NULL;
    BP(bp_softmax(r->x, -1, &y));
    bp_tensor_release(y);
}
static void step_transpose(void *p)
{
    red *r = p;
    bp_tensor *y = NULL;
    BP(bp_transpose(r->x, NULL, &y));
    bp_tensor_release(y);
}

typedef struct gemm { void *a, *b, *c; cudaDataType t; int n; } gemm;
static void step_gemm(void *p)
{
    gemm *g = p;
    float one = 1, zero = 0;
    CB(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one, g->b, g->t, g->n,
                    g->a, g->t, g->n, &zero, g->c, g->t, g->n, CUBLAS_COMPUTE_32F,
                    CUBLAS_GEMM_DEFAULT));
}

typedef struct copy { void *dst; const void *src; size_t bytes; enum cudaMemcpyKind kind; } copy;
static void step_copy(void *p)
{
    copy *c = p;
    CU(cudaMemcpyAsync(c->dst, c->src, c->bytes, c->kind, 0));
}

typedef struct xfer { const void *host; void *back; int64_t n; bp_tensor *t; } xfer;
static void step_upload(void *p)
{
    xfer *x = p;
    bp_tensor *t = NULL;
    BP(bp_tensor_from_host(gpu, BP_F32, 1, &x->n, x->host, &t));
    bp_tensor_release(t);
}
static void step_download(void *p)
{
    xfer *x = p;
    BP(bp_tensor_to_host(x->t, x->back, (size_t)x->n * 4));
}

static bp_tensor *uniform(bp_dtype dt, int32_t rank, const int64_t *shape)
{
    bp_tensor *t = NULL;
    BP(bp_random_uniform(gpu, dt, rank, shape, 42, 0, -1.0, 1.0, &t));
    return t;
}

/* A device copy of t's bytes, for the cuBLAS reference. */
static void *raw_copy(bp_tensor *t, size_t bytes)
{
    void *host = malloc(bytes), *dev = NULL;
    if (!host)
        DIE("out of host memory");
    BP(bp_tensor_to_host(t, host, bytes));
    CU(cudaMalloc(&dev, bytes));
    CU(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    free(host);
    return dev;
}

/* ---- the rows ----------------------------------------------------------------- */

static void bench_matmul(const char *torch)
{
    static const struct { bp_dtype dt; cudaDataType t; const char *name, *key; } ks[] = {
        {BP_F32, CUDA_R_32F, "matmul f32 4096^3", "matmul_f32_4096"},
        {BP_F16, CUDA_R_16F, "matmul f16 4096^3", "matmul_f16_4096"},
        {BP_BF16, CUDA_R_16BF, "matmul bf16 4096^3", "matmul_bf16_4096"},
    };
    const int n = 4096;
    const int64_t shape[2] = {n, n};
    for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
        binop o = {uniform(ks[k].dt, 2, shape), uniform(ks[k].dt, 2, shape), bp_matmul};
        size_t bytes = (size_t)n * n * bp_dtype_size(ks[k].dt);
        gemm g = {raw_copy(o.a, bytes), raw_copy(o.b, bytes), NULL, ks[k].t, n};
        CU(cudaMalloc(&g.c, bytes));
        double t_bp = timeit(step_binop, &o, sync_bp);
        row(ks[k].name, t_bp, "cuBLAS GemmEx", timeit(step_gemm, &g, sync_cuda), 1, 0.95);
        row(ks[k].name, t_bp, "PyTorch", torch_time(torch, ks[k].key), 1, 0);
        CU(cudaFree(g.a));
        CU(cudaFree(g.b));
        CU(cudaFree(g.c));
        bp_tensor_release(o.a), bp_tensor_release(o.b);
    }
}

/* Copy bandwidth as the bound: seconds to copy `bytes` device to device. */
static double copy_time(size_t bytes)
{
    copy c = {NULL, NULL, bytes, cudaMemcpyDeviceToDevice};
    CU(cudaMalloc(&c.dst, bytes));
    CU(cudaMalloc((void **)&c.src, bytes));
    CU(cudaMemset(c.dst, 0, bytes));
    CU(cudaMemset((void *)c.src, 0, bytes));
    double t = timeit(step_copy, &c, sync_cuda);
    CU(cudaFree(c.dst));
    CU(cudaFree((void *)c.src));
    return t;
}

static void bench_memory_bound(const char *torch)
{
    int64_t n = (int64_t)1 << 28;
    double t_copy = copy_time((size_t)n * 4); /* reads and writes 2 x 1 GiB */
    binop o = {uniform(BP_F32, 1, &n), uniform(BP_F32, 1, &n), bp_add};
    double t = timeit(step_binop, &o, sync_bp);
    row("add f32 2^28 (bandwidth)", t, "D2D copy, same bytes", t_copy, 3.0 / 2.0, 0.8);
    row("add f32 2^28", t, "PyTorch", torch_time(torch, "add_2p28"), 1, 0);
    bp_tensor_release(o.a), bp_tensor_release(o.b);

    const int64_t sq[2] = {8192, 8192};
    double t_copy2 = copy_time((size_t)8192 * 8192 * 4); /* 2 x 256 MiB */
    red r = {uniform(BP_F32, 2, sq), 0, 0};
    t = timeit(step_sum, &r, sync_bp);
    row("sum 8192x8192 -> scalar", t, "D2D copy bandwidth", t_copy2, 1.0 / 2.0, 0.7);
    row("sum 8192x8192 -> scalar", t, "PyTorch", torch_time(torch, "sum_8192"), 1, 0);
    r.n_axes = 1, r.axis = 1;
    row("sum 8192x8192 over rows (axis 1)", timeit(step_sum, &r, sync_bp), "D2D copy bandwidth",
        t_copy2, 1.0 / 2.0, 0.7);
    r.axis = 0;
    row("sum 8192x8192 over columns (axis 0)", timeit(step_sum, &r, sync_bp), "D2D copy bandwidth",
        t_copy2, 1.0 / 2.0, 0.7);
    t = timeit(step_softmax, &r, sync_bp);
    row("softmax 8192x8192 (last axis)", t, "D2D copy bandwidth", t_copy2, 1, 0.7);
    row("softmax 8192x8192 (last axis)", t, "PyTorch", torch_time(torch, "softmax_8192"), 1, 0);
    t = timeit(step_transpose, &r, sync_bp);
    row("transpose 8192x8192", t, "D2D copy bandwidth", t_copy2, 1, 0);
    row("transpose 8192x8192", t, "PyTorch", torch_time(torch, "transpose_8192"), 1, 0);
    bp_tensor_release(r.x);
}

static void bench_transfers(void)
{
    int64_t n = (int64_t)64 << 20; /* 256 MiB of f32 */
    size_t bytes = (size_t)n * 4;
    void *pageable = malloc(bytes), *back = malloc(bytes), *pinned = NULL, *dev = NULL;
    if (!pageable || !back)
        DIE("out of host memory");
    memset(pageable, 1, bytes), memset(back, 0, bytes);
    CU(cudaMallocHost(&pinned, bytes));
    CU(cudaMalloc(&dev, bytes));
    memset(pinned, 1, bytes);
    /* The same source memory on both sides of each row: from pinned memory
     * backplane's write is a direct DMA (the target rows); from pageable
     * memory it stages through its own pinned buffers, compared with the
     * driver's staging (pageable cudaMemcpy) and with the pinned bound. */
    xfer x = {pinned, NULL, n, NULL};
    copy c = {dev, pinned, bytes, cudaMemcpyHostToDevice};
    row("host -> device 256 MiB, pinned", timeit(step_upload, &x, sync_bp),
        "cudaMemcpy from pinned", timeit(step_copy, &c, sync_cuda), 1, 0.8);
    x.host = pageable;
    double up = timeit(step_upload, &x, sync_bp);
    row("host -> device 256 MiB, pageable", up, "cudaMemcpy from pinned", timeit(step_copy, &c, sync_cuda), 1, 0);
    c.src = pageable;
    row("host -> device 256 MiB, pageable", up, "cudaMemcpy pageable", timeit(step_copy, &c, sync_cuda), 1, 0);
    BP(bp_tensor_from_host(gpu, BP_F32, 1, &n, pageable, &x.t));
    x.back = pinned;
    c = (copy){pinned, dev, bytes, cudaMemcpyDeviceToHost};
    double pinned_down = timeit(step_copy, &c, sync_cuda);
    row("device -> host 256 MiB, pinned", timeit(step_download, &x, sync_bp),
        "cudaMemcpy to pinned", pinned_down, 1, 0.8);
    x.back = back;
    double down = timeit(step_download, &x, sync_bp);
    row("device -> host 256 MiB, pageable", down, "cudaMemcpy to pinned", pinned_down, 1, 0);
    c.dst = back;
    row("device -> host 256 MiB, pageable", down, "cudaMemcpy pageable", timeit(step_copy, &c, sync_cuda), 1, 0);
    bp_tensor_release(x.t);
    CU(cudaFreeHost(pinned));
    CU(cudaFree(dev));
    free(pageable), free(back);
}

static void bench_overhead(const char *torch)
{
    int64_t n = 4;
    binop o = {uniform(BP_F32, 1, &n), uniform(BP_F32, 1, &n), bp_add};
    double t = timeit(step_binop, &o, sync_bp);
    /* target: no slower than PyTorch, i.e. speed ratio >= 1 */
    row("add of 4 f32 (per-op overhead)", t, "PyTorch", torch_time(torch, "add_4"), 1, 1.0);
    bp_tensor_release(o.a), bp_tensor_release(o.b);
}

/* ---- the wide table ------------------------------------------------------------------ */

static bp_backend *gpu_tf32; /* cuda:0 of a second context with tf32 = true: the TF32 rows */
static void sync_tf32(void) { BP(bp_backend_synchronize(gpu_tf32)); }

typedef struct wstep { const wide_row *r; bp_tensor **in; } wstep;
static void step_wide(void *p)
{
    wstep *w = p;
    BP(wide_call(w->r, w->in));
}

/* A context of its own on a temporary config file with these lines. */
static bp_context *context_with(const char *lines)
{
    char ini[] = "/tmp/bp_gpu_bench_XXXXXX";
    int fd = mkstemp(ini);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        DIE("cannot write a config file in /tmp");
    fputs(lines, f);
    fclose(f);
    bp_context *ctx = NULL;
    bp_status st = bp_context_create(ini, &ctx);
    remove(ini);
    if (st != BP_OK)
        DIE("bp_context_create: %s", bp_last_error());
    return ctx;
}

static wide_row *table_rows(const char *table, int *n)
{
    wide_row *rows = NULL;
    char err[512];
    if (!wide_parse(table, &rows, n, err, sizeof err)) {
        fprintf(stderr, "bp_gpu_bench: %s\n", err);
        exit(2);
    }
    return rows;
}

typedef struct famstat { char name[32]; double logsum; int n; } famstat;

static void fam_add(famstat *f, int *nf, const char *name, double ratio)
{
    int k = 0;
    while (k < *nf && strcmp(f[k].name, name) != 0)
        k++;
    if (k == *nf) {
        snprintf(f[k].name, sizeof f[k].name, "%s", name);
        f[k].logsum = 0, f[k].n = 0;
        (*nf)++;
    }
    f[k].logsum += log(ratio);
    f[k].n++;
}

/* Every row of the table on cuda:0 against PyTorch's time for it; a row
 * whose call fails says so and the run goes on (the exit status is 1). */
static int bench_wide(const char *table, const char *torch, double copy_gbps)
{
    int n = 0, failed = 0, nf = 0, nconv = 0;
    wide_row *rows = table_rows(table, &n);
    famstat fam[64], conv[4];
    double all_log = 0;
    int all_n = 0;
    printf("\nwide table (%s): ratio = PyTorch's time / backplane's, above 1 is faster; TF32 off "
           "on both sides except the rows marked tf32\n", table);
    printf("%-26s %-12s %11s %11s %7s %9s %7s  %s\n", "row", "family", "backplane", "PyTorch",
           "ratio", "GB/s", "of copy", "verdict");
    for (int i = 0; i < n; i++) {
        const wide_row *r = &rows[i];
        bp_backend *b = r->tf32 ? gpu_tf32 : gpu;
        bp_tensor *in[WIDE_MAX_IN] = {0};
        bp_status st = wide_inputs(r, b, 0, in);
        if (st == BP_OK)
            st = wide_call(r, in);
        if (st == BP_OK)
            st = bp_backend_synchronize(b);
        if (st != BP_OK) {
            printf("%-26s %-12s FAILED: %s\n", r->key, r->family, bp_last_error());
            fflush(stdout);
            failed++;
            wide_release(in, r->nin);
            continue;
        }
        wstep w = {r, in};
        const double t = bench_time(step_wide, &w, r->tf32 ? sync_tf32 : sync_bp, 0.05);
        wide_release(in, r->nin);
        char key[96];
        snprintf(key, sizeof key, "w.%s", r->key);
        const double tt = torch_time(torch, key);
        const double gbps = r->bw ? wide_bytes(r) / t * 1e-9 : 0;
        char bws[16] = "-", ofc[16] = "-", rs[16] = "n/a", tts[24] = "n/a";
        if (r->bw)
            snprintf(bws, sizeof bws, "%.0f", gbps);
        if (r->bw && copy_gbps > 0)
            snprintf(ofc, sizeof ofc, "%.2f", gbps / copy_gbps);
        const double target = strcmp(r->family, "conv") == 0 ? 0.9 : 0.8;
        const char *verdict = "no PyTorch time";
        if (tt > 0) {
            const double ratio = tt / t;
            snprintf(rs, sizeof rs, "%.2f", ratio);
            snprintf(tts, sizeof tts, "%.3f ms", tt * 1e3);
            verdict = r->tf32 ? "(tf32: apart)" : ratio >= target ? "MET" : "MISSED";
            if (!r->tf32) {
                fam_add(fam, &nf, r->family, ratio);
                all_log += log(ratio), all_n++;
                if (strcmp(r->family, "conv") == 0)
                    fam_add(conv, &nconv, bp_dtype_name(r->dt), ratio);
            }
        }
        printf("%-26s %-12s %8.3f ms %11s %7s %9s %7s  %s\n", r->key, r->family, t * 1e3, tts, rs,
               bws, ofc, verdict);
        fflush(stdout);
    }
    printf("\ngeometric means of the ratio (TF32 rows left out):\n");
    for (int k = 0; k < nf; k++) {
        const double g = exp(fam[k].logsum / fam[k].n);
        const double target = strcmp(fam[k].name, "conv") == 0 ? 0.9 : 0.8;
        printf("  family %-12s %2d rows  %5.2f  (target %.1f: %s)\n", fam[k].name, fam[k].n, g,
               target, g >= target ? "MET" : "MISSED");
    }
    for (int k = 0; k < nconv; k++) {
        const double g = exp(conv[k].logsum / conv[k].n);
        printf("  conv %-14s %2d rows  %5.2f  (target 0.9: %s)\n", conv[k].name, conv[k].n, g,
               g >= 0.9 ? "MET" : "MISSED");
    }
    if (all_n > 0) {
        const double g = exp(all_log / all_n);
        printf("  all rows            %2d rows  %5.2f  (target 1.0: %s)\n", all_n, g,
               g >= 1.0 ? "MET" : "MISSED");
    } else {
        printf("  no PyTorch times: no ratios (run through bench/gpu/run.sh with a CUDA torch)\n");
    }
    if (failed)
        printf("%d of %d rows FAILED (above)\n", failed, n);
    free(rows);
    return failed ? 1 : 0;
}

/* --list: the rows in the form torch_bench.py --list prints them */
static int list_rows(const char *table)
{
    int n = 0;
    wide_row *rows = table_rows(table, &n);
    char buf[1024];
    for (int i = 0; i < n; i++) {
        wide_describe(&rows[i], buf, sizeof buf);
        printf("%s\n", buf);
    }
    free(rows);
    return 0;
}

/* --dry-run: each row once on the binary backend, every extent capped at 8:
 * the rows' inputs and calls are right before a GPU is at hand */
static int dry_run(const char *table)
{
    int n = 0, failed = 0;
    wide_row *rows = table_rows(table, &n);
    bp_context *ctx = context_with("[backplane]\ndefault_backend = binary\n");
    bp_backend *cpu = NULL;
    BP(bp_backend_get(ctx, "binary", &cpu));
    for (int i = 0; i < n; i++) {
        bp_tensor *in[WIDE_MAX_IN] = {0};
        bp_status st = wide_inputs(&rows[i], cpu, 8, in);
        if (st == BP_OK)
            st = wide_call(&rows[i], in);
        if (st == BP_OK)
            printf("ok %s\n", rows[i].key);
        else
            printf("FAILED %s (line %d): %s\n", rows[i].key, rows[i].line, bp_last_error()), failed++;
        wide_release(in, rows[i].nin);
    }
    bp_context_destroy(ctx);
    free(rows);
    printf("%d of %d rows ran\n", n - failed, n);
    return failed ? 1 : 0;
}

/* ---- startup ---------------------------------------------------------------------------- */

static long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

typedef struct convstep { bp_tensor *x, *w; } convstep;
static void step_conv(void *p)
{
    convstep *c = p;
    bp_tensor *y = NULL;
    bp_window win = BP_WINDOW_INIT;
    win.pads[0] = win.pads[1] = win.pads[2] = win.pads[3] = 1;
    BP(bp_conv(c->x, c->w, NULL, &win, &y));
    bp_tensor_release(y);
}

/* --startup: in this fresh process, what opening the backend costs (time to
 * the first op's result, device memory in use, resident memory), and what the
 * first convolution costs on top (cuDNN opened, its handle made, the
 * algorithm chosen), as "startup.NAME value" lines. */
static int startup(void)
{
    const long rss0 = rss_bytes();
    const double t0 = bench_now();
    bp_context *ctx = context_with("[backplane]\ndefault_backend = cuda\n");
    BP(bp_backend_get(ctx, "cuda:0", &gpu));
    const double t1 = bench_now();
    int64_t one = 1;
    float v = 0;
    bp_tensor *a = NULL, *c = NULL;
    BP(bp_full(gpu, BP_F32, 1, &one, 1.0, &a));
    BP(bp_add(a, a, &c));
    BP(bp_tensor_to_host(c, &v, sizeof v));
    const double t2 = bench_now();
    size_t free_b = 0, total_b = 0;
    CU(cudaMemGetInfo(&free_b, &total_b));
    const long rss1 = rss_bytes();
    const int64_t xs[4] = {32, 64, 56, 56}, ws[4] = {64, 64, 3, 3};
    convstep cs;
    BP(bp_random_uniform(gpu, BP_F16, 4, xs, 1, 0, -1, 1, &cs.x));
    BP(bp_random_uniform(gpu, BP_F16, 4, ws, 2, 0, -1, 1, &cs.w));
    BP(bp_backend_synchronize(gpu));
    const double t3 = bench_now();
    step_conv(&cs);
    sync_bp();
    const double t4 = bench_now();
    step_conv(&cs);
    sync_bp();
    const double t5 = bench_now();
    printf("startup.open_s %.6f\n", t1 - t0);
    printf("startup.first_op_s %.6f\n", t2 - t0);
    printf("startup.device_used_bytes %zu\n", total_b - free_b);
    printf("startup.rss_bytes %ld\n", rss1 - (rss0 > 0 ? rss0 : 0));
    printf("startup.first_conv_s %.6f\n", t4 - t3);
    printf("startup.second_conv_s %.6f\n", t5 - t4);
    bp_tensor_release(a), bp_tensor_release(c);
    bp_tensor_release(cs.x), bp_tensor_release(cs.w);
    bp_context_destroy(ctx);
    return 0;
}

static void startup_table(const char *bpfile, const char *torch)
{
    static const struct { const char *key, *what; double scale; const char *unit; } k[] = {
        {"startup.first_op_s", "open + first op (s)", 1, "s"},
        {"startup.device_used_bytes", "device memory in use (MiB)", 1.0 / 1048576, "MiB"},
        {"startup.rss_bytes", "resident memory added (MiB)", 1.0 / 1048576, "MiB"},
        {"startup.first_conv_s", "first f16 conv (s)", 1, "s"},
        {"startup.second_conv_s", "second f16 conv (s)", 1, "s"},
    };
    printf("\nstartup (each side in a fresh process; PyTorch's open is its first CUDA op, "
           "after an import of %.2f s)\n", torch_time(torch, "startup.import_s"));
    printf("%-30s %12s %12s\n", "", "backplane", "PyTorch");
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        printf("%-30s %12.3f %12.3f\n", k[i].what, torch_time(bpfile, k[i].key) * k[i].scale,
               torch_time(torch, k[i].key) * k[i].scale);
}

static void usage(void)
{
    DIE("usage: bp_gpu_bench [--torch FILE] [--table FILE] [--no-classic] [--bp-startup FILE]\n"
        "       bp_gpu_bench --table FILE (--list | --dry-run)\n"
        "       bp_gpu_bench --startup");
}

int main(int argc, char **argv)
{
    const char *torch = NULL, *table = NULL, *bp_startup = NULL;
    bool list = false, dry = false, classic = true, start = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--torch") == 0 && i + 1 < argc)
            torch = argv[++i];
        else if (strcmp(argv[i], "--table") == 0 && i + 1 < argc)
            table = argv[++i];
        else if (strcmp(argv[i], "--bp-startup") == 0 && i + 1 < argc)
            bp_startup = argv[++i];
        else if (strcmp(argv[i], "--list") == 0)
            list = true;
        else if (strcmp(argv[i], "--dry-run") == 0)
            dry = true;
        else if (strcmp(argv[i], "--no-classic") == 0)
            classic = false;
        else if (strcmp(argv[i], "--startup") == 0)
            start = true;
        else {
            fprintf(stderr, "bp_gpu_bench: unknown argument '%s'\n", argv[i]);
            usage();
        }
    }
    if ((list || dry) && !table) {
        fprintf(stderr, "bp_gpu_bench: --list and --dry-run need --table FILE\n");
        usage();
    }
    if (list)
        return list_rows(table);
    if (dry)
        return dry_run(table);
    if (start)
        return startup();
    if (table) { /* a bad table stops here, before any time is spent */
        int n = 0;
        free(table_rows(table, &n));
    }
    /* keep the pool's memory between batches: bp_backend_synchronize would
     * otherwise return it (pool_keep_mb defaults to 0) */
    bp_context *ctx = context_with("[backplane]\ndefault_backend = cuda\n[backend.cuda]\n"
                                   "pool_keep_mb = 1048576\n");
    bp_context *ctx32 = context_with("[backplane]\ndefault_backend = cuda\n[backend.cuda]\n"
                                     "pool_keep_mb = 1048576\ntf32 = true\n");
    BP(bp_backend_get(ctx, "cuda:0", &gpu));
    BP(bp_backend_get(ctx32, "cuda:0", &gpu_tf32));
    CU(cudaSetDevice(0));
    CB(cublasCreate(&blas));
    /* as the plugin's handle: f16/bf16 split-K partial sums stay in f32 */
    CB(cublasSetMathMode(blas, (cublasMath_t)(CUBLAS_DEFAULT_MATH |
                                              CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    int rc = 0;
    if (classic) {
        printf("%-34s %13s  %-24s %10s  %6s  %6s  %s\n", "item", "backplane", "reference",
               "ref time", "ratio", "target", "verdict");
        bench_matmul(torch);
        bench_memory_bound(torch);
        bench_transfers();
        bench_overhead(torch);
    }
    if (table) {
        const size_t bytes = (size_t)1 << 30;
        const double copy_gbps = 2.0 * (double)bytes / copy_time(bytes) * 1e-9;
        printf("\ndevice-to-device copy: %.0f GB/s (read + write), the bandwidth rows' bound\n",
               copy_gbps);
        rc = bench_wide(table, torch, copy_gbps);
    }
    if (bp_startup)
        startup_table(bp_startup, torch);
    cublasDestroy(blas);
    bp_context_destroy(ctx32);
    bp_context_destroy(ctx);
    return rc;
}

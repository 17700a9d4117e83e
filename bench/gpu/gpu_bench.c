/* The cuda backend against its targets, measured side by side in
 * one run on one device, printed as one table (docs/gpu.md):
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
 * usage: bp_gpu_bench [--torch FILE]   (FILE: "name seconds" lines from
 * torch_bench.py; bench/gpu/run.sh does both). Each time is the best of three
 * batches of back-to-back calls, each batch at least 0.1 s, after a warm-up,
 * each batch ending in a synchronisation. "ratio" is the speed of backplane
 * relative to the reference for the same work (bandwidth for memory-bound
 * rows): above 1 is faster. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <backplane/backplane.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

static bp_backend *gpu;
static cublasHandle_t blas;

#define DIE(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), exit(1))
#define BP(x) do { bp_status s_ = (x); if (s_ != BP_OK) DIE("%s: %s", #x, bp_last_error()); } while (0)
#define CU(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) DIE("%s: %s", #x, cudaGetErrorString(e_)); } while (0)
#define CB(x) do { cublasStatus_t b_ = (x); if (b_ != CUBLAS_STATUS_SUCCESS) DIE("%s: %d", #x, (int)b_); } while (0)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- timing ----------------------------------------------------------------- */

typedef void (*step_fn)(void *arg);
static void sync_bp(void) { BP(bp_backend_synchronize(gpu)); }
static void sync_cuda(void) { CU(cudaDeviceSynchronize()); }

/* Seconds per call of fn(arg): the best of three batches. */
static double timeit(step_fn fn, void *arg, void (*sync)(void))
{
    fn(arg);
    sync();
    long reps = 1;
    for (;;) { /* grow the batch until it lasts 0.1 s */
        double t0 = now();
        for (long i = 0; i < reps; i++)
            fn(arg);
        sync();
        if (now() - t0 >= 0.1 || reps >= (1L << 24))
            break;
        reps *= 2;
    }
    double best = 1e30;
    for (int b = 0; b < 3; b++) {
        double t0 = now();
        for (long i = 0; i < reps; i++)
            fn(arg);
        sync();
        double t = (now() - t0) / (double)reps;
        best = t < best ? t : best;
    }
    return best;
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

int main(int argc, char **argv)
{
    const char *torch = argc == 3 && strcmp(argv[1], "--torch") == 0 ? argv[2] : NULL;
    if (argc != 1 && !torch)
        DIE("usage: bp_gpu_bench [--torch FILE]");
    /* keep the pool's memory between batches: bp_backend_synchronize would
     * otherwise return it (pool_keep_mb defaults to 0) */
    char ini[] = "/tmp/bp_gpu_bench_XXXXXX";
    int fd = mkstemp(ini);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        DIE("cannot write a config file in /tmp");
    fprintf(f, "[backplane]\ndefault_backend = cuda\n[backend.cuda]\npool_keep_mb = 1048576\n");
    fclose(f);
    bp_context *ctx = NULL;
    BP(bp_context_create(ini, &ctx));
    remove(ini);
    BP(bp_backend_get(ctx, "cuda:0", &gpu));
    CU(cudaSetDevice(0));
    CB(cublasCreate(&blas));
    /* as the plugin's handle: f16/bf16 split-K partial sums stay in f32 */
    CB(cublasSetMathMode(blas, (cublasMath_t)(CUBLAS_DEFAULT_MATH |
                                              CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    printf("%-34s %13s  %-24s %10s  %6s  %6s  %s\n", "item", "backplane", "reference", "ref time",
           "ratio", "target", "verdict");
    bench_matmul(torch);
    bench_memory_bound(torch);
    bench_transfers();
    bench_overhead(torch);
    cublasDestroy(blas);
    bp_context_destroy(ctx);
    return 0;
}

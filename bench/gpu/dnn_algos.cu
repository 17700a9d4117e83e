/* bench/gpu/dnn_algos.cu: which cuDNN forward algorithm each convolution
 * row of the wide table gets, and what every algorithm costs (docs/gpu.md).
 *
 * For each conv row of bench/gpu/ops.txt (ResNet-50's layers at batch 32)
 * in each layout (NCHW, as the cuda plugin hands cuDNN; NHWC, PyTorch's
 * channels_last) it prints the v7 heuristics' ranking (what the plugin
 * takes: the first algorithm that succeeds within its workspace limit) and
 * cuDNN's own measured time of every algorithm
 * (cudnnFindConvolutionForwardAlgorithmEx), so that a slow row can be told
 * apart as "the ranking picks a slow algorithm" or "every algorithm is slow
 * in this layout". It links cuDNN directly (a diagnostic, not the plugin,
 * which opens it at its first convolution).
 *
 *   dnn_algos TABLE            every conv row (not conv_transpose)
 *   dnn_algos TABLE KEY...     only these rows
 *
 * Inputs are random in [-1, 1) (never zeros: METHOD.md). TF32 is off for
 * f32 (FMA math), as the plugin's default; f16 and bf16 take tensor-op math
 * with an f32 compute type, as the plugin does. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                            \
    do {                                                                                 \
        cudaError_t e_ = (x);                                                            \
        if (e_ != cudaSuccess) {                                                         \
            fprintf(stderr, "dnn_algos: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), \
                    __LINE__);                                                           \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)
#define DK(x)                                                                            \
    do {                                                                                 \
        cudnnStatus_t s_ = (x);                                                          \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                \
            fprintf(stderr, "dnn_algos: %s: %s (line %d)\n", #x, cudnnGetErrorString(s_), \
                    __LINE__);                                                           \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

struct row {
    char key[64], dtype[8];
    int x[4], w[4], k[2], s[2], p[2];
};

static int dims(const char *t, int *d, int most)
{
    int n = 0;
    while (*t && n < most) {
        char *end;
        long v = strtol(t, &end, 10);
        if (end == t || v < 1)
            return -1;
        d[n++] = (int)v;
        t = end;
        if (*t == 'x')
            t++;
        else
            break;
    }
    return n;
}

static int pair(const char *line, const char *name, int *v, int dflt)
{
    v[0] = v[1] = dflt;
    const char *p = strstr(line, name);
    if (!p)
        return 0;
    int d[2];
    int n = dims(p + strlen(name), d, 2);
    if (n < 1)
        return -1;
    v[0] = d[0];
    v[1] = n == 2 ? d[1] : d[0];
    return 0;
}

/* The conv rows of the table (the others are skipped). */
static int read_rows(const char *path, row *rows, int most)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < most) {
        char key[64], fam[32], op[32], dt[8], shapes[256];
        if (line[0] == '#' || sscanf(line, "%63s %31s %31s %7s %255s", key, fam, op, dt, shapes) != 5)
            continue;
        if (strcmp(op, "conv") != 0 || strstr(line, "tf32=1"))
            continue;
        row *r = &rows[n];
        memset(r, 0, sizeof *r);
        snprintf(r->key, sizeof r->key, "%s", key);
        snprintf(r->dtype, sizeof r->dtype, "%s", dt);
        char *comma = strchr(shapes, ',');
        if (!comma)
            continue;
        *comma = 0;
        char *c2 = strchr(comma + 1, ',');
        if (c2)
            *c2 = 0;
        if (dims(shapes, r->x, 4) != 4 || dims(comma + 1, r->w, 4) != 4)
            continue;
        if (pair(line, " k=", r->k, 1) || pair(line, " s=", r->s, 1) || pair(line, " p=", r->p, 0))
            continue;
        n++;
    }
    fclose(f);
    return n;
}

__global__ void fill(unsigned short *h, size_t n, int bf, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned v = (unsigned)i * 2654435761u ^ seed;
        v ^= v >> 15;
        v *= 2246822519u;
        v ^= v >> 13;
        float f = (float)(v & 0xffffff) / 8388608.0f - 1.0f;
        if (bf) {
            __nv_bfloat16 b = __float2bfloat16(f);
            h[i] = *(unsigned short *)&b;
        } else {
            __half x = __float2half(f);
            h[i] = *(unsigned short *)&x;
        }
    }
}

__global__ void fill32(float *p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned v = (unsigned)i * 2654435761u ^ seed;
        v ^= v >> 15;
        v *= 2246822519u;
        v ^= v >> 13;
        p[i] = (float)(v & 0xffffff) / 8388608.0f - 1.0f;
    }
}

static const char *algo_name(int a)
{
    static const char *names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                  "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    return a >= 0 && a < 8 ? names[a] : "?";
}

static int one(cudnnHandle_t h, const row &r, cudnnTensorFormat_t fmt, void *ws, size_t ws_max)
{
    const bool f32 = strcmp(r.dtype, "f32") == 0, bf = strcmp(r.dtype, "bf16") == 0;
    const cudnnDataType_t dt = f32 ? CUDNN_DATA_FLOAT : bf ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
    const size_t es = f32 ? 4 : 2;
    const int N = r.x[0], C = r.x[1], H = r.x[2], W = r.x[3], M = r.w[0];
    const int Ho = (H + 2 * r.p[0] - r.k[0]) / r.s[0] + 1, Wo = (W + 2 * r.p[1] - r.k[1]) / r.s[1] + 1;
    const size_t nx = (size_t)N * C * H * W, nw = (size_t)M * r.w[1] * r.w[2] * r.w[3],
                 ny = (size_t)N * M * Ho * Wo;
    void *x, *w, *y;
    CK(cudaMalloc(&x, nx * es));
    CK(cudaMalloc(&w, nw * es));
    CK(cudaMalloc(&y, ny * es));
    if (f32) {
        fill32<<<1024, 256>>>((float *)x, nx, 1u);
        fill32<<<1024, 256>>>((float *)w, nw, 2u);
    } else {
        fill<<<1024, 256>>>((unsigned short *)x, nx, bf, 1u);
        fill<<<1024, 256>>>((unsigned short *)w, nw, bf, 2u);
    }
    CK(cudaGetLastError());
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    DK(cudnnCreateTensorDescriptor(&xd));
    DK(cudnnCreateTensorDescriptor(&yd));
    DK(cudnnCreateFilterDescriptor(&wd));
    DK(cudnnCreateConvolutionDescriptor(&cd));
    DK(cudnnSetTensor4dDescriptor(xd, fmt, dt, N, C, H, W));
    DK(cudnnSetTensor4dDescriptor(yd, fmt, dt, N, M, Ho, Wo));
    DK(cudnnSetFilter4dDescriptor(wd, dt, fmt, M, r.w[1], r.w[2], r.w[3]));
    DK(cudnnSetConvolution2dDescriptor(cd, r.p[0], r.p[1], r.s[0], r.s[1], 1, 1,
                                       CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    DK(cudnnSetConvolutionMathType(cd, f32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
    /* bytes that must move: x and w read, y written */
    const double mb = (double)(nx + nw + ny) * es / 1e6;
    const double gflop = 2.0 * ny * r.w[1] * r.w[2] * r.w[3] / 1e9;
    printf("%-24s %s  %.1f MB, %.1f GFLOP\n", r.key, fmt == CUDNN_TENSOR_NCHW ? "NCHW" : "NHWC", mb,
           gflop);
    cudnnConvolutionFwdAlgoPerf_t perf[16];
    int got = 0;
    DK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, 16, &got, perf));
    printf("  v7 ranking:");
    for (int j = 0; j < got; j++)
        if (perf[j].status == CUDNN_STATUS_SUCCESS)
            printf(" %s(m%d,%zuMB)", algo_name(perf[j].algo), (int)perf[j].mathType,
                   perf[j].memory >> 20);
    printf("\n");
    got = 0;
    cudnnStatus_t s = cudnnFindConvolutionForwardAlgorithmEx(h, xd, x, wd, w, cd, yd, y, 16, &got,
                                                             perf, ws, ws_max);
    if (s != CUDNN_STATUS_SUCCESS) {
        printf("  find: %s\n", cudnnGetErrorString(s));
    } else {
        printf("  measured:");
        for (int j = 0; j < got; j++)
            if (perf[j].status == CUDNN_STATUS_SUCCESS)
                printf(" %s(m%d) %.3f ms;", algo_name(perf[j].algo), (int)perf[j].mathType,
                       perf[j].time);
        printf("\n");
    }
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
    CK(cudaFree(x));
    CK(cudaFree(w));
    CK(cudaFree(y));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dnn_algos TABLE [KEY...]\n");
        return 2;
    }
    static row rows[256];
    const int n = read_rows(argv[1], rows, 256);
    cudnnHandle_t h;
    DK(cudnnCreate(&h));
    printf("cuDNN %zu (cudart %zu)\n", cudnnGetVersion(), cudnnGetCudartVersion());
    const size_t ws_max = (size_t)1 << 30;
    void *ws;
    CK(cudaMalloc(&ws, ws_max));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        bool want = argc == 2;
        for (int a = 2; a < argc; a++)
            want |= strcmp(argv[a], rows[i].key) == 0;
        if (!want)
            continue;
        bad |= one(h, rows[i], CUDNN_TENSOR_NCHW, ws, ws_max);
        bad |= one(h, rows[i], CUDNN_TENSOR_NHWC, ws, ws_max);
    }
    CK(cudaFree(ws));
    cudnnDestroy(h);
    return bad;
}

/* The cuda backend: private declarations shared by its .cu files.
 *
 * A buffer handle is a small host struct (bpcu_buf) holding the device
 * pointer, so zero-byte buffers still get unique handles and memory_info can
 * count bytes without asking the driver. Every op is queued on the device's
 * stream and returns at once; read() and synchronize() wait, and report any
 * error of the queued work there with CUDA's text.
 *
 * Kernels follow the binary backend's arithmetic exactly: the dtype.h and
 * philox.h helpers are compiled for the device too, f16/bf16 compute in f32
 * (math functions in f64) and round once, integers wrap, casts saturate. The
 * plugin is compiled with --fmad=false so a*b+c rounds twice, as in C. */
#ifndef BPCU_H
#define BPCU_H

#include <atomic>
#include <cstdint>
#include <mutex>
#include <type_traits>

/* plugin.h (dtype.h) first: its locals named `half` would shadow cuda_fp16.h's
 * type of that name (-Wshadow) if cuBLAS's headers came first. */
#include <backplane/cast.h>
#include <backplane/plugin.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "cc_check.h"

/* ---- state ---------------------------------------------------------------- */

typedef struct bpcu_buf {
    void *ptr;                     /* device memory; NULL for 0 bytes */
    size_t bytes;
} bpcu_buf;

#define BPCU_STAGE_BYTES ((size_t)8 << 20) /* each of the two pinned staging buffers */

typedef struct bpcu_device {
    const bp_host_api *host;
    int ordinal;                   /* CUDA device number */
    bool tf32;
    cudaStream_t stream;
    cudaMemPool_t pool;
    uint64_t cap;                  /* memory_fraction of the device's memory */
    std::atomic<uint64_t> used;
    cublasHandle_t blas;
    std::mutex blas_mu;            /* one cuBLAS call at a time on this handle */
    std::mutex stage_mu;           /* the staging buffers */
    void *stage[2];
    cudaEvent_t stage_done[2];     /* the last copy through stage[k] is done */
} bpcu_device;

/* Report an error detail through the host and return code. */
bp_status bpcu_fail(bpcu_device *d, bp_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* After queuing work: a launch error (or an earlier asynchronous one) as
 * BP_ERR_BACKEND naming what, else BP_OK. */
bp_status bpcu_check_launch(bpcu_device *d, const char *what);

/* Make the calling thread's current device d's. */
bp_status bpcu_enter(bpcu_device *d);

static inline char *bpcu_ptr(const bp_view *v)
{
    const bpcu_buf *b = (const bpcu_buf *)v->buffer;
    return b && b->ptr ? (char *)b->ptr + v->offset : NULL;
}

static inline int64_t bpcu_numel(const bp_view *v)
{
    int64_t n = 1;
    for (int32_t k = 0; k < v->rank; k++)
        n *= v->shape[k];
    return n;
}

/* Device scratch on d's stream (stream-ordered; free it the same way). */
bp_status bpcu_scratch(bpcu_device *d, size_t bytes, void **p);
void bpcu_scratch_free(bpcu_device *d, void *p);

/* ---- index walking ---------------------------------------------------------- */

#define BPCU_MAXV 4

/* Up to BPCU_MAXV views of one shape, with size-1 axes dropped and axes that
 * are contiguous for every view merged (as the binary backend's iterator).
 * Passed to kernels by value. */
typedef struct bpcu_ix {
    int32_t rank;
    int32_t dense;                 /* one axis, unit stride in every view */
    int64_t n;                     /* elements */
    int64_t shape[BP_MAX_RANK];
    int64_t strides[BPCU_MAXV][BP_MAX_RANK];
} bpcu_ix;

/* Collapse views[0..nv) (all of views[0]'s shape). */
bpcu_ix bpcu_collapse(int nv, const bp_view *const *views);

/* Element offsets (in elements) of linear index i (row-major) in each view. */
template <int NV>
__device__ __forceinline__ void bpcu_offsets(const bpcu_ix &ix, int64_t i, int64_t *off)
{
    if (ix.dense) {
#pragma unroll
        for (int v = 0; v < NV; v++)
            off[v] = i;
        return;
    }
#pragma unroll
    for (int v = 0; v < NV; v++)
        off[v] = 0;
    for (int32_t k = ix.rank - 1; k >= 0; k--) {
        int64_t s = ix.shape[k], c = i % s;
        i /= s;
#pragma unroll
        for (int v = 0; v < NV; v++)
            off[v] += c * ix.strides[v][k];
    }
}

/* Launch geometry for n elements, grid-stride loops. */
#define BPCU_THREADS 256
static inline unsigned bpcu_blocks(int64_t n)
{
    int64_t b = (n + BPCU_THREADS - 1) / BPCU_THREADS;
    if (b > (int64_t)1 << 20)
        b = (int64_t)1 << 20;
    return (unsigned)(b < 1 ? 1 : b);
}
#define BPCU_FOR(i, n)                                                                  \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);          \
         i += (int64_t)gridDim.x * blockDim.x)

/* ---- element types ------------------------------------------------------- */

/* f16 and bf16 storage, told apart by type. */
struct bpcu_h16 { uint16_t v; };
struct bpcu_b16 { uint16_t v; };

/* Float storage S: compute type C (f32 for f16/bf16/f32, f64 for f64), load,
 * store of a C, and store of a double rounded once to S (f16/bf16 through
 * bp_f64_to_f16/bf16, as the binary backend's F_F16 / bp_elem_store_f64: a plain
 * (float) cast first would round twice). */
template <class S> struct bpcu_ft;
template <> struct bpcu_ft<float> {
    typedef float C;
    static __device__ __forceinline__ float ld(float x) { return x; }
    static __device__ __forceinline__ float st(float c) { return c; }
    static __device__ __forceinline__ float std_(double d) { return (float)d; }
};
template <> struct bpcu_ft<double> {
    typedef double C;
    static __device__ __forceinline__ double ld(double x) { return x; }
    static __device__ __forceinline__ double st(double c) { return c; }
    static __device__ __forceinline__ double std_(double d) { return d; }
};
template <> struct bpcu_ft<bpcu_h16> {
    typedef float C;
    static __device__ __forceinline__ float ld(bpcu_h16 x) { return bp_f16_to_f32(x.v); }
    static __device__ __forceinline__ bpcu_h16 st(float c) { return bpcu_h16{bp_f32_to_f16(c)}; }
    static __device__ __forceinline__ bpcu_h16 std_(double d) { return bpcu_h16{bp_f64_to_f16(d)}; }
};
template <> struct bpcu_ft<bpcu_b16> {
    typedef float C;
    static __device__ __forceinline__ float ld(bpcu_b16 x) { return bp_bf16_to_f32(x.v); }
    static __device__ __forceinline__ bpcu_b16 st(float c) { return bpcu_b16{bp_f32_to_bf16(c)}; }
    static __device__ __forceinline__ bpcu_b16 std_(double d) { return bpcu_b16{bp_f64_to_bf16(d)}; }
};

/* Calls F::template run<T>(args...) with the storage type of dt. */
#define BPCU_DISPATCH_FLOAT(dt, CALL)                                                   \
    switch (dt) {                                                                       \
    case BP_F32: { typedef float T; CALL; } break;                                      \
    case BP_F64: { typedef double T; CALL; } break;                                     \
    case BP_F16: { typedef bpcu_h16 T; CALL; } break;                                   \
    case BP_BF16: { typedef bpcu_b16 T; CALL; } break;                                  \
    default: break;                                                                     \
    }
#define BPCU_DISPATCH_INT(dt, CALL)                                                     \
    switch (dt) {                                                                       \
    case BP_U8: { typedef uint8_t T; CALL; } break;                                     \
    case BP_I8: { typedef int8_t T; CALL; } break;                                      \
    case BP_I32: { typedef int32_t T; CALL; } break;                                    \
    case BP_I64: { typedef int64_t T; CALL; } break;                                    \
    default: break;                                                                     \
    }

/* ---- loads and stores with the cast rules: backplane/cast.h -------------- */
/* bp_elem_load_f64, bp_elem_store_f64, bp_elem_load_i64, bp_elem_store_i64,
 * compiled for the device too, so this backend casts exactly as the others. */

/* Integers keep the low bits of a 64-bit result (wrapping). */
static __device__ __forceinline__ void bpcu_st_wrap(bp_dtype dt, char *p, uint64_t u)
{
    switch (dt) {
    case BP_BOOL: *(uint8_t *)p = (uint8_t)(u != 0); break;
    case BP_U8: *(uint8_t *)p = (uint8_t)u; break;
    case BP_I8: *(int8_t *)p = (int8_t)(uint8_t)u; break;
    case BP_I32: *(int32_t *)p = (int32_t)(uint32_t)u; break;
    default: *(int64_t *)p = (int64_t)u; break;
    }
}

/* ---- the plugin entries (see plugin.h for each contract) ---------------------- */
bp_status bpcu_unary(void *dev, bp_op op, const bp_view *x, const bp_view *out);
bp_status bpcu_binary(void *dev, bp_op op, const bp_view *a, const bp_view *b, const bp_view *out);
bp_status bpcu_where(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
                     const bp_view *out);
bp_status bpcu_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out);
bp_status bpcu_fill(void *dev, const bp_view *out, const void *value);
bp_status bpcu_arange(void *dev, double start, double step, const bp_view *out);
bp_status bpcu_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                      const bp_view *out);
bp_status bpcu_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                      const bp_view *out);
bp_status bpcu_reduce(void *dev, bp_op op, const bp_view *x, int32_t n_reduce, const bp_view *out);
bp_status bpcu_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out);
bp_status bpcu_matmul(void *dev, const bp_view *a, const bp_view *b, const bp_view *out);

#endif

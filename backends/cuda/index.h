/* The cuda backend's index machinery: views of one shape collapsed on the
 * host (size-1 axes dropped, axes contiguous in every view merged, as the
 * binary backend's iterator), walked by the kernels, and the launch geometry
 * of the grid-stride loops. bpcu_collapse is plain C (index.c); the device
 * half is compiled only by nvcc. */
#ifndef BPCU_INDEX_H
#define BPCU_INDEX_H

#include <stdint.h>

#include <backplane/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BPCU_MAXV 4

/* Up to BPCU_MAXV views of one shape, collapsed. Passed to kernels by value. */
typedef struct bpcu_ix {
    int32_t rank;
    int32_t dense;                 /* one axis, unit stride in every view */
    int64_t n;                     /* elements */
    int64_t shape[BP_MAX_RANK];
    int64_t strides[BPCU_MAXV][BP_MAX_RANK];
} bpcu_ix;

/* Collapse views[0..nv) (all of views[0]'s shape). */
bpcu_ix bpcu_collapse(int nv, const bp_view *const *views);

static inline int64_t bpcu_numel(const bp_view *v)
{
    int64_t n = 1;
    for (int32_t k = 0; k < v->rank; k++)
        n *= v->shape[k];
    return n;
}

#ifdef __cplusplus
}
#endif

/* Launch geometry for n elements, grid-stride loops. */
#define BPCU_THREADS 256
static inline unsigned bpcu_blocks(int64_t n)
{
    int64_t b = (n + BPCU_THREADS - 1) / BPCU_THREADS;
    if (b > (int64_t)1 << 20)
        b = (int64_t)1 << 20;
    return (unsigned)(b < 1 ? 1 : b);
}

#ifdef __CUDACC__
#define BPCU_FOR(i, n)                                                                  \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);          \
         i += (int64_t)gridDim.x * blockDim.x)

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
#endif

#endif

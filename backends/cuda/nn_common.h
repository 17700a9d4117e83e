/* What the nn ops of nn.h (conv.cu, conv_transpose.cu, pool.cu,
 * lrn.cu, norm.cu, loss.cu, resize.cu) share (nvcc only): views as kernels
 * read them, element by element through cast.h's bp_elem_load_f64 /
 * bp_elem_store_f64 (the very functions the binary backend's kernels use,
 * so every dtype loads and rounds as the reference does), the window
 * geometry of the window ops, and a block-wide double sum.
 *
 * The arithmetic follows backends/kernels/nn_*.c: floats in double, rounded
 * once into the output; the one exception is the convolutions' products,
 * which cuBLAS sums (conv_gemm.cu). Kernels address every element through
 * its view's strides, so they hold for any view the core hands over (dense,
 * permuted as the losses' scores, broadcast as layer_norm's scale). */
#ifndef BPCU_NN_COMMON_H
#define BPCU_NN_COMMON_H

#include "op.h"

/* ---- views --------------------------------------------------------------------------- */

/* A view for a kernel, passed by value: the address of element (0, ...),
 * the dtype, and the geometry. p is NULL for a view not given. */
typedef struct bpcu_nv {
    char *p;
    bp_dtype dt;
    int32_t es;                    /* bytes per element */
    int32_t rank;
    int64_t shape[BP_MAX_RANK];
    int64_t strides[BP_MAX_RANK];  /* in elements */
} bpcu_nv;

static inline bpcu_nv bpcu_nv_of(const bp_view *v)
{
    bpcu_nv n;
    memset(&n, 0, sizeof n);
    n.dt = BP_F32;
    if (!v)
        return n;
    n.p = bpcu_ptr(v);
    n.dt = v->dtype;
    n.es = (int32_t)bp_dtype_size(v->dtype);
    n.rank = v->rank;
    for (int32_t k = 0; k < v->rank; k++) {
        n.shape[k] = v->shape[k];
        n.strides[k] = v->strides[k];
    }
    return n;
}

/* The element offset (in elements) of v's row-major position k. */
static __device__ __forceinline__ int64_t bpcu_nv_off(const bpcu_nv &v, int64_t k)
{
    int64_t off = 0;
    for (int32_t d = v.rank - 1; d >= 0; d--) {
        off += (k % v.shape[d]) * v.strides[d];
        k /= v.shape[d];
    }
    return off;
}

/* The element at element offset off, as a double / stored from a double
 * rounded once (the cast rules). */
static __device__ __forceinline__ double bpcu_nv_ld(const bpcu_nv &v, int64_t off)
{
    return bp_elem_load_f64(v.dt, v.p + off * v.es);
}
static __device__ __forceinline__ void bpcu_nv_st(const bpcu_nv &v, int64_t off, double d)
{
    bp_elem_store_f64(v.dt, v.p + off * v.es, d);
}

/* ---- windows ------------------------------------------------------------------------- */

/* A window op's geometry (opcodes.h: p.i[0..15)) over x's s = rank - 2
 * spatial axes, padded to three at the front as backends/binary's
 * bpk_window (missing axes: extent 1, kernel 1, stride 1, dilation 1, no
 * padding, stride 0 in the views), and the strides of x's and y's (N, C)
 * axes. */
typedef struct bpcu_win {
    int64_t in[3], out[3];         /* x's and y's spatial extents */
    int64_t k[3], st[3], dl[3];
    int64_t pb[3], pe[3];          /* padding before / after (conv_transpose: may be < 0) */
    int64_t xs[3], ys[3];          /* x's and y's spatial strides */
    int64_t xn, xc, yn, yc;        /* x's and y's strides of N and C */
    int64_t N, C, M;               /* x's N and C, y's channels */
} bpcu_win;

static inline bpcu_win bpcu_win_of(const bp_op_params *p, const bp_view *x, const bp_view *y)
{
    bpcu_win g;
    memset(&g, 0, sizeof g);
    const int32_t s = x->rank - 2;
    for (int32_t a = 0; a < 3; a++) {
        const int32_t j = a - (3 - s); /* the spatial axis at position a, or < 0 */
        const bool on = j >= 0;
        g.in[a] = on ? x->shape[2 + j] : 1;
        g.out[a] = on ? y->shape[2 + j] : 1;
        g.k[a] = on ? p->i[j] : 1;
        g.st[a] = on ? p->i[3 + j] : 1;
        g.dl[a] = on ? p->i[6 + j] : 1;
        g.pb[a] = on ? p->i[9 + j] : 0;
        g.pe[a] = on ? p->i[12 + j] : 0;
        g.xs[a] = on ? x->strides[2 + j] : 0;
        g.ys[a] = on ? y->strides[2 + j] : 0;
    }
    g.xn = x->strides[0], g.xc = x->strides[1];
    g.yn = y->strides[0], g.yc = y->strides[1];
    g.N = x->shape[0], g.C = x->shape[1], g.M = y->shape[1];
    return g;
}

static inline int64_t bpcu_win_numel(const int64_t *e) { return e[0] * e[1] * e[2]; }

/* Row-major position i of a 3-D extent e, as coordinates. */
static __device__ __forceinline__ void bpcu_win_coords(const int64_t *e, int64_t i, int64_t *c)
{
    c[2] = i % e[2];
    c[1] = i / e[2] % e[1];
    c[0] = i / (e[1] * e[2]);
}

/* ---- a block's sum ------------------------------------------------------------------- */

/* The sum of v over the block, returned to every thread; every thread of
 * the block calls it (blockDim.x a multiple of 32). The warps' partial
 * sums are added in warp order. */
static __device__ double bpcu_block_sum(double v)
{
    __shared__ double part[32];
    for (int by = 16; by > 0; by >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, by);
    __syncthreads(); /* part may still be read from the previous call */
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads();
    double s = 0;
    for (unsigned w = 0; w < (blockDim.x >> 5); w++)
        s += part[w];
    return s;
}

/* Blocks for a loop of n units, a block each (grid-stride beyond the cap). */
static inline unsigned bpcu_unit_blocks(int64_t n)
{
    return (unsigned)(n < 1 ? 1 : n > ((int64_t)1 << 20) ? ((int64_t)1 << 20) : n);
}

/* ---- the convolutions' products: conv_gemm.cu ----------------------------------------- */

/* The accumulator's element size for inputs of dtype dt: f64 for f64, f32
 * for the others. */
static inline size_t bpcu_conv_acc_size(bp_dtype dt) { return dt == BP_F64 ? 8 : 4; }

/* For b < batch: C_b (m x n) = op(A_b) op(B_b), column-major as cuBLAS,
 * A_b = a + b sa, B_b = b + b sb, C_b = c + b sc (in elements); a and b of
 * dtype dt, c in the accumulator type. k = 0 zeroes batch sc elements of c. */
bp_status bpcu_conv_gemm(bpcu_device *d, bp_dtype dt, cublasOperation_t opa,
                         cublasOperation_t opb, int64_t m, int64_t n, int64_t k, const void *a,
                         int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb, void *c,
                         int64_t ldc, int64_t sc, int64_t batch);

/* y[n, m, ...] = bias[m] for every element of y (f32, f16 or bf16; y
 * dense): the bias that cuDNN's or cuBLAS's beta = 1 then adds the
 * convolution to, so that y is rounded once. */
cudaError_t bpcu_conv_bias_fill(bpcu_device *d, const bp_view *y, const bp_view *bias);

/* Whether v is dense and row-major (size-1 axes aside). */
bool bpcu_conv_dense(const bp_view *v);

/* *p: v's elements as one dense row-major block: v's own memory when it is
 * dense, else a copy in scratch (buf->ptr; free it with bpcu_scratch_free). */
bp_status bpcu_conv_operand(bpcu_device *d, const bp_view *v, bpcu_buf *buf, bp_view *dense,
                            const char **p);

#endif

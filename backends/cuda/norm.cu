/* The normalisations, in double as backends/kernels/nn_norm.c, rounded once
 * into the output; variances are the population ones:
 *   batch_norm     (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c]:
 *                  a thread per element
 *   instance_norm  the same with each (n, c) plane's own mean and variance:
 *                  a block per plane, two passes (the mean, then the
 *                  squared deviations from it), then the writes
 *   layer_norm     over each row of the p.i[0] trailing axes, a block per
 *                  row as instance_norm; the row's mean and 1 / sqrt(variance
 *                  + eps) stored when asked (out[1], out[2]: the leading
 *                  axes, f32 for f16/bf16 x, as the core allocates them)
 *   rms_norm       x / sqrt(mean(x^2) + eps) * scale (scale optional)
 * p.f[0] epsilon. The block sums add each thread's strided partial sum, then
 * the warps' (nn_common.h): another order than the reference's serial loop,
 * within the norm tolerance of conform/tolerances.txt.
 * Dense views take the fast paths below (the same arithmetic); the kernels
 * above keep every other view. */
#include "elem_kernels.h"
#include "nn_common.h"

#define NORM_THREADS 256

/* ---- batch_norm ------------------------------------------------------------------------ */

typedef struct bn_args {
    bpcu_nv x, y, scale, bias, mean, var;
    int64_t C, S;                  /* channels, elements per (n, c) plane */
    double eps;
} bn_args;

__global__ void bpcu_k_batch_norm(bn_args a, int64_t total)
{
    BPCU_FOR(e, total) {
        const int64_t c = e / a.S % a.C;
        const double sc = bpcu_nv_ld(a.scale, c * a.scale.strides[0]);
        const double b = bpcu_nv_ld(a.bias, c * a.bias.strides[0]);
        const double m = bpcu_nv_ld(a.mean, c * a.mean.strides[0]);
        const double r = 1.0 / sqrt(bpcu_nv_ld(a.var, c * a.var.strides[0]) + a.eps);
        const double v = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, e));
        bpcu_nv_st(a.y, bpcu_nv_off(a.y, e), (v - m) * r * sc + b);
    }
}

/* ---- over groups of elements: instance_norm (planes), layer_norm, rms_norm (rows) ---- */

/* Group u is the elements [u L, u L + L) of x's row-major order. */
typedef struct group_args {
    bpcu_nv x, y, scale, bias, mean, inv_std; /* scale ... inv_std: p NULL when absent */
    int64_t groups, L;
    int64_t C;                     /* instance_norm: scale and bias are per channel u % C */
    bool instance, rms;
    double eps;
} group_args;

__global__ void bpcu_k_group_norm(group_args a)
{
    for (int64_t u = blockIdx.x; u < a.groups; u += gridDim.x) { /* uniform across the block */
        const int64_t first = u * a.L;
        double m = 0, inv;
        if (a.rms) {
            double q = 0;
            for (int64_t i = threadIdx.x; i < a.L; i += blockDim.x) {
                const double v = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + i));
                q += v * v;
            }
            q = bpcu_block_sum(q);
            inv = 1.0 / sqrt(q / (double)a.L + a.eps);
        } else {
            double s = 0;
            for (int64_t i = threadIdx.x; i < a.L; i += blockDim.x)
                s += bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + i));
            m = bpcu_block_sum(s) / (double)a.L;
            double q = 0;
            for (int64_t i = threadIdx.x; i < a.L; i += blockDim.x) {
                const double dv = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + i)) - m;
                q += dv * dv;
            }
            inv = 1.0 / sqrt(bpcu_block_sum(q) / (double)a.L + a.eps);
        }
        if (a.instance) {
            const int64_t c = u % a.C;
            const double sc = bpcu_nv_ld(a.scale, c * a.scale.strides[0]);
            const double b = bpcu_nv_ld(a.bias, c * a.bias.strides[0]);
            for (int64_t i = threadIdx.x; i < a.L; i += blockDim.x) {
                const double v = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, first + i));
                bpcu_nv_st(a.y, bpcu_nv_off(a.y, first + i), (v - m) * inv * sc + b);
            }
        } else {
            for (int64_t i = threadIdx.x; i < a.L; i += blockDim.x) {
                const int64_t k = first + i;
                const double v = bpcu_nv_ld(a.x, bpcu_nv_off(a.x, k));
                const double sc = a.scale.p ? bpcu_nv_ld(a.scale, bpcu_nv_off(a.scale, k)) : 1.0;
                const double b = a.bias.p ? bpcu_nv_ld(a.bias, bpcu_nv_off(a.bias, k)) : 0.0;
                bpcu_nv_st(a.y, bpcu_nv_off(a.y, k), (v - m) * inv * sc + b);
            }
            if (threadIdx.x == 0 && a.mean.p)
                bpcu_nv_st(a.mean, bpcu_nv_off(a.mean, u), m);
            if (threadIdx.x == 0 && a.inv_std.p)
                bpcu_nv_st(a.inv_std, bpcu_nv_off(a.inv_std, u), inv);
        }
    }
}

/* ---- the fast paths: dense rows and planes, typed loads in 16-byte packs ----------------
 * The same arithmetic, element for element, as the kernels above (in
 * double, rounded once); only the data movement differs. */

/* layer_norm and rms_norm over dense rows of L elements (x and y row-major,
 * scale and bias absent or one row of L broadcast over the rows): a block
 * per row keeps it, as the compute type, in shared memory, so that x is
 * read from device memory once (in packs of V) and the statistics' two
 * passes (the mean, then the squared deviations from it) and the writes
 * read shared memory. Each thread reads back only the elements it loaded. */
template <class S> struct row_norm_args {
    const S *x, *scale, *bias;     /* scale, bias: NULL when absent */
    S *y;
    bpcu_nv mean, inv_std;         /* p NULL when not asked */
    int64_t rows, L;
    double eps;
    bool rms, vec;                 /* vec: rows, x, y, scale and bias aligned to 16 bytes */
};

template <class S> __global__ void bpcu_k_row_norm(row_norm_args<S> a)
{
    typedef bpcu_ft<S> F;
    typedef typename F::C C;
    constexpr int V = 16 / sizeof(S);
    extern __shared__ __align__(16) unsigned char bpcu_norm_raw[];
    C *v = (C *)bpcu_norm_raw;
    const int64_t np = a.vec ? a.L / V : 0, done = np * V;
    for (int64_t u = blockIdx.x; u < a.rows; u += gridDim.x) { /* uniform across the block */
        const S *px = a.x + u * a.L;
        S *py = a.y + u * a.L;
        double s = 0;
#pragma unroll 4
        for (int64_t p = threadIdx.x; p < np; p += blockDim.x) { /* loads in flight together */
            const bpcu_pack<S, V> pk = bpcu_pack<S, V>::load(px + p * V);
#pragma unroll
            for (int k = 0; k < V; k++) {
                const C c = (C)F::ld(pk.v[k]);
                v[p * V + k] = c;
                s += a.rms ? (double)c * (double)c : (double)c;
            }
        }
        for (int64_t i = done + threadIdx.x; i < a.L; i += blockDim.x) {
            const C c = (C)F::ld(px[i]);
            v[i] = c;
            s += a.rms ? (double)c * (double)c : (double)c;
        }
        s = bpcu_block_sum(s);
        double m = 0, inv;
        if (a.rms) {
            inv = 1.0 / sqrt(s / (double)a.L + a.eps);
        } else {
            m = s / (double)a.L;
            double q = 0;
            for (int64_t p = threadIdx.x; p < np; p += blockDim.x)
#pragma unroll
                for (int k = 0; k < V; k++) {
                    const double dv = (double)v[p * V + k] - m;
                    q += dv * dv;
                }
            for (int64_t i = done + threadIdx.x; i < a.L; i += blockDim.x) {
                const double dv = (double)v[i] - m;
                q += dv * dv;
            }
            inv = 1.0 / sqrt(bpcu_block_sum(q) / (double)a.L + a.eps);
        }
        for (int64_t p = threadIdx.x; p < np; p += blockDim.x) {
            bpcu_pack<S, V> sc, bi, o;
            if (a.scale)
                sc = bpcu_pack<S, V>::load(a.scale + p * V);
            if (a.bias)
                bi = bpcu_pack<S, V>::load(a.bias + p * V);
#pragma unroll
            for (int k = 0; k < V; k++) {
                const double scv = a.scale ? (double)F::ld(sc.v[k]) : 1.0;
                const double bv = a.bias ? (double)F::ld(bi.v[k]) : 0.0;
                o.v[k] = F::std_(((double)v[p * V + k] - m) * inv * scv + bv);
            }
            o.store(py + p * V);
        }
        for (int64_t i = done + threadIdx.x; i < a.L; i += blockDim.x) {
            const double scv = a.scale ? (double)F::ld(a.scale[i]) : 1.0;
            const double bv = a.bias ? (double)F::ld(a.bias[i]) : 0.0;
            py[i] = F::std_(((double)v[i] - m) * inv * scv + bv);
        }
        if (threadIdx.x == 0 && a.mean.p)
            bpcu_nv_st(a.mean, bpcu_nv_off(a.mean, u), m);
        if (threadIdx.x == 0 && a.inv_std.p)
            bpcu_nv_st(a.inv_std, bpcu_nv_off(a.inv_std, u), inv);
    }
}

/* A scale or bias view of x's shape (as the core hands them: x's rank) that
 * is one dense row of the last L elements broadcast over the leading axes
 * (stride 0), or absent. */
static bool one_row(const bp_view *v, int64_t L, int32_t lead, int32_t rank)
{
    if (!v)
        return true;
    if (v->rank != rank || v->dtype != BP_F32 && v->dtype != BP_F64 && v->dtype != BP_F16 && v->dtype != BP_BF16)
        return false;
    for (int32_t k = 0; k < lead; k++)
        if (v->shape[k] != 1 && v->strides[k] != 0)
            return false;
    int64_t expect = 1;
    for (int32_t k = v->rank - 1; k >= lead; k--) {
        if (v->shape[k] != 1 && v->strides[k] != expect)
            return false;
        expect *= v->shape[k];
    }
    return expect == L;
}

template <class S>
static bool launch_row_norm(bpcu_device *d, const bpcu_opcall *c, int64_t rows, int64_t L,
                            cudaError_t *e)
{
    const bp_view *x = c->in[0], *y = c->out[0];
    const bool rms = c->op == BP_OP_RMS_NORM;
    const bp_view *scale = c->in[1], *bias = rms ? NULL : c->in[2];
    const int32_t lead = x->rank - (int32_t)c->p.i[0];
    const size_t smem = (size_t)L * sizeof(typename bpcu_ft<S>::C);
    if (rows < 1 || L < 1 || rows > 0x7fffffff || !bpcu_conv_dense(x) || !bpcu_conv_dense(y) ||
        !one_row(scale, L, lead, x->rank) || !one_row(bias, L, lead, x->rank) ||
        (scale && scale->dtype != x->dtype) || (bias && bias->dtype != x->dtype) ||
        smem + 1024 > (size_t)d->smem_optin)
        return false;
    row_norm_args<S> a;
    memset(&a, 0, sizeof a);
    a.x = (const S *)bpcu_ptr(x), a.y = (S *)bpcu_ptr(y);
    a.scale = scale ? (const S *)bpcu_ptr(scale) : NULL;
    a.bias = bias ? (const S *)bpcu_ptr(bias) : NULL;
    a.mean = bpcu_nv_of(rms ? NULL : c->out[1]);
    a.inv_std = bpcu_nv_of(rms ? NULL : c->out[2]);
    a.rows = rows, a.L = L, a.eps = c->p.f[0], a.rms = rms;
    constexpr int V = 16 / sizeof(S);
    a.vec = L % V == 0 && (uintptr_t)a.x % 16 == 0 && (uintptr_t)a.y % 16 == 0 &&
            (uintptr_t)a.scale % 16 == 0 && (uintptr_t)a.bias % 16 == 0;
    *e = cudaSuccess;
    if (smem > 48 * 1024)
        *e = cudaFuncSetAttribute(bpcu_k_row_norm<S>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem);
    const unsigned threads = L >= 8192 ? 512 : L >= 1024 ? 256 : 128;
    if (*e == cudaSuccess)
        *e = bpcu_launch(d->stream, bpcu_unit_blocks(rows), threads, smem, bpcu_k_row_norm<S>, a);
    return true;
}

/* batch_norm of a dense x (and y): blocks of y walk the (n, c) planes, x's
 * threads the plane's elements in packs; the channel's four statistics are
 * read once per plane. */
template <class S> struct plane_bn_args {
    const S *x;
    S *y;
    bpcu_nv scale, bias, mean, var;
    int64_t planes, C, S_;
    double eps;
    bool vec;
};

template <class S> __global__ void bpcu_k_batch_norm_planes(plane_bn_args<S> a)
{
    typedef bpcu_ft<S> F;
    constexpr int V = 16 / sizeof(S);
    const int64_t np = a.vec ? a.S_ / V : 0, done = np * V;
    for (int64_t u = blockIdx.y; u < a.planes; u += gridDim.y) {
        const int64_t c = u % a.C;
        const double sc = bpcu_nv_ld(a.scale, c * a.scale.strides[0]);
        const double b = bpcu_nv_ld(a.bias, c * a.bias.strides[0]);
        const double m = bpcu_nv_ld(a.mean, c * a.mean.strides[0]);
        const double r = 1.0 / sqrt(bpcu_nv_ld(a.var, c * a.var.strides[0]) + a.eps);
        const S *px = a.x + u * a.S_;
        S *py = a.y + u * a.S_;
        const int64_t t0 = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
        const int64_t nt = (int64_t)gridDim.x * blockDim.x;
        for (int64_t p = t0; p < np; p += nt) {
            const bpcu_pack<S, V> pk = bpcu_pack<S, V>::load(px + p * V);
            bpcu_pack<S, V> o;
#pragma unroll
            for (int k = 0; k < V; k++)
                o.v[k] = F::std_(((double)F::ld(pk.v[k]) - m) * r * sc + b);
            o.store(py + p * V);
        }
        for (int64_t i = done + t0; i < a.S_; i += nt)
            py[i] = F::std_(((double)F::ld(px[i]) - m) * r * sc + b);
    }
}

template <class S>
static bool launch_batch_norm_planes(bpcu_device *d, const bpcu_opcall *c, cudaError_t *e)
{
    const bp_view *x = c->in[0], *y = c->out[0];
    if (!bpcu_conv_dense(x) || !bpcu_conv_dense(y) || y->dtype != x->dtype)
        return false;
    plane_bn_args<S> a;
    memset(&a, 0, sizeof a);
    a.x = (const S *)bpcu_ptr(x), a.y = (S *)bpcu_ptr(y);
    a.scale = bpcu_nv_of(c->in[1]), a.bias = bpcu_nv_of(c->in[2]);
    a.mean = bpcu_nv_of(c->in[3]), a.var = bpcu_nv_of(c->in[4]);
    a.C = x->shape[1];
    a.planes = x->shape[0] * a.C;
    a.S_ = bpcu_numel(x) / a.planes;
    a.eps = c->p.f[0];
    constexpr int V = 16 / sizeof(S);
    a.vec = a.S_ % V == 0 && (uintptr_t)a.x % 16 == 0 && (uintptr_t)a.y % 16 == 0;
    const int64_t packs = a.vec ? a.S_ / V : a.S_;
    int64_t bx = (packs + 255) / 256, by = a.planes;
    bx = bx < 1 ? 1 : bx > 1024 ? 1024 : bx;
    by = by > 65535 ? 65535 : by;
    *e = bpcu_launch(d->stream, dim3((unsigned)bx, (unsigned)by), 256, 0,
                     bpcu_k_batch_norm_planes<S>, a);
    return true;
}

bp_status bpcu_nn_norm(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *y = c->out[0];
    const bool channels = c->op == BP_OP_BATCH_NORM || c->op == BP_OP_INSTANCE_NORM;
    const int32_t min_rank = c->op == BP_OP_INSTANCE_NORM ? 3 : channels ? 2 : 1;
    if (x->rank < min_rank || y->rank != x->rank ||
        (!channels && (c->p.i[0] < 0 || c->p.i[0] > x->rank)))
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: %s: x of rank %d is not what "
                         "opcodes.h describes", bp_op_name(c->op), (int)x->rank);
    const int64_t total = bpcu_numel(x);
    if (total == 0 && channels)
        return BP_OK;
    cudaError_t e;
    if (c->op == BP_OP_BATCH_NORM) {
        bn_args a;
        a.x = bpcu_nv_of(x), a.y = bpcu_nv_of(y);
        a.scale = bpcu_nv_of(c->in[1]), a.bias = bpcu_nv_of(c->in[2]);
        a.mean = bpcu_nv_of(c->in[3]), a.var = bpcu_nv_of(c->in[4]);
        a.C = x->shape[1];
        a.S = total / (x->shape[0] * a.C);
        a.eps = c->p.f[0];
        bool fast = false;
        BPCU_DISPATCH_FLOAT(x->dtype, fast = launch_batch_norm_planes<T>(d, c, &e));
        if (fast)
            return bpcu_launched(d, e, "batch_norm kernel");
        e = bpcu_launch(d->stream, bpcu_blocks(total), BPCU_THREADS, 0, bpcu_k_batch_norm, a,
                        total);
        return bpcu_launched(d, e, "batch_norm kernel");
    }
    group_args a;
    memset(&a, 0, sizeof a);
    a.x = bpcu_nv_of(x), a.y = bpcu_nv_of(y);
    a.scale = bpcu_nv_of(c->in[1]);
    a.eps = c->p.f[0];
    a.instance = c->op == BP_OP_INSTANCE_NORM;
    a.rms = c->op == BP_OP_RMS_NORM;
    if (a.instance) {
        a.bias = bpcu_nv_of(c->in[2]);
        a.C = x->shape[1];
        a.groups = x->shape[0] * x->shape[1];
        a.L = total / a.groups;
    } else {
        if (!a.rms) {
            a.bias = bpcu_nv_of(c->in[2]);
            a.mean = bpcu_nv_of(c->out[1]);
            a.inv_std = bpcu_nv_of(c->out[2]);
        }
        /* rows of L elements; L = 0 still stores each row's statistics
         * (NaN, as the reference's 0 / 0) */
        a.groups = 1, a.L = 1;
        for (int32_t k = 0; k < x->rank; k++)
            *(k < x->rank - (int32_t)c->p.i[0] ? &a.groups : &a.L) *= x->shape[k];
        if (a.groups == 0)
            return BP_OK;
        bool fast = false;
        BPCU_DISPATCH_FLOAT(x->dtype, fast = launch_row_norm<T>(d, c, a.groups, a.L, &e));
        if (fast)
            return bpcu_launched(d, e, "normalisation kernel");
    }
    e = bpcu_launch(d->stream, bpcu_unit_blocks(a.groups), NORM_THREADS, 0, bpcu_k_group_norm, a);
    return bpcu_launched(d, e, "normalisation kernel");
}

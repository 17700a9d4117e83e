/* CUMSUM / CUMPROD along the last axis (the core moves the axis there):
 * p.i[0] exclusive (the first output is the identity, 0 or 1), p.i[1]
 * reverse (from the end). Floats accumulate in double and each output is
 * rounded once to its dtype; integers in 64 bits, wrapping (ops.h).
 *
 * Two layouts, each row independent:
 *   serial  a thread per row, in order: short rows, and rows adjacent in
 *           memory (a scan over a leading axis, as a state-space model's
 *           (batch, length, channels) over length), whose loads coalesce
 *           across the threads, when there are enough of them to keep the
 *           device busy (a few long adjacent rows, as a (1e8, 2) cumsum
 *           over axis 0, would each be one thread walking the whole row);
 *   block   a block per row (rows looped over a capped grid), 256 elements
 *           a tile, scanned with CUB's BlockScan and carried from tile to
 *           tile by its prefix callback.
 * Float sums are associated differently by the block layout than by a
 * serial loop: in double, before the one rounding to the output. */
#include "op.h"

/* after op.h: dtype.h's locals named half must come before cuda_fp16.h's
 * type of that name (bpcu.h) */
#include <cub/block/block_scan.cuh>

#define SCAN_BLOCK 256
#define SCAN_SERIAL_MAX 64 /* rows up to this long are scanned by one thread */
/* adjacent rows are scanned a thread each from this many on (a guess, not
 * measured: a few warps per SM of a large GPU; docs/cuda.md) */
#define SCAN_ADJACENT_MIN_ROWS 4096

typedef struct bpcu_scan_args {
    bpcu_rows xr, orow;            /* the rows of x and of out */
    int64_t n, sx, so;             /* row length, strides along it */
    bool prod, exclusive, reverse;
} bpcu_scan_args;

/* Storage S's accumulator: double for floats, 64-bit unsigned (wrapping)
 * for integers. */
template <class S, bool FLOAT = !std::is_integral<S>::value> struct scan_acc;
template <class S> struct scan_acc<S, true> {
    typedef double A;
    static __device__ __forceinline__ A ld(S v) { return (double)bpcu_ft<S>::ld(v); }
    static __device__ __forceinline__ S st(A a) { return bpcu_ft<S>::std_(a); }
};
template <class S> struct scan_acc<S, false> {
    typedef unsigned long long A;
    typedef typename std::make_unsigned<S>::type U;
    static __device__ __forceinline__ A ld(S v) { return (A)(long long)v; }
    static __device__ __forceinline__ S st(A a) { return (S)(U)a; }
};

template <class A> struct scan_op {
    bool prod;
    __device__ __forceinline__ A operator()(const A &x, const A &y) const
    {
        return prod ? (A)(x * y) : (A)(x + y);
    }
};

/* The running total of the tiles before, handed to BlockScan as each
 * tile's prefix (every lane of warp 0 keeps the same copy). */
template <class A> struct scan_prefix {
    A running;
    scan_op<A> op;
    __device__ A operator()(A tile_total)
    {
        A before = running;
        running = op(running, tile_total);
        return before;
    }
};

template <class S>
__global__ void bpcu_k_scan_serial(bpcu_scan_args a, const S *x, S *out)
{
    typedef scan_acc<S> K;
    typedef typename K::A A;
    scan_op<A> op = {a.prod};
    BPCU_FOR(r, a.xr.count) {
        const S *px = x + bpcu_row_off(a.xr, r);
        S *po = out + bpcu_row_off(a.orow, r);
        A acc = a.prod ? (A)1 : (A)0;
        for (int64_t t = 0; t < a.n; t++) {
            int64_t j = a.reverse ? a.n - 1 - t : t;
            A v = K::ld(px[j * a.sx]);
            if (a.exclusive) {
                po[j * a.so] = K::st(acc);
                acc = op(acc, v);
            } else {
                acc = op(acc, v);
                po[j * a.so] = K::st(acc);
            }
        }
    }
}

template <class S>
__global__ void __launch_bounds__(SCAN_BLOCK) bpcu_k_scan_block(bpcu_scan_args a, const S *x, S *out)
{
    typedef scan_acc<S> K;
    typedef typename K::A A;
    typedef cub::BlockScan<A, SCAN_BLOCK> BlockScan;
    __shared__ typename BlockScan::TempStorage tmp;
    scan_op<A> op = {a.prod};
    const A identity = a.prod ? (A)1 : (A)0;
    for (int64_t r = blockIdx.x; r < a.xr.count; r += gridDim.x) {
        const S *px = x + bpcu_row_off(a.xr, r);
        S *po = out + bpcu_row_off(a.orow, r);
        scan_prefix<A> prefix = {identity, op};
        for (int64_t base = 0; base < a.n; base += SCAN_BLOCK) {
            int64_t t = base + threadIdx.x;
            int64_t j = a.reverse ? a.n - 1 - t : t;
            A v = t < a.n ? K::ld(px[j * a.sx]) : identity;
            A res;
            if (a.exclusive)
                BlockScan(tmp).ExclusiveScan(v, res, op, prefix);
            else
                BlockScan(tmp).InclusiveScan(v, res, op, prefix);
            if (t < a.n)
                po[j * a.so] = K::st(res);
            __syncthreads(); /* tmp is reused by the next tile */
        }
    }
}

template <class S>
static cudaError_t launch_scan(bpcu_device *d, const bpcu_scan_args &a, const char *x, char *out)
{
    const S *xs = (const S *)x;
    S *os = (S *)out;
    int64_t inner = a.xr.lead > 0 ? a.xr.strides[a.xr.lead - 1] : 0;
    bool adjacent_rows = a.xr.count >= SCAN_ADJACENT_MIN_ROWS && (inner == 1 || inner == -1) &&
                         a.sx != 1;
    if (adjacent_rows || a.n <= SCAN_SERIAL_MAX)
        return bpcu_launch(d->stream, bpcu_blocks(a.xr.count), BPCU_THREADS, 0,
                           bpcu_k_scan_serial<S>, a, xs, os);
    unsigned blocks = (unsigned)(a.xr.count < ((int64_t)1 << 20) ? a.xr.count : (int64_t)1 << 20);
    return bpcu_launch(d->stream, blocks, SCAN_BLOCK, 0, bpcu_k_scan_block<S>, a, xs, os);
}

bp_status bpcu_op_scan(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *out = c->out[0];
    if (bpcu_numel(x) == 0)
        return BP_OK;
    bpcu_scan_args a;
    memset(&a, 0, sizeof a);
    a.xr = bpcu_rows_of(x);
    a.orow = bpcu_rows_of(out);
    int32_t r = x->rank;
    a.n = r > 0 ? x->shape[r - 1] : 1;
    a.sx = r > 0 ? x->strides[r - 1] : 0;
    a.so = r > 0 ? out->strides[r - 1] : 0;
    a.prod = c->op == BP_OP_CUMPROD;
    a.exclusive = c->p.i[0] != 0;
    a.reverse = c->p.i[1] != 0;
    cudaError_t e = cudaSuccess;
    bp_dtype dt = x->dtype;
    if (bp_dtype_is_float(dt)) {
        BPCU_DISPATCH_FLOAT(dt, e = launch_scan<T>(d, a, bpcu_ptr(x), bpcu_ptr(out)));
    } else if (bp_dtype_is_int(dt)) {
        BPCU_DISPATCH_INT(dt, e = launch_scan<T>(d, a, bpcu_ptr(x), bpcu_ptr(out)));
    } else {
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s not implemented for %s",
                         bp_op_name(c->op), bp_dtype_name(dt));
    }
    return bpcu_launched(d, e, "scan kernel");
}

/* MOVEMENT: strided copies (copy, transpose, slice, concat, broadcast_to,
 * pad all arrive as one strided copy) and CAST.
 *
 * concat reaches the plugin as one copy per input, each into its part of
 * the output (the core's bp_concat; the plugin ABI hands over one input
 * per call): each part is a copy of rows below, at the copy bandwidth, so
 * n inputs cost n launches instead of one, and nothing else. */
#include <stdint.h>
#include <string.h>

#include "elem_kernels.h"

/* ---- copy / cast ------------------------------------------------------------ */

template <class T>
__global__ void bpcu_k_copy(bpcu_ix ix, const T *src, T *out)
{
    int64_t off[2];
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<2>(ix, i, off);
        out[off[0]] = src[off[1]];
    }
}

/* Transposes: out[b][r][c] = src[b][r][c] where src is contiguous along r
 * and out along c. A 32 x 32 tile goes through shared memory, so the reads
 * (along r) and the writes (along c) both coalesce; the extra column keeps
 * the tile's columns in different banks. blockDim (32, 8), grid (C/32, R/32,
 * batches). */
typedef struct bpcu_tr_args {
    int64_t R, C, B;               /* out's rows, columns, batches */
    int64_t or_, ob;               /* out strides of r and b (c's is 1) */
    int64_t sc, sb;                /* src strides of c and b (r's is 1) */
} bpcu_tr_args;

template <class T> __global__ void bpcu_k_transpose(bpcu_tr_args t, const T *src, T *out)
{
    __shared__ T tile[32][33];
    int64_t r0 = (int64_t)blockIdx.y * 32, c0 = (int64_t)blockIdx.x * 32;
    for (int64_t b = blockIdx.z; b < t.B; b += gridDim.z) {
        for (int k = threadIdx.y; k < 32; k += 8) {
            int64_t r = r0 + threadIdx.x, c = c0 + k;
            if (r < t.R && c < t.C)
                tile[k][threadIdx.x] = src[b * t.sb + r + c * t.sc];
        }
        __syncthreads();
        for (int k = threadIdx.y; k < 32; k += 8) {
            int64_t r = r0 + k, c = c0 + threadIdx.x;
            if (r < t.R && c < t.C)
                out[b * t.ob + r * t.or_ + c] = tile[threadIdx.x][k];
        }
        __syncthreads();
    }
}

/* ix (views out, src) as a transpose of its last two axes with at most one
 * batch axis before them, or false. */
static bool transpose_form(const bpcu_ix &ix, bpcu_tr_args *t)
{
    int32_t n = ix.rank;
    if (n < 2 || n > 3 || ix.strides[0][n - 1] != 1 || ix.strides[1][n - 2] != 1 ||
        ix.strides[1][n - 1] == 1)
        return false;
    t->R = ix.shape[n - 2], t->C = ix.shape[n - 1];
    t->or_ = ix.strides[0][n - 2], t->sc = ix.strides[1][n - 1];
    t->B = n == 3 ? ix.shape[0] : 1;
    t->ob = n == 3 ? ix.strides[0][0] : 0;
    t->sb = n == 3 ? ix.strides[1][0] : 0;
    return (t->R + 31) / 32 <= 65535;
}

template <class T>
static cudaError_t launch_transpose(bpcu_device *d, const bpcu_tr_args &t, const char *src, char *out)
{
    dim3 grid((unsigned)((t.C + 31) / 32), (unsigned)((t.R + 31) / 32),
              (unsigned)(t.B < 65535 ? t.B : 65535));
    return bpcu_launch(d->stream, grid, dim3(32, 8), 0, bpcu_k_transpose<T>, t, (const T *)src,
                       (T *)out);
}

/* Copies whose views share a unit-stride last axis (concat's parts,
 * slices, pads, broadcasts of rows): row by row in words of W (16 bytes
 * where the row length, strides and addresses allow), a warp walking each
 * row, so that no element pays for a division. Row r's offsets come from
 * the leading axes of the collapsed views, once per row. */
template <class W>
__global__ void bpcu_k_copy_rows(bpcu_ix ix, const char *src, char *out, int32_t es, int64_t rows,
                                 int64_t units)
{
    for (int64_t r = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; r < rows;
         r += (int64_t)gridDim.y * blockDim.y) {
        int64_t q = r, oo = 0, so = 0;
        for (int32_t k = ix.rank - 2; k >= 0; k--) {
            const int64_t c = q % ix.shape[k];
            q /= ix.shape[k];
            oo += c * ix.strides[0][k];
            so += c * ix.strides[1][k];
        }
        const W *ps = (const W *)(src + so * es);
        W *po = (W *)(out + oo * es);
        for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < units;
             u += (int64_t)gridDim.x * blockDim.x)
            po[u] = ps[u];
    }
}

/* ix (views out, src) copied row by row, if both views step by one element
 * along the last axis and there are rows to speak of; else false. */
static bool copy_rows(bpcu_device *d, const bpcu_ix &ix, const char *src, char *out, int32_t es,
                      cudaError_t *e)
{
    const int32_t r = ix.rank;
    if (r < 2 || ix.strides[0][r - 1] != 1 || ix.strides[1][r - 1] != 1 || ix.shape[r - 1] < 8)
        return false;
    int64_t v[2 * BP_MAX_RANK + 3];
    int n = 0;
    v[n++] = ix.shape[r - 1] * es;
    v[n++] = (int64_t)(uintptr_t)src;
    v[n++] = (int64_t)(uintptr_t)out;
    for (int32_t k = 0; k < r - 1; k++)
        v[n++] = ix.strides[0][k] * es, v[n++] = ix.strides[1][k] * es;
    const int w = bpcu_word_bytes(v, n);
    const int64_t rows = ix.n / ix.shape[r - 1], units = ix.shape[r - 1] * es / w;
    const dim3 grid = bpcu_rows_grid(rows, units), block(32, 8);
    switch (w) {
    case 16: *e = bpcu_launch(d->stream, grid, block, 0, bpcu_k_copy_rows<uint4>, ix, src, out, es, rows, units); break;
    case 8: *e = bpcu_launch(d->stream, grid, block, 0, bpcu_k_copy_rows<uint2>, ix, src, out, es, rows, units); break;
    case 4: *e = bpcu_launch(d->stream, grid, block, 0, bpcu_k_copy_rows<uint32_t>, ix, src, out, es, rows, units); break;
    case 2: *e = bpcu_launch(d->stream, grid, block, 0, bpcu_k_copy_rows<uint16_t>, ix, src, out, es, rows, units); break;
    default: *e = bpcu_launch(d->stream, grid, block, 0, bpcu_k_copy_rows<uint8_t>, ix, src, out, es, rows, units); break;
    }
    return true;
}

/* ---- casts of the common pairs: typed, dense, in 16-byte packs ---------------------------
 * Bit for bit the cast rules (cast.h), as bpcu_k_cast below computes them:
 * f32 / f16 / bf16 sources convert through f32 (exact), into f16 / bf16 by
 * the hardware's rounding (elem.h: the same bits as dtype.h's), into
 * integers truncated and saturated in f32 (the bounds are powers of two,
 * exact in f32, and the comparisons decide as they do in double); other
 * sources by cast.h's own functions, their dtype switch folded away. */

template <bp_dtype DT> struct bpcu_store_t;
template <> struct bpcu_store_t<BP_F32> { typedef float T; };
template <> struct bpcu_store_t<BP_F64> { typedef double T; };
template <> struct bpcu_store_t<BP_F16> { typedef uint16_t T; };
template <> struct bpcu_store_t<BP_BF16> { typedef uint16_t T; };
template <> struct bpcu_store_t<BP_I32> { typedef int32_t T; };
template <> struct bpcu_store_t<BP_I64> { typedef int64_t T; };
template <> struct bpcu_store_t<BP_BOOL> { typedef uint8_t T; };

/* f truncated toward zero and saturated into I; NaN gives 0 */
template <class I> static __device__ __forceinline__ I sat_f32(float f)
{
    const float hi1 = sizeof(I) == 4 ? 2147483648.0f : 9223372036854775808.0f;
    if (f != f)
        return 0;
    if (f >= hi1)
        return sizeof(I) == 4 ? (I)INT32_MAX : (I)INT64_MAX;
    if (f <= -hi1)
        return sizeof(I) == 4 ? (I)INT32_MIN : (I)INT64_MIN;
    return (I)f;
}

template <bp_dtype SD, bp_dtype DD>
static __device__ __forceinline__ typename bpcu_store_t<DD>::T
cvt1(typename bpcu_store_t<SD>::T s)
{
    typedef typename bpcu_store_t<DD>::T D;
    D d;
    if constexpr (SD == BP_F32 || SD == BP_F16 || SD == BP_BF16) {
        float v;
        if constexpr (SD == BP_F32)
            v = s;
        else if constexpr (SD == BP_F16)
            v = bpcu_h2f(s);
        else
            v = bp_bf16_to_f32(s);
        if constexpr (DD == BP_F32 && SD != BP_F32) {
            /* A NaN lands quiet, its payload kept, as the rule says (cast.h: a
             * float source goes through double, whose conversion quiets it);
             * dtype.h's widening keeps a signalling NaN signalling. */
            d = v != v ? bp__bits_f32(bp__f32_bits(v) | 0x00400000u) : v;
        } else if constexpr (DD == BP_F32)
            d = v;
        else if constexpr (DD == BP_F16)
            d = bpcu_f2h(v);
        else if constexpr (DD == BP_BF16)
            d = bpcu_f2b(v);
        else if constexpr (DD == BP_I32 || DD == BP_I64)
            d = sat_f32<D>(v);
        else
            bp_elem_store_f64(DD, &d, (double)v);
    } else if constexpr (SD == BP_F64) {
        bp_elem_store_f64(DD, &d, s);
    } else {
        bp_elem_store_i64(DD, &d, bp_elem_load_i64(SD, &s));
    }
    return d;
}

template <bp_dtype SD, bp_dtype DD>
__global__ void bpcu_k_cast_typed(int64_t n, const typename bpcu_store_t<SD>::T *src,
                                  typename bpcu_store_t<DD>::T *out, bool vec)
{
    typedef typename bpcu_store_t<SD>::T S;
    typedef typename bpcu_store_t<DD>::T D;
    int64_t done = 0;
    if (vec) {
        constexpr int V = bpcu_vw<S, D>::V;
        const int64_t nv = n / V;
        BPCU_FOR(p, nv) {
            const bpcu_pack<S, V> a = bpcu_pack<S, V>::load(src + p * V);
            bpcu_pack<D, V> o;
#pragma unroll
            for (int k = 0; k < V; k++)
                o.v[k] = cvt1<SD, DD>(a.v[k]);
            o.store(out + p * V);
        }
        done = nv * V;
    }
    BPCU_FOR(i, n - done)
        out[done + i] = cvt1<SD, DD>(src[done + i]);
}

template <bp_dtype SD, bp_dtype DD>
static cudaError_t launch_cast_typed(bpcu_device *d, int64_t n, const char *src, char *out)
{
    typedef typename bpcu_store_t<SD>::T S;
    typedef typename bpcu_store_t<DD>::T D;
    constexpr int V = bpcu_vw<S, D>::V;
    const bool vec = (uintptr_t)src % (V * sizeof(S)) == 0 && (uintptr_t)out % (V * sizeof(D)) == 0;
    return bpcu_launch(d->stream, bpcu_blocks(vec ? n / V + 1 : n), BPCU_THREADS, 0,
                       bpcu_k_cast_typed<SD, DD>, n, (const S *)src, (D *)out, vec);
}

/* The pairs with a typed kernel (the rest: bpcu_k_cast). */
#define BPCU_CAST_PAIRS(X)                                                              \
    X(BP_F32, BP_F16) X(BP_F32, BP_BF16) X(BP_F16, BP_F32) X(BP_BF16, BP_F32)           \
    X(BP_F16, BP_BF16) X(BP_BF16, BP_F16) X(BP_F32, BP_F64) X(BP_F64, BP_F32)           \
    X(BP_F32, BP_I32) X(BP_I32, BP_F32) X(BP_F16, BP_I32) X(BP_I32, BP_F16)             \
    X(BP_BF16, BP_I32) X(BP_I32, BP_BF16) X(BP_F32, BP_I64) X(BP_I64, BP_F32)           \
    X(BP_I32, BP_I64) X(BP_I64, BP_I32) X(BP_BOOL, BP_F32) X(BP_BOOL, BP_F16)           \
    X(BP_BOOL, BP_BF16)

/* A dense cast of a pair with a typed kernel (*e set), or false. */
static bool cast_typed(bpcu_device *d, bp_dtype sdt, bp_dtype odt, int64_t n, const char *src,
                       char *out, cudaError_t *e)
{
#define BPCU_CAST_CASE(S, D)                                                            \
    if (sdt == S && odt == D) {                                                         \
        *e = launch_cast_typed<S, D>(d, n, src, out);                                   \
        return true;                                                                    \
    }
    BPCU_CAST_PAIRS(BPCU_CAST_CASE)
#undef BPCU_CAST_CASE
    return false;
}

/* Casts switch on the dtypes at run time (uniform across the grid): one
 * kernel for all 72 pairs. Integer and bool sources go through int64
 * (exact), float sources through double, as the binary backend. */
__global__ void bpcu_k_cast(bpcu_ix ix, const char *src, bp_dtype sdt, char *out, bp_dtype odt)
{
    int64_t off[2];
    int64_t ss = (int64_t)bp_dtype_size(sdt), os = (int64_t)bp_dtype_size(odt);
    bool via_int = !bp_dtype_is_float(sdt);
    BPCU_FOR(i, ix.n) {
        bpcu_offsets<2>(ix, i, off);
        if (via_int)
            bp_elem_store_i64(odt, out + off[0] * os, bp_elem_load_i64(sdt, src + off[1] * ss));
        else
            bp_elem_store_f64(odt, out + off[0] * os, bp_elem_load_f64(sdt, src + off[1] * ss));
    }
}

/* Copy src (any strides) into out with a dtype change when op is CAST; used
 * by matmul too. */
static bp_status copy_views(bpcu_device *d, bp_op op, const bp_view *src, const bp_view *out)
{
    const bp_view *vs[2] = {out, src};
    bpcu_ix ix = bpcu_collapse(2, vs);
    if (ix.n == 0)
        return BP_OK;
    unsigned nb = bpcu_blocks(ix.n);
    cudaError_t e = cudaSuccess;
    if (op == BP_OP_CAST && src->dtype != out->dtype) {
        if (ix.dense && cast_typed(d, src->dtype, out->dtype, ix.n, bpcu_ptr(src), bpcu_ptr(out), &e))
            return bpcu_launched(d, e, "cast kernel");
        e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_cast, ix, bpcu_ptr(src), src->dtype,
                        bpcu_ptr(out), out->dtype);
        return bpcu_launched(d, e, "cast kernel");
    }
    /* a dense copy is one memcpy on the stream */
    if (ix.dense) {
        size_t bytes = (size_t)ix.n * bp_dtype_size(out->dtype);
        e = cudaMemcpyAsync(bpcu_ptr(out), bpcu_ptr(src), bytes, cudaMemcpyDeviceToDevice,
                            d->stream);
        return e == cudaSuccess ? BP_OK : bpcu_cuda_fail(d, e, "device copy of %zu bytes", bytes);
    }
    bpcu_tr_args t;
    if (transpose_form(ix, &t)) {
        switch (bp_dtype_size(out->dtype)) {
        case 1: e = launch_transpose<uint8_t>(d, t, bpcu_ptr(src), bpcu_ptr(out)); break;
        case 2: e = launch_transpose<uint16_t>(d, t, bpcu_ptr(src), bpcu_ptr(out)); break;
        case 4: e = launch_transpose<uint32_t>(d, t, bpcu_ptr(src), bpcu_ptr(out)); break;
        default: e = launch_transpose<uint64_t>(d, t, bpcu_ptr(src), bpcu_ptr(out)); break;
        }
        return bpcu_launched(d, e, "transpose kernel");
    }
    if (copy_rows(d, ix, bpcu_ptr(src), bpcu_ptr(out), (int32_t)bp_dtype_size(out->dtype), &e))
        return bpcu_launched(d, e, "copy kernel");
    switch (bp_dtype_size(out->dtype)) {
    case 1: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_copy<uint8_t>, ix, (const uint8_t *)bpcu_ptr(src), (uint8_t *)bpcu_ptr(out)); break;
    case 2: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_copy<uint16_t>, ix, (const uint16_t *)bpcu_ptr(src), (uint16_t *)bpcu_ptr(out)); break;
    case 4: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_copy<uint32_t>, ix, (const uint32_t *)bpcu_ptr(src), (uint32_t *)bpcu_ptr(out)); break;
    default: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_copy<uint64_t>, ix, (const uint64_t *)bpcu_ptr(src), (uint64_t *)bpcu_ptr(out)); break;
    }
    return bpcu_launched(d, e, "copy kernel");
}

bp_status bpcu_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, bp_op_name(op), out, {src});
    return in.status != BP_OK ? in.status : copy_views(d, op, src, out);
}

bp_status bpcu_copy_view(bpcu_device *d, const bp_view *src, const bp_view *out)
{
    return copy_views(d, BP_OP_COPY, src, out);
}

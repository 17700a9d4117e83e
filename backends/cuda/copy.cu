/* MOVEMENT: strided copies (copy, transpose, slice, concat, broadcast_to,
 * pad all arrive as one strided copy) and CAST. */
#include <string.h>

#include "bpcu.h"
#include "elem.h"

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

/* GATHER (ONNX Gather): out = x.take(indices, axis). The indices are
 * checked on the device (checks.h): one out of range gives zero elements
 * and a deferred BP_ERR_INDEX, reported at the next synchronising call;
 * gather itself never waits. */
#include <string.h>

#include "checks.h"
#include "elem.h"
#include "op.h"

typedef struct bpcu_gather_args {
    int32_t orank, axis, irank, xrank;
    int64_t n, dim;
    int64_t oshape[BP_MAX_RANK], ostr[BP_MAX_RANK];
    int64_t xstr[BP_MAX_RANK], istr[BP_MAX_RANK];
    int64_t iflat[BP_MAX_RANK];    /* row-major strides of indices' shape: flat positions */
} bpcu_gather_args;

template <class T>
__global__ void bpcu_k_gather(bpcu_gather_args g, const T *x, const char *idx, bool i64, T *out,
                              unsigned long long *bad)
{
    BPCU_FOR(i, g.n) {
        int64_t c[BP_MAX_RANK], r = i;
        for (int32_t k = g.orank - 1; k >= 0; k--) {
            c[k] = r % g.oshape[k];
            r /= g.oshape[k];
        }
        int64_t oo = 0, xo = 0, io = 0, flat = 0;
        for (int32_t k = 0; k < g.orank; k++)
            oo += c[k] * g.ostr[k];
        for (int32_t k = 0; k < g.axis; k++)
            xo += c[k] * g.xstr[k];
        for (int32_t k = 0; k < g.irank; k++) {
            io += c[g.axis + k] * g.istr[k];
            flat += c[g.axis + k] * g.iflat[k];
        }
        int64_t j = i64 ? ((const int64_t *)idx)[io] : (int64_t)((const int32_t *)idx)[io];
        if (!bpcu_index_ok(&j, g.dim, flat, bad)) {
            out[oo] = (T)0;
            continue;
        }
        xo += j * g.xstr[g.axis];
        for (int32_t k = g.axis + 1; k < g.xrank; k++)
            xo += c[k - 1 + g.irank] * g.xstr[k];
        out[oo] = x[xo];
    }
}

/* Gathers of whole rows: x's axes after `axis` dense (a row of `inner`
 * elements, contiguous), out dense and the indices dense, as the core hands
 * them for an embedding lookup or a row selection. Row r of out (outer
 * coordinate r / nidx, index r % nidx) is a copy of one row of x, moved by
 * a warp in words of W (16 bytes where the row length, the strides and the
 * addresses allow), the index read once per row; a bad index gives a row of
 * zeros and the deferred error, as bpcu_k_gather. */
typedef struct bpcu_grow_args {
    int64_t rows, nidx, dim, units; /* units: words of W per row */
    int64_t row_bytes;             /* bytes of a row (out's row stride) */
    int64_t axis_bytes;            /* x's stride of axis, in bytes */
    int32_t outer;                 /* axes before axis */
    int64_t oshape[BP_MAX_RANK], ostr_bytes[BP_MAX_RANK]; /* x's leading axes */
} bpcu_grow_args;

template <class W>
__global__ void bpcu_k_gather_rows(bpcu_grow_args g, const char *x, const char *idx, bool i64,
                                   char *out, unsigned long long *bad)
{
    for (int64_t r = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; r < g.rows;
         r += (int64_t)gridDim.y * blockDim.y) {
        const int64_t q = r % g.nidx;
        int64_t o = r / g.nidx, xo = 0;
        for (int32_t k = g.outer - 1; k >= 0; k--) {
            xo += (o % g.oshape[k]) * g.ostr_bytes[k];
            o /= g.oshape[k];
        }
        int64_t j = i64 ? ((const int64_t *)idx)[q] : (int64_t)((const int32_t *)idx)[q];
        const bool ok = bpcu_index_ok(&j, g.dim, q, bad);
        const W *ps = (const W *)(x + xo + j * g.axis_bytes);
        W *po = (W *)(out + r * g.row_bytes);
        for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < g.units;
             u += (int64_t)gridDim.x * blockDim.x) {
            W w;
            if (ok)
                w = ps[u];
            else
                memset(&w, 0, sizeof w);
            po[u] = w;
        }
    }
}

static bool dense_from(const bp_view *v, int32_t first, int64_t *count)
{
    int64_t expect = 1;
    for (int32_t k = v->rank - 1; k >= first; k--) {
        if (v->shape[k] != 1 && v->strides[k] != expect)
            return false;
        expect *= v->shape[k];
    }
    *count = expect;
    return true;
}

/* The row gather of x[indices] on axis, if the views allow it (*e set). */
static bool gather_rows(bpcu_device *d, const bp_view *x, const bp_view *indices, int32_t axis,
                        const bp_view *out, unsigned long long *bad, cudaError_t *e)
{
    bpcu_grow_args g;
    memset(&g, 0, sizeof g);
    int64_t inner, onum, inum;
    if (!dense_from(x, axis + 1, &inner) || !dense_from(out, 0, &onum) ||
        !dense_from(indices, 0, &inum) || inner < 4 || axis >= BP_MAX_RANK)
        return false;
    const int64_t es = (int64_t)bp_dtype_size(x->dtype);
    g.nidx = inum;
    g.rows = inner > 0 ? onum / inner : 0;
    g.dim = x->shape[axis];
    g.row_bytes = inner * es;
    g.axis_bytes = x->strides[axis] * es;
    g.outer = axis;
    int64_t v[BP_MAX_RANK + 5];
    int n = 0;
    v[n++] = g.row_bytes, v[n++] = g.axis_bytes;
    v[n++] = (int64_t)(uintptr_t)bpcu_ptr(x), v[n++] = (int64_t)(uintptr_t)bpcu_ptr(out);
    for (int32_t k = 0; k < axis; k++) {
        g.oshape[k] = x->shape[k];
        g.ostr_bytes[k] = x->strides[k] * es;
        v[n++] = g.ostr_bytes[k];
    }
    const int w = bpcu_word_bytes(v, n);
    g.units = g.row_bytes / w;
    if (g.rows == 0 || g.nidx == 0)
        return false;
    const dim3 grid = bpcu_rows_grid(g.rows, g.units), block(32, 8);
    const char *xp = bpcu_ptr(x), *ip = bpcu_ptr(indices);
    const bool i64 = indices->dtype == BP_I64;
    char *op = bpcu_ptr(out);
    switch (w) {
    case 16: *e = bpcu_launch(d->stream, grid, block, 0, bpcu_k_gather_rows<uint4>, g, xp, ip, i64, op, bad); break;
    case 8: *e = bpcu_launch(d->stream, grid, block, 0, bpcu_k_gather_rows<uint2>, g, xp, ip, i64, op, bad); break;
    case 4: *e = bpcu_launch(d->stream, grid, block, 0, bpcu_k_gather_rows<uint32_t>, g, xp, ip, i64, op, bad); break;
    case 2: *e = bpcu_launch(d->stream, grid, block, 0, bpcu_k_gather_rows<uint16_t>, g, xp, ip, i64, op, bad); break;
    default: *e = bpcu_launch(d->stream, grid, block, 0, bpcu_k_gather_rows<uint8_t>, g, xp, ip, i64, op, bad); break;
    }
    return true;
}

bp_status bpcu_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                      const bp_view *out)
{
    cudaError_t e = cudaSuccess;
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "gather", out, {x, indices});
    if (in.status != BP_OK)
        return in.status;
    bpcu_gather_args g;
    memset(&g, 0, sizeof g);
    g.orank = out->rank, g.axis = axis, g.irank = indices->rank, g.xrank = x->rank;
    g.n = bpcu_numel(out);
    g.dim = x->shape[axis];
    if (g.n == 0) { /* nothing to gather, but a bad index is still reported */
        if (bpcu_numel(indices) == 0)
            return BP_OK;
        bpcu_index_check chk(d, BP_OP_GATHER);
        return chk.status != BP_OK ? chk.status
                                   : chk.check_all(indices, 1, &x->shape[axis], axis);
    }
    for (int32_t k = 0; k < out->rank; k++)
        g.oshape[k] = out->shape[k], g.ostr[k] = out->strides[k];
    for (int32_t k = 0; k < x->rank; k++)
        g.xstr[k] = x->strides[k];
    int64_t flat = 1;
    for (int32_t k = indices->rank - 1; k >= 0; k--) {
        g.istr[k] = indices->strides[k];
        g.iflat[k] = flat;
        flat *= indices->shape[k];
    }
    bool i64 = indices->dtype == BP_I64;
    const char *ip = bpcu_ptr(indices);
    unsigned nb = bpcu_blocks(g.n);
    bpcu_index_check chk(d, BP_OP_GATHER);
    if (chk.status != BP_OK)
        return chk.status;
    unsigned long long *bad = chk.bad();
    if (gather_rows(d, x, indices, axis, out, bad, &e)) {
        bp_status st = chk.commit(indices, 1, &x->shape[axis], axis);
        return e != cudaSuccess ? bpcu_launched(d, e, "gather kernel") : st;
    }
    switch (bp_dtype_size(x->dtype)) {
    case 1: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_gather<uint8_t>, g, (const uint8_t *)bpcu_ptr(x), ip, i64, (uint8_t *)bpcu_ptr(out), bad); break;
    case 2: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_gather<uint16_t>, g, (const uint16_t *)bpcu_ptr(x), ip, i64, (uint16_t *)bpcu_ptr(out), bad); break;
    case 4: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_gather<uint32_t>, g, (const uint32_t *)bpcu_ptr(x), ip, i64, (uint32_t *)bpcu_ptr(out), bad); break;
    default: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_gather<uint64_t>, g, (const uint64_t *)bpcu_ptr(x), ip, i64, (uint64_t *)bpcu_ptr(out), bad); break;
    }
    bp_status st = chk.commit(indices, 1, &x->shape[axis], axis);
    return e != cudaSuccess ? bpcu_launched(d, e, "gather kernel") : st;
}

/* ---- gather_elements and gather_nd ----
 * GATHER_ELEMENTS and GATHER_ND (ONNX GatherElements, GatherND), with
 * their indices checked on the device (checks.h): an index out of range
 * gives a zero element and a deferred BP_ERR_INDEX.
 *
 * gather_elements: in x, indices (x's rank), p.i[0] axis; out has indices'
 * shape: out[c] = x[c with c[axis] = indices[c]].
 * gather_nd: in x (rank r), indices (rank q, tuples of m = its last extent),
 * p.i[0] batch_dims b; out has indices' shape without its last axis, then
 * x's axes after b + m: out[p, t] = x[p's first b coordinates,
 * indices[p, 0 .. m), t]. */

typedef struct bpcu_gel_args {
    int32_t rank, axis;
    int64_t n, dim;
    int64_t shape[BP_MAX_RANK];    /* indices' (and out's) */
    int64_t xstr[BP_MAX_RANK], istr[BP_MAX_RANK], ostr[BP_MAX_RANK];
} bpcu_gel_args;

template <class T>
__global__ void bpcu_k_gather_elements(bpcu_gel_args g, const T *x, const char *idx, bool i64,
                                       T *out, unsigned long long *bad)
{
    BPCU_FOR(i, g.n) {
        int64_t r = i, xo = 0, io = 0, oo = 0;
        for (int32_t k = g.rank - 1; k >= 0; k--) { /* x's offset without the axis' term */
            int64_t c = r % g.shape[k];
            r /= g.shape[k];
            io += c * g.istr[k];
            oo += c * g.ostr[k];
            if (k != g.axis)
                xo += c * g.xstr[k];
        }
        int64_t j = bpcu_load_index(idx, i64, io);
        out[oo] = bpcu_index_ok(&j, g.dim, i, bad) ? x[xo + j * g.xstr[g.axis]] : (T)0;
    }
}

typedef struct bpcu_gnd_args {
    int32_t b, m, q1, trank;       /* batch axes, tuple size, indices' rank - 1, trailing axes */
    int64_t n, tcount;             /* out's elements, elements per tuple (trailing) */
    int64_t oshape[BP_MAX_RANK], ostr[BP_MAX_RANK];
    int64_t istr[BP_MAX_RANK];     /* indices' strides (q1 prefix axes, then the tuple axis) */
    int64_t xstr[BP_MAX_RANK], xdim[BP_MAX_RANK];
} bpcu_gnd_args;

template <class T>
__global__ void bpcu_k_gather_nd(bpcu_gnd_args g, const T *x, const char *idx, bool i64, T *out,
                                 unsigned long long *bad)
{
    BPCU_FOR(i, g.n) {
        int64_t r = i, oo = 0, xo = 0, io = 0;
        /* out's coordinates: the trailing ones (x's axes b + m ..) first, from the end */
        for (int32_t k = g.q1 + g.trank - 1; k >= 0; k--) {
            int64_t c = r % g.oshape[k];
            r /= g.oshape[k];
            oo += c * g.ostr[k];
            if (k >= g.q1) {
                xo += c * g.xstr[g.b + g.m + (k - g.q1)];
            } else {
                io += c * g.istr[k];
                if (k < g.b)
                    xo += c * g.xstr[k];
            }
        }
        int64_t tuple = i / g.tcount; /* row-major position of the tuple among indices' */
        bool ok = true;
        for (int32_t j = 0; j < g.m; j++) {
            int64_t v = bpcu_load_index(idx, i64, io + j * g.istr[g.q1]);
            if (bpcu_index_ok(&v, g.xdim[g.b + j], tuple * g.m + j, bad))
                xo += v * g.xstr[g.b + j];
            else
                ok = false;
        }
        out[oo] = ok ? x[xo] : (T)0;
    }
}

template <class T>
static cudaError_t launch_gather(bpcu_device *d, const bpcu_opcall *c, const void *args,
                                 unsigned long long *bad)
{
    const bp_view *x = c->in[0], *ind = c->in[1], *out = c->out[0];
    bool i64 = ind->dtype == BP_I64;
    if (c->op == BP_OP_GATHER_ELEMENTS) {
        const bpcu_gel_args &g = *(const bpcu_gel_args *)args;
        return bpcu_launch(d->stream, bpcu_blocks(g.n), BPCU_THREADS, 0, bpcu_k_gather_elements<T>,
                           g, (const T *)bpcu_ptr(x), (const char *)bpcu_ptr(ind), i64,
                           (T *)bpcu_ptr(out), bad);
    }
    const bpcu_gnd_args &g = *(const bpcu_gnd_args *)args;
    return bpcu_launch(d->stream, bpcu_blocks(g.n), BPCU_THREADS, 0, bpcu_k_gather_nd<T>, g,
                       (const T *)bpcu_ptr(x), (const char *)bpcu_ptr(ind), i64,
                       (T *)bpcu_ptr(out), bad);
}

bp_status bpcu_op_gather(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *ind = c->in[1], *out = c->out[0];
    int64_t n = bpcu_numel(out);
    if (bpcu_numel(ind) == 0)
        return BP_OK;
    bpcu_gel_args ge;
    bpcu_gnd_args gn;
    memset(&ge, 0, sizeof ge);
    memset(&gn, 0, sizeof gn);
    const void *args;
    int32_t m = 1, axis0;
    const int64_t *dims;
    if (c->op == BP_OP_GATHER_ELEMENTS) {
        int64_t axis = c->p.i[0];
        if (axis < 0 || axis >= x->rank || ind->rank != x->rank || out->rank != x->rank)
            return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: gather_elements: axis %lld, x "
                             "of rank %d and indices of rank %d do not fit", (long long)axis,
                             (int)x->rank, (int)ind->rank);
        ge.rank = x->rank, ge.axis = (int32_t)axis, ge.n = n, ge.dim = x->shape[axis];
        for (int32_t k = 0; k < x->rank; k++) {
            ge.shape[k] = ind->shape[k];
            ge.xstr[k] = x->strides[k], ge.istr[k] = ind->strides[k], ge.ostr[k] = out->strides[k];
        }
        args = &ge, axis0 = ge.axis, dims = &x->shape[axis];
    } else {
        int64_t b = c->p.i[0];
        int64_t mm = ind->rank > 0 ? ind->shape[ind->rank - 1] : 0;
        if (b < 0 || ind->rank < 1 || b >= ind->rank || mm < 1 || b + mm > x->rank ||
            out->rank != ind->rank - 1 + x->rank - b - mm)
            return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: gather_nd: batch_dims %lld with "
                             "x of rank %d and indices of rank %d do not fit", (long long)b,
                             (int)x->rank, (int)ind->rank);
        gn.b = (int32_t)b, gn.m = (int32_t)mm, gn.q1 = ind->rank - 1;
        gn.trank = x->rank - gn.b - gn.m;
        gn.n = n;
        gn.tcount = 1;
        for (int32_t k = 0; k < gn.trank; k++)
            gn.tcount *= x->shape[gn.b + gn.m + k];
        for (int32_t k = 0; k < out->rank; k++)
            gn.oshape[k] = out->shape[k], gn.ostr[k] = out->strides[k];
        for (int32_t k = 0; k < ind->rank; k++)
            gn.istr[k] = ind->strides[k];
        for (int32_t k = 0; k < x->rank; k++)
            gn.xstr[k] = x->strides[k], gn.xdim[k] = x->shape[k];
        args = &gn, m = gn.m, axis0 = gn.b, dims = &x->shape[gn.b];
    }
    bpcu_index_check chk(d, c->op);
    if (chk.status != BP_OK)
        return chk.status;
    if (n == 0) /* nothing to gather, but a bad index is still reported */
        return chk.check_all(ind, m, dims, axis0);
    cudaError_t e = cudaSuccess;
    switch (bp_dtype_size(x->dtype)) {
    case 1: e = launch_gather<uint8_t>(d, c, args, chk.bad()); break;
    case 2: e = launch_gather<uint16_t>(d, c, args, chk.bad()); break;
    case 4: e = launch_gather<uint32_t>(d, c, args, chk.bad()); break;
    default: e = launch_gather<uint64_t>(d, c, args, chk.bad()); break;
    }
    bp_status st = chk.commit(ind, m, dims, axis0);
    return e != cudaSuccess ? bpcu_launched(d, e, "gather kernel") : st;
}

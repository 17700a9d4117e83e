/* SORT and TOPK along the last axis (the core moves the axis there, in x
 * and in both outputs): out[0] the values (x's dtype), out[1] their indices
 * along the axis (i64). SORT: p.i[0] descending. TOPK: the first k (out's
 * last extent) of the order p.i[0] largest ? descending : ascending;
 * p.i[1] sorted is always honoured (the order is the sort's).
 *
 * The order (ops.h): stable, ties to the lower index; NaN above every
 * number, so last ascending and first descending (NumPy's sort, ONNX TopK);
 * -0 equals +0. Each element becomes an unsigned key whose integer order is
 * that order: integers with the sign bit flipped; floats with negatives'
 * bits inverted and positives' sign bit set, -0 made +0 and every NaN the
 * largest key; descending inverts the key, which keeps the ties in index
 * order (equal keys stay equal).
 *
 * The sort itself is CUB's DeviceRadixSort, stable, over all rows at once:
 * (key, position) pairs sorted by key, then, when there are several rows,
 * sorted again by row (a stable sort of a stable sort: by row, then by key,
 * then by position). Two instantiations (32- and 64-bit keys; 8- and 16-bit
 * dtypes sort 8 or 16 bits of a 32-bit key) keep the build small, and one
 * long row uses the whole device. The values are then read from x at the
 * sorted positions, so NaN payloads and -0 come out as they went in. */
#include "op.h"

/* after op.h: dtype.h's locals named half must come before cuda_fp16.h's
 * type of that name (bpcu.h) */
#include <cub/device/device_radix_sort.cuh>

typedef struct bpcu_sort_args {
    bpcu_rows xr, vr, ir;          /* the rows of x, values, indices */
    int64_t n, k, total;           /* row length, kept per row, rows * n */
    int64_t sx, sv, si;            /* strides along the axis */
    bp_dtype dt;
    bool descending;
} bpcu_sort_args;

/* ---- keys ------------------------------------------------------------------------ */

static __device__ __forceinline__ uint64_t float_key16(uint16_t h, uint16_t inf)
{
    if ((h & 0x7fffu) > inf)
        return 0xffffu; /* NaN */
    if (h == 0x8000u)
        h = 0; /* -0 */
    return (h & 0x8000u) ? (uint16_t)~h : (uint16_t)(h | 0x8000u);
}

/* The ascending key of the element at p (key_bits(dt) wide). */
static __device__ __forceinline__ uint64_t sort_key(bp_dtype dt, const char *p)
{
    switch (dt) {
    case BP_U8: return *(const uint8_t *)p;
    case BP_I8: return (uint8_t)(*(const uint8_t *)p ^ 0x80u);
    case BP_I32: return (uint32_t)(*(const uint32_t *)p ^ 0x80000000u);
    case BP_I64: return *(const uint64_t *)p ^ 0x8000000000000000ull;
    case BP_F16: return float_key16(*(const uint16_t *)p, 0x7c00u);
    case BP_BF16: return float_key16(*(const uint16_t *)p, 0x7f80u);
    case BP_F32: {
        uint32_t u = *(const uint32_t *)p;
        if ((u & 0x7fffffffu) > 0x7f800000u)
            return 0xffffffffu;
        if (u == 0x80000000u)
            u = 0;
        return (u & 0x80000000u) ? (uint32_t)~u : (u | 0x80000000u);
    }
    default: { /* F64 */
        uint64_t u = *(const uint64_t *)p;
        if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull)
            return 0xffffffffffffffffull;
        if (u == 0x8000000000000000ull)
            u = 0;
        return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
    }
    }
}

static __host__ __device__ __forceinline__ int key_bits(bp_dtype dt)
{
    return (int)bp_dtype_size(dt) * 8;
}

/* keys[i], pos[i] = i for every element i = row * n + j */
template <class K>
__global__ void bpcu_k_sort_keys(bpcu_sort_args a, const char *x, K *keys, long long *pos)
{
    int64_t es = (int64_t)bp_dtype_size(a.dt);
    uint64_t mask = key_bits(a.dt) == 64 ? ~0ull : ((1ull << key_bits(a.dt)) - 1);
    BPCU_FOR(i, a.total) {
        int64_t r = i / a.n, j = i - r * a.n;
        int64_t off = bpcu_row_off(a.xr, r) + j * a.sx;
        uint64_t key = sort_key(a.dt, x + off * es);
        keys[i] = (K)(a.descending ? key ^ mask : key);
        pos[i] = i;
    }
}

/* rowkey[i] = the row of sorted position pos[i] */
template <class K>
__global__ void bpcu_k_sort_rows(int64_t total, int64_t n, const long long *pos, K *rowkey)
{
    BPCU_FOR(i, total)
        rowkey[i] = (K)(pos[i] / n);
}

/* values[r, t] = x[r, j] and indices[r, t] = j for the first k sorted
 * positions of each row */
template <class T>
__global__ void bpcu_k_sort_emit(bpcu_sort_args a, const long long *pos, const T *x, T *values,
                                 int64_t *indices)
{
    BPCU_FOR(i, a.xr.count * a.k) {
        int64_t r = i / a.k, t = i - r * a.k;
        int64_t j = pos[r * a.n + t] - r * a.n;
        values[bpcu_row_off(a.vr, r) + t * a.sv] = x[bpcu_row_off(a.xr, r) + j * a.sx];
        indices[bpcu_row_off(a.ir, r) + t * a.si] = j;
    }
}

/* ---- the sort ---------------------------------------------------------------------- */

static int bits_for(uint64_t v)
{
    int b = 1;
    while (b < 64 && (v >> b) != 0)
        b++;
    return b;
}

/* CUB's temporary storage for sorting total (K, long long) pairs. */
template <class K> static cudaError_t cub_bytes(int64_t total, size_t *bytes)
{
    return cub::DeviceRadixSort::SortPairs(NULL, *bytes, (const K *)NULL, (K *)NULL,
                                           (const long long *)NULL, (long long *)NULL, total);
}

/* Scratch for one sort: two key buffers, two position buffers, CUB's. */
typedef struct sort_scratch {
    void *keys[2], *pos[2], *tmp;
    size_t tmp_bytes;
} sort_scratch;

static void scratch_free(bpcu_device *d, sort_scratch *s)
{
    for (int k = 0; k < 2; k++) {
        bpcu_scratch_free(d, s->keys[k]);
        bpcu_scratch_free(d, s->pos[k]);
    }
    bpcu_scratch_free(d, s->tmp);
}

/* Sort keys[0] (K) with pos[0] into keys[1], pos[1] on d's stream. */
template <class K>
static cudaError_t radix(bpcu_device *d, sort_scratch *s, int64_t total, int bits)
{
    size_t bytes = s->tmp_bytes;
    return cub::DeviceRadixSort::SortPairs(s->tmp, bytes, (const K *)s->keys[0], (K *)s->keys[1],
                                           (const long long *)s->pos[0], (long long *)s->pos[1],
                                           total, 0, bits, d->stream);
}

/* The positions of each row in sorted order, row after row: in s->pos[1]
 * (one row) or s->pos[0] (several). */
template <class K>
static bp_status sort_positions(bpcu_device *d, const bpcu_sort_args &a, const char *x,
                                sort_scratch *s, long long **sorted)
{
    cudaError_t e = bpcu_launch(d->stream, bpcu_blocks(a.total), BPCU_THREADS, 0,
                                bpcu_k_sort_keys<K>, a, x, (K *)s->keys[0],
                                (long long *)s->pos[0]);
    if (e != cudaSuccess)
        return bpcu_launched(d, e, "sort key kernel");
    int bits = key_bits(a.dt) < (int)sizeof(K) * 8 ? key_bits(a.dt) : (int)sizeof(K) * 8;
    if ((e = radix<K>(d, s, a.total, bits)) != cudaSuccess)
        return bpcu_cuda_fail(d, e, "cub::DeviceRadixSort::SortPairs of %lld keys",
                              (long long)a.total);
    *sorted = (long long *)s->pos[1];
    if (a.xr.count <= 1)
        return BP_OK;
    /* again by row, stably: pos[1] -> pos[0], the row keys in keys[0] */
    int rbits = bits_for((uint64_t)(a.xr.count - 1));
    std::swap(s->pos[0], s->pos[1]);
    if (rbits <= 32) {
        e = bpcu_launch(d->stream, bpcu_blocks(a.total), BPCU_THREADS, 0, bpcu_k_sort_rows<uint32_t>,
                        a.total, a.n, (const long long *)s->pos[0], (uint32_t *)s->keys[0]);
        if (e == cudaSuccess)
            e = radix<uint32_t>(d, s, a.total, rbits);
    } else {
        e = bpcu_launch(d->stream, bpcu_blocks(a.total), BPCU_THREADS, 0, bpcu_k_sort_rows<uint64_t>,
                        a.total, a.n, (const long long *)s->pos[0], (uint64_t *)s->keys[0]);
        if (e == cudaSuccess)
            e = radix<uint64_t>(d, s, a.total, rbits);
    }
    if (e != cudaSuccess)
        return bpcu_cuda_fail(d, e, "sorting %lld keys by row", (long long)a.total);
    *sorted = (long long *)s->pos[1];
    return BP_OK;
}

static bp_status emit(bpcu_device *d, const bpcu_sort_args &a, const long long *pos,
                      const bp_view *x, const bp_view *values, const bp_view *indices)
{
    if (a.xr.count * a.k == 0)
        return BP_OK;
    unsigned nb = bpcu_blocks(a.xr.count * a.k);
    int64_t *ip = (int64_t *)bpcu_ptr(indices);
    cudaError_t e;
    switch (bp_dtype_size(x->dtype)) {
    case 1: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_sort_emit<uint8_t>, a, pos, (const uint8_t *)bpcu_ptr(x), (uint8_t *)bpcu_ptr(values), ip); break;
    case 2: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_sort_emit<uint16_t>, a, pos, (const uint16_t *)bpcu_ptr(x), (uint16_t *)bpcu_ptr(values), ip); break;
    case 4: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_sort_emit<uint32_t>, a, pos, (const uint32_t *)bpcu_ptr(x), (uint32_t *)bpcu_ptr(values), ip); break;
    default: e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_sort_emit<uint64_t>, a, pos, (const uint64_t *)bpcu_ptr(x), (uint64_t *)bpcu_ptr(values), ip); break;
    }
    return bpcu_launched(d, e, "sort output kernel");
}

/* CUB checks each of its launches with cudaPeekAtLastError, so an error
 * the caller left pending on this thread (errors.cu leaves it alone) would
 * make the sort fail as if it were CUB's, and a sticky one would mark this
 * device lost. Refuse plainly instead. Our own calls before the sort
 * returned their errors, so a pending one is the caller's. */
static bp_status caller_error_pending(bpcu_device *d)
{
    cudaError_t e = cudaPeekAtLastError();
    if (e == cudaSuccess)
        return BP_OK;
    return bpcu_fail(d, BP_ERR_BACKEND, "cuda: a CUDA error of the calling thread is pending "
                     "(%s: %s); the sort (CUB) would take it for its own; remedy: clear it with "
                     "cudaGetLastError() before calling backplane", cudaGetErrorName(e),
                     cudaGetErrorString(e));
}

bp_status bpcu_op_sort(bpcu_device *d, const bpcu_opcall *c)
{
    const bp_view *x = c->in[0], *values = c->out[0], *indices = c->out[1];
    bpcu_sort_args a;
    memset(&a, 0, sizeof a);
    a.xr = bpcu_rows_of(x);
    a.vr = bpcu_rows_of(values);
    a.ir = bpcu_rows_of(indices);
    int32_t r = x->rank;
    a.n = r > 0 ? x->shape[r - 1] : 1;
    a.k = r > 0 ? values->shape[r - 1] : 1;
    a.sx = r > 0 ? x->strides[r - 1] : 0;
    a.sv = r > 0 ? values->strides[r - 1] : 0;
    a.si = r > 0 ? indices->strides[r - 1] : 0;
    a.total = a.xr.count * a.n;
    a.dt = x->dtype;
    a.descending = c->p.i[0] != 0; /* SORT: descending; TOPK: largest */
    if (a.k > a.n || values->rank != r || indices->rank != r)
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: %s: outputs of rank %d / %d with %lld "
                         "kept do not fit x of rank %d with %lld along the axis", bp_op_name(c->op),
                         (int)values->rank, (int)indices->rank, (long long)a.k, (int)r,
                         (long long)a.n);
    if (a.total == 0 || a.k == 0)
        return BP_OK;
    bp_status pending = caller_error_pending(d);
    if (pending != BP_OK)
        return pending;
    bool wide = key_bits(a.dt) > 32;
    size_t kbytes = (size_t)a.total * (wide || a.xr.count - 1 > 0xffffffffll ? 8 : 4);
    sort_scratch s;
    memset(&s, 0, sizeof s);
    size_t b32 = 0, b64 = 0;
    cudaError_t e = cub_bytes<uint32_t>(a.total, &b32);
    if (e == cudaSuccess)
        e = cub_bytes<uint64_t>(a.total, &b64);
    if (e != cudaSuccess)
        return bpcu_cuda_fail(d, e, "sizing cub::DeviceRadixSort's storage");
    s.tmp_bytes = b32 > b64 ? b32 : b64;
    bp_status st = BP_OK;
    for (int k = 0; k < 2 && st == BP_OK; k++) {
        st = bpcu_scratch(d, kbytes, &s.keys[k]);
        if (st == BP_OK)
            st = bpcu_scratch(d, (size_t)a.total * sizeof(long long), &s.pos[k]);
    }
    if (st == BP_OK)
        st = bpcu_scratch(d, s.tmp_bytes, &s.tmp);
    long long *sorted = NULL;
    if (st == BP_OK)
        st = wide ? sort_positions<uint64_t>(d, a, bpcu_ptr(x), &s, &sorted)
                  : sort_positions<uint32_t>(d, a, bpcu_ptr(x), &s, &sorted);
    if (st == BP_OK)
        st = emit(d, a, sorted, x, values, indices);
    scratch_free(d, &s);
    return st;
}

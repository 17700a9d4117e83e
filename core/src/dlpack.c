/* DLPack exchange (dlpack.h): a backplane tensor lent to another library, and
 * another library's tensor taken, both without a copy when the memory kinds
 * match. Kinds are plugin.h's BP_MEMORY_*, which are DLPack's device types. */
#include <dlpack/dlpack.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* kDLBool appeared in DLPack 0.8; the header here (0.6) predates it. NumPy
 * and PyTorch export bool arrays with it. */
#define BP__DL_BOOL 6

static bool dl_from_dtype(bp_dtype dt, DLDataType *out)
{
    static const struct { bp_dtype dt; uint8_t code, bits; } map[] = {
        {BP_BOOL, BP__DL_BOOL, 8}, {BP_U8, kDLUInt, 8},    {BP_I8, kDLInt, 8},
        {BP_I32, kDLInt, 32},      {BP_I64, kDLInt, 64},   {BP_F16, kDLFloat, 16},
        {BP_BF16, kDLBfloat, 16},  {BP_F32, kDLFloat, 32}, {BP_F64, kDLFloat, 64},
        {BP_I16, kDLInt, 16},      {BP_U16, kDLUInt, 16},  {BP_U32, kDLUInt, 32},
        {BP_U64, kDLUInt, 64},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (map[i].dt == dt) {
            *out = (DLDataType){map[i].code, map[i].bits, 1};
            return true;
        }
    }
    return false;
}

static bool dl_to_dtype(DLDataType d, bp_dtype *out)
{
    for (int dt = 0; dt < BP_DTYPE_COUNT; dt++) {
        DLDataType m;
        if (dl_from_dtype((bp_dtype)dt, &m) && m.code == d.code && m.bits == d.bits &&
            d.lanes == 1) {
            *out = (bp_dtype)dt;
            return true;
        }
    }
    return false;
}

/* ---- lending ----------------------------------------------------------------- */

typedef struct dl_lent {
    DLManagedTensor managed;
    int64_t shape[BP_MAX_RANK];
    bp_tensor *t;
} dl_lent;

static void dl_lent_delete(DLManagedTensor *self)
{
    dl_lent *l = self->manager_ctx;
    bp_tensor_release(l->t);
    free(l);
}

bp_status bp_tensor_to_dlpack(const bp_tensor *t, struct DLManagedTensor **out)
{
    static const char fn[] = "bp_tensor_to_dlpack";
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    BP__TRY(bp__check_input(fn, "t", t));
    bp_backend *b = bp__backend_of(t);
    if (b->graph)
        return bp__graph_read_error(fn, b);
    int32_t kind = BP_MEMORY_HOST, device = 0;
    void *base = NULL;
    if (b->host_addressable) {
        base = b->vt->host_ptr(b->dev, t->storage->buffer);
    } else if (BP__HAS(b->vt, buffer_address)) {
        bp__call_begin();
        bp_status st = bp__plugin_entry_status(
            "buffer_address",
            b->vt->buffer_address(b->dev, t->storage->buffer, &kind, &device, &base));
        if (st != BP_OK)
            return bp__error(st, "%s: backend %s cannot say where the tensor's memory is: %s", fn,
                             b->name, *bp__plugin_detail() ? bp__plugin_detail()
                                                           : bp_status_message(st));
    } else {
        return bp__error(BP_ERR_UNSUPPORTED_OP,
                         "%s: backend %s keeps its memory private, so no other library can "
                         "address it; copy the tensor to a host backend first "
                         "(bp_backend_copy(t, <binary or blas_cpu>, &h)) and export that",
                         fn, b->name);
    }
    BP__TRY(bp_synchronize(b)); /* the consumer may read at once */
    dl_lent *l = calloc(1, sizeof *l);
    if (!l)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    bp__storage *s = t->storage;
    if (!s->lender) /* so that the memory, handed back, shares this storage (exchange.c) */
        bp__exchange_list(s, kind, base, s->bytes + 2 * s->guard);
    DLTensor *d = &l->managed.dl_tensor;
    d->data = (char *)base + t->offset;
    d->device = (DLDevice){(DLDeviceType)kind, device};
    d->ndim = t->rank;
    dl_from_dtype(t->dtype, &d->dtype);
    memcpy(l->shape, t->shape, (size_t)t->rank * sizeof l->shape[0]);
    d->shape = l->shape;
    d->strides = NULL; /* compact, row-major */
    d->byte_offset = 0;
    bp_tensor_retain((bp_tensor *)t);
    l->t = (bp_tensor *)t;
    l->managed.manager_ctx = l;
    l->managed.deleter = dl_lent_delete;
    *out = &l->managed;
    return BP_OK;
}

/* ---- taking ------------------------------------------------------------------- */

static void dl_release(void *ctx)
{
    DLManagedTensor *m = ctx;
    if (m->deleter)
        m->deleter(m);
}

static bool dl_is_host(int32_t kind) { return kind == kDLCPU || kind == kDLCUDAHost; }

static const char *dl_kind_name(int32_t kind)
{
    switch (kind) {
    case kDLCPU: return "host";
    case kDLCUDA: return "CUDA device";
    case kDLCUDAHost: return "CUDA pinned host";
    case kDLROCM: return "ROCm device";
    case kDLCUDAManaged: return "CUDA managed";
    default: return "non-host";
    }
}

/* Whether strides (in elements) are those of a compact row-major tensor;
 * axes of extent 1 may have any stride. */
static bool dl_compact(const DLTensor *d)
{
    if (!d->strides)
        return true;
    int64_t want = 1;
    for (int k = d->ndim - 1; k >= 0; k--) {
        if (d->shape[k] != 1 && d->strides[k] != want)
            return false;
        want *= d->shape[k];
    }
    return true;
}

/* Gather a strided host tensor into dense row-major order. */
static void dl_densify(const DLTensor *d, const char *src, size_t es, char *dst, int64_t numel)
{
    int64_t idx[BP_MAX_RANK] = {0};
    for (int64_t i = 0; i < numel; i++) {
        int64_t off = 0;
        for (int k = 0; k < d->ndim; k++)
            off += idx[k] * d->strides[k];
        memcpy(dst + (size_t)i * es, src + off * (int64_t)es, es);
        for (int k = d->ndim - 1; k >= 0 && ++idx[k] == d->shape[k]; k--)
            idx[k] = 0;
    }
}

static bp_status dl_copy_in(const char *fn, bp_backend *b, bp_dtype dt, const DLTensor *d,
                            const char *src, const int64_t *shape, int64_t numel, bp_tensor **out)
{
    if (dl_compact(d))
        return bp_tensor_from_host(b, dt, d->ndim, shape, src, out);
    size_t es = bp_dtype_size(dt);
    char *dense = malloc(numel > 0 ? (size_t)numel * es : 1);
    if (!dense)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: no host memory to make the tensor dense", fn);
    dl_densify(d, src, es, dense, numel);
    bp_status st = bp_tensor_from_host(b, dt, d->ndim, shape, dense, out);
    free(dense);
    return st;
}

bp_status bp_tensor_from_dlpack(bp_backend *b, struct DLManagedTensor *managed, bp_tensor **out)
{
    static const char fn[] = "bp_tensor_from_dlpack";
    BP__TRY(bp__check_out(fn, out));
    if (!b || !managed)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: backend or managed is NULL", fn);
    const DLTensor *d = &managed->dl_tensor;
    if (d->ndim < 0 || d->ndim > BP_MAX_RANK || (d->ndim > 0 && !d->shape))
        return bp__error(BP_ERR_SHAPE, "%s: the DLPack tensor has %d dimensions (backplane holds "
                         "0..%d)", fn, d->ndim, BP_MAX_RANK);
    bp_dtype dt;
    if (!dl_to_dtype(d->dtype, &dt))
        return bp__error(BP_ERR_DTYPE, "%s: DLPack dtype code %u, %u bits, %u lanes has no "
                         "backplane dtype (int8/32/64, uint8, float16/32/64, bfloat16, bool); "
                         "convert it in its library first",
                         fn, d->dtype.code, d->dtype.bits, d->dtype.lanes);
    int64_t numel;
    size_t nbytes;
    BP__TRY(bp__shape_check(fn, dt, d->ndim, d->shape, &numel, &nbytes));
    int32_t kind = d->device.device_type;
    if (numel == 0) {
        /* nothing to read or share, and data may be NULL (PyTorch's empty
         * tensors): a new empty tensor, of any memory kind */
        BP__TRY(bp_tensor_from_host(b, dt, d->ndim, d->shape, NULL, out));
        dl_release(managed);
        return BP_OK;
    }
    if (!d->data)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: the DLPack tensor has %lld elements but its data pointer is NULL; "
                         "the library that made it handed out a broken tensor",
                         fn, (long long)numel);
    /* the first byte, and (compact) one past the last, computed without wrapping */
    uintptr_t base = (uintptr_t)d->data;
    if (d->byte_offset > UINTPTR_MAX - base ||
        (dl_compact(d) && nbytes > UINTPTR_MAX - base - d->byte_offset))
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: the DLPack tensor's byte_offset %llu (with %zu bytes of data) "
                         "from data %p runs past the end of the address space; the library that "
                         "made it handed out a broken tensor",
                         fn, (unsigned long long)d->byte_offset, nbytes, d->data);
    const char *src = (const char *)d->data + d->byte_offset;
    bool aligned = (uintptr_t)src % bp_dtype_size(dt) == 0;
    if (dl_compact(d) && aligned) {
        bp_status st = bp__tensor_wrap(fn, b, dt, d->ndim, d->shape, kind, (void *)(uintptr_t)src,
                                       dl_release, managed, out);
        if (st != BP_ERR_UNSUPPORTED_OP)
            return st; /* in place (the library now owns managed), or a real failure */
    }
    if (!dl_is_host(kind))
        return bp__error(BP_ERR_BACKEND_MISMATCH,
                         "%s: the DLPack tensor is in %s memory (device %d) but backend %s cannot "
                         "use that memory; move it to the host in its library first (PyTorch: "
                         "t.cpu()), or take it on a backend of that device",
                         fn, dl_kind_name(kind), (int)d->device.device_id, b->name);
    BP__TRY(dl_copy_in(fn, b, dt, d, src, d->shape, numel, out));
    dl_release(managed); /* copied: the other library's memory is no longer needed */
    return BP_OK;
}

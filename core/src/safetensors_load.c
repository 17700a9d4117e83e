/* Loading a tensor of a safetensors file onto a backend: by default the
 * bytes are read with pread (a file that shrank since it was opened is
 * BP_ERR_IO, not SIGBUS) and written to the backend once, after which the
 * tensor no longer depends on the file; bp_safetensors_load_mapped keeps the file's
 * mapped pages as the tensor's buffer on host backends that can use
 * existing memory (nothing is copied, and the file must then not shrink
 * under the tensor: a read of a page past its new end is SIGBUS). */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors_internal.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "safetensors data is little-endian: loading it in place needs a little-endian "
               "machine");

static bp_status st_load(const char *fn, const bp_safetensors *f, const st_entry *e,
                         bp_backend *b, bool mapped, bp_tensor **out)
{
    if (e->dtype < 0)
        return bp__error(BP_ERR_DTYPE,
                         "%s: tensor '%s' of %s is %s, a dtype backplane does not have (it has "
                         "BOOL, U8, I8, I32, I64, F16, BF16, F32, F64); convert the checkpoint "
                         "first",
                         fn, e->name, f->path, e->dtype_name);
    if (e->rank > BP_MAX_RANK)
        return bp__error(BP_ERR_SHAPE, "%s: tensor '%s' of %s has rank %d, above backplane's %d",
                         fn, e->name, f->path, (int)e->rank, BP_MAX_RANK);
    bp_dtype dt = (bp_dtype)e->dtype;
    const char *src = f->data + e->offset;
    if (mapped && b->host_addressable && e->nbytes > 0 &&
        (uintptr_t)src % bp_dtype_size(dt) == 0) {
        atomic_fetch_add(&f->map->refs, 1); /* the tensor's hold on the pages */
        bp_status st = bp__tensor_wrap(fn, b, dt, e->rank, e->shape, BP_MEMORY_HOST,
                                       (void *)(uintptr_t)src, bp__st_map_release, f->map, out);
        if (st == BP_OK)
            return BP_OK;
        bp__st_map_release(f->map);
        if (st != BP_ERR_UNSUPPORTED_OP)
            return st;
    }
    if (e->nbytes == 0)
        return bp_tensor_from_host(b, dt, e->rank, e->shape, src, out);
    void *buf = malloc((size_t)e->nbytes);
    if (!buf)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory reading the %zu bytes of "
                         "tensor '%s' of %s", fn, (size_t)e->nbytes, e->name, f->path);
    char what[96];
    snprintf(what, sizeof what, "tensor '%.*s'", 64, e->name);
    bp_status st = bp__st_read(f, fn, buf, (size_t)e->nbytes, f->data_offset + e->offset, what);
    if (st == BP_OK)
        st = bp_tensor_from_host(b, dt, e->rank, e->shape, buf, out);
    free(buf);
    return st;
}

static bp_status st_entry_for(const char *fn, const bp_safetensors *f, const char *name,
                              bp_backend *b, bp_tensor **out, const st_entry **e)
{
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!f || !name || !b)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                         !f ? "file" : !name ? "name" : "the backend");
    size_t i;
    BP__TRY(bp_safetensors_find(f, name, &i));
    *e = &f->entries[i];
    return BP_OK;
}

bp_status bp_safetensors_load(const bp_safetensors *f, const char *name, bp_backend *b,
                              bp_tensor **out)
{
    static const char fn[] = "bp_safetensors_load";
    const st_entry *e = NULL;
    BP__TRY(st_entry_for(fn, f, name, b, out, &e));
    return st_load(fn, f, e, b, false, out);
}

bp_status bp_safetensors_load_mapped(const bp_safetensors *f, const char *name, bp_backend *b,
                                     bp_tensor **out)
{
    static const char fn[] = "bp_safetensors_load_mapped";
    const st_entry *e = NULL;
    BP__TRY(st_entry_for(fn, f, name, b, out, &e));
    return st_load(fn, f, e, b, true, out);
}

bp_status bp_safetensors_load_expect(const bp_safetensors *f, const char *name, bp_backend *b,
                                     bp_dtype dtype, int32_t rank, const int64_t *shape,
                                     bp_tensor **out)
{
    static const char fn[] = "bp_safetensors_load_expect";
    const st_entry *e = NULL;
    BP__TRY(st_entry_for(fn, f, name, b, out, &e));
    if (rank < 0 || rank > BP_MAX_RANK || (rank > 0 && !shape))
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "bp_safetensors_load_expect: the expected rank %d (shape %s) is invalid",
                         (int)rank, shape ? "given" : "NULL");
    bool same = e->rank == rank;
    for (int32_t k = 0; same && k < rank; k++)
        same = e->shape[k] == shape[k];
    if (!same || e->dtype != (int32_t)dtype) {
        char want[BP__SHAPE_STR_CAP], got[BP__SHAPE_STR_CAP];
        bp__format_shape(rank, shape, want, sizeof want);
        if (e->rank <= BP_MAX_RANK)
            bp__format_shape(e->rank, e->shape, got, sizeof got);
        else
            snprintf(got, sizeof got, "(rank %d)", (int)e->rank);
        const char *stored = bp__st_dtype_name(dtype);
        return bp__error(same ? BP_ERR_DTYPE : BP_ERR_SHAPE,
                         "bp_safetensors_load_expect: tensor '%s' of %s does not fit the model: "
                         "expected %s %s, stored %s %s (a checkpoint of another architecture or "
                         "size?)",
                         name, f->path, stored ? stored : bp_dtype_name(dtype), want,
                         e->dtype_name, got);
    }
    return st_load(fn, f, e, b, false, out);
}

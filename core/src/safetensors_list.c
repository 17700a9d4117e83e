/* What an open safetensors file holds: its tensors and metadata. */
#include <string.h>

#include "safetensors_internal.h"

size_t bp_safetensors_count(const bp_safetensors *f) { return f ? f->n : 0; }

bp_status bp_safetensors_entry_at(const bp_safetensors *f, size_t i, bp_safetensors_entry *out)
{
    if (!f || !out || i >= f->n)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_safetensors_entry_at: bad index %zu", i);
    const st_entry *e = &f->entries[i];
    bp_safetensors_entry r = {
        .struct_size = sizeof r, .name = e->name, .dtype_name = e->dtype_name, .dtype = e->dtype,
        .rank = e->rank, .shape = e->shape, .nbytes = e->nbytes, .offset = e->offset,
    };
    return bp__struct_out("bp_safetensors_entry_at", "bp_safetensors_entry", out,
                          offsetof(bp_safetensors_entry, offset) + sizeof r.offset, &r, sizeof r);
}

bp_status bp_safetensors_find(const bp_safetensors *f, const char *name, size_t *index)
{
    if (!f || !name || !index)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_safetensors_find: NULL argument");
    for (size_t i = 0; i < f->n; i++) {
        if (strcmp(f->entries[i].name, name) == 0) {
            *index = i;
            return BP_OK;
        }
    }
    return bp__error(BP_ERR_NOT_FOUND, "%s holds no tensor named '%s' (%zu tensors; list them "
                     "with `backplane inspect %s`)", f->path, name, f->n, f->path);
}

size_t bp_safetensors_metadata_count(const bp_safetensors *f) { return f ? f->n_meta : 0; }

bp_status bp_safetensors_metadata_at(const bp_safetensors *f, size_t i, const char **key,
                                     const char **value)
{
    if (!f || !key || !value || i >= f->n_meta)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_safetensors_metadata_at: bad index %zu", i);
    *key = f->meta_keys[i];
    *value = f->meta_values[i];
    return BP_OK;
}

/* safetensors files: what the open, list, load and save halves share. */
#ifndef BP_SAFETENSORS_INTERNAL_H
#define BP_SAFETENSORS_INTERNAL_H

#include "internal.h"
#include "backplane/safetensors.h"

/* The file's pages, mapped once and shared by the open file and every
 * tensor loaded from it without a copy; unmapped with the last of them. */
typedef struct bp__st_map {
    atomic_long refs;
    const void *base;
    size_t size;
} bp__st_map;

/* Drop one reference (a wrap release callback, hence the void *). */
void bp__st_map_release(void *map);

typedef struct st_entry {
    char *name;
    const char *dtype_name;  /* static: the safetensors spelling */
    int32_t dtype;           /* bp_dtype, or -1 */
    int32_t rank;
    int64_t *shape;
    uint64_t offset, nbytes; /* within the data */
} st_entry;

struct bp_safetensors {
    char *path;
    int fd;                  /* read with pread by the copying loads; -1 once closed */
    uint64_t data_offset;    /* file offset of the first byte after the header */
    bp__st_map *map;         /* for bp_safetensors_load_mapped alone */
    const char *data;        /* the first byte after the header, in map */
    size_t n;
    st_entry *entries;       /* header order */
    size_t n_meta;
    char **meta_keys, **meta_values;
};

void bp__st_free(bp_safetensors *f);
/* len bytes of f's file from byte at, with pread: BP_ERR_IO naming what
 * (e.g. "tensor 'w'") and fn if the file cannot be read or now ends early. */
bp_status bp__st_read(const bp_safetensors *f, const char *fn, void *dst, size_t len,
                      uint64_t at, const char *what);
/* Whether json (len bytes) starts with a well-formed JSON value, stricter
 * than cJSON wherever they differ; allocates nothing (safetensors_json.c). */
bool bp__st_json_well_formed(const char *json, size_t len);
/* "F32" for BP_F32 etc. */
const char *bp__st_dtype_name(bp_dtype dt);

#endif

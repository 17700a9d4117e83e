/* backplane: checkpoints as safetensors files.
 *
 * Hugging Face's safetensors format: an 8-byte little-endian header length
 * N, N bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]},
 * "__metadata__": {str: str}}, then the tensors' bytes, row-major, little-
 * endian. A checkpoint holds values, never device handles: written from any
 * backend, it loads onto any backend, in this process or another.
 *
 * The dtypes are the library's: BOOL, U8, I8, I16, U16, I32, U32, I64, U64,
 * F16, BF16, F32, F64. A file may hold other safetensors dtypes (F8_E4M3,
 * C64, ...): it opens and lists them, and loading one is BP_ERR_DTYPE naming
 * it. */
#ifndef BACKPLANE_SAFETENSORS_H
#define BACKPLANE_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "export.h"
#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write n tensors, from any backends, to path under the given names, with
 * optional metadata: NULL, or a NULL-terminated list of alternating keys and
 * values ({"step", "100", "model", "mlp", NULL}). Each tensor is read to the
 * host once (a synchronising read) and streamed to a temporary file in
 * path's directory, which is then flushed to disk (fsync) and renamed over
 * path: a crash leaves the old file or the new one, never half of one.
 * Names must be non-empty, distinct and not "__metadata__".
 * Errors: BP_ERR_INVALID_ARGUMENT (names, NULLs, a transferred tensor),
 * BP_ERR_IO naming the path and the reason, backend errors of the reads. */
BP_API bp_status bp_save_safetensors(const char *path, size_t n, const char *const *names,
                                     const bp_tensor *const *tensors,
                                     const char *const *metadata);

typedef struct bp_safetensors bp_safetensors;

/* Open and validate the whole header up front: well-formed JSON, known
 * dtypes, non-negative shapes whose byte size does not overflow, offsets in
 * bounds, contiguous and not overlapping, a file size that matches. Any
 * violation is BP_ERR_FORMAT naming what is wrong and where (the tensor, the
 * field, the byte). The header is read; the file stays open (one file
 * descriptor) for the loads, and mapped for bp_safetensors_load_mapped. */
BP_API bp_status bp_safetensors_open(const char *path, bp_safetensors **out);

/* Close the file; tensors loaded from it stay valid (a tensor from
 * bp_safetensors_load_mapped keeps the mapping alive until it is released).
 * NULL is a no-op. */
BP_API void bp_safetensors_close(bp_safetensors *file);

/* One tensor of the file, in header order. Strings and shape stay valid
 * while the file is open. */
typedef struct bp_safetensors_entry {
    uint32_t struct_size;    /* set by the caller: sizeof(bp_safetensors_entry) */
    const char *name;
    const char *dtype_name;  /* as in the file: "F32", "BF16", "I16"... */
    int32_t dtype;           /* the bp_dtype, or -1 for a dtype backplane lacks */
    int32_t rank;
    const int64_t *shape;
    uint64_t nbytes;         /* data_offsets[1] - data_offsets[0] */
    uint64_t offset;         /* data_offsets[0], from the start of the data */
} bp_safetensors_entry;

BP_API size_t bp_safetensors_count(const bp_safetensors *file);
BP_API bp_status bp_safetensors_entry_at(const bp_safetensors *file, size_t i,
                                         bp_safetensors_entry *out);
/* The index of the tensor `name`; BP_ERR_NOT_FOUND naming the file. */
BP_API bp_status bp_safetensors_find(const bp_safetensors *file, const char *name, size_t *index);

/* The metadata pairs, in file order. */
BP_API size_t bp_safetensors_metadata_count(const bp_safetensors *file);
BP_API bp_status bp_safetensors_metadata_at(const bp_safetensors *file, size_t i,
                                            const char **key, const char **value);

/* Load tensor `name` onto backend b: a copy of the file's bytes (one host
 * -> backend transfer), after which the tensor no longer depends on the
 * file: the file may be truncated, rewritten or removed while the tensor
 * lives. The bytes are read from the open file, so a file that shrank
 * since bp_safetensors_open is BP_ERR_IO naming the tensor (open it again),
 * never a crash. Errors: BP_ERR_NOT_FOUND, BP_ERR_DTYPE (a dtype backplane
 * lacks), BP_ERR_SHAPE (rank above 8), BP_ERR_IO, BP_ERR_OUT_OF_MEMORY. */
BP_API bp_status bp_safetensors_load(const bp_safetensors *file, const char *name, bp_backend *b,
                                     bp_tensor **out);

/* bp_safetensors_load without the copy where it can: on a host-memory
 * backend that uses memory in place (binary, blas_cpu), the tensor IS the
 * file's mapped pages, nothing is copied, and the mapping lives until the
 * tensor is released (closing the file does not end it). Elsewhere, and for
 * a tensor whose bytes are not aligned to its element size, it copies as
 * bp_safetensors_load does.
 * Hazard: truncating the file, or rewriting it in place, while such a
 * tensor lives makes a later read of it SIGBUS (or see the new bytes): the
 * process dies, and no error can be returned. Replacing the file by
 * writing a new one and renaming it over the old, as bp_save_safetensors
 * does, is safe: the tensor keeps the old file's pages. Use it for large
 * read-only checkpoints whose files nothing rewrites in place. */
BP_API bp_status bp_safetensors_load_mapped(const bp_safetensors *file, const char *name,
                                            bp_backend *b, bp_tensor **out);

/* bp_safetensors_load (a copy) for a model whose architecture fixes what
 * it expects: a stored dtype or shape that differs is BP_ERR_SHAPE (or
 * BP_ERR_DTYPE) naming the tensor, the expected shape and the stored one,
 * before anything is loaded. */
BP_API bp_status bp_safetensors_load_expect(const bp_safetensors *file, const char *name,
                                            bp_backend *b, bp_dtype dtype, int32_t rank,
                                            const int64_t *shape, bp_tensor **out);

#ifdef __cplusplus
}
#endif
#endif

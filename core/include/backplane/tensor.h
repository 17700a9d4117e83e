/* backplane: tensors.
 *
 * A tensor is an immutable, reference-counted, dense row-major array on one
 * backend. Every function that makes a tensor returns it with one reference
 * owned by the caller, to be dropped with bp_tensor_release. Functions that
 * take tensors never take ownership. */
#ifndef BACKPLANE_TENSOR_H
#define BACKPLANE_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "dtype.h"
#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bp_tensor bp_tensor;

/* A new tensor on backend holding a copy of `data` (row-major, dtype
 * elements; NULL allowed only when the shape has zero elements). rank 0..8;
 * shape entries >= 0. Errors: BP_ERR_SHAPE (bad rank/extent, size overflow),
 * BP_ERR_DTYPE, BP_ERR_INVALID_ARGUMENT, BP_ERR_OUT_OF_MEMORY, backend errors. */
BP_API bp_status bp_tensor_from_host(bp_backend *backend, bp_dtype dtype, int32_t rank,
                                     const int64_t *shape, const void *data, bp_tensor **out);

/* Copy the tensor's elements (row-major) to dst, which holds dst_bytes bytes;
 * dst_bytes must be at least bp_tensor_nbytes(t). Waits for the work that
 * produces t (a synchronising read: counted in bp_backend_stats, and logged
 * at debug level), and reports an error that work met on the device.
 * Errors: BP_ERR_INVALID_ARGUMENT (too small, NULL, transferred), backend errors. */
BP_API bp_status bp_tensor_to_host(const bp_tensor *t, void *dst, size_t dst_bytes);

/* Add / drop one reference. Release frees at zero; NULL is a no-op. */
BP_API void bp_tensor_retain(bp_tensor *t);
BP_API void bp_tensor_release(bp_tensor *t);

/* Metadata (no error: a NULL t gives 0 / NULL). */
BP_API bp_dtype bp_tensor_dtype(const bp_tensor *t);
BP_API int32_t bp_tensor_rank(const bp_tensor *t);
BP_API const int64_t *bp_tensor_shape(const bp_tensor *t); /* rank entries */
BP_API int64_t bp_tensor_numel(const bp_tensor *t);
BP_API size_t bp_tensor_nbytes(const bp_tensor *t);
BP_API bp_backend *bp_tensor_backend(const bp_tensor *t);
/* False once bp_backend_transfer gave the tensor's data away. */
BP_API bool bp_tensor_is_valid(const bp_tensor *t);

/* The value of a one-element tensor (any rank), converted with the cast
 * rules (a u64 above INT64_MAX gives INT64_MAX from bp_item_i64: read its
 * bits with bp_tensor_to_host). Synchronises. BP_ERR_SHAPE if t does not
 * have exactly one element. */
BP_API bp_status bp_item_f64(const bp_tensor *t, double *out);
BP_API bp_status bp_item_i64(const bp_tensor *t, int64_t *out);
BP_API bp_status bp_item_bool(const bp_tensor *t, bool *out);

/* Metadata-only views sharing t's data. reshape: one entry may be -1.
 * squeeze: n_axes == 0 (axes NULL) drops every size-1 axis, else exactly
 * those, which must have size 1, each listed once (an axis listed twice,
 * as 0 and -rank say, is BP_ERR_SHAPE). unsqueeze: inserts a size-1 axis
 * at `axis` of the result (-rank-1 <= axis <= rank). */
BP_API bp_status bp_reshape(const bp_tensor *t, int32_t rank, const int64_t *shape, bp_tensor **out);
BP_API bp_status bp_squeeze(const bp_tensor *t, int32_t n_axes, const int32_t *axes, bp_tensor **out);
BP_API bp_status bp_unsqueeze(const bp_tensor *t, int32_t axis, bp_tensor **out);

/* An equal tensor on backend `to`; the caller releases it. Tensors are
 * immutable, so copies are free when they can be:
 *  - to t's own backend, *out is t itself with one more reference;
 *  - to a backend t was copied to before, while that copy is still alive,
 *    *out is that copy with one more reference (the copy is remembered
 *    weakly: once every reference to it is released, the next copy
 *    transfers again).
 * Otherwise the data moves: one transfer when either side is host memory,
 * else staged through host memory. bp_backend_stats counts each. Copying
 * off a device backend waits for the work that produces t. Tensors of
 * another bp_context: BP_ERR_BACKEND_MISMATCH (go through host memory). */
BP_API bp_status bp_backend_copy(const bp_tensor *t, bp_backend *to, bp_tensor **out);

/* Like bp_backend_copy, then t gives its data away: t may no longer be used
 * (every call refuses it with BP_ERR_INVALID_ARGUMENT) but must still be
 * released. If no other handle shares t's data, its memory is freed at once;
 * another holder (a bp_reshape view, say) keeps its tensor intact, and then
 * the data was copied, not moved from under it. To t's own backend, *out is
 * a new handle on the same data.
 * A handle that has other references is not given away: t stays valid and
 * the call is a bp_backend_copy. That is the handle bp_backend_copy returned
 * to a second caller (repeated copies share one handle), one that a DLPack
 * export still holds, or one retained with bp_tensor_retain: its other
 * holders keep using it. */
BP_API bp_status bp_backend_transfer(bp_tensor *t, bp_backend *to, bp_tensor **out);

/* ---- testing plugins ------------------------------------------------------ */

/* Surround every tensor buffer the context allocates from now on with `bytes`
 * of a known pattern on each side; bp_tensor_check_guards then tells whether
 * a backend wrote outside a tensor. For plugin testing (the conformance suite
 * uses it); 0 turns it off. bytes must be a multiple of
 * BP_DEBUG_GUARDS_ALIGN (64: every dtype, SIMD loads and GPU accesses stay
 * aligned) and at most BP_DEBUG_GUARDS_MAX (1 MiB); anything else is
 * BP_ERR_INVALID_ARGUMENT. */
#define BP_DEBUG_GUARDS_ALIGN 64
#define BP_DEBUG_GUARDS_MAX (1 << 20)
BP_API bp_status bp_context_set_debug_guards(bp_context *ctx, size_t bytes);

/* BP_ERR_BACKEND naming the backend and the first damaged guard byte if the
 * pattern around t's buffer changed; BP_OK if intact or t has no guards. */
BP_API bp_status bp_tensor_check_guards(const bp_tensor *t);

#ifdef __cplusplus
}
#endif
#endif

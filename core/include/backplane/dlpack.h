/* backplane: handing tensors to other libraries and back through DLPack
 * (the DLManagedTensor of dlpack/dlpack.h, DLPACK_VERSION 60: NumPy's
 * from_dlpack and __dlpack__, PyTorch's torch.from_dlpack / to_dlpack).
 * Include <dlpack/dlpack.h> (Debian: libdlpack-dev) to use the struct; this
 * header only names it. Exchange is zero-copy whenever the memory kinds
 * match: host memory for binary and blas_cpu, CUDA memory for cuda. */
#ifndef BACKPLANE_DLPACK_H
#define BACKPLANE_DLPACK_H

#include "context.h"
#include "export.h"
#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

struct DLManagedTensor;

/* t as a DLPack tensor, without a copy: the DLPack data is t's memory, and
 * the managed tensor holds a reference to t until its deleter is called
 * (the consumer calls it when done; so must the caller if no consumer
 * takes it). Compact row-major (strides NULL). Waits for the work that
 * produces t, since the consumer may read at once. The consumer must not
 * write to the memory: backplane tensors are immutable. A backend whose
 * memory another library cannot address (no host memory, no device
 * address): BP_ERR_UNSUPPORTED_OP, saying to bp_backend_copy it to a host
 * backend first. bool is exported as DLPack's kDLBool (code 6, bits 8). */
BP_API bp_status bp_tensor_to_dlpack(const bp_tensor *t, struct DLManagedTensor **out);

/* A tensor on backend from another library's DLPack tensor. On success the
 * library owns managed and calls its deleter once it no longer needs the
 * memory; on failure the caller still owns it. Zero copy when the memory is
 * of a kind the backend uses in place (host memory on binary and blas_cpu),
 * compact row-major and aligned to its element size: the tensor then IS the
 * other library's memory: what either side writes, the other sees. Do not
 * change it while an op that reads it runs; between calls you may (a
 * graph's plan reads a captured tensor anew at each bp_graph_run).
 * A strided tensor in host memory is copied into a dense one; host memory
 * going to a device backend is copied in. Memory of another kind (CUDA
 * memory for a host backend): BP_ERR_BACKEND_MISMATCH naming both and the
 * fix. A tensor of no elements becomes a new empty tensor on backend,
 * whatever its memory kind, and its data may be NULL (as PyTorch hands
 * them out); one with elements and NULL data, or whose byte_offset runs
 * past the end of the address space: BP_ERR_INVALID_ARGUMENT. dtypes:
 * int8/32/64, uint8, float16/32/64, bfloat16, bool (kDLBool); others:
 * BP_ERR_DTYPE. */
BP_API bp_status bp_tensor_from_dlpack(bp_backend *backend, struct DLManagedTensor *managed,
                                       bp_tensor **out);

#ifdef __cplusplus
}
#endif
#endif

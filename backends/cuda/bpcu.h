/* The cuda backend: private declarations shared by its files.
 *
 * Files, one concern each (as the binary backend):
 *   plugin.cu      the descriptor and supports()
 *   config.c       [backend.cuda]: the keys and their parsing (plain C)
 *   open.cu        open/close: driver, devices, the compute-capability decision
 *   probe.cu       the probe kernel that proves a decision
 *   device.cu      device_open/close: stream, memory pool, cuBLAS, staging
 *   memory.cu      alloc, free, memory_info, scratch
 *   transfer.cu    write, read, synchronize (host <-> device staging)
 *   errors.cu      error reporting and the discipline of every entry
 *   index.h/.c     collapsing views, launch geometry;  elem.h  element types
 *   elementwise.cu copy.cu creation.cu gather.cu reduce.cu softmax.cu matmul.cu
 *                  the op entries
 *
 * A buffer handle is a small host struct (bpcu_buf) holding the device
 * pointer, so zero-byte buffers still get unique handles and memory_info can
 * count bytes without asking the driver. Every op is queued on the device's
 * stream and returns at once; read() and synchronize() wait, and report any
 * error of the queued work there with CUDA's text.
 *
 * Kernels follow the binary backend's arithmetic exactly: the dtype.h and
 * philox.h helpers are compiled for the device too, f16/bf16 compute in f32
 * (math functions in f64) and round once, integers wrap, casts saturate. The
 * plugin is compiled with --fmad=false so a*b+c rounds twice, as in C. */
#ifndef BPCU_H
#define BPCU_H

#include <atomic>
#include <cstdint>
#include <mutex>
#include <type_traits>

/* plugin.h (dtype.h) first: its locals named `half` would shadow cuda_fp16.h's
 * type of that name (-Wshadow) if cuBLAS's headers came first. */
#include <backplane/cast.h>
#include <backplane/plugin.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "cc_check.h"
#include "index.h"

/* ---- state ---------------------------------------------------------------- */

typedef struct bpcu_buf {
    void *ptr;                     /* device memory; NULL for 0 bytes */
    size_t bytes;
} bpcu_buf;

#define BPCU_STAGE_BYTES ((size_t)8 << 20) /* each of the two pinned staging buffers */

typedef struct bpcu_device {
    const bp_host_api *host;
    int ordinal;                   /* CUDA device number */
    bool tf32;
    cudaStream_t stream;
    cudaMemPool_t pool;
    uint64_t cap;                  /* memory_fraction of the device's memory */
    std::atomic<uint64_t> used;
    cublasHandle_t blas;
    std::mutex blas_mu;            /* one cuBLAS call at a time on this handle */
    std::mutex stage_mu;           /* the staging buffers */
    void *stage[2];
    cudaEvent_t stage_done[2];     /* the last copy through stage[k] is done */
} bpcu_device;

/* ---- errors and entries: errors.cu ------------------------------------------- */

/* Report an error detail through the host and return code. */
bp_status bpcu_fail(bpcu_device *d, bp_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* After queuing work: a launch error (or an earlier asynchronous one) as
 * BP_ERR_BACKEND naming what, else BP_OK. */
bp_status bpcu_check_launch(bpcu_device *d, const char *what);

/* Make the calling thread's current device d's. */
bp_status bpcu_enter(bpcu_device *d);

/* ---- views and scratch --------------------------------------------------------- */

static inline char *bpcu_ptr(const bp_view *v)
{
    const bpcu_buf *b = (const bpcu_buf *)v->buffer;
    return b && b->ptr ? (char *)b->ptr + v->offset : NULL;
}

/* Device scratch on d's stream (stream-ordered; free it the same way): memory.cu. */
bp_status bpcu_scratch(bpcu_device *d, size_t bytes, void **p);
void bpcu_scratch_free(bpcu_device *d, void *p);

/* A same-dtype strided copy of src into out on d's stream (copy.cu; matmul
 * densifies operands with it). */
bp_status bpcu_copy_view(bpcu_device *d, const bp_view *src, const bp_view *out);

/* ---- the plugin entries (see plugin.h for each contract) ---------------------- */
/* memory.cu, transfer.cu */
bp_status bpcu_alloc(void *dev, size_t bytes, void **buffer);
void bpcu_free(void *dev, void *buffer);
bp_status bpcu_memory_info(void *dev, bp_memory_info *info);
bp_status bpcu_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes);
bp_status bpcu_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes);
bp_status bpcu_synchronize(void *dev);
/* elementwise.cu, copy.cu, creation.cu, gather.cu */
bp_status bpcu_unary(void *dev, bp_op op, const bp_view *x, const bp_view *out);
bp_status bpcu_binary(void *dev, bp_op op, const bp_view *a, const bp_view *b, const bp_view *out);
bp_status bpcu_where(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
                     const bp_view *out);
bp_status bpcu_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out);
bp_status bpcu_fill(void *dev, const bp_view *out, const void *value);
bp_status bpcu_arange(void *dev, double start, double step, const bp_view *out);
bp_status bpcu_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                      const bp_view *out);
bp_status bpcu_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                      const bp_view *out);
/* reduce.cu, softmax.cu, matmul.cu */
bp_status bpcu_reduce(void *dev, bp_op op, const bp_view *x, int32_t n_reduce, const bp_view *out);
bp_status bpcu_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out);
bp_status bpcu_matmul(void *dev, const bp_view *a, const bp_view *b, const bp_view *out);

#endif

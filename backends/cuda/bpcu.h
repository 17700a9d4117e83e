/* The cuda backend: private declarations shared by its files.
 *
 * Files, one concern each (as the reference kernels, backends/kernels):
 *   plugin.cu      the descriptor and supports()
 *   config.c       [backend.cuda]: the keys and their parsing (plain C)
 *   open.cu        open/close: driver, devices, the compute-capability decision
 *   probe.cu       the probe kernel that proves a decision
 *   device.cu      device_open/close: streams, memory pool, cuBLAS, staging
 *   memory.cu      alloc, free, memory_info, scratch
 *   transfer.cu    write, read, synchronize (host <-> device staging)
 *   errors.cu      error reporting, lost devices and the discipline of every entry
 *   host_copy.cu   staging memcpys on a few threads
 *   index.h/.c     collapsing views, launch geometry;  elem.h  element types
 *   support.c      which op runs for which dtype: the op table's rows less a
 *                  list of gaps (plain C)
 *   op.cu          the op entry: every op, routed by its kind
 *   elementwise.cu clip.cu copy.cu creation.cu gather.cu reduce.cu softmax.cu
 *   matmul.cu hardmax.cu scan.cu sort.cu trilu.cu one_hot.cu scatter.cu gemm.cu
 *                  the ops, one function per kind (bpcu_op_* take the op
 *                  entry's call record; where, matmul, copies, gather,
 *                  softmax and the creation ops keep typed functions that
 *                  other kernels reuse), each switching on the op code
 *   conv.cu  conv_transpose.cu  conv_gemm.cu  pool.cu  lrn.cu  norm.cu  loss.cu
 *   resize.cu      nn.h's ops (what they share: nn_common.h)
 *   dnn.h/dnn.cu   cuDNN, opened at the first convolution: the convolutions'
 *                  fast path (the im2col path of conv.cu stays for the rest)
 *   checks.cu      index bounds checked on the device, reported by deferred_error
 *   exchange.cu    wrap and buffer_address: other libraries' CUDA memory (DLPack)
 *
 * A buffer handle is a small host struct (bpcu_buf) holding the device
 * pointer, so zero-byte buffers still get unique handles and memory_info can
 * count bytes without asking the driver. Every op is queued on the device's
 * stream and returns at once; read() and synchronize() wait, and report any
 * error of the queued work there with CUDA's text. A sticky error (the
 * context cannot recover) marks the device lost: every later call fails
 * fast with one message naming where it surfaced.
 *
 * Kernels follow the reference kernels' arithmetic exactly: the dtype.h and
 * philox.h helpers are compiled for the device too, f16/bf16 compute in f32
 * (math functions in f64) and round once, integers wrap, casts saturate. The
 * plugin is compiled with --fmad=false so a*b+c rounds twice, as in C. */
#ifndef BPCU_H
#define BPCU_H

#include <atomic>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <type_traits>
#include <utility>

/* plugin.h (dtype.h) first: its locals named `half` would shadow cuda_fp16.h's
 * type of that name (-Wshadow) if cuBLAS's headers came first. */
#include <backplane/cast.h>
#include <backplane/plugin.h>

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include "cc_check.h"
#include "host_copy.h"
#include "index.h"
#include "support.h"

/* ---- state ---------------------------------------------------------------- */

/* A buffer's device memory is allocated at its first use (transfer.cu says
 * why): on the compute stream by the op that produces it, on the upload
 * stream by a write. */
typedef struct bpcu_buf {
    void *ptr;                     /* device memory; NULL before the first use and for 0 bytes */
    size_t bytes;
    cudaEvent_t ready;             /* recorded after the last queued work that writes ptr */
    /* wrapped memory (exchange.cu): another library's, given back through
     * release(release_ctx) once the work queued on it has ended */
    void (*release)(void *);
    void *release_ctx;
    bool wrapped;
} bpcu_buf;

#define BPCU_STAGE_BYTES ((size_t)8 << 20) /* each of a direction's two pinned buffers */

/* One direction of host transfers: its stream and two pinned buffers. */
typedef struct bpcu_stage {
    std::mutex mu;                 /* one transfer at a time per direction */
    cudaStream_t stream;
    void *buf[2];
    cudaEvent_t done[2];           /* recorded right after the last DMA through buf[k] */
} bpcu_stage;

#define BPCU_SPARE_EVENTS 256      /* buffer events kept for reuse */

/* One index-checking op's result (checks.cu), written by the device into
 * mapped pinned memory that the host reads once the op's event completed. */
typedef struct bpcu_ixerr {
    unsigned long long pos;        /* the first bad index's flat position in indices */
    long long value, extent;       /* its value, and the extent it must lie within */
    int axis;                      /* the axis of x it indexes */
    int set;                       /* 1: an index was out of range; 0: none */
} bpcu_ixerr;

#define BPCU_CHECK_SLOTS 256       /* index-checking ops in flight before one is waited for */

/* The device's index checks and the deferred error they produce. Slots are
 * used in queue order (a ring: head is the oldest in flight, tail the next
 * free); the mutex is held from taking a slot to recording its event, so
 * the ring's order is the stream's. */
typedef struct bpcu_checks {
    std::mutex mu;
    bpcu_ixerr *host;              /* BPCU_CHECK_SLOTS results, mapped pinned memory */
    bpcu_ixerr *dev;               /* the same memory, as the device addresses it */
    unsigned long long *bad;       /* device memory: per slot, the smallest bad position */
    cudaEvent_t done[BPCU_CHECK_SLOTS]; /* recorded behind each slot's commit */
    bp_op op[BPCU_CHECK_SLOTS];    /* which op used the slot */
    signed char labels[BPCU_CHECK_SLOTS]; /* 0 indices; 1 class labels; 2 the same, ignore_index given */
    uint64_t head, tail;
    bp_status status;              /* the deferred error (BP_OK: none) ... */
    char msg[512];                 /* ... and its message */
} bpcu_checks;

/* Wrapped buffers freed while work using them may still be queued: their
 * release waits for the event (exchange.cu). */
typedef struct bpcu_release {
    struct bpcu_release *next;
    cudaEvent_t after;             /* NULL: recording failed; released once the stream is idle */
    void (*release)(void *);
    void *ctx;
} bpcu_release;
#define BPCU_RECENT 8                      /* op names kept for a lost-device report */

typedef struct bpcu_device {
    const bp_host_api *host;
    int ordinal;                   /* CUDA device number */
    bool tf32;
    CUcontext ctx;                 /* the device's primary context (retained) */
    cudaStream_t stream;           /* the compute stream: every op */
    bool pooled;                   /* memory pools supported: else cudaMalloc / cudaFree */
    cudaMemPool_t pool;
    uint64_t keep;                 /* bytes bp_backend_synchronize trims the pool to */
    uint64_t cap;                  /* memory_fraction of the device's memory */
    std::atomic<uint64_t> used;    /* bytes of live buffers (and of frees that failed) */
    int smem_optin;                /* shared memory a block may opt in to (bytes) */
    bool cudnn;                    /* [backend.cuda] cudnn = auto: convolutions may use it */
    std::mutex dnn_mu;             /* the cuDNN handle and its algorithm cache (dnn.cu) */
    struct bpdnn_state *dnn;       /* made at the first convolution; NULL before */
    cublasHandle_t blas;
    std::mutex blas_mu;            /* one cuBLAS call at a time on this handle */
    bpcu_stage up, down;           /* host -> device, device -> host */
    bpcu_copier copier;            /* staging memcpys on several threads */
    std::mutex spare_mu;           /* buffer events for reuse */
    cudaEvent_t spare[BPCU_SPARE_EVENTS];
    int nspare;
    /* A sticky CUDA error (errors.cu): once lost, every entry fails with lost_msg. */
    std::atomic<bool> lost;
    std::mutex lost_mu;            /* guards lost_msg and recent */
    char lost_msg[1024];
    const char *recent[BPCU_RECENT]; /* ops queued since the last successful synchronisation */
    uint64_t nrecent;
    bpcu_checks checks;            /* index checks on the device (checks.cu) */
    std::mutex release_mu;         /* guards releases */
    bpcu_release *releases;        /* wrapped buffers waiting to be given back */
} bpcu_device;

/* ---- errors and entries: errors.cu ------------------------------------------- */

/* Report an error detail through the host and return code. */
bp_status bpcu_fail(bpcu_device *d, bp_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A failed CUDA call of the current entry: the detail (fmt, then CUDA's
 * name and text for e) and its status. An error CUDA documents as sticky
 * marks d lost (the message names the entry it surfaced in and the ops
 * queued before it) and every later entry fails with that message. */
bp_status bpcu_cuda_fail(bpcu_device *d, cudaError_t e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Mark d lost if e is sticky (without reporting anything); true if so. For
 * the entries that cannot return an error (free). */
bool bpcu_note_lost(bpcu_device *d, cudaError_t e);

/* A launch's status (from bpcu_launch) as BP_OK or bpcu_cuda_fail's. */
static inline bp_status bpcu_launched(bpcu_device *d, cudaError_t e, const char *what)
{
    return e == cudaSuccess ? BP_OK : bpcu_cuda_fail(d, e, "%s", what);
}

/* A successful synchronisation: ops queued so far are known to be fine. */
void bpcu_synced(bpcu_device *d);

/* The caller's current CUDA context, put back when this goes out of scope
 * (exactly, NULL included: cudaSetDevice could not restore "none"), and the
 * caller's last-error slot left as the caller left it (for the lifecycle
 * entries, which have no device yet; bpcu_scope does both for the others). */
class bpcu_ctx_guard {
  public:
    bpcu_ctx_guard();
    ~bpcu_ctx_guard();
    bpcu_ctx_guard(const bpcu_ctx_guard &) = delete;
    bpcu_ctx_guard &operator=(const bpcu_ctx_guard &) = delete;

  private:
    CUcontext saved_;
    bool have_, clean_;
};

/* What every device entry does first and last (errors.cu says why):
 *
 *     bpcu_scope in(d, "matmul", out, {a, b});
 *     if (in.status != BP_OK)
 *         return in.status;
 *
 * fails fast when d is lost, makes d's context current and puts the
 * caller's back, and leaves the caller's pending CUDA error alone. An op
 * names its output and inputs: their memory is allocated on the compute
 * stream if it was not yet (memory.cu), and the output's ready event is
 * recorded behind the op's work when the scope ends. */
class bpcu_scope {
  public:
    /* buffer entries; queues: the entry queues device work (a write),
     * named in a lost-device report */
    bpcu_scope(bpcu_device *d, const char *op, bool queues);
    /* op entries (out2, out3: further outputs, or NULL; NULL inputs are skipped) */
    bpcu_scope(bpcu_device *d, const char *op, const bp_view *out,
               std::initializer_list<const bp_view *> inputs, const bp_view *out2 = NULL,
               const bp_view *out3 = NULL);
    ~bpcu_scope();
    bpcu_scope(const bpcu_scope &) = delete;
    bpcu_scope &operator=(const bpcu_scope &) = delete;
    bp_status status;

  private:
    void enter(const char *op, bool queues);
    bpcu_device *d_;
    bpcu_buf *outs_[3];
    CUcontext saved_;
    bool switched_, clean_;
    const char *outer_op_;
};

/* The driver calls the plugin needs, found through the runtime (so the
 * plugin does not link libcuda): NULL members if unavailable. */
typedef struct bpcu_driver {
    CUresult (*ctx_get)(CUcontext *);
    CUresult (*ctx_set)(CUcontext);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*primary_retain)(CUcontext *, CUdevice);
    CUresult (*primary_release)(CUdevice);
} bpcu_driver;
const bpcu_driver *bpcu_driver_api(void);

#ifdef __CUDACC__
/* Queue kernel k on stream s; returns the launch's own status (and never
 * reads the thread's last-error slot, which belongs to the caller). */
template <class... P, class... A>
static inline cudaError_t bpcu_launch(cudaStream_t s, dim3 grid, dim3 block, size_t smem,
                                      void (*k)(P...), A &&...args)
{
    cudaLaunchConfig_t c = cudaLaunchConfig_t(); /* zeroed: no attributes */
    c.gridDim = grid;
    c.blockDim = block;
    c.dynamicSmemBytes = smem;
    c.stream = s;
    return cudaLaunchKernelEx(&c, k, std::forward<A>(args)...);
}

/* Rows of `units` words each, for kernels with blockDim (32, 8): x's
 * lanes walk a row, y's warps the rows, grid-stride beyond the caps. */
static inline dim3 bpcu_rows_grid(int64_t rows, int64_t units)
{
    int64_t gx = (units + 31) / 32, gy = (rows + 7) / 8;
    gx = gx < 1 ? 1 : gx > 1024 ? 1024 : gx;
    gy = gy < 1 ? 1 : gy > 65535 ? 65535 : gy;
    if (gx * gy > ((int64_t)1 << 18))
        gy = ((int64_t)1 << 18) / gx < 1 ? 1 : ((int64_t)1 << 18) / gx;
    return dim3((unsigned)gx, (unsigned)gy);
}

/* The widest word (16, 8, 4, 2 or 1 bytes) that divides every value of
 * v[0..n) (byte counts, strides and addresses). */
static inline int bpcu_word_bytes(const int64_t *v, int n)
{
    int64_t all = 16;
    for (int k = 0; k < n; k++)
        all |= v[k];
    return (int)(all & -all); /* the lowest set bit: 16 at most */
}
#endif

/* ---- views and scratch --------------------------------------------------------- */

static inline char *bpcu_ptr(const bp_view *v)
{
    const bpcu_buf *b = (const bpcu_buf *)v->buffer;
    return b && b->ptr ? (char *)b->ptr + v->offset : NULL;
}

/* Device scratch on d's stream (stream-ordered; free it the same way): memory.cu. */
bp_status bpcu_scratch(bpcu_device *d, size_t bytes, void **p);
void bpcu_scratch_free(bpcu_device *d, void *p);

/* Return the pool's cached memory beyond pool_keep_mb to the device. */
bp_status bpcu_pool_trim(bpcu_device *d);

/* b's device memory, allocated in stream s's order if b has none yet. */
bp_status bpcu_materialize(bpcu_device *d, bpcu_buf *b, cudaStream_t s);

/* Record b's ready event in stream s, behind the work just queued there
 * that writes b. */
cudaError_t bpcu_mark_written(bpcu_device *d, bpcu_buf *b, cudaStream_t s);

/* The device's cuDNN handle and algorithm cache, if a convolution made
 * them (dnn.cu; device close, with the device's context current). */
void bpcu_dnn_close(bpcu_device *d);

/* Destroy the spare ready events (device close). */
void bpcu_events_destroy(bpcu_device *d);

/* A same-dtype strided copy of src into out on d's stream (copy.cu; matmul
 * densifies operands with it). */
bp_status bpcu_copy_view(bpcu_device *d, const bp_view *src, const bp_view *out);

/* A dense row-major copy of v in new scratch (buf->ptr, to be freed with
 * bpcu_scratch_free), described by *dense (matmul.cu). */
bp_status bpcu_densify(bpcu_device *d, const bp_view *v, bpcu_buf *buf, bp_view *dense);

/* A rows x cols matrix with element strides (rs, cs) as a cuBLAS operand of
 * a row-major product computed column-major: op N with ld = rs (row-major
 * data) or op T with ld = cs (column-major data); false if neither fits
 * (matmul.cu). */
bool bpcu_matrix_form(int64_t rows, int64_t cols, int64_t rs, int64_t cs, cublasOperation_t *op,
                      int64_t *ld);

/* A cuBLAS call's failure as a bp_status: a sticky error of earlier work
 * (which makes cuBLAS fail too) is named as such (matmul.cu). */
bp_status bpcu_blas_fail(bpcu_device *d, cublasStatus_t bs, const char *what);

/* The reductions a running accumulator folds (sum, prod, mean, max, min,
 * argmax, argmin, logsumexp) without an entry's scope (reduce.cu): the
 * REDUCE kind's path for them, and ops that reduce into scratch (hardmax). */
bp_status bpcu_reduce_run(bpcu_device *d, bp_op op, const bp_view *x, int32_t n_reduce,
                          const bp_view *out);

/* Index checks (checks.cu): create and destroy a device's, harvest the
 * finished ones (waiting for all with wait). */
cudaError_t bpcu_checks_create(bpcu_device *d);
void bpcu_checks_destroy(bpcu_device *d);

/* free() of a wrapped buffer (exchange.cu): its memory is given back once
 * the work queued before the free has ended. */
void bpcu_release_wrapped(bpcu_device *d, bpcu_buf *b);

/* Give back wrapped memory whose queued work has ended (exchange.cu);
 * wait: wait for that work first (device close). */
void bpcu_releases_run(bpcu_device *d, bool wait);

/* ---- the plugin entries (see plugin.h for each contract) ---------------------- */
/* memory.cu, transfer.cu */
bp_status bpcu_alloc(void *dev, size_t bytes, void **buffer);
void bpcu_free(void *dev, void *buffer);
bp_status bpcu_memory_info(void *dev, bp_memory_info *info);
bp_status bpcu_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes);
bp_status bpcu_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes);
bp_status bpcu_synchronize(void *dev);
/* The typed functions of the kinds that keep them, each with its own scope
 * (elementwise.cu, copy.cu, creation.cu, gather.cu, softmax.cu, matmul.cu) */
bp_status bpcu_where(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
                     const bp_view *out);
bp_status bpcu_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out);
bp_status bpcu_fill(void *dev, const bp_view *out, const void *value);
bp_status bpcu_arange(void *dev, double start, double step, const bp_view *out);
bp_status bpcu_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                      const bp_view *out);
bp_status bpcu_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                      const bp_view *out);
bp_status bpcu_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out);
bp_status bpcu_matmul(void *dev, const bp_view *a, const bp_view *b, const bp_view *out);
/* checks.cu, exchange.cu (ABI 1.2, 1.3) */
bp_status bpcu_deferred_error(void *dev);
bp_status bpcu_wrap(void *dev, int32_t kind, void *memory, size_t bytes, void (*release)(void *),
                    void *release_ctx, void **buffer);
bp_status bpcu_buffer_address(void *dev, void *buffer, int32_t *kind, int32_t *device_id,
                              void **address);
/* op.cu: the op entry, every op */
bp_status bpcu_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                  const bp_view *const *in, int32_t n_out, const bp_view *const *out);

#endif

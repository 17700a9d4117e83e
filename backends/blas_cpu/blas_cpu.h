/* The blas_cpu backend: private declarations.
 *
 * The arithmetic is the binary backend's: its reference kernels (kernels.h,
 * linked in as the static library bp_kernels) are the spec and run
 * here unchanged. What blas_cpu adds around them:
 *  - split.c: threads by splitting VIEWS. A large call's output (and the
 *    matching input views) is cut into contiguous slabs along one axis and
 *    the slabs go to the reference kernel on the threads of a pool (pool.c),
 *    so every element is computed by the same code as in the binary backend;
 *  - matmul.c: OpenBLAS sgemm/dgemm for f32/f64;
 *  - alloc.c: a caching allocator (freed buffers are reused, no page faults);
 *  - vmath.c, vpow.c, vmath_fma.c: vectorised overrides for the f32/f64
 *    math functions, softmax and dense row reductions (documented
 *    tolerances, see vmath.h), compiled per instruction level; simd.c picks
 *    the level a device runs. */
#ifndef BPC_BLAS_CPU_H
#define BPC_BLAS_CPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <backplane/plugin.h>

#include "kernels.h"

/* Size classes of the buffer cache: 4 per power of two from 64 B to 2^47 B. */
#define BPC_CLASSES 176

typedef struct bpc_cache {
    pthread_mutex_t lock;
    void *head[BPC_CLASSES];    /* free blocks, linked through their header */
    uint64_t cached;            /* bytes held in the lists */
    uint64_t limit;             /* the most bytes the lists may hold */
} bpc_cache;

/* OpenBLAS on one thread (its thread count is process-wide), set before
 * the first BLAS call: blas_cpu cuts its gemms into blocks for its own pool
 * (plugin.c). */
void bpc_blas_one_thread(void);

/* ---- the thread pool: pool.c ------------------------------------------- */
typedef struct bpc_pool bpc_pool;
typedef void (*bpc_item_fn)(void *ctx, int64_t item);
/* workers: threads besides the caller (threads - 1). */
bp_status bpc_pool_create(int workers, bpc_pool **out);
void bpc_pool_destroy(bpc_pool *p);
/* fn(ctx, i) for every i in [0, n), on the caller and up to team - 1
 * workers; returns when all are done. */
void bpc_pool_run(bpc_pool *p, int team, int64_t n, bpc_item_fn fn, void *ctx);

/* One device: the host. It starts with a bpk_dev so that the reference
 * kernels (and bpk_fail) can be handed this device as their own. */
typedef struct bpc_vmath bpc_vmath;

typedef struct bpc_dev {
    bpk_dev base;
    int threads;                /* team size (and OpenBLAS's threads) */
    const bpc_vmath *vm;        /* the vector kernels of the chosen level (vmath.h) */
    bool conv_direct_in_place;  /* convolutions whose GEMM reads x in place (1x1 kernels,
                                 * kernels along one axis) run direct too (plugin.c) */
    bool conv_direct_in_place_grouped; /* those of more than one group too */
    bpc_pool *pool;
    bpc_cache cache;
    _Atomic uint64_t used;      /* bytes of live buffers (requested sizes) */
    bpk_wraps wraps;            /* buffers that are someone else's memory */
    /* heavy unary ops on f16 ([0]) and bf16 ([1]): the elements seen so
     * far, and once that reaches BPC_HALF_TABLE_AFTER, the op's result for
     * every one of the 65536 inputs (ops.c) */
    _Atomic int64_t half_seen[2][BP_OP_COUNT];
    _Atomic(uint16_t *) half_table[2][BP_OP_COUNT];
} bpc_dev;

/* Elements of one heavy half-float op a device computes directly before it
 * makes that op's table: making it costs about as much as computing this
 * many, so the table at most doubles the work of a device that then stops. */
#define BPC_HALF_TABLE_AFTER ((int64_t)1 << 16)
/* The tables' memory, freed when the device closes: ops.c */
void bpc_half_tables_free(bpc_dev *d);

/* ---- splitting views across threads: split.c --------------------------- */

/* Work (in "simple element" units) below which a call stays on the calling
 * thread: a parallel region costs a few microseconds, about what one core
 * needs for this many adds. Transcendental elements count BPC_HEAVY each. */
#define BPC_GRAIN ((int64_t)1 << 16)
/* How long a pool thread watches for the next job (or the caller for its
 * workers to finish) before it sleeps: pool.c. */
#define BPC_SPIN_NS 50000
#define BPC_HEAVY 16
#define BPC_MAX_VIEWS 4
#define BPC_MAX_TEAM 256
/* Slabs per thread (fewer when a slab would do less than BPC_GRAIN work). */
#define BPC_SLABS_PER_THREAD 8
#define BPC_MAX_SLABS 2048

/* One slab: the views of the call cut to rows [lo, hi) of the split axis. */
typedef bp_status (*bpc_slab_fn)(bpc_dev *dev, const void *args, const bp_view *slab, int64_t lo,
                                 int64_t hi);

/* Runs fn over the views v[0..n) (v[0] the output), either once on the
 * calling thread (work < BPC_GRAIN, one thread, or no axis to cut) or over
 * slabs on the pool.
 *   - axes [0, n_axes) of the output may be cut; vax[j][k] is the axis of
 *     v[j] that runs along output axis k (-1: v[j] is passed whole);
 *     vax NULL means the same axis in every view (shapes are equal);
 *   - leading: only the first axis of extent > 1 may be cut, so each slab is
 *     a range of the output's row-major order (random draws need that).
 * fn's statuses are collected; the first failure is returned, its message
 * re-made on the calling thread (host->set_error is per thread). */
bp_status bpc_split(bpc_dev *dev, int n, const bp_view *const *v, int32_t n_axes,
                    const int32_t (*vax)[BP_MAX_RANK], bool leading, int64_t work, bpc_slab_fn fn,
                    const void *args);

/* The team for `work` (1: stay on the calling thread), and how many slabs
 * (>= team) to cut an axis of `extent` into. */
int bpc_team(const bpc_dev *dev, int64_t work);
int bpc_slabs(int team, int64_t extent, int64_t work);

/* ---- buffers: alloc.c --------------------------------------------------- */
void bpc_cache_init(bpc_cache *c, uint64_t limit);
void bpc_cache_drain(bpc_cache *c);
bp_status bpc_alloc(void *dev, size_t bytes, void **buffer);
void bpc_free(void *dev, void *buffer);

/* ---- entries ------------------------------------------------------------ */
/* ops.c: the reference kernels over slabs, with the vmath overrides.
 * bpc_unary, bpc_binary and bpc_reduce take every op of their kind. */
bp_status bpc_unary(void *dev, bp_op op, const bp_op_params *p, const bp_view *x,
                    const bp_view *out);
bp_status bpc_binary(void *dev, bp_op op, const bp_op_params *p, const bp_view *a,
                     const bp_view *b, const bp_view *out);
bp_status bpc_where(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
                    const bp_view *out);
bp_status bpc_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out);
bp_status bpc_fill(void *dev, const bp_view *out, const void *value);
bp_status bpc_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                     const bp_view *out);
bp_status bpc_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                     const bp_view *out);
bp_status bpc_reduce(void *dev, bp_op op, const bp_op_params *p, const bp_view *x,
                     const bp_view *out);
bp_status bpc_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out);
/* One block of an elementwise op (the UNARY, BINARY and WHERE kinds, and
 * CAST) on the calling thread, by the kernel its eager call runs on each
 * slab: so a fused group's results have eager's bits (fused.c). */
bp_status bpc_elementwise_block(bpc_dev *d, bp_op op, const bp_op_params *p,
                                const bp_view *const *in, const bp_view *out);
/* A reduction (the REDUCE kind) on the calling thread, by the kernels a
 * slab of its eager call runs: each output row has eager's bits (fused.c's
 * groups that end in one). */
bp_status bpc_reduce_block(bpc_dev *d, bp_op op, const bp_op_params *p, const bp_view *x,
                           const bp_view *out);
/* Its cost per element in BPC_GRAIN units, as the eager call counts it. */
int64_t bpc_elementwise_weight(bp_op op, bp_dtype dt);
/* fused.c: plugin ABI 1.9's fused groups, in cache-sized blocks */
bool bpc_fused_takes(void *dev, const bp_fused_group *g, const bp_view *const *in,
                     const bp_view *const *out);
bp_status bpc_fused_run(void *dev, const bp_fused_group *g, const bp_view *const *in,
                        const bp_view *const *out);
/* matmul.c */
bp_status bpc_matmul(void *dev, const bp_view *a, const bp_view *b, const bp_view *out);

#endif

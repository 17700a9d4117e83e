/* The blas_cpu backend: private declarations.
 *
 * Host memory like the binary backend, with the same results (its kernels are
 * the spec), but: matmul goes to OpenBLAS, the elementwise, reduction, softmax
 * and cast kernels split their element range across an OpenMP team above a
 * size threshold, and freed buffers are cached for reuse (alloc.c). */
#ifndef BPC_BLAS_CPU_H
#define BPC_BLAS_CPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <backplane/plugin.h>

/* Size classes of the buffer cache: 4 per power of two from 64 B to 2^47 B. */
#define BPC_CLASSES 176

typedef struct bpc_cache {
    pthread_mutex_t lock;
    void *head[BPC_CLASSES];    /* free blocks, linked through their header */
    uint64_t cached;            /* bytes held in the lists */
    uint64_t limit;             /* the most bytes the lists may hold */
} bpc_cache;

/* One device: the host. Kernels see this. */
typedef struct bpc_dev {
    const bp_host_api *host;
    int threads;                /* OpenMP team size (and OpenBLAS's threads) */
    bpc_cache cache;
    _Atomic uint64_t used;      /* bytes of live buffers (requested sizes) */
} bpc_dev;

/* Report an error detail through the host and return code. */
bp_status bpc_fail(void *dev, bp_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline char *bpc_base(const bp_view *v) { return (char *)v->buffer + v->offset; }

static inline int64_t bpc_numel(const bp_view *v)
{
    int64_t n = 1;
    for (int32_t k = 0; k < v->rank; k++)
        n *= v->shape[k];
    return n;
}

/* ---- iteration: iter.c -------------------------------------------------- */

/* Up to BPC_ITER_MAX views sharing views[0]'s shape, collapsed as in the
 * binary backend (size-1 axes dropped, axes contiguous for every view merged)
 * and walked in row-major order as runs along the innermost axis. Unlike the
 * binary iterator it can start at any element, so a thread can walk just its
 * slice [lo, hi) of the elements:
 *
 *     bpc_cursor c; int64_t pos[2], len;
 *     bpc_cursor_init(&c, 2, (const bp_view *[]){out, x}, lo, hi);
 *     while (bpc_cursor_next(&c, pos, &len))
 *         for (i < len) ... out at pos[0] + i * c.it.inner_stride[0] ...
 *
 * Positions and strides are in elements. */
#define BPC_ITER_MAX 4
typedef struct bpc_iter {
    int n;
    int32_t rank;                               /* collapsed rank, >= 1 */
    int64_t shape[BP_MAX_RANK];
    int64_t strides[BPC_ITER_MAX][BP_MAX_RANK];
    int64_t inner;                              /* innermost extent */
    int64_t inner_stride[BPC_ITER_MAX];
    bool empty;
} bpc_iter;

void bpc_iter_init(bpc_iter *it, int n, const bp_view *const *views);

typedef struct bpc_cursor {
    bpc_iter it;
    int64_t idx[BP_MAX_RANK];                   /* multi-index of the next element */
    int64_t left;                               /* elements still to visit */
} bpc_cursor;

void bpc_cursor_init(bpc_cursor *c, int n, const bp_view *const *views, int64_t lo, int64_t hi);
void bpc_cursor_from(bpc_cursor *c, const bpc_iter *it, int64_t lo, int64_t hi);
bool bpc_cursor_next(bpc_cursor *c, int64_t *pos, int64_t *len);

/* ---- threads: parallel.c ------------------------------------------------ */

/* Work below which a kernel stays on the calling thread: a parallel region
 * costs a few microseconds, about what one core needs for this many simple
 * elements (or a tenth as many transcendental ones). */
#define BPC_GRAIN_LIGHT ((int64_t)1 << 16)
#define BPC_GRAIN_HEAVY ((int64_t)1 << 12)

typedef void (*bpc_range_fn)(void *ctx, int64_t lo, int64_t hi);

/* Call fn(ctx, lo, hi) over disjoint slices covering [0, total): on the
 * calling thread alone when total < grain or the device has one thread,
 * else one slice per OpenMP thread. */
void bpc_parallel(const bpc_dev *dev, int64_t total, int64_t grain, bpc_range_fn fn, void *ctx);
int bpc_team(const bpc_dev *dev, int64_t total, int64_t grain);
/* The most threads a kernel keeps per-thread partial results for. */
#define BPC_MAX_TEAM 1024

/* ---- element conversions: convert.c (the cast rules of DESIGN.md) -------- */
double bpc_load_f64(bp_dtype dt, const char *p);
void bpc_store_f64(bp_dtype dt, char *p, double v);
int64_t bpc_load_i64(bp_dtype dt, const char *p);
void bpc_store_i64(bp_dtype dt, char *p, int64_t v);

/* ---- buffers: alloc.c --------------------------------------------------- */
void bpc_cache_init(bpc_cache *c, uint64_t limit);
void bpc_cache_drain(bpc_cache *c);
bp_status bpc_alloc(void *dev, size_t bytes, void **buffer);
void bpc_free(void *dev, void *buffer);

/* ---- kernels: the plugin entries (see plugin.h for each contract) ------- */
bp_status bpc_unary(void *dev, bp_op op, const bp_view *x, const bp_view *out);
bp_status bpc_binary(void *dev, bp_op op, const bp_view *a, const bp_view *b, const bp_view *out);
bp_status bpc_where(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
                    const bp_view *out);
bp_status bpc_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out);
bp_status bpc_fill(void *dev, const bp_view *out, const void *value);
bp_status bpc_arange(void *dev, double start, double step, const bp_view *out);
bp_status bpc_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                     const bp_view *out);
bp_status bpc_reduce(void *dev, bp_op op, const bp_view *x, int32_t n_reduce, const bp_view *out);
bp_status bpc_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out);
bp_status bpc_matmul(void *dev, const bp_view *a, const bp_view *b, const bp_view *out);
bp_status bpc_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                     const bp_view *out);

#endif

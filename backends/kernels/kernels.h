/* The reference kernels: a component for CPU plugins (backends/kernels).
 *
 * Every op of the op table, computed on plain host memory by one entry,
 * bpk_op, with the op entry's signature (plugin.h); the host buffers (64-byte
 * aligned, big ones huge-page mappings) and wrapped memory a host plugin
 * needs; and the pieces a faster plugin reuses around them: the view
 * iterator, row helpers, the per-op kernels it may call on slices of a view.
 * Every kernel computes in (at least) the precision of its dtype, f16/bf16
 * via f32 or double, and is written to be obviously correct first: these
 * are the semantics conform checks every backend against.
 *
 * Who links it: the binary plugin (the reference backend: these kernels and
 * nothing else), blas_cpu (threads and vector kernels around them) and the
 * tests' devsim. A plugin of your own may link it too (static, PIC, hidden
 * symbols): plugins/README.md says how. */
#ifndef BPK_KERNELS_H
#define BPK_KERNELS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <backplane/cast.h>
#include <backplane/plugin.h>

/* One device: the host. */
typedef struct bpk_dev {
    const bp_host_api *host;
} bpk_dev;

/* Report an error detail through the host and return code. */
bp_status bpk_fail(void *dev, bp_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline char *bpk_base(const bp_view *v) { return (char *)v->buffer + v->offset; }

static inline int64_t bpk_numel(const bp_view *v)
{
    int64_t n = 1;
    for (int32_t k = 0; k < v->rank; k++)
        n *= v->shape[k];
    return n;
}

/* Whether v's elements are contiguous in row-major order (extents of 1 may
 * have any stride). */
static inline bool bpk_view_dense(const bp_view *v)
{
    int64_t expect = 1;
    for (int32_t k = v->rank - 1; k >= 0; k--) {
        if (v->shape[k] != 1 && v->strides[k] != expect)
            return false;
        expect *= v->shape[k];
    }
    return true;
}

/* Walks up to BPK_ITER_MAX views that share views[0]'s shape, in row-major
 * order, as runs along the innermost (collapsed) axis:
 *
 *     bpk_iter it; int64_t pos[BPK_ITER_MAX];
 *     bpk_iter_init(&it, 2, (const bp_view *[]){x, out});
 *     while (bpk_iter_next(&it, pos))
 *         for (int64_t i = 0; i < it.inner; i++)
 *             ... x element pos[0] + i * it.inner_stride[0] ...
 *
 * Positions and strides are in elements (multiply by the dtype size). Size-1
 * axes are dropped and axes that are contiguous for every view are merged,
 * so dense views run as one long loop. */
#define BPK_ITER_MAX 4
typedef struct bpk_iter {
    int n;
    int32_t rank;                               /* collapsed rank, >= 1 */
    int64_t shape[BP_MAX_RANK];
    int64_t strides[BPK_ITER_MAX][BP_MAX_RANK];
    int64_t idx[BP_MAX_RANK];
    int64_t inner;                              /* run length */
    int64_t inner_stride[BPK_ITER_MAX];
    bool started, done;
} bpk_iter;

void bpk_iter_init(bpk_iter *it, int n, const bp_view *const *views);
bool bpk_iter_next(bpk_iter *it, int64_t *pos);

/* The low bits of u as integer dtype dt holds them (two's complement), for
 * arithmetic that wraps: computed in uint64_t, stored by this. Written out
 * because C leaves the unsigned-to-signed conversion implementation-defined. */
static inline int64_t bpk_wrap_int(bp_dtype dt, uint64_t u)
{
    int bits = (int)bp_dtype_size(dt) * 8;
    if (dt == BP_U8 || dt == BP_U16 || dt == BP_U32 || dt == BP_U64) /* unsigned: the low bits */
        return (int64_t)(u & ((((uint64_t)1 << (bits - 1)) << 1) - 1));
    uint64_t sign = (uint64_t)1 << (bits - 1);
    u &= bits == 64 ? ~(uint64_t)0 : (sign << 1) - 1;
    return (u & sign) ? (int64_t)(u - sign) - (int64_t)(sign - 1) - 1 : (int64_t)u;
}

/* An integer as bp_elem_load_i64 reads it, mapped so that int64's order is
 * the values' order: itself, and for u64 (read as its bits) the bits with
 * the top one flipped. For sorting, clipping and max/min; the keys are
 * compared, never stored. */
static inline int64_t bpk_int_order(bp_dtype dt, int64_t v)
{
    return dt == BP_U64 ? (int64_t)((uint64_t)v ^ ((uint64_t)1 << 63)) : v;
}

/* Element loads and stores with the cast rules: backplane/cast.h's
 * bp_elem_load_f64, bp_elem_store_f64, bp_elem_load_i64, bp_elem_store_i64. */
/* n elements of a float dtype, `stride` elements apart, widened to double. */
void bpk_load_row_f64(bp_dtype dt, const char *p, int64_t stride, int64_t n, double *out);

/* ---- wrapped memory: wrapped.c (plugin.h's wrap, for both host plugins) -- */
typedef struct bpk_wrap_entry {
    void *memory;
    size_t bytes;
    void (*release)(void *);
    void *release_ctx;
} bpk_wrap_entry;
typedef struct bpk_wraps {
    pthread_mutex_t lock;
    atomic_size_t count;        /* read without the lock: free()'s fast path */
    bpk_wrap_entry *items;
    size_t cap;
} bpk_wraps;
void bpk_wraps_init(bpk_wraps *w);
void bpk_wraps_destroy(bpk_wraps *w);
/* The wrap entry's work: record memory as a buffer of w (host kinds only). */
bp_status bpk_wrap(void *dev, bpk_wraps *w, int32_t kind, void *memory, size_t bytes,
                   void (*release)(void *), void *release_ctx, void **buffer);
/* If buffer is a wrapped one: forget it, call its release, true. */
bool bpk_wraps_release(bpk_wraps *w, void *buffer);

/* ---- host memory: host_memory.c (plain host buffers, synchronous ops) ---- */
bp_status bpk_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes);
bp_status bpk_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes);
void *bpk_host_ptr(void *dev, void *buffer);
bp_status bpk_synchronize(void *dev);
/* device_total / device_free of memory_info: the machine's RAM (0 if unknown). */
void bpk_system_memory(bp_memory_info *info);
/* A block of `total` bytes (a multiple of 64), 64-byte aligned, or NULL.
 * Blocks of huge_min bytes or more are their own 2 MiB-aligned mappings
 * advised MADV_HUGEPAGE (*map_len: the mapping's length; 0 for the others,
 * which come from aligned_alloc). Give it back with bpk_block_put.
 * huge_min: BPK_HUGE_CACHED where freed blocks are kept for reuse (blas_cpu's
 * cache); BPK_HUGE_UNCACHED otherwise: below it glibc serves a block from
 * the heap, where a freed one is reused without faults; from it on glibc
 * maps every block afresh (its mmap threshold stops rising at 32 MiB). */
#define BPK_HUGE_CACHED ((size_t)4 << 20)
#define BPK_HUGE_UNCACHED ((size_t)32 << 20)
void *bpk_block_get(size_t total, size_t huge_min, size_t *map_len);
void bpk_block_put(void *block, size_t map_len);

/* ---- kernels: the plugin entries (see plugin.h for each contract) ---- */
/* unary.c, binary.c, where.c, cast.c, creation.c. bpk_unary and bpk_binary are the
 * UNARY and BINARY kinds' kernels: every op of the kind, its parameters in
 * p (opcodes.h's bp_op_kind). */
bp_status bpk_unary(void *dev, bp_op op, const bp_op_params *p, const bp_view *x,
                    const bp_view *out);
bp_status bpk_binary(void *dev, bp_op op, const bp_op_params *p, const bp_view *a,
                     const bp_view *b, const bp_view *out);
bp_status bpk_where(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
                    const bp_view *out);
bp_status bpk_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out);
bp_status bpk_fill(void *dev, const bp_view *out, const void *value);
bp_status bpk_arange(void *dev, double start, double step, const bp_view *out);
bp_status bpk_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                     const bp_view *out);
/* reduce.c, softmax.c, matmul.c, gather.c. bpk_reduce is the REDUCE kind's
 * kernel: every reduction, the p->i[0] reduced axes last in x. */
bp_status bpk_reduce(void *dev, bp_op op, const bp_op_params *p, const bp_view *x,
                     const bp_view *out);
bp_status bpk_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out);
bp_status bpk_matmul(void *dev, const bp_view *a, const bp_view *b, const bp_view *out);
bp_status bpk_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                     const bp_view *out);

/* Hot loops compiled for the x86-64 baseline, for AVX2 + FMA + F16C and for
 * AVX-512, the loader picking one by CPU (GCC function multiversioning). No
 * FMA contraction (-std=c11), so every clone gives the same bits. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(BP_NO_CLONES)
#define BPK_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define BPK_CLONES
#endif

/* ---- the op entry ---------------------------------------------------------- */
/* One kernel: the op entry's signature (plugin.h), params already widened to
 * this build's bp_op_params (missing members zero). */
typedef bp_status (*bpk_op_fn)(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                               const bp_view *const *in, int32_t n_out,
                               const bp_view *const *out);
/* op.c: the entry for every op of the op table (a kernel per kind), and
 * supports(): true for every op of the table (each kernel takes every
 * dtype its row accepts). */
bp_status bpk_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                 const bp_view *const *in, int32_t n_out, const bp_view *const *out);
bool bpk_supports(void *dev, bp_op op, bp_dtype dtype);
/* The kernels, by file (each checks nothing the core guarantees). */
/* where.c: clip (x, lo|NULL, hi|NULL) */
bp_status bpk_op_clip(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out);
/* hardmax.c, scan.c, sort.c: along the last axis of x */
bp_status bpk_op_hardmax(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                         const bp_view *const *in, int32_t n_out, const bp_view *const *out);
bp_status bpk_op_scan(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out);
bp_status bpk_op_sort(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out);
/* index.c: trilu, one_hot; gather.c: gather_elements, gather_nd;
 * scatter.c: scatter_elements, scatter_nd */
bp_status bpk_op_trilu(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                       const bp_view *const *in, int32_t n_out, const bp_view *const *out);
bp_status bpk_op_one_hot(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                         const bp_view *const *in, int32_t n_out, const bp_view *const *out);
bp_status bpk_op_gather_more(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                             const bp_view *const *in, int32_t n_out, const bp_view *const *out);
bp_status bpk_op_scatter(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                         const bp_view *const *in, int32_t n_out, const bp_view *const *out);
/* gemm.c */
bp_status bpk_op_gemm(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out);

/* ---- helpers the kernels along one axis share (rows.c) ------------------- */
/* Rows along the last axis: views[j] (rank >= 1) without their last axis,
 * walked together (they share those leading extents):
 *
 *     bpk_rows r; bpk_rows_init(&r, 2, (const bp_view *[]){x, out});
 *     while (bpk_rows_next(&r))  ... row of x at bpk_base(x) + r.at[0] * esz ...
 *
 * at[j] is the element offset of the current row's first element in view j;
 * its elements are views[j]->strides[rank - 1] apart. */
typedef struct bpk_rows {
    bpk_iter it;
    int n;
    int64_t pos[BPK_ITER_MAX], t, at[BPK_ITER_MAX];
    bool have;
} bpk_rows;
void bpk_rows_init(bpk_rows *r, int n, const bp_view *const *views);
bool bpk_rows_next(bpk_rows *r);
/* An index element (i32 or i64) at flat position i of a dense view. */
int64_t bpk_index_at(const bp_view *indices, int64_t i);
/* The element offset of a dense row-major position in view v. */
int64_t bpk_offset_of(const bp_view *v, const int64_t *idx);

#endif

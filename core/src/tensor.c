/* Tensors: lifetime, shapes, host I/O, metadata-only views. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

bp_status bp__shape_check(const char *fn, bp_dtype dtype, int32_t rank, const int64_t *shape,
                          int64_t *numel, size_t *nbytes)
{
    if (!bp_dtype_valid((int)dtype))
        return bp__error(BP_ERR_DTYPE, "%s: %d is not a bp_dtype", fn, (int)dtype);
    if (rank < 0 || rank > BP_MAX_RANK)
        return bp__error(BP_ERR_SHAPE, "%s: rank %d is outside 0..%d", fn, rank, BP_MAX_RANK);
    if (rank > 0 && !shape)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: shape is NULL for rank %d", fn, rank);
    /* Overflow-safe: the product of the non-zero extents may not exceed
     * INT64_MAX / elem size (nor SIZE_MAX). As in NumPy this holds for shapes
     * with a zero extent too: their strides are still products of the
     * others, and (0, 2^62, 4) would overflow them. */
    const int64_t elem = (int64_t)bp_dtype_size(dtype);
    int64_t limit = INT64_MAX / elem;
    if ((uint64_t)limit > SIZE_MAX / (uint64_t)elem)
        limit = (int64_t)(SIZE_MAX / (uint64_t)elem);
    int64_t n = 1;
    bool empty = false;
    for (int32_t k = 0; k < rank; k++) {
        if (shape[k] < 0)
            return bp__error(BP_ERR_SHAPE, "%s: extent %lld of axis %d is negative", fn,
                             (long long)shape[k], k);
        if (shape[k] == 0) {
            empty = true;
            continue;
        }
        if (n > limit / shape[k]) {
            char buf[200];
            return bp__error(BP_ERR_SHAPE,
                             "%s: shape %s is too large: the product of its non-zero extents "
                             "overflows (at most %lld %s elements)",
                             fn, bp__format_shape(rank, shape, buf, sizeof buf), (long long)limit,
                             bp_dtype_name(dtype));
        }
        n *= shape[k];
    }
    if (empty)
        n = 0;
    if (numel)
        *numel = n;
    if (nbytes)
        *nbytes = (size_t)n * (size_t)elem;
    return BP_OK;
}

/* ---- guard bytes (bp_context_set_debug_guards) ---------------------------- */

static void bp__guard_pattern(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(0xA5u ^ (i * 29u)); /* no run of one byte value */
}

/* Fill the guard regions before and after a payload of nbytes. */
static bp_status bp__guards_write(bp_backend *b, void *buffer, size_t guard, size_t nbytes)
{
    unsigned char *pat = malloc(guard);
    if (!pat)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "out of memory for guard bytes");
    bp__guard_pattern(pat, guard);
    bp_status st = BP__CALL(b, "write of debug guard bytes", write, buffer, 0, pat, guard);
    if (st == BP_OK)
        st = BP__CALL(b, "write of debug guard bytes", write, buffer, guard + nbytes, pat, guard);
    free(pat);
    return st;
}

bp_status bp_context_set_debug_guards(bp_context *ctx, size_t bytes)
{
    static const char fn[] = "bp_context_set_debug_guards";
    if (!ctx)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    if (bytes > BP_DEBUG_GUARDS_MAX || bytes % BP_DEBUG_GUARDS_ALIGN != 0)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: %zu bytes: the guard size must be a multiple of %d (so every "
                         "tensor keeps the alignment its backend gave it) and at most %d; "
                         "e.g. 64 or 4096",
                         fn, bytes, BP_DEBUG_GUARDS_ALIGN, BP_DEBUG_GUARDS_MAX);
    atomic_store(&ctx->guard_bytes, bytes);
    return BP_OK;
}

bp_status bp_tensor_check_guards(const bp_tensor *t)
{
    static const char fn[] = "bp_tensor_check_guards";
    BP__TRY(bp__check_input(fn, "t", t));
    const bp__storage *s = t->storage;
    size_t g = s->guard;
    if (g == 0)
        return BP_OK;
    unsigned char *want = malloc(g), *got = malloc(2 * g);
    if (!want || !got) {
        free(want);
        free(got);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    bp__guard_pattern(want, g);
    bp_backend *b = s->backend;
    bp_status st = bp__device_read(b, fn, s->buffer, 0, got, g);
    if (st == BP_OK)
        st = bp__device_read(b, fn, s->buffer, g + t->nbytes, got + g, g);
    if (st != BP_OK) {
        free(want);
        free(got);
        return st;
    }
    for (size_t i = 0; i < 2 * g && st == BP_OK; i++) {
        if (got[i] == want[i % g])
            continue;
        bool after = i >= g;
        st = bp__error(BP_ERR_BACKEND,
                       "%s: backend %s wrote %s the tensor's %zu bytes: the guard byte %zu "
                       "byte(s) %s was changed to 0x%02x (expected 0x%02x)",
                       fn, b->name, after ? "past the end of" : "before the start of", t->nbytes,
                       after ? i - g + 1 : g - i, after ? "after the end" : "before the start",
                       got[i], want[i % g]);
    }
    free(want);
    free(got);
    return st;
}

void bp__storage_drop_data(bp__storage *s)
{
    bp_backend *b = s->backend;
    bp__exchange_unlist(s); /* before the memory goes: no import may find it */
    if (s->lender) {
        bp__storage *lender = s->lender;
        s->lender = NULL;
        s->buffer = NULL;
        if (s->release)
            s->release(s->release_ctx);
        bp__storage_release(lender);
    } else if (s->buffer) {
        void *buffer = s->buffer;
        s->buffer = NULL;
        b->vt->free(b->dev, buffer);
        bp__count_free(b, s->bytes);
    }
}

/* A tensor with a storage of its own is born as one allocation, the handle
 * and its storage together: one malloc and one free per op output instead
 * of two each (~330 of the ~2,900 instructions of a 4-element add). A view
 * made later shares the storage with a handle of its own, so the block
 * stays until both its handle and its storage are released. */
typedef struct bp__tensor_block {
    bp_tensor t;
    bp__storage s;
} bp__tensor_block;

static bp__tensor_block *bp__block_of_storage(bp__storage *s)
{
    return (bp__tensor_block *)(void *)((char *)s - offsetof(bp__tensor_block, s));
}

static bool bp__tensor_in_block(const bp_tensor *t)
{
    return (uintptr_t)t->storage == (uintptr_t)t + offsetof(bp__tensor_block, s);
}

/* One of the block's two parts is done; the second frees it. */
static void bp__block_part_done(bp__tensor_block *blk)
{
    if (atomic_fetch_sub(&blk->s.block_parts, 1) == 1)
        free(blk);
}

void bp__storage_release(bp__storage *s)
{
    if (atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    bp_backend *b = s->backend;
    struct bp_graph *graph = b->graph; /* b lives inside it: released last */
    bp__storage_drop_data(s);
    atomic_fetch_sub(&b->live_tensors, 1);
    bp_context *ctx = b->ctx;
    bp__block_part_done(bp__block_of_storage(s)); /* every storage is born in a block */
    bp__context_release(ctx);
    if (graph)
        bp__graph_unref(graph);
}

/* The first half of every tensor with a storage of its own (a new buffer,
 * memory used in place, memory borrowed from another storage): the shape
 * checked, the handle and the storage allocated, nothing else yet. */
static bp_status bp__tensor_shell(const char *fn, bp_dtype dtype, int32_t rank,
                                  const int64_t *shape, bp_tensor **t, bp__storage **s)
{
    /* Set by bp__shape_check on success; initialised because GCC 12 at -O3
     * cannot see that (-Werror=maybe-uninitialized in a Release build). */
    int64_t numel = 0;
    size_t nbytes = 0;
    *t = NULL;
    *s = NULL;
    BP__TRY(bp__shape_check(fn, dtype, rank, shape, &numel, &nbytes));
    /* malloc and zeroing, not calloc: glibc's calloc has no thread-cache
     * path (~400 instructions a call here, measured with callgrind; this
     * runs once per op). Two memsets, one per part: GCC turns malloc and
     * one memset of the whole into calloc again. */
    bp__tensor_block *blk = malloc(sizeof *blk);
    if (!blk)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    memset(&blk->t, 0, sizeof blk->t);
    memset(&blk->s, 0, sizeof blk->s);
    *t = &blk->t;
    *s = &blk->s;
    atomic_init(&blk->s.block_parts, 2);
    (*t)->dtype = dtype;
    (*t)->rank = rank;
    for (int32_t k = 0; k < rank; k++)
        (*t)->shape[k] = shape[k];
    (*t)->numel = numel;
    (*t)->nbytes = nbytes;
    return BP_OK;
}

/* A shell that never became a tensor (an error before bp__tensor_born). */
static void bp__shell_free(bp_tensor *t)
{
    free((bp__tensor_block *)(void *)t);
}

/* The second half, once s->buffer is there: t's data starts at offset of
 * s; the storage is counted alive (its bytes too when `counted`). */
static void bp__tensor_born(bp_tensor *t, bp__storage *s, bp_backend *b, int64_t offset,
                            bool counted)
{
    atomic_init(&s->refs, 1);
    if (b->graph)
        bp__graph_retain(b->graph);
    s->backend = b;
    s->bytes = t->nbytes;
    atomic_fetch_add(&b->live_tensors, 1);
    if (counted)
        bp__count_alloc(b, t->nbytes);
    bp__context_retain(b->ctx);
    atomic_init(&t->refs, 1);
    atomic_init(&t->given_away, false);
    atomic_init(&t->cached, false);
    t->storage = s;
    t->offset = offset;
}

bp_status bp__dtype_on_backend(const char *fn, bp_backend *b, bp_dtype dtype)
{
    const bp_backend *real = bp__backend_real(b);
    if (!bp_dtype_valid((int)dtype) || bp__abi_has_dtype(real->vt->abi_minor, dtype))
        return BP_OK;
    return bp__error(BP_ERR_DTYPE,
                     "%s: backend %s cannot hold %s: the plugin was built for plugin ABI %u.%u, "
                     "and %s arrived in ABI 1.%u; bp_cast to a dtype the backend has (i32, i64, "
                     "f64), or use a backend that has it",
                     fn, real->name, bp_dtype_name(dtype), real->vt->abi_major,
                     real->vt->abi_minor, bp_dtype_name(dtype), bp__dtype_since(dtype));
}

bp_status bp__tensor_new(const char *fn, bp_backend *b, bp_dtype dtype, int32_t rank,
                         const int64_t *shape, bp_tensor **out)
{
    if (!b)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: backend is NULL", fn);
    BP__TRY(bp__dtype_on_backend(fn, b, dtype));
    bp_tensor *t;
    bp__storage *s;
    BP__TRY(bp__tensor_shell(fn, dtype, rank, shape, &t, &s));
    size_t nbytes = t->nbytes;
    /* a recording backend's buffers are tokens: nothing to guard */
    size_t guard = b->graph ? 0 : atomic_load(&b->ctx->guard_bytes);
    if (nbytes > SIZE_MAX - 2 * guard) {
        bp__shell_free(t);
        return bp__error(BP_ERR_SHAPE, "%s: %zu bytes plus guards overflow", fn, nbytes);
    }
    /* the call's description is formatted only for a failure: this runs for
     * every op's output, and the snprintf was ~1,050 of the ~4,300
     * instructions of a 4-element add (callgrind, docs/performance.md) */
    bp__call_begin();
    bp_status st = b->vt->alloc(b->dev, nbytes + 2 * guard, &s->buffer);
    if (st != BP_OK || !s->buffer) {
        char what[96];
        snprintf(what, sizeof what, "alloc of %zu bytes for %s", nbytes, fn);
        if (st != BP_OK)
            st = bp__call_end(b, what, "alloc", st);
        else
            st = bp__error(BP_ERR_BACKEND, "backend %s: its alloc entry returned BP_OK but no "
                           "buffer during %s: a defect in the plugin %s", b->name, what,
                           b->plugin->path);
    }
    if (st != BP_OK) {
        bp__shell_free(t);
        return st;
    }
    if (guard > 0 && (st = bp__guards_write(b, s->buffer, guard, nbytes)) != BP_OK) {
        b->vt->free(b->dev, s->buffer);
        bp__shell_free(t);
        return st;
    }
    s->guard = guard;
    bp__tensor_born(t, s, b, (int64_t)guard, true);
    *out = t;
    return BP_OK;
}

bp_status bp__tensor_wrap(const char *fn, bp_backend *b, bp_dtype dtype, int32_t rank,
                          const int64_t *shape, int32_t kind, void *memory,
                          void (*release)(void *), void *release_ctx, bp_tensor **out)
{
    *out = NULL;
    BP__TRY(bp__dtype_on_backend(fn, b, dtype));
    bp_tensor *t;
    bp__storage *s;
    BP__TRY(bp__tensor_shell(fn, dtype, rank, shape, &t, &s));
    int64_t offset = 0;
    bp__storage *lender = bp__exchange_find(b, kind, memory, t->nbytes, &offset);
    if (lender) { /* memory this backend already holds: borrow its buffer */
        s->lender = lender;
        s->buffer = lender->buffer;
        s->release = release;
        s->release_ctx = release_ctx;
        bp__tensor_born(t, s, b, offset, false);
        *out = t;
        return BP_OK;
    }
    if (!BP__HAS(b->vt, wrap) || atomic_load(&b->ctx->guard_bytes) != 0) {
        bp__shell_free(t); /* guard bytes cannot surround memory we do not own */
        return BP_ERR_UNSUPPORTED_OP;
    }
    bp__call_begin();
    bp_status st = bp__plugin_entry_status(
        "wrap", b->vt->wrap(b->dev, kind, memory, t->nbytes, release, release_ctx, &s->buffer));
    if (st != BP_OK) {
        bp__shell_free(t);
        if (st == BP_ERR_UNSUPPORTED_OP)
            return st;
        return bp__error(st, "%s: backend %s failed to use memory in place: %s", fn, b->name,
                         *bp__plugin_detail() ? bp__plugin_detail() : bp_status_message(st));
    }
    bp__tensor_born(t, s, b, 0, true);
    bp__exchange_list(s, kind, memory, t->nbytes);
    *out = t;
    return BP_OK;
}

bp_status bp__tensor_alias(const bp_tensor *src, int32_t rank, const int64_t *shape, bp_tensor **out)
{
    *out = NULL;
    bp_tensor *t = malloc(sizeof *t); /* every member set below: no calloc (bp__tensor_shell) */
    if (!t)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "out of memory creating a tensor view");
    atomic_init(&t->refs, 1);
    atomic_init(&t->given_away, false);
    atomic_init(&t->cached, false);
    t->copies = NULL;
    t->copy_of = NULL;
    atomic_fetch_add(&src->storage->refs, 1);
    t->storage = src->storage;
    t->offset = src->offset;
    t->dtype = src->dtype;
    t->rank = rank;
    for (int32_t k = 0; k < BP_MAX_RANK; k++)
        t->shape[k] = k < rank ? shape[k] : 0;
    t->numel = src->numel;
    t->nbytes = src->nbytes;
    *out = t;
    return BP_OK;
}

bp_status bp__tensor_alias_at(const bp_tensor *src, int64_t offset, bp_dtype dtype, int32_t rank,
                             const int64_t *shape, bp_tensor **out)
{
    int64_t numel;
    size_t nbytes;
    *out = NULL;
    BP__TRY(bp__shape_check("bp__tensor_alias_at", dtype, rank, shape, &numel, &nbytes));
    BP__TRY(bp__tensor_alias(src, rank, shape, out));
    (*out)->offset = offset;
    (*out)->dtype = dtype;
    (*out)->numel = numel;
    (*out)->nbytes = nbytes;
    return BP_OK;
}

bp_status bp__tensor_on_token(bp_backend *rec, void *token, size_t bytes, bp_tensor **out)
{
    bp_tensor *t;
    bp__storage *s;
    *out = NULL;
    BP__TRY(bp__tensor_shell("bp__tensor_on_token", BP_U8, 1, (const int64_t[]){(int64_t)bytes},
                             &t, &s));
    s->buffer = token;
    bp__tensor_born(t, s, rec, 0, false);
    s->bytes = 0; /* never counted as allocated: its release counts nothing */
    *out = t;
    return BP_OK;
}

bp_status bp_tensor_from_host(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                              const void *data, bp_tensor **out)
{
    static const char fn[] = "bp_tensor_from_host";
    BP__TRY(bp__check_out(fn, out));
    bp_tensor *t;
    BP__TRY(bp__tensor_new(fn, b, dtype, rank, shape, &t));
    if (t->nbytes > 0) {
        if (!data) {
            long long numel = (long long)t->numel;
            bp_tensor_release(t);
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: data is NULL for %lld elements", fn,
                             numel);
        }
        bp__count_h2d(b, t->nbytes);
        bp_status st = BP__CALL(b, "write for bp_tensor_from_host", write, t->storage->buffer,
                                (size_t)t->offset, data, t->nbytes);
        if (st != BP_OK) {
            bp_tensor_release(t);
            return st;
        }
    }
    *out = t;
    return BP_OK;
}

/* Every host read of a tensor: counted, logged and waited for as fn. */
static bp_status bp__to_host(const char *fn, const bp_tensor *t, void *dst, size_t dst_bytes)
{
    BP__TRY(bp__check_input(fn, "t", t));
    /* a symbolic tensor has no values whatever the destination: that first */
    bp_backend *b = bp__backend_of(t);
    if (b->graph)
        return bp__graph_read_error(fn, b);
    if (dst_bytes < t->nbytes)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: destination holds %zu bytes but the tensor needs %zu", fn, dst_bytes,
                         t->nbytes);
    if (t->nbytes > 0 && !dst)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: dst is NULL", fn);
    bp__count_d2h(b, t->nbytes);
    if (t->nbytes == 0) /* nothing to read, but the call still waits, as documented */
        return bp_synchronize(b);
    return bp__device_read(b, fn, t->storage->buffer, (size_t)t->offset, dst, t->nbytes);
}

bp_status bp_tensor_to_host(const bp_tensor *t, void *dst, size_t dst_bytes)
{
    return bp__to_host("bp_tensor_to_host", t, dst, dst_bytes);
}

void bp_tensor_retain(bp_tensor *t)
{
    if (t)
        atomic_fetch_add(&t->refs, 1);
}

bool bp__tensor_try_retain(bp_tensor *t)
{
    long n = atomic_load(&t->refs);
    while (n > 0)
        if (atomic_compare_exchange_weak(&t->refs, &n, n + 1))
            return true;
    return false;
}

void bp_tensor_release(bp_tensor *t)
{
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1)
        return;
    if (atomic_load(&t->cached)) {
        bp_context *ctx = bp__backend_of(t)->ctx;
        pthread_mutex_lock(&ctx->copy_lock);
        bp__copy_unlink(t);
        pthread_mutex_unlock(&ctx->copy_lock);
    }
    bool in_block = bp__tensor_in_block(t);
    bp__storage *s = t->storage;
    bp__storage_release(s);
    if (in_block)
        bp__block_part_done(bp__block_of_storage(s));
    else
        free(t);
}

bp_dtype bp_tensor_dtype(const bp_tensor *t) { return t ? t->dtype : BP_BOOL; }
int32_t bp_tensor_rank(const bp_tensor *t) { return t ? t->rank : 0; }
const int64_t *bp_tensor_shape(const bp_tensor *t) { return t ? t->shape : NULL; }
int64_t bp_tensor_numel(const bp_tensor *t) { return t ? t->numel : 0; }
size_t bp_tensor_nbytes(const bp_tensor *t) { return t ? t->nbytes : 0; }
bp_backend *bp_tensor_backend(const bp_tensor *t) { return t ? t->storage->backend : NULL; }

bool bp_tensor_is_valid(const bp_tensor *t)
{
    return t && !atomic_load(&t->given_away);
}

/* ---- items ---------------------------------------------------------------- */

static bp_status bp__item(const char *fn, const bp_tensor *t, void *elem)
{
    BP__TRY(bp__check_input(fn, "t", t));
    if (t->numel != 1)
        return bp__error(BP_ERR_SHAPE, "%s: the tensor has %lld elements, not exactly 1", fn,
                         (long long)t->numel);
    return bp__to_host(fn, t, elem, bp_dtype_size(t->dtype));
}

bp_status bp_item_f64(const bp_tensor *t, double *out)
{
    unsigned char elem[8];
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_item_f64: out is NULL");
    BP__TRY(bp__item("bp_item_f64", t, elem));
    *out = bp_elem_load_f64(t->dtype, elem);
    return BP_OK;
}

bp_status bp_item_i64(const bp_tensor *t, int64_t *out)
{
    unsigned char elem[8];
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_item_i64: out is NULL");
    BP__TRY(bp__item("bp_item_i64", t, elem));
    bp_elem_cast_int(BP_I64, out, t->dtype, elem); /* a u64 above INT64_MAX saturates */
    return BP_OK;
}

bp_status bp_item_bool(const bp_tensor *t, bool *out)
{
    unsigned char elem[8];
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_item_bool: out is NULL");
    BP__TRY(bp__item("bp_item_bool", t, elem));
    double v = bp_elem_load_f64(t->dtype, elem);
    *out = v != 0.0; /* NaN is true, as a cast to bool */
    return BP_OK;
}

/* ---- metadata-only views -------------------------------------------------- */

bp_status bp_reshape(const bp_tensor *t, int32_t rank, const int64_t *shape, bp_tensor **out)
{
    static const char fn[] = "bp_reshape";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "t", t));
    if (rank < 0 || rank > BP_MAX_RANK || (rank > 0 && !shape))
        return bp__error(BP_ERR_SHAPE, "%s: rank %d (shape %s) is invalid", fn, rank,
                         shape ? "given" : "NULL");
    int64_t dims[BP_MAX_RANK], known = 1;
    int32_t infer = -1;
    for (int32_t k = 0; k < rank; k++) {
        dims[k] = shape[k];
        if (shape[k] == -1) {
            if (infer >= 0)
                return bp__error(BP_ERR_SHAPE, "%s: more than one -1 in the new shape", fn);
            infer = k;
        } else if (shape[k] < 0) {
            return bp__error(BP_ERR_SHAPE, "%s: extent %lld of axis %d is negative", fn,
                             (long long)shape[k], k);
        } else {
            if (shape[k] != 0 && known > INT64_MAX / shape[k])
                return bp__error(BP_ERR_SHAPE, "%s: new shape overflows", fn);
            known *= shape[k];
        }
    }
    if (infer >= 0) {
        if (known == 0 || t->numel % known != 0)
            return bp__error(BP_ERR_SHAPE, "%s: cannot infer the -1 extent: %lld elements do "
                             "not divide by %lld", fn, (long long)t->numel, (long long)known);
        dims[infer] = t->numel / known;
        known = t->numel;
    }
    if (known != t->numel)
        return bp__error(BP_ERR_SHAPE, "%s: the new shape has %lld elements, the tensor %lld", fn,
                         (long long)known, (long long)t->numel);
    BP__TRY(bp__shape_check(fn, t->dtype, rank, dims, NULL, NULL)); /* e.g. (0, 2^62, 4) */
    return bp__tensor_alias(t, rank, dims, out);
}

bp_status bp_squeeze(const bp_tensor *t, int32_t n_axes, const int32_t *axes, bp_tensor **out)
{
    static const char fn[] = "bp_squeeze";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "t", t));
    bool drop[BP_MAX_RANK] = {false};
    if (n_axes < 0 || (n_axes > 0 && !axes))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %d axes given with axes %s", fn, n_axes,
                         axes ? "set" : "NULL");
    for (int32_t i = 0; i < n_axes; i++) {
        int32_t a;
        BP__TRY(bp__normalize_axis(fn, axes[i], t->rank, &a));
        if (drop[a])
            return bp__error(BP_ERR_SHAPE,
                             "%s: axis %d (given as axes[%d] = %d) appears twice; list each "
                             "axis once",
                             fn, (int)a, (int)i, (int)axes[i]);
        if (t->shape[a] != 1)
            return bp__error(BP_ERR_SHAPE, "%s: axis %d has extent %lld, not 1", fn, axes[i],
                             (long long)t->shape[a]);
        drop[a] = true;
    }
    int64_t dims[BP_MAX_RANK];
    int32_t r = 0;
    for (int32_t k = 0; k < t->rank; k++)
        if (!(n_axes == 0 ? t->shape[k] == 1 : drop[k]))
            dims[r++] = t->shape[k];
    return bp__tensor_alias(t, r, dims, out);
}

bp_status bp_unsqueeze(const bp_tensor *t, int32_t axis, bp_tensor **out)
{
    static const char fn[] = "bp_unsqueeze";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "t", t));
    if (t->rank >= BP_MAX_RANK)
        return bp__error(BP_ERR_SHAPE, "%s: the result would exceed rank %d", fn, BP_MAX_RANK);
    int32_t a;
    BP__TRY(bp__normalize_axis(fn, axis, t->rank + 1, &a));
    int64_t dims[BP_MAX_RANK];
    for (int32_t k = 0, j = 0; k <= t->rank; k++)
        dims[k] = k == a ? 1 : t->shape[j++];
    return bp__tensor_alias(t, t->rank + 1, dims, out);
}

bp_status bp__deliver(bp_tensor *res, bp_status st, bp_tensor **out)
{
    if (st != BP_OK) {
        bp_tensor_release(res);
        return st;
    }
    *out = res;
    return BP_OK;
}

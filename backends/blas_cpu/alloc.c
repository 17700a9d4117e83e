/* Buffers: 64-byte aligned host memory behind a size-class cache.
 *
 * Big allocations come straight from mmap in glibc and go back with munmap,
 * so a loop making a same-sized output each step would page-fault through
 * every page of it every step (a 64 MiB f32 add spends as long faulting as
 * adding). Freed blocks are therefore kept in per-size-class free lists and
 * handed out again. Classes are 4 per power of two (a block is at most 25%
 * larger than asked for); the lists hold at most `limit` bytes in total
 * ([backend.blas_cpu] cache_mb), beyond which a freed block really goes back
 * to the system. One mutex guards the lists: entries may run on any thread.
 *
 * Blocks of BPK_HUGE_CACHED (4 MiB) or more are their own 2 MiB-aligned
 * mappings with madvise(MADV_HUGEPAGE) (bpk_block_get, shared with the
 * binary backend): where transparent huge pages are in "madvise" mode
 * (Debian's default) this is the only way to get them, and NumPy does the
 * same for its big arrays. A 64 MiB operand then costs 32 TLB entries
 * instead of 16384, and a first touch 32 faults instead of 16384. */
#include <stdlib.h>
#include <string.h>

#include "blas_cpu.h"

/* Every block starts with this header, one alignment unit long, so the user
 * pointer stays 64-byte aligned. */
#define BPC_ALIGN ((size_t)64)
typedef struct block_header {
    size_t bytes;   /* requested size, for memory_info */
    size_t map_len; /* length of its own mapping, 0 if from aligned_alloc */
    int cls;        /* size class, -1 when too big to cache */
    void *next;     /* free-list link while cached */
} block_header;
_Static_assert(sizeof(block_header) <= 64, "the header must fit one alignment unit");

/* total bytes, 64-byte aligned, header included (huge-page mappings from
 * BPK_HUGE_CACHED bytes: host_memory.c) */
static block_header *block_get(size_t total)
{
    size_t map_len;
    block_header *h = bpk_block_get(total, BPK_HUGE_CACHED, &map_len);
    if (h)
        h->map_len = map_len;
    return h;
}

static void block_put(block_header *h) { bpk_block_put(h, h->map_len); }

/* Class of a request and the capacity that class allocates. */
static int size_class(size_t bytes, size_t *cap)
{
    if (bytes <= BPC_ALIGN) {
        *cap = BPC_ALIGN;
        return 0;
    }
    int e = 63 - __builtin_clzll((unsigned long long)(bytes - 1)); /* 2^e < bytes <= 2^(e+1) */
    size_t step = (size_t)1 << (e - 2);
    size_t k = (bytes - ((size_t)1 << e) + step - 1) / step; /* 1..4 */
    int cls = 1 + (e - 6) * 4 + (int)(k - 1);
    *cap = ((size_t)1 << e) + k * step;
    if (cls >= BPC_CLASSES)
        return -1;
    return cls;
}

void bpc_cache_init(bpc_cache *c, uint64_t limit)
{
    pthread_mutex_init(&c->lock, NULL);
    memset(c->head, 0, sizeof c->head);
    c->cached = 0;
    c->limit = limit;
}

void bpc_cache_drain(bpc_cache *c)
{
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < BPC_CLASSES; i++)
        while (c->head[i]) {
            block_header *h = c->head[i];
            c->head[i] = h->next;
            block_put(h);
        }
    c->cached = 0;
    pthread_mutex_unlock(&c->lock);
}

static size_t class_cap(int cls)
{
    size_t cap = BPC_ALIGN;
    if (cls > 0) {
        int e = 6 + (cls - 1) / 4, k = 1 + (cls - 1) % 4;
        cap = ((size_t)1 << e) + (size_t)k * ((size_t)1 << (e - 2));
    }
    return cap;
}

bp_status bpc_alloc(void *dev, size_t bytes, void **buffer)
{
    bpc_dev *d = dev;
    if (bytes > SIZE_MAX / 2)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "blas_cpu: cannot allocate %zu bytes", bytes);
    size_t cap;
    int cls = size_class(bytes, &cap);
    block_header *h = NULL;
    size_t cap_total;
    if (cls >= 0) {
        pthread_mutex_lock(&d->cache.lock);
        h = d->cache.head[cls];
        if (h) {
            d->cache.head[cls] = h->next;
            d->cache.cached -= cap;
        }
        pthread_mutex_unlock(&d->cache.lock);
    }
    if (!h) {
        /* cap is a multiple of 16 only; aligned_alloc wants one of 64 */
        cap_total = BPC_ALIGN + ((cap + BPC_ALIGN - 1) & ~(BPC_ALIGN - 1));
        h = block_get(cap_total);
        if (!h) {
            /* the cache may be what fills memory: give it back and retry once */
            bpc_cache_drain(&d->cache);
            h = block_get(cap_total);
        }
        if (!h)
            return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "blas_cpu: cannot allocate %zu bytes",
                            bytes);
    }
    h->bytes = bytes;
    h->cls = cls;
    h->next = NULL;
    d->used += bytes;
    *buffer = (char *)h + BPC_ALIGN;
    return BP_OK;
}

void bpc_free(void *dev, void *buffer)
{
    bpc_dev *d = dev;
    if (!buffer || bpk_wraps_release(&d->wraps, buffer))
        return;
    block_header *h = (block_header *)((char *)buffer - BPC_ALIGN);
    d->used -= h->bytes;
    if (h->cls >= 0) {
        size_t cap = class_cap(h->cls);
        pthread_mutex_lock(&d->cache.lock);
        bool keep = d->cache.cached + cap <= d->cache.limit;
        if (keep) {
            h->next = d->cache.head[h->cls];
            d->cache.head[h->cls] = h;
            d->cache.cached += cap;
        }
        pthread_mutex_unlock(&d->cache.lock);
        if (keep)
            return;
    }
    block_put(h);
}

/* Buffers that are someone else's memory (plugin.h's wrap): the pages of a
 * mapped checkpoint, a NumPy array handed over by DLPack. A host backend's
 * buffer handle is the memory's own address, so free() has to tell a wrapped
 * buffer from one it allocated: this table does, for both host plugins. It
 * is empty but for zero-copy loads, and free() looks at it only then.
 *
 * Because the handle is the address, two live wraps of one address would be
 * one handle with two releases, and free() could not tell whose to run (it
 * would run the other's: a use after free). So an address is wrapped at
 * most once at a time: a second wrap while the first lives is refused with
 * BP_ERR_UNSUPPORTED_OP, and the core shares the first buffer (or copies). */
#include <stdlib.h>

#include "kernels.h"

void bpk_wraps_init(bpk_wraps *w)
{
    pthread_mutex_init(&w->lock, NULL);
    atomic_init(&w->count, 0);
    w->items = NULL;
    w->cap = 0;
}

void bpk_wraps_destroy(bpk_wraps *w)
{
    /* every buffer was freed before device_close: nothing is left here */
    free(w->items);
    pthread_mutex_destroy(&w->lock);
}

bp_status bpk_wrap(void *dev, bpk_wraps *w, int32_t kind, void *memory, size_t bytes,
                   void (*release)(void *), void *release_ctx, void **buffer)
{
    if (kind != BP_MEMORY_HOST && kind != BP_MEMORY_CUDA_HOST)
        return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP,
                        "host memory backend: cannot use memory of kind %d in place", (int)kind);
    pthread_mutex_lock(&w->lock);
    size_t n = atomic_load(&w->count);
    for (size_t i = 0; i < n; i++) {
        if (w->items[i].memory == memory) {
            pthread_mutex_unlock(&w->lock);
            return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP,
                            "host memory backend: %p is already a buffer here (wrapped and not "
                            "yet freed); a second buffer on the same address would share its "
                            "handle", memory);
        }
    }
    if (n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 8;
        bpk_wrap_entry *grown = realloc(w->items, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&w->lock);
            return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "out of memory wrapping %zu bytes", bytes);
        }
        w->items = grown;
        w->cap = cap;
    }
    w->items[n] = (bpk_wrap_entry){memory, bytes, release, release_ctx};
    atomic_store(&w->count, n + 1);
    pthread_mutex_unlock(&w->lock);
    *buffer = memory;
    return BP_OK;
}

bool bpk_wraps_release(bpk_wraps *w, void *buffer)
{
    if (atomic_load(&w->count) == 0)
        return false; /* the common case: no wrapped buffer at all */
    bpk_wrap_entry found = {0};
    bool hit = false;
    pthread_mutex_lock(&w->lock);
    size_t n = atomic_load(&w->count);
    for (size_t i = 0; i < n && !hit; i++) {
        if (w->items[i].memory != buffer)
            continue;
        found = w->items[i];
        w->items[i] = w->items[n - 1];
        atomic_store(&w->count, n - 1);
        hit = true;
    }
    pthread_mutex_unlock(&w->lock);
    if (hit && found.release)
        found.release(found.release_ctx);
    return hit;
}

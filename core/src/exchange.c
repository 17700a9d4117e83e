/* Memory exchanged with other libraries, known by its address.
 *
 * A buffer can come back: a tensor lent through DLPack is handed back by
 * the library that took it (or by a third one it lent it to), a tensor of a
 * mapped checkpoint is exported and imported again, NumPy lends the same
 * array twice. A second buffer on memory the backend already holds would be
 * wrong twice over: a host plugin's handle is the address, so the two
 * buffers would share a handle and the plugin could not tell whose release
 * to run; and every import's release must run exactly once, when its own
 * last tensor goes. So each backend lists the storages other libraries can
 * see (every wrapped buffer, every exported one), and an import of memory
 * inside a listed storage becomes a storage that borrows it: the same
 * buffer, the lender kept alive, the import's own release run when the
 * borrower goes. Only imports and exports touch the list; no op does. */
#include <stdlib.h>

#include "internal.h"

static bool host_kind(int32_t kind) { return kind == BP_MEMORY_HOST || kind == BP_MEMORY_CUDA_HOST; }

void bp__exchange_list(bp__storage *s, int32_t kind, const void *address, size_t span)
{
    bp_backend *b = s->backend;
    pthread_mutex_lock(&b->exchange_lock);
    if (!s->listed) {
        if (b->n_listed == b->cap_listed) {
            size_t cap = b->cap_listed ? 2 * b->cap_listed : 8;
            bp__storage **grown = realloc(b->listed, cap * sizeof *grown);
            if (!grown) { /* unlisted, a later import copies or is refused: never wrong */
                pthread_mutex_unlock(&b->exchange_lock);
                return;
            }
            b->listed = grown;
            b->cap_listed = cap;
        }
        s->kind = kind;
        s->address = address;
        s->span = span;
        s->listed = true;
        b->listed[b->n_listed++] = s;
    }
    pthread_mutex_unlock(&b->exchange_lock);
}

void bp__exchange_unlist(bp__storage *s)
{
    if (!s->listed)
        return;
    bp_backend *b = s->backend;
    pthread_mutex_lock(&b->exchange_lock);
    for (size_t i = 0; i < b->n_listed; i++) {
        if (b->listed[i] == s) {
            b->listed[i] = b->listed[--b->n_listed];
            break;
        }
    }
    s->listed = false;
    pthread_mutex_unlock(&b->exchange_lock);
}

bp__storage *bp__exchange_find(bp_backend *b, int32_t kind, const void *address, size_t bytes,
                               int64_t *offset)
{
    const char *a = address;
    bp__storage *hit = NULL;
    pthread_mutex_lock(&b->exchange_lock);
    for (size_t i = 0; i < b->n_listed && !hit; i++) {
        bp__storage *s = b->listed[i];
        const char *lo = s->address;
        bool same_kind = s->kind == kind || (host_kind(s->kind) && host_kind(kind));
        if (!same_kind || a < lo || (size_t)(a - lo) > s->span || bytes > s->span - (size_t)(a - lo))
            continue;
        long n = atomic_load(&s->refs); /* a storage being freed right now is no lender */
        while (n > 0 && !atomic_compare_exchange_weak(&s->refs, &n, n + 1))
            ;
        if (n > 0) {
            hit = s;
            *offset = (int64_t)(a - lo);
        }
    }
    pthread_mutex_unlock(&b->exchange_lock);
    return hit;
}

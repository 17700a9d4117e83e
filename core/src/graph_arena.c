/* A graph's arena: where its nodes' views, parameters and index rules live
 * (graph_internal.h). Memory is taken in chunks that never move, so a node
 * may point into it while the node array grows, and a compiled plan shares
 * the recorded views instead of copying them: a 1000-node graph used to
 * copy some 2.6 MB per compile (every node held 16 views of rank 8 and the
 * whole parameter block); now it takes what each node has. Released when
 * the graph and the last plan compiled from it are. */
#include <stdalign.h>
#include <stdlib.h>

#include "graph_internal.h"

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
} chunk;

struct bp__garena {
    atomic_long refs;
    chunk *head; /* the chunk being filled; the full ones follow */
};

enum { FIRST_CHUNK = 8 << 10, LARGEST_CHUNK = 256 << 10 };

bp__garena *bp__garena_new(void)
{
    bp__garena *a = calloc(1, sizeof *a);
    if (a)
        atomic_init(&a->refs, 1);
    return a;
}

void *bp__garena_take(bp__garena *a, size_t bytes)
{
    bytes = (bytes + alignof(max_align_t) - 1) / alignof(max_align_t) * alignof(max_align_t);
    chunk *c = a->head;
    if (!c || c->cap - c->used < bytes) {
        size_t cap = c ? 2 * c->cap : FIRST_CHUNK;
        if (cap > LARGEST_CHUNK)
            cap = LARGEST_CHUNK;
        if (cap < bytes)
            cap = bytes;
        chunk *n = malloc(sizeof *n + cap);
        if (!n)
            return NULL;
        n->next = c;
        n->used = 0;
        n->cap = cap;
        a->head = c = n;
    }
    void *p = c->data + c->used;
    c->used += bytes;
    return p;
}

void bp__garena_retain(bp__garena *a) { atomic_fetch_add(&a->refs, 1); }

void bp__garena_release(bp__garena *a)
{
    if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
        return;
    for (chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(a);
}

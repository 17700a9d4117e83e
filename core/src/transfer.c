/* Explicit moves between backends: the only way data crosses them.
 *
 * Copies are free when they can be. Tensors are immutable, so a copy to the
 * tensor's own backend is the tensor itself (one more reference), and a
 * second copy of the same tensor to the same backend, while the first copy
 * lives, is that first copy. The first answers the loop that copies every
 * parameter to the device every step without noticing it already did. The
 * cache is a weak link from the source handle to its copies: a copy that is
 * released unlinks itself, so the cache never keeps memory alive. */
#include <stdlib.h>

#include "internal.h"

/* Copy t's bytes into a fresh tensor on `to`: one transfer when either side
 * is host-addressable, else staged through a host buffer. */
static bp_status bp__copy_bytes(const char *fn, const bp_tensor *t, bp_backend *to,
                                bp_tensor **out)
{
    bp_backend *from = bp__backend_of(t);
    bp_tensor *o;
    BP__TRY(bp__tensor_new(fn, to, t->dtype, t->rank, t->shape, &o));
    bp_status st = BP_OK;
    size_t n = t->nbytes;
    bp__count_copy(from, to, n);
    if (n == 0) {
        *out = o;
        return BP_OK;
    }
    if (from->host_addressable) {
        const char *src = (const char *)from->vt->host_ptr(from->dev, t->storage->buffer);
        st = BP__CALL(to, "write of a copy from another backend", write, o->storage->buffer,
                      (size_t)o->offset, src + t->offset, n);
    } else if (to->host_addressable) {
        char *dst = (char *)to->vt->host_ptr(to->dev, o->storage->buffer) + o->offset;
        st = bp__device_read(from, fn, t->storage->buffer, (size_t)t->offset, dst, n);
    } else {
        void *stage = malloc(n);
        if (!stage) {
            st = bp__error(BP_ERR_OUT_OF_MEMORY, "%s: no host memory to stage %zu bytes", fn, n);
        } else {
            st = bp__device_read(from, fn, t->storage->buffer, (size_t)t->offset, stage, n);
            if (st == BP_OK)
                st = BP__CALL(to, "write of a copy from another backend (staged)", write,
                              o->storage->buffer, (size_t)o->offset, stage, n);
            free(stage);
        }
    }
    return bp__deliver(o, st, out);
}

/* If t is someone's kept copy, it no longer is (ctx->copy_lock held). */
static void bp__unlink_copy_of(bp_tensor *t)
{
    if (!t->copy_of)
        return;
    for (bp__copy_link **l = &t->copy_of->copies; *l; l = &(*l)->next) {
        if ((*l)->copy == t) {
            bp__copy_link *dead = *l;
            *l = dead->next;
            free(dead);
            break;
        }
    }
    t->copy_of = NULL;
}

void bp__copy_unlink(bp_tensor *t)
{
    bp__unlink_copy_of(t);
    while (t->copies) { /* t's own kept copies outlive it, uncached */
        bp__copy_link *l = t->copies;
        t->copies = l->next;
        l->copy->copy_of = NULL;
        free(l);
    }
}

/* A live earlier copy of t on `to`, with one more reference, or NULL. */
static bp_tensor *bp__kept_copy(bp_tensor *t, bp_backend *to)
{
    bp_context *ctx = to->ctx;
    bp_tensor *hit = NULL;
    pthread_mutex_lock(&ctx->copy_lock);
    for (bp__copy_link *l = t->copies; l && !hit; l = l->next) {
        if (l->to != to || !bp__tensor_try_retain(l->copy))
            continue; /* another backend, or a copy being released right now */
        if (atomic_load(&l->copy->given_away)) {
            pthread_mutex_unlock(&ctx->copy_lock);
            bp_tensor_release(l->copy); /* may take the lock: not held now */
            pthread_mutex_lock(&ctx->copy_lock);
            break; /* the list may have changed: make a fresh copy instead */
        }
        hit = l->copy;
    }
    pthread_mutex_unlock(&ctx->copy_lock);
    return hit;
}

/* Remember copy as t's copy on `to`; without memory for the link the copy
 * is simply not kept. */
static void bp__keep_copy(bp_tensor *t, bp_tensor *copy, bp_backend *to)
{
    bp__copy_link *l = malloc(sizeof *l);
    if (!l)
        return;
    bp_context *ctx = to->ctx;
    pthread_mutex_lock(&ctx->copy_lock);
    l->to = to;
    l->copy = copy;
    l->next = t->copies;
    t->copies = l;
    copy->copy_of = t;
    atomic_store(&t->cached, true);
    atomic_store(&copy->cached, true);
    pthread_mutex_unlock(&ctx->copy_lock);
}

static bp_status bp__copy_checks(const char *fn, const bp_tensor *t, bp_backend *to, bp_tensor **out)
{
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "t", t));
    if (!to)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: the destination backend is NULL", fn);
    if (to->ctx != bp__backend_of(t)->ctx)
        return bp__error(BP_ERR_BACKEND_MISMATCH,
                         "%s: the destination backend %s belongs to another bp_context than the "
                         "tensor's backend %s; copy through host memory (bp_tensor_to_host, "
                         "bp_tensor_from_host)", fn, to->name, bp__backend_of(t)->name);
    return BP_OK;
}

/* An equal tensor on `to` for a copy to another backend: a kept one, or a
 * new one that is then kept. */
static bp_status bp__copy_other(const char *fn, bp_tensor *t, bp_backend *to, bp_tensor **out)
{
    bp_tensor *hit = bp__kept_copy(t, to);
    if (hit) {
        bp__count_hit(to);
        *out = hit;
        return BP_OK;
    }
    BP__TRY(bp__copy_bytes(fn, t, to, out));
    bp__keep_copy(t, *out, to);
    return BP_OK;
}

bp_status bp_backend_copy(const bp_tensor *t, bp_backend *to, bp_tensor **out)
{
    static const char fn[] = "bp_backend_copy";
    BP__TRY(bp__copy_checks(fn, t, to, out));
    bp_tensor *src = (bp_tensor *)t; /* immutable: sharing it is the copy */
    if (bp__backend_of(t) == to) {
        bp__count_hit(to);
        bp_tensor_retain(src);
        *out = src;
        return BP_OK;
    }
    return bp__copy_other(fn, src, to, out);
}

bp_status bp_backend_transfer(bp_tensor *t, bp_backend *to, bp_tensor **out)
{
    static const char fn[] = "bp_backend_transfer";
    BP__TRY(bp__copy_checks(fn, t, to, out));
    bp_tensor *res = NULL;
    if (bp__backend_of(t) == to) {
        bp__count_hit(to);
        BP__TRY(bp__tensor_alias(t, t->rank, t->shape, &res)); /* a new handle, same data */
    } else {
        BP__TRY(bp__copy_other(fn, t, to, &res));
    }
    /* A handle with other references is someone else's tensor too: the same
     * handle bp_backend_copy gave a second caller, one a DLPack export holds,
     * one retained. Taking it from them would break what they hold, so it
     * stays valid and this was a copy. */
    if (atomic_load(&t->refs) > 1) {
        *out = res;
        return BP_OK;
    }
    if (atomic_exchange(&t->given_away, true)) { /* another thread gave it away first */
        bp_tensor_release(res);
        return bp__check_input(fn, "t", t);
    }
    bp_context *ctx = to->ctx;
    if (atomic_load(&t->cached)) { /* a given-away handle is nobody's copy any more */
        pthread_mutex_lock(&ctx->copy_lock);
        bp__unlink_copy_of(t);
        pthread_mutex_unlock(&ctx->copy_lock);
    }
    /* The data moves only if no other handle shares it: another holder keeps
     * its tensor, and this one was copied instead. */
    bp__storage *s = t->storage;
    if (atomic_load(&s->refs) == 1)
        bp__storage_drop_data(s);
    *out = res;
    return BP_OK;
}

/* Explicit moves between backends: the only way data crosses them. */
#include <stdlib.h>

#include "internal.h"

/* Copy t's bytes into a fresh tensor on `to`: one transfer when either side
 * is host-addressable, else staged through a host buffer. */
static bp_status bp__copy_to(const char *fn, const bp_tensor *t, bp_backend *to, bp_tensor **out)
{
    bp_backend *from = bp__backend_of(t);
    bp_tensor *o;
    BP__TRY(bp__tensor_new(fn, to, t->dtype, t->rank, t->shape, &o));
    bp_status st = BP_OK;
    size_t n = t->nbytes;
    if (n == 0) {
        *out = o;
        return BP_OK;
    }
    if (from == to && BP__HAS(to->vt, copy)) {
        bp_view src, dst;
        bp__view_dense(t, &src);
        bp__view_dense(o, &dst);
        st = BP__CALL(to, "copy within the backend", copy, BP_OP_COPY, &src, &dst);
    } else if (from->host_addressable) {
        const char *src = (const char *)from->vt->host_ptr(from->dev, t->storage->buffer);
        st = BP__CALL(to, "write of a copy from another backend", write, o->storage->buffer,
                      (size_t)o->offset, src + t->offset, n);
    } else if (to->host_addressable) {
        char *dst = (char *)to->vt->host_ptr(to->dev, o->storage->buffer) + o->offset;
        st = BP__CALL(from, "read of a copy to another backend", read, t->storage->buffer,
                      (size_t)t->offset, dst, n);
    } else {
        void *stage = malloc(n);
        if (!stage) {
            st = bp__error(BP_ERR_OUT_OF_MEMORY, "%s: no host memory to stage %zu bytes", fn, n);
        } else {
            st = BP__CALL(from, "read of a copy to another backend (staged)", read,
                          t->storage->buffer, (size_t)t->offset, stage, n);
            if (st == BP_OK)
                st = BP__CALL(to, "write of a copy from another backend (staged)", write,
                              o->storage->buffer, (size_t)o->offset, stage, n);
            free(stage);
        }
    }
    if (st != BP_OK) {
        bp_tensor_release(o);
        return st;
    }
    *out = o;
    return BP_OK;
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

bp_status bp_backend_copy(const bp_tensor *t, bp_backend *to, bp_tensor **out)
{
    static const char fn[] = "bp_backend_copy";
    BP__TRY(bp__copy_checks(fn, t, to, out));
    return bp__copy_to(fn, t, to, out);
}

bp_status bp_backend_transfer(bp_tensor *t, bp_backend *to, bp_tensor **out)
{
    static const char fn[] = "bp_backend_transfer";
    BP__TRY(bp__copy_checks(fn, t, to, out));
    BP__TRY(bp__copy_to(fn, t, to, out));
    /* Give the data away: every handle on this storage now refuses reads. */
    bp__storage *s = t->storage;
    if (!atomic_exchange(&s->given_away, true)) {
        bp_backend *b = s->backend;
        void *buf = s->buffer;
        s->buffer = NULL;
        b->vt->free(b->dev, buf);
    }
    return BP_OK;
}

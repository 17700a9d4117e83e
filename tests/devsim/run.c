/* Running one queued item on devsim's worker thread, with the binary
 * backend's reference kernels. Views carry ds_buf handles; here they become
 * host addresses. A failure is kept as the deferred error (the first since
 * the last deferred_error call), to be reported at the next wait. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devsim.h"

static void ds_defer(ds_dev *d, bp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void ds_defer(ds_dev *d, bp_status st, const char *fmt, ...)
{
    pthread_mutex_lock(&d->lock);
    if (d->err_status == BP_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->err, sizeof d->err, fmt, ap);
        va_end(ap);
        d->err_status = st;
    }
    pthread_mutex_unlock(&d->lock);
}

/* The first index of a gather outside [-dim, dim), as the error it is. */
static bool ds_gather_indices_ok(ds_dev *d, const bp_view *x, const bp_view *idx, int32_t axis)
{
    int64_t dim = x->shape[axis], n = bpb_numel(idx);
    size_t es = bp_dtype_size(idx->dtype);
    const char *base = bpb_base(idx); /* the core hands dense indices */
    for (int64_t i = 0; i < n; i++) {
        int64_t v = bp_elem_load_i64(idx->dtype, base + (size_t)i * es);
        if (v < -dim || v >= dim) {
            ds_defer(d, BP_ERR_INDEX,
                     "gather: indices[%lld] (flat position) is %lld, out of range for axis %d "
                     "of extent %lld; indices must lie in [%lld, %lld)",
                     (long long)i, (long long)v, (int)axis, (long long)dim, (long long)-dim,
                     (long long)dim);
            return false;
        }
    }
    return true;
}

void ds_run(ds_dev *d, ds_item *it)
{
    if (it->kind == DS_FREE) {
        atomic_fetch_sub(&d->used, (uint_fast64_t)it->buf->bytes);
        free(it->buf->mem);
        free(it->buf);
        return;
    }
    if (it->kind == DS_WRITE) {
        memcpy(it->buf->mem + it->offset, it->data, it->bytes);
        return;
    }
    bp_view v[4];
    for (int k = 0; k < it->nv; k++) {
        v[k] = it->v[k];
        v[k].buffer = ((ds_buf *)it->v[k].buffer)->mem;
    }
    bp_view *out = &v[it->nv - 1];
    void *dev = &d->base; /* the kernels' device: reports land in worker_msg */
    d->worker_msg[0] = '\0';
    bp_status st = BP_OK;
    switch (it->kind) {
    case DS_UNARY: st = bpb_unary(dev, it->op, &v[0], out); break;
    case DS_BINARY: st = bpb_binary(dev, it->op, &v[0], &v[1], out); break;
    case DS_WHERE: st = bpb_where(dev, &v[0], &v[1], &v[2], out); break;
    case DS_REDUCE: st = bpb_reduce(dev, it->op, &v[0], it->arg, out); break;
    case DS_MATMUL: st = bpb_matmul(dev, &v[0], &v[1], out); break;
    case DS_COPY: st = bpb_copy(dev, it->op, &v[0], out); break;
    case DS_GATHER:
        if (ds_gather_indices_ok(d, &v[0], &v[1], it->arg))
            st = bpb_gather(dev, &v[0], &v[1], it->arg, out);
        break;
    case DS_SOFTMAX: st = bpb_softmax(dev, it->op, &v[0], out); break;
    case DS_FILL: st = bpb_fill(dev, out, it->value); break;
    case DS_ARANGE: st = bpb_arange(dev, it->d0, it->d1, out); break;
    case DS_RANDOM: st = bpb_random(dev, it->op, it->u0, it->u1, it->d0, it->d1, out); break;
    case DS_NN: st = ds_run_nn(d, it); break;
    case DS_WRITE: case DS_FREE: break;
    }
    if (st != BP_OK)
        ds_defer(d, st, "%s failed on the device: %s", bp_op_name(it->op),
                 d->worker_msg[0] ? d->worker_msg : "no detail");
}

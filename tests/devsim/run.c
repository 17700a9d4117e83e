/* Running one queued item on devsim's worker thread, with the binary
 * backend's reference kernels. Views carry ds_buf handles; here they become
 * host addresses. A failure is kept as the deferred error (the first since
 * the last deferred_error call), to be reported at the next wait. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_nn.h"
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
    int64_t dim = x->shape[axis], n = bpk_numel(idx);
    size_t es = bp_dtype_size(idx->dtype);
    const char *base = bpk_base(idx); /* the core hands dense indices */
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

/* The index tuples of gather_nd / scatter_nd (m components, addressing
 * x's axes b ..), or the indices of gather_elements / scatter_elements
 * (m = 1, axis b): the first outside [-dim, dim), deferred as the error it
 * is, in the words the core uses when it checks them itself. */
static bool ds_op_indices_ok(ds_dev *d, const ds_item *it, const bp_view *v)
{
    const bp_view *x = &v[0], *idx = &v[1];
    int32_t b, m;
    switch (it->op) {
    case BP_OP_GATHER_ELEMENTS: case BP_OP_SCATTER_ELEMENTS:
        b = (int32_t)it->params.i[0], m = 1;
        break;
    case BP_OP_GATHER_ND:
        b = (int32_t)it->params.i[0], m = (int32_t)idx->shape[idx->rank - 1];
        break;
    case BP_OP_SCATTER_ND: b = 0, m = (int32_t)idx->shape[idx->rank - 1]; break;
    default: return true;
    }
    int64_t n = bpk_numel(idx);
    for (int64_t i = 0; i < n; i++) {
        int64_t value = bpk_index_at(idx, i), dim = x->shape[b + i % m];
        if (value < -dim || value >= dim) {
            ds_defer(d, BP_ERR_INDEX,
                     "bp_%s: indices[%lld] (flat position) is %lld, out of range for axis %d "
                     "of extent %lld; indices must lie in [%lld, %lld)",
                     bp_op_name(it->op), (long long)i, (long long)value, (int)(b + i % m),
                     (long long)dim, (long long)-dim, (long long)dim);
            return false;
        }
    }
    return true;
}

/* The labels of softmax_cross_entropy_loss / nll_loss: like gather's
 * indices, the core does not read a deferring device's labels, so the first
 * that is neither a class nor ignore_index is deferred here as the
 * BP_ERR_INDEX it is. */
static bool ds_loss_labels_ok(ds_dev *d, const ds_item *it, const bp_view *v)
{
    if (it->op != BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS && it->op != BP_OP_NLL_LOSS)
        return true;
    bpk_loss_args a;
    int64_t value;
    bpk_loss_args_of(it->op, &it->params, &v[0], &a);
    int64_t bad = bpk_loss_bad_label(&a, &v[1], 0, a.rows, &value);
    if (bad < 0)
        return true;
    ds_defer(d, BP_ERR_INDEX,
             "bp_%s: label %lld (flat position %lld) is not a class: labels must lie in "
             "[0, %lld)%s", bp_op_name(it->op), (long long)value, (long long)bad,
             (long long)a.classes, a.has_ignore ? " or equal ignore_index" : "");
    return false;
}

/* The op entry's views, NULL where one was absent. */
static bp_status ds_run_op(void *dev, const ds_item *it, const bp_view *v)
{
    const bp_view *pv[DS_MAX_VIEWS];
    for (int k = 0; k < it->nv; k++)
        pv[k] = (it->absent >> k) & 1u ? NULL : &v[k];
    int n_in = it->nv - it->n_out;
    return bpk_op(dev, it->op, &it->params, n_in, pv, it->n_out, pv + n_in);
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
    bp_view v[DS_MAX_VIEWS];
    for (int k = 0; k < it->nv; k++) {
        v[k] = it->v[k];
        if (!(it->kind == DS_OP && (it->absent >> k) & 1u))
            v[k].buffer = ((ds_buf *)it->v[k].buffer)->mem;
    }
    bp_view *out = &v[it->nv - 1];
    void *dev = &d->base; /* the kernels' device: reports land in worker_msg */
    d->worker_msg[0] = '\0';
    bp_status st = BP_OK;
    bp_op_params p = {.struct_size = sizeof p}; /* the typed entries' ops take none but reduce's */
    p.i[0] = it->arg;
    switch (it->kind) {
    case DS_UNARY: st = bpk_unary(dev, it->op, &p, &v[0], out); break;
    case DS_BINARY: st = bpk_binary(dev, it->op, &p, &v[0], &v[1], out); break;
    case DS_WHERE: st = bpk_where(dev, &v[0], &v[1], &v[2], out); break;
    case DS_REDUCE: st = bpk_reduce(dev, it->op, &p, &v[0], out); break;
    case DS_MATMUL: st = bpk_matmul(dev, &v[0], &v[1], out); break;
    case DS_COPY: st = bpk_copy(dev, it->op, &v[0], out); break;
    case DS_GATHER:
        if (ds_gather_indices_ok(d, &v[0], &v[1], it->arg))
            st = bpk_gather(dev, &v[0], &v[1], it->arg, out);
        break;
    case DS_SOFTMAX: st = bpk_softmax(dev, it->op, &v[0], out); break;
    case DS_FILL: st = bpk_fill(dev, out, it->value); break;
    case DS_ARANGE: st = bpk_arange(dev, it->d0, it->d1, out); break;
    case DS_RANDOM: st = bpk_random(dev, it->op, it->u0, it->u1, it->d0, it->d1, out); break;
    case DS_OP:
        if (ds_op_indices_ok(d, it, v) && ds_loss_labels_ok(d, it, v))
            st = ds_run_op(dev, it, v);
        break;
    case DS_WRITE: case DS_FREE: break;
    }
    if (st != BP_OK)
        ds_defer(d, st, "%s failed on the device: %s", bp_op_name(it->op),
                 d->worker_msg[0] ? d->worker_msg : "no detail");
}

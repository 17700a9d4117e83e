/* devsim's op entry (ABI 1.4) for nn.h's ops: the call is copied into a
 * queued item and returns at once; on the worker it runs the binary
 * backend's kernels (bpb_nn_op). Like gather's indices, the losses' labels
 * reach here unchecked (the core does not read a deferring device's
 * labels): the worker checks them and a bad one becomes the deferred
 * BP_ERR_INDEX, reported at the next wait. */
#include <stdlib.h>
#include <string.h>

#include "binary_nn.h"
#include "devsim.h"

#define DS_NN_VIEWS 8

/* The call, kept in the item's data (freed by the queue). */
typedef struct ds_nn_call {
    bp_op op;
    bp_op_params p;
    int32_t n_in, n_out;
    bool given[DS_NN_VIEWS];
    bp_view v[DS_NN_VIEWS]; /* inputs, then outputs; ds_buf handles */
} ds_nn_call;

bool ds_supports(void *dev, bp_op op, bp_dtype dt)
{
    return bp_op_family_of(op) != BP_FAMILY_OP || bpb_nn_supports(op, dt);
}

/* Every output buffer after the first is marked written by an empty write
 * queued behind the call: a read of it then waits for the call too. */
static bp_status mark_written(ds_dev *d, ds_buf *buf)
{
    ds_item *it = calloc(1, sizeof *it);
    void *data = it ? malloc(1) : NULL;
    if (!data) {
        free(it);
        d->host->set_error(d->host->host, "devsim: out of memory queueing a write mark");
        return BP_ERR_OUT_OF_MEMORY;
    }
    it->kind = DS_WRITE;
    it->op = BP_OP_COPY;
    it->buf = buf;
    it->data = data;
    ds_enqueue(d, it, buf);
    return BP_OK;
}

bp_status ds_nn_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                   const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    ds_dev *d = dev;
    if (!bpb_nn_supports(op, in[0]->dtype) || n_in + n_out > DS_NN_VIEWS) {
        d->host->set_error(d->host->host, "devsim: no kernel for %s", bp_op_name(op));
        return BP_ERR_UNSUPPORTED_OP;
    }
    ds_item *it = calloc(1, sizeof *it);
    ds_nn_call *call = it ? calloc(1, sizeof *call) : NULL;
    if (!call) {
        free(it);
        d->host->set_error(d->host->host, "devsim: out of memory queueing %s", bp_op_name(op));
        return BP_ERR_OUT_OF_MEMORY;
    }
    call->op = op;
    call->p = *params;
    call->n_in = n_in;
    call->n_out = n_out;
    for (int32_t k = 0; k < n_in + n_out; k++) {
        const bp_view *v = k < n_in ? in[k] : out[k - n_in];
        call->given[k] = v != NULL;
        if (v)
            call->v[k] = *v;
    }
    it->kind = DS_NN;
    it->op = op;
    it->nv = 1; /* v[0]: the first output, as every item's last view is its output */
    it->v[0] = *out[0];
    it->data = call;
    ds_enqueue(d, it, (ds_buf *)out[0]->buffer);
    bp_status st = BP_OK;
    for (int32_t k = 1; k < n_out && st == BP_OK; k++)
        if (out[k])
            st = mark_written(d, (ds_buf *)out[k]->buffer);
    return st;
}

/* On the worker: the labels first (losses), then the kernel. */
bp_status ds_run_nn(ds_dev *d, ds_item *item)
{
    ds_nn_call *c = item->data;
    bp_view v[DS_NN_VIEWS];
    const bp_view *ptr[DS_NN_VIEWS];
    for (int32_t k = 0; k < c->n_in + c->n_out; k++) {
        v[k] = c->v[k];
        if (c->given[k])
            v[k].buffer = ((ds_buf *)c->v[k].buffer)->mem;
        ptr[k] = c->given[k] ? &v[k] : NULL;
    }
    if (c->op == BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS || c->op == BP_OP_NLL_LOSS) {
        bpb_loss_args a;
        int64_t value;
        bpb_loss_args_of(c->op, &c->p, ptr[0], &a);
        int64_t bad = bpb_loss_bad_label(&a, ptr[1], 0, a.rows, &value);
        if (bad >= 0)
            return bpb_fail(&d->base, BP_ERR_INDEX,
                            "label %lld (flat position %lld) is not a class: labels must lie "
                            "in [0, %lld)%s", (long long)value, (long long)bad,
                            (long long)a.classes, a.has_ignore ? " or equal ignore_index" : "");
    }
    return bpb_nn_op(&d->base, c->op, &c->p, c->n_in, ptr, c->n_out, ptr + c->n_in);
}

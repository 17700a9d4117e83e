/* devsim's op entries: each copies its views into a queued item and returns
 * at once, as a GPU backend's launch does. Running them is run.c's, on the
 * worker thread. */
#include <stdlib.h>
#include <string.h>

#include "kernels_nn.h"
#include "devsim.h"

/* Queue kind over views (inputs, then the output). */
static bp_status ds_op(void *dev, ds_kind kind, bp_op op, int nv, const bp_view *const *views,
                       const ds_item *args)
{
    ds_dev *d = dev;
    ds_item *it = calloc(1, sizeof *it);
    if (!it) {
        d->host->set_error(d->host->host, "devsim: out of memory queueing %s", bp_op_name(op));
        return BP_ERR_OUT_OF_MEMORY;
    }
    if (args)
        *it = *args;
    it->kind = kind;
    it->op = op;
    it->nv = nv;
    for (int k = 0; k < nv; k++)
        it->v[k] = *views[k];
    ds_enqueue(d, it, 1, (ds_buf *const[]){(ds_buf *)views[nv - 1]->buffer});
    return BP_OK;
}

bp_status ds_unary(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    return ds_op(dev, DS_UNARY, op, 2, (const bp_view *[]){x, out}, NULL);
}

bp_status ds_binary(void *dev, bp_op op, const bp_view *a, const bp_view *b, const bp_view *out)
{
    return ds_op(dev, DS_BINARY, op, 3, (const bp_view *[]){a, b, out}, NULL);
}

bp_status ds_where(void *dev, const bp_view *c, const bp_view *a, const bp_view *b,
                   const bp_view *out)
{
    return ds_op(dev, DS_WHERE, BP_OP_WHERE, 4, (const bp_view *[]){c, a, b, out}, NULL);
}

bp_status ds_reduce(void *dev, bp_op op, const bp_view *x, int32_t n_reduce, const bp_view *out)
{
    ds_item args = {.arg = n_reduce};
    return ds_op(dev, DS_REDUCE, op, 2, (const bp_view *[]){x, out}, &args);
}

bp_status ds_matmul(void *dev, const bp_view *a, const bp_view *b, const bp_view *out)
{
    return ds_op(dev, DS_MATMUL, BP_OP_MATMUL, 3, (const bp_view *[]){a, b, out}, NULL);
}

bp_status ds_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out)
{
    return ds_op(dev, DS_COPY, op, 2, (const bp_view *[]){src, out}, NULL);
}

bp_status ds_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                    const bp_view *out)
{
    ds_item args = {.arg = axis};
    return ds_op(dev, DS_GATHER, BP_OP_GATHER, 3, (const bp_view *[]){x, indices, out}, &args);
}

bp_status ds_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    return ds_op(dev, DS_SOFTMAX, op, 2, (const bp_view *[]){x, out}, NULL);
}

bp_status ds_fill(void *dev, const bp_view *out, const void *value)
{
    ds_item args = {0};
    memcpy(args.value, value, bp_dtype_size(out->dtype));
    return ds_op(dev, DS_FILL, BP_OP_FILL, 1, (const bp_view *[]){out}, &args);
}

bp_status ds_arange(void *dev, double start, double step, const bp_view *out)
{
    ds_item args = {.d0 = start, .d1 = step};
    return ds_op(dev, DS_ARANGE, BP_OP_ARANGE, 1, (const bp_view *[]){out}, &args);
}

bp_status ds_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                    const bp_view *out)
{
    ds_item args = {.u0 = seed, .u1 = offset, .d0 = p0, .d1 = p1};
    return ds_op(dev, DS_RANDOM, op, 1, (const bp_view *[]){out}, &args);
}

bp_status ds_op_entry(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    ds_dev *d = dev;
    /* refused at launch, as a device plugin would */
    if (!bpk_supports(dev, op, n_in > 0 && in[0] ? in[0]->dtype : BP_F32)) {
        d->host->set_error(d->host->host, "devsim: op code %d (%s) has no kernel here",
                           (int)op, bp_op_name(op));
        return BP_ERR_UNSUPPORTED_OP;
    }
    if (n_in < 0 || n_out < 1 || n_in + n_out > DS_MAX_VIEWS) {
        d->host->set_error(d->host->host, "devsim: %s with %d inputs and %d outputs is more "
                           "than an item holds (%d views)", bp_op_name(op), (int)n_in,
                           (int)n_out, DS_MAX_VIEWS);
        return BP_ERR_BACKEND;
    }
    ds_item *it = calloc(1, sizeof *it);
    if (!it) {
        d->host->set_error(d->host->host, "devsim: out of memory queueing %s", bp_op_name(op));
        return BP_ERR_OUT_OF_MEMORY;
    }
    it->kind = DS_OP;
    it->op = op;
    it->nv = n_in + n_out;
    it->n_out = n_out;
    bp_op_params_read(params, &it->params); /* as this build lays them out */
    for (int32_t k = 0; k < n_in; k++) {
        if (in[k])
            it->v[k] = *in[k];
        else
            it->absent |= 1u << k;
    }
    ds_buf *outs[DS_MAX_VIEWS];
    int n_written = 0;
    for (int32_t k = 0; k < n_out; k++) {
        if (out[k]) {
            it->v[n_in + k] = *out[k];
            outs[n_written++] = out[k]->buffer;
        } else { /* an optional output not wanted (max_pool's indices, ...) */
            it->absent |= 1u << (n_in + k);
        }
    }
    ds_enqueue(d, it, n_written, outs);
    return BP_OK;
}

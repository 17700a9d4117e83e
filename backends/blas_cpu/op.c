/* blas_cpu's op entry (ABI 1.4): the hot ops go to their own kernels
 * (gemm, cumsum/cumprod, topk, scatter-add; see op.h), the rest to the
 * reference kernels, cut into slabs across threads where each output
 * element (elementwise ops) or row (reductions, hardmax, sort) depends only
 * on its own inputs; cutting changes which thread computes a value, never
 * how, so those results are the binary backend's bits. Issue 16's nn ops
 * (not in the reference's table) go to nn.c's entry (blas_cpu_nn.h). What
 * supports() answers is the reference's (bpb_supports: its table and
 * bpb_nn_supports), since every op falls back to the reference's kernels. */
#include <string.h>

#include "blas_cpu_nn.h"
#include "op.h"

/* A slab's views back into the op entry's form: inputs then outputs, the
 * absent inputs (clip's bounds) NULL again. */
typedef struct slab_args {
    const bpc_op_call *call;
    unsigned absent; /* bit k: input k was NULL (a stand-in view was cut) */
} slab_args;

static bp_status ref_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo,
                          int64_t hi)
{
    (void)lo, (void)hi;
    const slab_args *a = args;
    const bpc_op_call *c = a->call;
    const bp_view *in[BPC_MAX_VIEWS], *out[BPC_MAX_VIEWS];
    for (int32_t k = 0; k < c->n_out; k++)
        out[k] = &v[k];
    for (int32_t k = 0; k < c->n_in; k++)
        in[k] = (a->absent >> k) & 1u ? NULL : &v[c->n_out + k];
    return bpb_op(d, c->op, c->p, c->n_in, in, c->n_out, out);
}

/* The reference over slabs of out[0]'s first n_axes axes; every view shares
 * those axes (same index in each). */
static bp_status split_ref(bpc_dev *d, const bpc_op_call *c, int32_t n_axes, int64_t work)
{
    const bp_view *v[BPC_MAX_VIEWS];
    slab_args a = {.call = c};
    int n = 0;
    for (int32_t k = 0; k < c->n_out; k++)
        v[n++] = c->out[k];
    for (int32_t k = 0; k < c->n_in; k++) {
        if (!c->in[k])
            a.absent |= 1u << k;
        v[n++] = c->in[k] ? c->in[k] : c->in[0]; /* a stand-in of the same shape */
    }
    return bpc_split(d, n, v, n_axes, NULL, false, work, ref_slab, &a);
}

/* Transcendental elements cost about BPC_HEAVY simple ones. */
static bool heavy(bp_op op)
{
    switch (op) {
    case BP_OP_SQUARE: case BP_OP_BITWISE_NOT: case BP_OP_LEAKY_RELU:
    case BP_OP_THRESHOLDED_RELU: case BP_OP_HARD_SIGMOID: case BP_OP_HARDSWISH:
    case BP_OP_SHRINK: case BP_OP_SOFTSIGN: case BP_OP_CLIP: case BP_OP_PRELU:
    case BP_OP_BITWISE_AND: case BP_OP_BITWISE_OR: case BP_OP_BITWISE_XOR:
    case BP_OP_BITSHIFT_LEFT: case BP_OP_BITSHIFT_RIGHT:
        return false;
    default:
        return true;
    }
}

static bp_status dispatch(bpc_dev *d, const bpc_op_call *c)
{
    const bp_view *x = c->in[0], *o = c->out[0];
    int64_t n = bpb_numel(o);
    switch (c->op) {
    case BP_OP_GEMM: return bpc_gemm(d, c);
    case BP_OP_CUMSUM: case BP_OP_CUMPROD: return bpc_scan(d, c);
    case BP_OP_TOPK: return bpc_topk(d, c);
    case BP_OP_SCATTER_ELEMENTS:
        if (c->p->i[1] == BP_SCATTER_ADD)
            return bpc_scatter_add(d, c);
        return bpb_op(d, c->op, c->p, c->n_in, c->in, c->n_out, c->out);
    /* row-wise along the last axis: the leading axes may be cut */
    case BP_OP_HARDMAX: case BP_OP_SORT:
        return split_ref(d, c, x->rank - 1, bpb_numel(x) * 8);
    /* reductions: out's axes are x's kept ones, in order */
    case BP_OP_REDUCE_L1: case BP_OP_REDUCE_L2: case BP_OP_REDUCE_SUM_SQUARE:
    case BP_OP_REDUCE_LOG_SUM: case BP_OP_REDUCE_VAR: case BP_OP_REDUCE_STD:
    case BP_OP_REDUCE_ANY: case BP_OP_REDUCE_ALL: case BP_OP_ARGMAX_LAST:
    case BP_OP_ARGMIN_LAST:
        return split_ref(d, c, o->rank, bpb_numel(x) * 2);
    /* indexing: the reference as is */
    case BP_OP_TRILU: case BP_OP_ONE_HOT: case BP_OP_GATHER_ELEMENTS: case BP_OP_GATHER_ND:
    case BP_OP_SCATTER_ND:
        return bpb_op(d, c->op, c->p, c->n_in, c->in, c->n_out, c->out);
    default: /* elementwise: every view has out's shape */
        if (!bpb_op_implemented(c->op))
            return bpb_op(d, c->op, c->p, c->n_in, c->in, c->n_out, c->out);
        return split_ref(d, c, o->rank, n * (heavy(c->op) ? BPC_HEAVY : 2));
    }
}

bp_status bpc_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                 const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    bp_op_params p; /* in this build's layout, whichever core sent it */
    bp_op_params_read(params, &p);
    if (!bpb_op_implemented(op)) /* issue 16's nn ops (nn.c); any other code is refused there */
        return bpc_nn_op(dev, op, &p, n_in, in, n_out, out);
    if (n_in + n_out > BPC_MAX_VIEWS || n_out < 1)
        return bpb_fail(dev, BP_ERR_BACKEND, "blas_cpu: %s with %d inputs and %d outputs",
                        bp_op_name(op), (int)n_in, (int)n_out);
    bpc_op_call c = {.op = op, .p = &p, .n_in = n_in, .n_out = n_out, .in = in, .out = out};
    return dispatch(dev, &c);
}

/* blas_cpu's op entry: every op of the op table, routed by its kind. The
 * ops of ABI 1.0 go to this plugin's own entries for them (ops.c, matmul.c:
 * vmath kernels, OpenBLAS, the pool); the hot later ops to their own kernels
 * (gemm, cumsum/cumprod, topk, scatter-add; see op.h); the nn ops to nn.c;
 * the rest to the reference kernels, cut into slabs across threads where
 * each output element (elementwise ops) or row (reductions, hardmax, sort)
 * depends only on its own inputs. Cutting changes which thread computes a
 * value, never how, so those results are the binary backend's bits. */
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
    return bpk_op(d, c->op, c->p, c->n_in, in, c->n_out, out);
}

/* The reference over slabs of out[0]'s first n_axes axes; every view shares
 * those axes (same index in each). */
static bp_status split_ref(bpc_dev *d, const bpc_op_call *c, int32_t n_axes, int64_t work)
{
    const bp_view *v[BPC_MAX_VIEWS];
    slab_args a = {.call = c};
    int n = 0;
    if (c->n_in + c->n_out > BPC_MAX_VIEWS)
        return bpk_fail(d, BP_ERR_BACKEND, "blas_cpu: %s with %d views, more than a slab holds",
                        bp_op_name(c->op), (int)(c->n_in + c->n_out));
    for (int32_t k = 0; k < c->n_out; k++)
        v[n++] = c->out[k];
    for (int32_t k = 0; k < c->n_in; k++) {
        if (!c->in[k])
            a.absent |= 1u << k;
        v[n++] = c->in[k] ? c->in[k] : c->in[0]; /* a stand-in of the same shape */
    }
    return bpc_split(d, n, v, n_axes, NULL, false, work, ref_slab, &a);
}

static bp_status reference(bpc_dev *d, const bpc_op_call *c)
{
    return bpk_op(d, c->op, c->p, c->n_in, c->in, c->n_out, c->out);
}

/* The ops of ABI 1.0: this plugin's entries for them, their parameters
 * where opcodes.h's bp_op_kind puts them. */
static bp_status first_ops(bpc_dev *d, const bpc_op_call *c)
{
    const bp_view *const *in = c->in, *o = c->out[0];
    const bp_op_params *p = c->p;
    switch (bp_op_kind_of(c->op)) {
    case BP_KIND_UNARY: return bpc_unary(d, c->op, in[0], o);
    case BP_KIND_BINARY: return bpc_binary(d, c->op, in[0], in[1], o);
    case BP_KIND_WHERE: return bpc_where(d, in[0], in[1], in[2], o);
    case BP_KIND_REDUCE: return bpc_reduce(d, c->op, in[0], (int32_t)p->i[0], o);
    case BP_KIND_MATMUL: return bpc_matmul(d, in[0], in[1], o);
    case BP_KIND_MOVEMENT: return bpc_copy(d, c->op, in[0], o);
    case BP_KIND_GATHER: return bpc_gather(d, in[0], in[1], (int32_t)p->i[0], o);
    case BP_KIND_SOFTMAX: return bpc_softmax(d, c->op, in[0], o);
    case BP_KIND_FILL: return bpc_fill(d, o, &p->i[0]);
    case BP_KIND_RANDOM:
        return bpc_random(d, c->op, (uint64_t)p->i[0], (uint64_t)p->i[1], p->f[0], p->f[1], o);
    default: return reference(d, c); /* arange: cheap and rank 1, the reference as is */
    }
}

static bp_status dispatch(bpc_dev *d, const bpc_op_call *c)
{
    if (bp_op_since(c->op) == 0)
        return first_ops(d, c);
    const bp_view *x = c->in[0], *o = c->out[0]; /* every later op has an input */
    switch (bp_op_kind_of(c->op)) {
    case BP_KIND_GEMM: return bpc_gemm(d, c);
    case BP_KIND_SCAN: return bpc_scan(d, c);
    case BP_KIND_SORT:
        /* row-wise along the last axis: the leading axes may be cut */
        return c->op == BP_OP_TOPK ? bpc_topk(d, c) : split_ref(d, c, x->rank - 1, bpk_numel(x) * 8);
    case BP_KIND_HARDMAX: return split_ref(d, c, x->rank - 1, bpk_numel(x) * 8);
    case BP_KIND_SCATTER:
        if (c->op == BP_OP_SCATTER_ELEMENTS && c->p->i[1] == BP_SCATTER_ADD)
            return bpc_scatter_add(d, c);
        return reference(d, c);
    /* reductions: out's axes are x's kept ones, in order */
    case BP_KIND_REDUCE: return split_ref(d, c, o->rank, bpk_numel(x) * 2);
    case BP_KIND_TRILU: case BP_KIND_ONE_HOT: case BP_KIND_INDEX: return reference(d, c);
    case BP_KIND_UNARY: case BP_KIND_BINARY: case BP_KIND_CLIP: {
        /* elementwise: every view has out's shape */
        int64_t per = bp_op_info_of(c->op)->cost == BP_COST_HEAVY ? BPC_HEAVY : 2;
        return split_ref(d, c, o->rank, bpk_numel(o) * per);
    }
    default: /* nn.h's ops (nn.c) */
        return bpc_nn_op(d, c->op, c->p, c->n_in, c->in, c->n_out, c->out);
    }
}

bp_status bpc_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                 const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    bp_op_params scratch; /* this build's layout, whichever core sent it */
    const bp_op_params *p = bp_op_params_get(params, &scratch);
    if ((unsigned)op >= (unsigned)BP_OP_COUNT || n_out < 1)
        return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP, "blas_cpu: op code %d (%s) has no kernel here",
                        (int)op, bp_op_name(op));
    bpc_op_call c = {.op = op, .p = p, .n_in = n_in, .n_out = n_out, .in = in, .out = out};
    return dispatch(dev, &c);
}

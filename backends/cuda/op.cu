/* The op entry: every op of the op table (opcodes.h) arrives here with its
 * views and bp_op_params. The ops of ABI 1.0 go to their own entries
 * (elementwise.cu, reduce.cu, ...), which check and scope themselves; every
 * later op goes to its kind's function after the checks they share: the
 * views its row promises (inputs and outputs, optional ones NULL), a dtype
 * support.c declares, and the entry's scope (errors.cu: lost devices, the
 * caller's context, the outputs' memory and ready events). An op support.c
 * lists as a gap is BP_ERR_UNSUPPORTED_OP with the gap's reason; so is an op
 * code this build does not know (appended by a later ABI). */
#include <string.h>

#include "op.h"

typedef bp_status (*bpcu_op_fn)(bpcu_device *, const bpcu_opcall *);

/* The ops of 1.0, their parameters where opcodes.h's bp_op_kind puts them. */
static bp_status first_ops(bpcu_device *d, bp_op op, const bp_op_params *p,
                           const bp_view *const *in, const bp_view *const *out)
{
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: return bpcu_unary(d, op, in[0], out[0]);
    case BP_KIND_BINARY: return bpcu_binary(d, op, in[0], in[1], out[0]);
    case BP_KIND_WHERE: return bpcu_where(d, in[0], in[1], in[2], out[0]);
    case BP_KIND_REDUCE: return bpcu_reduce(d, op, in[0], (int32_t)p->i[0], out[0]);
    case BP_KIND_MATMUL: return bpcu_matmul(d, in[0], in[1], out[0]);
    case BP_KIND_MOVEMENT: return bpcu_copy(d, op, in[0], out[0]);
    case BP_KIND_GATHER: return bpcu_gather(d, in[0], in[1], (int32_t)p->i[0], out[0]);
    case BP_KIND_SOFTMAX: return bpcu_softmax(d, op, in[0], out[0]);
    case BP_KIND_FILL: return bpcu_fill(d, out[0], &p->i[0]); /* the element's bytes first */
    case BP_KIND_ARANGE: return bpcu_arange(d, p->f[0], p->f[1], out[0]);
    case BP_KIND_RANDOM:
        return bpcu_random(d, op, (uint64_t)p->i[0], (uint64_t)p->i[1], p->f[0], p->f[1], out[0]);
    default:
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s is not an op of ABI 1.0",
                         bp_op_name(op));
    }
}

static bp_status conv_kind(bpcu_device *d, const bpcu_opcall *c)
{
    return c->op == BP_OP_CONV ? bpcu_nn_conv(d, c) : bpcu_nn_conv_transpose(d, c);
}

/* The later ops: one function per kind (those serving several ops read
 * c->op). A kind appended to opcodes.h stops the build until it has one. */
static bpcu_op_fn later_op(bp_op_kind kind)
{
    switch (kind) {
    case BP_KIND_UNARY: return bpcu_op_unary;
    case BP_KIND_BINARY: return bpcu_op_binary;
    case BP_KIND_CLIP: return bpcu_op_clip;
    case BP_KIND_REDUCE: return bpcu_op_reduce;
    case BP_KIND_HARDMAX: return bpcu_op_hardmax;
    case BP_KIND_SCAN: return bpcu_op_scan;
    case BP_KIND_SORT: return bpcu_op_sort;
    case BP_KIND_TRILU: return bpcu_op_trilu;
    case BP_KIND_ONE_HOT: return bpcu_op_one_hot;
    case BP_KIND_INDEX: return bpcu_op_gather;
    case BP_KIND_SCATTER: return bpcu_op_scatter;
    case BP_KIND_GEMM: return bpcu_op_gemm;
    case BP_KIND_CONV: return conv_kind;
    case BP_KIND_POOL: return bpcu_nn_pool;
    case BP_KIND_LRN: return bpcu_nn_lrn;
    case BP_KIND_NORM: return bpcu_nn_norm;
    case BP_KIND_LOSS: return bpcu_nn_loss;
    case BP_KIND_RESIZE: return bpcu_nn_resize;
    case BP_KIND_WHERE: case BP_KIND_MATMUL: case BP_KIND_MOVEMENT: case BP_KIND_GATHER:
    case BP_KIND_SOFTMAX: case BP_KIND_FILL: case BP_KIND_ARANGE: case BP_KIND_RANDOM:
    case BP_KIND_COUNT: break; /* kinds of 1.0 only (first_ops) */
    }
    return NULL;
}
static_assert(BP_KIND_COUNT == 26, "opcodes.h has a new kind: route it in later_op");

/* Whether the views are the ones op's row names: n_in inputs and n_out
 * outputs, each present unless the row marks it optional. */
static bool views_fit(bp_op op, int32_t n_in, const bp_view *const *in, int32_t n_out,
                      const bp_view *const *out)
{
    const bp_op_info *row = bp_op_info_of(op);
    uint32_t opt_in, opt_out;
    if (n_in != bp_op_arity(row->in, &opt_in) || n_out != bp_op_arity(row->out, &opt_out) ||
        n_in > 5 || n_out > 3 || !in || !out)
        return false;
    bool ok = true;
    for (int32_t k = 0; ok && k < n_in; k++)
        ok = in[k] || (opt_in >> k & 1u);
    for (int32_t k = 0; ok && k < n_out; k++)
        ok = out[k] || (opt_out >> k & 1u);
    return ok;
}

bp_status bpcu_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                  const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    if ((unsigned)op < (unsigned)BP_OP_COUNT && bp_op_since(op) == 0) {
        bp_op_params p; /* in this build's layout, whichever core sent it */
        bp_op_params_read(params, &p);
        return first_ops(d, op, &p, in, out);
    }
    bpcu_op_fn fn = (unsigned)op < (unsigned)BP_OP_COUNT ? later_op(bp_op_kind_of(op)) : NULL;
    if (!fn)
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: op code %d (%s) is not implemented by "
                         "this build of the plugin", (int)op, bp_op_name(op));
    if (!views_fit(op, n_in, in, n_out, out))
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: %s takes the views %s -> %s "
                         "(opcodes.h), not %d inputs and %d outputs", bp_op_name(op),
                         bp_op_info_of(op)->in, bp_op_info_of(op)->out, (int)n_in, (int)n_out);
    if (!bpcu_op_supported(op, in[0]->dtype)) {
        const char *why = bpcu_op_missing(op); /* a gap of support.c */
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s is not implemented for %s%s%s",
                         bp_op_name(op), bp_dtype_name(in[0]->dtype), why ? ": " : "",
                         why ? why : "");
    }
    bpcu_opcall c;
    memset(&c, 0, sizeof c);
    c.op = op;
    bp_op_params_read(params, &c.p); /* in this build's layout, whichever core sent it */
    for (int32_t k = 0; k < n_in; k++)
        c.in[k] = in[k];
    for (int32_t k = 0; k < n_out; k++)
        c.out[k] = out[k];
    bpcu_scope scope(d, bp_op_name(op), c.out[0], {c.in[0], c.in[1], c.in[2], c.in[3], c.in[4]},
                     c.out[1], c.out[2]);
    if (scope.status != BP_OK)
        return scope.status;
    return fn(d, &c);
}

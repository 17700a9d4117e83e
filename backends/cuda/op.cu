/* The op entry: every op of the op table (opcodes.h) arrives here with its
 * views and bp_op_params and goes to its kind's function after the checks
 * they share: the views its row promises (inputs and outputs, optional ones
 * NULL), a dtype support.c declares, and the entry's scope (errors.cu: lost
 * devices, the caller's context, the outputs' memory and ready events). A
 * kind's function switches on the op code where its ops differ. An op
 * support.c lists as a gap is BP_ERR_UNSUPPORTED_OP with the gap's reason;
 * so is an op code this build does not know (appended by a later ABI). */
#include <string.h>

#include "op.h"

typedef bp_status (*bpcu_op_fn)(bpcu_device *, const bpcu_opcall *);

/* The kinds whose typed functions other kernels reuse (each opens its own
 * scope inside the entry's), their parameters where opcodes.h's bp_op_kind
 * puts them. */
static bp_status where_kind(bpcu_device *d, const bpcu_opcall *c)
{
    return bpcu_where(d, c->in[0], c->in[1], c->in[2], c->out[0]);
}
static bp_status matmul_kind(bpcu_device *d, const bpcu_opcall *c)
{
    return bpcu_matmul(d, c->in[0], c->in[1], c->out[0]);
}
static bp_status movement_kind(bpcu_device *d, const bpcu_opcall *c)
{
    return bpcu_copy(d, c->op, c->in[0], c->out[0]);
}
static bp_status gather_kind(bpcu_device *d, const bpcu_opcall *c)
{
    return bpcu_gather(d, c->in[0], c->in[1], (int32_t)c->p.i[0], c->out[0]);
}
static bp_status softmax_kind(bpcu_device *d, const bpcu_opcall *c)
{
    return bpcu_softmax(d, c->op, c->in[0], c->out[0]);
}
static bp_status fill_kind(bpcu_device *d, const bpcu_opcall *c)
{
    return bpcu_fill(d, c->out[0], &c->p.i[0]); /* the element's bytes first */
}
static bp_status arange_kind(bpcu_device *d, const bpcu_opcall *c)
{
    return bpcu_arange(d, c->p.f[0], c->p.f[1], c->out[0]);
}
static bp_status random_kind(bpcu_device *d, const bpcu_opcall *c)
{
    return bpcu_random(d, c->op, (uint64_t)c->p.i[0], (uint64_t)c->p.i[1], c->p.f[0], c->p.f[1],
                       c->out[0]);
}

static bp_status conv_kind(bpcu_device *d, const bpcu_opcall *c)
{
    return c->op == BP_OP_CONV ? bpcu_nn_conv(d, c) : bpcu_nn_conv_transpose(d, c);
}

/* One function per kind (those serving several ops read c->op). A kind
 * appended to opcodes.h stops the build until it has one. */
static bpcu_op_fn kind_fn(bp_op_kind kind)
{
    switch (kind) {
    case BP_KIND_UNARY: return bpcu_op_unary;
    case BP_KIND_BINARY: return bpcu_op_binary;
    case BP_KIND_WHERE: return where_kind;
    case BP_KIND_REDUCE: return bpcu_op_reduce;
    case BP_KIND_MATMUL: return matmul_kind;
    case BP_KIND_MOVEMENT: return movement_kind;
    case BP_KIND_GATHER: return gather_kind;
    case BP_KIND_SOFTMAX: return softmax_kind;
    case BP_KIND_FILL: return fill_kind;
    case BP_KIND_ARANGE: return arange_kind;
    case BP_KIND_RANDOM: return random_kind;
    case BP_KIND_CLIP: return bpcu_op_clip;
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
    case BP_KIND_COUNT: break;
    }
    return NULL;
}
static_assert(BP_KIND_COUNT == 26, "opcodes.h has a new kind: route it in kind_fn");

/* Whether the views are the ones op's row names: n_in inputs and n_out
 * outputs, each present unless the row marks it optional. */
static bool views_fit(bp_op op, int32_t n_in, const bp_view *const *in, int32_t n_out,
                      const bp_view *const *out)
{
    const bp_op_info *row = bp_op_info_of(op);
    uint32_t opt_in, opt_out;
    if (n_in != bp_op_arity(row->in, &opt_in) || n_out != bp_op_arity(row->out, &opt_out) ||
        n_in > 5 || n_out > 3 || (n_in > 0 && !in) || !out)
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
    bpcu_op_fn fn = (unsigned)op < (unsigned)BP_OP_COUNT ? kind_fn(bp_op_kind_of(op)) : NULL;
    if (!fn)
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: op code %d (%s) is not implemented by "
                         "this build of the plugin", (int)op, bp_op_name(op));
    if (!views_fit(op, n_in, in, n_out, out))
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: %s takes the views %s -> %s "
                         "(opcodes.h), not %d inputs and %d outputs", bp_op_name(op),
                         bp_op_info_of(op)->in, bp_op_info_of(op)->out, (int)n_in, (int)n_out);
    /* the dtype the op is typed by: its TYPED input's, or (creation ops) out's */
    int32_t typed = bp_op_info_of(op)->typed;
    bp_dtype dt = typed >= 0 && typed < n_in && in[typed] ? in[typed]->dtype : out[0]->dtype;
    if (!bpcu_op_supported(op, dt)) {
        const char *why = bpcu_op_missing(op); /* a gap of support.c */
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s is not implemented for %s%s%s",
                         bp_op_name(op), bp_dtype_name(dt), why ? ": " : "", why ? why : "");
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

/* The op call of a case, in the worker: the case's parameters (cases*.c) as
 * the public API's arguments, by the op's kind (opcodes.h). A unary or
 * binary op, with or without parameters, needs nothing here. */
#include "internal.h"

/* reduce_var and reduce_std take a correction; the others go through
 * bp_reduce. */
static bp_status reduce(const cf_case *c, const bp_tensor *x, bp_tensor **out)
{
    int32_t n, axes[BP_MAX_RANK];
    bool keep;
    cf_reduce_axes(c, &n, axes, &keep);
    const int32_t *ax = n ? axes : NULL;
    switch ((bp_op)c->op) {
    case BP_OP_REDUCE_VAR: return bp_reduce_var(x, n, ax, keep, c->pf[0], out);
    case BP_OP_REDUCE_STD: return bp_reduce_std(x, n, ax, keep, c->pf[0], out);
    default: return bp_reduce((bp_op)c->op, x, n, ax, keep, out);
    }
}

static bp_status movement(const cf_case *c, const cf_operand *ops, int n_in, bp_tensor **out)
{
    switch ((bp_op)c->op) {
    case BP_OP_TRANSPOSE: return bp_transpose(ops[0].t, cf_transpose_perm(c), out);
    case BP_OP_SLICE: {
        int64_t a[BP_MAX_RANK], b[BP_MAX_RANK], s[BP_MAX_RANK];
        bool has_stops;
        cf_slice_params(c, a, b, s, &has_stops);
        return bp_slice(ops[0].t, a, has_stops ? b : NULL, s, out);
    }
    case BP_OP_CONCAT: {
        const bp_tensor *xs[CF_MAX_OPERANDS];
        for (int k = 0; k < n_in; k++)
            xs[k] = ops[k].t;
        return bp_concat(n_in, xs, cf_axis_param(c), out);
    }
    case BP_OP_BROADCAST_TO: {
        int32_t rank;
        int64_t shape[BP_MAX_RANK];
        cf_broadcast_target(c, &rank, shape);
        return bp_broadcast_to(ops[0].t, rank, shape, out);
    }
    case BP_OP_PAD: {
        int64_t b[BP_MAX_RANK], a[BP_MAX_RANK];
        double v;
        cf_pad_params(c, b, a, &v);
        return bp_pad(ops[0].t, b, a, v, out);
    }
    case BP_OP_COPY: return bp_cast(ops[0].t, c->dtype, out);
    case BP_OP_CAST: return bp_cast(ops[0].t, c->dtype2, out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

/* fill, arange and the random draws: made on the backend, no inputs. */
static bp_status creation(bp_backend *be, const cf_case *c, bp_tensor **out)
{
    switch ((bp_op)c->op) {
    case BP_OP_FILL:
        if (c->variant >= 100) /* bp_eye: fills of a strided diagonal view */
            return bp_eye(be, c->dtype, c->shape[0][0], c->shape[0][1], out);
        return bp_full(be, c->dtype, c->rank[0], c->shape[0], cf_fill_value(c), out);
    case BP_OP_ARANGE: {
        double a, b, s;
        cf_arange_params(c, &a, &b, &s);
        return bp_arange(be, c->dtype, a, b, s, out);
    }
    case BP_OP_RANDOM_UNIFORM:
        return bp_random_uniform(be, c->dtype, c->rank[0], c->shape[0], c->seed, 1000u, c->lo[0],
                                 c->hi[0], out);
    case BP_OP_RANDOM_NORMAL:
        return bp_random_normal(be, c->dtype, c->rank[0], c->shape[0], c->seed, 1000u, c->lo[0],
                                c->hi[0], out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

/* The ops whose parameters sit in pi/pf (sort and topk: *out2, the indices). */
static bp_status parametrised(const cf_case *c, const cf_operand *ops, int n_in, bp_tensor **out,
                              bp_tensor **out2)
{
    const int64_t *p = c->pi;
    switch ((bp_op)c->op) {
    case BP_OP_CLIP: {
        const bp_tensor *lo = p[0] ? ops[1].t : NULL, *hi = p[1] ? ops[1 + (p[0] != 0)].t : NULL;
        return bp_clip(ops[0].t, lo, hi, out);
    }
    case BP_OP_HARDMAX: return bp_hardmax(ops[0].t, (int32_t)p[0], out);
    case BP_OP_CUMSUM: return bp_cumsum(ops[0].t, (int32_t)p[0], p[1], p[2], out);
    case BP_OP_CUMPROD: return bp_cumprod(ops[0].t, (int32_t)p[0], p[1], p[2], out);
    case BP_OP_SORT: return bp_sort(ops[0].t, (int32_t)p[0], p[1], out, out2);
    case BP_OP_TOPK: return bp_topk(ops[0].t, p[0], (int32_t)p[1], p[2], p[3], out, out2);
    case BP_OP_TRILU: return bp_trilu(ops[0].t, p[0], p[1], out);
    case BP_OP_ONE_HOT: return bp_one_hot(ops[0].t, p[0], (int32_t)p[1], ops[1].t, out);
    case BP_OP_GATHER_ELEMENTS: return bp_gather_elements(ops[0].t, ops[1].t, (int32_t)p[0], out);
    case BP_OP_GATHER_ND: return bp_gather_nd(ops[0].t, ops[1].t, (int32_t)p[0], out);
    case BP_OP_SCATTER_ELEMENTS:
        return bp_scatter_elements(ops[0].t, ops[1].t, ops[2].t, (int32_t)p[0],
                                   (bp_scatter_reduction)p[1], out);
    case BP_OP_SCATTER_ND:
        return bp_scatter_nd(ops[0].t, ops[1].t, ops[2].t, (bp_scatter_reduction)p[1], out);
    case BP_OP_GEMM:
        return bp_gemm(ops[0].t, ops[1].t, n_in > 2 ? ops[2].t : NULL, c->pf[0], c->pf[1], p[0],
                       p[1], out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

bp_status cf_call_op(bp_backend *be, const cf_case *c, const cf_operand *ops, int n_in,
                     bp_tensor **out, bp_tensor **out2)
{
    if (cf_is_compose(c->op))
        return cf_call_compose(c, ops, n_in, out, out2);
    if (c->op < 0 || c->op >= BP_OP_COUNT)
        return BP_ERR_INVALID_ARGUMENT;
    bp_op op = (bp_op)c->op;
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: return bp_unary_params(op, ops[0].t, c->pf[0], c->pf[1], out);
    case BP_KIND_BINARY: return bp_binary(op, ops[0].t, ops[1].t, out);
    case BP_KIND_WHERE: return bp_where(ops[0].t, ops[1].t, ops[2].t, out);
    case BP_KIND_REDUCE: return reduce(c, ops[0].t, out);
    case BP_KIND_MATMUL: return bp_matmul(ops[0].t, ops[1].t, out);
    case BP_KIND_MOVEMENT: return movement(c, ops, n_in, out);
    case BP_KIND_GATHER: return bp_gather(ops[0].t, ops[1].t, cf_axis_param(c), out);
    case BP_KIND_SOFTMAX:
        return op == BP_OP_SOFTMAX ? bp_softmax(ops[0].t, cf_axis_param(c), out)
                                   : bp_log_softmax(ops[0].t, cf_axis_param(c), out);
    case BP_KIND_FILL: case BP_KIND_ARANGE: case BP_KIND_RANDOM: return creation(be, c, out);
    default: return parametrised(c, ops, n_in, out, out2);
    }
}

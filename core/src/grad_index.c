/* Gradient rules of the gathers: gather, gather_elements and gather_nd read
 * x at indices, so x's gradient is the output's gradient added back at
 * those indices (a scatter-add into zeros: an index read twice gets both).
 * Indices carry none. The views are dense (ops_index.c). The scatters give
 * their gradient to x where no update landed and to each update that won
 * its place (with indices that repeat, the last write in the indices'
 * row-major order: ops.h), found by scattering the updates' own positions. */
#include "grad_rule.h"


static const bp_tensor *zeros_like(bp__vjp *c, const bp_view *v)
{
    if (c->st != BP_OK)
        return NULL;
    bp_tensor *t = NULL;
    bp_status st = bp_zeros(c->rec, v->dtype, v->rank, v->shape, &t);
    return KEEP(st, t);
}

static const bp_tensor *scatter_add(bp__vjp *c, const bp_tensor *into, const bp_tensor *idx,
                                    const bp_tensor *upd, int32_t axis)
{
    if (c->st != BP_OK || !into || !idx || !upd)
        return NULL;
    bp_tensor *t = NULL;
    bp_status st = bp_scatter_elements(into, idx, upd, axis, BP_SCATTER_ADD, &t);
    return KEEP(st, t);
}

/* gather: y = x.take(indices, axis). With the index axes of y flattened
 * into one and the indices broadcast over y's other axes, a scatter_elements
 * along the axis adds G back into x's shape. */
static bp_status gather_rule(bp__vjp *c)
{
    const bp__gnode *n = c->n;
    const bp_view *vx = &n->view[0], *vi = &n->view[1];
    int32_t ax = (int32_t)n->params->i[0];
    int64_t count = 1, yshape[BP_MAX_RANK], ishape[BP_MAX_RANK];
    for (int32_t k = 0; k < vi->rank; k++)
        count *= vi->shape[k];
    for (int32_t k = 0; k < vx->rank; k++) {
        yshape[k] = k == ax ? count : vx->shape[k];
        ishape[k] = k == ax ? count : 1;
    }
    const bp_tensor *g = RESHAPE(G, vx->rank, yshape);
    const bp_tensor *idx = RESHAPE(IN(1), vx->rank, ishape);
    bp_tensor *full = NULL;
    bp_status st = c->st == BP_OK ? bp_broadcast_to(idx, vx->rank, yshape, &full) : c->st;
    c->gx[0] = scatter_add(c, zeros_like(c, vx), KEEP(st, full), g, ax);
    return c->st;
}

/* x at idx: gather_elements along axis, or gather_nd. */
static const bp_tensor *gather_at(bp__vjp *c, bool nd, const bp_tensor *x, const bp_tensor *idx,
                                  int32_t axis)
{
    if (c->st != BP_OK || !x || !idx)
        return NULL;
    bp_tensor *t = NULL;
    bp_status st = nd ? bp_gather_nd(x, idx, 0, &t) : bp_gather_elements(x, idx, axis, &t);
    return KEEP(st, t);
}

/* The scatters. ADD: x's gradient is G, each update's G at its place.
 * NONE: the updates' flat positions (i64) scattered into -1s say which
 * update won each place, so x's gradient is G where none landed (-1 stays),
 * and an update's is G at its place where its own position is the one
 * there. */
static bp_status scatter_rule(bp__vjp *c)
{
    const bp__gnode *n = c->n;
    bool nd = n->op == BP_OP_SCATTER_ND;
    int32_t ax = nd ? 0 : (int32_t)n->params->i[0];
    int64_t red = n->params->i[1];
    const bp_view *vx = &n->view[0], *vu = &n->view[2];
    if (red != BP_SCATTER_NONE && red != BP_SCATTER_ADD)
        return bp__error(BP_ERR_UNSUPPORTED_OP, "bp_graph_grad: %s's gradient with reduction "
                         "mul, max or min is not supported yet (none and add are)",
                         bp_op_name(n->op));
    const bp_tensor *idx = IN(1);
    const bp_tensor *gu = c->want[2] ? gather_at(c, nd, G, idx, ax) : NULL;
    if (red == BP_SCATTER_ADD) {
        c->gx[0] = c->want[0] ? G : NULL;
        c->gx[2] = gu;
        return c->st;
    }
    int64_t count = 1;
    for (int32_t k = 0; k < vu->rank; k++)
        count *= vu->shape[k];
    bp_tensor *t = NULL;
    bp_status st = c->st == BP_OK ? bp_arange_i64(c->rec, BP_I64, 0, count, 1, &t) : c->st;
    const bp_tensor *ids = RESHAPE(KEEP(st, t), vu->rank, vu->shape);
    t = NULL;
    st = c->st == BP_OK ? bp_full_i64(c->rec, BP_I64, vx->rank, vx->shape, -1, &t) : c->st;
    const bp_tensor *none = KEEP(st, t);
    t = NULL;
    st = c->st == BP_OK ? (nd ? bp_scatter_nd(none, idx, ids, BP_SCATTER_NONE, &t)
                              : bp_scatter_elements(none, idx, ids, ax, BP_SCATTER_NONE, &t))
                        : c->st;
    const bp_tensor *won = KEEP(st, t);
    if (c->want[0])
        c->gx[0] = bp__e_where(c, bp__e_bin(c, BP_OP_EQ, won, none), G,
                               bp__e_const(c, G, 0));
    if (c->want[2])
        c->gx[2] = bp__e_where(c, bp__e_bin(c, BP_OP_EQ, gather_at(c, nd, won, idx, ax), ids), gu,
                               bp__e_const(c, G, 0));
    return c->st;
}

/* gather_nd's index tuples (..., m) after b batch axes, as tuples of all
 * of x's leading axes (..., b + m): each index prefixed by its batch
 * coordinates (an arange per batch axis, broadcast), so one scatter_nd
 * into x adds the gradient back. */
static const bp_tensor *with_batch_coordinates(bp__vjp *c, const bp_tensor *idx, int32_t b)
{
    if (b == 0 || c->st != BP_OK || !idx)
        return idx;
    int32_t r = idx->rank;
    int64_t one[BP_MAX_RANK], shape[BP_MAX_RANK];
    for (int32_t k = 0; k < r; k++)
        shape[k] = k == r - 1 ? 1 : idx->shape[k];
    const bp_tensor *parts[BP_MAX_RANK + 1];
    for (int32_t j = 0; j < b; j++) {
        for (int32_t k = 0; k < r; k++)
            one[k] = k == j ? idx->shape[j] : 1;
        bp_tensor *a = NULL, *full = NULL;
        bp_status st = c->st == BP_OK ? bp_arange_i64(c->rec, idx->dtype, 0, idx->shape[j], 1, &a)
                                      : c->st;
        const bp_tensor *col = RESHAPE(KEEP(st, a), r, one);
        st = c->st == BP_OK ? bp_broadcast_to(col, r, shape, &full) : c->st;
        parts[j] = KEEP(st, full);
    }
    parts[b] = idx;
    if (c->st != BP_OK)
        return NULL;
    bp_tensor *t = NULL;
    bp_status st = bp_concat(b + 1, parts, r - 1, &t);
    return KEEP(st, t);
}

bp_status bp__vjp_index(bp__vjp *c)
{
    const bp__gnode *n = c->n;
    switch (n->op) {
    case BP_OP_GATHER:
        return gather_rule(c);
    case BP_OP_GATHER_ELEMENTS:
        c->gx[0] = scatter_add(c, zeros_like(c, &n->view[0]), IN(1), G, (int32_t)n->params->i[0]);
        return c->st;
    case BP_OP_GATHER_ND: {
        bp_tensor *t = NULL;
        const bp_tensor *z = zeros_like(c, &n->view[0]);
        const bp_tensor *idx = with_batch_coordinates(c, IN(1), (int32_t)n->params->i[0]);
        bp_status st = c->st == BP_OK ? bp_scatter_nd(z, idx, G, BP_SCATTER_ADD, &t) : c->st;
        c->gx[0] = KEEP(st, t);
        return c->st;
    }
    case BP_OP_SCATTER_ELEMENTS:
    case BP_OP_SCATTER_ND:
        return scatter_rule(c);
    default:
        return bp__error(BP_ERR_BACKEND, "bp_graph_grad: no index rule for %s (a defect in "
                         "the gradient column)", bp_op_name(n->op));
    }
}

/* sort and topk: along the node's last axis (the core moves the op's axis
 * there), each value came from x at its index, so x's gradient is the
 * values' gradient added back at the indices (each index once: sort is
 * stable, topk's are distinct). The indices are the node's own: its entry
 * writes both outputs, wanted or not. They carry no gradient. */
bp_status bp__vjp_sort(bp__vjp *c)
{
    const bp__gnode *n = c->n;
    if (c->gy[1])
        return bp__error(BP_ERR_UNSUPPORTED_OP, "bp_graph_grad: the gradient reaches %s's "
                         "indices, which are integers and have none", bp_op_name(n->op));
    const bp_view *vx = &n->view[0];
    const bp_tensor *idx = bp__vjp_out(c, 1);
    c->gx[0] = scatter_add(c, zeros_like(c, vx), idx, G, vx->rank - 1);
    return c->st;
}

/* Rewriting a plan's patterns into the one op that computes them: softmax
 * and log_softmax written with primitives, as people write them (and as
 * ONNX exporters expand them),
 *
 *     m = max(x, axis, keepdims)          m = max(x, axis, keepdims)
 *     d = x - m                           d = x - m
 *     e = exp(d)                          e = exp(d)
 *     s = sum(e, axis, keepdims)          s = sum(e, axis, keepdims)
 *     y = e / s                           y = d - log(s)
 *
 * become one softmax (log_softmax) node along that axis: one pass that
 * keeps each row in cache, where the five or six nodes read and write the
 * whole tensor six times. The same algorithm (the maximum subtracted
 * first), so the result is within the op's tolerance of the primitives;
 * the form without the maximum is left alone (it overflows where softmax
 * does not). A pattern is rewritten only when nothing else reads its
 * intermediate values, none is an output, and the backend takes the op for
 * the dtype. Matching is on the nodes' views, so it holds whatever the
 * spelling (keepdims or an unsqueeze, which axis, negative or not). */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

typedef struct rw_slots {
    int32_t *writer; /* per slot: the node writing it, -1 none, -2 several */
    int32_t *reads;  /* per slot: how many node operands read it */
} rw_slots;

/* v is the whole value of `full`'s shape, row-major from offset 0. */
static bool dense_as(const bp_view *v, const bp_view *full)
{
    if (v->offset != 0 || v->rank != full->rank || v->dtype != full->dtype)
        return false;
    for (int32_t k = 0; k < v->rank; k++)
        if (v->shape[k] != full->shape[k])
            return false;
    return bp__view_is_dense(v);
}

/* v (rank r - 1) is the dense value of full's shape with axis k dropped,
 * as a one-axis reduction writes it. */
static bool reduced_dense(const bp_view *v, const bp_view *full, int32_t k)
{
    if (v->offset != 0 || v->rank != full->rank - 1 || v->dtype != full->dtype)
        return false;
    for (int32_t j = 0, m = 0; j < full->rank; j++)
        if (j != k && v->shape[m++] != full->shape[j])
            return false;
    return bp__view_is_dense(v);
}

/* v reads a value of full's shape with axis k dropped (dense), broadcast
 * along axis k to full's shape: the elementwise operand of `x - m`. */
static bool broadcast_along(const bp_view *v, const bp_view *full, int32_t k)
{
    if (v->offset != 0 || v->rank != full->rank || v->dtype != full->dtype ||
        (full->shape[k] != 1 && v->strides[k] != 0))
        return false;
    int64_t stride = 1;
    for (int32_t j = full->rank - 1; j >= 0; j--) {
        if (v->shape[j] != full->shape[j])
            return false;
        if (j == k)
            continue;
        if (v->shape[j] != 1 && v->strides[j] != stride)
            return false;
        stride *= v->shape[j];
    }
    return true;
}

/* v is `full` with axis k moved last, as a reduction over k (or an op
 * along k) reads it. */
static bool axis_last(const bp_view *v, const bp_view *full, int32_t k)
{
    int32_t perm[BP_MAX_RANK];
    bp__axis_last_perm(full->rank, k, perm);
    bp_view p = *full;
    bp__view_permute(&p, perm);
    return bp__view_same_elements(v, &p);
}

/* The node writing slot s alone (one writer, one output), with op `op`,
 * read by exactly `reads` operands, and not a result of the plan; or -1. */
static int32_t sole(const bp_graph_exec *e, const rw_slots *rs, const bool *is_output, int32_t s,
                    bp_op op, int32_t reads)
{
    if (s < 0 || is_output[s] || rs->reads[s] != reads || rs->writer[s] < 0)
        return -1;
    const bp__gnode *n = &e->nodes[rs->writer[s]];
    if (n->op != op || n->n_out != 1 || n->check)
        return -1;
    return rs->writer[s];
}

/* A one-axis reduction node over the value its input view reads: that
 * axis (of the input as the elementwise nodes see it, `full`), or -1. */
static int32_t reduced_axis(const bp__gnode *r, const bp_view *full)
{
    if (r->n_in != 1 || r->params->i[0] != 1)
        return -1;
    /* axes of extent 1 may match more than one k: reducing any of them is
     * the same (each element its own row) */
    for (int32_t k = 0; k < full->rank; k++)
        if (axis_last(&r->view[0], full, k) &&
            reduced_dense(&r->view[1], full, k))
            return k;
    return -1;
}

typedef struct rw_match {
    bp_op op;             /* SOFTMAX or LOG_SOFTMAX */
    int32_t gone[5];      /* the nodes it replaces, besides the last */
    int32_t n_gone;
    int32_t x_ref;        /* the input's operand reference */
    const bp_view *vx;    /* its view with the axis last (the max node's) */
    int32_t axis;
} rw_match;

/* d = x - max(x, axis): the max node, the axis, and x's operand. */
static bool match_centered(const bp_graph_exec *e, const rw_slots *rs, const bool *is_output,
                           int32_t nd, rw_match *m)
{
    const bp__gnode *d = &e->nodes[nd];
    if (d->n_in != 2)
        return false;
    const bp_view *vx = &d->view[0], *vd = &d->view[2];
    if (!dense_as(vd, vx) || !bp_dtype_is_float(vx->dtype))
        return false;
    int32_t nm = sole(e, rs, is_output, d->ref[1], BP_OP_MAX, 1);
    if (nm < 0 || e->nodes[nm].ref[0] != d->ref[0] || nm >= nd)
        return false;
    int32_t k = reduced_axis(&e->nodes[nm], vx);
    if (k < 0 || !broadcast_along(&d->view[1], vx, k))
        return false;
    /* x may not change between the max and the rewritten node: it is an
     * input, a captured tensor, or a value written once, before the max */
    int32_t x = d->ref[0];
    if (x >= 0 && (rs->writer[x] == -2 || rs->writer[x] >= nm))
        return false;
    m->gone[m->n_gone++] = nm;
    m->gone[m->n_gone++] = nd;
    m->x_ref = x;
    m->vx = &e->nodes[nm].view[0];
    m->axis = k;
    return true;
}

/* e = exp(d); s = sum(e, axis) with d centered: the nodes, in m. */
static bool match_exp_sum(const bp_graph_exec *e, const rw_slots *rs, const bool *is_output,
                          int32_t ne, int32_t ns, int32_t d_reads, rw_match *m)
{
    const bp__gnode *x = &e->nodes[ne], *s = &e->nodes[ns];
    if (x->n_in != 1 || !dense_as(&x->view[0], &x->view[1]))
        return false;
    int32_t nd = sole(e, rs, is_output, x->ref[0], BP_OP_SUB, d_reads);
    if (nd < 0 || nd >= ne || s->ref[0] != x->ref[1] || ne >= ns)
        return false;
    if (!match_centered(e, rs, is_output, nd, m))
        return false;
    if (reduced_axis(s, &x->view[1]) != m->axis)
        return false;
    m->gone[m->n_gone++] = ne;
    m->gone[m->n_gone++] = ns;
    return true;
}

/* y = e / s (softmax) at node i. */
static bool match_softmax(const bp_graph_exec *e, const rw_slots *rs, const bool *is_output,
                          int32_t i, rw_match *m)
{
    const bp__gnode *y = &e->nodes[i];
    if (y->n_in != 2 || !dense_as(&y->view[0], &y->view[2]))
        return false;
    int32_t ne = sole(e, rs, is_output, y->ref[0], BP_OP_EXP, 2);
    int32_t ns = sole(e, rs, is_output, y->ref[1], BP_OP_SUM, 1);
    if (ne < 0 || ns < 0 || ns >= i || !match_exp_sum(e, rs, is_output, ne, ns, 1, m))
        return false;
    m->op = BP_OP_SOFTMAX;
    return broadcast_along(&y->view[1], &y->view[2], m->axis);
}

/* y = d - log(s) (log_softmax) at node i. */
static bool match_log_softmax(const bp_graph_exec *e, const rw_slots *rs,
                              const bool *is_output, int32_t i, rw_match *m)
{
    const bp__gnode *y = &e->nodes[i];
    if (y->n_in != 2 || !dense_as(&y->view[0], &y->view[2]))
        return false;
    int32_t nl = sole(e, rs, is_output, y->ref[1], BP_OP_LOG, 1);
    if (nl < 0 || nl >= i || e->nodes[nl].n_in != 1)
        return false;
    const bp__gnode *l = &e->nodes[nl];
    int32_t ns = sole(e, rs, is_output, l->ref[0], BP_OP_SUM, 1);
    /* log reads the sums whole (with or without the kept axis of 1) */
    if (ns < 0 || ns >= nl || l->view[0].offset != 0 || !bp__view_is_dense(&l->view[0]) ||
        bp__view_numel(&l->view[0]) != bp__view_numel(&e->nodes[ns].view[1]) ||
        !dense_as(&l->view[1], &l->view[0]))
        return false;
    int32_t ne = sole(e, rs, is_output, e->nodes[ns].ref[0], BP_OP_EXP, 1);
    if (ne < 0 || e->nodes[ne].ref[0] != y->ref[0] ||
        !match_exp_sum(e, rs, is_output, ne, ns, 2, m))
        return false;
    m->gone[m->n_gone++] = nl;
    m->op = BP_OP_LOG_SOFTMAX;
    return broadcast_along(&y->view[1], &y->view[2], m->axis);
}

static bool backend_takes(const bp_backend *be, bp_op op, bp_dtype dt)
{
    return bp__op_has_entry(be, op) && be->vt->abi_minor >= bp_op_since(op) &&
           (!BP__HAS(be->vt, supports) || be->vt->supports(be->dev, op, dt));
}

/* Node i becomes the matched op; the nodes it replaces are marked dead. */
static bool rewrite(const bp_graph *g, bp_graph_exec *e, int32_t i, const rw_match *m, bool *dead)
{
    bp__gnode *y = &e->nodes[i];
    bp_view *v = bp__garena_take(g->arena, 2 * sizeof *v);
    if (!v)
        return false;
    int32_t perm[BP_MAX_RANK];
    bp__axis_last_perm(y->view[2].rank, m->axis, perm);
    v[0] = *m->vx;
    v[1] = y->view[2];
    bp__view_permute(&v[1], perm);
    int32_t out = y->ref[2];
    *y = (bp__gnode){.op = m->op, .n_in = 1, .n_out = 1, .view = v,
                     .params = &bp__graph_no_params, .check = NULL};
    y->ref[0] = m->x_ref;
    y->ref[1] = out;
    for (int32_t k = 0; k < m->n_gone; k++)
        dead[m->gone[k]] = true;
    return true;
}

/* Who writes each slot, and how many operands read it. */
static void count_slots(const bp_graph_exec *e, rw_slots *rs)
{
    for (int32_t s = 0; s < e->n_slots; s++)
        rs->writer[s] = -1;
    for (int32_t i = 0; i < e->n_nodes; i++) {
        const bp__gnode *n = &e->nodes[i];
        for (int32_t k = 0; k < n->n_in + n->n_out; k++) {
            int32_t s = n->ref[k];
            if (s < 0)
                continue;
            if (k < n->n_in)
                rs->reads[s]++;
            else
                rs->writer[s] = rs->writer[s] == -1 ? i : -2;
        }
    }
}

int32_t bp__graph_rewrite(const bp_graph *g, bp_graph_exec *e, const bool *is_output)
{
    int32_t ns = e->n_slots, nn = e->n_nodes, done = 0;
    rw_slots rs = {malloc(((size_t)ns + 1) * sizeof *rs.writer),
                   calloc((size_t)ns + 1, sizeof *rs.reads)};
    bool *dead = calloc((size_t)nn + 1, sizeof *dead);
    if (!rs.writer || !rs.reads || !dead) {
        free(rs.writer), free(rs.reads), free(dead);
        return -1;
    }
    count_slots(e, &rs);
    for (int32_t i = 0; i < nn; i++) {
        const bp__gnode *n = &e->nodes[i];
        if ((n->op != BP_OP_DIV && n->op != BP_OP_SUB) || n->check || n->n_in != 2 ||
            n->ref[2] < 0 || rs.writer[n->ref[2]] != i || n->view[2].offset != 0 ||
            !bp__view_is_dense(&n->view[2]))
            continue;
        rw_match m = {0};
        bool found = n->op == BP_OP_DIV ? match_softmax(e, &rs, is_output, i, &m)
                                        : match_log_softmax(e, &rs, is_output, i, &m);
        bool free_nodes = true;
        for (int32_t k = 0; found && k < m.n_gone; k++)
            free_nodes = free_nodes && !dead[m.gone[k]];
        if (!found || !free_nodes || !backend_takes(e->real, m.op, m.vx->dtype))
            continue;
        if (!rewrite(g, e, i, &m, dead)) {
            done = -1;
            break;
        }
        done++;
    }
    if (done > 0)
        bp__graph_drop_nodes(e, dead);
    free(rs.writer), free(rs.reads), free(dead);
    return done;
}

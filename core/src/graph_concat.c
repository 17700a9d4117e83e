/* Concatenation in place: a compiled plan's concat parts written where they
 * end up. bp_concat records one copy per part into its slice of the
 * joined value; where the part is a value that one node writes whole and
 * nothing but that copy reads, the node writes its result into the slice
 * instead, and the copy is dropped (SqueezeNet's fire modules: two
 * convolutions' Relu outputs joined along the channels, some 5% of a run
 * in the copies). onnxruntime plans its Concat the same way.
 *
 * Conditions, all checked: the part and the joined value are plan
 * intermediates (no input, output or captured tensor), the slice is dense
 * (one contiguous run of the joined value's memory, as concatenating along
 * the first axis of extent above 1 gives), the writer comes at most
 * BP__CONCAT_REACH nodes before the copy, and nothing between them reads
 * the part or the joined value, or writes the joined value but into
 * disjoint dense slices (the other parts). A writer that a fused group would
 * end (an elementwise node after another elementwise node) keeps its own
 * value: the group is worth more than the copy. */
#include <stdlib.h>

#include "graph_internal.h"

/* How far back the part's writer may be (a bound on the compile's scan). */
#define BP__CONCAT_REACH 64

static bool reads(const bp__gnode *n, int32_t s)
{
    for (int32_t k = 0; k < n->n_in; k++)
        if (n->ref[k] == s)
            return true;
    return false;
}

/* The bytes [lo, hi) of a dense view within its slot. */
static void span(const bp_view *v, int64_t *lo, int64_t *hi)
{
    *lo = (int64_t)v->offset;
    *hi = *lo + bp__view_numel(v) * (int64_t)bp_dtype_size(v->dtype);
}

/* Whether a node between the writer w and the copy c leaves the move alone. */
static bool between_ok(const bp__gnode *q, int32_t s, int32_t S, const bp_view *slice)
{
    if (reads(q, s) || reads(q, S))
        return false;
    int64_t lo, hi;
    span(slice, &lo, &hi);
    for (int32_t k = q->n_in; k < q->n_in + q->n_out; k++) {
        if (q->ref[k] != S)
            continue;
        int64_t qlo, qhi;
        if (!bp__view_is_dense(&q->view[k]))
            return false;
        span(&q->view[k], &qlo, &qhi);
        if (qlo < hi && lo < qhi)
            return false;
    }
    return true;
}

/* The output position of w that writes s (whole and densely), or -1. */
static int32_t whole_output(const bp__gnode *w, int32_t s, size_t bytes)
{
    int32_t at = -1;
    for (int32_t k = w->n_in; k < w->n_in + w->n_out; k++) {
        if (w->ref[k] != s)
            continue;
        const bp_view *o = &w->view[k];
        if (at >= 0 || o->offset != 0 || !bp__view_is_dense(o) ||
            (size_t)bp__view_numel(o) * bp_dtype_size(o->dtype) != bytes)
            return -1;
        at = k;
    }
    return at;
}

/* Whether a fused group would take w as its last step (an elementwise node
 * reading an elementwise node's result). */
static bool ends_a_chain(const bp_graph_exec *e, const bp__gplan *p, const bp__gnode *w)
{
    if (!bp__graph_elementwise_op(w->op))
        return false;
    for (int32_t k = 0; k < w->n_in; k++) {
        int32_t r = w->ref[k];
        if (r >= 0 && p->first_def[r] >= 0 && bp__graph_elementwise_op(e->nodes[p->first_def[r]].op))
            return true;
    }
    return false;
}

/* Whether copy ci's operands qualify: a part and a joined value that are
 * plan intermediates, both dense, the part's writer not far back, written
 * once and read by the copy alone. */
static bool copy_qualifies(const bp_graph *g, const bp_graph_exec *e, const bp__gplan *p,
                           int32_t ci)
{
    const bp__gnode *c = &e->nodes[ci];
    if (c->op != BP_OP_CONCAT || c->n_in != 1 || c->n_out != 1 || c->check)
        return false;
    int32_t s = c->ref[0], S = c->ref[1];
    if (s < 0 || S < 0 || s == S || p->is_output[s] || p->is_output[S] ||
        g->slots[s].input >= 0 || g->slots[S].input >= 0)
        return false;
    const bp_view *vs = &c->view[0], *slice = &c->view[1];
    int32_t wi = p->first_def[s];
    return wi >= 0 && wi < ci && ci - wi <= BP__CONCAT_REACH && p->last_write[s] == wi &&
           p->last_use[s] == ci && vs->offset == 0 && bp__view_is_dense(vs) &&
           bp__view_is_dense(slice) && vs->dtype == slice->dtype;
}

/* Whether copy ci (qualified) may go: its part's writer w writes the part
 * whole, in the slice's shape, reads neither value, ends no elementwise
 * chain, and nothing between them gets in the way. Sets the writer and its
 * operand position. */
static bool movable(const bp_graph *g, const bp_graph_exec *e, const bp__gplan *p, int32_t ci,
                    int32_t *wi_out, int32_t *k_out)
{
    if (!copy_qualifies(g, e, p, ci))
        return false;
    const bp__gnode *c = &e->nodes[ci];
    int32_t s = c->ref[0], S = c->ref[1], wi = p->first_def[s];
    const bp_view *vs = &c->view[0], *slice = &c->view[1];
    const bp__gnode *w = &e->nodes[wi];
    int32_t k = whole_output(w, s, p->bytes[s]);
    if (k < 0 || reads(w, s) || reads(w, S) || ends_a_chain(e, p, w) ||
        w->view[k].dtype != slice->dtype || w->view[k].rank != slice->rank)
        return false;
    for (int32_t d = 0; d < slice->rank; d++)
        if (w->view[k].shape[d] != slice->shape[d] || vs->shape[d] != slice->shape[d])
            return false;
    for (int32_t q = wi + 1; q < ci; q++)
        if (!between_ok(&e->nodes[q], s, S, slice))
            return false;
    *wi_out = wi;
    *k_out = k;
    return true;
}

int32_t bp__graph_concat_in_place(const bp_graph *g, bp_graph_exec *e, const bp__gplan *p)
{
    int32_t nn = e->n_nodes, done = 0;
    bool *dead = calloc((size_t)nn + 1, sizeof *dead);
    if (!dead)
        return -1;
    for (int32_t ci = 0; ci < nn; ci++) {
        int32_t wi, k;
        if (!movable(g, e, p, ci, &wi, &k))
            continue;
        bp__gnode *w = &e->nodes[wi];
        const bp__gnode *c = &e->nodes[ci];
        int32_t nv = w->n_in + w->n_out;
        bp_view *v = bp__garena_take(g->arena, (size_t)nv * sizeof *v);
        if (!v) {
            done = -1;
            break;
        }
        for (int32_t j = 0; j < nv; j++)
            v[j] = w->view[j];
        v[k] = c->view[1];
        w->view = v;
        w->ref[k] = c->ref[1];
        dead[ci] = true;
        done++;
    }
    if (done > 0)
        bp__graph_drop_nodes(e, dead);
    free(dead);
    return done;
}

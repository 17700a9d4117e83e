/* Prepared nodes (plugin ABI 1.13): the work of a node that depends only on
 * the plan's constants, done by the backend once when the plan compiles.
 *
 * A node the plan runs alone (not in a fused group), whose views are not
 * empty and that reads a captured tensor (a model's weights), is offered to
 * the backend's prepare with its views, the captured ones pointing at their
 * memory and the others at none. What prepare returns the node runs with
 * (prepared_op) for as long as the plan reads the same tensors: the plan
 * keeps the ones it prepared with, so a bind that replaces one (training
 * updates the weights) sends the node back through the op entry, never
 * through work made from the old values. Only the library's own memory
 * counts as constant: a captured tensor over memory another library lent,
 * or lent out to one (which may write it), is read at every run, as an
 * input is. */
#include <stdlib.h>

#include "graph_internal.h"

/* Whether t's values can change under the plan: memory another library
 * lent (DLPack, a NumPy array taken without a copy), memory wrapped with a
 * release (a mapped file), or our memory lent out (a DLPack consumer may
 * write to it). Only the library's own memory, never lent, is a constant
 * to prepare from. */
static bool may_change(const bp_tensor *t)
{
    const bp__storage *st = t->storage;
    return !st->buffer || st->lender || st->release || st->listed;
}

static bool has_prepare(const bp_backend *be)
{
    return BP__HAS(be->vt, prepare) && BP__HAS(be->vt, prepared_op) &&
           BP__HAS(be->vt, prepared_free);
}

static bool view_empty(const bp_view *v)
{
    for (int32_t k = 0; k < v->rank; k++)
        if (v->shape[k] == 0)
            return true;
    return false;
}

/* Whether node i is one to offer: run alone, not drawing fresh numbers,
 * no view empty, at least one captured input. */
static bool offered(const bp_graph_exec *e, int32_t i)
{
    const bp__gnode *n = &e->nodes[i];
    if ((e->group_of_node && e->group_of_node[i] >= 0) ||
        (e->draw_stride && e->draw_stride[i] != 0))
        return false;
    bool constant = false;
    for (int32_t k = 0; k < n->n_in + n->n_out; k++) {
        if (n->ref[k] == BP__GREF_NONE)
            continue;
        if (view_empty(&n->view[k]))
            return false;
        constant = constant || (k < n->n_in && BP__GREF_IS_CAP(n->ref[k]) &&
                                !may_change(e->caps[BP__GREF_CAP_INDEX(n->ref[k])]));
    }
    return constant;
}

bp_status bp__graph_prepare(bp_graph_exec *e)
{
    bp_backend *be = e->real;
    if (!has_prepare(be) || e->n_nodes == 0)
        return BP_OK;
    e->prepared = calloc((size_t)e->n_nodes, sizeof *e->prepared);
    e->prepared_caps = calloc((size_t)e->n_caps + 1, sizeof *e->prepared_caps);
    if (!e->prepared || !e->prepared_caps)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_graph_compile: out of memory");
    for (int32_t c = 0; c < e->n_caps; c++) { /* no run yet: no bind can race */
        e->prepared_caps[c] = e->caps[c];
        bp_tensor_retain(e->caps[c]);
    }
    int64_t count = 0;
    for (int32_t i = 0; i < e->n_nodes; i++) {
        if (!offered(e, i))
            continue;
        const bp__gnode *n = &e->nodes[i];
        bp_view v[2 * BP__GRAPH_MAX_IO];
        const bp_view *pv[2 * BP__GRAPH_MAX_IO];
        for (int32_t k = 0; k < n->n_in + n->n_out; k++) {
            int32_t ref = n->ref[k];
            if (ref == BP__GREF_NONE) {
                pv[k] = NULL;
                continue;
            }
            v[k] = n->view[k];
            v[k].buffer = NULL;
            if (BP__GREF_IS_CAP(ref)) { /* a constant: memory that cannot change */
                const bp_tensor *t = e->caps[BP__GREF_CAP_INDEX(ref)];
                v[k].buffer = may_change(t) ? NULL : t->storage->buffer;
            }
            pv[k] = &v[k];
        }
        bp__call_begin();
        bp_status st = bp__call_end(be, bp_op_name(n->op), "prepare",
                                    be->vt->prepare(be->dev, n->op, n->params, n->n_in, pv,
                                                    n->n_out, pv + n->n_in, &e->prepared[i]));
        if (st != BP_OK) {
            e->prepared[i] = NULL;
            return st;
        }
        count += e->prepared[i] != NULL;
    }
    e->stats.nodes_prepared = count;
    return BP_OK;
}

bool bp__graph_prepared_current(const bp_graph_exec *e, int32_t i, bp_tensor *const *caps)
{
    if (!e->prepared || !e->prepared[i])
        return false;
    const bp__gnode *n = &e->nodes[i];
    for (int32_t k = 0; k < n->n_in; k++)
        if (BP__GREF_IS_CAP(n->ref[k])) {
            int32_t c = BP__GREF_CAP_INDEX(n->ref[k]);
            /* the tensor it was prepared with, not lent out since */
            if (caps[c] != e->prepared_caps[c] || caps[c]->storage->listed)
                return false;
        }
    return true;
}

void bp__graph_prepared_release(bp_graph_exec *e)
{
    for (int32_t i = 0; e->prepared && i < e->n_nodes; i++)
        if (e->prepared[i])
            e->real->vt->prepared_free(e->real->dev, e->prepared[i]);
    free(e->prepared);
    e->prepared = NULL;
    for (int32_t c = 0; e->prepared_caps && c < e->n_caps; c++)
        bp_tensor_release(e->prepared_caps[c]);
    free(e->prepared_caps);
    e->prepared_caps = NULL;
}

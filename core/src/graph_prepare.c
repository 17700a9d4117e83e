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
 * input is.
 *
 * Epilogues (plugin ABI 1.14): a node offered whose one output only the
 * node right after it reads, an elementwise unary op (a convolution's
 * Relu), is offered to prepare_epilogue with that op first; a node the
 * backend takes so writes the Relu's output itself, as it stores its own,
 * and the Relu does not run (one pass over the value instead of three).
 * The Relu's output may then be written one node earlier than planned:
 * bp__graph_epilogue_candidates, called before the buffers are planned,
 * moves its first write there for every pair that may be taken. While a
 * bind has the node run through `op`, both run as recorded. */
#include <stdlib.h>
#include <string.h>

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

static bool same_view(const bp_view *a, const bp_view *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->offset != b->offset)
        return false;
    for (int32_t k = 0; k < a->rank; k++)
        if (a->shape[k] != b->shape[k] || (a->shape[k] > 1 && a->strides[k] != b->strides[k]))
            return false;
    return true;
}

/* Whether node i + 1 may be node i's epilogue: both run alone; node i has
 * one output, a slot that it alone writes, that no later node reads but
 * node i + 1, through the view it was written by, and that is not a plan
 * output; node i + 1 is a unary elementwise op with no index check that
 * writes a dense value of the same shape and dtype into a slot that node
 * i does not read. */
static bool epilogue_pair(const bp_graph_exec *e, const bp__gplan *p, int32_t i)
{
    const bp__gnode *a = &e->nodes[i], *b = &e->nodes[i + 1];
    if (e->group_of_node && (e->group_of_node[i] >= 0 || e->group_of_node[i + 1] >= 0))
        return false;
    if (a->n_out != 1 || b->n_in != 1 || b->n_out != 1 || b->check ||
        bp_op_kind_of(b->op) != BP_KIND_UNARY)
        return false;
    const int32_t s = a->ref[a->n_in], t = b->ref[1];
    if (s < 0 || t < 0 || s == t || b->ref[0] != s || p->is_output[s] ||
        e->input_of_slot[s] >= 0 || p->first_def[s] != i || p->last_write[s] != i ||
        p->last_use[s] != i + 1)
        return false;
    for (int32_t k = 0; k < a->n_in; k++)
        if (a->ref[k] == t)
            return false;
    const bp_view *y = &a->view[a->n_in], *z = &b->view[1];
    if (!same_view(y, &b->view[0]) || !bp__view_is_dense(z) || z->dtype != y->dtype ||
        z->rank != y->rank)
        return false;
    return memcmp(z->shape, y->shape, (size_t)y->rank * sizeof *y->shape) == 0;
}

bool bp__graph_epilogue_candidates(bp_graph_exec *e, bp__gplan *p)
{
    const bp_backend *be = e->real;
    if (!has_prepare(be) || !BP__HAS(be->vt, prepare_epilogue) || e->n_nodes < 2)
        return true;
    e->epilogue = calloc((size_t)e->n_nodes, sizeof *e->epilogue);
    if (!e->epilogue)
        return false;
    for (int32_t i = 0; i + 1 < e->n_nodes; i++) {
        if (!epilogue_pair(e, p, i))
            continue;
        e->epilogue[i] = true;
        const int32_t t = e->nodes[i + 1].ref[1];
        if (p->first_def[t] > i)
            p->first_def[t] = i;
        i++; /* node i + 1 is no node's producer now */
    }
    return true;
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
    int64_t count = 0, epilogues = 0;
    for (int32_t i = 0; i < e->n_nodes; i++) {
        bool pair = e->epilogue && e->epilogue[i];
        if (pair)
            e->epilogue[i] = false; /* until the backend takes it */
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
        bp_status st = BP_OK;
        if (pair) {
            const bp__gnode *b = &e->nodes[i + 1];
            bp__call_begin();
            st = bp__call_end(be, bp_op_name(n->op), "prepare_epilogue",
                              be->vt->prepare_epilogue(be->dev, n->op, n->params, n->n_in, pv,
                                                       n->n_out, pv + n->n_in, b->op,
                                                       b->params, &e->prepared[i]));
            e->epilogue[i] = st == BP_OK && e->prepared[i];
            epilogues += e->epilogue[i];
        }
        if (st == BP_OK && !e->prepared[i]) {
            bp__call_begin();
            st = bp__call_end(be, bp_op_name(n->op), "prepare",
                              be->vt->prepare(be->dev, n->op, n->params, n->n_in, pv, n->n_out,
                                              pv + n->n_in, &e->prepared[i]));
        }
        if (st != BP_OK) {
            e->prepared[i] = NULL;
            return st;
        }
        count += e->prepared[i] != NULL;
    }
    e->stats.nodes_prepared = count;
    e->stats.epilogues_fused = epilogues;
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
    free(e->epilogue);
    e->epilogue = NULL;
    for (int32_t c = 0; e->prepared_caps && c < e->n_caps; c++)
        bp_tensor_release(e->prepared_caps[c]);
    free(e->prepared_caps);
    e->prepared_caps = NULL;
}

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
 * bind has the node run through `op`, both run as recorded.
 *
 * Epilogue chains (plugin ABI 1.15): a node that would be offered,
 * followed by up to BP_EPILOGUE_MAX_STEPS elementwise nodes, each the only
 * reader of the value before it and writing a dense value of its shape
 * and dtype, one of them binary with an operand the plan holds (a
 * residual network's convolution, add, Relu), is offered to
 * prepare_epilogues before the plan fuses (else the add and the Relu would
 * join a group first), the longest chain first. A chain the backend takes
 * computes its last value as the node stores its own: the value read twice
 * and written twice between them is gone. */
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

/* The view prepare is shown for a node's view of ref: a constant's with
 * its memory, any other's with none; NULL for no view. */
static const bp_view *prepare_view(const bp_graph_exec *e, int32_t ref, const bp_view *view,
                                   bp_view *v)
{
    if (ref == BP__GREF_NONE)
        return NULL;
    *v = *view;
    v->buffer = NULL;
    if (BP__GREF_IS_CAP(ref)) { /* a constant: memory that cannot change */
        const bp_tensor *t = e->caps[BP__GREF_CAP_INDEX(ref)];
        v->buffer = may_change(t) ? NULL : t->storage->buffer;
    }
    return v;
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

/* Whether node i + 1 may be node i's epilogue: both run alone, neither
 * in a chain; node i has one output, a slot that it alone writes, that no
 * later node reads but node i + 1, through the view it was written by, and
 * that is not a plan output; node i + 1 is a unary elementwise op with no
 * index check that writes a dense value of the same shape and dtype into a
 * slot that node i does not read. */
static bool epilogue_pair(const bp_graph_exec *e, const bp__gplan *p, int32_t i)
{
    const bp__gnode *a = &e->nodes[i], *b = &e->nodes[i + 1];
    if (e->group_of_node && (e->group_of_node[i] >= 0 || e->group_of_node[i + 1] >= 0))
        return false;
    if (e->epilogue[i] != 0 || e->epilogue[i + 1] != 0)
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

static bool epilogue_marks(bp_graph_exec *e)
{
    if (!e->epilogue)
        e->epilogue = calloc((size_t)e->n_nodes + 1, sizeof *e->epilogue);
    return e->epilogue != NULL;
}

bool bp__graph_epilogue_candidates(bp_graph_exec *e, bp__gplan *p)
{
    const bp_backend *be = e->real;
    if (!has_prepare(be) || !BP__HAS(be->vt, prepare_epilogue) || e->n_nodes < 2)
        return true;
    if (!epilogue_marks(e))
        return false;
    for (int32_t i = 0; i + 1 < e->n_nodes; i++) {
        if (!epilogue_pair(e, p, i))
            continue;
        e->epilogue[i] = 1;
        const int32_t t = e->nodes[i + 1].ref[1];
        if (p->first_def[t] > i)
            p->first_def[t] = i;
        i++; /* node i + 1 is no node's producer now */
    }
    return true;
}

/* Whether node j may follow node j - 1 in an epilogue chain: it reads the
 * value s that node j - 1 alone wrote (through view vs), once, and nothing
 * else reads s; it is a unary or binary elementwise op with no index
 * check, whose other input (binary) is a dense value of s's shape and
 * dtype, and it writes one dense value of that shape and dtype. *operand:
 * the input that is the other (-1 for a unary). */
static bool chain_step(const bp_graph_exec *e, const bp__gplan *p, int32_t j, int32_t s,
                       const bp_view *vs, int32_t *operand)
{
    const bp__gnode *b = &e->nodes[j];
    const bp_op_kind kind = bp_op_kind_of(b->op);
    if (b->n_out != 1 || b->check || (kind != BP_KIND_UNARY && kind != BP_KIND_BINARY) ||
        b->n_in != (kind == BP_KIND_UNARY ? 1 : 2) || e->epilogue[j] != 0)
        return false;
    if (s < 0 || p->is_output[s] || e->input_of_slot[s] >= 0 || p->first_def[s] != j - 1 ||
        p->last_write[s] != j - 1 || p->last_use[s] != j)
        return false;
    int32_t at = -1;
    for (int32_t k = 0; k < b->n_in; k++)
        if (b->ref[k] == s) {
            if (at >= 0)
                return false; /* op(v, v) */
            at = k;
        }
    if (at < 0 || !same_view(vs, &b->view[at]))
        return false;
    const bp_view *views[2] = {&b->view[b->n_in], NULL};
    *operand = -1;
    if (kind == BP_KIND_BINARY) {
        *operand = 1 - at;
        if (b->ref[*operand] == BP__GREF_NONE)
            return false;
        views[1] = &b->view[*operand];
    }
    for (int v = 0; v < 2 && views[v]; v++)
        if (!bp__view_is_dense(views[v]) || views[v]->dtype != vs->dtype ||
            views[v]->rank != vs->rank ||
            memcmp(views[v]->shape, vs->shape, (size_t)vs->rank * sizeof *vs->shape) != 0)
            return false;
    return b->ref[b->n_in] >= 0;
}

/* The chain after node i, as long as chain_step allows and no longer than
 * BP_EPILOGUE_MAX_STEPS: its length. */
static int32_t chain_after(const bp_graph_exec *e, const bp__gplan *p, int32_t i)
{
    const bp__gnode *a = &e->nodes[i];
    if (a->n_out != 1)
        return 0;
    int32_t s = a->ref[a->n_in], n = 0;
    const bp_view *vs = &a->view[a->n_in];
    while (n < BP_EPILOGUE_MAX_STEPS && i + n + 1 < e->n_nodes) {
        int32_t operand;
        const int32_t j = i + n + 1;
        if (!chain_step(e, p, j, s, vs, &operand))
            break;
        n++;
        s = e->nodes[j].ref[e->nodes[j].n_in];
        vs = &e->nodes[j].view[e->nodes[j].n_in];
    }
    return n;
}

/* Whether the chain of n steps after node i holds a binary step, and its
 * last value's slot is none that node i or a step reads. */
static bool chain_usable(const bp_graph_exec *e, int32_t i, int32_t n)
{
    const bp__gnode *last = &e->nodes[i + n];
    const int32_t t = last->ref[last->n_in];
    bool binary = false;
    for (int32_t j = i; j <= i + n; j++) {
        const bp__gnode *b = &e->nodes[j];
        binary = binary || (j > i && b->n_in == 2);
        for (int32_t k = 0; k < b->n_in; k++)
            if (b->ref[k] == t)
                return false;
    }
    return binary;
}

/* Offer the chain of n steps after node i to the backend: BP_OK with
 * e->prepared[i] set where it takes it. */
static bp_status offer_chain(bp_graph_exec *e, int32_t i, int32_t n)
{
    bp_backend *be = e->real;
    const bp__gnode *a = &e->nodes[i];
    bp_view v[2 * BP__GRAPH_MAX_IO], ov[BP_EPILOGUE_MAX_STEPS];
    const bp_view *pv[2 * BP__GRAPH_MAX_IO], *po[BP_EPILOGUE_MAX_STEPS];
    bp_epilogue_step steps[BP_EPILOGUE_MAX_STEPS];
    for (int32_t k = 0; k < a->n_in + a->n_out; k++)
        pv[k] = prepare_view(e, a->ref[k], &a->view[k], &v[k]);
    int32_t s = a->ref[a->n_in], n_operands = 0;
    for (int32_t q = 0; q < n; q++) {
        const bp__gnode *b = &e->nodes[i + 1 + q];
        steps[q] = (bp_epilogue_step){.struct_size = sizeof steps[q], .op = b->op,
                                      .params = b->params};
        if (b->n_in == 2) {
            const int32_t o = b->ref[0] == s ? 1 : 0;
            steps[q].operand_first = o == 0;
            po[n_operands] = prepare_view(e, b->ref[o], &b->view[o], &ov[n_operands]);
            n_operands++;
        }
        s = b->ref[b->n_in];
    }
    bp__call_begin();
    return bp__call_end(be, bp_op_name(a->op), "prepare_epilogues",
                        be->vt->prepare_epilogues(be->dev, a->op, a->params, a->n_in, pv,
                                                  a->n_out, pv + a->n_in, n, steps, po,
                                                  &e->prepared[i]));
}

static bool prepare_arrays(bp_graph_exec *e)
{
    if (e->prepared)
        return true;
    e->prepared = calloc((size_t)e->n_nodes + 1, sizeof *e->prepared);
    e->prepared_caps = calloc((size_t)e->n_caps + 1, sizeof *e->prepared_caps);
    if (!e->prepared || !e->prepared_caps) {
        free(e->prepared);
        free(e->prepared_caps);
        e->prepared = NULL;
        e->prepared_caps = NULL;
        return false;
    }
    for (int32_t c = 0; c < e->n_caps; c++) { /* no run yet: no bind can race */
        e->prepared_caps[c] = e->caps[c];
        bp_tensor_retain(e->caps[c]);
    }
    return true;
}

bp_status bp__graph_epilogue_chains(bp_graph_exec *e, bp__gplan *p)
{
    const bp_backend *be = e->real;
    if (!has_prepare(be) || !BP__HAS(be->vt, prepare_epilogues) || e->n_nodes < 2)
        return BP_OK;
    if (!epilogue_marks(e))
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_graph_compile: out of memory");
    for (int32_t i = 0; i + 1 < e->n_nodes; i++) {
        if (e->epilogue[i] != 0 || !offered(e, i))
            continue;
        for (int32_t n = chain_after(e, p, i); n > 0; n--) {
            if (!chain_usable(e, i, n))
                continue;
            if (!prepare_arrays(e))
                return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_graph_compile: out of memory");
            BP__TRY(offer_chain(e, i, n));
            if (!e->prepared[i])
                continue;
            e->epilogue[i] = (int8_t)n;
            for (int32_t q = 1; q <= n; q++)
                e->epilogue[i + q] = -1;
            const bp__gnode *last = &e->nodes[i + n];
            const int32_t t = last->ref[last->n_in];
            if (p->first_def[t] > i)
                p->first_def[t] = i;
            i += n; /* its steps are no node's producers now */
            break;
        }
    }
    return BP_OK;
}

bp_status bp__graph_prepare(bp_graph_exec *e)
{
    bp_backend *be = e->real;
    if (!has_prepare(be) || e->n_nodes == 0)
        return BP_OK;
    if (!prepare_arrays(e))
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_graph_compile: out of memory");
    int64_t count = 0, epilogues = 0;
    for (int32_t i = 0; i < e->n_nodes; i++) {
        if (e->prepared[i]) { /* with its chain (bp__graph_epilogue_chains) */
            count++;
            epilogues++;
            i += e->epilogue[i];
            continue;
        }
        bool pair = e->epilogue && e->epilogue[i] == 1;
        if (pair)
            e->epilogue[i] = 0; /* until the backend takes it */
        if (!offered(e, i))
            continue;
        const bp__gnode *n = &e->nodes[i];
        bp_view v[2 * BP__GRAPH_MAX_IO];
        const bp_view *pv[2 * BP__GRAPH_MAX_IO];
        for (int32_t k = 0; k < n->n_in + n->n_out; k++)
            pv[k] = prepare_view(e, n->ref[k], &n->view[k], &v[k]);
        bp_status st = BP_OK;
        if (pair) {
            const bp__gnode *b = &e->nodes[i + 1];
            bp__call_begin();
            st = bp__call_end(be, bp_op_name(n->op), "prepare_epilogue",
                              be->vt->prepare_epilogue(be->dev, n->op, n->params, n->n_in, pv,
                                                       n->n_out, pv + n->n_in, b->op,
                                                       b->params, &e->prepared[i]));
            if (st == BP_OK && e->prepared[i]) {
                e->epilogue[i] = 1;
                e->epilogue[i + 1] = -1;
                epilogues++;
            }
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
        if (pair && e->epilogue[i] == 1)
            i++; /* the Relu it computes */
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

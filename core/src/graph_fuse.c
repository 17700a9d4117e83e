/* Fusing a plan's chains of elementwise nodes into groups that the backend
 * runs in one call (plugin.h's bp_fused_group): consecutive nodes of the
 * UNARY, BINARY and WHERE kinds and casts, all over one shape, each writing
 * one whole dense value, and (plugin ABI 1.12) a reduction of the last
 * one's value over its trailing axes after them. A value that a later node
 * of the group reads, and nothing after the group, is the group's own: it
 * gets no buffer, and the plugin keeps it in cache (blas_cpu) or in
 * registers (a GPU kernel). A group forms only where the plugin's
 * fused_takes accepts it (one ending in a reduction that it declines is
 * offered again without the reduction); otherwise its nodes run one by
 * one, as they would without fusion. */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

static bool same_shape(const bp_view *a, const bp_view *b)
{
    if (a->rank != b->rank)
        return false;
    for (int32_t k = 0; k < a->rank; k++)
        if (a->shape[k] != b->shape[k])
            return false;
    return true;
}

bool bp__graph_elementwise_op(bp_op op)
{
    bp_op_kind kind = bp_op_kind_of(op);
    return kind == BP_KIND_UNARY || kind == BP_KIND_BINARY || kind == BP_KIND_WHERE ||
           op == BP_OP_CAST;
}

/* Node i may be a step: an elementwise op writing one whole slot, densely,
 * once (no other node writes any of it), with no index check before it. */
static bool fusible(const bp_graph_exec *e, const bp__gplan *p, int32_t i)
{
    const bp__gnode *n = &e->nodes[i];
    if (!bp__graph_elementwise_op(n->op) || (e->epilogue && e->epilogue[i] < 0))
        return false; /* a prepared node's epilogue chain computes it */
    if (n->n_out != 1 || n->n_in < 1 || n->n_in > BP_FUSED_MAX_ARGS || n->check)
        return false;
    int32_t s = n->ref[n->n_in];
    const bp_view *o = &n->view[n->n_in];
    if (s < 0 || o->offset != 0 || !bp__view_is_dense(o) || bp__view_numel(o) == 0 ||
        p->bytes[s] != (size_t)bp__view_numel(o) * bp_dtype_size(o->dtype))
        return false;
    if (p->first_def[s] != i || p->last_write[s] != i)
        return false;
    for (int32_t k = 0; k < n->n_in; k++)
        if (n->ref[k] == BP__GREF_NONE || !same_shape(&n->view[k], o))
            return false;
    return true;
}

/* Node i may end g as its reduction (plugin ABI 1.12): an op of the REDUCE
 * kind of the value g's last step wrote, writing one whole slot densely,
 * once, with no index check. join() then requires that it reads the value
 * through the view that wrote it: the reduced axes are its trailing ones. */
static bool reduction_ends(const bp_graph_exec *e, const bp__gplan *p, const bp__ggroup *g,
                           int32_t i)
{
    const bp__gnode *n = &e->nodes[i], *w = &e->nodes[g->last];
    if (bp_op_kind_of(n->op) != BP_KIND_REDUCE || n->n_in != 1 || n->n_out != 1 || n->check ||
        n->ref[0] < 0 || n->ref[0] != w->ref[w->n_in])
        return false;
    int32_t s = n->ref[1];
    const bp_view *o = &n->view[1];
    return s >= 0 && o->offset == 0 && bp__view_is_dense(o) && bp__view_numel(o) > 0 &&
           p->bytes[s] == (size_t)bp__view_numel(o) * bp_dtype_size(o->dtype) &&
           p->first_def[s] == i && p->last_write[s] == i;
}

/* The step of g that wrote slot s, or -1. */
static int32_t step_of_slot(const bp_graph_exec *e, const bp__ggroup *g, int32_t s)
{
    for (int32_t j = 0; j < g->n_steps; j++) {
        const bp__gnode *w = &e->nodes[g->first + j];
        if (w->ref[w->n_in] == s)
            return j;
    }
    return -1;
}

static int32_t operand_of(bp__ggroup *g, int32_t ref, const bp_view *v, bool add)
{
    for (int32_t k = 0; k < g->n_in; k++)
        if (g->in_ref[k] == ref && bp__view_same_elements(&g->in_view[k], v))
            return k;
    if (!add || g->n_in == BP__FUSE_MAX_IN)
        return -1;
    g->in_ref[g->n_in] = ref;
    g->in_view[g->n_in] = *v;
    g->in_view[g->n_in].buffer = NULL;
    return g->n_in++;
}

/* Append node i to g as its next step, if every operand it reads from g is
 * read through the view that wrote it and the operands fit; false leaves g
 * as it was. */
static bool join(const bp_graph_exec *e, bp__ggroup *g, int32_t i)
{
    const bp__gnode *n = &e->nodes[i];
    if (g->n_steps == BP_FUSED_MAX_STEPS)
        return false;
    int32_t n_in0 = g->n_in; /* operands added for this node go on failure */
    bp_fused_step *st = &g->steps[g->n_steps];
    *st = (bp_fused_step){.op = n->op, .n_args = n->n_in, .dtype = n->view[n->n_in].dtype,
                          .params = n->params};
    for (int32_t k = 0; k < n->n_in; k++) {
        int32_t ref = n->ref[k];
        int32_t j = ref >= 0 ? step_of_slot(e, g, ref) : -1;
        if (j >= 0) {
            const bp__gnode *w = &e->nodes[g->first + j];
            if (!bp__view_same_elements(&w->view[w->n_in], &n->view[k])) {
                g->n_in = n_in0;
                return false;
            }
            st->arg[k] = j;
            continue;
        }
        int32_t at = operand_of(g, ref, &n->view[k], true);
        if (at < 0) {
            g->n_in = n_in0;
            return false;
        }
        st->arg[k] = -1 - at;
    }
    g->n_steps++;
    g->last = i;
    return true;
}

/* The values g writes to memory: those read after it or marked as outputs. */
static void group_outputs(const bp_graph_exec *e, const bp__gplan *p, bp__ggroup *g)
{
    g->n_out = 0;
    for (int32_t j = 0; j < g->n_steps; j++) {
        const bp__gnode *w = &e->nodes[g->first + j];
        int32_t s = w->ref[w->n_in];
        if (!p->is_output[s] && p->last_use[s] <= g->last)
            continue;
        g->out_step[g->n_out] = j;
        g->out_ref[g->n_out] = s;
        g->out_view[g->n_out] = w->view[w->n_in];
        g->out_view[g->n_out].buffer = NULL;
        g->n_out++;
    }
}

static bool plugin_takes(const bp_graph_exec *e, const bp__ggroup *g)
{
    const bp_view *in[BP__FUSE_MAX_IN], *out[BP_FUSED_MAX_STEPS];
    for (int32_t k = 0; k < g->n_in; k++)
        in[k] = &g->in_view[k];
    for (int32_t k = 0; k < g->n_out; k++)
        out[k] = &g->out_view[k];
    bp_fused_group prog = {.struct_size = sizeof prog, .n_steps = g->n_steps, .steps = g->steps,
                           .n_in = g->n_in, .n_out = g->n_out, .out_step = g->out_step};
    bp__call_begin();
    return e->real->vt->fused_takes(e->real->dev, &prog, in, out);
}

/* g is taken: its own values lose their buffers, and what it reads and
 * writes in memory lives through the whole group. */
static void settle(const bp_graph_exec *e, bp__gplan *p, const bp__ggroup *g)
{
    for (int32_t j = 0; j < g->n_steps; j++) {
        const bp__gnode *w = &e->nodes[g->first + j];
        p->internal[w->ref[w->n_in]] = true;
    }
    for (int32_t k = 0; k < g->n_out; k++) {
        p->internal[g->out_ref[k]] = false;
        p->first_def[g->out_ref[k]] = g->first;
    }
    for (int32_t k = 0; k < g->n_in; k++)
        if (g->in_ref[k] >= 0 && p->last_use[g->in_ref[k]] < g->last)
            p->last_use[g->in_ref[k]] = g->last;
}

bool bp__graph_fuse(bp_graph_exec *e, bp__gplan *p)
{
    const bp_plugin *vt = e->real->vt;
    if (vt->abi_minor < 9 || !BP__HAS(vt, fused_takes) || !BP__HAS(vt, fused_run) ||
        e->n_nodes < 2)
        return true;
    bool reductions = vt->abi_minor >= 12; /* a group may end in one */
    e->group_of_node = malloc((size_t)e->n_nodes * sizeof *e->group_of_node);
    bp__ggroup *g = malloc(sizeof *g);
    int32_t cap = 0;
    if (!e->group_of_node || !g) {
        free(g);
        return false;
    }
    for (int32_t i = 0; i < e->n_nodes; i++)
        e->group_of_node[i] = -1;
    for (int32_t i = 0; i < e->n_nodes;) {
        if (!fusible(e, p, i)) {
            i++;
            continue;
        }
        memset(g, 0, sizeof *g);
        g->first = g->last = i;
        bool ok = join(e, g, i);
        int32_t j = i + 1;
        while (ok && j < e->n_nodes && fusible(e, p, j) &&
               same_shape(&e->nodes[j].view[e->nodes[j].n_in], &e->nodes[i].view[e->nodes[i].n_in]) &&
               join(e, g, j))
            j++;
        i = j;
        if (!ok)
            continue;
        bool reduced = reductions && j < e->n_nodes && reduction_ends(e, p, g, j) && join(e, g, j);
        if (g->n_steps < 2)
            continue;
        group_outputs(e, p, g);
        bool taken = plugin_takes(e, g);
        if (reduced) {
            if (taken) {
                i = j + 1;
            } else if (g->n_steps > 2) { /* the chain alone (the reduction added no operand) */
                g->n_steps--;
                g->last = j - 1;
                group_outputs(e, p, g);
                taken = plugin_takes(e, g);
            }
        }
        if (!taken)
            continue;
        if (!bp__graph_grow((void **)&e->groups, &cap, e->n_groups + 1, sizeof *e->groups)) {
            free(g);
            return false;
        }
        settle(e, p, g);
        for (int32_t k = g->first; k <= g->last; k++)
            e->group_of_node[k] = e->n_groups;
        e->groups[e->n_groups++] = *g;
    }
    free(g);
    return true;
}

bool bp__graph_fused_overwrite(const bp_graph_exec *e, const bp__gplan *p, int32_t in_slot,
                               int32_t out_slot)
{
    int32_t at = p->first_def[out_slot];
    if (!e->group_of_node || at < 0 || e->group_of_node[at] < 0)
        return false;
    const bp__ggroup *g = &e->groups[e->group_of_node[at]];
    if (p->last_use[in_slot] > g->last)
        return false;
    const bp_view *o = NULL;
    for (int32_t k = 0; k < g->n_out; k++)
        if (g->out_ref[k] == out_slot)
            o = &g->out_view[k];
    for (int32_t k = 0; o && k < g->n_in; k++)
        if (g->in_ref[k] == in_slot && !bp__view_same_elements(&g->in_view[k], o))
            return false;
    return o != NULL;
}

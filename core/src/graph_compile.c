/* Compiling a graph into a plan, once: nodes that reach no output dropped,
 * identical nodes merged, every intermediate value given a pool buffer by
 * liveness (ggml_gallocr's idea: a value's buffer is free again after its
 * last reader). The plan copies the nodes and shares the graph's arena
 * (what a node points at is never written again), so the graph may grow
 * or go afterwards. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

/* Eight bytes a step (a node's parameters alone are some 270 bytes: a
 * byte-wise FNV-1a was three quarters of a 1000-node compile's
 * instructions), then the tail byte-wise. A collision only costs a
 * node_same comparison. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (; n >= 8; n -= 8, c += 8) {
        uint64_t w;
        memcpy(&w, c, sizeof w);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    for (; n > 0; n--, c++)
        h = (h ^ *c) * 1099511628211ull;
    return h;
}

/* A hash of what makes two nodes identical (node_same) except the output
 * slots: op, parameters, input operands and every view's geometry. */
static uint64_t node_hash(const bp__gnode *n)
{
    uint64_t h = 1469598103934665603ull;
    h = mix(h, &n->op, sizeof n->op);
    if (n->params != &bp__graph_no_params)
        h = mix(h, n->params, sizeof *n->params);
    for (int32_t k = 0; k < n->n_in + n->n_out; k++) {
        if (k < n->n_in)
            h = mix(h, &n->ref[k], sizeof n->ref[k]);
        if (n->ref[k] == BP__GREF_NONE)
            continue;
        const bp_view *v = &n->view[k];
        h = mix(h, &v->offset, sizeof v->offset);
        h = mix(h, &v->rank, sizeof v->rank);
        h = mix(h, v->shape, (size_t)v->rank * sizeof v->shape[0]);
        h = mix(h, v->strides, (size_t)v->rank * sizeof v->strides[0]);
    }
    return h;
}

static bool node_same(const bp__gnode *a, const bp__gnode *b, const size_t *bytes)
{
    if (a->op != b->op || a->n_in != b->n_in || a->n_out != b->n_out ||
        (a->params != b->params && memcmp(a->params, b->params, sizeof *a->params) != 0) ||
        (a->check == NULL) != (b->check == NULL) ||
        (a->check && memcmp(a->check, b->check, sizeof *a->check) != 0))
        return false;
    for (int32_t k = 0; k < a->n_in + a->n_out; k++) {
        bool is_out = k >= a->n_in;
        if ((a->ref[k] == BP__GREF_NONE) != (b->ref[k] == BP__GREF_NONE))
            return false;
        if (a->ref[k] == BP__GREF_NONE)
            continue;
        if (!is_out && a->ref[k] != b->ref[k])
            return false;
        if (is_out && bytes[a->ref[k]] != bytes[b->ref[k]])
            return false;
        if (!bp__view_same_elements(&a->view[k], &b->view[k]))
            return false;
    }
    return true;
}

typedef struct plan_tmp {
    int32_t *writers, *first_def, *last_use, *last_write, *remap;
    bool *needed, *is_output, *internal;
    int32_t *hash_tab;
    size_t *bytes;
    bool *live_node;
} plan_tmp;

static void tmp_free(plan_tmp *t)
{
    free(t->writers), free(t->first_def), free(t->last_use), free(t->last_write);
    free(t->remap), free(t->needed), free(t->is_output), free(t->hash_tab), free(t->bytes);
    free(t->internal);
    free(t->live_node);
}

void bp_graph_exec_release(bp_graph_exec *exe)
{
    if (!exe)
        return;
    bp__graph_prepared_release(exe);
    bp__graph_profile_release(exe);
    for (int32_t c = 0; c < exe->n_caps; c++)
        bp_tensor_release(exe->caps[c]);
    free(exe->caps);
    free(exe->cap_offset);
    pthread_mutex_destroy(&exe->caps_lock);
    free(exe->nodes);
    bp__garena_release(exe->arena);
    free(exe->slot_buffer);
    free(exe->chained_bytes);
    free(exe->slot_output);
    free(exe->buffer_bytes);
    free(exe->inputs);
    free(exe->input_of_slot);
    free(exe->outputs);
    free(exe->donor_of_output);
    free(exe->groups);
    free(exe->group_of_node);
    free(exe->draw_stride);
    bp_context *ctx = exe->ctx;
    free(exe);
    if (ctx)
        bp__context_release(ctx);
}

/* Drop the nodes whose outputs no output needs, walking backwards: a node
 * is live when it writes a needed slot; its inputs are then needed. */
static int32_t drop_dead(const bp_graph *g, plan_tmp *t)
{
    int32_t live = 0;
    for (int32_t o = 0; o < g->n_outputs; o++)
        t->needed[g->outputs[o].slot] = true;
    for (int32_t i = g->n_nodes - 1; i >= 0; i--) {
        const bp__gnode *n = &g->nodes[i];
        bool is_live = false;
        for (int32_t k = n->n_in; k < n->n_in + n->n_out && !is_live; k++)
            is_live = n->ref[k] >= 0 && t->needed[n->ref[k]];
        t->live_node[i] = is_live;
        if (!is_live)
            continue;
        live++;
        for (int32_t k = 0; k < n->n_in; k++)
            if (n->ref[k] >= 0)
                t->needed[n->ref[k]] = true;
    }
    return live;
}

/* Merge node i into an earlier identical one: its outputs become that
 * one's. Only nodes whose outputs have one writer, and whose inputs were
 * last written before the earlier node, are merged (a value written in
 * parts, as concat does, is never confused). */
static bool try_merge(bp__gnode *nodes, int32_t i, plan_tmp *t, int32_t tab_mask)
{
    bp__gnode *n = &nodes[i];
    for (int32_t k = n->n_in; k < n->n_in + n->n_out; k++)
        if (n->ref[k] != BP__GREF_NONE && t->writers[n->ref[k]] != 1)
            return false;
    uint64_t h = node_hash(n);
    for (uint64_t p = h & (uint64_t)tab_mask;; p = (p + 1) & (uint64_t)tab_mask) {
        int32_t j = t->hash_tab[p];
        if (j < 0) {
            t->hash_tab[p] = i;
            return false;
        }
        if (!node_same(&nodes[j], n, t->bytes))
            continue;
        bool inputs_settled = true;
        for (int32_t k = 0; k < n->n_in && inputs_settled; k++)
            inputs_settled = n->ref[k] < 0 || t->last_write[n->ref[k]] < j;
        if (!inputs_settled)
            return false;
        for (int32_t k = n->n_in; k < n->n_in + n->n_out; k++)
            if (n->ref[k] != BP__GREF_NONE)
                t->remap[n->ref[k]] = nodes[j].ref[k];
        return true;
    }
}

/* Pool buffers by liveness: a slot takes the smallest free buffer that
 * holds it (else grows the largest free one, else a new one) at its first
 * write (for a fused group's results: where the group starts), and gives it
 * back after its last use. */
static bool plan_buffers(bp_graph_exec *e, plan_tmp *t)
{
    int32_t ns = e->n_slots;
    int32_t *free_list = malloc(((size_t)ns + 1) * sizeof *free_list);
    int32_t *dying_head = malloc(((size_t)e->n_nodes + 1) * sizeof *dying_head);
    int32_t *dying_next = malloc(((size_t)ns + 1) * sizeof *dying_next);
    int32_t *born_head = malloc(((size_t)e->n_nodes + 1) * sizeof *born_head);
    int32_t *born_next = malloc(((size_t)ns + 1) * sizeof *born_next);
    e->buffer_bytes = malloc(((size_t)ns + 1) * sizeof *e->buffer_bytes);
    if (!free_list || !dying_head || !dying_next || !born_head || !born_next ||
        !e->buffer_bytes) {
        free(free_list), free(dying_head), free(dying_next), free(born_head), free(born_next);
        return false;
    }
    int32_t n_free = 0;
    for (int32_t i = 0; i < e->n_nodes; i++)
        dying_head[i] = born_head[i] = -1;
    for (int32_t s = ns - 1; s >= 0; s--)
        if (e->slot_buffer[s] == -2) {
            born_next[s] = born_head[t->first_def[s]];
            born_head[t->first_def[s]] = s;
            dying_next[s] = dying_head[t->last_use[s]];
            dying_head[t->last_use[s]] = s;
        }
    for (int32_t i = 0; i < e->n_nodes; i++) {
        for (int32_t s = born_head[i]; s >= 0; s = born_next[s]) {
            size_t need = t->bytes[s];
            int32_t best = -1, largest = -1;
            for (int32_t f = 0; f < n_free; f++) {
                size_t have = e->buffer_bytes[free_list[f]];
                if (have >= need && (best < 0 || have < e->buffer_bytes[free_list[best]]))
                    best = f;
                if (largest < 0 || have > e->buffer_bytes[free_list[largest]])
                    largest = f;
            }
            int32_t pick = best >= 0 ? best : largest;
            int32_t b;
            if (pick >= 0) {
                b = free_list[pick];
                free_list[pick] = free_list[--n_free];
                if (e->buffer_bytes[b] < need)
                    e->buffer_bytes[b] = need;
            } else {
                b = e->n_buffers++;
                e->buffer_bytes[b] = need;
            }
            e->slot_buffer[s] = b;
        }
        for (int32_t s = dying_head[i]; s >= 0; s = dying_next[s])
            free_list[n_free++] = e->slot_buffer[s];
    }
    free(free_list), free(dying_head), free(dying_next), free(born_head), free(born_next);
    return true;
}

void bp__graph_drop_nodes(bp_graph_exec *e, const bool *dead)
{
    int32_t kept = 0;
    for (int32_t i = 0; i < e->n_nodes; i++)
        if (!dead[i])
            e->nodes[kept++] = e->nodes[i];
    e->n_nodes = kept;
}

static int64_t numel_of(int32_t rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++)
        n *= shape[d];
    return n;
}

/* The values inside the epilogue chains the backend took (prepared before
 * the buffers are planned: bp__graph_epilogue_chains) leave the pool: a
 * run that runs a chain prepared never writes them, and one that runs it
 * node by node gives them buffers for that chain alone. Planned, they
 * overlapped the chain's last value (first written by the prepared node)
 * and raised the peak: ResNet-50's from 10.4 to 12.8 MB. false: out of
 * memory. */
static bool chained_slots(bp_graph_exec *e, const plan_tmp *t)
{
    for (int32_t i = 0; e->prepared && e->epilogue && i < e->n_nodes; i++) {
        if (!e->prepared[i] || e->epilogue[i] <= 0)
            continue;
        for (int32_t q = 0; q < e->epilogue[i]; q++) {
            const bp__gnode *n = &e->nodes[i + q];
            const int32_t s = n->ref[n->n_in];
            if (s < 0 || e->slot_buffer[s] != -2)
                continue;
            if (!e->chained_bytes &&
                !(e->chained_bytes = calloc((size_t)e->n_slots + 1, sizeof *e->chained_bytes)))
                return false;
            e->slot_buffer[s] = BP__SLOT_CHAINED;
            e->chained_bytes[s] = t->bytes[s];
        }
    }
    return true;
}

/* Which input's memory each output may take when the caller donates that
 * input (bp_graph_run_donating): one of its dtype and element count, not
 * itself an output, whose last read comes before the output's first write,
 * so no node ever reads and writes that memory at once (or is in the fused
 * group that writes the output, read there element for element as the
 * output is written: bp__graph_fused_overwrite). Each input serves
 * one output; an output that is an input or repeats one serves none. The
 * outputs are served in the order they are first written: an input that an
 * output may take, every later one may take too, so this pairs as many as
 * can be. false: out of memory. */
static bool pair_donors(bp_graph_exec *e, const plan_tmp *t, const bp__gplan *gp)
{
    int32_t no = e->n_outputs, *order = malloc(((size_t)no + 1) * sizeof *order);
    bool *taken = calloc((size_t)e->n_inputs + 1, sizeof *taken);
    if (!order || !taken) {
        free(order), free(taken);
        return false;
    }
    int32_t n = 0;
    for (int32_t o = 0; o < no; o++) {
        const bp__goutput *w = &e->outputs[o];
        e->donor_of_output[o] = -1;
        if (e->slot_output[w->slot] != o || e->input_of_slot[w->slot] >= 0 ||
            t->first_def[w->slot] < 0)
            continue;
        int32_t at = n++; /* insertion by first write */
        for (; at > 0 && t->first_def[e->outputs[order[at - 1]].slot] > t->first_def[w->slot]; at--)
            order[at] = order[at - 1];
        order[at] = o;
    }
    for (int32_t q = 0; q < n; q++) {
        const bp__goutput *w = &e->outputs[order[q]];
        for (int32_t k = 0; k < e->n_inputs; k++) {
            const bp__ginput *in = &e->inputs[k];
            if (!taken[k] && in->dtype == w->dtype && !t->is_output[in->slot] &&
                numel_of(in->rank, in->shape) == numel_of(w->rank, w->shape) &&
                (t->last_use[in->slot] < t->first_def[w->slot] ||
                 bp__graph_fused_overwrite(e, gp, in->slot, w->slot))) {
                e->donor_of_output[order[q]] = k;
                taken[k] = true;
                break;
            }
        }
    }
    free(order), free(taken);
    return true;
}

/* The planning scratch and the plan's arrays for g; false: out of memory
 * (what was allocated is freed by tmp_free and bp_graph_exec_release). */
static bool alloc_plan(const bp_graph *g, int32_t tab, plan_tmp *t, bp_graph_exec *e)
{
    size_t s1 = (size_t)g->n_slots + 1, n1 = (size_t)g->n_nodes + 1;
    t->writers = calloc(s1, sizeof(int32_t));
    t->first_def = malloc(s1 * sizeof(int32_t));
    t->last_use = malloc(s1 * sizeof(int32_t));
    t->last_write = malloc(s1 * sizeof(int32_t));
    t->remap = malloc(s1 * sizeof(int32_t));
    t->needed = calloc(s1, sizeof(bool));
    t->is_output = calloc(s1, sizeof(bool));
    t->internal = calloc(s1, sizeof(bool));
    t->bytes = malloc(s1 * sizeof(size_t));
    t->hash_tab = malloc((size_t)tab * sizeof(int32_t));
    t->live_node = calloc(n1, sizeof(bool));
    e->nodes = malloc(n1 * sizeof *e->nodes);
    e->slot_buffer = malloc(s1 * sizeof(int32_t));
    e->slot_output = malloc(s1 * sizeof(int32_t));
    e->input_of_slot = malloc(s1 * sizeof(int32_t));
    e->caps = malloc(((size_t)g->n_caps + 1) * sizeof *e->caps);
    e->cap_offset = malloc(((size_t)g->n_caps + 1) * sizeof *e->cap_offset);
    e->inputs = malloc(((size_t)g->n_inputs + 1) * sizeof *e->inputs);
    e->outputs = malloc(((size_t)g->n_outputs + 1) * sizeof *e->outputs);
    e->donor_of_output = malloc(((size_t)g->n_outputs + 1) * sizeof *e->donor_of_output);
    return t->writers && t->first_def && t->last_use && t->last_write && t->remap &&
           t->needed && t->is_output && t->internal && t->bytes && t->hash_tab && t->live_node &&
           e->nodes && e->slot_buffer && e->slot_output && e->input_of_slot && e->caps &&
           e->cap_offset && e->inputs &&
           e->outputs && e->donor_of_output;
}

/* The plan positions of each slot's first write, last write and last use,
 * again (after a rewrite replaced nodes). */
/* Node n, the at-th of the plan, in its slots' lifetimes: each slot it
 * reads or writes is used there, each it writes written there (and first
 * defined, if nothing wrote it before). */
static void note_lifetimes(const bp__gnode *n, int32_t at, plan_tmp *t)
{
    for (int32_t k = 0; k < n->n_in + n->n_out; k++) {
        int32_t s = n->ref[k];
        if (s < 0)
            continue;
        t->last_use[s] = at;
        if (k >= n->n_in) {
            t->last_write[s] = at;
            if (t->first_def[s] < 0)
                t->first_def[s] = at;
        }
    }
}

static void lifetimes(const bp_graph_exec *e, plan_tmp *t)
{
    for (int32_t s = 0; s < e->n_slots; s++)
        t->first_def[s] = t->last_use[s] = t->last_write[s] = -1;
    for (int32_t i = 0; i < e->n_nodes; i++)
        note_lifetimes(&e->nodes[i], i, t);
}

/* After a pass that dropped nodes from the plan (dropped of them; -1: it
 * ran out of memory): the lifetimes again, or the error. */
static bp_status after_pass(const char *fn, const char *doing, int32_t dropped,
                            const bp_graph_exec *e, plan_tmp *t)
{
    if (dropped < 0)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory %s %d nodes", fn, doing,
                         e->n_nodes);
    if (dropped > 0)
        lifetimes(e, t);
    return BP_OK;
}

static bp_status compile_locked(bp_graph *g, bool merge, bool o_fuse, bp_graph_exec *e)
{
    static const char fn[] = "bp_graph_compile";
    int32_t ns = g->n_slots, nn = g->n_nodes;
    int32_t tab = 16;
    while (tab < 2 * nn)
        tab *= 2;
    plan_tmp t = {0};
    if (!alloc_plan(g, tab, &t, e)) {
        tmp_free(&t);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory planning %d nodes", fn, nn);
    }
    e->n_slots = ns;
    for (int32_t s = 0; s < ns; s++) {
        t.bytes[s] = g->slots[s].bytes;
        t.remap[s] = s;
        t.first_def[s] = t.last_use[s] = t.last_write[s] = -1;
        e->input_of_slot[s] = g->slots[s].input;
    }
    for (int32_t c = 0; c < g->n_caps; c++) {
        bp_tensor_retain(g->caps[c]);
        e->cap_offset[e->n_caps] = g->caps[c]->offset;
        e->caps[e->n_caps++] = g->caps[c];
    }
    memcpy(e->inputs, g->inputs, (size_t)g->n_inputs * sizeof *e->inputs);
    e->n_inputs = g->n_inputs;
    memcpy(e->outputs, g->outputs, (size_t)g->n_outputs * sizeof *e->outputs);
    e->n_outputs = g->n_outputs;

    int32_t live = drop_dead(g, &t);
    for (int32_t i = 0; i < nn; i++) {
        const bp__gnode *n = &g->nodes[i];
        if (t.live_node[i])
            for (int32_t k = n->n_in; k < n->n_in + n->n_out; k++)
                if (n->ref[k] >= 0)
                    t.writers[n->ref[k]]++;
    }
    for (int32_t p = 0; p < tab; p++)
        t.hash_tab[p] = -1;
    /* forward: merge, then record the kept node with its inputs remapped */
    for (int32_t i = 0; i < nn; i++) {
        if (!t.live_node[i])
            continue;
        bp__gnode *n = &e->nodes[e->n_nodes];
        *n = g->nodes[i];
        for (int32_t k = 0; k < n->n_in; k++)
            if (n->ref[k] >= 0)
                n->ref[k] = t.remap[n->ref[k]];
        if (merge && try_merge(e->nodes, e->n_nodes, &t, tab - 1))
            continue;
        note_lifetimes(n, e->n_nodes++, &t);
    }
    for (int32_t o = 0; o < e->n_outputs; o++) {
        e->outputs[o].slot = t.remap[e->outputs[o].slot];
        t.is_output[e->outputs[o].slot] = true;
    }
    /* the plan's lifetimes, refreshed in place after each pass that drops nodes */
    bp__gplan gp = {.first_def = t.first_def, .last_use = t.last_use, .last_write = t.last_write,
                    .is_output = t.is_output, .internal = t.internal, .bytes = t.bytes};
    bp_status st = BP_OK;
    if (o_fuse)
        st = after_pass(fn, "rewriting", bp__graph_rewrite(g, e, t.is_output), e, &t);
    if (o_fuse && st == BP_OK)
        st = after_pass(fn, "joining the values of", bp__graph_concat_in_place(g, e, &gp), e,
                        &t);
    if (st != BP_OK) {
        tmp_free(&t);
        return st;
    }
    if (o_fuse)
        st = bp__graph_epilogue_chains(e, &gp);
    if (st != BP_OK) {
        tmp_free(&t);
        return st;
    }
    if (o_fuse && !bp__graph_fuse(e, &gp)) {
        tmp_free(&t);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory fusing %d nodes", fn,
                         e->n_nodes);
    }
    if (o_fuse && !bp__graph_epilogue_candidates(e, &gp)) {
        tmp_free(&t);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    /* -2: a pool buffer is to be planned; -1: none (an input, an output, or
     * a value a fused group keeps to itself) */
    int64_t sum = 0;
    for (int32_t s = 0; s < ns; s++) {
        e->slot_output[s] = -1;
        bool pooled = t.first_def[s] >= 0 && !t.is_output[s] && g->slots[s].input < 0 &&
                      !t.internal[s];
        e->slot_buffer[s] = pooled ? -2 : -1;
        if (t.first_def[s] >= 0 && !t.is_output[s] && g->slots[s].input < 0)
            sum += (int64_t)t.bytes[s];
    }
    for (int32_t o = e->n_outputs - 1; o >= 0; o--)
        e->slot_output[e->outputs[o].slot] = o;
    if (!chained_slots(e, &t) || !pair_donors(e, &t, &gp) || !plan_buffers(e, &t)) {
        tmp_free(&t);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory planning buffers", fn);
    }
    int64_t peak = 0, donatable = 0, fused = 0;
    for (int32_t k = 0; k < e->n_groups; k++)
        fused += e->groups[k].n_steps;
    for (int32_t b = 0; b < e->n_buffers; b++)
        peak += (int64_t)e->buffer_bytes[b];
    for (int32_t o = 0; o < e->n_outputs; o++)
        donatable += e->donor_of_output[o] >= 0;
    e->stats = (bp_graph_stats){.struct_size = sizeof e->stats,
                                .nodes_recorded = nn,
                                .nodes_live = live,
                                .nodes_planned = e->n_nodes,
                                .buffers = e->n_buffers,
                                .peak_bytes = peak,
                                .sum_bytes = sum,
                                .donatable_outputs = donatable,
                                .fused_groups = e->n_groups,
                                .nodes_fused = fused};
    tmp_free(&t);
    return BP_OK;
}

bp_status bp_graph_compile(bp_graph *g, const bp_graph_options *opt, bp_graph_exec **exe)
{
    static const char fn[] = "bp_graph_compile";
    if (!exe)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: exe is NULL", fn);
    *exe = NULL;
    if (!g)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: g is NULL", fn);
    bp_graph_options o = BP_GRAPH_OPTIONS_INIT;
    if (opt)
        /* the first layout (struct_size and no_merge) is the least a caller
         * passes; what a caller built against an older header lacks reads 0 */
        BP__TRY(bp__struct_in(fn, "bp_graph_options", "BP_GRAPH_OPTIONS_INIT", opt,
                              offsetof(bp_graph_options, no_fuse), &o, sizeof o));
    bp_graph_exec *e = calloc(1, sizeof *e);
    if (!e)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    pthread_mutex_init(&e->caps_lock, NULL);
    e->real = g->real;
    e->arena = g->arena;
    bp__garena_retain(e->arena);
    e->ctx = g->real->ctx;
    bp__context_retain(e->ctx);
    pthread_mutex_lock(&g->lock);
    bp_status st = g->n_outputs == 0
                       ? bp__error(BP_ERR_INVALID_ARGUMENT,
                                   "%s: the graph has no output; mark its results with "
                                   "bp_graph_output first",
                                   fn)
                       : compile_locked(g, o.no_merge == 0, o.no_fuse == 0, e);
    pthread_mutex_unlock(&g->lock);
    e->fresh_draws = o.fresh_draws != 0;
    if (st == BP_OK && e->fresh_draws && !bp__graph_draw_strides(e))
        st = bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    if (st == BP_OK)
        st = bp__graph_prepare(e);
    if (st != BP_OK) {
        bp_graph_exec_release(e);
        return st;
    }
    *exe = e;
    return BP_OK;
}

bp_status bp_graph_exec_stats(const bp_graph_exec *exe, bp_graph_stats *stats)
{
    static const char fn[] = "bp_graph_exec_stats";
    if (!exe || !stats)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, exe ? "stats" : "exe");
    return bp__struct_out(fn, "bp_graph_stats", stats, sizeof(bp_graph_stats),
                          &exe->stats, sizeof exe->stats);
}

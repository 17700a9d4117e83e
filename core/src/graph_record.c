/* Recording a graph. A graph owns a recording backend: a bp_backend whose
 * plugin table is the one below, whose buffers are value tokens (no memory)
 * and whose op entry appends a node. A symbolic tensor is an ordinary
 * tensor of that backend, so every op's eager checks and output allocation
 * run unchanged, and the op reaches the recording through the one op path
 * (bp__op_run) like any other. The core asks the graph's real backend
 * whether it has an op (bp__op_require), and lets a concrete tensor of that
 * backend join an op with symbolic ones as a captured constant
 * (bp__graph_join): retained, read when the plan runs. An op whose index
 * values the core checks on the host arrives with that check's rule
 * (bp__op_run_checked, index_check.c): its node carries the rule, and the
 * plan's run applies it before the node. No state is global or per
 * thread: everything hangs off the graph. */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

const bp_op_params bp__graph_no_params = {.struct_size = sizeof(bp_op_params)};

bool bp__graph_grow(void **arr, int32_t *cap, int32_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    int32_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, (size_t)n * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = n;
    return true;
}

/* ---- the recording backend's entries ---------------------------------------- */

static bp_status rec_alloc(void *dev, size_t bytes, void **buffer)
{
    bp_graph *g = dev;
    bp__gtoken *tok = malloc(sizeof *tok);
    if (!tok) {
        bp__plugin_detail_setf("out of memory for a value of a graph");
        return BP_ERR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&g->lock);
    if (!bp__graph_grow((void **)&g->slots, &g->cap_slots, g->n_slots + 1, sizeof *g->slots)) {
        pthread_mutex_unlock(&g->lock);
        free(tok);
        bp__plugin_detail_setf("out of memory for a value of a graph");
        return BP_ERR_OUT_OF_MEMORY;
    }
    tok->graph = g;
    tok->slot = g->n_slots;
    g->slots[g->n_slots++] = (bp__gslot){.token = tok, .bytes = bytes, .input = -1};
    pthread_mutex_unlock(&g->lock);
    *buffer = tok;
    return BP_OK;
}

static void rec_free(void *dev, void *buffer)
{
    (void)dev; /* the slot stays: nodes refer to it; the graph frees tokens */
    (void)buffer;
}

static bp_status rec_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes)
{
    (void)dev, (void)buffer, (void)offset, (void)src, (void)bytes;
    bp__plugin_detail_setf("this is a graph's recording backend, whose tensors are symbolic and "
                           "hold no memory; make concrete tensors on the graph's backend (they "
                           "are captured when an op mixes them with symbolic ones)");
    return BP_ERR_INVALID_ARGUMENT;
}

static bp_status rec_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    (void)dev, (void)buffer, (void)offset, (void)dst, (void)bytes;
    return BP_ERR_INVALID_ARGUMENT; /* never reached: bp__device_read refuses first */
}

/* The operand a view's buffer names: a captured storage, else a token. */
static int32_t rec_ref(bp_graph *g, const void *buffer)
{
    for (int32_t c = 0; c < g->n_caps; c++)
        if (g->caps[c]->storage->buffer == buffer)
            return BP__GREF_CAP(c);
    const bp__gtoken *tok = buffer;
    return tok->graph == g ? tok->slot : BP__GREF_NONE;
}

/* Append a node: the op, its parameters, its views with their operands,
 * and the index rule that the plan's run checks before it (or none). */
static bp_status append(bp_graph *g, bp_op op, const bp_op_params *params, int32_t n_in,
                        const bp_view *const *in, int32_t n_out, const bp_view *const *out,
                        const bp__index_rule *rule)
{
    if (rule && rule->input < 0)
        rule = NULL;
    if (n_in > BP__GRAPH_MAX_IO || n_out > BP__GRAPH_MAX_IO) {
        bp__plugin_detail_setf("%s has more views than a graph node holds (%d)", bp_op_name(op),
                               BP__GRAPH_MAX_IO);
        return BP_ERR_UNSUPPORTED_OP;
    }
    int32_t nv = n_in + n_out;
    bool own_params = memcmp(params, &bp__graph_no_params, sizeof *params) != 0;
    pthread_mutex_lock(&g->lock);
    bp_view *views = bp__garena_take(g->arena, (size_t)nv * sizeof *views);
    bp_op_params *p = own_params ? bp__garena_take(g->arena, sizeof *p) : NULL;
    bp__index_rule *check = rule ? bp__garena_take(g->arena, sizeof *check) : NULL;
    if (!views || (own_params && !p) || (rule && !check) ||
        !bp__graph_grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes)) {
        pthread_mutex_unlock(&g->lock); /* what the arena gave stays there, unused */
        bp__plugin_detail_setf("out of memory recording %s on a graph", bp_op_name(op));
        return BP_ERR_OUT_OF_MEMORY;
    }
    bp__gnode *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->n_in = n_in;
    n->n_out = n_out;
    if (p)
        *p = *params;
    n->params = p ? p : &bp__graph_no_params;
    if (check)
        *check = *rule;
    n->check = check;
    n->view = views;
    for (int32_t k = 0; k < nv; k++) {
        const bp_view *v = k < n_in ? in[k] : out[k - n_in];
        if (!v) {
            memset(&views[k], 0, sizeof views[k]);
            n->ref[k] = BP__GREF_NONE;
            continue;
        }
        views[k] = *v;
        views[k].buffer = NULL;
        n->ref[k] = rec_ref(g, v->buffer);
        if (n->ref[k] == BP__GREF_NONE || (k >= n_in && n->ref[k] < 0)) {
            pthread_mutex_unlock(&g->lock);
            bp__plugin_detail_setf("%s: a view of the op is neither a value of this graph nor a "
                                   "captured tensor (a defect in the core)", bp_op_name(op));
            return BP_ERR_BACKEND;
        }
    }
    g->n_nodes++;
    pthread_mutex_unlock(&g->lock);
    return BP_OK;
}

static bp_status rec_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                        const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return append(dev, op, params, n_in, in, n_out, out, NULL);
}

bp_status bp__graph_record_op(bp_backend *rec, bp_op op, const bp_op_params *p, int32_t n_in,
                              const bp_view *const *in, int32_t n_out, const bp_view *const *out,
                              const bp__index_rule *rule)
{
    return append(rec->graph, op, p, n_in, in, n_out, out, rule);
}

static const bp_plugin rec_vt = {
    .struct_size = sizeof(bp_plugin),
    .abi_major = BP_ABI_MAJOR,
    .abi_minor = BP_ABI_MINOR,
    .name = "graph",
    .version = "recording",
    .description = "a graph's recording backend",
    .alloc = rec_alloc,
    .free = rec_free,
    .write = rec_write,
    .read = rec_read,
    .op = rec_op,
};

/* ---- the graph object ------------------------------------------------------- */

bp_status bp_graph_create(bp_backend *backend, bp_graph **out)
{
    static const char fn[] = "bp_graph_create";
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!backend)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: backend is NULL", fn);
    if (backend->graph)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: backend is a graph's recording backend (bp_tensor_backend of a "
                         "symbolic tensor); pass the device backend, e.g. from "
                         "bp_backend_default",
                         fn);
    bp_graph *g = calloc(1, sizeof *g);
    bp__garena *arena = g ? bp__garena_new() : NULL;
    if (!arena) {
        free(g);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    g->arena = arena;
    atomic_init(&g->refs, 1);
    pthread_mutex_init(&g->lock, NULL);
    g->real = backend;
    bp_backend *r = &g->rec;
    r->ctx = backend->ctx;
    r->plugin = backend->plugin;
    r->vt = &rec_vt;
    r->dev = g;
    r->index = backend->index;
    r->host_addressable = false;
    /* the device's name: messages at record time read as eager ones */
    memcpy(r->name, backend->name, sizeof r->name);
    atomic_init(&r->live_tensors, 0);
    atomic_init(&r->live_bytes, 0);
    pthread_mutex_init(&r->exchange_lock, NULL);
    r->graph = g;
    bp__context_retain(backend->ctx);
    *out = g;
    return BP_OK;
}

void bp__graph_retain(bp_graph *g) { atomic_fetch_add(&g->refs, 1); }

void bp__graph_unref(bp_graph *g)
{
    if (atomic_fetch_sub(&g->refs, 1) != 1)
        return;
    for (int32_t c = 0; c < g->n_caps; c++)
        bp_tensor_release(g->caps[c]);
    for (int32_t s = 0; s < g->n_slots; s++)
        free(g->slots[s].token);
    free(g->caps);
    free(g->slots);
    free(g->nodes);
    bp__garena_release(g->arena);
    free(g->inputs);
    free(g->outputs);
    pthread_mutex_destroy(&g->rec.exchange_lock);
    pthread_mutex_destroy(&g->lock);
    bp_context *ctx = g->real->ctx;
    free(g);
    bp__context_release(ctx);
}

void bp_graph_release(bp_graph *g)
{
    if (g)
        bp__graph_unref(g);
}

bp_status bp_graph_input(bp_graph *g, bp_dtype dtype, int32_t rank, const int64_t *shape,
                         bp_tensor **x)
{
    static const char fn[] = "bp_graph_input";
    BP__TRY(bp__check_out(fn, x));
    if (!g)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: g is NULL", fn);
    bp_tensor *t = NULL;
    BP__TRY(bp__tensor_new(fn, &g->rec, dtype, rank, shape, &t));
    pthread_mutex_lock(&g->lock);
    if (!bp__graph_grow((void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1,
                        sizeof *g->inputs)) {
        pthread_mutex_unlock(&g->lock);
        bp_tensor_release(t);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    int32_t slot = ((const bp__gtoken *)t->storage->buffer)->slot;
    bp__ginput *in = &g->inputs[g->n_inputs];
    memset(in, 0, sizeof *in);
    in->slot = slot;
    in->dtype = dtype;
    in->rank = rank;
    memcpy(in->shape, t->shape, sizeof in->shape);
    g->slots[slot].input = g->n_inputs++;
    pthread_mutex_unlock(&g->lock);
    *x = t;
    return BP_OK;
}

bp_status bp_graph_output(bp_graph *g, const bp_tensor *t)
{
    static const char fn[] = "bp_graph_output";
    if (!g)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: g is NULL", fn);
    BP__TRY(bp__check_input(fn, "t", t));
    if (bp__backend_of(t) != &g->rec)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: t is %s; an output must be a symbolic tensor of this graph (made "
                         "from its bp_graph_input tensors by ops)",
                         fn, bp__backend_of(t)->graph ? "a symbolic tensor of another graph"
                                                      : "a concrete tensor");
    pthread_mutex_lock(&g->lock);
    if (!bp__graph_grow((void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1,
                        sizeof *g->outputs)) {
        pthread_mutex_unlock(&g->lock);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    bp__goutput *o = &g->outputs[g->n_outputs++];
    memset(o, 0, sizeof *o);
    o->slot = ((const bp__gtoken *)t->storage->buffer)->slot;
    o->dtype = t->dtype;
    o->rank = t->rank;
    memcpy(o->shape, t->shape, sizeof o->shape);
    pthread_mutex_unlock(&g->lock);
    return BP_OK;
}

/* ---- symbolic and concrete tensors in one op ------------------------------------ */

bp_backend *bp__backend_real(bp_backend *b) { return b->graph ? b->graph->real : b; }

bool bp__backends_joinable(const bp_backend *a, const bp_backend *b)
{
    return a == b || (a->graph && a->graph->real == b) || (b->graph && b->graph->real == a);
}

bp_backend *bp__backend_of_all(size_t n, const bp_tensor *const *ts)
{
    bp_backend *first = NULL;
    for (size_t k = 0; k < n; k++) {
        if (!ts[k])
            continue;
        bp_backend *b = bp__backend_of(ts[k]);
        if (b->graph)
            return b;
        if (!first)
            first = b;
    }
    return first;
}

static bp_status capture(const char *fn, bp_graph *g, const bp_tensor *t)
{
    pthread_mutex_lock(&g->lock);
    for (int32_t c = 0; c < g->n_caps; c++)
        if (g->caps[c]->storage == t->storage) {
            pthread_mutex_unlock(&g->lock);
            return BP_OK;
        }
    if (!bp__graph_grow((void **)&g->caps, &g->cap_caps, g->n_caps + 1, sizeof *g->caps)) {
        pthread_mutex_unlock(&g->lock);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory capturing a tensor", fn);
    }
    bp_tensor_retain((bp_tensor *)t);
    g->caps[g->n_caps++] = (bp_tensor *)t;
    pthread_mutex_unlock(&g->lock);
    return BP_OK;
}

bp_status bp__graph_join(const char *fn, bp_backend **be, const bp_tensor *const *ts, size_t n,
                         const char *const *args)
{
    size_t s = n;
    for (size_t k = 0; k < n && s == n; k++)
        if (ts[k] && bp__backend_of(ts[k])->graph)
            s = k;
    if (s == n)
        return BP_OK;
    bp_backend *rec = bp__backend_of(ts[s]);
    bp_graph *g = rec->graph;
    for (size_t k = 0; k < n; k++) {
        if (!ts[k])
            continue;
        bp_backend *b = bp__backend_of(ts[k]);
        if (b == rec)
            continue;
        char sbuf[BP__ARG_NAME_CAP], kbuf[BP__ARG_NAME_CAP];
        if (b->graph)
            return bp__error(BP_ERR_INVALID_ARGUMENT,
                             "%s: %s and %s are symbolic tensors of two different graphs; the "
                             "tensors of one op must belong to one graph (record the op on one "
                             "of them, or run the other graph and pass its result)",
                             fn, bp__arg_name(args, s, sbuf), bp__arg_name(args, k, kbuf));
        if (b != g->real) {
            const char *kname = bp__arg_name(args, k, kbuf);
            return bp__error(BP_ERR_BACKEND_MISMATCH,
                             "%s: %s is a symbolic tensor of a graph on backend %s but %s is on "
                             "backend %s; tensors never move implicitly, not into a graph "
                             "either. Copy it explicitly before recording, e.g. "
                             "bp_backend_copy(<the %s tensor>, <backend %s>, &copy)",
                             fn, bp__arg_name(args, s, sbuf), g->real->name, kname, b->name,
                             kname, g->real->name);
        }
        BP__TRY(capture(fn, g, ts[k]));
    }
    *be = rec;
    return BP_OK;
}

bp_status bp__graph_read_error(const char *fn, const bp_backend *b)
{
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "%s: the tensor is symbolic (recorded on a graph for backend %s) and holds "
                     "no values; mark it with bp_graph_output, compile the graph with "
                     "bp_graph_compile and read the tensor that bp_graph_run returns",
                     fn, b->name);
}

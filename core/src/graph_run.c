/* Running a plan: the inputs checked against what was recorded, the pool
 * buffers and the outputs allocated on the plan's backend, then every node
 * through the one op path (bp__op_run) with its views pointed at real
 * buffers: the plugin receives exactly the views an eager call would give
 * it, so the results have eager's bits. Captured tensors are read through
 * their storage each run (held by reference, never copied). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

static bp_status check_inputs(const char *fn, const bp_graph_exec *e, int32_t n_in,
                              bp_tensor *const *inputs, int32_t n_out, bp_tensor **outputs)
{
    if (n_in != e->n_inputs || (n_in > 0 && !inputs))
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: %d input(s) given%s but the graph was recorded with %d", fn, n_in,
                         inputs ? "" : " (inputs NULL)", e->n_inputs);
    if (n_out != e->n_outputs || !outputs)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: room for %d output(s) given%s but the graph marked %d", fn, n_out,
                         outputs ? "" : " (outputs NULL)", e->n_outputs);
    for (int32_t k = 0; k < n_out; k++)
        outputs[k] = NULL;
    char name[32], a[BP__SHAPE_STR_CAP], b[BP__SHAPE_STR_CAP];
    for (int32_t k = 0; k < n_in; k++) {
        const bp_tensor *t = inputs[k];
        const bp__ginput *want = &e->inputs[k];
        snprintf(name, sizeof name, "inputs[%d]", (int)k);
        BP__TRY(bp__check_input(fn, name, t));
        bp_backend *be = bp__backend_of(t);
        if (be->graph)
            return bp__error(BP_ERR_INVALID_ARGUMENT,
                             "%s: %s is a symbolic tensor; a plan runs on concrete tensors of "
                             "backend %s",
                             fn, name, e->real->name);
        if (be != e->real)
            return bp__error(BP_ERR_BACKEND_MISMATCH,
                             "%s: %s is on backend %s but the graph runs on backend %s; tensors "
                             "never move implicitly. Copy it explicitly, e.g. "
                             "bp_backend_copy(<the %s tensor>, <backend %s>, &copy)",
                             fn, name, be->name, e->real->name, name, e->real->name);
        if (t->dtype != want->dtype)
            return bp__error(BP_ERR_DTYPE,
                             "%s: %s is %s but the graph was recorded with %s for it; convert it "
                             "with bp_cast, or record a graph for %s",
                             fn, name, bp_dtype_name(t->dtype), bp_dtype_name(want->dtype),
                             bp_dtype_name(t->dtype));
        bool same = t->rank == want->rank;
        for (int32_t d = 0; same && d < t->rank; d++)
            same = t->shape[d] == want->shape[d];
        if (!same)
            return bp__error(BP_ERR_SHAPE,
                             "%s: %s has shape %s but the graph was recorded with shape %s for "
                             "it; a plan runs on the shapes it was compiled for (record and "
                             "compile one per shape)",
                             fn, name, BP__SHAPE_STR(a, t->rank, t->shape),
                             BP__SHAPE_STR(b, want->rank, want->shape));
    }
    return BP_OK;
}

/* The captured tensors this run reads (retained, so that a bind meanwhile
 * changes the next run, not this one), each checked to hold data. */
static bp_status snapshot_caps(const char *fn, bp_graph_exec *e, bp_tensor **caps)
{
    pthread_mutex_lock(&e->caps_lock);
    for (int32_t c = 0; c < e->n_caps; c++) {
        caps[c] = e->caps[c];
        bp_tensor_retain(caps[c]);
    }
    pthread_mutex_unlock(&e->caps_lock);
    for (int32_t c = 0; c < e->n_caps; c++) {
        const bp_tensor *t = caps[c];
        if (atomic_load(&t->given_away) || !t->storage->buffer)
            return bp__error(BP_ERR_INVALID_ARGUMENT,
                             "%s: a tensor the graph captured was given away by "
                             "bp_backend_transfer and holds no data; bind a tensor that lives "
                             "in its place (bp_graph_exec_bind), or record the graph again",
                             fn);
    }
    return BP_OK;
}

typedef struct run_state {
    bp_tensor **caps;        /* per capture: the tensor this run reads */
    bp_tensor **pool;        /* per pool buffer */
    void **slot_buf;         /* per slot: buffer and base byte offset */
    int64_t *slot_off;
    uint64_t draw_run;       /* this run's number (fresh_draws), else 0 */
    const char *fn;          /* the entry running it, for messages */
} run_state;

/* Whether t's memory is its alone: no other handle, view, cached copy, or
 * other library sees it, and it is not another library's memory. */
static bool exclusive(const bp_tensor *t)
{
    const bp__storage *s = t->storage;
    return atomic_load(&t->refs) == 1 && atomic_load(&s->refs) == 1 &&
           !atomic_load(&t->cached) && !s->listed && !s->lender && !s->release && s->buffer;
}

/* Whether inputs[k]'s memory is also another input's in this call (the
 * plan may read that one after writing an output into it). */
static bool shared_in_call(bp_tensor *const *inputs, int32_t n_in, int32_t k)
{
    for (int32_t j = 0; j < n_in; j++)
        if (j != k && inputs[j]->storage == inputs[k]->storage)
            return true;
    return false;
}

/* The outputs: a new tensor per output slot (aliases for a slot marked
 * twice, or an input marked as an output), or the memory of the donated
 * input the plan paired with it, where that memory is the input's alone. */
static bp_status make_outputs(const char *fn, const bp_graph_exec *e, bp_tensor *const *inputs,
                              const bool *donate, run_state *r, bp_tensor **outputs)
{
    for (int32_t o = 0; o < e->n_outputs; o++) {
        const bp__goutput *w = &e->outputs[o];
        int32_t first = e->slot_output[w->slot], in = e->input_of_slot[w->slot];
        int32_t donor = e->donor_of_output[o];
        bp_status st;
        if (in >= 0)
            st = bp__tensor_alias(inputs[in], w->rank, w->shape, &outputs[o]);
        else if (first != o)
            st = bp__tensor_alias(outputs[first], w->rank, w->shape, &outputs[o]);
        else if (donate && donor >= 0 && donate[donor] && exclusive(inputs[donor]) &&
                 !shared_in_call(inputs, e->n_inputs, donor))
            st = bp__tensor_alias(inputs[donor], w->rank, w->shape, &outputs[o]);
        else
            st = bp__tensor_new(fn, e->real, w->dtype, w->rank, w->shape, &outputs[o]);
        if (st != BP_OK)
            return st;
        if (in < 0 && first == o) {
            r->slot_buf[w->slot] = outputs[o]->storage->buffer;
            r->slot_off[w->slot] = outputs[o]->offset;
        }
    }
    return BP_OK;
}

/* Node n's index values (its input view v) checked as the eager call
 * checks them, now that they exist: the message as eager's, saying that
 * the plan was running and where the values came from. */
static bp_status check_indices(const bp_graph_exec *e, const bp__gnode *n, const bp_view *v)
{
    char fn[96], note[160], arg[32];
    snprintf(fn, sizeof fn, "bp_graph_run: running the plan, %s", bp__op_fn(n->op));
    bp_op_arg_name(bp_op_info_of(n->op)->in, n->check->input, arg, sizeof arg);
    int32_t ref = n->ref[n->check->input];
    if (BP__GREF_IS_CAP(ref))
        snprintf(note, sizeof note, "; %s is a tensor the graph captured when it was recorded",
                 arg);
    else if (e->input_of_slot[ref] >= 0)
        snprintf(note, sizeof note, "; %s is inputs[%d] of this run", arg,
                 (int)e->input_of_slot[ref]);
    else
        snprintf(note, sizeof note, "; the plan computed %s from this run's inputs", arg);
    return bp__check_index_rule(fn, n->check, e->real, v, note);
}

/* v: a recorded view of operand ref, pointed at this run's memory. */
static void place(const bp_graph_exec *e, const run_state *r, int32_t ref, bp_view *v)
{
    if (BP__GREF_IS_CAP(ref)) {
        int32_t c = BP__GREF_CAP_INDEX(ref);
        v->buffer = r->caps[c]->storage->buffer;
        v->offset += r->caps[c]->offset - e->cap_offset[c]; /* a bound tensor's own */
    } else {
        v->buffer = r->slot_buf[ref];
        v->offset += r->slot_off[ref];
    }
}

/* A fused group through the plugin's fused_run, counted as one op call. */
static bp_status run_group(const bp_graph_exec *e, const run_state *r, const bp__ggroup *g)
{
    bp_view in[BP__FUSE_MAX_IN], out[BP_FUSED_MAX_STEPS];
    const bp_view *pin[BP__FUSE_MAX_IN], *pout[BP_FUSED_MAX_STEPS];
    for (int32_t k = 0; k < g->n_in; k++) {
        in[k] = g->in_view[k];
        place(e, r, g->in_ref[k], &in[k]);
        pin[k] = &in[k];
    }
    for (int32_t k = 0; k < g->n_out; k++) {
        out[k] = g->out_view[k];
        place(e, r, g->out_ref[k], &out[k]);
        pout[k] = &out[k];
    }
    bp_fused_group prog = {.struct_size = sizeof prog, .n_steps = g->n_steps, .steps = g->steps,
                           .n_in = g->n_in, .n_out = g->n_out, .out_step = g->out_step};
    bp__count_op(e->real);
    bp__call_begin();
    bp_status st = e->real->vt->fused_run(e->real->dev, &prog, pin, pout);
    if (st == BP_OK)
        return BP_OK;
    char what[96]; /* made only for a failure: a run's cost is the plugin's */
    snprintf(what, sizeof what, "a fused group of %d ops (%s .. %s)", (int)g->n_steps,
             bp_op_name(g->steps[0].op), bp_op_name(g->steps[g->n_steps - 1].op));
    return bp__call_end(e->real, what, "fused_run", st);
}

/* Node i's views pointed at this run's memory (v: room for its inputs and
 * outputs; pv[k] NULL where it has no operand k). */
static void place_node(const bp_graph_exec *e, const run_state *r, const bp__gnode *n,
                       bp_view *v, const bp_view **pv)
{
    for (int32_t k = 0; k < n->n_in + n->n_out; k++) {
        int32_t ref = n->ref[k];
        if (ref == BP__GREF_NONE) {
            pv[k] = NULL;
            continue;
        }
        v[k] = n->view[k];
        place(e, r, ref, &v[k]);
        pv[k] = &v[k];
    }
}

/* Node i through its op entry, as recorded. */
static bp_status run_node(const bp_graph_exec *e, const run_state *r, int32_t i)
{
    const bp__gnode *n = &e->nodes[i];
    bp_view v[2 * BP__GRAPH_MAX_IO];
    const bp_view *pv[2 * BP__GRAPH_MAX_IO];
    place_node(e, r, n, v, pv);
    if (n->check)
        BP__TRY(check_indices(e, n, pv[n->check->input]));
    bp_op_params drawn;
    return bp__op_run(e->real, n->op, bp__graph_draw_params(e, i, r->draw_run, &drawn), pv,
                      pv + n->n_in);
}

/* Buffers of their own for the values inside the epilogue of node i
 * (BP__SLOT_CHAINED), which a bind sends through the op entries with the
 * nodes after it, one by one: held until its last node has run. */
static bp_status hold_chain(const bp_graph_exec *e, const run_state *r, int32_t i,
                            bp_tensor **held)
{
    for (int32_t q = 0; q < e->epilogue[i]; q++) {
        const bp__gnode *b = &e->nodes[i + q];
        const int32_t s = b->ref[b->n_in];
        if (s < 0 || e->slot_buffer[s] != BP__SLOT_CHAINED)
            continue;
        BP__TRY(bp__tensor_new(r->fn, e->real, BP_U8, 1,
                               (const int64_t[]){(int64_t)e->chained_bytes[s]}, &held[q]));
        r->slot_buf[s] = held[q]->storage->buffer;
        r->slot_off[s] = held[q]->offset;
    }
    return BP_OK;
}

/* As pool buffers go: the backend keeps them until queued work is done. */
static void release_chain(bp_tensor **held)
{
    for (int32_t q = 0; q < BP_EPILOGUE_MAX_STEPS; q++) {
        bp_tensor_release(held[q]);
        held[q] = NULL;
    }
}

/* Node i, the first of a step, and the nodes the step takes with it: *i
 * is left on the step's last node. */
static bp_status run_step(const bp_graph_exec *e, const run_state *r, int32_t *i)
{
    int32_t grp = e->group_of_node ? e->group_of_node[*i] : -1;
    if (grp >= 0) {
        *i = e->groups[grp].last;
        return run_group(e, r, &e->groups[grp]);
    }
    if (!bp__graph_prepared_current(e, *i, r->caps))
        return run_node(e, r, *i); /* its epilogue's nodes then run as steps of their own */
    const bp__gnode *n = &e->nodes[*i];
    bp_view v[2 * BP__GRAPH_MAX_IO];
    const bp_view *pv[2 * BP__GRAPH_MAX_IO];
    place_node(e, r, n, v, pv);
    if (n->check)
        BP__TRY(check_indices(e, n, pv[n->check->input]));
    void *prepared = e->prepared[*i];
    const int32_t steps = e->epilogue ? e->epilogue[*i] : 0;
    if (steps <= 0)
        return bp__op_run_prepared(e->real, prepared, n->op, n->params, pv, pv + n->n_in);
    /* its epilogue: the steps' operands after its inputs, the last step's
     * output for its own; the steps are skipped */
    bp_view ov[BP_EPILOGUE_MAX_STEPS], out;
    const bp_view *args[BP__GRAPH_MAX_IO + BP_EPILOGUE_MAX_STEPS];
    int32_t n_args = n->n_in, s = n->ref[n->n_in];
    for (int32_t k = 0; k < n->n_in; k++)
        args[k] = pv[k];
    for (int32_t q = 1; q <= steps; q++) {
        const bp__gnode *b = &e->nodes[*i + q];
        if (b->n_in == 2) { /* a binary step: its other input */
            const int32_t o = b->ref[0] == s ? 1 : 0;
            ov[n_args - n->n_in] = b->view[o];
            place(e, r, b->ref[o], &ov[n_args - n->n_in]);
            args[n_args] = &ov[n_args - n->n_in];
            n_args++;
        }
        s = b->ref[b->n_in];
    }
    const bp__gnode *last = &e->nodes[*i + steps];
    out = last->view[last->n_in];
    place(e, r, s, &out);
    *i += steps;
    const bp_view *pout = &out;
    return n_args == n->n_in
               ? bp__op_run_prepared(e->real, prepared, n->op, n->params, args, &pout)
               : bp__op_run_prepared_chain(e->real, prepared, n->op, n->params,
                                           n_args - n->n_in, args, &pout);
}

static bp_status run_nodes(const bp_graph_exec *e, const run_state *r)
{
    bp__gprofile *prof = bp__graph_profile_of(e);
    bp_tensor *held[BP_EPILOGUE_MAX_STEPS] = {NULL};
    int32_t held_to = -1; /* the last node of the chain whose values are held */
    bp_status st = BP_OK;
    for (int32_t i = 0; i < e->n_nodes && st == BP_OK; i++) {
        const int32_t first = i;
        const int64_t t0 = prof ? bp__graph_profile_now() : 0;
        /* only a plan with values inside chains (BP__SLOT_CHAINED) has
         * anything to hold: the others skip the check of the captures */
        if (e->chained_bytes && e->prepared[i] && e->epilogue[i] > 0 &&
            !bp__graph_prepared_current(e, i, r->caps)) {
            held_to = i + e->epilogue[i];
            st = hold_chain(e, r, i, held);
        }
        if (st == BP_OK)
            st = run_step(e, r, &i);
        if (st == BP_OK && prof)
            st = bp__graph_profile_step(e, prof, first, i - first + 1, t0);
        if (held_to >= 0 && i >= held_to) {
            release_chain(held);
            held_to = -1;
        }
    }
    release_chain(held);
    return st;
}

static bp_status run(const char *fn, bp_graph_exec *exe, int32_t n_in, bp_tensor *const *inputs,
                     const bool *donate, int32_t n_out, bp_tensor **outputs)
{
    if (!exe)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: exe is NULL", fn);
    for (int32_t k = 0; outputs && k < n_out && k < exe->n_outputs; k++)
        outputs[k] = NULL; /* a failure leaves none set */
    BP__TRY(check_inputs(fn, exe, n_in, inputs, n_out, outputs));
    for (int32_t k = 0; donate && k < n_in; k++)
        for (int32_t j = 0; donate[k] && j < k; j++)
            if (donate[j] && inputs[j]->storage == inputs[k]->storage)
                return bp__error(BP_ERR_INVALID_ARGUMENT,
                                 "%s: inputs[%d] and inputs[%d] are donated and share memory; "
                                 "donate a tensor once",
                                 fn, (int)j, (int)k);
    run_state r = {
        .fn = fn,
        .caps = calloc((size_t)exe->n_caps + 1, sizeof *r.caps),
        .pool = calloc((size_t)exe->n_buffers + 1, sizeof *r.pool),
        .slot_buf = calloc((size_t)exe->n_slots + 1, sizeof *r.slot_buf),
        .slot_off = calloc((size_t)exe->n_slots + 1, sizeof *r.slot_off),
    };
    bp_status st = BP_OK;
    bool refused = false; /* a capture holds no data: refused as a check is */
    if (!r.caps || !r.pool || !r.slot_buf || !r.slot_off)
        st = bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    else
        refused = (st = snapshot_caps(fn, exe, r.caps)) != BP_OK;
    for (int32_t b = 0; st == BP_OK && b < exe->n_buffers; b++)
        st = bp__tensor_new(fn, exe->real, BP_U8, 1,
                            (const int64_t[]){(int64_t)exe->buffer_bytes[b]}, &r.pool[b]);
    for (int32_t s = 0; st == BP_OK && s < exe->n_slots; s++) {
        int32_t b = exe->slot_buffer[s], in = exe->input_of_slot[s];
        if (b >= 0) {
            r.slot_buf[s] = r.pool[b]->storage->buffer;
            r.slot_off[s] = r.pool[b]->offset;
        } else if (in >= 0) {
            r.slot_buf[s] = inputs[in]->storage->buffer;
            r.slot_off[s] = inputs[in]->offset;
        }
    }
    if (st == BP_OK && exe->fresh_draws)
        r.draw_run = atomic_fetch_add(&exe->draw_run, 1);
    if (st == BP_OK)
        st = make_outputs(fn, exe, inputs, donate, &r, outputs);
    if (st == BP_OK)
        st = run_nodes(exe, &r);
    /* pool buffers go now: like an eager op's temporaries, the backend keeps
     * them until queued work that uses them is done */
    for (int32_t b = 0; r.pool && b < exe->n_buffers; b++)
        bp_tensor_release(r.pool[b]);
    for (int32_t c = 0; r.caps && c < exe->n_caps; c++)
        bp_tensor_release(r.caps[c]);
    free(r.caps), free(r.pool), free(r.slot_buf), free(r.slot_off);
    if (st != BP_OK)
        for (int32_t o = 0; o < n_out; o++) {
            bp_tensor_release(outputs[o]);
            outputs[o] = NULL;
        }
    /* given up whatever the outcome: a run that failed may have written
     * over them */
    for (int32_t k = 0; donate && !refused && k < n_in; k++)
        if (donate[k])
            atomic_store(&inputs[k]->given_away, true);
    return st;
}

bp_status bp_graph_run(bp_graph_exec *exe, int32_t n_in, bp_tensor *const *inputs,
                       int32_t n_out, bp_tensor **outputs)
{
    return run("bp_graph_run", exe, n_in, inputs, NULL, n_out, outputs);
}

bp_status bp_graph_run_donating(bp_graph_exec *exe, int32_t n_in, bp_tensor *const *inputs,
                                const bool *donate, int32_t n_out, bp_tensor **outputs)
{
    return run("bp_graph_run_donating", exe, n_in, inputs, donate, n_out, outputs);
}

/* The capture of e that is t, or -1. Under caps_lock. */
static int32_t capture_of(const bp_graph_exec *e, const bp_tensor *t)
{
    for (int32_t c = 0; c < e->n_caps; c++)
        if (e->caps[c] == t)
            return c;
    return -1;
}

bp_status bp_graph_exec_bind(bp_graph_exec *exe, const bp_tensor *captured,
                             bp_tensor *replacement)
{
    static const char fn[] = "bp_graph_exec_bind";
    if (!exe || !captured)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, exe ? "captured" : "exe");
    BP__TRY(bp__check_input(fn, "replacement", replacement));
    bp_backend *be = bp__backend_of(replacement);
    char a[BP__SHAPE_STR_CAP], b[BP__SHAPE_STR_CAP];
    if (be->graph)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: replacement is a symbolic tensor; a plan reads concrete tensors of "
                         "backend %s",
                         fn, exe->real->name);
    if (be != exe->real)
        return bp__error(BP_ERR_BACKEND_MISMATCH,
                         "%s: replacement is on backend %s but the plan runs on backend %s; "
                         "tensors never move implicitly. Copy it explicitly, e.g. "
                         "bp_backend_copy(replacement, <backend %s>, &copy)",
                         fn, be->name, exe->real->name, exe->real->name);
    pthread_mutex_lock(&exe->caps_lock);
    int32_t c = capture_of(exe, captured);
    bp_status st = BP_OK;
    if (c < 0)
        st = bp__error(BP_ERR_INVALID_ARGUMENT,
                       "%s: captured is not a tensor the plan reads (it was not captured when "
                       "the graph was recorded, and no bind put it in the plan)",
                       fn);
    else if (replacement->dtype != captured->dtype)
        st = bp__error(BP_ERR_DTYPE, "%s: replacement is %s but the captured tensor is %s", fn,
                       bp_dtype_name(replacement->dtype), bp_dtype_name(captured->dtype));
    else if (replacement->rank != captured->rank ||
             memcmp(replacement->shape, captured->shape,
                    (size_t)captured->rank * sizeof captured->shape[0]) != 0)
        st = bp__error(BP_ERR_SHAPE,
                       "%s: replacement has shape %s but the captured tensor has shape %s; a "
                       "plan reads the shapes it was compiled for",
                       fn, BP__SHAPE_STR(a, replacement->rank, replacement->shape),
                       BP__SHAPE_STR(b, captured->rank, captured->shape));
    bp_tensor *old = NULL;
    if (st == BP_OK && exe->caps[c] != replacement) {
        old = exe->caps[c];
        bp_tensor_retain(replacement);
        exe->caps[c] = replacement;
    }
    pthread_mutex_unlock(&exe->caps_lock);
    bp_tensor_release(old); /* a run still reading it holds its own reference */
    return st;
}

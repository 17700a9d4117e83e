/* A plan as text (bp_graph_exec_format): what it runs, in order, and where
 * each value lives. Values are v<slot>, captured tensors c<k>. */
#include <stdarg.h>
#include <stdio.h>

#include "graph_internal.h"

typedef struct text {
    char *buf;
    size_t size, len; /* len counts what did not fit too */
    const bp__gprofile *prof; /* the plan's times, if it has any */
    double total;             /* their per-run means' sum, ms */
} text;

BP__PRINTF(2, 3) static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->len < t->size ? t->buf + t->len : NULL,
                      t->len < t->size ? t->size - t->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n;
}

static void operand(text *t, int32_t ref)
{
    if (ref == BP__GREF_NONE)
        put(t, "-");
    else if (BP__GREF_IS_CAP(ref))
        put(t, "c%d", (int)BP__GREF_CAP_INDEX(ref));
    else
        put(t, "v%d", (int)ref);
}

/* Where the value of slot s lives during a run. */
static void home(text *t, const bp_graph_exec *e, int32_t s)
{
    if (e->slot_output[s] >= 0)
        put(t, "  [output %d]", (int)e->slot_output[s]);
    else if (e->slot_buffer[s] >= 0)
        put(t, "  [buffer %d]", (int)e->slot_buffer[s]);
    else if (e->slot_buffer[s] == BP__SLOT_CHAINED)
        put(t, "  [no buffer: a bind that has the chain run node by node gives it one]");
    else
        put(t, "  [kept in the group]");
}

/* Output ref of node i written in parts (concat's: one node per part): its
 * part's number among the writers (1-based) and their count, in *part and
 * *parts; *parts is 1 for a value written once. */
static void part_of(const bp_graph_exec *e, int32_t i, int32_t ref, int32_t *part, int32_t *parts)
{
    *part = *parts = 1;
    if (ref < 0)
        return;
    *parts = 0;
    for (int32_t j = 0; j < e->n_nodes; j++) {
        const bp__gnode *m = &e->nodes[j];
        for (int32_t k = m->n_in; k < m->n_in + m->n_out; k++)
            if (m->ref[k] == ref) {
                ++*parts;
                *part += j < i;
            }
    }
}

/* The profile's times, when it has any: the per-run mean of each step,
 * and their sum (the run's time in its steps), in *total. */
static const bp__gprofile *timed(const bp_graph_exec *e, double *total)
{
    const bp__gprofile *p = atomic_load(&e->profile);
    *total = 0;
    for (int32_t i = 0; p && i < e->n_nodes; i++) {
        int64_t runs = atomic_load(&p->runs[i]);
        if (runs > 0)
            *total += (double)atomic_load(&p->ns[i]) * 1e-6 / (double)runs;
    }
    return *total > 0 ? p : NULL;
}

/* The time of the step that begins at node i, if the profile has one. */
static void step_time(text *t, int32_t i)
{
    int64_t runs = t->prof ? atomic_load(&t->prof->runs[i]) : 0;
    if (runs == 0)
        return;
    double ms = (double)atomic_load(&t->prof->ns[i]) * 1e-6 / (double)runs;
    if (ms >= 1)
        put(t, "  [%.3f ms, %.1f%%]", ms, 100 * ms / t->total);
    else
        put(t, "  [%.1f us, %.1f%%]", ms * 1e3, 100 * ms / t->total);
}

static void node_line(text *t, const bp_graph_exec *e, int32_t i, const char *indent)
{
    const bp__gnode *n = &e->nodes[i];
    char shape[BP__SHAPE_STR_CAP];
    put(t, "%s", indent);
    for (int32_t k = n->n_in; k < n->n_in + n->n_out; k++) {
        put(t, k > n->n_in ? ", " : "");
        operand(t, n->ref[k]);
        int32_t part, parts;
        part_of(e, i, n->ref[k], &part, &parts);
        if (parts > 1)
            put(t, " (part %d of %d)", (int)part, (int)parts);
    }
    put(t, " = %s(", bp_op_name(n->op));
    for (int32_t k = 0; k < n->n_in; k++) {
        put(t, k ? ", " : "");
        operand(t, n->ref[k]);
    }
    const bp_view *o = &n->view[n->n_in];
    put(t, ") : %s %s", bp_dtype_name(o->dtype), BP__SHAPE_STR(shape, o->rank, o->shape));
    if (n->ref[n->n_in] >= 0)
        home(t, e, n->ref[n->n_in]);
    if (e->draw_stride && e->draw_stride[i])
        put(t, "  [seed %llu, offset %llu + %llu per run]", (unsigned long long)n->params->i[0],
            (unsigned long long)n->params->i[1], (unsigned long long)e->draw_stride[i]);
    if (e->prepared && e->prepared[i]) {
        const int32_t steps = e->epilogue && e->epilogue[i] > 0 ? e->epilogue[i] : 0;
        put(t, "  [prepared%s", steps ? ", with the " : "");
        for (int32_t q = 1; q <= steps; q++)
            put(t, "%s%s", q == 1 ? "" : q == steps ? " and " : ", ",
                bp_op_name(e->nodes[i + q].op));
        put(t, "%s]", steps ? " after it" : "");
    }
    if (e->epilogue && e->epilogue[i] < 0)
        put(t, "  [in the prepared node before]");
    if (!e->group_of_node || e->group_of_node[i] < 0)
        step_time(t, i);
    put(t, "\n");
}

bp_status bp_graph_exec_format(const bp_graph_exec *exe, char *buf, size_t size, size_t *needed)
{
    static const char fn[] = "bp_graph_exec_format";
    if (!exe || (!buf && size > 0))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, exe ? "buf" : "exe");
    text t = {.buf = buf, .size = size};
    const bp_graph_stats *s = &exe->stats;
    char shape[BP__SHAPE_STR_CAP];
    put(&t, "plan on %s: %lld nodes, %lld of them in %lld fused group(s); %lld buffer(s), peak %lld "
        "of %lld bytes\n",
        exe->real->name, (long long)s->nodes_planned, (long long)s->nodes_fused,
        (long long)s->fused_groups, (long long)s->buffers, (long long)s->peak_bytes,
        (long long)s->sum_bytes);
    t.prof = timed(exe, &t.total);
    int64_t runs = 0;
    for (int32_t i = 0; t.prof && i < exe->n_nodes; i++)
        runs = atomic_load(&t.prof->runs[i]) > runs ? atomic_load(&t.prof->runs[i]) : runs;
    if (t.prof)
        put(&t, "  profile: %lld run(s), %.3f %s per run in its steps (each step's mean and "
            "share after it)\n", (long long)runs, t.total >= 1 ? t.total : t.total * 1e3,
            t.total >= 1 ? "ms" : "us");
    for (int32_t k = 0; k < exe->n_inputs; k++)
        put(&t, "  input %d: v%d : %s %s\n", (int)k, (int)exe->inputs[k].slot,
            bp_dtype_name(exe->inputs[k].dtype),
            BP__SHAPE_STR(shape, exe->inputs[k].rank, exe->inputs[k].shape));
    for (int32_t i = 0; i < exe->n_nodes; i++) {
        int32_t grp = exe->group_of_node ? exe->group_of_node[i] : -1;
        if (grp < 0) {
            node_line(&t, exe, i, "  ");
            continue;
        }
        const bp__ggroup *g = &exe->groups[grp];
        put(&t, "  fused group %d: %d nodes, one call", (int)grp, (int)g->n_steps);
        step_time(&t, g->first);
        put(&t, "\n");
        for (int32_t j = g->first; j <= g->last; j++)
            node_line(&t, exe, j, "    ");
        i = g->last;
    }
    for (int32_t k = 0; k < exe->n_outputs; k++)
        put(&t, "  output %d: v%d\n", (int)k, (int)exe->outputs[k].slot);
    if (needed)
        *needed = t.len + 1;
    if (t.len >= size)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: the text needs %zu bytes, buf holds %zu: call again with a larger "
                         "buf (needed says how large)",
                         fn, t.len + 1, size);
    return BP_OK;
}

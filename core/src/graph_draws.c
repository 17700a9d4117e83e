/* Random draws in a compiled plan (graph.h: bp_graph_options.fresh_draws).
 *
 * A random node reads its seed and offset from its parameters (i0, i1:
 * opcodes.h's RANDOM kind), so a plan replays them run after run. With
 * fresh_draws each run takes a number r (one atomic counter per plan) and
 * a random node draws at offset + r * S, where S is the span of the stream
 * positions the plan's draws of that seed cover: from the lowest offset to
 * the end of the highest (offset + element count). Run r then reads
 * positions no other run reads, whatever offsets the recording chose for
 * its draws of one seed, and run 0 is exactly the eager call. Each draw's
 * values are still a pure function of (seed, position): the same on every
 * backend, as philox.h promises. */
#include <stdlib.h>

#include "graph_internal.h"

static bool is_draw(const bp__gnode *n)
{
    return bp_op_kind_of(n->op) == BP_KIND_RANDOM;
}

static uint64_t draw_start(const bp__gnode *n)
{
    return (uint64_t)n->params->i[1];
}

static uint64_t draw_count(const bp__gnode *n)
{
    return (uint64_t)bp__view_numel(&n->view[n->n_in]);
}

bool bp__graph_draw_strides(bp_graph_exec *e)
{
    int32_t n_draws = 0;
    for (int32_t i = 0; i < e->n_nodes; i++)
        n_draws += is_draw(&e->nodes[i]);
    if (n_draws == 0)
        return true;
    e->draw_stride = calloc((size_t)e->n_nodes, sizeof *e->draw_stride);
    int32_t *at = malloc((size_t)n_draws * sizeof *at); /* the draws' node indices */
    if (!e->draw_stride || !at) {
        free(at);
        return false;
    }
    for (int32_t i = 0, k = 0; i < e->n_nodes; i++)
        if (is_draw(&e->nodes[i]))
            at[k++] = i;
    for (int32_t a = 0; a < n_draws; a++) {
        const int64_t seed = e->nodes[at[a]].params->i[0];
        uint64_t lo = draw_start(&e->nodes[at[a]]), span = 0;
        for (int32_t b = 0; b < n_draws; b++)
            if (e->nodes[at[b]].params->i[0] == seed && draw_start(&e->nodes[at[b]]) < lo)
                lo = draw_start(&e->nodes[at[b]]);
        for (int32_t b = 0; b < n_draws; b++) {
            const bp__gnode *m = &e->nodes[at[b]];
            if (m->params->i[0] == seed && draw_start(m) - lo + draw_count(m) > span)
                span = draw_start(m) - lo + draw_count(m);
        }
        e->draw_stride[at[a]] = span;
    }
    free(at);
    return true;
}

const bp_op_params *bp__graph_draw_params(const bp_graph_exec *e, int32_t i, uint64_t run,
                                          bp_op_params *scratch)
{
    const bp__gnode *n = &e->nodes[i];
    if (!e->draw_stride || e->draw_stride[i] == 0 || run == 0)
        return n->params;
    *scratch = *n->params;
    scratch->i[1] = (int64_t)(draw_start(n) + run * e->draw_stride[i]);
    return scratch;
}

bp_status bp_graph_exec_seek_draws(bp_graph_exec *exe, uint64_t run)
{
    static const char fn[] = "bp_graph_exec_seek_draws";
    if (!exe)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: exe is NULL", fn);
    if (!exe->fresh_draws)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: the plan was compiled without fresh_draws, so every run draws "
                         "the recorded values; compile with bp_graph_options.fresh_draws = 1",
                         fn);
    atomic_store(&exe->draw_run, run);
    return BP_OK;
}

/* A plan's per-step times (bp_graph_exec_profile): where a run's time goes,
 * step by step, measured in the run itself rather than by timing each op
 * alone (an op alone may find its input in the cache, or not, differently
 * from the plan). A step is what a run hands the backend as one call: a
 * node, a prepared node with its epilogue, a fused group. The times are
 * kept per node (the step's first) in atomics, so that runs from several
 * threads add to them without a lock; the arrays are made when a profile
 * first starts and live as long as the plan. */
#include <stdlib.h>
#include <time.h>

#include "graph_internal.h"

int64_t bp__graph_profile_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bp__gprofile *bp__graph_profile_of(const bp_graph_exec *e)
{
    bp__gprofile *p = atomic_load(&e->profile);
    return p && atomic_load(&p->on) ? p : NULL;
}

bp_status bp__graph_profile_step(const bp_graph_exec *e, bp__gprofile *p, int32_t i,
                                 int32_t nodes, int64_t t0)
{
    BP__TRY(bp_synchronize(e->real));
    atomic_fetch_add(&p->ns[i], bp__graph_profile_now() - t0);
    atomic_fetch_add(&p->runs[i], 1);
    atomic_store(&p->nodes[i], nodes);
    return BP_OK;
}

static void profile_free(bp__gprofile *p)
{
    if (!p)
        return;
    free((void *)p->ns), free((void *)p->runs), free((void *)p->nodes);
    free(p);
}

void bp__graph_profile_release(bp_graph_exec *e) { profile_free(atomic_load(&e->profile)); }

bp_status bp_graph_exec_profile(bp_graph_exec *exe, int32_t on)
{
    static const char fn[] = "bp_graph_exec_profile";
    if (!exe)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: exe is NULL", fn);
    bp__gprofile *p = atomic_load(&exe->profile);
    if (!on) {
        if (p)
            atomic_store(&p->on, false);
        return BP_OK;
    }
    pthread_mutex_lock(&exe->caps_lock); /* two first starts make one profile */
    p = atomic_load(&exe->profile);
    if (!p) {
        size_t n = (size_t)exe->n_nodes + 1;
        p = calloc(1, sizeof *p);
        if (p) {
            p->ns = calloc(n, sizeof *p->ns);
            p->runs = calloc(n, sizeof *p->runs);
            p->nodes = calloc(n, sizeof *p->nodes);
        }
        if (!p || !p->ns || !p->runs || !p->nodes) {
            pthread_mutex_unlock(&exe->caps_lock);
            profile_free(p);
            return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
        }
        atomic_store(&exe->profile, p);
    }
    pthread_mutex_unlock(&exe->caps_lock);
    atomic_store(&p->on, false); /* runs starting meanwhile time nothing */
    for (int32_t i = 0; i < exe->n_nodes; i++) {
        atomic_store(&p->ns[i], 0);
        atomic_store(&p->runs[i], 0);
        atomic_store(&p->nodes[i], 0);
    }
    atomic_store(&p->on, true);
    return BP_OK;
}

int32_t bp_graph_exec_profile_count(const bp_graph_exec *exe)
{
    const bp__gprofile *p = exe ? atomic_load(&exe->profile) : NULL;
    int32_t count = 0;
    for (int32_t i = 0; p && i < exe->n_nodes; i++)
        count += atomic_load(&p->runs[i]) > 0;
    return count;
}

bp_status bp_graph_exec_profile_step(const bp_graph_exec *exe, int32_t i,
                                     bp_graph_step_time *out)
{
    static const char fn[] = "bp_graph_exec_profile_step";
    if (!exe || !out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, exe ? "out" : "exe");
    const bp__gprofile *p = atomic_load(&exe->profile);
    int32_t seen = 0;
    for (int32_t j = 0; p && j < exe->n_nodes; j++) {
        int64_t runs = atomic_load(&p->runs[j]);
        if (runs == 0 || seen++ != i)
            continue;
        const bp__gnode *n = &exe->nodes[j];
        bp_graph_step_time s = {
            .struct_size = sizeof s,
            .node = j,
            .nodes = atomic_load(&p->nodes[j]),
            .op = n->op,
            .value = n->n_out > 0 && n->ref[n->n_in] >= 0 ? n->ref[n->n_in] : -1,
            .fused_group = exe->group_of_node ? exe->group_of_node[j] : -1,
            .runs = runs,
            .seconds = (double)atomic_load(&p->ns[j]) * 1e-9,
        };
        return bp__struct_out(fn, "bp_graph_step_time", out, sizeof(bp_graph_step_time), &s,
                              sizeof s);
    }
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "%s: step %d asked for, the profile has timed %d (%s)", fn, (int)i,
                     (int)bp_graph_exec_profile_count(exe),
                     p ? "bp_graph_exec_profile_count says how many"
                       : "start one with bp_graph_exec_profile(exe, 1) and run the plan");
}

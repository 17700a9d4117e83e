/* Per-step times (graph.h's bp_graph_exec_profile): a profiled plan times
 * each step its runs take (a node, a prepared node with its epilogue, a
 * fused group), in run order, adding runs from every thread; stopping keeps
 * the times, starting again clears them; a plan never profiled reports no
 * step; bad arguments are refused with messages that name the fix. */
#include <pthread.h>
#include <string.h>

#include "bpt.h"
#include "expect_nn.h"

#define WIN(...) ((bp_window){.struct_size = sizeof(bp_window), __VA_ARGS__})

static const int64_t xs[4] = {1, 8, 9, 9}, ws[4] = {16, 8, 3, 3};

/* y = neg(exp(sum(relu(conv(x, w))))): on blas_cpu the convolution is
 * prepared with its Relu (one step of two nodes), the sum runs alone and
 * exp, neg make a fused group (one step of two nodes). */
static bp_graph_exec *compile(bp_backend *be, bp_tensor *w, bp_graph_stats *st)
{
    bp_graph *g = NULL;
    bp_tensor *t[6] = {NULL};
    bp_window win = WIN(.pads = {1, 1, 1, 1});
    BPT_OK(bp_graph_create(be, &g));
    BPT_OK(bp_graph_input(g, BP_F32, 4, xs, &t[0]));
    BPT_OK(bp_conv(t[0], w, NULL, &win, &t[1]));
    BPT_OK(bp_relu(t[1], &t[2]));
    BPT_OK(bp_sum(t[2], 1, (const int32_t[]){1}, false, &t[3]));
    BPT_OK(bp_exp(t[3], &t[4]));
    BPT_OK(bp_neg(t[4], &t[5]));
    BPT_OK(bp_graph_output(g, t[5]));
    bp_graph_exec *exe = bpt_graph_compile(g, true, st);
    for (int k = 0; k < 6; k++)
        bp_tensor_release(t[k]);
    bp_graph_release(g);
    return exe;
}

typedef struct fixture {
    bp_context *ctx;
    bp_backend *be;
    cf_array wa;
    bp_tensor *w, *x;
    bp_graph_exec *exe;
    bp_graph_stats st;
} fixture;

static void setup(fixture *f)
{
    f->ctx = bpt_context_ini("[backend.blas_cpu]\n", "blas_cpu", &f->be);
    f->wa = bpt_random_array(BP_F32, 4, ws, 3, -1, 1);
    cf_array xa = bpt_random_array(BP_F32, 4, xs, 4, -1, 1);
    f->w = bpt_tensor_of(f->be, &f->wa);
    f->x = bpt_tensor_of(f->be, &xa);
    cf_array_free(&xa);
    f->exe = compile(f->be, f->w, &f->st);
    cr_assert_eq(f->st.epilogues_fused, 1, "the Relu in the prepared convolution");
    cr_assert_eq(f->st.fused_groups, 1, "exp and neg in one group");
}

static void teardown(fixture *f)
{
    bp_graph_exec_release(f->exe);
    bp_tensor_release(f->w);
    bp_tensor_release(f->x);
    cf_array_free(&f->wa);
    bp_context_destroy(f->ctx);
}

static void run_n(bp_graph_exec *exe, bp_tensor *x, int n)
{
    for (int r = 0; r < n; r++) {
        bp_tensor *y = NULL;
        BPT_OK(bp_graph_run(exe, 1, &x, 1, &y));
        bp_tensor_release(y);
    }
}

static bp_graph_step_time step(const bp_graph_exec *exe, int32_t i)
{
    bp_graph_step_time s = {.struct_size = sizeof s};
    BPT_OK(bp_graph_exec_profile_step(exe, i, &s));
    return s;
}

static char *listing(const bp_graph_exec *exe)
{
    size_t need = 0;
    bp_graph_exec_format(exe, NULL, 0, &need);
    char *buf = malloc(need);
    cr_assert(buf);
    BPT_OK(bp_graph_exec_format(exe, buf, need, NULL));
    return buf;
}

Test(graph_profile, profile_times_each_step_of_the_plan_in_run_order)
{
    fixture f;
    setup(&f);
    BPT_OK(bp_graph_exec_profile(f.exe, 1));
    run_n(f.exe, f.x, 3);
    cr_assert_eq(bp_graph_exec_profile_count(f.exe), 3, "conv+relu, sum, the group: %d",
                 (int)bp_graph_exec_profile_count(f.exe));
    const struct {
        bp_op op;
        int32_t node, nodes;
        bool group;
    } want[3] = {{BP_OP_CONV, 0, 2, false}, {BP_OP_SUM, 2, 1, false}, {BP_OP_EXP, 3, 2, true}};
    for (int32_t i = 0; i < 3; i++) {
        bp_graph_step_time s = step(f.exe, i);
        cr_expect_eq(s.op, want[i].op, "step %d: %s", (int)i, bp_op_name(s.op));
        cr_expect_eq(s.node, want[i].node, "step %d: node %d", (int)i, (int)s.node);
        cr_expect_eq(s.nodes, want[i].nodes, "step %d: %d nodes", (int)i, (int)s.nodes);
        cr_expect_eq(s.fused_group >= 0, want[i].group, "step %d: group %d", (int)i,
                     (int)s.fused_group);
        cr_expect_eq(s.runs, 3, "step %d: %lld runs", (int)i, (long long)s.runs);
        cr_expect(s.seconds > 0 && s.seconds < 60, "step %d: %g s", (int)i, s.seconds);
        cr_expect_geq(s.value, 0, "step %d: its output's value", (int)i);
    }
    char *text = listing(f.exe);
    cr_expect(strstr(text, "profile: 3 run(s)"), "%s", text);
    cr_expect(strstr(text, "[prepared, with the relu after it]  ["), "conv's time: %s", text);
    cr_expect(strstr(text, "fused group 0: 2 nodes, one call  ["), "group's time: %s", text);
    free(text);
    teardown(&f);
}

Test(graph_profile, profile_stopped_keeps_its_times_and_a_restart_clears_them)
{
    fixture f;
    setup(&f);
    cr_expect_eq(bp_graph_exec_profile_count(f.exe), 0, "never profiled: no step");
    BPT_OK(bp_graph_exec_profile(f.exe, 0)); /* stopping none: nothing to do */
    BPT_OK(bp_graph_exec_profile(f.exe, 1));
    run_n(f.exe, f.x, 2);
    BPT_OK(bp_graph_exec_profile(f.exe, 0));
    run_n(f.exe, f.x, 2);
    cr_expect_eq(step(f.exe, 0).runs, 2, "runs after the stop are not timed");
    BPT_OK(bp_graph_exec_profile(f.exe, 1));
    cr_expect_eq(bp_graph_exec_profile_count(f.exe), 0, "a restart clears the times");
    char *text = listing(f.exe);
    cr_expect(!strstr(text, "profile:"), "no times to list: %s", text);
    free(text);
    run_n(f.exe, f.x, 1);
    cr_expect_eq(step(f.exe, 1).runs, 1);
    teardown(&f);
}

/* A bind sends the convolution through the op entry: the Relu runs as a
 * node, so it is a step of its own and the convolution's step one node. */
Test(graph_profile, profile_times_a_rebound_convolution_and_its_relu_apart)
{
    fixture f;
    setup(&f);
    cf_array w2a = bpt_random_array(BP_F32, 4, ws, 5, -1, 1);
    bp_tensor *w2 = bpt_tensor_of(f.be, &w2a);
    BPT_OK(bp_graph_exec_bind(f.exe, f.w, w2));
    BPT_OK(bp_graph_exec_profile(f.exe, 1));
    run_n(f.exe, f.x, 1);
    cr_expect_eq(bp_graph_exec_profile_count(f.exe), 4, "conv, relu, sum, the group");
    cr_expect_eq(step(f.exe, 0).nodes, 1);
    cr_expect_eq(step(f.exe, 1).op, BP_OP_RELU);
    bp_tensor_release(w2);
    cf_array_free(&w2a);
    teardown(&f);
}

typedef struct runner {
    bp_graph_exec *exe;
    bp_tensor *x;
    int failures;
} runner;

static void *run_five(void *arg)
{
    runner *r = arg;
    for (int k = 0; k < 5; k++) {
        bp_tensor *y = NULL;
        r->failures += bp_graph_run(r->exe, 1, &r->x, 1, &y) != BP_OK;
        bp_tensor_release(y);
    }
    return NULL;
}

Test(graph_profile, profile_adds_the_runs_of_every_thread)
{
    fixture f;
    setup(&f);
    BPT_OK(bp_graph_exec_profile(f.exe, 1));
    pthread_t th[4];
    runner r[4];
    for (int k = 0; k < 4; k++) {
        r[k] = (runner){.exe = f.exe, .x = f.x};
        cr_assert_eq(pthread_create(&th[k], NULL, run_five, &r[k]), 0);
    }
    for (int k = 0; k < 4; k++) {
        pthread_join(th[k], NULL);
        cr_expect_eq(r[k].failures, 0, "thread %d", k);
    }
    for (int32_t i = 0; i < bp_graph_exec_profile_count(f.exe); i++)
        cr_expect_eq(step(f.exe, i).runs, 20, "step %d: %lld runs of 20", (int)i,
                     (long long)step(f.exe, i).runs);
    teardown(&f);
}

Test(graph_profile, profile_refuses_bad_arguments_naming_the_fix)
{
    fixture f;
    setup(&f);
    bp_graph_step_time s = {.struct_size = sizeof s};
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_graph_exec_profile(NULL, 1));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_graph_exec_profile_step(NULL, 0, &s));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_graph_exec_profile_step(f.exe, 0, NULL));
    cr_expect_eq(bp_graph_exec_profile_count(NULL), 0);
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_graph_exec_profile_step(f.exe, 0, &s));
    cr_expect(strstr(bp_last_error(), "bp_graph_exec_profile(exe, 1)"), "%s", bp_last_error());
    BPT_OK(bp_graph_exec_profile(f.exe, 1));
    run_n(f.exe, f.x, 1);
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_graph_exec_profile_step(f.exe, 3, &s));
    cr_expect(strstr(bp_last_error(), "has timed 3"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_graph_exec_profile_step(f.exe, -1, &s));
    s.struct_size = 0;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_graph_exec_profile_step(f.exe, 0, &s));
    cr_expect(strstr(bp_last_error(), "sizeof(bp_graph_step_time)"), "%s", bp_last_error());
    teardown(&f);
}

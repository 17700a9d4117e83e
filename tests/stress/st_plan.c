/* The stress test's plan phase (st_plan.h). */
#include "st_plan.h"

#include <stdlib.h>
#include <string.h>

#include "st_check.h"

struct st_plan {
    bp_graph_exec *exe;
    bp_tensor *x, *w, *want;
};

static bp_tensor *st_filled(bp_backend *be, int32_t rank, const int64_t *shape, float scale)
{
    int64_t n = 1;
    for (int32_t k = 0; k < rank; k++)
        n *= shape[k];
    float *v = malloc((size_t)n * sizeof *v);
    bp_tensor *t = NULL;
    if (!v)
        return NULL;
    for (int64_t i = 0; i < n; i++)
        v[i] = scale * (float)((i * 7919) % 23 - 11);
    ST_OK(bp_tensor_from_host(be, BP_F32, rank, shape, v, &t));
    free(v);
    return t;
}

st_plan *st_plan_make(bp_context *ctx)
{
    static const int64_t xs[4] = {1, 8, 12, 12}, ws[4] = {16, 8, 3, 3};
    bp_backend *be = NULL;
    ST_OK(bp_backend_get(ctx, "blas_cpu", &be));
    st_plan *p = calloc(1, sizeof *p);
    if (!be || !p) {
        free(p);
        return NULL;
    }
    p->x = st_filled(be, 4, xs, 0.1f);
    p->w = st_filled(be, 4, ws, 0.01f);
    bp_graph *g = NULL;
    bp_tensor *t[6] = {NULL};
    bp_window win = {.struct_size = sizeof win, .pads = {1, 1, 1, 1}};
    ST_OK(bp_graph_create(be, &g));
    if (g && p->x && p->w) {
        ST_OK(bp_graph_input(g, BP_F32, 4, xs, &t[0]));
        ST_OK(bp_conv(t[0], p->w, NULL, &win, &t[1]));
        ST_OK(bp_relu(t[1], &t[2]));
        ST_OK(bp_sum(t[2], 1, (const int32_t[]){1}, false, &t[3]));
        ST_OK(bp_exp(t[3], &t[4]));
        ST_OK(bp_neg(t[4], &t[5]));
        ST_OK(bp_graph_output(g, t[5]));
        ST_OK(bp_graph_compile(g, NULL, &p->exe));
    }
    for (int k = 0; k < 6; k++)
        bp_tensor_release(t[k]);
    bp_graph_release(g);
    if (p->exe)
        ST_OK(bp_graph_run(p->exe, 1, &p->x, 1, &p->want));
    if (!p->want) {
        st_plan_free(p);
        return NULL;
    }
    return p;
}

static void st_read_profile(const bp_graph_exec *exe, int id)
{
    int32_t n = bp_graph_exec_profile_count(exe);
    for (int32_t i = 0; i < n; i++) {
        bp_graph_step_time s = {.struct_size = sizeof s};
        ST_OK(bp_graph_exec_profile_step(exe, i, &s));
        if (s.runs < 0 || s.seconds < 0 || s.nodes < 1)
            st_report("thread %d: profile step %d: %lld runs, %g s, %d nodes", id, (int)i,
                      (long long)s.runs, s.seconds, (int)s.nodes);
    }
    size_t need = 0;
    (void)bp_graph_exec_format(exe, NULL, 0, &need);
    char *text = need ? malloc(need + 256) : NULL; /* room for times added meanwhile */
    if (text && bp_graph_exec_format(exe, text, need + 256, NULL) != BP_OK)
        st_report("thread %d: bp_graph_exec_format: %s", id, bp_last_error());
    free(text);
}

void st_plan_work(st_plan *p, int id, int runs)
{
    for (int r = 0; r < runs; r++) {
        if (id == 0) {
            ST_OK(bp_graph_exec_profile(p->exe, r % 4 != 3));
            st_read_profile(p->exe, id);
        }
        bp_tensor *y = NULL;
        ST_OK(bp_graph_run(p->exe, 1, &p->x, 1, &y));
        if (!y)
            continue;
        float got[144], want[144]; /* (1, 12, 12) */
        ST_OK(bp_tensor_to_host(y, got, sizeof got));
        ST_OK(bp_tensor_to_host(p->want, want, sizeof want));
        if (memcmp(got, want, sizeof got) != 0)
            st_report("thread %d, run %d: not the first run's bits", id, r);
        bp_tensor_release(y);
    }
}

void st_plan_free(st_plan *p)
{
    if (!p)
        return;
    bp_graph_exec_release(p->exe);
    bp_tensor_release(p->x);
    bp_tensor_release(p->w);
    bp_tensor_release(p->want);
    free(p);
}

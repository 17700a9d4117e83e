/* Patterns a compiled plan rewrites into one op (core/src/graph_rewrite.c):
 * softmax and log_softmax written with primitives run as the backend's
 * softmax/log_softmax node, on every backend, with the op's own bits and
 * within the op's tolerance of the primitives; what does not match exactly
 * (an intermediate read elsewhere or returned, the form without the
 * maximum, two different axes) runs as recorded. */
#include <math.h>
#include <stdlib.h>

#include "bpt.h"
#include "expect.h"
#include "models.h"

typedef struct parts {
    bp_tensor *m, *d, *e, *s, *l, *y;
} parts;

/* softmax (log_softmax when log) of x along axis, written with primitives;
 * max_axis and sum_axis are the reductions' axes (equal in softmax);
 * keepdims false: the reductions drop the axis and the result is put back
 * with bp_unsqueeze, as one writes it without keepdims. */
static void primitives(bp_tensor *x, int32_t max_axis, int32_t sum_axis, bool keepdims,
                       bool log, bool centered, parts *p)
{
    bp_tensor *t = NULL;
    if (centered) {
        if (keepdims) {
            BPT_OK(bp_max(x, 1, &max_axis, true, &p->m));
        } else {
            BPT_OK(bp_max(x, 1, &max_axis, false, &t));
            BPT_OK(bp_unsqueeze(t, max_axis, &p->m));
            bp_tensor_release(t);
        }
        BPT_OK(bp_sub(x, p->m, &p->d));
    } else {
        bp_tensor_retain(x);
        p->d = x;
    }
    BPT_OK(bp_exp(p->d, &p->e));
    if (keepdims) {
        BPT_OK(bp_sum(p->e, 1, &sum_axis, true, &p->s));
    } else {
        BPT_OK(bp_sum(p->e, 1, &sum_axis, false, &t));
        BPT_OK(bp_unsqueeze(t, sum_axis, &p->s));
        bp_tensor_release(t);
    }
    if (log) {
        BPT_OK(bp_log(p->s, &p->l));
        BPT_OK(bp_sub(p->d, p->l, &p->y));
    } else {
        BPT_OK(bp_div(p->e, p->s, &p->y));
    }
}

static void parts_release(parts *p)
{
    bp_tensor *all[] = {p->m, p->d, p->e, p->s, p->l, p->y};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        bp_tensor_release(all[k]);
}

/* |got - want| <= 2e-6 |want| + 1e-7 everywhere: the op tests' f32
 * softmax tolerance (the row's sum taken in another order), with an
 * absolute floor for the values near 0 that log_softmax can give. */
static void expect_close(const char *what, const bp_tensor *got, const bp_tensor *want)
{
    int64_t n = bp_tensor_numel(want);
    double *a = bpt_read(got), *b = bpt_read(want);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(a[i] - b[i]) <= 2e-6 * fabs(b[i]) + 1e-7) && bad++ == 0)
            first = i;
    cr_expect_eq(bad, 0, "%s: %lld of %lld elements differ, first at %lld: %.9g against %.9g",
                 what, (long long)bad, (long long)n, (long long)first,
                 first >= 0 ? a[first] : 0.0, first >= 0 ? b[first] : 0.0);
    free(a), free(b);
}

Test(graph_rewrite, softmax_and_log_softmax_written_with_primitives_run_as_one_node_of_the_op)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    /* a row of one element, and an axis of extent 1 before the rows */
    const int64_t shapes[][3] = {{6, 33, 17}, {1, 40, 1}};
    BPT_FOR_EACH_BACKEND(ctx, be)
    for (int sh = 0; sh < 2; sh++) {
        const int64_t *shape = shapes[sh];
        for (int log = 0; log <= 1; log++)
            for (int32_t axis = -1; axis < 3; axis++)
                for (int keep = 0; keep <= 1; keep++) {
                    char what[160];
                    snprintf(what, sizeof what,
                             "%s of (%lld, %lld, %lld) on %s along axis %d, keepdims %d",
                             log ? "log_softmax" : "softmax", (long long)shape[0],
                             (long long)shape[1], (long long)shape[2], bp_backend_name(be),
                             (int)axis, keep);
                    bp_graph *g = NULL;
                    bp_tensor *sx = NULL;
                    BPT_OK(bp_graph_create(be, &g));
                    BPT_OK(bp_graph_input(g, BP_F32, 3, shape, &sx));
                    parts sp = {0};
                    primitives(sx, axis, axis, keep, log, true, &sp);
                    BPT_OK(bp_graph_output(g, sp.y));
                    bp_graph_stats st, st_alone;
                    bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
                    bp_graph_exec *alone = bpt_graph_compile(g, false, &st_alone);
                    cr_expect_eq(st.nodes_planned, 1, "%s: %lld nodes planned", what,
                                 (long long)st.nodes_planned);
                    cr_expect_eq(st.buffers, 0, "%s", what);
                    cr_expect_eq(st_alone.nodes_planned, log ? 6 : 5, "%s, no_fuse", what);

                    bp_tensor *x = bpt_random_f32(be, 3, shape, 70 + (uint64_t)axis);
                    bp_tensor *got = NULL, *as_recorded = NULL, *op = NULL;
                    BPT_OK(bp_graph_run(exe, 1, &x, 1, &got));
                    BPT_OK(bp_graph_run(alone, 1, &x, 1, &as_recorded));
                    BPT_OK((log ? bp_log_softmax : bp_softmax)(x, axis, &op));
                    parts eager = {0};
                    primitives(x, axis, axis, keep, log, true, &eager);
                    cr_expect(bpt_same_bytes(got, op), "%s: the op's own bits", what);
                    cr_expect(bpt_same_bytes(as_recorded, eager.y),
                              "%s, no_fuse: the primitives' bits", what);
                    expect_close(what, got, eager.y);

                    parts_release(&sp), parts_release(&eager);
                    bp_tensor *all[] = {sx, x, got, as_recorded, op};
                    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
                        bp_tensor_release(all[k]);
                    bp_graph_exec_release(exe);
                    bp_graph_exec_release(alone);
                    bp_graph_release(g);
                }
    }
    bp_context_destroy(ctx);
}

/* Which pattern: 0 an intermediate is also an output, 1 no maximum
 * subtracted, 2 the sum over another axis than the maximum. */
static const char *const kept_apart[] = {
    "the exponentials are also an output",
    "the form without the maximum",
    "the maximum and the sum over different axes",
};

Test(graph_rewrite, a_pattern_that_does_not_match_exactly_runs_as_recorded_with_its_bits)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    const int64_t shape[] = {5, 9};
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int c = 0; c < 3; c++) {
            bp_graph *g = NULL;
            bp_tensor *sx = NULL;
            BPT_OK(bp_graph_create(be, &g));
            BPT_OK(bp_graph_input(g, BP_F32, 2, shape, &sx));
            parts sp = {0};
            primitives(sx, 1, c == 2 ? 0 : 1, true, false, c != 1, &sp);
            BPT_OK(bp_graph_output(g, sp.y));
            if (c == 0)
                BPT_OK(bp_graph_output(g, sp.e));
            bp_graph_stats st;
            bp_graph_exec *exe = bpt_graph_compile(g, true, &st);
            bp_tensor *x = bpt_random_f32(be, 2, shape, 80 + (uint64_t)c);
            bp_tensor *got[2] = {NULL, NULL};
            BPT_OK(bp_graph_run(exe, 1, &x, c == 0 ? 2 : 1, got));
            parts eager = {0};
            primitives(x, 1, c == 2 ? 0 : 1, true, false, c != 1, &eager);
            cr_expect_geq(st.nodes_planned, c == 1 ? 3 : 5, "%s on %s: %lld nodes planned",
                          kept_apart[c], bp_backend_name(be), (long long)st.nodes_planned);
            cr_expect(bpt_same_bytes(got[0], eager.y), "%s on %s: the primitives' bits",
                      kept_apart[c], bp_backend_name(be));
            if (c == 0)
                cr_expect(bpt_same_bytes(got[1], eager.e), "%s on %s", kept_apart[c],
                          bp_backend_name(be));
            parts_release(&sp), parts_release(&eager);
            bp_tensor *all[] = {sx, x, got[0], got[1]};
            for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
                bp_tensor_release(all[k]);
            bp_graph_exec_release(exe);
            bp_graph_release(g);
        }
    }
    bp_context_destroy(ctx);
}

/* Concatenation in place (core/src/graph_concat.c): a compiled plan drops a
 * concat part's copy where the node that writes the part can write it into
 * the joined value's slice, on every backend, with the bits of the plan
 * that keeps every copy (optimize off); and keeps the copy where that is
 * not safe or not worth it: a part read again later, a slice that is not
 * one contiguous run, a part that ends a chain of elementwise ops (a fused
 * group), a joined value returned by the graph. */
#include <stdlib.h>

#include "bpt.h"
#include "expect.h"
#include "models.h"

/* How a graph's concat is built: which parts a later node reads again,
 * which part is an elementwise chain's end, and along which axis. */
typedef struct shape_of_case {
    bool reuse_first;  /* the first part read again after the concat */
    bool chain_second; /* the second part is neg(exp(y)), a fused group's end */
    bool inner_axis;   /* joined along axis 1 of a (2, n) value: strided slices */
    bool joined_out;   /* the joined value itself is the graph's output */
} shape_of_case;

/* x (2, 3) and y (4, 3) (or (2, 4) along axis 1); a = exp(x), b = neg(y)
 * (or neg(exp(y))); out = 2 * concat(a, b) (+ a again, sum-reduced, when
 * the first part is reused). Returns the planned node counts of the plan
 * with and without optimization, and checks their results against each
 * other bit for bit. */
static void run_case(bp_backend *be, const shape_of_case *c, int32_t *planned_opt,
                     int32_t *planned_plain)
{
    const int64_t xs[2] = {2, 3}, ys[2] = {c->inner_axis ? 2 : 4, c->inner_axis ? 4 : 3};
    bp_graph *g = NULL;
    bp_tensor *sx = NULL, *sy = NULL, *a = NULL, *b = NULL, *t = NULL, *cat = NULL, *out = NULL;
    BPT_OK(bp_graph_create(be, &g));
    BPT_OK(bp_graph_input(g, BP_F32, 2, xs, &sx));
    BPT_OK(bp_graph_input(g, BP_F32, 2, ys, &sy));
    BPT_OK(bp_exp(sx, &a));
    if (c->chain_second) {
        BPT_OK(bp_exp(sy, &t));
        BPT_OK(bp_neg(t, &b));
    } else {
        BPT_OK(bp_neg(sy, &b));
    }
    BPT_OK(bp_concat(2, (const bp_tensor *[]){a, b}, c->inner_axis ? 1 : 0, &cat));
    bp_tensor *two = NULL, *doubled = NULL, *again = NULL;
    if (c->joined_out) {
        BPT_OK(bp_graph_output(g, cat));
    } else {
        BPT_OK(bp_full(be, BP_F32, 0, NULL, 2.0, &two));
        BPT_OK(bp_mul(cat, two, &doubled));
        if (c->reuse_first) {
            bp_tensor *sa = NULL;
            BPT_OK(bp_sum(a, 0, NULL, false, &sa));
            BPT_OK(bp_add(doubled, sa, &again));
            bp_tensor_release(sa);
            out = again;
        } else {
            out = doubled;
        }
        BPT_OK(bp_graph_output(g, out));
    }
    bp_graph_stats opt, plain;
    bp_graph_exec *e1 = bpt_graph_compile(g, true, &opt);
    bp_graph_exec *e2 = bpt_graph_compile(g, false, &plain);
    *planned_opt = (int32_t)opt.nodes_planned;
    *planned_plain = (int32_t)plain.nodes_planned;
    bp_tensor *x = bpt_random_f32(be, 2, xs, 5), *y = bpt_random_f32(be, 2, ys, 6);
    bp_tensor *r1 = NULL, *r2 = NULL;
    BPT_OK(bp_graph_run(e1, 2, (bp_tensor *[]){x, y}, 1, &r1));
    BPT_OK(bp_graph_run(e2, 2, (bp_tensor *[]){x, y}, 1, &r2));
    cr_expect(bpt_same_bytes(r1, r2), "the joined value differs with the copies dropped on %s",
              bp_backend_name(be));
    bp_tensor *all[] = {sx, sy, a, b, t, cat, two, doubled, again, x, y, r1, r2};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        bp_tensor_release(all[k]);
    bp_graph_exec_release(e1);
    bp_graph_exec_release(e2);
    bp_graph_release(g);
}

/* On every backend: how many nodes the optimized plan saves over the
 * plain one for case c, expected to be `dropped`. */
static void expect_dropped(const char *what, const shape_of_case *c, int32_t dropped)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int32_t opt = 0, plain = 0;
        run_case(be, c, &opt, &plain);
        cr_expect_eq(plain - opt, dropped, "%s on %s: %d nodes planned, %d without optimizing",
                     what, bp_backend_name(be), (int)opt, (int)plain);
    }
    bp_context_destroy(ctx);
}

Test(graph_concat, parts_written_once_and_read_only_by_the_concat_are_written_in_place)
{
    expect_dropped("two parts", &(shape_of_case){0}, 2);
}

Test(graph_concat, a_part_read_again_after_the_concat_keeps_its_copy)
{
    expect_dropped("first part reused", &(shape_of_case){.reuse_first = true}, 1);
}

Test(graph_concat, parts_joined_along_an_inner_axis_keep_their_copies)
{
    expect_dropped("strided slices", &(shape_of_case){.inner_axis = true}, 0);
}

/* exp then neg fuse into one group (where the backend fuses), worth more
 * than the copy: the group's end keeps its own value. The plain plan has
 * the same nodes less none, so only the first part's copy goes. */
Test(graph_concat, a_part_ending_a_chain_of_elementwise_ops_keeps_its_copy)
{
    expect_dropped("chained second part", &(shape_of_case){.chain_second = true}, 1);
}

Test(graph_concat, a_joined_value_the_graph_returns_keeps_its_copies)
{
    expect_dropped("joined value returned", &(shape_of_case){.joined_out = true}, 0);
}

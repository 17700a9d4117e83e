/* Random draws in a compiled plan (core/src/graph_draws.c), on every
 * backend: a plan replays its draws unless compiled with fresh_draws; with
 * it, run r draws what the eager call would at offset + r * S (S: the span
 * of the stream positions the plan's draws of that seed cover), for
 * bp_random_uniform, bp_random_normal and dropout's mask alike; seeking
 * repeats a run's values; runs from several threads each take a number of
 * their own. */
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"
#include "models.h"

#define N_DRAWS 3

/* The plan's draws: two of seed 7 (uniform, 4 values at offset 0; normal,
 * 6 values at offset 10: span 16) and one of seed 9 (uniform, 3 values at
 * offset 5: span 3). */
static const struct {
    bool normal;
    uint64_t seed, offset;
    int64_t n;
    uint64_t span;
} draws[N_DRAWS] = {
    {false, 7, 0, 4, 16},
    {true, 7, 10, 6, 16},
    {false, 9, 5, 3, 3},
};

static bp_status draw(bp_backend *be, int k, uint64_t offset, bp_tensor **out)
{
    const int64_t shape[1] = {draws[k].n};
    return draws[k].normal
               ? bp_random_normal(be, BP_F32, 1, shape, draws[k].seed, offset, 0.0, 1.0, out)
               : bp_random_uniform(be, BP_F32, 1, shape, draws[k].seed, offset, -1.0, 2.0, out);
}

/* A plan of the draws above, each added to an input of zeros (a plan
 * runs on inputs): output k is draw k. */
static bp_graph_exec *draw_plan(bp_backend *be, bool fresh, bp_tensor **zeros)
{
    bp_graph *g = NULL;
    bp_tensor *x = NULL;
    const int64_t one[1] = {1};
    BPT_OK(bp_graph_create(be, &g));
    BPT_OK(bp_graph_input(g, BP_F32, 1, one, &x));
    for (int k = 0; k < N_DRAWS; k++) {
        bp_tensor *d = NULL, *y = NULL;
        BPT_OK(draw(bp_tensor_backend(x), k, draws[k].offset, &d));
        BPT_OK(bp_add(x, d, &y));
        BPT_OK(bp_graph_output(g, y));
        bp_tensor_release(d);
        bp_tensor_release(y);
    }
    bp_graph_options opt = BP_GRAPH_OPTIONS_INIT;
    opt.fresh_draws = fresh;
    bp_graph_exec *e = NULL;
    BPT_OK(bp_graph_compile(g, &opt, &e));
    bp_tensor_release(x);
    bp_graph_release(g);
    BPT_OK(bp_zeros(be, BP_F32, 1, one, zeros));
    return e;
}

/* Whether out[k] holds, for each draw k, what the eager call gives at the
 * draw's offset advanced by `run` spans. */
static bool is_run(bp_backend *be, bp_tensor *zeros, bp_tensor *const *out, uint64_t run)
{
    bool same = true;
    for (int k = 0; k < N_DRAWS; k++) {
        bp_tensor *d = NULL, *y = NULL;
        BPT_OK(draw(be, k, draws[k].offset + run * draws[k].span, &d));
        BPT_OK(bp_add(zeros, d, &y));
        same = same && bpt_same_bytes(out[k], y);
        bp_tensor_release(d);
        bp_tensor_release(y);
    }
    return same;
}

static void run_plan(bp_graph_exec *e, bp_tensor *zeros, bp_tensor **out)
{
    BPT_OK(bp_graph_run(e, 1, &zeros, N_DRAWS, out));
}

static void release_all(bp_tensor **t, int n)
{
    for (int k = 0; k < n; k++)
        bp_tensor_release(t[k]);
}

Test(graph_draws, a_plan_replays_its_draws_by_default)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *zeros = NULL, *out[N_DRAWS];
        bp_graph_exec *e = draw_plan(be, false, &zeros);
        for (int r = 0; r < 3; r++) {
            run_plan(e, zeros, out);
            cr_expect(is_run(be, zeros, out, 0), "run %d of a replaying plan on %s", r,
                      bp_backend_name(be));
            release_all(out, N_DRAWS);
        }
        bp_tensor_release(zeros);
        bp_graph_exec_release(e);
    }
    bp_context_destroy(ctx);
}

Test(graph_draws, fresh_draws_run_r_draws_the_eager_values_r_spans_further_on)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *zeros = NULL, *out[N_DRAWS];
        bp_graph_exec *e = draw_plan(be, true, &zeros);
        for (uint64_t r = 0; r < 4; r++) {
            run_plan(e, zeros, out);
            cr_expect(is_run(be, zeros, out, r), "run %d of a fresh_draws plan on %s", (int)r,
                      bp_backend_name(be));
            if (r > 0)
                cr_expect(!is_run(be, zeros, out, 0), "run %d drew run 0's values on %s",
                          (int)r, bp_backend_name(be));
            release_all(out, N_DRAWS);
        }
        bp_tensor_release(zeros);
        bp_graph_exec_release(e);
    }
    bp_context_destroy(ctx);
}

Test(graph_draws, the_plan_listing_shows_what_each_draw_advances_per_run)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    bp_tensor *zeros = NULL;
    bp_graph_exec *e = draw_plan(be, true, &zeros);
    char text[4096];
    BPT_OK(bp_graph_exec_format(e, text, sizeof text, NULL));
    cr_expect(strstr(text, "[seed 7, offset 10 + 16 per run]"), "%s", text);
    cr_expect(strstr(text, "[seed 9, offset 5 + 3 per run]"), "%s", text);
    bp_graph_exec_release(e);
    bp_tensor_release(zeros);
    e = draw_plan(be, false, &zeros);
    BPT_OK(bp_graph_exec_format(e, text, sizeof text, NULL));
    cr_expect(!strstr(text, "per run"), "a replaying plan's listing: %s", text);
    bp_tensor_release(zeros);
    bp_graph_exec_release(e);
    bp_context_destroy(ctx);
}

Test(graph_draws, seeking_draws_repeats_a_runs_values)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *zeros = NULL, *out[N_DRAWS];
        bp_graph_exec *e = draw_plan(be, true, &zeros);
        for (int r = 0; r < 3; r++) {
            run_plan(e, zeros, out);
            release_all(out, N_DRAWS);
        }
        BPT_OK(bp_graph_exec_seek_draws(e, 1));
        run_plan(e, zeros, out);
        cr_expect(is_run(be, zeros, out, 1), "the run after seeking to 1 on %s",
                  bp_backend_name(be));
        release_all(out, N_DRAWS);
        run_plan(e, zeros, out);
        cr_expect(is_run(be, zeros, out, 2), "the run after that on %s", bp_backend_name(be));
        release_all(out, N_DRAWS);
        BPT_OK(bp_graph_exec_seek_draws(e, 1000000));
        run_plan(e, zeros, out);
        cr_expect(is_run(be, zeros, out, 1000000), "run 1000000 on %s", bp_backend_name(be));
        release_all(out, N_DRAWS);
        bp_tensor_release(zeros);
        bp_graph_exec_release(e);
    }
    bp_context_destroy(ctx);
}

Test(graph_draws, seeking_draws_on_a_replaying_plan_is_an_error_naming_the_option)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    bp_tensor *zeros = NULL;
    bp_graph_exec *e = draw_plan(be, false, &zeros);
    cr_expect_eq(bp_graph_exec_seek_draws(e, 3), BP_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(bp_last_error(), "fresh_draws"), "%s", bp_last_error());
    cr_expect_eq(bp_graph_exec_seek_draws(NULL, 3), BP_ERR_INVALID_ARGUMENT);
    bp_tensor_release(zeros);
    bp_graph_exec_release(e);
    bp_context_destroy(ctx);
}

/* Dropout in training draws its mask with bp_random_uniform at the
 * tensor's own seed and offset: in a fresh_draws plan, run r's mask is
 * eager dropout's at offset + r * (x's element count). */
Test(graph_draws, dropout_in_a_fresh_draws_plan_draws_a_new_mask_each_run)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        const int64_t shape[2] = {8, 16};
        bp_graph *g = NULL;
        bp_tensor *sx = NULL, *sy = NULL, *sm = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F32, 2, shape, &sx));
        BPT_OK(bp_dropout(sx, 0.5, true, 3, 40, &sy, &sm));
        BPT_OK(bp_graph_output(g, sy));
        BPT_OK(bp_graph_output(g, sm));
        bp_graph_options opt = BP_GRAPH_OPTIONS_INIT;
        opt.fresh_draws = 1;
        bp_graph_exec *e = NULL;
        BPT_OK(bp_graph_compile(g, &opt, &e));
        bp_tensor *x = bpt_random_f32(be, 2, shape, 11);
        bp_tensor *first_mask = NULL;
        for (uint64_t r = 0; r < 3; r++) {
            bp_tensor *out[2], *y = NULL, *m = NULL;
            BPT_OK(bp_graph_run(e, 1, &x, 2, out));
            BPT_OK(bp_dropout(x, 0.5, true, 3, 40 + r * 128, &y, &m));
            cr_expect(bpt_same_bytes(out[0], y) && bpt_same_bytes(out[1], m),
                      "run %d's dropout on %s", (int)r, bp_backend_name(be));
            if (r == 0)
                first_mask = m, m = NULL;
            else
                cr_expect(!bpt_same_bytes(out[1], first_mask), "run %d kept run 0's mask on %s",
                          (int)r, bp_backend_name(be));
            bp_tensor *all[] = {out[0], out[1], y, m};
            release_all(all, 4);
        }
        bp_tensor *all[] = {sx, sy, sm, x, first_mask};
        release_all(all, 5);
        bp_graph_exec_release(e);
        bp_graph_release(g);
    }
    bp_context_destroy(ctx);
}

#define THREADS 4
#define RUNS_EACH 6

typedef struct runner {
    bp_graph_exec *e;
    bp_tensor *zeros;
    bp_tensor *out[RUNS_EACH][N_DRAWS];
    bp_status st;
} runner;

static void *run_many(void *arg)
{
    runner *w = arg;
    for (int k = 0; k < RUNS_EACH && w->st == BP_OK; k++)
        w->st = bp_graph_run(w->e, 1, &w->zeros, N_DRAWS, w->out[k]);
    return NULL;
}

Test(graph_draws, runs_from_several_threads_each_take_a_number_of_their_own)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    bp_tensor *zeros = NULL;
    bp_graph_exec *e = draw_plan(be, true, &zeros);
    runner w[THREADS];
    pthread_t th[THREADS];
    memset(w, 0, sizeof w);
    for (int t = 0; t < THREADS; t++) {
        w[t].e = e, w[t].zeros = zeros;
        cr_assert_eq(pthread_create(&th[t], NULL, run_many, &w[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    bool seen[THREADS * RUNS_EACH] = {false};
    for (int t = 0; t < THREADS; t++) {
        BPT_OK(w[t].st);
        for (int k = 0; k < RUNS_EACH; k++) {
            int found = -1;
            for (int r = 0; r < THREADS * RUNS_EACH && found < 0; r++)
                if (is_run(be, zeros, w[t].out[k], (uint64_t)r))
                    found = r;
            cr_expect(found >= 0 && !seen[found], "thread %d's run %d drew run %d's values%s", t,
                      k, found, found >= 0 && seen[found] ? " twice" : "");
            if (found >= 0)
                seen[found] = true;
            release_all(w[t].out[k], N_DRAWS);
        }
    }
    bp_tensor_release(zeros);
    bp_graph_exec_release(e);
    bp_context_destroy(ctx);
}

/* A caller built against an older graph.h passes a shorter struct: the
 * first layout (struct_size and no_merge) and the one before fresh_draws
 * compile, and what they lack reads as 0 (the plan replays its draws);
 * shorter than the first layout is refused, naming the initialiser. */
Test(graph_draws, options_laid_out_before_fresh_draws_still_compile_and_replay)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    const int64_t one[1] = {1};
    bp_graph *g = NULL;
    bp_tensor *x = NULL, *d = NULL, *y = NULL, *zeros = NULL;
    BPT_OK(bp_graph_create(be, &g));
    BPT_OK(bp_graph_input(g, BP_F32, 1, one, &x));
    BPT_OK(draw(bp_tensor_backend(x), 0, draws[0].offset, &d));
    BPT_OK(bp_add(x, d, &y));
    BPT_OK(bp_graph_output(g, y));
    BPT_OK(bp_zeros(be, BP_F32, 1, one, &zeros));
    const uint32_t sizes[2] = {offsetof(bp_graph_options, no_fuse),
                               offsetof(bp_graph_options, fresh_draws)};
    for (int k = 0; k < 2; k++) {
        bp_graph_options opt = BP_GRAPH_OPTIONS_INIT;
        opt.struct_size = sizes[k];
        opt.fresh_draws = 1; /* past the caller's struct: never read */
        bp_graph_exec *e = NULL;
        BPT_OK(bp_graph_compile(g, &opt, &e));
        bp_tensor *out[2] = {NULL, NULL};
        for (int r = 0; r < 2; r++)
            BPT_OK(bp_graph_run(e, 1, &zeros, 1, &out[r]));
        cr_expect(bpt_same_bytes(out[0], out[1]), "struct_size %u: the runs drew apart",
                  (unsigned)sizes[k]);
        cr_expect_eq(bp_graph_exec_seek_draws(e, 0), BP_ERR_INVALID_ARGUMENT);
        release_all(out, 2);
        bp_graph_exec_release(e);
    }
    bp_graph_options small = BP_GRAPH_OPTIONS_INIT;
    small.struct_size = 4;
    bp_graph_exec *e = NULL;
    cr_expect_eq(bp_graph_compile(g, &small, &e), BP_ERR_INVALID_ARGUMENT);
    cr_expect(e == NULL && strstr(bp_last_error(), "BP_GRAPH_OPTIONS_INIT"), "%s",
              bp_last_error());
    bp_tensor *all[] = {x, d, y, zeros};
    release_all(all, 4);
    bp_graph_release(g);
    bp_context_destroy(ctx);
}

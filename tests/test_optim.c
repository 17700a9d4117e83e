/* Optimizers (optim.h): SGD (momentum, dampening, Nesterov, weight decay),
 * Adam and AdamW against PyTorch's formulas written out on the host, in
 * f64; clipping by the global norm; a step recorded on a graph equal to the
 * eager step bit for bit; a run saved and loaded with safetensors resuming
 * bit for bit; the refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpt.h"

#define N 5

static const double P0[N] = {0.5, -1.25, 2.0, 0.125, -0.75};

/* The gradient of step s (1-based), deterministic. */
static void grad_of(int s, double *g)
{
    for (int i = 0; i < N; i++)
        g[i] = sin(1.7 * s + 0.9 * i) * (1.0 + 0.3 * i) + (i == 2 ? 3.0 : 0.0);
}

/* PyTorch's SGD, Adam and AdamW (torch/optim/{sgd,adam,adamw}.py), one
 * tensor, `steps` steps, with clip_grad_norm_ first when max_norm > 0. */
static void reference(const bp_optimizer *o, int steps, double *p)
{
    double buf[N] = {0}, m[N] = {0}, v[N] = {0}, g[N];
    memcpy(p, P0, sizeof P0);
    for (int t = 1; t <= steps; t++) {
        grad_of(t, g);
        if (o->max_grad_norm > 0) {
            double sq = 0;
            for (int i = 0; i < N; i++)
                sq += g[i] * g[i];
            double c = o->max_grad_norm / (sqrt(sq) + 1e-6);
            if (c < 1)
                for (int i = 0; i < N; i++)
                    g[i] *= c;
        }
        for (int i = 0; i < N; i++) {
            double d = g[i];
            if (o->kind != BP_OPTIM_ADAMW && o->weight_decay > 0)
                d += o->weight_decay * p[i];
            if (o->kind == BP_OPTIM_SGD) {
                if (o->momentum > 0) {
                    buf[i] = t == 1 ? d : o->momentum * buf[i] + (1 - o->dampening) * d;
                    d = o->nesterov ? d + o->momentum * buf[i] : buf[i];
                }
                p[i] -= o->lr * d;
            } else {
                if (o->kind == BP_OPTIM_ADAMW)
                    p[i] *= 1 - o->lr * o->weight_decay;
                m[i] = o->beta1 * m[i] + (1 - o->beta1) * d;
                v[i] = o->beta2 * v[i] + (1 - o->beta2) * d * d;
                double bc1 = 1 - pow(o->beta1, t), bc2 = 1 - pow(o->beta2, t);
                p[i] -= o->lr / bc1 * m[i] / (sqrt(v[i]) / sqrt(bc2) + o->eps);
            }
        }
    }
}

static bp_tensor *vec(bp_backend *be, const double *v)
{
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F64, 1, (const int64_t[]){N}, v, &t));
    return t;
}

/* Steps [from, to] of opt from (*p, state), eagerly; *p and state replaced. */
static void run_steps(const bp_optimizer *o, bp_backend *be, int from, int to, bp_tensor **p,
                      bp_tensor **state, int32_t n_state)
{
    bp_tensor *ns[3] = {NULL, NULL, NULL}, *np = NULL;
    for (int t = from; t <= to; t++) {
        double g[N];
        grad_of(t, g);
        bp_tensor *gt = vec(be, g);
        BPT_OK(bp_optim_step(o, 1, (const bp_tensor *const *)p, (const bp_tensor *const[]){gt},
                             (const bp_tensor *const *)state, &np, ns));
        bp_tensor_release(gt);
        bp_tensor_release(*p);
        *p = np;
        for (int32_t k = 0; k < n_state; k++) {
            bp_tensor_release(state[k]);
            state[k] = ns[k];
        }
    }
}

static void check_against_reference(const bp_optimizer *o, const char *what)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be)
    {
        bp_tensor *p = vec(be, P0), *state[3] = {NULL, NULL, NULL};
        int32_t n_state = bp_optim_state_count(o, 1);
        cr_assert(n_state >= 1 && n_state <= 3);
        BPT_OK(bp_optim_init(o, 1, (const bp_tensor *const[]){p}, state));
        run_steps(o, be, 1, 7, &p, state, n_state);
        double got[N], want[N];
        BPT_OK(bp_tensor_to_host(p, got, sizeof got));
        reference(o, 7, want);
        for (int i = 0; i < N; i++)
            cr_expect(fabs(got[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])),
                      "%s on %s: p[%d] %.17g, PyTorch's formula %.17g", what,
                      bp_backend_name(be), i, got[i], want[i]);
        double t = 0;
        BPT_OK(bp_item_f64(state[0], &t));
        cr_expect_eq(t, 7.0, "the step counter");
        bp_tensor_release(p);
        for (int32_t k = 0; k < n_state; k++)
            bp_tensor_release(state[k]);
    }
    bp_context_destroy(ctx);
}

Test(optim, sgd_plain_momentum_dampening_nesterov_and_weight_decay_follow_pytorch)
{
    bp_optimizer o = BP_OPTIMIZER_SGD_INIT;
    o.lr = 0.05;
    check_against_reference(&o, "sgd");
    o.momentum = 0.9, o.weight_decay = 0.01;
    check_against_reference(&o, "sgd momentum");
    o.dampening = 0.3;
    check_against_reference(&o, "sgd dampening");
    o.dampening = 0, o.nesterov = true;
    check_against_reference(&o, "sgd nesterov");
}

Test(optim, adam_and_adamw_follow_pytorch_with_bias_correction)
{
    bp_optimizer a = BP_OPTIMIZER_ADAM_INIT;
    a.lr = 0.01;
    check_against_reference(&a, "adam");
    a.weight_decay = 0.1;
    check_against_reference(&a, "adam with L2");
    bp_optimizer w = BP_OPTIMIZER_ADAMW_INIT;
    w.lr = 0.02;
    check_against_reference(&w, "adamw");
}

Test(optim, clipping_by_the_global_norm_scales_the_gradients_first)
{
    bp_optimizer o = BP_OPTIMIZER_SGD_INIT;
    o.lr = 0.1, o.momentum = 0.5, o.max_grad_norm = 0.75;
    check_against_reference(&o, "sgd clipped");
    bp_optimizer a = BP_OPTIMIZER_ADAMW_INIT;
    a.max_grad_norm = 1.5;
    check_against_reference(&a, "adamw clipped");
}

Test(optim, a_step_recorded_on_a_graph_equals_the_eager_step_bit_for_bit)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be)
    {
        bp_optimizer o = BP_OPTIMIZER_ADAM_INIT;
        o.weight_decay = 0.01, o.max_grad_norm = 2.0;
        bp_graph *g = NULL;
        bp_tensor *sp = NULL, *sg = NULL, *ss[3] = {NULL}, *np = NULL, *ns[3] = {NULL};
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F64, 1, (const int64_t[]){N}, &sp));
        BPT_OK(bp_graph_input(g, BP_F64, 1, (const int64_t[]){N}, &sg));
        BPT_OK(bp_graph_input(g, BP_F64, 0, NULL, &ss[0]));
        for (int k = 1; k < 3; k++)
            BPT_OK(bp_graph_input(g, BP_F64, 1, (const int64_t[]){N}, &ss[k]));
        BPT_OK(bp_optim_step(&o, 1, (const bp_tensor *const[]){sp},
                             (const bp_tensor *const[]){sg}, (const bp_tensor *const *)ss, &np,
                             ns));
        BPT_OK(bp_graph_output(g, np));
        for (int k = 0; k < 3; k++)
            BPT_OK(bp_graph_output(g, ns[k]));
        bp_graph_exec *exe = NULL;
        BPT_OK(bp_graph_compile(g, NULL, &exe));
        /* concrete inputs: a state a few steps in */
        double gv[N], mv[N], vv[N], t = 3;
        grad_of(4, gv);
        for (int i = 0; i < N; i++)
            mv[i] = 0.1 * i - 0.2, vv[i] = 0.01 * (i + 1);
        bp_tensor *in[5] = {vec(be, P0), vec(be, gv), NULL, vec(be, mv), vec(be, vv)};
        BPT_OK(bp_tensor_from_host(be, BP_F64, 0, NULL, &t, &in[2]));
        bp_tensor *out[4] = {NULL}, *ep = NULL, *es[3] = {NULL};
        BPT_OK(bp_graph_run(exe, 5, in, 4, out));
        BPT_OK(bp_optim_step(&o, 1, (const bp_tensor *const[]){in[0]},
                             (const bp_tensor *const[]){in[1]},
                             (const bp_tensor *const[]){in[2], in[3], in[4]}, &ep, es));
        const bp_tensor *eager[4] = {ep, es[0], es[1], es[2]};
        for (int k = 0; k < 4; k++) {
            double a[N] = {0}, b[N] = {0};
            size_t bytes = bp_tensor_nbytes(out[k]);
            BPT_OK(bp_tensor_to_host(out[k], a, bytes));
            BPT_OK(bp_tensor_to_host(eager[k], b, bytes));
            cr_expect(memcmp(a, b, bytes) == 0, "output %d on %s differs from the eager step", k,
                      bp_backend_name(be));
        }
        bp_tensor *rel[] = {sp, sg, ss[0], ss[1], ss[2], np, ns[0], ns[1], ns[2], in[0], in[1],
                            in[2], in[3], in[4], out[0], out[1], out[2], out[3], ep, es[0],
                            es[1], es[2]};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
            bp_tensor_release(rel[i]);
        bp_graph_exec_release(exe);
        bp_graph_release(g);
    }
    bp_context_destroy(ctx);
}

Test(optim, a_run_saved_and_loaded_with_safetensors_resumes_bit_for_bit)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(ctx, &be));
    bp_optimizer o = BP_OPTIMIZER_ADAMW_INIT;
    o.lr = 0.03;
    /* six steps straight */
    bp_tensor *p = vec(be, P0), *s[3] = {NULL};
    BPT_OK(bp_optim_init(&o, 1, (const bp_tensor *const[]){p}, s));
    run_steps(&o, be, 1, 6, &p, s, 3);
    /* three, a checkpoint, a fresh start from it, three more */
    bp_tensor *q = vec(be, P0), *r[3] = {NULL};
    BPT_OK(bp_optim_init(&o, 1, (const bp_tensor *const[]){q}, r));
    run_steps(&o, be, 1, 3, &q, r, 3);
    char path[] = "/tmp/bpt_optim_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    const char *names[4] = {"param", "state.step", "state.m", "state.v"};
    BPT_OK(bp_save_safetensors(path, 4, names, (const bp_tensor *const[]){q, r[0], r[1], r[2]},
                               NULL));
    bp_tensor_release(q);
    for (int k = 0; k < 3; k++)
        bp_tensor_release(r[k]);
    bp_safetensors *f = NULL;
    BPT_OK(bp_safetensors_open(path, &f));
    BPT_OK(bp_safetensors_load(f, "param", be, &q));
    for (int k = 0; k < 3; k++)
        BPT_OK(bp_safetensors_load(f, names[1 + k], be, &r[k]));
    bp_safetensors_close(f);
    unlink(path);
    run_steps(&o, be, 4, 6, &q, r, 3);
    double a[N], b[N];
    BPT_OK(bp_tensor_to_host(p, a, sizeof a));
    BPT_OK(bp_tensor_to_host(q, b, sizeof b));
    cr_expect(memcmp(a, b, sizeof a) == 0, "the resumed run differs from the straight one");
    bp_tensor_release(p);
    bp_tensor_release(q);
    for (int k = 0; k < 3; k++) {
        bp_tensor_release(s[k]);
        bp_tensor_release(r[k]);
    }
    bp_context_destroy(ctx);
}

Test(optim, refusals_name_the_field_and_the_fix)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(ctx, &be));
    bp_tensor *p = vec(be, P0), *g3 = NULL, *s[3] = {NULL}, *np = NULL, *ns[3] = {NULL};
    BPT_OK(bp_zeros(be, BP_F64, 1, (const int64_t[]){3}, &g3));
    bp_optimizer o = BP_OPTIMIZER_SGD_INIT;
    o.lr = -1;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_optim_init(&o, 1, (const bp_tensor *const[]){p}, s));
    cr_expect(strstr(bp_last_error(), "lr"), "%s", bp_last_error());
    cr_expect_eq(bp_optim_state_count(&o, 1), -1);
    o = (bp_optimizer)BP_OPTIMIZER_SGD_INIT;
    o.nesterov = true;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_optim_init(&o, 1, (const bp_tensor *const[]){p}, s));
    cr_expect(strstr(bp_last_error(), "nesterov"), "%s", bp_last_error());
    bp_optimizer a = BP_OPTIMIZER_ADAM_INIT;
    a.beta2 = 1.0;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_optim_init(&a, 1, (const bp_tensor *const[]){p}, s));
    a.beta2 = 0.999;
    BPT_OK(bp_optim_init(&a, 1, (const bp_tensor *const[]){p}, s));
    BPT_FAILS(BP_ERR_SHAPE, bp_optim_step(&a, 1, (const bp_tensor *const[]){p},
                                          (const bp_tensor *const[]){g3},
                                          (const bp_tensor *const *)s, &np, ns));
    cr_expect_null(np);
    cr_expect_null(ns[0]);
    /* a state made for another optimizer */
    bp_optimizer plain = BP_OPTIMIZER_SGD_INIT;
    plain.momentum = 0.9;
    BPT_FAILS(BP_ERR_SHAPE, bp_optim_step(&plain, 1, (const bp_tensor *const[]){p},
                                          (const bp_tensor *const[]){p},
                                          (const bp_tensor *const[]){s[1], s[0]}, &np, ns));
    cr_expect(strstr(bp_last_error(), "bp_optim_init"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_optim_step(NULL, 1, (const bp_tensor *const[]){p},
                                                     (const bp_tensor *const[]){p},
                                                     (const bp_tensor *const *)s, &np, ns));
    bp_tensor_release(p);
    bp_tensor_release(g3);
    for (int k = 0; k < 3; k++)
        bp_tensor_release(s[k]);
    bp_context_destroy(ctx);
}

/* A state tensor of the right dtype and element count but another shape
 * (its parameter's, flattened) is refused, naming the state index, both
 * shapes, the parameter it belongs to and bp_optim_init. */
Test(optim, a_state_tensor_of_another_shape_is_refused_naming_both_shapes)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(ctx, &be));
    bp_tensor *p0 = vec(be, P0), *p1 = NULL, *flat = NULL, *s[5] = {NULL};
    bp_tensor *np[2] = {NULL}, *ns[5] = {NULL};
    BPT_OK(bp_zeros(be, BP_F64, 2, (const int64_t[]){2, 3}, &p1));
    BPT_OK(bp_zeros(be, BP_F64, 1, (const int64_t[]){6}, &flat));
    bp_optimizer a = BP_OPTIMIZER_ADAM_INIT;
    const bp_tensor *const params[2] = {p0, p1};
    cr_assert_eq(bp_optim_state_count(&a, 2), 5);
    BPT_OK(bp_optim_init(&a, 2, params, s));
    /* step, p0's m and v, p1's m and v: p1's v flattened */
    const bp_tensor *const state[5] = {s[0], s[1], s[2], s[3], flat};
    BPT_FAILS(BP_ERR_SHAPE, bp_optim_step(&a, 2, params, params, state, np, ns));
    const char *msg = bp_last_error();
    const char *needles[] = {"state[4] has shape (6,)", "params[1]", "(2, 3)", "same shape",
                             "bp_optim_init"};
    for (size_t k = 0; k < sizeof needles / sizeof needles[0]; k++)
        cr_expect(strstr(msg, needles[k]), "no \"%s\" in: %s", needles[k], msg);
    for (int k = 0; k < 5; k++)
        cr_expect_null(ns[k], "new_state[%d] set on failure", k);
    cr_expect_null(np[0]);
    cr_expect_null(np[1]);
    /* one that broadcasts against its parameter: p0's m as (1, 5) */
    bp_tensor *row = NULL;
    BPT_OK(bp_zeros(be, BP_F64, 2, (const int64_t[]){1, N}, &row));
    const bp_tensor *const state2[5] = {s[0], row, s[2], s[3], s[4]};
    BPT_FAILS(BP_ERR_SHAPE, bp_optim_step(&a, 2, params, params, state2, np, ns));
    msg = bp_last_error();
    cr_expect(strstr(msg, "state[1] has shape (1, 5) but params[0]"), "%s", msg);
    cr_expect(strstr(msg, "(5,)"), "%s", msg);
    cr_expect_null(np[0]);
    cr_expect_null(ns[1]);
    bp_tensor_release(row);
    /* the state it should be still steps */
    BPT_OK(bp_optim_step(&a, 2, params, params, (const bp_tensor *const *)s, np, ns));
    for (int k = 0; k < 5; k++)
        bp_tensor_release(ns[k]), bp_tensor_release(s[k]);
    bp_tensor_release(np[0]), bp_tensor_release(np[1]);
    bp_tensor_release(p0), bp_tensor_release(p1), bp_tensor_release(flat);
    bp_context_destroy(ctx);
}

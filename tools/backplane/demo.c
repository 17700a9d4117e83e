/* backplane demo: train a small MLP with nothing but the library's ops.
 *
 * Data: Gaussian blobs. Class centres come from bp_random_uniform, points are
 * centre + bp_random_normal noise, so the labels are known by construction.
 * Model: in -> hidden (ReLU) -> classes, softmax cross-entropy, full-batch
 * SGD. The gradients are written out by hand:
 *
 *   z1 = x W1 + b1          h = relu(z1)          logits = h W2 + b2
 *   dlogits = (softmax(logits) - onehot) / N
 *   dW2 = h^T dlogits       db2 = sum_0(dlogits)
 *   dh  = dlogits W2^T      dz1 = where(z1 > 0, dh, 0)
 *   dW1 = x^T dz1           db1 = sum_0(dz1)
 *
 * Tensors are immutable: each step makes new parameters (w - lr * dw) and
 * releases the old ones. Every temporary of a step goes into a scratch list
 * that is released at the end of the step. */
#include "cli.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "demo";

enum {
    N_SAMPLES = 1024,
    N_FEATURES = 8,
    N_HIDDEN = 32,
    N_CLASSES = 4,
    DEFAULT_STEPS = 200,
    DEFAULT_SEED = 42,
    SCRATCH_MAX = 64,
};
#define DEFAULT_LR 0.1
/* Class c's centre: CENTRE_SEPARATION on axis c plus a uniform jitter in
 * [-CENTRE_JITTER, CENTRE_JITTER] on every axis; the noise has stddev 1. The
 * fixed part keeps every pair of classes apart whatever the seed. */
#define CENTRE_SEPARATION 4.0
#define CENTRE_JITTER 1.5

/* Disjoint stream positions of the counter-based generator, one per use. */
#define OFF_CENTRES ((uint64_t)0)
#define OFF_NOISE ((uint64_t)1 << 32)
#define OFF_W1 ((uint64_t)2 << 32)
#define OFF_W2 ((uint64_t)3 << 32)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: backplane demo [--backend NAME] [--steps N] [--config FILE] [--seed S]\n"
            "                      [--lr RATE] [--sync-every N]\n"
            "\n"
            "Train a small MLP (%d -> %d ReLU -> %d) on %d synthetic samples of %d Gaussian\n"
            "blobs, with full-batch SGD and hand-written gradients, using only the\n"
            "library's ops on one backend. Prints loss, accuracy and time per step, then\n"
            "what the training moved and waited for (bp_backend_stats), per step.\n"
            "\n"
            "options:\n"
            "  --backend NAME  backend to run on, e.g. binary, cuda:0 (default: the\n"
            "                  configured default backend)\n"
            "  --steps N       training steps (default %d)\n"
            "  --config FILE   configuration file (default: the layered defaults)\n"
            "  --seed S        seed for the data and the initial weights (default %d)\n"
            "  --lr RATE       learning rate (default %g)\n"
            "  --sync-every N  also read the loss every N steps, as a training loop that\n"
            "                  prints it would: on a device backend each read waits for\n"
            "                  the device (compare ms/step and the waits with and without)\n"
            "  -h, --help      show this help and exit\n"
            "\n"
            "Exit status: 0 on success, 1 if a call fails or training diverges,\n"
            "2 for a usage error.\n",
            N_FEATURES, N_HIDDEN, N_CLASSES, N_SAMPLES, N_CLASSES, DEFAULT_STEPS, DEFAULT_SEED,
            DEFAULT_LR);
}

/* ---- error plumbing ------------------------------------------------------- */

/* The call that failed, for the message (bp_last_error has the detail). */
static const char *g_failed_call;

#define TRY(call)                         \
    do {                                  \
        bp_status st_ = (call);           \
        if (st_ != BP_OK) {               \
            g_failed_call = #call;        \
            return st_;                   \
        }                                 \
    } while (0)

/* Temporaries of one step. */
typedef struct scratch {
    bp_tensor *t[SCRATCH_MAX];
    int n;
} scratch;

static bp_status sc_keep(scratch *s, bp_tensor *t)
{
    if (s->n == SCRATCH_MAX) {
        bp_tensor_release(t);
        g_failed_call = "scratch list full (raise SCRATCH_MAX in demo.c)";
        return BP_ERR_OUT_OF_MEMORY;
    }
    s->t[s->n++] = t;
    return BP_OK;
}

static void sc_clear(scratch *s)
{
    for (int i = 0; i < s->n; i++)
        bp_tensor_release(s->t[i]);
    s->n = 0;
}

/* OP(var, call): run call (which writes var), keep var as a temporary. */
#define OP(var, call)                \
    do {                             \
        TRY(call);                   \
        TRY(sc_keep(sc, (var)));     \
    } while (0)

/* ---- the problem ---------------------------------------------------------- */

typedef struct dataset {
    bp_tensor *x;      /* (N, D) f32 */
    bp_tensor *xt;     /* (D, N) f32 */
    bp_tensor *labels; /* (N) i64 */
    bp_tensor *onehot; /* (N, C) f32 */
} dataset;

typedef struct model {
    bp_tensor *w1, *b1; /* (D, H), (H) */
    bp_tensor *w2, *b2; /* (H, C), (C) */
} model;

typedef struct consts {
    bp_tensor *lr;    /* scalar f32 */
    bp_tensor *inv_n; /* scalar f32, 1 / N */
    bp_tensor *zero;  /* scalar f32 */
} consts;

static bp_status make_data(bp_backend *be, uint64_t seed, dataset *ds, scratch *sc)
{
    int64_t *host_labels = malloc(N_SAMPLES * sizeof *host_labels);
    if (!host_labels) {
        g_failed_call = "malloc";
        return BP_ERR_OUT_OF_MEMORY;
    }
    for (int64_t i = 0; i < N_SAMPLES; i++)
        host_labels[i] = i % N_CLASSES;
    bp_status st = bp_tensor_from_host(be, BP_I64, 1, (const int64_t[]){N_SAMPLES}, host_labels,
                                       &ds->labels);
    free(host_labels);
    if (st != BP_OK) {
        g_failed_call = "bp_tensor_from_host(labels)";
        return st;
    }

    bp_tensor *jitter, *axes, *separation, *spread, *centres, *per_point, *noise, *classes,
        *label_col, *hit;
    OP(jitter, bp_random_uniform(be, BP_F32, 2, (const int64_t[]){N_CLASSES, N_FEATURES}, seed,
                                 OFF_CENTRES, -CENTRE_JITTER, CENTRE_JITTER, &jitter));
    OP(axes, bp_eye(be, BP_F32, N_CLASSES, N_FEATURES, &axes));
    OP(separation, bp_full(be, BP_F32, 0, NULL, CENTRE_SEPARATION, &separation));
    OP(spread, bp_mul(axes, separation, &spread));
    OP(centres, bp_add(spread, jitter, &centres)); /* (C, D) */
    OP(per_point, bp_gather(centres, ds->labels, 0, &per_point)); /* (N, D) */
    OP(noise, bp_random_normal(be, BP_F32, 2, (const int64_t[]){N_SAMPLES, N_FEATURES}, seed,
                               OFF_NOISE, 0.0, 1.0, &noise));
    TRY(bp_add(per_point, noise, &ds->x));
    TRY(bp_transpose(ds->x, NULL, &ds->xt));

    /* one-hot: labels[:, None] == arange(C) */
    OP(classes, bp_arange(be, BP_I64, 0, N_CLASSES, 1, &classes));
    OP(label_col, bp_reshape(ds->labels, 2, (const int64_t[]){N_SAMPLES, 1}, &label_col));
    OP(hit, bp_eq(label_col, classes, &hit));
    TRY(bp_cast(hit, BP_F32, &ds->onehot));
    return BP_OK;
}

static bp_status init_model(bp_backend *be, uint64_t seed, model *m)
{
    /* He initialisation for the ReLU layer, 1/sqrt(fan_in) for the output. */
    TRY(bp_random_normal(be, BP_F32, 2, (const int64_t[]){N_FEATURES, N_HIDDEN}, seed, OFF_W1,
                         0.0, sqrt(2.0 / N_FEATURES), &m->w1));
    TRY(bp_zeros(be, BP_F32, 1, (const int64_t[]){N_HIDDEN}, &m->b1));
    TRY(bp_random_normal(be, BP_F32, 2, (const int64_t[]){N_HIDDEN, N_CLASSES}, seed, OFF_W2,
                         0.0, sqrt(1.0 / N_HIDDEN), &m->w2));
    TRY(bp_zeros(be, BP_F32, 1, (const int64_t[]){N_CLASSES}, &m->b2));
    return BP_OK;
}

static bp_status make_consts(bp_backend *be, double lr, consts *k)
{
    TRY(bp_full(be, BP_F32, 0, NULL, lr, &k->lr));
    TRY(bp_full(be, BP_F32, 0, NULL, 1.0 / N_SAMPLES, &k->inv_n));
    TRY(bp_full(be, BP_F32, 0, NULL, 0.0, &k->zero));
    return BP_OK;
}

/* z1, h and logits stay in the scratch list for the backward pass. */
static bp_status forward(const model *m, const dataset *ds, scratch *sc, bp_tensor **z1_out,
                         bp_tensor **h_out, bp_tensor **logits_out)
{
    bp_tensor *xw, *z1, *h, *hw, *logits;
    OP(xw, bp_matmul(ds->x, m->w1, &xw));
    OP(z1, bp_add(xw, m->b1, &z1));
    OP(h, bp_relu(z1, &h));
    OP(hw, bp_matmul(h, m->w2, &hw));
    OP(logits, bp_add(hw, m->b2, &logits));
    *z1_out = z1;
    *h_out = h;
    *logits_out = logits;
    return BP_OK;
}

/* Mean cross-entropy and accuracy of logits (reads two scalars: synchronises). */
static bp_status metrics(const dataset *ds, const bp_tensor *logits, scratch *sc, double *loss,
                         double *accuracy)
{
    bp_tensor *logp, *picked, *total, *pred, *right, *right_f, *acc;
    const int32_t class_axis[1] = {1};
    OP(logp, bp_log_softmax(logits, 1, &logp));
    OP(picked, bp_mul(ds->onehot, logp, &picked));
    OP(total, bp_sum(picked, 0, NULL, false, &total));
    OP(pred, bp_argmax(logits, 1, class_axis, false, &pred));
    OP(right, bp_eq(pred, ds->labels, &right));
    OP(right_f, bp_cast(right, BP_F32, &right_f));
    OP(acc, bp_mean(right_f, 0, NULL, false, &acc));
    double sum_logp = 0.0;
    TRY(bp_item_f64(total, &sum_logp));
    TRY(bp_item_f64(acc, accuracy));
    *loss = -sum_logp / N_SAMPLES;
    return BP_OK;
}

/* *param <- *param - lr * grad, releasing the old parameter. */
static bp_status sgd_update(bp_tensor **param, const bp_tensor *grad, const consts *k,
                            scratch *sc)
{
    bp_tensor *delta, *next;
    OP(delta, bp_mul(k->lr, grad, &delta));
    TRY(bp_sub(*param, delta, &next));
    bp_tensor_release(*param);
    *param = next;
    return BP_OK;
}

static bp_status backward_update(model *m, const dataset *ds, const consts *k, bp_tensor *z1,
                                 bp_tensor *h, bp_tensor *logits, scratch *sc)
{
    const int32_t batch_axis[1] = {0};
    bp_tensor *p, *diff, *dlogits, *ht, *dw2, *db2, *w2t, *dh, *active, *dz1, *dw1, *db1;
    OP(p, bp_softmax(logits, 1, &p));
    OP(diff, bp_sub(p, ds->onehot, &diff));
    OP(dlogits, bp_mul(diff, k->inv_n, &dlogits));

    OP(ht, bp_transpose(h, NULL, &ht));
    OP(dw2, bp_matmul(ht, dlogits, &dw2));
    OP(db2, bp_sum(dlogits, 1, batch_axis, false, &db2));

    OP(w2t, bp_transpose(m->w2, NULL, &w2t));
    OP(dh, bp_matmul(dlogits, w2t, &dh));
    OP(active, bp_gt(z1, k->zero, &active));
    OP(dz1, bp_where(active, dh, k->zero, &dz1));

    OP(dw1, bp_matmul(ds->xt, dz1, &dw1));
    OP(db1, bp_sum(dz1, 1, batch_axis, false, &db1));

    TRY(sgd_update(&m->w1, dw1, k, sc));
    TRY(sgd_update(&m->b1, db1, k, sc));
    TRY(sgd_update(&m->w2, dw2, k, sc));
    TRY(sgd_update(&m->b2, db2, k, sc));
    return BP_OK;
}

/* ---- the command ---------------------------------------------------------- */

typedef struct options {
    const char *backend;
    const char *config;
    int64_t steps;
    uint64_t seed;
    double lr;
    int64_t sync_every;   /* read the loss every N steps (0: only when reporting) */
} options;

static int parse_options(int argc, char **argv, options *o, bool *help)
{
    const char *value = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int m;
        if (cli_is_help(arg)) {
            *help = true;
            return CLI_EXIT_OK;
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--backend", &value)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!value[0])
                return cli_usage_error(CMD, "--backend needs a name, e.g. binary or cuda:0");
            o->backend = value;
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--config", &value)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            o->config = value;
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--steps", &value)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!cli_parse_i64(value, 1, 100000000, &o->steps))
                return cli_usage_error(CMD, "--steps needs an integer from 1 to 100000000, not '%s'",
                                       value);
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--seed", &value)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!cli_parse_u64(value, &o->seed))
                return cli_usage_error(CMD, "--seed needs a non-negative integer, not '%s'", value);
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--sync-every", &value)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!cli_parse_i64(value, 1, 100000000, &o->sync_every))
                return cli_usage_error(CMD, "--sync-every needs an integer from 1 to 100000000, "
                                       "not '%s'", value);
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--lr", &value)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (!cli_parse_f64(value, &o->lr) || !(o->lr > 0.0))
                return cli_usage_error(CMD, "--lr needs a positive number, not '%s'", value);
        } else if (arg[0] == '-') {
            return cli_usage_error(CMD, "unknown option '%s'", arg);
        } else {
            return cli_usage_error(CMD, "unexpected argument '%s'", arg);
        }
    }
    return CLI_EXIT_OK;
}

static int fail_call(bp_status st)
{
    return cli_fail(CMD, g_failed_call ? g_failed_call : "a library call failed", st);
}

static int diverged(int64_t step, double loss, double lr)
{
    return cli_error(CMD, "training diverged at step %" PRId64 " (loss %g); try a smaller --lr "
                          "than %g",
                     step, loss, lr);
}

/* What the training moved and waited for, in all and per step. */
static void print_stats(bp_backend *be, int64_t steps)
{
    bp_stats s = {.struct_size = sizeof s};
    if (bp_backend_stats(be, &s) != BP_OK)
        return;
    char b1[32], b2[32], b3[32], b4[32];
    double n = (double)steps;
    printf("\ntransfers and waits on %s during training (bp_backend_stats):\n",
           bp_backend_name(be));
    printf("  %-22s %10" PRIu64 "  %8.2f per step\n", "ops dispatched", s.ops, (double)s.ops / n);
    printf("  %-22s %10" PRIu64 "  %8.2f per step  %s\n", "host -> backend", s.h2d_calls,
           (double)s.h2d_calls / n, cli_format_bytes(s.h2d_bytes, b1, sizeof b1));
    printf("  %-22s %10" PRIu64 "  %8.2f per step  %s\n", "backend -> host", s.d2h_calls,
           (double)s.d2h_calls / n, cli_format_bytes(s.d2h_bytes, b2, sizeof b2));
    printf("  %-22s %10" PRIu64 "  %8.2f per step\n", "synchronising reads", s.sync_reads,
           (double)s.sync_reads / n);
    printf("  %-22s %10" PRIu64 "  %8.2f per step\n", "cross-backend copies",
           s.copies_in + s.copies_out, (double)(s.copies_in + s.copies_out) / n);
    printf("  %-22s %10" PRIu64 "  %8.2f per step\n", "allocations", s.allocs,
           (double)s.allocs / n);
    printf("  %-22s %s now, %s at peak\n", "memory",
           cli_format_bytes(s.bytes_in_use, b3, sizeof b3),
           cli_format_bytes(s.peak_bytes_in_use, b4, sizeof b4));
}

/* The training run proper; everything it makes is released by the caller. */
static int train(bp_backend *be, const options *o, dataset *ds, model *m, consts *k, scratch *sc)
{
    bp_status st;
    if ((st = make_data(be, o->seed, ds, sc)) != BP_OK)
        return fail_call(st);
    sc_clear(sc);
    if ((st = init_model(be, o->seed, m)) != BP_OK || (st = make_consts(be, o->lr, k)) != BP_OK)
        return fail_call(st);

    bp_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    const char *device = ""; /* decoration only: a failure just leaves it out */
    if (bp_backend_device_info(be, &info) == BP_OK && info.name[0])
        device = info.name;
    printf("backplane demo: %d-class Gaussian blobs, %d samples x %d features (seed %" PRIu64
           ")\n",
           N_CLASSES, N_SAMPLES, N_FEATURES, o->seed);
    printf("model: MLP %d -> %d (ReLU) -> %d, softmax cross-entropy, full-batch SGD, lr %g, f32\n",
           N_FEATURES, N_HIDDEN, N_CLASSES, o->lr);
    printf("backend: %s%s%s%s\n\n", bp_backend_name(be), device[0] ? " (" : "", device,
           device[0] ? ")" : "");
    printf("%8s  %10s  %8s  %9s\n", "step", "loss", "accuracy", "ms/step");
    fflush(stdout);

    const int64_t every = o->steps >= 10 ? o->steps / 10 : 1;
    double train_s = 0.0, interval_s = 0.0;
    bp_backend_stats_reset(be); /* count the training steps only */
    int64_t interval_steps = 0;
    double loss = NAN, acc = NAN;
    bp_tensor *z1, *h, *logits;

    for (int64_t step = 0; step <= o->steps; step++) {
        bool last = step == o->steps; /* evaluation only, with the final weights */
        bool report = last || step % every == 0;
        double t0 = cli_now(), step_s = 0.0;
        if ((st = forward(m, ds, sc, &z1, &h, &logits)) != BP_OK)
            return fail_call(st);
        if (report) {
            /* Count the work queued so far, not the metrics. */
            if ((st = bp_backend_synchronize(be)) != BP_OK) {
                g_failed_call = "bp_backend_synchronize";
                return fail_call(st);
            }
            step_s += cli_now() - t0;
            if ((st = metrics(ds, logits, sc, &loss, &acc)) != BP_OK)
                return fail_call(st);
            /* ms/step: the mean over the steps since the previous line. */
            if (interval_steps > 0)
                printf("%8" PRId64 "  %10.4f  %7.1f%%  %9.3f\n", step, loss, 100.0 * acc,
                       1e3 * interval_s / (double)interval_steps);
            else
                printf("%8" PRId64 "  %10.4f  %7.1f%%  %9s\n", step, loss, 100.0 * acc, "-");
            fflush(stdout);
            if (!isfinite(loss))
                return diverged(step, loss, o->lr);
            interval_s = 0.0;
            interval_steps = 0;
            t0 = cli_now();
        }
        if (last)
            break; /* the final forward pass is not a training step */
        if (!report && o->sync_every > 0 && step % o->sync_every == 0) {
            /* what a loop that prints its loss every N steps pays: the host
             * waits for the device's queued work at each read */
            double l, a;
            if ((st = metrics(ds, logits, sc, &l, &a)) != BP_OK)
                return fail_call(st);
        }
        if ((st = backward_update(m, ds, k, z1, h, logits, sc)) != BP_OK)
            return fail_call(st);
        sc_clear(sc);
        if ((step + 1) % every == 0 || step + 1 == o->steps) {
            if ((st = bp_backend_synchronize(be)) != BP_OK) {
                g_failed_call = "bp_backend_synchronize";
                return fail_call(st);
            }
        }
        step_s += cli_now() - t0;
        train_s += step_s;
        interval_s += step_s;
        interval_steps++;
    }
    sc_clear(sc);

    printf("\nfinal: loss %.4f, accuracy %.1f%% (chance %.1f%%), %.3f ms/step over %" PRId64
           " step%s on %s\n",
           loss, 100.0 * acc, 100.0 / N_CLASSES, 1e3 * train_s / (double)o->steps, o->steps,
           o->steps == 1 ? "" : "s", bp_backend_name(be));
    print_stats(be, o->steps);
    return CLI_EXIT_OK;
}

int cli_demo(int argc, char **argv)
{
    options o = {NULL, NULL, DEFAULT_STEPS, DEFAULT_SEED, DEFAULT_LR, 0};
    bool help = false;
    int rc = parse_options(argc, argv, &o, &help);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (help) {
        usage(stdout);
        return CLI_EXIT_OK;
    }

    bp_context *ctx = NULL;
    bp_status st = bp_context_create(o.config, &ctx);
    if (st != BP_OK)
        return cli_fail(CMD, o.config ? "cannot read the configuration" : "cannot create the context",
                        st);

    bp_backend *be = NULL;
    if (o.backend)
        st = bp_backend_get(ctx, o.backend, &be);
    else
        st = bp_backend_default(ctx, &be);
    if (st != BP_OK) {
        char what[256];
        if (o.backend)
            snprintf(what, sizeof what, "backend '%s' is unavailable", o.backend);
        else
            snprintf(what, sizeof what, "no default backend");
        rc = cli_fail(CMD, what, st);
        bp_context_destroy(ctx);
        return rc;
    }

    dataset ds = {NULL, NULL, NULL, NULL};
    model m = {NULL, NULL, NULL, NULL};
    consts k = {NULL, NULL, NULL};
    scratch sc;
    sc.n = 0;

    rc = train(be, &o, &ds, &m, &k, &sc);

    sc_clear(&sc);
    bp_tensor *all[] = {ds.x, ds.xt, ds.labels, ds.onehot, m.w1, m.b1, m.w2, m.b2,
                        k.lr, k.inv_n, k.zero};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bp_tensor_release(all[i]);
    bp_context_destroy(ctx);
    return rc;
}

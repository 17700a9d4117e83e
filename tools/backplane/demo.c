/* backplane demo: train a small model with nothing but the library's ops.
 *
 * The training loop, the command line and what it prints live here; the
 * models (data, parameters, forward pass) are demo_mlp.c (the default, ABI
 * 1.0 ops only) and demo_cnn.c (convolution, pooling, layer norm: the ops of
 * ABI 1.5); both take their gradients from bp_graph_grad, through the
 * training step recorded, compiled and run here (demo_compile_step,
 * demo_run_step), so a model supplies only its data, parameters and loss.
 * Tensors are immutable: each step makes new parameters (w - lr * dw) and
 * releases the old ones; every temporary of a step goes into a scratch list
 * released at the step's end. */
#include "demo.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "demo";

enum { DEFAULT_SEED = 42 };

static const demo_model *const MODELS[] = {&demo_mlp, &demo_cnn};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: backplane demo [--model mlp|cnn] [--backend NAME] [--steps N] [--config FILE]\n"
            "                      [--seed S] [--lr RATE] [--sync-every N] [--data-parallel]\n"
            "                      [--loss-log FILE]\n"
            "\n"
            "Train a small model on synthetic data made with the library's RNG, with\n"
            "full-batch SGD, using only the library's ops on one backend, the gradients\n"
            "from bp_graph_grad. Prints loss, accuracy and time per step, then what the\n"
            "training moved and waited for (bp_backend_stats), per step.\n"
            "\n"
            "models:\n"
            "  mlp  (default) an MLP %d -> %d (ReLU) -> %d on Gaussian blobs; ABI 1.0 ops,\n"
            "       every backend runs it (%d steps, lr %g by default)\n"
            "  cnn  conv 3x3 (ReLU) -> max_pool -> layer_norm -> linear on 12x12 images;\n"
            "       needs the ops of ABI 1.5 (%d steps, lr %g by default)\n"
            "\n"
            "options:\n"
            "  --model NAME    mlp or cnn (default mlp)\n"
            "  --backend NAME  backend to run on, e.g. binary, cuda:0 (default: the\n"
            "                  configured default backend)\n"
            "  --steps N       training steps (default: the model's)\n"
            "  --config FILE   configuration file (default: the layered defaults)\n"
            "  --seed S        seed for the data and the initial weights (default %d)\n"
            "  --lr RATE       learning rate (default: the model's)\n"
            "  --sync-every N  also read the loss every N steps, as a training loop that\n"
            "                  prints it would: on a device backend each read waits for\n"
            "                  the device (compare ms/step and the waits with and without)\n"
            "  --data-parallel train on every process of an MPI job (mpirun -np 4 backplane\n"
            "                  demo --data-parallel): each takes its share of every batch,\n"
            "                  the gradients are averaged with bp_all_reduce, and the loss\n"
            "                  is the one-process run's (mlp only; the process count must\n"
            "                  divide the %d samples)\n"
            "  --loss-log FILE write every step's loss to FILE, one 'step loss' line each,\n"
            "                  at full precision (with --data-parallel: rank 0 writes it)\n"
            "  -h, --help      show this help and exit\n"
            "\n"
            "Exit status: 0 on success, 1 if a call fails or training diverges,\n"
            "2 for a usage error.\n",
            8, 32, 4, demo_mlp.default_steps, demo_mlp.default_lr, demo_cnn.default_steps,
            demo_cnn.default_lr, DEFAULT_SEED, DEMO_MLP_SAMPLES);
}

/* ---- what the models share (demo.h) ---------------------------------------- */

const char *demo_failed_call;
demo_parallel demo_dp = {NULL, 0, 1};

bp_status demo_keep(demo_scratch *s, bp_tensor *t)
{
    if (s->n == DEMO_SCRATCH_MAX) {
        bp_tensor_release(t);
        demo_failed_call = "scratch list full (raise DEMO_SCRATCH_MAX in demo.h)";
        return BP_ERR_OUT_OF_MEMORY;
    }
    s->t[s->n++] = t;
    return BP_OK;
}

void demo_clear(demo_scratch *s)
{
    for (int i = 0; i < s->n; i++)
        bp_tensor_release(s->t[i]);
    s->n = 0;
}

bp_status demo_keep_all(demo_scratch *s, int n, bp_tensor *const *t)
{
    bp_status st = BP_OK;
    int kept = 0; /* demo_keep releases what it fails to keep */
    for (; kept < n && (st = demo_keep(s, t[kept])) == BP_OK; kept++) {
    }
    for (int k = kept + 1; k < n; k++)
        bp_tensor_release(t[k]);
    return st;
}

bp_status demo_compile_step(const void *self, bp_backend *be, demo_loss_fn loss_of, int n,
                            bp_tensor *const *params, demo_scratch *sc, bp_graph_exec **step)
{
    if (n < 1 || n > DEMO_PARAMS_MAX) {
        demo_failed_call = "demo_compile_step: 1 to DEMO_PARAMS_MAX parameters (demo.h)";
        return BP_ERR_INVALID_ARGUMENT;
    }
    bp_graph *g;
    DEMO_TRY(bp_graph_create(be, &g));
    bp_tensor *p[DEMO_PARAMS_MAX], *logits, *loss, *grads[DEMO_PARAMS_MAX] = {NULL};
    bp_status st = BP_OK;
    for (int k = 0; k < n && st == BP_OK; k++) {
        st = bp_graph_input(g, bp_tensor_dtype(params[k]), bp_tensor_rank(params[k]),
                            bp_tensor_shape(params[k]), &p[k]);
        if (st == BP_OK)
            st = demo_keep(sc, p[k]);
    }
    if (st == BP_OK && (st = loss_of(self, p, sc, &logits, &loss)) == BP_OK &&
        (st = bp_graph_grad(g, loss, n, (const bp_tensor *const *)p, grads)) == BP_OK) {
        st = demo_keep_all(sc, n, grads);
        st = st == BP_OK ? bp_graph_output(g, logits) : st;
        for (int k = 0; k < n && st == BP_OK; k++)
            st = bp_graph_output(g, grads[k]);
        if (st == BP_OK)
            st = bp_graph_compile(g, NULL, step);
    }
    bp_graph_release(g);
    if (st != BP_OK && !demo_failed_call)
        demo_failed_call = "recording the training step (bp_graph_grad)";
    return st;
}

bp_status demo_run_step(bp_graph_exec *step, int n, bp_tensor *const *params, demo_scratch *sc,
                        bp_tensor **logits, bp_tensor **grads)
{
    if (n < 1 || n > DEMO_PARAMS_MAX) {
        demo_failed_call = "demo_run_step: 1 to DEMO_PARAMS_MAX parameters (demo.h)";
        return BP_ERR_INVALID_ARGUMENT;
    }
    bp_tensor *out[1 + DEMO_PARAMS_MAX] = {NULL};
    DEMO_TRY(bp_graph_run(step, n, params, 1 + n, out));
    DEMO_TRY(demo_keep_all(sc, 1 + n, out));
    *logits = out[0];
    for (int k = 0; k < n; k++)
        grads[k] = out[k + 1];
    return BP_OK;
}

bp_status demo_accuracy(const bp_tensor *logits, const bp_tensor *labels, demo_scratch *sc,
                        bp_tensor **acc)
{
    bp_tensor *pred, *right, *right_f;
    const int32_t class_axis[1] = {1};
    DEMO_OP(pred, bp_argmax(logits, 1, class_axis, false, &pred));
    DEMO_OP(right, bp_eq(pred, labels, &right));
    DEMO_OP(right_f, bp_cast(right, BP_F32, &right_f));
    DEMO_OP(*acc, bp_mean(right_f, 0, NULL, false, acc));
    return BP_OK;
}

bp_status demo_sgd(bp_tensor **param, const bp_tensor *grad, const bp_tensor *lr,
                   demo_scratch *sc)
{
    bp_tensor *delta, *next;
    DEMO_OP(delta, bp_mul(lr, grad, &delta));
    DEMO_TRY(bp_sub(*param, delta, &next));
    bp_tensor_release(*param);
    *param = next;
    return BP_OK;
}

/* ---- the command ---------------------------------------------------------- */

typedef struct options {
    const demo_model *model;
    const char *backend;
    const char *config;
    int64_t steps;        /* 0: the model's default */
    uint64_t seed;
    double lr;            /* 0: the model's default */
    int64_t sync_every;   /* read the loss every N steps (0: only when reporting) */
    bool data_parallel;   /* one share of each batch per process of the MPI job */
    const char *loss_log; /* every step's loss, at full precision */
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
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--model", &value)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            o->model = NULL;
            for (size_t k = 0; k < sizeof MODELS / sizeof MODELS[0]; k++)
                if (strcmp(value, MODELS[k]->name) == 0)
                    o->model = MODELS[k];
            if (!o->model)
                return cli_usage_error(CMD, "--model is mlp or cnn, not '%s'", value);
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
        } else if (strcmp(arg, "--data-parallel") == 0) {
            o->data_parallel = true;
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--loss-log", &value)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            o->loss_log = value;
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
    return cli_fail(CMD, demo_failed_call ? demo_failed_call : "a library call failed", st);
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

/* Synchronise, naming the call if it fails. */
static bp_status sync_all(bp_backend *be)
{
    bp_status st = bp_backend_synchronize(be);
    if (st != BP_OK)
        demo_failed_call = "bp_backend_synchronize";
    return st;
}

static void print_header(bp_backend *be, const options *o)
{
    bp_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    const char *device = ""; /* decoration only: a failure just leaves it out */
    if (bp_backend_device_info(be, &info) == BP_OK && info.name[0])
        device = info.name;
    printf("backplane demo --model %s (seed %" PRIu64 ", lr %g)\n", o->model->name, o->seed,
           o->lr);
    o->model->describe(NULL, stdout);
    printf("backend: %s%s%s%s\n", bp_backend_name(be), device[0] ? " (" : "", device,
           device[0] ? ")" : "");
    if (demo_dp.comm)
        printf("data-parallel: %d processes, each on 1/%d of every batch; gradients averaged "
               "with bp_all_reduce\n", (int)demo_dp.size, (int)demo_dp.size);
    printf("\n");
    printf("%8s  %10s  %8s  %9s\n", "step", "loss", "accuracy", "ms/step");
    fflush(stdout);
}

/* The training run proper; the model's state is released by the caller. */
static int train(bp_backend *be, const options *o, void *state, demo_scratch *sc, FILE *log)
{
    const demo_model *md = o->model;
    bp_status st;
    if ((st = md->setup(state, be, o->seed, o->lr, sc)) != BP_OK)
        return fail_call(st);
    demo_clear(sc);
    print_header(be, o);

    const int64_t every = o->steps >= 10 ? o->steps / 10 : 1;
    double train_s = 0.0, interval_s = 0.0;
    bp_backend_stats_reset(be); /* count the training steps only */
    int64_t interval_steps = 0;
    double loss = NAN, acc = NAN;
    bp_tensor *logits;

    for (int64_t step = 0; step <= o->steps; step++) {
        bool last = step == o->steps; /* evaluation only, with the final weights */
        bool report = last || step % every == 0;
        double t0 = cli_now(), step_s = 0.0;
        if ((st = md->forward(state, sc, &logits)) != BP_OK)
            return fail_call(st);
        if (report) {
            /* Count the work queued so far, not the metrics. */
            if ((st = sync_all(be)) != BP_OK)
                return fail_call(st);
            step_s += cli_now() - t0;
            if ((st = md->metrics(state, logits, sc, &loss, &acc)) != BP_OK)
                return fail_call(st);
            if (log)
                fprintf(log, "%" PRId64 " %.9g\n", step, loss);
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
        if (!report && o->loss_log) {
            double l, a; /* every rank takes part: the loss is a sum over all */
            if ((st = md->metrics(state, logits, sc, &l, &a)) != BP_OK)
                return fail_call(st);
            if (log)
                fprintf(log, "%" PRId64 " %.9g\n", step, l);
        }
        if (!report && o->sync_every > 0 && step % o->sync_every == 0) {
            /* what a loop that prints its loss every N steps pays: the host
             * waits for the device's queued work at each read */
            double l, a;
            if ((st = md->metrics(state, logits, sc, &l, &a)) != BP_OK)
                return fail_call(st);
        }
        if ((st = md->backward_update(state, logits, sc)) != BP_OK)
            return fail_call(st);
        demo_clear(sc);
        if (((step + 1) % every == 0 || step + 1 == o->steps) && (st = sync_all(be)) != BP_OK)
            return fail_call(st);
        step_s += cli_now() - t0;
        train_s += step_s;
        interval_s += step_s;
        interval_steps++;
    }
    demo_clear(sc);

    printf("\nfinal: loss %.4f, accuracy %.1f%% (chance %.1f%%), %.3f ms/step over %" PRId64
           " step%s on %s\n",
           loss, 100.0 * acc, 100.0 / md->n_classes, 1e3 * train_s / (double)o->steps, o->steps,
           o->steps == 1 ? "" : "s", bp_backend_name(be));
    print_stats(be, o->steps);
    return CLI_EXIT_OK;
}

/* --data-parallel: a communicator over the job; only rank 0 prints. */
static int join_job(bp_backend *be, const options *o)
{
    if (!o->model->data_parallel)
        return cli_usage_error(CMD, "--data-parallel trains the mlp model only");
    bp_status st = bp_comm_create(be, NULL, &demo_dp.comm);
    if (st != BP_OK)
        return cli_fail(CMD, "cannot join the job's processes (bp_comm_create)", st);
    demo_dp.rank = bp_comm_rank(demo_dp.comm);
    demo_dp.size = bp_comm_size(demo_dp.comm);
    if (DEMO_MLP_SAMPLES % demo_dp.size != 0) {
        int rc = cli_error(CMD, "--data-parallel: %d processes cannot share %d samples equally; "
                           "use a process count that divides %d (1, 2, 4, 8, ...)",
                           (int)demo_dp.size, DEMO_MLP_SAMPLES, DEMO_MLP_SAMPLES);
        bp_comm_destroy(demo_dp.comm);
        demo_dp = (demo_parallel){NULL, 0, 1};
        return rc;
    }
    if (demo_dp.rank != 0 && !freopen("/dev/null", "w", stdout)) {
        /* the other ranks' copies of the table would interleave with rank 0's */
        bp_comm_destroy(demo_dp.comm);
        demo_dp = (demo_parallel){NULL, 0, 1};
        return cli_error(CMD, "cannot silence rank %d's output", (int)demo_dp.rank);
    }
    return CLI_EXIT_OK;
}

int cli_demo(int argc, char **argv)
{
    options o = {&demo_mlp, NULL, NULL, 0, DEFAULT_SEED, 0.0, 0, false, NULL};
    bool help = false;
    int rc = parse_options(argc, argv, &o, &help);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (help) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (o.steps == 0)
        o.steps = o.model->default_steps;
    if (o.lr == 0.0)
        o.lr = o.model->default_lr;

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

    if (o.data_parallel) {
        rc = join_job(be, &o);
        if (rc != CLI_EXIT_OK) {
            bp_context_destroy(ctx);
            return rc;
        }
    }
    FILE *log = NULL;
    if (o.loss_log && demo_dp.rank == 0 && !(log = fopen(o.loss_log, "w"))) {
        rc = cli_error(CMD, "cannot write the loss log %s: %s", o.loss_log, strerror(errno));
        bp_comm_destroy(demo_dp.comm);
        bp_context_destroy(ctx);
        return rc;
    }
    void *state = calloc(1, o.model->state_size);
    demo_scratch *sc = calloc(1, sizeof *sc);
    if (!state || !sc)
        rc = cli_error(CMD, "out of memory");
    else
        rc = train(be, &o, state, sc, log);
    if (log && fclose(log) != 0 && rc == CLI_EXIT_OK)
        rc = cli_error(CMD, "cannot write the loss log %s: %s", o.loss_log, strerror(errno));
    if (sc)
        demo_clear(sc);
    if (state)
        o.model->release(state);
    free(state);
    free(sc);
    bp_comm_destroy(demo_dp.comm);
    demo_dp = (demo_parallel){NULL, 0, 1};
    bp_context_destroy(ctx);
    return rc;
}

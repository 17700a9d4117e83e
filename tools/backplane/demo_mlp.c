/* backplane demo, the default model: a small MLP on Gaussian blobs.
 *
 * Data: class centres come from bp_random_uniform, points are centre +
 * bp_random_normal noise, so the labels are known by construction.
 * Model: in -> hidden (ReLU) -> classes, softmax cross-entropy, full-batch
 * SGD. No gradient is written by hand: setup records the loss on a graph
 * with the parameters as its inputs, asks bp_graph_grad for the gradients
 * and compiles the whole (docs/gradients.md); each step runs that plan,
 * which gives the logits and the four gradients at once.
 *
 * Data-parallel (demo_dp, --data-parallel): every process draws the same
 * data and weights, keeps rows [r N/p, (r+1) N/p) of the batch, and takes
 * rank 0's weights (bp_broadcast). Its gradients are means over its rows;
 * bp_all_reduce(AVG) makes them the mean over the whole batch, and the loss
 * is summed over the processes, so each step is the one-process step up to
 * rounding. */
#include "demo.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

enum { N_SAMPLES = DEMO_MLP_SAMPLES, N_FEATURES = 8, N_HIDDEN = 32, N_CLASSES = 4 };
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

typedef struct mlp {
    bp_tensor *x, *labels, *onehot;       /* (n, D), (n) i64, (n, C): this process's
                                             n rows of the N */
    bp_tensor *w1, *b1, *w2, *b2;         /* (D, H), (H), (H, C), (C) */
    bp_tensor *lr, *minus_inv_n;          /* scalars */
    bp_graph_exec *step;                  /* params -> logits, dw1, db1, dw2, db2 */
    bp_tensor *grad[4];                   /* this step's, borrowed from the scratch */
} mlp;

/* Rows [first, first + n) of *t, which is replaced (the old one released). */
static bp_status take_rows(bp_tensor **t, int64_t first, int64_t n, demo_scratch *sc)
{
    int64_t starts[2] = {first, 0}, stops[2] = {first + n, INT64_MAX};
    bp_tensor *rows;
    DEMO_TRY(bp_slice(*t, starts, stops, NULL, &rows));
    DEMO_TRY(demo_keep(sc, *t));
    *t = rows;
    return BP_OK;
}

/* *param <- rank 0's *param (the old one released). */
static bp_status from_rank0(bp_tensor **param, demo_scratch *sc)
{
    bp_tensor *same;
    DEMO_TRY(bp_broadcast(demo_dp.comm, *param, 0, &same));
    DEMO_TRY(demo_keep(sc, *param));
    *param = same;
    return BP_OK;
}

/* *grad <- its mean over the processes (kept in the scratch list). */
static bp_status averaged(bp_tensor **grad, demo_scratch *sc)
{
    if (!demo_dp.comm)
        return BP_OK;
    bp_tensor *avg;
    DEMO_OP(avg, bp_all_reduce(demo_dp.comm, *grad, BP_REDUCE_AVG, &avg));
    *grad = avg;
    return BP_OK;
}

static bp_status make_data(mlp *m, bp_backend *be, uint64_t seed, demo_scratch *sc)
{
    int64_t *host_labels = malloc(N_SAMPLES * sizeof *host_labels);
    if (!host_labels) {
        demo_failed_call = "malloc";
        return BP_ERR_OUT_OF_MEMORY;
    }
    for (int64_t i = 0; i < N_SAMPLES; i++)
        host_labels[i] = i % N_CLASSES;
    bp_status st = bp_tensor_from_host(be, BP_I64, 1, (const int64_t[]){N_SAMPLES}, host_labels,
                                       &m->labels);
    free(host_labels);
    if (st != BP_OK) {
        demo_failed_call = "bp_tensor_from_host(labels)";
        return st;
    }
    bp_tensor *jitter, *axes, *separation, *spread, *centres, *per_point, *noise, *classes,
        *label_col, *hit;
    DEMO_OP(jitter, bp_random_uniform(be, BP_F32, 2, (const int64_t[]){N_CLASSES, N_FEATURES},
                                      seed, OFF_CENTRES, -CENTRE_JITTER, CENTRE_JITTER, &jitter));
    DEMO_OP(axes, bp_eye(be, BP_F32, N_CLASSES, N_FEATURES, &axes));
    DEMO_OP(separation, bp_full(be, BP_F32, 0, NULL, CENTRE_SEPARATION, &separation));
    DEMO_OP(spread, bp_mul(axes, separation, &spread));
    DEMO_OP(centres, bp_add(spread, jitter, &centres)); /* (C, D) */
    DEMO_OP(per_point, bp_gather(centres, m->labels, 0, &per_point)); /* (N, D) */
    DEMO_OP(noise, bp_random_normal(be, BP_F32, 2, (const int64_t[]){N_SAMPLES, N_FEATURES},
                                    seed, OFF_NOISE, 0.0, 1.0, &noise));
    DEMO_TRY(bp_add(per_point, noise, &m->x));
    /* one-hot: labels[:, None] == arange(C) */
    DEMO_OP(classes, bp_arange(be, BP_I64, 0, N_CLASSES, 1, &classes));
    DEMO_OP(label_col, bp_reshape(m->labels, 2, (const int64_t[]){N_SAMPLES, 1}, &label_col));
    DEMO_OP(hit, bp_eq(label_col, classes, &hit));
    DEMO_TRY(bp_cast(hit, BP_F32, &m->onehot));
    if (demo_dp.comm) {
        /* this process's rows of the batch */
        int64_t n = N_SAMPLES / demo_dp.size, first = demo_dp.rank * n;
        DEMO_TRY(take_rows(&m->x, first, n, sc));
        DEMO_TRY(take_rows(&m->labels, first, n, sc));
        DEMO_TRY(take_rows(&m->onehot, first, n, sc));
    }
    return BP_OK;
}

/* logits = relu(x w1 + b1) w2 + b2: eagerly, or recorded when the
 * parameters are symbolic (x is then captured). */
static bp_status logits_of(const mlp *m, bp_tensor *const *p, demo_scratch *sc,
                           bp_tensor **logits)
{
    bp_tensor *xw, *z1, *h, *hw;
    DEMO_OP(xw, bp_matmul(m->x, p[0], &xw));
    DEMO_OP(z1, bp_add(xw, p[1], &z1));
    DEMO_OP(h, bp_relu(z1, &h));
    DEMO_OP(hw, bp_matmul(h, p[2], &hw));
    DEMO_OP(*logits, bp_add(hw, p[3], logits));
    return BP_OK;
}

/* The loss of the parameters p, -sum(onehot log_softmax(logits)) / n: the
 * training step demo_compile_step records. */
static bp_status loss_of(const void *self, bp_tensor *const *p, demo_scratch *sc,
                         bp_tensor **logits, bp_tensor **loss)
{
    const mlp *m = self;
    bp_tensor *logp, *picked, *total;
    DEMO_TRY(logits_of(m, p, sc, logits));
    DEMO_OP(logp, bp_log_softmax(*logits, 1, &logp));
    DEMO_OP(picked, bp_mul(m->onehot, logp, &picked));
    DEMO_OP(total, bp_sum(picked, 0, NULL, false, &total));
    DEMO_OP(*loss, bp_mul(total, m->minus_inv_n, loss));
    return BP_OK;
}

static bp_status setup(void *self, bp_backend *be, uint64_t seed, double lr, demo_scratch *sc)
{
    mlp *m = self;
    DEMO_TRY(make_data(m, be, seed, sc));
    /* He initialisation for the ReLU layer, 1/sqrt(fan_in) for the output. */
    DEMO_TRY(bp_random_normal(be, BP_F32, 2, (const int64_t[]){N_FEATURES, N_HIDDEN}, seed,
                              OFF_W1, 0.0, sqrt(2.0 / N_FEATURES), &m->w1));
    DEMO_TRY(bp_zeros(be, BP_F32, 1, (const int64_t[]){N_HIDDEN}, &m->b1));
    DEMO_TRY(bp_random_normal(be, BP_F32, 2, (const int64_t[]){N_HIDDEN, N_CLASSES}, seed,
                              OFF_W2, 0.0, sqrt(1.0 / N_HIDDEN), &m->w2));
    DEMO_TRY(bp_zeros(be, BP_F32, 1, (const int64_t[]){N_CLASSES}, &m->b2));
    if (demo_dp.comm) {
        /* the same seed made the same weights everywhere; a real job sends rank 0's */
        DEMO_TRY(from_rank0(&m->w1, sc));
        DEMO_TRY(from_rank0(&m->w2, sc));
    }
    DEMO_TRY(bp_full(be, BP_F32, 0, NULL, lr, &m->lr));
    DEMO_TRY(bp_full(be, BP_F32, 0, NULL, -1.0 / (N_SAMPLES / demo_dp.size), &m->minus_inv_n));
    return demo_compile_step(m, be, loss_of, 4,
                             (bp_tensor *const[]){m->w1, m->b1, m->w2, m->b2}, sc, &m->step);
}

static void describe(const void *self, FILE *f)
{
    (void)self;
    fprintf(f, "data: %d-class Gaussian blobs, %d samples x %d features\n", N_CLASSES, N_SAMPLES,
            N_FEATURES);
    fprintf(f, "model: MLP %d -> %d (ReLU) -> %d, softmax cross-entropy, full-batch SGD, f32\n",
            N_FEATURES, N_HIDDEN, N_CLASSES);
}

/* One run of the step's plan: the logits, and the gradients kept for
 * backward_update. */
static bp_status forward(void *self, demo_scratch *sc, bp_tensor **logits_out)
{
    mlp *m = self;
    return demo_run_step(m->step, 4, (bp_tensor *const[]){m->w1, m->b1, m->w2, m->b2}, sc,
                         logits_out, m->grad);
}

static bp_status metrics(void *self, const bp_tensor *logits, demo_scratch *sc, double *loss,
                         double *accuracy)
{
    mlp *m = self;
    bp_tensor *logp, *picked, *total, *acc;
    DEMO_OP(logp, bp_log_softmax(logits, 1, &logp));
    DEMO_OP(picked, bp_mul(m->onehot, logp, &picked));
    DEMO_OP(total, bp_sum(picked, 0, NULL, false, &total));
    DEMO_TRY(demo_accuracy(logits, m->labels, sc, &acc));
    if (demo_dp.comm) {
        /* the whole batch's: the sum of every process's sum, the mean of the means */
        bp_tensor *all_total, *all_acc;
        DEMO_OP(all_total, bp_all_reduce(demo_dp.comm, total, BP_REDUCE_SUM, &all_total));
        DEMO_OP(all_acc, bp_all_reduce(demo_dp.comm, acc, BP_REDUCE_AVG, &all_acc));
        total = all_total;
        acc = all_acc;
    }
    double sum_logp = 0.0;
    DEMO_TRY(bp_item_f64(total, &sum_logp));
    DEMO_TRY(bp_item_f64(acc, accuracy));
    *loss = -sum_logp / N_SAMPLES;
    return BP_OK;
}

/* The gradients the step's plan gave (averaged over the processes), then
 * SGD. */
static bp_status backward_update(void *self, const bp_tensor *logits, demo_scratch *sc)
{
    mlp *m = self;
    (void)logits;
    bp_tensor **params[4] = {&m->w1, &m->b1, &m->w2, &m->b2};
    for (int k = 0; k < 4; k++) {
        DEMO_TRY(averaged(&m->grad[k], sc));
        DEMO_TRY(demo_sgd(params[k], m->grad[k], m->lr, sc));
    }
    return BP_OK;
}

static void release(void *self)
{
    mlp *m = self;
    bp_tensor *all[] = {m->x, m->labels, m->onehot, m->w1, m->b1, m->w2, m->b2,
                        m->lr, m->minus_inv_n};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bp_tensor_release(all[i]);
    bp_graph_exec_release(m->step);
}

const demo_model demo_mlp = {
    .name = "mlp",
    .default_steps = 200,
    .default_lr = 0.1,
    .setup = setup,
    .describe = describe,
    .forward = forward,
    .metrics = metrics,
    .backward_update = backward_update,
    .release = release,
    .n_classes = N_CLASSES,
    .data_parallel = true,
    .state_size = sizeof(mlp),
};

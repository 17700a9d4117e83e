/* backplane demo: what the training loop (demo.c) and its models (demo_mlp.c,
 * demo_cnn.c) share. A model makes its data and parameters with the
 * library's RNG, runs a forward pass to logits, measures loss and accuracy,
 * and takes its gradients from bp_graph_grad. */
#ifndef BACKPLANE_DEMO_H
#define BACKPLANE_DEMO_H

#include "cli.h"

enum { DEMO_SCRATCH_MAX = 160, DEMO_MLP_SAMPLES = 1024 };

/* The call that failed, for the message (bp_last_error has the detail):
 * the innermost one, as the failure unwinds through nested DEMO_TRYs. */
extern const char *demo_failed_call;

#define DEMO_TRY(call)                        \
    do {                                      \
        bp_status st_ = (call);               \
        if (st_ != BP_OK) {                   \
            if (!demo_failed_call)            \
                demo_failed_call = #call;     \
            return st_;                       \
        }                                     \
    } while (0)

/* Temporaries of one step, released together at its end. */
typedef struct demo_scratch {
    bp_tensor *t[DEMO_SCRATCH_MAX];
    int n;
} demo_scratch;

bp_status demo_keep(demo_scratch *s, bp_tensor *t);
void demo_clear(demo_scratch *s);

/* DEMO_OP(var, call): run call (which writes var), keep var as a temporary of
 * the scratch list `sc` in scope. */
#define DEMO_OP(var, call)                  \
    do {                                    \
        DEMO_TRY(call);                     \
        DEMO_TRY(demo_keep(sc, (var)));     \
    } while (0)

/* Keep t[0..n) as temporaries; on failure the ones not kept are released
 * too, so the caller owns none of them either way. */
bp_status demo_keep_all(demo_scratch *s, int n, bp_tensor *const *t);

/* *param <- *param - lr * grad, releasing the old parameter. */
bp_status demo_sgd(bp_tensor **param, const bp_tensor *grad, const bp_tensor *lr,
                   demo_scratch *sc);

/* The most parameter tensors a model's training step takes. */
enum { DEMO_PARAMS_MAX = 8 };

/* A model's loss as a function of its parameters p: records the logits and
 * a one-element loss on the graph p are inputs of, keeping every tensor it
 * makes in sc. */
typedef bp_status (*demo_loss_fn)(const void *self, bp_tensor *const *p, demo_scratch *sc,
                                  bp_tensor **logits, bp_tensor **loss);

/* The training step as a plan: loss_of recorded on a graph whose inputs
 * have the dtypes and shapes of params[0..n), the gradients with respect to
 * them appended by bp_graph_grad, compiled into *step, whose outputs are the
 * logits and the n gradients. The symbolic tensors go into sc. */
bp_status demo_compile_step(const void *self, bp_backend *be, demo_loss_fn loss_of, int n,
                            bp_tensor *const *params, demo_scratch *sc, bp_graph_exec **step);

/* One run of a plan demo_compile_step made, on params[0..n): *logits and
 * grads[0..n), borrowed from sc. */
bp_status demo_run_step(bp_graph_exec *step, int n, bp_tensor *const *params, demo_scratch *sc,
                        bp_tensor **logits, bp_tensor **grads);

/* *acc <- the fraction of the rows of logits (n, classes) whose argmax is
 * their label (n) i64: a scalar, kept in sc. */
bp_status demo_accuracy(const bp_tensor *logits, const bp_tensor *labels, demo_scratch *sc,
                        bp_tensor **acc);

/* --data-parallel: this process's place in the job. Each process trains on
 * its share of every batch and averages its gradients with the others'
 * (bp_all_reduce); comm is NULL for a run of one process. */
typedef struct demo_parallel {
    bp_comm *comm;
    int32_t rank, size;
} demo_parallel;
extern demo_parallel demo_dp;

/* One model: state behind `self`, made by setup and freed by release (also
 * after a failed setup). forward keeps what backward needs in the state,
 * borrowed from the scratch list, which the loop clears after each step. */
typedef struct demo_model {
    const char *name;                 /* --model NAME */
    int default_steps;
    double default_lr;
    bp_status (*setup)(void *self, bp_backend *be, uint64_t seed, double lr, demo_scratch *sc);
    void (*describe)(const void *self, FILE *f); /* the data and model lines */
    bp_status (*forward)(void *self, demo_scratch *sc, bp_tensor **logits);
    /* reads two scalars: synchronises */
    bp_status (*metrics)(void *self, const bp_tensor *logits, demo_scratch *sc, double *loss,
                         double *accuracy);
    bp_status (*backward_update)(void *self, const bp_tensor *logits, demo_scratch *sc);
    void (*release)(void *self);
    int n_classes;                    /* for "chance" */
    bool data_parallel;               /* honours demo_dp (--data-parallel) */
    size_t state_size;
} demo_model;

extern const demo_model demo_mlp;
extern const demo_model demo_cnn;

#endif

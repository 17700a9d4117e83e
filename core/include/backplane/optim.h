/* backplane: optimizers (docs/gradients.md). An update is ordinary ops:
 * called on concrete tensors it runs eagerly; called on symbolic ones it
 * records onto their graph, so a whole training step (forward, gradients by
 * bp_graph_grad, the update) compiles into one plan.
 *
 *     bp_optimizer opt = BP_OPTIMIZER_ADAM_INIT;       opt.lr = 3e-4;
 *     bp_tensor *state[1 + 2 * N];                       // bp_optim_state_count
 *     bp_optim_init(&opt, N, params, state);             // zeros, step 0
 *     ...
 *     bp_optim_step(&opt, N, params, grads, state, new_params, new_state);
 *
 * Parameters are immutable tensors: a step returns new parameters and a new
 * state; release the old ones (or pass them as a plan's inputs again). The
 * state is plain tensors: save it with bp_safetensors_save beside the
 * parameters and a run resumes bit for bit. */
#ifndef BACKPLANE_OPTIM_H
#define BACKPLANE_OPTIM_H

#include <stdbool.h>
#include <stdint.h>

#include "export.h"
#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bp_optim_kind {
    BP_OPTIM_SGD = 0,   /* PyTorch's SGD: momentum, dampening, Nesterov, L2 weight decay */
    BP_OPTIM_ADAM = 1,  /* PyTorch's Adam: bias-corrected, L2 weight decay */
    BP_OPTIM_ADAMW = 2  /* PyTorch's AdamW: decoupled weight decay */
} bp_optim_kind;

typedef struct bp_optimizer {
    uint32_t struct_size;    /* sizeof(bp_optimizer): the _INIT macros set it */
    bp_optim_kind kind;
    double lr;
    double momentum;         /* SGD; 0: none (and no state) */
    double dampening;        /* SGD */
    bool nesterov;           /* SGD: needs momentum > 0 and dampening 0 */
    double weight_decay;     /* SGD, Adam: added to the gradient (L2); AdamW: decoupled */
    double beta1, beta2;     /* Adam, AdamW */
    double eps;              /* Adam, AdamW */
    double max_grad_norm;    /* > 0: the gradients are first scaled so that their global
                                L2 norm is at most this (PyTorch's clip_grad_norm_) */
} bp_optimizer;

/* PyTorch's defaults (lr for SGD has none there: 0.01 here). */
#define BP_OPTIMIZER_SGD_INIT {sizeof(bp_optimizer), BP_OPTIM_SGD, 0.01, 0, 0, false, 0, 0, 0, 0, 0}
#define BP_OPTIMIZER_ADAM_INIT                                                                   \
    {sizeof(bp_optimizer), BP_OPTIM_ADAM, 1e-3, 0, 0, false, 0, 0.9, 0.999, 1e-8, 0}
#define BP_OPTIMIZER_ADAMW_INIT                                                                  \
    {sizeof(bp_optimizer), BP_OPTIM_ADAMW, 1e-3, 0, 0, false, 1e-2, 0.9, 0.999, 1e-8, 0}

/* How many state tensors n parameters take: a step counter (a scalar of the
 * first parameter's dtype), then per parameter SGD's momentum buffer (with
 * momentum > 0) or Adam's two moments, parameter by parameter. -1 for an
 * invalid optimizer (bp_optim_init says why). */
BP_API int32_t bp_optim_state_count(const bp_optimizer *opt, int32_t n);

/* The state before the first step: the counter 0 and zeros shaped like each
 * parameter, on the parameters' backend (symbolic when they are). */
BP_API bp_status bp_optim_init(const bp_optimizer *opt, int32_t n, const bp_tensor *const *params,
                               bp_tensor **state);

/* One step: new_params[i] and new_state[...] (as many as
 * bp_optim_state_count) are new tensors; params, grads and state are not
 * changed. params and grads are float tensors, grads[i] of params[i]'s
 * shape and dtype; concrete or symbolic alike. BP_ERR_INVALID_ARGUMENT for
 * a bad optimizer (naming the field), BP_ERR_SHAPE / BP_ERR_DTYPE for a
 * gradient that does not match its parameter, BP_ERR_SHAPE for a state
 * that does not (after the step counter, each state tensor has its
 * parameter's dtype and shape, as bp_optim_init makes them). On failure
 * nothing is set. */
BP_API bp_status bp_optim_step(const bp_optimizer *opt, int32_t n, const bp_tensor *const *params,
                               const bp_tensor *const *grads, const bp_tensor *const *state,
                               bp_tensor **new_params, bp_tensor **new_state);

#ifdef __cplusplus
}
#endif
#endif

/* backplane: graphs. Record ops once on symbolic tensors, compile the
 * recording into a plan, run the plan many times.
 *
 *     bp_graph *g;  bp_tensor *x, *y;  bp_graph_exec *exe;
 *     bp_graph_create(cpu, &g);
 *     bp_graph_input(g, BP_F32, 1, (int64_t[]){n}, &x);  // symbolic: no values
 *     bp_tanh(x, &y);                                      // validated, recorded
 *     bp_graph_output(g, y);
 *     bp_graph_compile(g, NULL, &exe);
 *     bp_graph_run(exe, 1, &concrete_x, 1, &result);       // result: a new tensor
 *
 * Every op of ops.h and nn.h records when one of its inputs is symbolic:
 * the core checks it exactly as in eager mode (same status, same message) at
 * record time. A concrete tensor of the graph's backend mixed with symbolic
 * ones is a captured constant held by reference: it is retained, and its
 * values are read each time the plan runs, never copied into the plan. */
#ifndef BACKPLANE_GRAPH_H
#define BACKPLANE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "dtype.h"
#include "export.h"
#include "opcodes.h"
#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bp_graph bp_graph;           /* a recording */
typedef struct bp_graph_exec bp_graph_exec; /* a compiled plan */

/* A new, empty graph whose plan will run on backend. BP_ERR_INVALID_ARGUMENT
 * for a NULL backend or out. Release with bp_graph_release. */
BP_API bp_status bp_graph_create(bp_backend *backend, bp_graph **out);
/* Drop the caller's reference. The graph's memory goes once its symbolic
 * tensors are released too; plans compiled from it stay valid. NULL: no-op. */
BP_API void bp_graph_release(bp_graph *g);

/* A new symbolic tensor of g: input number k of the plan (k counts the
 * calls, from 0). It holds no values: reading it (bp_tensor_to_host,
 * bp_item_*, bp_tensor_format) is BP_ERR_INVALID_ARGUMENT naming what to do. */
BP_API bp_status bp_graph_input(bp_graph *g, bp_dtype dtype, int32_t rank, const int64_t *shape,
                                bp_tensor **x);
/* Mark t, a symbolic tensor of g, as output number k of the plan (k counts
 * the calls, from 0). BP_ERR_INVALID_ARGUMENT if t is concrete or of
 * another graph. */
BP_API bp_status bp_graph_output(bp_graph *g, const bp_tensor *t);

/* Gradients (docs/gradients.md). Append to g the nodes that compute the
 * gradient of loss, a symbolic float tensor of g with one element, with
 * respect to wrt[0..n): grads[i] receives a new symbolic tensor of wrt[i]'s
 * dtype and shape (zeros where loss does not depend on it). The new nodes
 * are ordinary ops: mark the grads with bp_graph_output, compile and run.
 * Each op's rule is the op table's gradient column; asking for a gradient
 * through an op without one (argmax, comparisons, an integer value...) is
 * BP_ERR_UNSUPPORTED_OP naming the op. wrt must be symbolic tensors of g
 * (pass parameters as bp_graph_input). Call it from the thread recording g,
 * with nothing else recording on g meanwhile. On failure no grad is set
 * (the nodes already appended stay, unused: a compile drops them). */
BP_API bp_status bp_graph_grad(bp_graph *g, const bp_tensor *loss, int32_t n,
                               const bp_tensor *const *wrt, bp_tensor **grads);
/* The vector-Jacobian product: grads[i] = sum over k of seeds[k] times
 * d outputs[k] / d wrt[i] (bp_graph_grad is this with one output and a seed
 * of ones). seeds[k] has outputs[k]'s dtype and shape; it may be symbolic
 * (an input of g, or computed on it) or a concrete tensor of g's backend
 * (captured by reference, like any concrete operand). */
BP_API bp_status bp_graph_vjp(bp_graph *g, int32_t n_out, const bp_tensor *const *outputs,
                              const bp_tensor *const *seeds, int32_t n,
                              const bp_tensor *const *wrt, bp_tensor **grads);

/* The graph a symbolic tensor belongs to (borrowed: it lives while t does),
 * or NULL for a concrete tensor or NULL: what a library handed a symbolic
 * tensor passes to bp_graph_grad. */
BP_API bp_graph *bp_tensor_graph(const bp_tensor *t);

/* The op table's gradient column, for input k of op (its place in the
 * row's IN): how a gradient reaches it. */
typedef enum bp_gradient {
    BP_GRADIENT_NONE = 0,    /* none: the op has no gradient (argmax, compare,
                                integer ops), or k is no input it flows to
                                (indices, a condition) or no input */
    BP_GRADIENT_RULE = 1,    /* the op's rule computes it */
    BP_GRADIENT_ZERO = 2,    /* zero almost everywhere (floor, round, sign) */
    BP_GRADIENT_NOT_YET = 3  /* differentiable, its rule not written yet:
                                asking is BP_ERR_UNSUPPORTED_OP */
} bp_gradient;
BP_API bp_gradient bp_op_gradient(bp_op op, int32_t k);

/* Options for bp_graph_compile; NULL means the defaults. */
typedef struct bp_graph_options {
    uint32_t struct_size;  /* sizeof(bp_graph_options): BP_GRAPH_OPTIONS_INIT */
    int32_t no_merge;      /* non-zero: keep identical nodes apart */
    int32_t no_fuse;       /* non-zero: run every node as recorded (no fused group,
                              no pattern rewritten into one op, no concat part
                              written in place) */
    int32_t fresh_draws;   /* non-zero: each run draws new random values (below) */
} bp_graph_options;
#define BP_GRAPH_OPTIONS_INIT {sizeof(bp_graph_options), 0, 0, 0}

/* Random draws in a plan (bp_random_uniform, bp_random_normal, and what is
 * made of them: bp_dropout's mask...). By default a plan replays them: every
 * run draws the values the recorded seed and offset give, as the eager call
 * would. With fresh_draws, run r of the plan (r counts its runs from 0)
 * draws each node with offset + r * S, S being how many stream positions the
 * plan's draws of that seed span (from the lowest offset to the end of the
 * highest): run 0 is the eager values, and each run continues the stream
 * where the previous one stopped, so no two runs draw the same positions.
 * That is what a training step with dropout wants: a new mask every step,
 * with no recompiling. Runs from several threads each take their own r. */

/* Compile what g recorded so far into a plan: nodes that reach no output
 * dropped, identical nodes (same op, parameters, inputs and views) merged,
 * intermediate buffers shared by liveness. The plan holds its own copy of
 * everything it needs (and references to the captured tensors): releasing
 * g, or recording more on it, does not change it. BP_ERR_INVALID_ARGUMENT if
 * g has no output. */
BP_API bp_status bp_graph_compile(bp_graph *g, const bp_graph_options *opt, bp_graph_exec **exe);

/* What compiling did. */
typedef struct bp_graph_stats {
    uint32_t struct_size;    /* set by the caller: sizeof(bp_graph_stats) */
    int64_t nodes_recorded;  /* nodes on the graph when it was compiled */
    int64_t nodes_live;      /* after dropping the nodes that reach no output */
    int64_t nodes_planned;   /* after merging identical nodes: what a run runs */
    int64_t buffers;         /* intermediate buffers a run allocates */
    int64_t peak_bytes;      /* their total size */
    int64_t sum_bytes;       /* the total size of every intermediate (without
                                reuse); outputs are in neither */
    int64_t donatable_outputs; /* outputs paired with an input whose memory
                                  they take when it is donated */
    int64_t fused_groups;    /* chains of elementwise nodes the backend runs
                                as one call each */
    int64_t nodes_fused;     /* the nodes in them */
    int64_t nodes_prepared;  /* nodes whose work on the plan's constants (a
                                convolution's weights reordered) the backend
                                did once, at compile */
    int64_t epilogues_fused; /* elementwise nodes (a Relu after a convolution)
                                that a prepared node before them computes as
                                it writes, so that they do not run */
} bp_graph_stats;
BP_API bp_status bp_graph_exec_stats(const bp_graph_exec *exe, bp_graph_stats *stats);

/* The plan as text, one line per node in run order, into buf (size bytes,
 * NUL-terminated when size > 0): its counts, the inputs, each node as
 * "v7 = add(v5, c0) : f32 (256, 512)  [buffer 1]" (v<n> a value, c<n> a
 * captured tensor; where the value lives: a pool buffer, an output, or
 * kept inside a fused group; "[prepared]" after a node whose backend
 * prepared it), the fused groups with their nodes, the outputs. *needed (when needed is not NULL) receives the bytes the text
 * takes, its NUL included; BP_ERR_INVALID_ARGUMENT when it does not fit
 * (buf then holds its beginning). buf may be NULL with size 0 to ask. */
BP_API bp_status bp_graph_exec_format(const bp_graph_exec *exe, char *buf, size_t size,
                                      size_t *needed);

/* Run the plan: inputs[k] for input k (a concrete tensor of the plan's
 * backend, of the dtype and shape it was recorded with: else BP_ERR_DTYPE or
 * BP_ERR_SHAPE, or BP_ERR_BACKEND_MISMATCH, naming inputs[k]); outputs[k]
 * receives a new tensor for output k, which the caller releases. Every node
 * runs through the same op path as an eager call, so the results have
 * eager's bits. n_in and n_out must equal the numbers of inputs and outputs.
 * Runs queue like ops: nothing is synchronised. Safe from several threads. */
BP_API bp_status bp_graph_run(bp_graph_exec *exe, int32_t n_in, bp_tensor *const *inputs,
                              int32_t n_out, bp_tensor **outputs);
/* bp_graph_run, the caller giving up the inputs k with donate[k] true
 * (donate NULL: none; JAX's and PJRT's donation): an output may then be
 * written into a donated input's memory, so a step that turns parameters
 * into new parameters does not hold both. The plan pairs an output with an
 * input of its dtype and element count that no node reads after the output
 * is first written (bp_graph_exec_stats: donatable_outputs); the memory is
 * taken where it is the input's alone (no other handle, view, cached copy
 * or DLPack export of it, not another input of the call, not another
 * library's memory), else the output is allocated as usual. Once the inputs pass bp_graph_run's checks, each
 * donated handle is given up whatever the outcome (a run that fails may have
 * written over it): using it is BP_ERR_INVALID_ARGUMENT, as after
 * bp_backend_transfer; release it as usual. Donating one tensor twice in a
 * call is BP_ERR_INVALID_ARGUMENT. */
BP_API bp_status bp_graph_run_donating(bp_graph_exec *exe, int32_t n_in, bp_tensor *const *inputs,
                                       const bool *donate, int32_t n_out, bp_tensor **outputs);
/* From the next run on, the plan reads replacement wherever it read
 * captured: a tensor captured when the graph was recorded (or put there by
 * an earlier bind). Nothing is recompiled: a captured tensor is held by
 * reference, and this replaces the reference (a run already going on reads
 * the one it started with). replacement is a concrete tensor of the plan's
 * backend with captured's dtype and shape (else BP_ERR_BACKEND_MISMATCH,
 * BP_ERR_DTYPE, BP_ERR_SHAPE); the plan retains it and releases captured.
 * BP_ERR_INVALID_ARGUMENT if the plan does not read captured. Safe while
 * other threads run the plan. */
BP_API bp_status bp_graph_exec_bind(bp_graph_exec *exe, const bp_tensor *captured,
                                    bp_tensor *replacement);
/* The run number the next run of a plan compiled with fresh_draws takes
 * (runs after it count on from there): set it to a saved step to draw what
 * that step drew, when a run is repeated or training resumes from a
 * checkpoint. BP_ERR_INVALID_ARGUMENT if exe was compiled without
 * fresh_draws (its runs all draw alike). */
BP_API bp_status bp_graph_exec_seek_draws(bp_graph_exec *exe, uint64_t run);
/* Per-step times (a profile). bp_graph_exec_profile(exe, 1) clears the
 * plan's times and has every run from then on time each step it takes: a
 * node, a prepared node with the node it computes as it writes (its
 * epilogue), or a fused group. After each step the run waits for the
 * backend (bp_synchronize), so that a step's time is its own work on a
 * backend that queues too; a profiled run is slower by those waits.
 * bp_graph_exec_profile(exe, 0) stops timing; the times stay readable until
 * the next start. Runs from several threads add to the same times. A run
 * already going on when the profile starts or stops keeps what it began
 * with. bp_graph_exec_format adds each step's time to its listing. */
BP_API bp_status bp_graph_exec_profile(bp_graph_exec *exe, int32_t on);

/* One timed step, in run order. */
typedef struct bp_graph_step_time {
    uint32_t struct_size;  /* set by the caller: sizeof(bp_graph_step_time) */
    int32_t node;          /* the step's first node, counting the plan's nodes
                              from 0 in run order (bp_graph_exec_format's node
                              lines, fused groups' included) */
    int32_t nodes;         /* how many nodes the step ran: 1, 2 for a prepared
                              node with its epilogue, a fused group's count */
    bp_op op;              /* the first node's op */
    int32_t value;         /* the first node's first output: v<value> in the
                              listing (-1: it has none) */
    int32_t fused_group;   /* the step's fused group, or -1 */
    int64_t runs;          /* profiled runs that took this step */
    double seconds;        /* their total time in it */
} bp_graph_step_time;
/* How many steps the profile has timed (0 before a profiled run), and step
 * i of them (BP_ERR_INVALID_ARGUMENT for i out of [0, count)). */
BP_API int32_t bp_graph_exec_profile_count(const bp_graph_exec *exe);
BP_API bp_status bp_graph_exec_profile_step(const bp_graph_exec *exe, int32_t i,
                                            bp_graph_step_time *out);
/* Release a plan and its references to captured tensors. NULL: no-op. */
BP_API void bp_graph_exec_release(bp_graph_exec *exe);

#ifdef __cplusplus
}
#endif
#endif

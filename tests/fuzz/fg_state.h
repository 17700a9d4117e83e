/* fuzz_graph's state: one graph on one backend, the values recorded on it
 * (each with the eager tensor the same calls give), the steps that made
 * them (to replay eagerly on new inputs), the outputs marked and the
 * plans compiled. */
#ifndef FG_STATE_H
#define FG_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include <backplane/backplane.h>

#include "fz_bytes.h"
#include "fz_op_args.h"

#define FG_VALUES 40
#define FG_STEPS 48           /* recorded steps (and the actions that make them) */
#define FG_INPUTS 3
#define FG_OUTPUTS 8
#define FG_CONSTS 8           /* constants over harness memory (DLPack) */
#define FG_CONST_BYTES 512
#define FG_CAP_ELEMS 1024     /* operands of at most this many elements */
#define FG_GARBAGE ((bp_tensor *)(uintptr_t)0x10)

typedef enum fg_origin {
    FG_INPUT,  /* bp_graph_input */
    FG_CONST,  /* a concrete tensor the harness made: captured when mixed in */
    FG_EAGER,  /* an op on concrete tensors only: run at once, a constant too */
    FG_STEP    /* recorded: symbolic, its eager twin recomputed per input set */
} fg_origin;

typedef struct fg_value {
    fg_origin origin;
    bp_tensor *sym;    /* what the graph side passes: symbolic, or concrete for
                          FG_CONST / FG_EAGER (then the eager side passes it too) */
    bp_tensor *eager;  /* FG_INPUT / FG_STEP: the eager twin for the current inputs */
    int input;         /* FG_INPUT: its number */
    int step, out;     /* FG_STEP: which step made it, which of its outputs */
    bool poisoned;     /* FG_STEP: its eager twin failed for index values (or
                          one of its operands is poisoned): a plan whose outputs
                          need it must fail with BP_ERR_INDEX; `eager` is then
                          a stand-in of zeros of its dtype and shape */
} fg_value;

typedef enum fg_kind { FG_OP, FG_RESHAPE, FG_SQUEEZE, FG_UNSQUEEZE } fg_kind;

/* A recorded call, kept to call again eagerly on other inputs. */
typedef struct fg_step {
    fg_kind kind;
    bp_op op;
    int in[5];             /* value indices, -1: NULL */
    bool on_rec;           /* a creation op: on the recording backend */
    bool fuzzed_args;      /* its arguments fuzzed: its result may be huge */
    bpt_op_args a;         /* its pointers point into store (or static data) */
    fz_op_store store;
    int32_t rank;          /* reshape's shape; squeeze's axes (n_axes) */
    int64_t shape[BP_MAX_RANK];
    int32_t n_axes, axes[BP_MAX_RANK], axis;
    int out[2];            /* the values it made, -1 */
} fg_step;

typedef struct fg_const {
    DLManagedTensor m;
    int64_t shape[BP_MAX_RANK];
    _Alignas(64) unsigned char bytes[FG_CONST_BYTES];
    bp_dtype dtype;
    int64_t numel;
    int deleted;           /* runs of its deleter */
    bool lent;             /* an import took it */
} fg_const;

typedef struct fg_plan {
    bp_graph_exec *exe;
    int n_out;             /* the outputs marked when it was compiled */
    bool fresh;            /* compiled with fresh_draws */
} fg_plan;

typedef struct fg_state {
    fz_in in;
    bp_context *ctx;
    bp_backend *be;        /* the graph's backend: binary or blas_cpu */
    bp_backend *other;     /* the other one */
    bp_graph *g;           /* NULL once released */
    bp_backend *rec;       /* its recording backend */
    bool syms_released;    /* the symbolic tensors went: nothing more is recorded */
    fg_value v[FG_VALUES];
    int n_values;
    fg_step step[FG_STEPS];
    int n_steps;
    int input_value[FG_INPUTS]; /* the value of each graph input */
    int n_inputs;
    int output_value[FG_OUTPUTS];
    int n_outputs;
    fg_plan early;         /* compiled half way through recording, or none */
    fg_const c[FG_CONSTS];
    int n_consts;
} fg_state;

/* ---- fuzz_graph.c ----------------------------------------------------------- */
/* A new value (its index), or -1 when the table is full (t is released). */
int fg_value_add(fg_state *s, fg_origin origin, bp_tensor *sym, bp_tensor *eager);
/* The tensor each side passes for value i (-1: NULL). */
bp_tensor *fg_sym(const fg_state *s, int i);
bp_tensor *fg_eager(const fg_state *s, int i);
/* A value index from the input, or -1 (NULL) now and then. */
int fg_value_pick(fg_state *s);
/* Small random shapes and data. */
int32_t fg_small_shape(fg_state *s, int64_t *shape);
bp_status fg_from_host(fg_state *s, bp_backend *be, bp_dtype dt, int32_t rank,
                       const int64_t *shape, bp_tensor **out);

/* ---- fg_record.c ------------------------------------------------------------- */
void fg_act_op(fg_state *s);        /* an op of the op table */
void fg_act_view(fg_state *s);      /* reshape, squeeze, unsqueeze */
void fg_act_bad_shapes(fg_state *s);
void fg_act_conv(fg_state *s);      /* a convolution a backend may prepare, its epilogues */
/* Call step k eagerly on the current eager values: its status and outputs. */
bp_status fg_step_eager(fg_state *s, int k, bp_tensor **o1, bp_tensor **o2);
/* A stand-in twin for a poisoned value: zeros like t. */
bp_tensor *fg_stand_in(fg_state *s, const bp_tensor *t);

/* ---- fg_plan.c ----------------------------------------------------------------- */
void fg_act_output(fg_state *s);
void fg_act_compile_early(fg_state *s);
/* After recording: compile, run with wrong and right inputs, compare with
 * eager, run again, on new inputs too. */
void fg_finish(fg_state *s);
/* Values of plan outputs against eager tensors, byte for byte. */
/* plan's bytes are eager's; fused (the plan has fused groups): a NaN made
 * from two NaNs may have another sign or payload; prepared (the backend
 * prepared nodes of the plan): no values are compared (fg_plan.c). */
void fg_same(const char *what, const bp_tensor *plan, const bp_tensor *eager, bool fused,
             bool prepared);

#endif

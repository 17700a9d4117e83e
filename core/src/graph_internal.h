/* Graphs: what recording (graph_record.c), compiling (graph_compile.c) and
 * running (graph_run.c) share. Nothing here is API. */
#ifndef BP_GRAPH_INTERNAL_H
#define BP_GRAPH_INTERNAL_H

#include "internal.h"

/* An operand of a node: a value slot (>= 0), a captured tensor
 * (BP__GREF_CAP(c) for caps[c]), or absent (an optional view not given). */
#define BP__GREF_NONE INT32_MIN
#define BP__GREF_CAP(c) (-1 - (int32_t)(c))
#define BP__GREF_IS_CAP(r) ((r) < 0 && (r) != BP__GREF_NONE)
#define BP__GREF_CAP_INDEX(r) (-1 - (r))

/* A recording backend's buffer: the token of one value slot. */
typedef struct bp__gtoken {
    struct bp_graph *graph;
    int32_t slot;
} bp__gtoken;

typedef struct bp__gslot {
    bp__gtoken *token;
    size_t bytes;
    int32_t input;           /* input number, or -1 (written by nodes) */
} bp__gslot;

/* Where a graph's nodes keep their views, parameters and index rules
 * (graph_arena.c): chunks that never move, shared by the graph and every
 * plan compiled from it, freed with the last of them. Taking from it is
 * guarded by the graph's lock; what was taken is never written again. */
typedef struct bp__garena bp__garena;
bp__garena *bp__garena_new(void);
/* bytes of memory aligned for any type, or NULL: out of memory. */
void *bp__garena_take(bp__garena *a, size_t bytes);
void bp__garena_retain(bp__garena *a);
void bp__garena_release(bp__garena *a);

/* The parameters of every node whose op was given none (bp__params()): one
 * block for all of them. */
extern const bp_op_params bp__graph_no_params;

/* One recorded op: its views as the op entry got them, each buffer
 * replaced by an operand reference (ref). Captured views keep their byte
 * offset into the captured storage; slot views their offset in the slot.
 * The views (n_in + n_out of them; an absent one is zero), the parameters
 * and the index rule live in the graph's arena; a plan's copy of the node
 * points at the same ones.
 * check: the index values that the run checks on the host before the node
 * (index_check.c), the op's input view check->input; NULL: none. */
typedef struct bp__gnode {
    bp_op op;
    int32_t n_in, n_out;
    int32_t ref[2 * BP__GRAPH_MAX_IO];  /* inputs, then outputs */
    const bp_view *view;
    const bp_op_params *params;
    const bp__index_rule *check;
} bp__gnode;

typedef struct bp__goutput {
    int32_t slot;
    bp_dtype dtype;
    int32_t rank;
    int64_t shape[BP_MAX_RANK];
} bp__goutput;

typedef struct bp__ginput {
    int32_t slot;
    bp_dtype dtype;
    int32_t rank;
    int64_t shape[BP_MAX_RANK];
} bp__ginput;

struct bp_graph {
    atomic_long refs;        /* the caller's 1 + one per live symbolic storage */
    pthread_mutex_t lock;    /* guards everything below (recording appends) */
    bp_backend *real;        /* the backend the plan runs on */
    bp_backend rec;          /* the recording backend: rec.graph == this */
    bp__gslot *slots;
    int32_t n_slots, cap_slots;
    bp__garena *arena;       /* the nodes' views, parameters and rules */
    bp__gnode *nodes;
    int32_t n_nodes, cap_nodes;
    bp_tensor **caps;        /* captured tensors, retained */
    int32_t n_caps, cap_caps;
    bp__ginput *inputs;
    int32_t n_inputs, cap_inputs;
    bp__goutput *outputs;
    int32_t n_outputs, cap_outputs;
};

/* A fused group of the plan (graph_fuse.c): nodes first .. last, run by the
 * plugin's fused_run as one program. in_ref/in_view: its operands (a slot or
 * a captured tensor, through the view the nodes read them by); out_ref/
 * out_view: the values it writes to memory (read after the group, or
 * outputs of the plan); the others live only inside the plugin's call. */
#define BP__FUSE_MAX_IN 16
typedef struct bp__ggroup {
    int32_t first, last;
    int32_t n_steps, n_in, n_out;
    bp_fused_step steps[BP_FUSED_MAX_STEPS];
    int32_t out_step[BP_FUSED_MAX_STEPS];
    int32_t in_ref[BP__FUSE_MAX_IN];
    bp_view in_view[BP__FUSE_MAX_IN];
    int32_t out_ref[BP_FUSED_MAX_STEPS];
    bp_view out_view[BP_FUSED_MAX_STEPS];
} bp__ggroup;

/* slot_buffer of a value inside an epilogue chain the backend took (the
 * prepared node's output and each step's but the last): no pool buffer. A
 * run writes it only when the chain runs node by node (a bind replaced the
 * prepared weights); it then takes a buffer of its own for that chain's
 * nodes alone (graph_run.c). */
#define BP__SLOT_CHAINED (-3)

/* The compiled plan: self-contained (its own nodes, references to the
 * captured tensors and the context). */
struct bp_graph_exec {
    bp_context *ctx;
    bp_backend *real;
    bp__garena *arena;       /* the graph's: what the nodes point at */
    bp__gnode *nodes;        /* in run order */
    int32_t n_nodes;
    int32_t n_slots;
    int32_t *slot_buffer;    /* per slot: pool buffer, or -1 (input, output), or
                                BP__SLOT_CHAINED */
    size_t *chained_bytes;   /* per slot: a BP__SLOT_CHAINED slot's bytes (NULL when
                                there is none) */
    int32_t *slot_output;    /* per slot: the first output backed by it, or -1 */
    size_t *buffer_bytes;    /* per pool buffer */
    int32_t n_buffers;
    bp_tensor **caps;        /* guarded by caps_lock (bp_graph_exec_bind) */
    int64_t *cap_offset;     /* per capture: the byte offset its views were made at */
    int32_t n_caps;
    pthread_mutex_t caps_lock;
    bp__ginput *inputs;
    int32_t n_inputs;
    int32_t *input_of_slot;  /* per slot: input number or -1 */
    bp__goutput *outputs;
    int32_t n_outputs;
    int32_t *donor_of_output; /* per output: the input whose memory it may take
                                 when that input is donated (read for the last
                                 time before the output is first written), or -1 */
    bp__ggroup *groups;      /* fused groups, in run order */
    int32_t n_groups;
    int32_t *group_of_node;  /* per node: its group, or -1; NULL: no group */
    bool fresh_draws;        /* compiled with fresh_draws: runs take a number */
    uint64_t *draw_stride;   /* per node: what its offset advances per run (a
                                random node of a fresh_draws plan), else 0;
                                NULL: no such node */
    _Atomic uint64_t draw_run; /* the number the next run takes */
    void **prepared;         /* per node: what the backend's prepare made, or
                                NULL; NULL: no node is prepared (graph_prepare.c) */
    bp_tensor **prepared_caps; /* per capture: the tensor the nodes were
                                  prepared with (retained), NULL when none */
    int8_t *epilogue;        /* per node: n > 0, the n nodes after it are
                                computed by its prepared call (a Relu: plugin
                                ABI 1.14's prepare_epilogue; a chain such as
                                add, relu: 1.15's prepare_epilogues) and do
                                not run while it runs prepared; -1, it is one
                                of those; NULL: none */
    bp_graph_stats stats;
    struct bp__gprofile *_Atomic profile; /* per-step times (graph_profile.c):
                                             NULL until a profile first starts */
};

/* A plan's per-step times (graph_profile.c): per node, the time and count
 * of the steps that began at it, and how many nodes the last of them ran. */
typedef struct bp__gprofile {
    _Atomic bool on;
    _Atomic int64_t *ns, *runs;
    _Atomic int32_t *nodes;
} bp__gprofile;

/* The profile a run that starts now times into, or NULL. */
bp__gprofile *bp__graph_profile_of(const bp_graph_exec *e);
/* Now, in nanoseconds of the monotonic clock. */
int64_t bp__graph_profile_now(void);
/* The step that began at node i and ran `nodes` nodes from t0 on: waits for
 * the backend, then adds its time. */
bp_status bp__graph_profile_step(const bp_graph_exec *e, bp__gprofile *p, int32_t i,
                                 int32_t nodes, int64_t t0);
void bp__graph_profile_release(bp_graph_exec *e);

/* The planning scratch of graph_compile.c, per slot: the plan positions
 * (node indices) of its first write and last use, whether it is a plan
 * output, its size; internal: a value a fused group keeps to itself. */
typedef struct bp__gplan {
    int32_t *first_def, *last_use, *last_write;
    bool *is_output, *internal;
    size_t *bytes;
} bp__gplan;

/* Whether op is of the kinds a fused group's steps are (UNARY, BINARY,
 * WHERE, and CAST). */
bool bp__graph_elementwise_op(bp_op op);
/* Group the plan's chains of elementwise nodes where its backend takes
 * them (plugin ABI 1.9's fused_takes): fills e->groups and
 * e->group_of_node, marks the values each group keeps to itself, and
 * widens the lifetimes of its operands and results to the whole group (so
 * no buffer is reused inside it). false: out of memory. */
bool bp__graph_fuse(bp_graph_exec *e, bp__gplan *p);
/* Whether the fused group that writes out_slot may write it over in_slot's
 * memory: in_slot is read by nothing after the group, and inside it only
 * through out_slot's own geometry (plugin.h: each element is read before
 * it is written). */
bool bp__graph_fused_overwrite(const bp_graph_exec *e, const bp__gplan *p, int32_t in_slot,
                               int32_t out_slot);

/* For a plan compiled with fresh_draws: e->draw_stride, what each random
 * node's offset advances per run (graph_draws.c); left NULL when the plan
 * draws nothing. false: out of memory. */
bool bp__graph_draw_strides(bp_graph_exec *e);
/* Node i's parameters for run number run: its own, or (a random node of a
 * fresh_draws plan) a copy in scratch with the offset advanced. */
const bp_op_params *bp__graph_draw_params(const bp_graph_exec *e, int32_t i, uint64_t run,
                                          bp_op_params *scratch);

/* The backend's prepare (plugin ABI 1.13) for each node the plan runs
 * alone that reads a captured tensor (graph_prepare.c): fills e->prepared
 * and e->prepared_caps and counts them in e->stats. Call last, on a plan
 * otherwise complete. A failure is the plugin's (out of memory): the
 * caller releases e. */
bp_status bp__graph_prepare(bp_graph_exec *e);
/* Before buffers are planned: mark each node that may compute the node
 * after it as its prepared call writes (bp_graph_exec.epilogue: an
 * elementwise unary node, alone the reader of the node's one output), where
 * the backend has prepare_epilogue, and move the first write of that
 * node's output to the node before (it may be written there). The
 * backend's answer comes with bp__graph_prepare, which clears the marks it
 * declines. false: out of memory. */
bool bp__graph_epilogue_candidates(bp_graph_exec *e, bp__gplan *p);
/* Before fusing: offer the backend's prepare_epilogues (plugin ABI 1.15)
 * each node that would be prepared followed by a chain of elementwise
 * nodes, each the only reader of the value before it, with at least one
 * binary (a residual add, then its Relu); a chain it takes is prepared
 * now, its nodes are marked (bp_graph_exec.epilogue) so that no group
 * takes them, and the first write of its last value moves to the
 * prepared node. A failure is the plugin's (out of memory) or
 * BP_ERR_OUT_OF_MEMORY. */
bp_status bp__graph_epilogue_chains(bp_graph_exec *e, bp__gplan *p);
/* Whether node i runs through the backend's prepared_op in a run reading
 * the captured tensors caps: it was prepared, and reads the tensors it was
 * prepared with (no bind replaced one). */
bool bp__graph_prepared_current(const bp_graph_exec *e, int32_t i, bp_tensor *const *caps);
/* Hand each prepared node's state back to the backend (prepared_free) and
 * release the tensors they were made with. */
void bp__graph_prepared_release(bp_graph_exec *e);

/* Replace the plan's patterns that one op of the backend computes
 * (graph_rewrite.c: softmax and log_softmax written with primitives) by
 * that op; the nodes they replace are dropped from e->nodes. is_output: per
 * slot. Returns how many were rewritten, or -1: out of memory. */
int32_t bp__graph_rewrite(const bp_graph *g, bp_graph_exec *e, const bool *is_output);
/* Drop the plan's nodes marked dead (before any fused group is formed:
 * the nodes after them move up). */
void bp__graph_drop_nodes(bp_graph_exec *e, const bool *dead);
/* Concatenation in place (graph_concat.c): where a concat part is a value
 * that one node writes whole and only the part's copy reads, that node
 * writes into the joined value's slice and the copy is dropped from
 * e->nodes. p: the plan's lifetimes (stale afterwards). Returns how many
 * copies were dropped, or -1: out of memory. */
int32_t bp__graph_concat_in_place(const bp_graph *g, bp_graph_exec *e, const bp__gplan *p);

/* Whether two views read the same elements in the same places (the stride
 * of an axis of extent 1 is never used: a broadcast view gives it 0, a
 * dense one its row size). The buffers are not compared. */
static inline bool bp__view_same_elements(const bp_view *a, const bp_view *b)
{
    if (a->offset != b->offset || a->dtype != b->dtype || a->rank != b->rank)
        return false;
    for (int32_t k = 0; k < a->rank; k++)
        if (a->shape[k] != b->shape[k] || (a->shape[k] != 1 && a->strides[k] != b->strides[k]))
            return false;
    return true;
}

/* Grow *arr (of *cap elements of size elem) to hold at least need. */
bool bp__graph_grow(void **arr, int32_t *cap, int32_t need, size_t elem);

#endif

/* libbackplane_conform internals: what the files of conform/src/ share (the
 * public API is include/backplane/conform.h; cf_ names are internal).
 *
 *   api.c            the bp_conform_* functions: options, selection, results
 *   error.c          bp_conform_last_error
 *   cases.c          the one table of cases (op x dtype x shape x data), assembled
 *                    from cases_<concept>.c, compose.c and cases_nn.c
 *   call.c           a case's parameters handed to the op (the public API)
 *   case_oracle.c    a case's parameters handed to the oracle
 *   oracle/          the oracle, shared with the op tests (oracle/oracle.h)
 *   tolerances.c     the tolerance file (embedded at build time)
 *   compare.c        a result against the oracle, within a tolerance
 *   inputs.c         a case's inputs: special values, random data, tensors
 *   exec.c           running one case in the worker against the backend
 *   contract.c       the plugin-contract rows run in the worker
 *   worker.c         the worker process and its side of the result pipe
 *   run.c            the parent: workers, the result pipe, crash/timeout isolation
 *   report.c         totals and the report a person reads
 *   json.c           JSON lines, written and read back with cJSON
 *   matrix.c         the Markdown matrices */
#ifndef BP_CONFORM_INTERNAL_H
#define BP_CONFORM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <backplane/backplane.h>
#include <backplane/conform.h>

#include "oracle.h"

/* ---- status of one case --------------------------------------------------- */
typedef enum cf_status { CF_PASS, CF_FAIL, CF_UNSUPPORTED, CF_CRASH, CF_TIMEOUT } cf_status;
const char *cf_status_name(cf_status s); /* "PASS", "FAIL", ... */

/* ---- the case table --------------------------------------------------------- */
enum {
    CF_MAX_OPERANDS = 3,
    CF_OP_CONTRACT_ABI = 1000, /* pseudo op codes for the contract rows */
    CF_OP_CONTRACT_ROUNDTRIP,
    CF_OP_CONTRACT_SUPPORTS,
    CF_OP_CONTRACT_STDOUT,
    /* pseudo op codes of the ops the core composes (compose.c) */
    CF_OP_SPLIT = 1100,
    CF_OP_TILE,
    CF_OP_DEPTH_TO_SPACE,
    CF_OP_SPACE_TO_DEPTH,
    CF_OP_MAX_N,
    CF_OP_MIN_N,
    CF_OP_SUM_N,
    CF_OP_MEAN_N,
    CF_OP_EINSUM,
    CF_OP_COMPOSE_END
};

/* How the inputs are filled. */
typedef enum cf_data { CF_RANDOM, CF_SPECIAL, CF_RANGE } cf_data;

typedef struct cf_case {
    int op;                       /* a bp_op, or a CF_OP_CONTRACT_* */
    const char *name;             /* "add", "contract.abi" */
    bp_dtype dtype;               /* the input dtype (the row of the matrix) */
    bp_dtype dtype2;              /* cast target; gather index dtype; where cond is bool */
    int n_in;                     /* operands */
    int32_t rank[CF_MAX_OPERANDS];
    int64_t shape[CF_MAX_OPERANDS][BP_MAX_RANK];
    cf_data data;
    double lo[CF_MAX_OPERANDS], hi[CF_MAX_OPERANDS]; /* range of random data */
    int variant;                  /* op-specific parameters (axes, perm, slice...) */
    int64_t pi[4];                /* integer parameters (each cases_<concept>.c says) */
    double pf[2];                 /* ... and real ones (alpha, beta, correction) */
    uint64_t seed;
    char label[96];               /* shape as printed: "(2,1),(1,3)" */
} cf_case;

/* Every case, in a fixed order. *out is malloc'd. */
size_t cf_cases_build(cf_case **out);

/* Building the table (cases.c): cases are appended; oom records a failed
 * growth (the build then fails as a whole). */
typedef struct cf_builder {
    cf_case *v;
    size_t n, cap;
    bool oom;
} cf_builder;
/* One case: shapes "2,1,5;3,1" (one per operand, "()" rank 0), random data
 * in [lo, hi) (every operand; adjust c->lo[k] / c->hi[k] after), the
 * variant; its label is the shapes. NULL when out of memory. */
cf_case *cf_case_add(cf_builder *b, int op, const char *name, bp_dtype dt, const char *shapes,
                     cf_data data, double lo, double hi, int variant);
void cf_case_suffix(cf_case *c, const char *s); /* appended to the label */
void cf_int_range(bp_dtype dt, double *lo, double *hi); /* a float range clipped to dt */
/* The same for an op of opcodes.h's table: named by the table, its random
 * range clipped to an integer dtype, `what` (may be NULL) appended to the
 * label. */
cf_case *cf_add_op(cf_builder *b, bp_op op, bp_dtype dt, const char *shapes, cf_data data,
                   double lo, double hi, const char *what);
/* The dtypes the op's row accepts (*n of them; oracle/dtypes.c's sets). */
const bp_dtype *cf_op_dtypes(bp_op op, int *n);
/* Sizes just past blas_cpu's threading grains (BPC_GRAIN_LIGHT / _HEAVY),
 * and the one for the op's cost class. */
#define CF_BIG_LIGHT "65537"
#define CF_BIG_HEAVY "4097"
const char *cf_big_shape(bp_op op);
/* Each concept's cases, appended in the table's order (cases.c assembles
 * them): cases_elementwise.c, cases_reduce.c, cases_linalg.c, cases_axis.c,
 * cases_movement.c, cases_index.c, cases_creation.c, and the ops the core
 * composes from others (compose.c). */
void cf_cases_elementwise(cf_builder *b);
void cf_cases_reduce(cf_builder *b);
void cf_cases_linalg(cf_builder *b);
void cf_cases_axis(cf_builder *b);
void cf_cases_movement(cf_builder *b);
void cf_cases_index(cf_builder *b);
void cf_cases_creation(cf_builder *b);
void cf_cases_compose(cf_builder *b);
static inline bool cf_is_compose(int op) { return op >= CF_OP_SPLIT && op < CF_OP_COMPOSE_END; }
/* Whether the case's name matches any of the fnmatch patterns (none: all). */
bool cf_case_selected(const cf_case *c, const char *const *patterns, size_t n_patterns);

/* ---- tolerances ------------------------------------------------------------- */
typedef enum cf_tol_kind { CF_TOL_EXACT, CF_TOL_ULP, CF_TOL_NORM } cf_tol_kind;

typedef struct cf_tol {
    cf_tol_kind kind;
    double value;   /* ULP: ulps; NORM: c in c * K * eps */
    double atol;    /* ULP only: absolute slack (cancellation near zero) */
    int line;       /* line in the tolerance file (0: the built-in default) */
    const char *reason; /* valid while its table lives */
} cf_tol;

/* A parsed tolerance file: one per run, never global. */
typedef struct cf_tol_table cf_tol_table;

/* Parse a tolerance file: path, or the embedded table when path is NULL.
 * NULL on failure, with *status (BP_ERR_IO: unreadable; BP_ERR_FORMAT: a bad
 * line, named as "FILE:LINE: ..."; BP_ERR_OUT_OF_MEMORY) and the message. */
cf_tol_table *cf_tol_load(const char *path, bp_status *status, char *err, size_t err_size);
void cf_tol_free(cf_tol_table *t);
/* The first entry matching op name and dtype (tf32: the backend computes f32
 * matmuls in TF32, so `when=tf32` entries apply). Exact if none matches. */
cf_tol cf_tol_find(const cf_tol_table *t, const char *op, bp_dtype dt, bool tf32);
/* The embedded tolerance file (generated at build time). */
extern const char cf_tolerance_text[];

/* Compare got with want (unrounded oracle values for floats). scale (NORM
 * only, may be NULL) gives each element's magnitude of terms; k is the inner
 * dimension. Fills max_error / tolerance and a message naming the first
 * offending element on failure. */
bool cf_compare(const cf_array *got, const cf_array *want, const double *scale, int64_t k,
                cf_tol tol, bool tf32, double *max_error, double *tolerance, int64_t *first_bad,
                char *msg, size_t msg_size);

/* ---- the case's oracle (case_oracle.c) ------------------------------------------ */
/* The expected output of case c from its inputs (decoded from what the
 * backend holds), by oracle/oracle.h's contract (want initialised here;
 * *scale malloc'd for norm-wise ops, else NULL; *k the terms per element).
 * false if out of memory or the oracle does not know the case (a bug in the
 * table). */
bool cf_case_oracle(const cf_case *c, const cf_array *in, int n_in, cf_array *want,
                    cf_array *want2, double **scale, int64_t *k);

/* The case's parameters, by its variant (cases_<concept>.c): shared by the
 * op call in the worker and the oracle. */
void cf_reduce_axes(const cf_case *c, int32_t *n_axes, int32_t *axes, bool *keepdims);
const int32_t *cf_transpose_perm(const cf_case *c); /* NULL: reverse */
void cf_slice_params(const cf_case *c, int64_t *starts, int64_t *stops, int64_t *steps,
                     bool *has_stops);
void cf_pad_params(const cf_case *c, int64_t *before, int64_t *after, double *value);
int32_t cf_axis_param(const cf_case *c); /* concat / gather / softmax axis */
void cf_arange_params(const cf_case *c, double *start, double *stop, double *step);
double cf_fill_value(const cf_case *c);
void cf_broadcast_target(const cf_case *c, int32_t *rank, int64_t *shape);

/* ---- results ------------------------------------------------------------------ */
typedef struct cf_result {
    int index;            /* case index in the table (-1: synthesized) */
    cf_status status;
    double max_error, tolerance;
    bool supports_mismatch;
    char op[48], dtype[16], shape[96];
    char message[600];
} cf_result;

/* Set r->message, printf-style. */
#define CF_MSG(r, ...) snprintf((r)->message, sizeof (r)->message, __VA_ARGS__)

/* Run one case in the worker (ctx/backend opened there). */
typedef struct cf_worker_env {
    bp_context *ctx;
    bp_backend *be;
    const char *plugin_path; /* the plugin file, for contract.abi */
    bool tf32;
    bool graph; /* --graph: also record, compile and run each case as a graph */
    const cf_tol_table *tols;
} cf_worker_env;
void cf_exec_case(const cf_worker_env *env, const cf_case *c, cf_result *r);

/* A case's inputs (inputs.c): each operand's tensor on the backend and its
 * values as the backend holds them. */
typedef struct cf_operand {
    bp_tensor *t;
    cf_array a;
} cf_operand;
typedef struct cf_inputs {
    int n; /* operands of the op call */
    cf_operand ops[CF_MAX_OPERANDS];
} cf_inputs;
/* Make them (false: r says why; nothing is left to free). */
bool cf_make_inputs(const cf_worker_env *env, const cf_case *c, cf_inputs *in, cf_result *r);
void cf_inputs_free(cf_inputs *in);

/* The op call of a case (call.c), on be (creation ops); *out2: the second
 * output (topk's and sort's indices, split's second part), left NULL by the
 * others. */
bp_status cf_call_op(bp_backend *be, const cf_case *c, const cf_operand *ops, int n_in,
                     bp_tensor **out, bp_tensor **out2);
/* What an op's status says, given what supports() said (exec.c; every case,
 * nn.h's too). true when there is a result to check; else r holds the
 * verdict. */
bool cf_judge_status(const cf_case *c, bool says, bp_status st, const bp_tensor *out,
                     cf_result *r);
/* --graph (exec_graph.c): the case, which passed eagerly with out (and out2),
 * recorded on a graph with symbolic operands, compiled and run on in's
 * tensors; r becomes FAIL unless the plan's results are eager's bytes, or
 * UNSUPPORTED when the core refuses to record an op that reads index values
 * on the host. Creation ops (no tensor operand) are left as they are. */
void cf_graph_check(const cf_worker_env *env, const cf_case *c, const cf_inputs *in,
                    bp_tensor *out, bp_tensor *out2, cf_result *r);
/* The same for any call (nn.h's cases too): call records the op on sym, a
 * symbolic tensor for each of the n_in operands in (NULL where in[k] is),
 * its results into outs; eager holds the n_out results of the eager call
 * (NULL where it gave none). */
typedef bp_status (*cf_graph_call)(const cf_case *c, const void *ctx, bp_tensor *const *sym,
                                   bp_tensor **outs);
void cf_graph_replay(const cf_worker_env *env, const cf_case *c, int n_in, bp_tensor *const *in,
                     int n_out, bp_tensor *const *eager, cf_graph_call call, const void *ctx,
                     cf_result *r);
/* The composed ops (compose.c): the call (split: the two parts in out and
 * out2), the oracle, and the backend ops each is made of ("add, div"). */
bp_status cf_call_compose(const cf_case *c, const cf_operand *ops, int n_in, bp_tensor **out,
                          bp_tensor **out2);
bool cf_oracle_compose(const cf_case *c, const cf_array *in, int n_in, cf_array *want,
                       cf_array *want2, double **scale, int64_t *k);
const char *cf_compose_parts(const cf_case *c);
/* An unsorted topk's values and indices (as read back; compare.c) put in
 * the order the oracle gives them: each row best first, ties by the lower index. */
void cf_topk_canonical(const cf_case *c, cf_array *values, cf_array *indices);

/* The contract rows run in the worker (contract.c). */
void cf_contract_abi(const cf_worker_env *env, const cf_case *c, cf_result *r);
void cf_contract_roundtrip(const cf_case *c, const cf_operand *op, cf_result *r);

/* ---- the run ------------------------------------------------------------------ */
typedef struct cf_options {
    const char *target;       /* a backend name or a plugin file, for bp_backend_get */
    const char *plugin_path;  /* target, when it names a file (NULL: found in the records) */
    const char *config;       /* the workers' ini file, or NULL */
    double timeout;           /* per case, seconds */
    bool progress;            /* on stderr: an updating line (terminal) or one per tenth */
    bool row_supports;        /* add the contract.supports row (parent-side) */
    bool row_stdout;          /* add the contract.stdout row (parent-side) */
    bool graph;               /* also run each case as a graph (cf_worker_env.graph) */
    const cf_tol_table *tols;
} cf_options;

/* The longest reason a backend did not open that the report keeps (the
 * core's messages are at most BP__ERR_CAP). */
#define CF_OPEN_MESSAGE_MAX 4096

typedef struct cf_run {
    cf_result *results;
    size_t n_results;
    char backend_name[64];
    char plugin_version[64];
    bool opened;
    int open_status;          /* bp_status when the backend could not be opened */
    char open_message[CF_OPEN_MESSAGE_MAX]; /* why, in as many lines as the library said */
} cf_run;

/* Run the selected cases (indices into cases) in worker processes (run.c).
 * false when a worker could not be started (no pipe, no fork). */
bool cf_run_cases(const cf_options *opt, const cf_case *cases, const int *selected, size_t n_sel,
                  cf_run *run);
/* A worker process (worker.c, which documents the result-pipe protocol):
 * runs the selected cases from `from` on, writes to wfd; never returns. */
_Noreturn void cf_worker_main(const cf_options *opt, const cf_case *cases, const int *selected,
                              size_t from, size_t n_sel, int wfd, int out_fd);
/* Newlines and tabs in s to spaces: one field of one line. */
void cf_one_line(char *s);
/* Undo the escaping of a reason of several lines sent as one field (worker.c). */
void cf_unescape_lines(char *s);

/* What bp_conform_results holds. */
struct bp_conform_results {
    cf_run run;
};

/* ---- reporting ------------------------------------------------------------------ */
/* One line per FAIL / CRASH / TIMEOUT, the per-op summary and the totals. */
void cf_print_report(FILE *f, const cf_run *run);
/* Totals; returns true when nothing failed or crashed. */
bool cf_totals(const cf_run *run, size_t *pass, size_t *fail, size_t *unsup, size_t *crash);

/* Every result as one JSON object per line; false if path cannot be written. */
bool cf_write_json(const char *path, const cf_run *run);
/* The fields of one result line that the matrix needs. */
typedef struct cf_json_row {
    char backend[64], plugin_version[64], op[48], dtype[16], status[16];
} cf_json_row;
/* Parse one line of such a file; false if it is not a result object. */
bool cf_json_parse_row(const char *line, cf_json_row *row);

/* The op x dtype matrix of one run, as Markdown. */
bool cf_write_matrix(const char *path, const cf_run *run);
/* The op x backend x dtype table from JSON-lines files. false with *status
 * and a message naming the file. */
bool cf_merge_matrix(const char *const *json_paths, size_t n_paths, const char *path,
                     bp_status *status, char *err, size_t err_size);

/* ---- errors ---------------------------------------------------------------------- */
/* Set this thread's bp_conform_last_error() and return status. */
bp_status cf_fail(bp_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void cf_clear_error(void);

#endif

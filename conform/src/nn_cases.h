/* The conformance cases of nn.h's ops: their table (cases_nn.c), their
 * inputs (inputs_nn.c) and their run (exec_nn.c). Kept apart from cases.c
 * and exec.c, which reach them through one call each.
 *
 * Every case names a spec (its variant indexes cf_nn_specs): the op's
 * geometry and options, the shape of x; the other operands follow from
 * them. An op with several outputs has every output compared, each with the
 * tolerance of its own name (OP.indices, OP.mean, OP.inv_std, OP.log_prob,
 * OP.mask; resize.nearest for the nearest mode). */
#ifndef BP_CONFORM_NN_CASES_H
#define BP_CONFORM_NN_CASES_H

#include "internal.h"

/* nn.h's ops composed in the core have no op code: pseudo codes. */
enum {
    CF_OP_NN_DROPOUT = 2000,
    CF_OP_NN_GLOBAL_MAX_POOL,
    CF_OP_NN_GLOBAL_AVERAGE_POOL
};

typedef enum cf_nn_set { CF_NN_FLOATS, CF_NN_NUMERIC } cf_nn_set;

typedef struct cf_nn_spec {
    int op;                    /* a bp_op of BP_OP_LIST_1_4 or a CF_OP_NN_* */
    cf_nn_set set;             /* the dtypes */
    int32_t rank;
    int64_t x[5];              /* x (scores, log_prob) */
    int64_t w[5];              /* conv, conv_transpose: w */
    bool extra;                /* conv: bias; layer_norm: bias; rms_norm: scale; losses: weights */
    bp_window win;             /* windows (struct_size set by the builder) */
    int32_t axis;              /* layer_norm, rms_norm: axis; lrn: size */
    double p[3];               /* lrn: alpha, beta, bias; dropout: ratio; norms: epsilon */
    int reduction;             /* losses */
    bool ignore;               /* losses: ignore_index -1 on every third sample */
    bool training;             /* dropout */
    bp_resize_options ro;      /* resize (struct_size set by the builder) */
    double scales[5];          /* resize: scales, or ... */
    int64_t sizes[5];          /* ... sizes when sizes[0] > 0 */
    bool specials;             /* NaN, +inf and -inf among x's values */
    const char *what;          /* the label's suffix */
} cf_nn_spec;

extern const cf_nn_spec cf_nn_specs[];
extern const size_t cf_nn_n_specs;

/* Append every nn case (for each spec, each dtype of its set) to the table
 * *v of *n cases (capacity *cap, realloc'd). false when out of memory. */
bool cf_nn_cases_append(cf_case **v, size_t *n, size_t *cap);
/* Whether c is one of them, and its spec. */
bool cf_is_nn_case(const cf_case *c);
const cf_nn_spec *cf_nn_spec_of(const cf_case *c);

/* ---- inputs (inputs_nn.c) ----------------------------------------------------------- */
enum { CF_NN_MAX_IN = 5, CF_NN_MAX_OUT = 3 };
typedef struct cf_nn_inputs {
    int n;
    cf_array a[CF_NN_MAX_IN];  /* the values the backend holds */
    bp_tensor *t[CF_NN_MAX_IN];
    bool given[CF_NN_MAX_IN];  /* optional operands left out are NULL */
} cf_nn_inputs;
/* The op's operands as host arrays and tensors on the backend (false: r says
 * why; nothing is left to free). */
bool cf_nn_make_inputs(const cf_worker_env *env, const cf_case *c, cf_nn_inputs *in,
                       cf_result *r);
void cf_nn_inputs_free(cf_nn_inputs *in);

/* ---- the run (exec_nn.c) -------------------------------------------------------------- */
void cf_exec_nn_case(const cf_worker_env *env, const cf_case *c, cf_result *r);

#endif

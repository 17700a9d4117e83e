/* One nn case in the worker: inputs (inputs_nn.c), the op, its status
 * judged against supports() as every case's is, guard bytes, then every
 * output against the oracle (oracle/oracle_nn.h) with the tolerance of its
 * own name. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_cases.h"

typedef struct outputs {
    int n;
    bp_tensor *t[CF_NN_MAX_OUT];
    const char *tol[CF_NN_MAX_OUT];     /* the tolerance file's name of each */
    cf_array want[CF_NN_MAX_OUT];
    double *terms[CF_NN_MAX_OUT];
    int64_t k[CF_NN_MAX_OUT];
} outputs;

static void outputs_free(outputs *o)
{
    for (int i = 0; i < CF_NN_MAX_OUT; i++) {
        bp_tensor_release(o->t[i]);
        cf_array_free(&o->want[i]);
        free(o->terms[i]);
    }
}

/* What supports() says; for the ops the core composes, of the ops it
 * composes them from (ops_dropout.c, ops_pool.c). */
static bool declared(bp_backend *be, const cf_case *c)
{
    bp_dtype dt = c->dtype;
    switch (c->op) {
    case CF_OP_NN_DROPOUT:
        if (!cf_nn_spec_of(c)->training) /* a copy and a mask of ones */
            return bp_backend_supports(be, BP_OP_BROADCAST_TO, dt) &&
                   bp_backend_supports(be, BP_OP_FILL, BP_BOOL);
        return bp_backend_supports(be, BP_OP_RANDOM_UNIFORM, BP_F32) &&
               bp_backend_supports(be, BP_OP_FILL, BP_F32) && bp_backend_supports(be, BP_OP_GE, BP_F32) &&
               bp_backend_supports(be, BP_OP_FILL, dt) && bp_backend_supports(be, BP_OP_DIV, dt) &&
               bp_backend_supports(be, BP_OP_WHERE, dt);
    case CF_OP_NN_GLOBAL_MAX_POOL: return bp_backend_supports(be, BP_OP_MAX, dt);
    case CF_OP_NN_GLOBAL_AVERAGE_POOL: return bp_backend_supports(be, BP_OP_MEAN, dt);
    default: return bp_backend_supports(be, (bp_op)c->op, dt);
    }
}

static bp_window window_of(const cf_nn_spec *s)
{
    bp_window w = s->win;
    w.struct_size = sizeof w;
    return w;
}

static bp_resize_options resize_of(const cf_nn_spec *s)
{
    bp_resize_options o = s->ro;
    o.struct_size = sizeof o;
    return o;
}

static const int64_t IGNORE = -1;

/* The op, its outputs into o (o->n of them). */
static bp_status call(const cf_case *c, const cf_nn_spec *s, const cf_nn_inputs *in, outputs *o)
{
    bp_tensor *const *t = in->t;
    bp_window w = window_of(s);
    bp_resize_options ro = resize_of(s);
    const int64_t *ig = s->ignore ? &IGNORE : NULL;
    bp_tensor **y = &o->t[0];
    o->n = 1;
    switch (c->op) {
    case BP_OP_CONV: return bp_conv(t[0], t[1], t[2], &w, y);
    case BP_OP_CONV_TRANSPOSE: return bp_conv_transpose(t[0], t[1], t[2], &w, y);
    case BP_OP_MAX_POOL: { /* and again without indices: a backend may take another path */
        o->n = 3;
        bp_status st = bp_max_pool(t[0], &w, y, &o->t[1]);
        return st == BP_OK ? bp_max_pool(t[0], &w, &o->t[2], NULL) : st;
    }
    case BP_OP_AVERAGE_POOL: return bp_average_pool(t[0], &w, y);
    case CF_OP_NN_GLOBAL_MAX_POOL: return bp_global_max_pool(t[0], y);
    case CF_OP_NN_GLOBAL_AVERAGE_POOL: return bp_global_average_pool(t[0], y);
    case BP_OP_LRN: return bp_lrn(t[0], s->axis, s->p[0], s->p[1], s->p[2], y);
    case BP_OP_BATCH_NORM: return bp_batch_norm(t[0], t[1], t[2], t[3], t[4], s->p[0], y);
    case BP_OP_INSTANCE_NORM: return bp_instance_norm(t[0], t[1], t[2], s->p[0], y);
    case BP_OP_LAYER_NORM:
        o->n = 3;
        return bp_layer_norm(t[0], s->axis, t[1], t[2], s->p[0], y, &o->t[1], &o->t[2]);
    case BP_OP_RMS_NORM: return bp_rms_norm(t[0], s->axis, t[1], s->p[0], y);
    case BP_OP_NLL_LOSS:
        return bp_nll_loss(t[0], t[1], t[2], (bp_loss_reduction)s->reduction, ig, y);
    case BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS:
        o->n = 2;
        return bp_softmax_cross_entropy_loss(t[0], t[1], t[2], (bp_loss_reduction)s->reduction,
                                             ig, y, &o->t[1]);
    case CF_OP_NN_DROPOUT:
        o->n = 2;
        return bp_dropout(t[0], s->p[0], s->training, c->seed, 1000u, y, &o->t[1]);
    case BP_OP_RESIZE:
        return bp_resize(t[0], s->sizes[0] ? NULL : s->scales, s->sizes[0] ? s->sizes : NULL,
                         &ro, y);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

/* The oracle's outputs, and each one's tolerance name. */
static bool oracle(const cf_case *c, const cf_nn_spec *s, const cf_nn_inputs *in, outputs *o)
{
    const cf_array *a = in->a;
#define OPT(k) (in->given[k] ? &a[k] : NULL)
    bp_window w = window_of(s);
    bp_resize_options ro = resize_of(s);
    const int64_t *ig = s->ignore ? &IGNORE : NULL;
    cf_array *y = &o->want[0];
    double **tm = &o->terms[0];
    int64_t *k = &o->k[0];
    o->tol[0] = c->name;
    switch (c->op) {
    case BP_OP_CONV: return cf_oracle_conv(&a[0], &a[1], OPT(2), &w, y, tm, k);
    case BP_OP_CONV_TRANSPOSE: return cf_oracle_conv_transpose(&a[0], &a[1], OPT(2), &w, y, tm, k);
    case BP_OP_MAX_POOL:
        o->tol[1] = "max_pool.indices";
        o->tol[2] = c->name;
        return cf_oracle_max_pool(&a[0], &w, y, &o->want[1]) &&
               cf_oracle_max_pool(&a[0], &w, &o->want[2], NULL);
    case BP_OP_AVERAGE_POOL: return cf_oracle_average_pool(&a[0], &w, y, tm, k);
    case CF_OP_NN_GLOBAL_MAX_POOL: case CF_OP_NN_GLOBAL_AVERAGE_POOL: {
        static const int32_t axes[3] = {2, 3, 4};
        bp_op op = c->op == CF_OP_NN_GLOBAL_MAX_POOL ? BP_OP_MAX : BP_OP_MEAN;
        return cf_oracle_reduce(op, &a[0], a[0].rank - 2, axes, true, y, tm, k);
    }
    case BP_OP_LRN: return cf_oracle_lrn(&a[0], s->axis, s->p[0], s->p[1], s->p[2], y);
    case BP_OP_BATCH_NORM:
        return cf_oracle_batch_norm(&a[0], &a[1], &a[2], &a[3], &a[4], s->p[0], y, tm, k);
    case BP_OP_INSTANCE_NORM:
        return cf_oracle_instance_norm(&a[0], &a[1], &a[2], s->p[0], y, tm, k);
    case BP_OP_LAYER_NORM:
        o->tol[1] = "layer_norm.mean";
        o->tol[2] = "layer_norm.inv_std";
        return cf_oracle_layer_norm(&a[0], s->axis, &a[1], OPT(2), s->p[0], y, &o->want[1],
                                    &o->want[2], tm, k);
    case BP_OP_RMS_NORM: return cf_oracle_rms_norm(&a[0], s->axis, OPT(1), s->p[0], y, tm, k);
    case BP_OP_NLL_LOSS:
        return cf_oracle_nll_loss(&a[0], &a[1], OPT(2), (bp_loss_reduction)s->reduction, ig, y,
                                  tm, k);
    case BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS: {
        o->tol[1] = "softmax_cross_entropy_loss.log_prob";
        cf_array ls = {0};
        bool ok = cf_oracle_softmax_cross_entropy_loss(&a[0], &a[1], OPT(2),
                                                       (bp_loss_reduction)s->reduction, ig, y,
                                                       &o->want[1], tm, k) &&
                  cf_oracle_log_softmax(&a[0], 1, &ls, &o->terms[1], &o->k[1]);
        cf_array_free(&ls); /* log_prob's terms only: its values are the loss oracle's */
        return ok;
    }
    case CF_OP_NN_DROPOUT:
        o->tol[1] = "dropout.mask";
        return cf_oracle_dropout(&a[0], s->p[0], s->training, c->seed, 1000u, y, &o->want[1]);
    case BP_OP_RESIZE:
        if (s->ro.mode == BP_RESIZE_NEAREST)
            o->tol[0] = "resize.nearest";
        return cf_oracle_resize(&a[0], s->sizes[0] ? NULL : s->scales,
                                s->sizes[0] ? s->sizes : NULL, &ro, y, tm, k);
    default: return false;
    }
#undef OPT
}

static bool guards_ok(const cf_case *c, bp_tensor *const *t, int n, const char *what,
                      cf_result *r)
{
    for (int i = 0; i < n; i++)
        if (t[i] && bp_tensor_check_guards(t[i]) != BP_OK) {
            CF_MSG(r, "%s: guard damage around %s %d: %s", c->name, what, i, bp_last_error());
            return false;
        }
    return true;
}

/* Output i against the oracle; false with r's message when it differs. */
static bool compare(const cf_worker_env *env, const cf_case *c, const outputs *o, int i,
                    cf_result *r)
{
    const cf_array *want = &o->want[i];
    const bp_tensor *t = o->t[i];
    bool meta = bp_tensor_dtype(t) == want->dt && bp_tensor_rank(t) == want->rank;
    for (int32_t d = 0; meta && d < want->rank; d++)
        meta = bp_tensor_shape(t)[d] == want->shape[d];
    if (!meta) {
        CF_MSG(r, "%s [%s] %s: output %s is %s of rank %d, want %s of rank %d", c->name,
               bp_dtype_name(c->dtype), c->label, o->tol[i], bp_dtype_name(bp_tensor_dtype(t)),
               (int)bp_tensor_rank(t), bp_dtype_name(want->dt), (int)want->rank);
        return false;
    }
    cf_array got;
    size_t bytes = (size_t)want->n * bp_dtype_size(want->dt);
    void *raw = malloc(bytes ? bytes : 1);
    if (!raw || !cf_array_init(&got, want->dt, want->rank, want->shape)) {
        free(raw);
        CF_MSG(r, "%s: out of host memory", c->name);
        return false;
    }
    bp_status st = bp_tensor_to_host(t, raw, bytes);
    if (st == BP_OK)
        cf_decode(&got, raw);
    free(raw);
    if (st != BP_OK) {
        CF_MSG(r, "%s: reading %s failed: %s: %s", c->name, o->tol[i], bp_status_string(st),
               bp_last_error());
        cf_array_free(&got);
        return false;
    }
    cf_tol tol = cf_tol_find(env->tols, o->tol[i], c->dtype, env->tf32);
    double err, bound;
    int64_t bad;
    char why[400];
    bool ok = cf_compare(&got, want, o->terms[i], o->k[i], tol, env->tf32, &err, &bound, &bad,
                         why, sizeof why);
    if (err > r->max_error)
        r->max_error = err;
    if (bound > r->tolerance)
        r->tolerance = bound;
    if (!ok)
        CF_MSG(r, "%s [%s] %s: %s: %s (tolerance: %s %g, tolerances.txt line %d)", c->name,
               bp_dtype_name(c->dtype), c->label, o->tol[i], why,
               tol.kind == CF_TOL_EXACT ? "exact" : tol.kind == CF_TOL_ULP ? "ulp" : "norm", bound,
               tol.line);
    cf_array_free(&got);
    return ok;
}

/* --graph: the same call on the symbolic operands (exec_graph.c). */
typedef struct nn_call {
    const cf_nn_spec *s;
    const cf_nn_inputs *in;
} nn_call;

static bp_status call_symbolic(const cf_case *c, const void *ctx, bp_tensor *const *sym,
                               bp_tensor **outs)
{
    const nn_call *nc = ctx;
    cf_nn_inputs si = *nc->in; /* the call reads only the tensors */
    for (int k = 0; k < si.n; k++)
        si.t[k] = sym[k];
    outputs o;
    memset(&o, 0, sizeof o);
    bp_status st = call(c, nc->s, &si, &o);
    for (int i = 0; i < CF_NN_MAX_OUT; i++)
        outs[i] = o.t[i];
    return st;
}

/* --graph, once more with every operand but the first captured, as a
 * model's weights are constants of its plan: a backend may prepare such a
 * node when the plan compiles (plugin.h's prepare; blas_cpu's direct
 * convolutions), and a prepared node's results need not be eager's bytes,
 * only within the case's tolerance of the oracle, as eager's are. A plan
 * that prepared nothing ran the eager path, which the symbolic replay has
 * checked byte for byte. relu (a convolution's case): a Relu recorded
 * after it, which the backend may compute as the prepared convolution
 * stores (prepare_epilogue), checked where it did against the oracle's
 * values through relu, within the convolution's tolerance (relu moves no
 * two values further apart). residual (with relu): an add of a second
 * input of the output's shape between them, which the backend may compute
 * too (prepare_epilogues), checked against relu(want + residual) with one
 * term more, |residual| added to each element's scale (the add's one
 * rounding). */
/* A residual's value at element e: in [-1, 1], deterministic. */
static double residual_value(int64_t e) { return (double)((e * 37) % 17 - 8) / 8.0; }

static void captured_replay(const cf_worker_env *env, const cf_case *c, const cf_nn_spec *s,
                            const cf_nn_inputs *in, const outputs *o, bool relu, bool residual,
                            cf_result *r)
{
    bool captures = false;
    for (int k = 1; k < in->n; k++)
        captures = captures || in->t[k];
    if (!in->t[0] || !captures)
        return;
    const char *dt = bp_dtype_name(c->dtype);
    bp_graph *g = NULL;
    bp_graph_exec *exe = NULL;
    outputs rec, got;
    memset(&rec, 0, sizeof rec);
    got = *o; /* the oracle's values and tolerances, the plan's tensors */
    memset(got.t, 0, sizeof got.t);
    cf_nn_inputs si = *in;
    int32_t n_marked = 0;
    const char *step = "recording with the operands after the first captured";
    cf_array res; /* residual: its values, and the plan's input of them */
    memset(&res, 0, sizeof res);
    bp_tensor *res_t = NULL, *res_sym = NULL, *sum = NULL;
    double *scale = NULL;
    bp_status st = bp_graph_create(env->be, &g);
    if (st == BP_OK)
        st = bp_graph_input(g, bp_tensor_dtype(in->t[0]), bp_tensor_rank(in->t[0]),
                            bp_tensor_shape(in->t[0]), &si.t[0]);
    if (st == BP_OK && residual) {
        const cf_array *w0 = &o->want[0];
        void *raw = NULL;
        if (!cf_array_init(&res, w0->dt, w0->rank, w0->shape) ||
            !(raw = malloc((size_t)(res.n ? res.n : 1) * bp_dtype_size(res.dt))))
            st = BP_ERR_OUT_OF_MEMORY;
        for (int64_t e = 0; st == BP_OK && e < res.n; e++)
            res.f[e] = residual_value(e);
        if (st == BP_OK) {
            cf_encode(&res, raw);
            st = bp_tensor_from_host(env->be, res.dt, res.rank, res.shape, raw, &res_t);
        }
        free(raw);
        if (st == BP_OK)
            st = bp_graph_input(g, res.dt, res.rank, res.shape, &res_sym);
    }
    if (st == BP_OK)
        st = call(c, s, &si, &rec);
    bp_tensor *after = NULL; /* relu: the Relu's output, the plan's one */
    if (st == BP_OK && residual)
        st = rec.t[0] ? bp_add(rec.t[0], res_sym, &sum) : BP_ERR_INVALID_ARGUMENT;
    if (st == BP_OK && relu)
        st = rec.t[0] ? bp_relu(residual ? sum : rec.t[0], &after) : BP_ERR_INVALID_ARGUMENT;
    if (st == BP_OK && relu && (st = bp_graph_output(g, after)) == BP_OK)
        n_marked++;
    for (int i = 0; st == BP_OK && !relu && i < rec.n; i++)
        if (rec.t[i] && (st = bp_graph_output(g, rec.t[i])) == BP_OK)
            n_marked++;
    if (st == BP_OK) {
        step = "compiling";
        st = bp_graph_compile(g, NULL, &exe);
    }
    bp_graph_stats gs = {.struct_size = sizeof gs};
    if (st == BP_OK)
        st = bp_graph_exec_stats(exe, &gs);
    bp_tensor *outs[CF_NN_MAX_OUT] = {0};
    const bool check = relu ? gs.epilogues_fused > 0 : gs.nodes_prepared > 0;
    cf_array through; /* relu: the oracle's values through relu */
    memset(&through, 0, sizeof through);
    if (st == BP_OK && check && relu) {
        if (!cf_array_init(&through, o->want[0].dt, o->want[0].rank, o->want[0].shape))
            st = BP_ERR_OUT_OF_MEMORY;
        if (st == BP_OK && residual &&
            !(scale = malloc((size_t)(through.n ? through.n : 1) * sizeof *scale)))
            st = BP_ERR_OUT_OF_MEMORY;
        for (int64_t e = 0; st == BP_OK && e < through.n; e++) {
            const double v = o->want[0].f[e] + (residual ? res.f[e] : 0.0);
            through.f[e] = v > 0 || v != v ? v : 0.0;
            if (residual)
                scale[e] = (o->terms[0] ? o->terms[0][e] : fabs(o->want[0].f[e])) +
                           fabs(res.f[e]);
        }
        got.want[0] = through;
        if (residual) {
            got.terms[0] = scale;
            got.k[0] = o->k[0] + 1;
        }
    }
    if (st == BP_OK && check) {
        step = "running the plan";
        bp_tensor *const feed[2] = {in->t[0], res_t};
        st = bp_graph_run(exe, residual ? 2 : 1, feed, n_marked, outs);
    }
    const char *tail = residual ? "(with an add and a Relu after it) "
                       : relu   ? "(with a Relu after it) "
                                : "";
    if (st != BP_OK) {
        r->status = CF_FAIL;
        CF_MSG(r, "%s [%s] %s: graph: %s%s failed with %s: %s", c->name, dt, c->label, tail,
               step, bp_status_string(st), bp_last_error());
    } else if (check) {
        int m = 0;
        for (int i = 0; i < (relu ? 1 : o->n); i++)
            if (rec.t[i])
                got.t[i] = outs[m++];
        for (int i = 0; i < o->n && r->status == CF_PASS; i++)
            if (got.t[i] && !compare(env, c, &got, i, r)) {
                char why[sizeof r->message];
                memcpy(why, r->message, sizeof why);
                r->status = CF_FAIL;
                CF_MSG(r, "graph, the node prepared (the operands after the first captured)%s: "
                       "%.400s",
                       residual ? ", with the add and the Relu after it in it"
                       : relu   ? ", with the Relu after it in it"
                                : "",
                       why);
            }
    }
    cf_array_free(&through);
    cf_array_free(&res);
    free(scale);
    bp_tensor_release(res_t);
    bp_tensor_release(res_sym);
    bp_tensor_release(sum);
    bp_tensor_release(after);
    for (int i = 0; i < CF_NN_MAX_OUT; i++) {
        bp_tensor_release(rec.t[i]);
        bp_tensor_release(outs[i]);
    }
    bp_tensor_release(si.t[0]);
    bp_graph_exec_release(exe);
    bp_graph_release(g);
}

void cf_exec_nn_case(const cf_worker_env *env, const cf_case *c, cf_result *r)
{
    const cf_nn_spec *s = cf_nn_spec_of(c);
    cf_nn_inputs in;
    if (!cf_nn_make_inputs(env, c, &in, r))
        return;
    outputs o;
    memset(&o, 0, sizeof o);
    bool says = declared(env->be, c);
    bp_status st = call(c, s, &in, &o);
    if (cf_judge_status(c, says, st, o.t[0], r) && guards_ok(c, o.t, o.n, "output", r) &&
        guards_ok(c, in.t, in.n, "input", r)) {
        if (!oracle(c, s, &in, &o)) {
            r->status = CF_FAIL;
            CF_MSG(r, "%s: the oracle does not know this case or ran out of memory", c->name);
        } else {
            bool ok = true;
            for (int i = 0; ok && i < o.n; i++)
                ok = compare(env, c, &o, i, r);
            r->status = ok ? CF_PASS : CF_FAIL;
        }
    }
    if (env->graph && r->status == CF_PASS) {
        nn_call nc = {s, &in};
        cf_graph_replay(env, c, in.n, in.t, o.n, o.t, call_symbolic, &nc, r);
        if (r->status == CF_PASS)
            captured_replay(env, c, s, &in, &o, false, false, r);
        if (r->status == CF_PASS && s->op == BP_OP_CONV && bp_dtype_is_float(c->dtype) &&
            bp_backend_supports(env->be, BP_OP_RELU, c->dtype))
            captured_replay(env, c, s, &in, &o, true, false, r);
        if (r->status == CF_PASS && s->op == BP_OP_CONV && bp_dtype_is_float(c->dtype) &&
            bp_backend_supports(env->be, BP_OP_RELU, c->dtype) &&
            bp_backend_supports(env->be, BP_OP_ADD, c->dtype))
            captured_replay(env, c, s, &in, &o, true, true, r);
    }
    outputs_free(&o);
    cf_nn_inputs_free(&in);
}

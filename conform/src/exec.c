/* One case, run in the worker process against the backend under test: its
 * inputs are made (inputs.c), the op is called, every tensor's guard bytes
 * are checked, and the output is compared with the oracle computed from the
 * inputs as the backend holds them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nn_cases.h"

/* ---- checks ------------------------------------------------------------------ */

static bool check_guards(const cf_case *c, bp_tensor *t, const char *what, cf_result *r)
{
    if (!t)
        return true;
    bp_status st = bp_tensor_check_guards(t);
    if (st == BP_OK)
        return true;
    CF_MSG(r, "%s: guard damage around the %s: %s", c->name, what, bp_last_error());
    return false;
}

static void shape_text(char *buf, size_t cap, int32_t rank, const int64_t *shape)
{
    size_t used = (size_t)snprintf(buf, cap, "(");
    for (int32_t k = 0; k < rank && used < cap; k++)
        used += (size_t)snprintf(buf + used, cap - used, k ? ",%lld" : "%lld", (long long)shape[k]);
    if (used < cap)
        snprintf(buf + used, cap - used, rank == 1 ? ",)" : ")");
}

/* The oracle's answer for a case. */
typedef struct expected {
    cf_array want, want2; /* want2: the second output (topk's, sort's indices), if any */
    double *scale; /* norm-wise ops: the magnitude of each element's terms */
    int64_t k;     /* terms per element */
} expected;

/* Whether out has the dtype and shape of want (else r says why). */
static bool check_meta(const cf_case *c, const bp_tensor *out, const cf_array *want, cf_result *r)
{
    char gs[96], ws[96];
    shape_text(gs, sizeof gs, bp_tensor_rank(out), bp_tensor_shape(out));
    shape_text(ws, sizeof ws, want->rank, want->shape);
    if (bp_tensor_dtype(out) != want->dt) {
        CF_MSG(r, "%s: result dtype %s, want %s", c->name, bp_dtype_name(bp_tensor_dtype(out)),
               bp_dtype_name(want->dt));
        return false;
    }
    if (strcmp(gs, ws) != 0) {
        CF_MSG(r, "%s: result shape %s, want %s", c->name, gs, ws);
        return false;
    }
    return true;
}

/* The result's values as the oracle's array type (got initialised here). */
static bool read_result(const cf_case *c, const bp_tensor *out, const cf_array *want,
                        cf_array *got, cf_result *r)
{
    size_t bytes = (size_t)want->n * bp_dtype_size(want->dt);
    void *raw = malloc(bytes ? bytes : 1);
    if (!raw || !cf_array_init(got, want->dt, want->rank, want->shape)) {
        free(raw);
        CF_MSG(r, "%s: out of host memory", c->name);
        return false;
    }
    bp_status st = bp_tensor_to_host(out, raw, bytes);
    if (st != BP_OK) {
        CF_MSG(r, "%s: reading the result failed: %s: %s", c->name, bp_status_string(st),
               bp_last_error());
        free(raw);
        cf_array_free(got);
        return false;
    }
    cf_decode(got, raw);
    free(raw);
    return true;
}

/* The inputs at the first wrong element, for the message, when they line up
 * with the output (elementwise ops without broadcasting). */
static void inputs_at(const cf_case *c, const cf_inputs *in, int64_t n_out, int64_t bad,
                      char *buf, size_t cap)
{
    const cf_operand *ops = in->ops;
    bp_op_family fam = bp_op_family_of((bp_op)c->op);
    bool elementwise = fam == BP_FAMILY_UNARY || c->op == BP_OP_CAST || c->op == BP_OP_COPY ||
                       (c->op >= BP_OP_ACOS && c->op <= BP_OP_BITWISE_NOT);
    buf[0] = '\0';
    if (elementwise && bad >= 0 && bad < ops[0].a.n)
        snprintf(buf, cap, "; input %.17g", cf_get_f(&ops[0].a, bad));
    else if (fam == BP_FAMILY_BINARY && in->n == 2 && ops[0].a.n == n_out &&
             ops[1].a.n == n_out && bad >= 0)
        snprintf(buf, cap, "; inputs %.17g, %.17g", cf_get_f(&ops[0].a, bad),
                 cf_get_f(&ops[1].a, bad));
}

/* got's values against want's within tol (r says why on failure). */
static void compare(const cf_worker_env *env, const cf_case *c, const cf_array *got,
                    const cf_array *want, const double *scale, int64_t k, cf_tol tol,
                    const cf_inputs *in, const char *which, cf_result *r)
{
    int64_t bad;
    char why[400];
    r->status = CF_FAIL;
    if (cf_compare(got, want, scale, k, tol, env->tf32, &r->max_error, &r->tolerance, &bad, why,
                   sizeof why)) {
        r->status = CF_PASS;
        return;
    }
    char inputs[160];
    inputs_at(c, in, want->n, bad, inputs, sizeof inputs);
    CF_MSG(r, "%s [%s] %s: %s%s%s (tolerance: %s %g, tolerances.txt line %d)", c->name,
           bp_dtype_name(c->dtype), c->label, which, why, inputs,
           tol.kind == CF_TOL_EXACT ? "exact" : tol.kind == CF_TOL_ULP ? "ulp" : "norm",
           r->tolerance, tol.line);
}

/* Compare the metadata and values of out (and out2) with the oracle's. */
static void check_output(const cf_worker_env *env, const cf_case *c, const bp_tensor *out,
                         const bp_tensor *out2, const expected *e, const cf_inputs *in,
                         cf_result *r)
{
    cf_array got = {0}, got2 = {0};
    bool two = e->want2.f || e->want2.i;
    r->status = CF_FAIL;
    bool ok = check_meta(c, out, &e->want, r) && read_result(c, out, &e->want, &got, r);
    if (ok && two) {
        if (!out2) {
            CF_MSG(r, "%s: returned BP_OK without its second result", c->name);
            ok = false;
        } else {
            ok = check_meta(c, out2, &e->want2, r) && read_result(c, out2, &e->want2, &got2, r);
        }
    }
    if (ok && c->op == BP_OP_TOPK && !c->pi[3]) /* any order: compare in the oracle's */
        cf_topk_canonical(c, &got, &got2);
    if (ok)
        compare(env, c, &got, &e->want, e->scale, e->k,
                cf_tol_find(env->tols, c->name, c->dtype, env->tf32), in, "", r);
    if (ok && two && r->status == CF_PASS) /* indices, or split's second part: exact */
        compare(env, c, &got2, &e->want2, NULL, 1, (cf_tol){.kind = CF_TOL_EXACT}, in,
                "second output: ", r);
    cf_array_free(&got);
    cf_array_free(&got2);
}

/* ---- the op call ---------------------------------------------------------------- */

static bool declared(const cf_worker_env *env, const cf_case *c)
{
    bp_backend *be = env->be;
    bp_op op = (bp_op)c->op;
    switch (op) {
    case BP_OP_CAST:
        return bp_backend_supports(be, op, c->dtype) && bp_backend_supports(be, op, c->dtype2);
    case BP_OP_PAD:
        return bp_backend_supports(be, op, c->dtype) && bp_backend_supports(be, BP_OP_FILL, c->dtype);
    default:
        return bp_backend_supports(be, op, c->dtype);
    }
}

static bp_status call_op(const cf_worker_env *env, const cf_case *c, const cf_operand *ops,
                         int n_in, bp_tensor **out, bp_tensor **out2)
{
    bp_op op = (bp_op)c->op;
    bp_backend *be = env->be;
    if (cf_is_compose(c->op))
        return cf_call_compose(c, ops, n_in, out, out2);
    switch (op) {
    case BP_OP_WHERE: return bp_where(ops[0].t, ops[1].t, ops[2].t, out);
    case BP_OP_MATMUL: return bp_matmul(ops[0].t, ops[1].t, out);
    case BP_OP_TRANSPOSE: return bp_transpose(ops[0].t, cf_transpose_perm(c), out);
    case BP_OP_SLICE: {
        int64_t a[BP_MAX_RANK], b[BP_MAX_RANK], s[BP_MAX_RANK];
        bool has_stops;
        cf_slice_params(c, a, b, s, &has_stops);
        return bp_slice(ops[0].t, a, has_stops ? b : NULL, s, out);
    }
    case BP_OP_CONCAT: {
        const bp_tensor *xs[CF_MAX_OPERANDS];
        for (int k = 0; k < n_in; k++)
            xs[k] = ops[k].t;
        return bp_concat(n_in, xs, cf_axis_param(c), out);
    }
    case BP_OP_BROADCAST_TO: {
        int32_t rank;
        int64_t shape[BP_MAX_RANK];
        cf_broadcast_target(c, &rank, shape);
        return bp_broadcast_to(ops[0].t, rank, shape, out);
    }
    case BP_OP_PAD: {
        int64_t b[BP_MAX_RANK], a[BP_MAX_RANK];
        double v;
        cf_pad_params(c, b, a, &v);
        return bp_pad(ops[0].t, b, a, v, out);
    }
    case BP_OP_COPY: return bp_cast(ops[0].t, c->dtype, out);
    case BP_OP_CAST: return bp_cast(ops[0].t, c->dtype2, out);
    case BP_OP_GATHER: return bp_gather(ops[0].t, ops[1].t, cf_axis_param(c), out);
    case BP_OP_FILL:
        if (c->variant >= 100)
            return bp_eye(be, c->dtype, c->shape[0][0], c->shape[0][1], out);
        return bp_full(be, c->dtype, c->rank[0], c->shape[0], cf_fill_value(c), out);
    case BP_OP_ARANGE: {
        double a, b, s;
        cf_arange_params(c, &a, &b, &s);
        return bp_arange(be, c->dtype, a, b, s, out);
    }
    case BP_OP_RANDOM_UNIFORM:
        return bp_random_uniform(be, c->dtype, c->rank[0], c->shape[0], c->seed, 1000u, c->lo[0],
                                 c->hi[0], out);
    case BP_OP_RANDOM_NORMAL:
        return bp_random_normal(be, c->dtype, c->rank[0], c->shape[0], c->seed, 1000u, c->lo[0],
                                c->hi[0], out);
    default: break;
    }
    switch (bp_op_family_of(op)) {
    case BP_FAMILY_OP: return cf_call_op_1_4(c, ops, n_in, out, out2);
    case BP_FAMILY_UNARY: return bp_unary(op, ops[0].t, out);
    case BP_FAMILY_BINARY: return bp_binary(op, ops[0].t, ops[1].t, out);
    case BP_FAMILY_REDUCE: {
        int32_t n_axes, axes[BP_MAX_RANK];
        bool keepdims;
        cf_reduce_axes(c, &n_axes, axes, &keepdims);
        return bp_reduce(op, ops[0].t, n_axes, n_axes ? axes : NULL, keepdims, out);
    }
    case BP_FAMILY_SOFTMAX:
        return op == BP_OP_SOFTMAX ? bp_softmax(ops[0].t, cf_axis_param(c), out)
                                   : bp_log_softmax(ops[0].t, cf_axis_param(c), out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

/* ---- one case -------------------------------------------------------------------- */

/* What the op's status says, given what supports() said. true when there is
 * a result to check; else r holds the verdict. */
static bool judge_status(const cf_case *c, bool says, bp_status st, const bp_tensor *out,
                         cf_result *r)
{
    const char *dt = bp_dtype_name(c->dtype);
    r->status = CF_FAIL;
    if (!says && st == BP_ERR_UNSUPPORTED_OP) {
        r->status = CF_UNSUPPORTED;
        CF_MSG(r, "%s [%s]: declared unsupported", c->name, dt);
    } else if (!says && st == BP_OK) {
        r->supports_mismatch = true;
        CF_MSG(r, "%s [%s]: supports lies: supports() said false but the op succeeded", c->name,
               dt);
    } else if (!says) {
        CF_MSG(r, "%s [%s]: supports() said false, yet the op failed with %s instead of "
               "BP_ERR_UNSUPPORTED_OP: %s", c->name, dt, bp_status_string(st), bp_last_error());
    } else if (st == BP_ERR_UNSUPPORTED_OP) {
        r->supports_mismatch = true;
        CF_MSG(r, "%s [%s]: refused with BP_ERR_UNSUPPORTED_OP although supports() said yes: %s",
               c->name, dt, bp_last_error());
    } else if (st != BP_OK) {
        CF_MSG(r, "%s [%s] %s: failed with %s: %s", c->name, dt, c->label, bp_status_string(st),
               bp_last_error());
    } else if (!out) {
        CF_MSG(r, "%s: returned BP_OK without a result", c->name);
    } else {
        return true;
    }
    return false;
}

/* A result to check: guard bytes first (a write outside a tensor makes its
 * values meaningless), then the oracle's values. */
static void check_result(const cf_worker_env *env, const cf_case *c, bp_tensor *out,
                         bp_tensor *out2, const cf_inputs *in, cf_result *r)
{
    bool guards = check_guards(c, out, "result", r) && check_guards(c, out2, "second result", r);
    for (int k = 0; guards && k < in->n; k++)
        guards = check_guards(c, in->ops[k].t, "input", r);
    if (!guards) {
        r->status = CF_FAIL;
        return;
    }
    expected e;
    memset(&e, 0, sizeof e);
    cf_array ins[CF_MAX_OPERANDS];
    for (int k = 0; k < CF_MAX_OPERANDS; k++)
        ins[k] = in->ops[k].a;
    if (!cf_case_oracle(c, ins, in->n, &e.want, &e.want2, &e.scale, &e.k)) {
        r->status = CF_FAIL;
        CF_MSG(r, "%s: the oracle does not know this case (a bug in conform)", c->name);
    } else {
        check_output(env, c, out, out2, &e, in, r);
    }
    cf_array_free(&e.want);
    cf_array_free(&e.want2);
    free(e.scale);
}

static void run_op(const cf_worker_env *env, const cf_case *c, const cf_inputs *in, cf_result *r)
{
    bool compose = cf_is_compose(c->op);
    bool says = compose || declared(env, c);
    bp_tensor *out = NULL, *out2 = NULL;
    bp_status st = call_op(env, c, in->ops, in->n, &out, &out2);
    if (compose && st == BP_ERR_UNSUPPORTED_OP) /* a part is missing: no supports() to ask */
        says = false;
    if (judge_status(c, says, st, out, r))
        check_result(env, c, out, out2, in, r);
    if (compose && r->status == CF_FAIL) { /* where a wrong value comes from */
        size_t used = strlen(r->message);
        snprintf(r->message + used, sizeof r->message - used, " (composed of %s)",
                 cf_compose_parts(c));
    }
    bp_tensor_release(out);
    bp_tensor_release(out2);
}

void cf_exec_case(const cf_worker_env *env, const cf_case *c, cf_result *r)
{
    r->status = CF_FAIL;
    r->max_error = 0;
    r->tolerance = 0;
    r->message[0] = '\0';
    if (c->op == CF_OP_CONTRACT_ABI) {
        cf_contract_abi(env, c, r);
        return;
    }
    if (cf_is_nn_case(c)) { /* nn.h's ops: exec_nn.c */
        cf_exec_nn_case(env, c, r);
        return;
    }
    cf_inputs in;
    if (!cf_make_inputs(env, c, &in, r))
        return;
    if (c->op == CF_OP_CONTRACT_ROUNDTRIP) {
        cf_contract_roundtrip(c, &in.ops[0], r);
        if (r->status == CF_PASS && !check_guards(c, in.ops[0].t, "written buffer", r))
            r->status = CF_FAIL;
    } else {
        run_op(env, c, &in, r);
    }
    cf_inputs_free(&in);
}

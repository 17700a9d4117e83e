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
    bp_op_kind kind = c->op < BP_OP_COUNT ? bp_op_kind_of((bp_op)c->op) : BP_KIND_COUNT;
    bool elementwise = kind == BP_KIND_UNARY || c->op == BP_OP_CAST || c->op == BP_OP_COPY;
    buf[0] = '\0';
    if (elementwise && bad >= 0 && bad < ops[0].a.n)
        snprintf(buf, cap, "; input %.17g", cf_get_f(&ops[0].a, bad));
    else if (kind == BP_KIND_BINARY && in->n == 2 && ops[0].a.n == n_out &&
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

/* ---- one case -------------------------------------------------------------------- */

bool cf_judge_status(const cf_case *c, bool says, bp_status st, const bp_tensor *out,
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
    bp_status st = cf_call_op(env->be, c, in->ops, in->n, &out, &out2);
    if (compose && st == BP_ERR_UNSUPPORTED_OP) /* a part is missing: no supports() to ask */
        says = false;
    if (cf_judge_status(c, says, st, out, r))
        check_result(env, c, out, out2, in, r);
    if (env->graph && r->status == CF_PASS)
        cf_graph_check(env, c, in, out, out2, r);
    if (compose && r->status == CF_FAIL) { /* where a wrong value comes from */
        size_t used = strlen(r->message);
        snprintf(r->message + used, sizeof r->message - used, " (composed of %s)",
                 cf_compose_parts(c));
    }
    bp_tensor_release(out);
    bp_tensor_release(out2);
}

/* Whether the backend can hold the case's dtypes at all: a plugin built
 * before a dtype arrived (i16, u16, u32: plugin ABI 1.10) is never handed
 * one, and the core's bp_backend_supports says no for every op of it. */
static bool holds_dtypes(bp_backend *be, const cf_case *c)
{
    return bp_backend_supports(be, BP_OP_COPY, c->dtype) &&
           bp_backend_supports(be, BP_OP_COPY, c->dtype2);
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
    if (!holds_dtypes(env->be, c)) {
        r->status = CF_UNSUPPORTED;
        CF_MSG(r, "%s [%s]: the backend holds no %s (its plugin predates the dtype)", c->name,
               bp_dtype_name(c->dtype),
               bp_backend_supports(env->be, BP_OP_COPY, c->dtype) ? bp_dtype_name(c->dtype2)
                                                                  : bp_dtype_name(c->dtype));
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

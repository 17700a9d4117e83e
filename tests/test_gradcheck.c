/* The gradient check, generated from the op table: for every op and every
 * input whose gradient column has a rule (bp_op_gradient), on every backend,
 * the gradient bp_graph_vjp records against central finite differences of
 * the eager op, in f64 with PyTorch's gradcheck bounds (eps 1e-6, atol 1e-5,
 * rtol 1e-3). Inputs are drawn from the op's schema domain (bp_op_domain),
 * continuous, so no draw lands on a kink (relu at 0, a tie of max). The
 * function differentiated is sum(w * op(...)) with random weights w, so
 * every element of the vector-Jacobian product is exercised. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "op_args.h"

#define EPS 1e-6
#define ATOL 1e-5
#define RTOL 1e-3

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double uniform(double lo, double hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Input k's range: the schema's domain, else [-2, 2]. */
static void input_range(bp_op op, int32_t k, double *lo, double *hi)
{
    char name[32];
    bool integral;
    *lo = -2, *hi = 2;
    if (!*bp_op_arg_name(bp_op_info_of(op)->in, k, name, sizeof name) ||
        bp_op_domain(op, name, BP_F64, lo, hi, &integral) != BP_OK) {
        *lo = -2, *hi = 2;
        return;
    }
    /* keep eps steps inside a closed domain (sqrt at 0, acosh at 1) */
    double margin = 1e-3 * (*hi - *lo);
    *lo += margin, *hi -= margin;
}

/* A fresh f64 tensor like t with values drawn from [lo, hi]. */
static bp_tensor *random_like(bp_backend *be, const bp_tensor *t, double lo, double hi)
{
    int64_t n = bp_tensor_numel(t);
    double *v = malloc(((size_t)n + 1) * sizeof *v);
    cr_assert(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = uniform(lo, hi);
    bp_tensor *r = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F64, bp_tensor_rank(t), bp_tensor_shape(t), v, &r));
    free(v);
    return r;
}

typedef struct gc_case {
    bp_backend *be;
    bp_op op;
    bp_tensor *in[5];
    bpt_op_args args;
    double params[2];
} gc_case;

static bp_status invoke(const gc_case *c, bp_tensor *const *in, bp_tensor **y)
{
    bp_tensor *o2 = NULL;
    bp_status st;
    if (bp_op_kind_of(c->op) == BP_KIND_UNARY) {
        st = bp_unary_params(c->op, in[0], c->params[0], c->params[1], y);
    } else if (!bpt_op_invoke(c->op, in, &c->args, y, &o2, &st)) {
        return BP_ERR_UNSUPPORTED_OP;
    }
    bp_tensor_release(o2);
    return st;
}

static double *to_host(const bp_tensor *t)
{
    size_t n = (size_t)bp_tensor_numel(t);
    double *v = malloc((n + 1) * sizeof *v);
    cr_assert(v);
    BPT_OK(bp_tensor_to_host(t, v, n * sizeof *v));
    return v;
}

/* sum(w * op(in with input k's element j moved by delta)). */
static double objective(gc_case *c, int32_t k, int64_t j, double delta, const double *w)
{
    bp_tensor *in[5];
    memcpy(in, c->in, sizeof in);
    double *xv = to_host(c->in[k]);
    xv[j] += delta;
    bp_tensor *moved = NULL, *y = NULL;
    BPT_OK(bp_tensor_from_host(c->be, BP_F64, bp_tensor_rank(c->in[k]), bp_tensor_shape(c->in[k]),
                               xv, &moved));
    free(xv);
    in[k] = moved;
    BPT_OK(invoke(c, in, &y));
    double *yv = to_host(y), s = 0;
    for (int64_t i = 0; i < bp_tensor_numel(y); i++)
        s += w[i] * yv[i];
    free(yv);
    bp_tensor_release(y);
    bp_tensor_release(moved);
    return s;
}

/* The recorded vector-Jacobian product for input k, seeded with w. */
static double *recorded_gradient(gc_case *c, int32_t k, const bp_tensor *w)
{
    bp_graph *g = NULL;
    bp_graph_exec *exe = NULL;
    bp_tensor *x = NULL, *y = NULL, *gx = NULL, *out = NULL;
    BPT_OK(bp_graph_create(c->be, &g));
    BPT_OK(bp_graph_input(g, BP_F64, bp_tensor_rank(c->in[k]), bp_tensor_shape(c->in[k]), &x));
    bp_tensor *in[5];
    memcpy(in, c->in, sizeof in);
    in[k] = x; /* the others: captured */
    BPT_OK(invoke(c, in, &y));
    BPT_OK(bp_graph_vjp(g, 1, (const bp_tensor *const[]){y}, (const bp_tensor *const[]){w}, 1,
                        (const bp_tensor *const[]){x}, &gx));
    BPT_OK(bp_graph_output(g, gx));
    BPT_OK(bp_graph_compile(g, NULL, &exe));
    BPT_OK(bp_graph_run(exe, 1, &c->in[k], 1, &out));
    double *v = to_host(out);
    bp_tensor_release(out);
    bp_graph_exec_release(exe);
    bp_tensor_release(gx);
    bp_tensor_release(y);
    bp_tensor_release(x);
    bp_graph_release(g);
    return v;
}

/* 0: checked; 1: skipped (the backend lacks the op in f64). */
static int check_input(gc_case *c, int32_t k)
{
    bp_tensor *y = NULL;
    bp_status st = invoke(c, c->in, &y);
    if (st == BP_ERR_UNSUPPORTED_OP || st == BP_ERR_DTYPE)
        return 1;
    BPT_OK(st);
    bp_tensor *w = random_like(c->be, y, -1, 1);
    double *wv = to_host(w);
    double *got = recorded_gradient(c, k, w);
    int64_t n = bp_tensor_numel(c->in[k]);
    for (int64_t j = 0; j < n; j++) {
        double want = (objective(c, k, j, EPS, wv) - objective(c, k, j, -EPS, wv)) / (2 * EPS);
        char name[32];
        bp_op_arg_name(bp_op_info_of(c->op)->in, k, name, sizeof name);
        cr_expect(fabs(got[j] - want) <= ATOL + RTOL * fabs(want),
                  "%s on %s: d/d%s[%lld] recorded %.12g, finite differences %.12g",
                  bp_op_name(c->op), bp_backend_name(c->be), name, (long long)j, got[j], want);
    }
    free(got);
    free(wv);
    bp_tensor_release(w);
    bp_tensor_release(y);
    return 0;
}

static void case_init(gc_case *c, bp_backend *be, bp_op op)
{
    memset(c, 0, sizeof *c);
    c->be = be;
    c->op = op;
    bpt_op_args_default(op, be, BP_F64, &c->args);
    c->args.n_axes = 0;
    c->args.dtype = BP_F64; /* cast: f64 to f64 here (f32 has no room for eps 1e-6) */
    int n = bp_op_param_defaults(op, c->params);
    for (int k = 0; k < n; k++) {
        char name[32];
        double lo, hi;
        bool integral;
        if (bp_op_domain(op, bp_op_param_name(op, k, name, sizeof name), BP_F64, &lo, &hi,
                         &integral) == BP_OK)
            c->params[k] = lo;
    }
    BPT_OK(bpt_op_operands(be, op, BP_F64, c->in));
    /* the optional operands too: clip's bounds over x's shape, gemm's c
     * broadcast along the rows, with alpha and beta not 1 */
    static const int64_t s23[2] = {2, 3}, s12[2] = {1, 2};
    if (op == BP_OP_CLIP)
        for (int k = 1; k <= 2; k++)
            BPT_OK(bp_zeros(be, BP_F64, 2, s23, &c->in[k]));
    if ((op == BP_OP_CONV || op == BP_OP_LAYER_NORM) && !c->in[2]) {
        const bp_tensor *like = c->in[1]; /* conv: bias (M); layer_norm: scale's shape */
        int64_t m = bp_tensor_shape(like)[0];
        if (op == BP_OP_CONV)
            BPT_OK(bp_zeros(be, BP_F64, 1, &m, &c->in[2]));
        else
            BPT_OK(bp_zeros(be, BP_F64, bp_tensor_rank(like), bp_tensor_shape(like), &c->in[2]));
    }
    if (op == BP_OP_GEMM) {
        BPT_OK(bp_zeros(be, BP_F64, 2, s12, &c->in[2]));
        c->args.f0 = 1.5, c->args.f1 = 0.75;
    }
    for (int32_t k = 0; k < 5; k++) {
        if (!c->in[k] || bp_tensor_dtype(c->in[k]) != BP_F64)
            continue;
        double lo, hi;
        input_range(op, k, &lo, &hi);
        bp_tensor *r = random_like(be, c->in[k], lo, hi);
        bp_tensor_release(c->in[k]);
        c->in[k] = r;
    }
}

static void case_free(gc_case *c)
{
    for (int32_t k = 0; k < 5; k++)
        bp_tensor_release(c->in[k]);
}

Test(gradcheck, every_rule_of_the_op_table_matches_finite_differences_on_every_backend)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    int checked = 0, rules = 0;
    BPT_FOR_EACH_BACKEND(ctx, be)
    {
        for (int o = 0; o < BP_OP_COUNT; o++) {
            bp_op op = (bp_op)o;
            for (int32_t k = 0; k < 5; k++) {
                if (bp_op_gradient(op, k) != BP_GRADIENT_RULE)
                    continue;
                rules++;
                gc_case c;
                case_init(&c, be, op);
                if (c.in[k] && bp_tensor_dtype(c.in[k]) == BP_F64 && check_input(&c, k) == 0)
                    checked++;
                else
                    cr_log_info("gradcheck: %s on %s, input %d: skipped (not f64 here, or the "
                                "backend lacks it)", bp_op_name(op), bp_backend_name(be), (int)k);
                case_free(&c);
            }
        }
    }
    cr_log_info("gradcheck: %d of %d (backend, op, input) rules checked", checked, rules);
    cr_assert_gt(checked, 0);
    bp_context_destroy(ctx);
}

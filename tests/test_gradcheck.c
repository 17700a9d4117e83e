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

/* t's values as doubles (converted by the library where t is not f64). */
static double *to_host(const bp_tensor *t)
{
    size_t n = (size_t)bp_tensor_numel(t);
    double *v = malloc((n + 1) * sizeof *v);
    cr_assert(v);
    bp_tensor *d = NULL;
    if (bp_tensor_dtype(t) != BP_F64)
        BPT_OK(bp_cast(t, BP_F64, &d));
    BPT_OK(bp_tensor_to_host(d ? d : t, v, n * sizeof *v));
    bp_tensor_release(d);
    return v;
}

/* sum(w * op(in with input k's element j moved by delta)), in the inputs'
 * dtype; *moved_to: the element's value after the move (rounded to it). */
static double objective(gc_case *c, int32_t k, int64_t j, double delta, const double *w,
                        double *moved_to)
{
    bp_tensor *in[5];
    memcpy(in, c->in, sizeof in);
    double *xv = to_host(c->in[k]);
    xv[j] += delta;
    bp_tensor *moved64 = NULL, *moved = NULL, *y = NULL;
    BPT_OK(bp_tensor_from_host(c->be, BP_F64, bp_tensor_rank(c->in[k]), bp_tensor_shape(c->in[k]),
                               xv, &moved64));
    free(xv);
    BPT_OK(bp_cast(moved64, bp_tensor_dtype(c->in[k]), &moved));
    double *mv = to_host(moved);
    *moved_to = mv[j];
    free(mv);
    in[k] = moved;
    BPT_OK(invoke(c, in, &y));
    double *yv = to_host(y), s = 0;
    for (int64_t i = 0; i < bp_tensor_numel(y); i++)
        s += w[i] * yv[i];
    free(yv);
    bp_tensor_release(y);
    bp_tensor_release(moved);
    bp_tensor_release(moved64);
    return s;
}

/* Central differences of the objective at input k's element j, over the
 * step the rounded inputs really took. */
static double central(gc_case *c, int32_t k, int64_t j, double eps, const double *w)
{
    double hi_x, lo_x;
    double hi = objective(c, k, j, eps, w, &hi_x), lo = objective(c, k, j, -eps, w, &lo_x);
    return (hi - lo) / (hi_x - lo_x);
}

/* The recorded vector-Jacobian product for input k, seeded with w. */
static double *recorded_gradient(gc_case *c, int32_t k, const bp_tensor *w)
{
    bp_graph *g = NULL;
    bp_graph_exec *exe = NULL;
    bp_tensor *x = NULL, *y = NULL, *gx = NULL, *out = NULL;
    BPT_OK(bp_graph_create(c->be, &g));
    BPT_OK(bp_graph_input(g, bp_tensor_dtype(c->in[k]), bp_tensor_rank(c->in[k]),
                          bp_tensor_shape(c->in[k]), &x));
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
        double want = central(c, k, j, EPS, wv);
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
    bool conv = op == BP_OP_CONV || op == BP_OP_CONV_TRANSPOSE;
    if ((conv || op == BP_OP_LAYER_NORM) && !c->in[2]) {
        /* conv: bias (M), w (M, C / groups, K...); conv_transpose: w (C, M / groups, K...),
         * one group here; layer_norm: scale's shape */
        const bp_tensor *like = c->in[1];
        int64_t m = bp_tensor_shape(like)[op == BP_OP_CONV_TRANSPOSE ? 1 : 0];
        if (conv)
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

/* A copy of case c with its f64 inputs converted to dt. */
static void case_as(const gc_case *c, bp_dtype dt, gc_case *out)
{
    *out = *c;
    for (int32_t i = 0; i < 5; i++) {
        out->in[i] = NULL;
        if (!c->in[i])
            continue;
        if (bp_tensor_dtype(c->in[i]) == BP_F64 || bp_tensor_dtype(c->in[i]) == BP_F32)
            BPT_OK(bp_cast(c->in[i], dt, &out->in[i]));
        else
            BPT_OK(bp_cast(c->in[i], bp_tensor_dtype(c->in[i]), &out->in[i]));
    }
}

static double norm_of_difference(const double *a, const double *b, int64_t n)
{
    double s = 0;
    for (int64_t j = 0; j < n; j++)
        s += b ? (a[j] - b[j]) * (a[j] - b[j]) : a[j] * a[j];
    return sqrt(s);
}

/* ggml's form in f32: eps 1e-2, the error relative to the gradient's norm at
 * most 1e-3, where the op is smooth at that scale. Smooth is measured, not
 * listed, and without the rule under test: f64's central differences with
 * eps 1e-2 at the same points agree with f64's with eps 1e-6 to 1e-3 of
 * their norm (no kink, domain edge or fast curvature within eps). 0: checked; 1: skipped (not in f32
 * here); 2: not smooth at eps 1e-2 here; 3: f32's differences too coarse
 * here (the objective's rounding in f32 moves them by more than half the
 * bound: a gradient tiny beside the function's value). */
static int check_input_f32(gc_case *c, int32_t k)
{
    const double eps32 = 1e-2, tol = 1e-3;
    gc_case c32, c64;
    case_as(c, BP_F32, &c32);
    case_as(&c32, BP_F64, &c64); /* f64 at the f32 points */
    bp_tensor *y = NULL;
    bp_status st = invoke(&c32, c32.in, &y);
    int verdict = 1;
    if (st == BP_OK) {
        bp_tensor *w64 = random_like(c->be, y, -1, 1), *w32 = NULL, *w = NULL;
        BPT_OK(bp_cast(w64, BP_F32, &w32));
        BPT_OK(bp_cast(w32, bp_tensor_dtype(y), &w)); /* the seed in y's dtype */
        double *wv = to_host(w32);
        int64_t n = bp_tensor_numel(c->in[k]);
        double *fine = calloc((size_t)n + 1, sizeof *fine);
        double *fd = calloc((size_t)n + 1, sizeof *fd);
        double *fd32 = calloc((size_t)n + 1, sizeof *fd32);
        cr_assert(fine && fd && fd32);
        /* smooth at eps: f64's differences at eps agree with f64's at 1e-6 */
        for (int64_t j = 0; j < n; j++) {
            fine[j] = central(&c64, k, j, EPS, wv);
            fd[j] = central(&c64, k, j, eps32, wv);
        }
        double fn = norm_of_difference(fine, NULL, n), err = norm_of_difference(fd, fine, n);
        verdict = isfinite(err) && isfinite(fn) && err <= tol * fn ? 0 : 2;
        if (verdict == 0) {
            /* f32's differences resolve the gradient only where rounding the
             * objective moves them by less than half the bound (their
             * distance from f64's differences at the same points and eps) */
            for (int64_t j = 0; j < n; j++)
                fd32[j] = central(&c32, k, j, eps32, wv);
            if (norm_of_difference(fd32, fd, n) > 0.5 * tol * norm_of_difference(fd32, NULL, n))
                verdict = 3;
        }
        if (verdict == 0) {
            double *g32 = recorded_gradient(&c32, k, w);
            double e32 = norm_of_difference(g32, fd32, n), n32 = norm_of_difference(fd32, NULL, n);
            cr_expect(e32 <= tol * n32,
                      "%s on %s, input %d, f32: |recorded - differences| = %.3g, %.3g of the "
                      "gradient's norm %.3g (at most %g)",
                      bp_op_name(c->op), bp_backend_name(c->be), (int)k, e32, e32 / n32, n32,
                      tol);
            free(g32);
        }
        free(fine);
        free(fd32);
        free(fd);
        free(wv);
        bp_tensor *rel[] = {w64, w32, w};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
            bp_tensor_release(rel[i]);
    }
    bp_tensor_release(y);
    case_free(&c32);
    case_free(&c64);
    return verdict;
}

/* Every (backend, op, input) whose gradient column has a rule, checked by
 * check (its verdict: 0 checked, 1 the backend lacks the op or dtype, 2 and
 * 3 the f32 check's skips), counted in counts[verdict]; *rules: how many. */
static void walk_rules(int (*check)(gc_case *c, int32_t k), int counts[4], int *rules)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be)
    {
        for (int o = 0; o < BP_OP_COUNT; o++) {
            bp_op op = (bp_op)o;
            for (int32_t k = 0; k < 5; k++) {
                if (bp_op_gradient(op, k) != BP_GRADIENT_RULE)
                    continue;
                ++*rules;
                gc_case c;
                case_init(&c, be, op);
                cr_assert(c.in[k] && bp_tensor_dtype(c.in[k]) == BP_F64,
                          "%s's input %d has a rule but its operand is not a float", bp_op_name(op),
                          (int)k);
                int v = check(&c, k);
                counts[v]++;
                cr_expect(v != 1 || strncmp(bp_backend_name(be), "devsim", 6) == 0,
                          "%s on %s: only devsim, an older plugin, may lack an op",
                          bp_op_name(op), bp_backend_name(be));
                static const char *const why[4] = {
                    NULL, "the backend lacks it in this dtype",
                    "not smooth at eps 1e-2 at these points (f64's differences at 1e-2 and 1e-6 "
                    "disagree)",
                    "f32's differences cannot resolve this gradient (the objective's rounding "
                    "moves them more)"};
                if (v)
                    cr_log_info("gradcheck: %s on %s, input %d: skipped, %s", bp_op_name(op),
                                bp_backend_name(be), (int)k, why[v]);
                case_free(&c);
            }
        }
    }
    bp_context_destroy(ctx);
}

Test(gradcheck, every_rule_in_f32_matches_finite_differences_where_the_op_is_smooth)
{
    int counts[4] = {0}, rules = 0;
    walk_rules(check_input_f32, counts, &rules);
    cr_log_info("gradcheck f32: %d of %d (backend, op, input) rules checked, %d skipped as not "
                "smooth at eps 1e-2 or not resolved by f32's differences here, %d lacking",
                counts[0], rules, counts[2] + counts[3], counts[1]);
    cr_assert_gt(counts[0], rules / 2);
}

/* Only an op a backend lacks is skipped in f64 (devsim is an older plugin). */
Test(gradcheck, every_rule_of_the_op_table_matches_finite_differences_on_every_backend)
{
    int counts[4] = {0}, rules = 0;
    walk_rules(check_input, counts, &rules);
    cr_log_info("gradcheck: %d of %d (backend, op, input) rules checked, %d lacking", counts[0],
                rules, counts[1]);
    cr_assert_eq(counts[0] + counts[1], rules);
}

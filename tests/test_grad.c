/* Gradients on graphs (bp_graph_grad, bp_graph_vjp): the reverse pass's
 * handling of views (broadcast operands summed back, transposes, slices,
 * concat parts, reshapes), composite models against finite differences of
 * the same model run eagerly, second order, and the refusals. The rules one
 * by one are checked by test_gradcheck.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"

#define EPS 1e-6
#define ATOL 1e-5
#define RTOL 1e-3
#define MAX_IN 6

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static double uniform(double lo, double hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (double)(rng_state >> 11) / 9007199254740992.0;
}

static bp_tensor *tensor(bp_backend *be, int32_t rank, const int64_t *shape, const double *v)
{
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F64, rank, shape, v, &t));
    return t;
}

static double *to_host(const bp_tensor *t)
{
    size_t n = (size_t)bp_tensor_numel(t);
    double *v = malloc((n + 1) * sizeof *v);
    cr_assert(v);
    BPT_OK(bp_tensor_to_host(t, v, n * sizeof *v));
    return v;
}

static double scalar(const bp_tensor *t)
{
    double *v = to_host(t), s = v[0];
    free(v);
    return s;
}

static bp_tensor *constant(bp_backend *be, double v)
{
    bp_tensor *c = NULL;
    BPT_OK(bp_full(be, BP_F64, 0, NULL, v, &c));
    return c;
}

/* A model: a scalar loss of its inputs, written once with public ops, run
 * eagerly on concrete tensors or recorded on symbolic ones. */
typedef bp_tensor *(*model_fn)(bp_backend *be, bp_tensor *const *x);

typedef struct model_case {
    int32_t n;
    int32_t rank[MAX_IN];
    int64_t shape[MAX_IN][4];
    double lo, hi;
} model_case;

/* The recorded gradient of every input against central differences of the
 * eager model, at the given values (input i's where values[i] is not NULL)
 * or at values drawn from [mc->lo, mc->hi]. */
static void check_model_at(bp_backend *be, model_fn f, const model_case *mc,
                           const double *const *values)
{
    bp_tensor *x[MAX_IN] = {NULL}, *sym[MAX_IN] = {NULL}, *grads[MAX_IN] = {NULL};
    bp_tensor *out[MAX_IN] = {NULL};
    double *xv[MAX_IN];
    int64_t numel[MAX_IN];
    for (int32_t i = 0; i < mc->n; i++) {
        numel[i] = 1;
        for (int32_t d = 0; d < mc->rank[i]; d++)
            numel[i] *= mc->shape[i][d];
        xv[i] = malloc(((size_t)numel[i] + 1) * sizeof(double));
        for (int64_t j = 0; j < numel[i]; j++)
            xv[i][j] = values && values[i] ? values[i][j] : uniform(mc->lo, mc->hi);
        x[i] = tensor(be, mc->rank[i], mc->shape[i], xv[i]);
    }
    bp_graph *g = NULL;
    bp_graph_exec *exe = NULL;
    BPT_OK(bp_graph_create(be, &g));
    for (int32_t i = 0; i < mc->n; i++)
        BPT_OK(bp_graph_input(g, BP_F64, mc->rank[i], mc->shape[i], &sym[i]));
    bp_tensor *loss = f(be, sym);
    BPT_OK(bp_graph_grad(g, loss, mc->n, (const bp_tensor *const *)sym, grads));
    for (int32_t i = 0; i < mc->n; i++)
        BPT_OK(bp_graph_output(g, grads[i]));
    BPT_OK(bp_graph_compile(g, NULL, &exe));
    BPT_OK(bp_graph_run(exe, mc->n, x, mc->n, out));
    for (int32_t i = 0; i < mc->n; i++) {
        double *got = to_host(out[i]);
        for (int64_t j = 0; j < numel[i]; j++) {
            double keep = xv[i][j], fx[2];
            for (int s = 0; s < 2; s++) {
                xv[i][j] = keep + (s ? -EPS : EPS);
                bp_tensor *moved = tensor(be, mc->rank[i], mc->shape[i], xv[i]), *was = x[i];
                x[i] = moved;
                bp_tensor *l = f(be, x);
                fx[s] = scalar(l);
                bp_tensor_release(l);
                x[i] = was;
                bp_tensor_release(moved);
            }
            xv[i][j] = keep;
            double want = (fx[0] - fx[1]) / (2 * EPS);
            cr_expect(fabs(got[j] - want) <= ATOL + RTOL * fabs(want),
                      "on %s: d loss / d x%d[%lld] recorded %.12g, finite differences %.12g",
                      bp_backend_name(be), (int)i, (long long)j, got[j], want);
        }
        free(got);
    }
    for (int32_t i = 0; i < mc->n; i++) {
        bp_tensor_release(out[i]);
        bp_tensor_release(grads[i]);
        bp_tensor_release(sym[i]);
        bp_tensor_release(x[i]);
        free(xv[i]);
    }
    bp_tensor_release(loss);
    bp_graph_exec_release(exe);
    bp_graph_release(g);
}

static void check_model(bp_backend *be, model_fn f, const model_case *mc)
{
    check_model_at(be, f, mc, NULL);
}

/* loss = sum(w * t) with fixed weights w (1, 2, 3, ... scaled), so that
 * every element's gradient differs. */
static bp_tensor *weighted_sum(bp_backend *be, bp_tensor *t)
{
    int64_t n = bp_tensor_numel(t);
    double *w = malloc(((size_t)n + 1) * sizeof *w);
    for (int64_t j = 0; j < n; j++)
        w[j] = 0.25 + 0.1 * (double)(j % 7) - 0.05 * (double)(j % 3);
    bp_tensor *wt = tensor(be, bp_tensor_rank(t), bp_tensor_shape(t), w), *p = NULL, *s = NULL;
    free(w);
    BPT_OK(bp_mul(t, wt, &p));
    BPT_OK(bp_sum(p, 0, NULL, false, &s));
    bp_tensor_release(wt);
    bp_tensor_release(p);
    bp_tensor_release(t);
    return s;
}

#define FOR_EACH_BACKEND(be)                                                                   \
    bp_context *ctx_ = bpt_context();                                                          \
    bp_backend *be;                                                                            \
    BPT_FOR_EACH_BACKEND(ctx_, be)

#define END_BACKENDS bp_context_destroy(ctx_)

/* ---- broadcasting ------------------------------------------------------------- */

static bp_tensor *broadcast_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *a = NULL, *m = NULL;
    BPT_OK(bp_add(x[0], x[1], &a)); /* (3, 1) + (1, 4) */
    BPT_OK(bp_mul(a, x[2], &m));    /* * (4,) */
    bp_tensor_release(a);
    return weighted_sum(be, m);
}

Test(grad, a_broadcast_operand_gets_its_gradient_summed_back_to_its_shape)
{
    model_case mc = {3, {2, 2, 1}, {{3, 1}, {1, 4}, {4}}, -2, 2};
    FOR_EACH_BACKEND(be) check_model(be, broadcast_model, &mc);
    END_BACKENDS;
}

/* ---- movement: transpose, slices (strided, reversed), concat, pad ------------- */

static bp_tensor *movement_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *t = NULL, *s = NULL, *r = NULL, *c = NULL, *p = NULL, *b = NULL, *q = NULL;
    BPT_OK(bp_transpose(x[0], NULL, &t)); /* (4, 3) */
    BPT_OK(bp_slice(t, (const int64_t[]){0, 0}, (const int64_t[]){4, 3},
                    (const int64_t[]){2, 1}, &s)); /* (2, 3), every other row */
    BPT_OK(bp_slice(x[0], (const int64_t[]){-1, -1}, NULL, (const int64_t[]){-1, -2},
                    &r)); /* (3, 2) reversed, every other column */
    bp_tensor *rt = NULL;
    BPT_OK(bp_transpose(r, NULL, &rt)); /* (2, 3) */
    BPT_OK(bp_concat(3, (const bp_tensor *const[]){s, rt, s}, 0, &c)); /* (6, 3) */
    BPT_OK(bp_pad(c, (const int64_t[]){1, 0}, (const int64_t[]){0, 2}, 0.5, &p)); /* (7, 5) */
    BPT_OK(bp_broadcast_to(x[1], 2, (const int64_t[]){7, 5}, &b)); /* x1 (1, 5) */
    BPT_OK(bp_mul(p, b, &q));
    bp_tensor *tmp[] = {t, s, r, rt, c, p, b};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        bp_tensor_release(tmp[i]);
    return weighted_sum(be, q);
}

Test(grad, transposes_slices_concat_pad_and_broadcast_to_put_gradients_back_where_they_read)
{
    model_case mc = {2, {2, 2}, {{3, 4}, {1, 5}}, -2, 2};
    FOR_EACH_BACKEND(be) check_model(be, movement_model, &mc);
    END_BACKENDS;
}

/* Parts joined along an inner axis interleave in memory: the reverse pass
 * must see that they write apart, not over each other. */
static bp_tensor *inner_concat_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *e = NULL, *c = NULL;
    BPT_OK(bp_exp(x[1], &e));
    BPT_OK(bp_concat(3, (const bp_tensor *const[]){x[0], e, x[0]}, 1, &c)); /* (2, 3, 4) */
    bp_tensor_release(e);
    return weighted_sum(be, c);
}

Test(grad, concat_of_three_parts_along_an_inner_axis_puts_each_gradient_back)
{
    model_case mc = {2, {3, 3}, {{2, 1, 4}, {2, 1, 4}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, inner_concat_model, &mc);
    END_BACKENDS;
}

static bp_tensor *reshape_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *r = NULL, *sq = NULL;
    BPT_OK(bp_reshape(x[0], 2, (const int64_t[]){3, 4}, &r)); /* an alias: no node */
    BPT_OK(bp_mul(r, r, &sq));                                /* x used twice: summed */
    bp_tensor_release(r);
    return weighted_sum(be, sq);
}

Test(grad, a_reshaped_view_and_an_input_used_twice_accumulate_into_one_gradient)
{
    model_case mc = {1, {3}, {{2, 3, 2}}, -2, 2};
    FOR_EACH_BACKEND(be) check_model(be, reshape_model, &mc);
    END_BACKENDS;
}

/* ---- matmul with broadcast batches and vectors ---------------------------------- */

static bp_tensor *matmul_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *m = NULL, *v = NULL, *s = NULL;
    BPT_OK(bp_matmul(x[0], x[1], &m)); /* (2, 3, 4) @ (4, 2) -> (2, 3, 2) */
    BPT_OK(bp_matmul(m, x[2], &v));    /* @ (2,) -> (2, 3) */
    BPT_OK(bp_matmul(x[3], v, &s));    /* (2,) @ (2, 3)... batched: (3,) */
    bp_tensor_release(m);
    bp_tensor_release(v);
    return weighted_sum(be, s);
}

Test(grad, matmul_with_broadcast_batches_and_vectors)
{
    model_case mc = {4, {3, 2, 1, 1}, {{2, 3, 4}, {4, 2}, {2}, {2}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, matmul_model, &mc);
    END_BACKENDS;
}

static bp_tensor *gemm_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *y = NULL;
    BPT_OK(bp_gemm(x[0], x[1], x[2], 0.5, 2.0, true, false, &y)); /* a^T (3,2)^T */
    return weighted_sum(be, y);
}

Test(grad, gemm_with_a_transposed_operand_and_a_broadcast_bias)
{
    model_case mc = {3, {2, 2, 1}, {{3, 2}, {3, 4}, {4}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, gemm_model, &mc);
    END_BACKENDS;
}

/* ---- reductions and softmax along inner axes ------------------------------------ */

static bp_tensor *reduce_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL, *s1 = NULL, *s2 = NULL, *s3 = NULL;
    BPT_OK(bp_max(x[0], 1, (const int32_t[]){1}, true, &a));          /* (2, 1, 4) */
    BPT_OK(bp_logsumexp(x[0], 2, (const int32_t[]){0, 2}, false, &b)); /* (3,) */
    BPT_OK(bp_softmax(x[0], 1, &c));                                   /* (2, 3, 4) */
    BPT_OK(bp_log_softmax(x[0], 0, &d));
    BPT_OK(bp_mul(c, a, &s1));
    BPT_OK(bp_add(s1, d, &s2));
    bp_tensor *br = NULL;
    BPT_OK(bp_reshape(b, 3, (const int64_t[]){1, 3, 1}, &br));
    BPT_OK(bp_mul(s2, br, &s3));
    bp_tensor *tmp[] = {a, b, c, d, s1, s2, br};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        bp_tensor_release(tmp[i]);
    return weighted_sum(be, s3);
}

Test(grad, reductions_and_softmax_over_inner_axes)
{
    model_case mc = {1, {3}, {{2, 3, 4}}, -2, 2};
    FOR_EACH_BACKEND(be) check_model(be, reduce_model, &mc);
    END_BACKENDS;
}

static bp_tensor *stats_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *v = NULL, *s = NULL, *p = NULL, *m = NULL, *a = NULL, *b = NULL;
    BPT_OK(bp_reduce_var(x[0], 1, (const int32_t[]){0}, false, 1.0, &v));
    BPT_OK(bp_reduce_std(x[0], 1, (const int32_t[]){1}, true, 0.0, &s));
    BPT_OK(bp_prod(x[0], 1, (const int32_t[]){1}, true, &p));
    BPT_OK(bp_mean(x[0], 0, NULL, false, &m));
    BPT_OK(bp_add(s, p, &a));
    BPT_OK(bp_mul(a, v, &b));
    bp_tensor *c = NULL;
    BPT_OK(bp_add(b, m, &c));
    bp_tensor *tmp[] = {v, s, p, m, a, b};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        bp_tensor_release(tmp[i]);
    return weighted_sum(be, c);
}

Test(grad, variance_std_prod_and_mean_over_chosen_axes)
{
    model_case mc = {1, {2}, {{3, 4}}, 0.5, 2};
    FOR_EACH_BACKEND(be) check_model(be, stats_model, &mc);
    END_BACKENDS;
}

Test(grad, prod_with_a_zero_factor_has_the_product_of_the_others_as_gradient)
{
    FOR_EACH_BACKEND(be)
    {
        bp_graph *g = NULL;
        bp_tensor *x = NULL, *p = NULL, *gx = NULL, *out = NULL;
        bp_graph_exec *exe = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F64, 1, (const int64_t[]){4}, &x));
        BPT_OK(bp_prod(x, 0, NULL, false, &p));
        BPT_OK(bp_graph_grad(g, p, 1, (const bp_tensor *const[]){x}, &gx));
        BPT_OK(bp_graph_output(g, gx));
        BPT_OK(bp_graph_compile(g, NULL, &exe));
        bp_tensor *xc = tensor(be, 1, (const int64_t[]){4}, (const double[]){2, 0, 3, 5});
        BPT_OK(bp_graph_run(exe, 1, &xc, 1, &out));
        double *v = to_host(out);
        double want[4] = {0, 30, 0, 0};
        for (int j = 0; j < 4; j++)
            cr_expect_eq(v[j], want[j], "on %s: [%d] %g, want %g", bp_backend_name(be), j, v[j],
                         want[j]);
        free(v);
        bp_tensor *rel[] = {xc, out, gx, p, x};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
            bp_tensor_release(rel[i]);
        bp_graph_exec_release(exe);
        bp_graph_release(g);
    }
    END_BACKENDS;
}

/* ---- an MLP with a softmax cross-entropy written with ops ------------------------ */

static bp_tensor *mlp_model(bp_backend *be, bp_tensor *const *x)
{
    /* x[0] data (5, 4), x[1] w1 (4, 6), x[2] b1 (6,), x[3] w2 (6, 3), x[4] b2 (3,) */
    bp_tensor *h = NULL, *hb = NULL, *r = NULL, *o = NULL, *ob = NULL, *ls = NULL;
    BPT_OK(bp_matmul(x[0], x[1], &h));
    BPT_OK(bp_add(h, x[2], &hb));
    BPT_OK(bp_tanh(hb, &r));
    BPT_OK(bp_matmul(r, x[3], &o));
    BPT_OK(bp_add(o, x[4], &ob));
    BPT_OK(bp_log_softmax(ob, -1, &ls));
    /* targets one-hot, as a constant: the mean negative log-likelihood */
    double t[15] = {0};
    for (int i = 0; i < 5; i++)
        t[i * 3 + i % 3] = -1.0 / 5;
    bp_tensor *tt = tensor(be, 2, (const int64_t[]){5, 3}, t), *p = NULL, *loss = NULL;
    BPT_OK(bp_mul(ls, tt, &p));
    BPT_OK(bp_sum(p, 0, NULL, false, &loss));
    bp_tensor *tmp[] = {h, hb, r, o, ob, ls, tt, p};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        bp_tensor_release(tmp[i]);
    return loss;
}

Test(grad, an_mlp_with_cross_entropy_matches_finite_differences_for_every_parameter)
{
    model_case mc = {5, {2, 2, 1, 2, 1}, {{5, 4}, {4, 6}, {6}, {6, 3}, {3}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, mlp_model, &mc);
    END_BACKENDS;
}

/* ---- where, clip, floor ------------------------------------------------------------ */

static bp_tensor *select_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *zero = constant(be, 0.0), *cond = NULL, *w = NULL, *fl = NULL, *s = NULL;
    bp_tensor *cl = NULL, *m = NULL;
    BPT_OK(bp_gt(x[0], zero, &cond)); /* a comparison on the path, as a condition: fine */
    BPT_OK(bp_where(cond, x[0], x[1], &w));
    BPT_OK(bp_floor(x[1], &fl)); /* zero almost everywhere */
    BPT_OK(bp_add(w, fl, &s));
    BPT_OK(bp_clip(s, x[1], x[2], &cl));
    BPT_OK(bp_mul(cl, x[0], &m));
    bp_tensor *tmp[] = {zero, cond, w, fl, s, cl};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        bp_tensor_release(tmp[i]);
    return weighted_sum(be, m);
}

Test(grad, where_clip_and_floor_route_the_gradient_by_their_conditions)
{
    model_case mc = {3, {2, 2, 2}, {{4, 5}, {4, 5}, {1, 5}}, -1.5, 1.5};
    FOR_EACH_BACKEND(be) check_model(be, select_model, &mc);
    END_BACKENDS;
}

/* ---- second order -------------------------------------------------------------------- */

Test(grad, the_gradient_of_a_gradient_is_the_second_derivative)
{
    FOR_EACH_BACKEND(be)
    {
        /* f(x) = sum(sin(x) x): f' = cos(x) x + sin(x); f'' = 2 cos(x) - sin(x) x */
        bp_graph *g = NULL;
        bp_tensor *x = NULL, *s = NULL, *p = NULL, *f = NULL, *d1 = NULL, *v = NULL, *q = NULL;
        bp_tensor *h = NULL, *d2 = NULL;
        bp_graph_exec *exe = NULL;
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F64, 1, (const int64_t[]){5}, &x));
        BPT_OK(bp_sin(x, &s));
        BPT_OK(bp_mul(s, x, &p));
        BPT_OK(bp_sum(p, 0, NULL, false, &f));
        BPT_OK(bp_graph_grad(g, f, 1, (const bp_tensor *const[]){x}, &d1));
        BPT_OK(bp_graph_input(g, BP_F64, 1, (const int64_t[]){5}, &v));
        BPT_OK(bp_mul(d1, v, &q));
        BPT_OK(bp_sum(q, 0, NULL, false, &h));
        BPT_OK(bp_graph_grad(g, h, 1, (const bp_tensor *const[]){x}, &d2)); /* Hessian v */
        BPT_OK(bp_graph_output(g, d1));
        BPT_OK(bp_graph_output(g, d2));
        BPT_OK(bp_graph_compile(g, NULL, &exe));
        double xv[5] = {-1.3, -0.2, 0.4, 1.1, 2.5}, vv[5] = {1, -2, 0.5, 3, -1};
        bp_tensor *in[2] = {tensor(be, 1, (const int64_t[]){5}, xv),
                            tensor(be, 1, (const int64_t[]){5}, vv)};
        bp_tensor *out[2] = {NULL, NULL};
        BPT_OK(bp_graph_run(exe, 2, in, 2, out));
        double *a = to_host(out[0]), *b = to_host(out[1]);
        for (int j = 0; j < 5; j++) {
            double w1 = cos(xv[j]) * xv[j] + sin(xv[j]);
            double w2 = (2 * cos(xv[j]) - sin(xv[j]) * xv[j]) * vv[j];
            cr_expect(fabs(a[j] - w1) <= 1e-12 * (1 + fabs(w1)), "on %s: f'[%d] %.15g want %.15g",
                      bp_backend_name(be), j, a[j], w1);
            cr_expect(fabs(b[j] - w2) <= 1e-12 * (1 + fabs(w2)),
                      "on %s: (f'' v)[%d] %.15g want %.15g", bp_backend_name(be), j, b[j], w2);
        }
        free(a), free(b);
        bp_tensor *rel[] = {in[0], in[1], out[0], out[1], x, s, p, f, d1, v, q, h, d2};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
            bp_tensor_release(rel[i]);
        bp_graph_exec_release(exe);
        bp_graph_release(g);
    }
    END_BACKENDS;
}

/* ---- vjp seeds, captured tensors, unrelated inputs ----------------------------------- */

Test(grad, vjp_takes_concrete_or_symbolic_seeds_and_unrelated_inputs_get_zeros)
{
    FOR_EACH_BACKEND(be)
    {
        bp_graph *g = NULL;
        bp_tensor *x = NULL, *u = NULL, *s = NULL, *y = NULL, *gx[2] = {NULL, NULL};
        bp_graph_exec *exe = NULL;
        double cv[3] = {2, -1, 0.5}, sv[3] = {1, 10, 100}, xv[3] = {0.1, 0.2, 0.3};
        bp_tensor *c = tensor(be, 1, (const int64_t[]){3}, cv); /* captured */
        bp_tensor *seed = tensor(be, 1, (const int64_t[]){3}, sv);
        BPT_OK(bp_graph_create(be, &g));
        BPT_OK(bp_graph_input(g, BP_F64, 1, (const int64_t[]){3}, &x));
        BPT_OK(bp_graph_input(g, BP_F64, 1, (const int64_t[]){2}, &u));
        BPT_OK(bp_mul(x, c, &y));
        BPT_OK(bp_graph_vjp(g, 1, (const bp_tensor *const[]){y},
                            (const bp_tensor *const[]){seed}, 2,
                            (const bp_tensor *const[]){x, u}, gx));
        /* a symbolic seed: the input's own values */
        bp_tensor *gs = NULL;
        BPT_OK(bp_graph_vjp(g, 1, (const bp_tensor *const[]){y}, (const bp_tensor *const[]){x},
                            1, (const bp_tensor *const[]){x}, &gs));
        BPT_OK(bp_graph_output(g, gx[0]));
        BPT_OK(bp_graph_output(g, gx[1]));
        BPT_OK(bp_graph_output(g, gs));
        BPT_OK(bp_graph_compile(g, NULL, &exe));
        bp_tensor *in[2] = {tensor(be, 1, (const int64_t[]){3}, xv), NULL};
        BPT_OK(bp_zeros(be, BP_F64, 1, (const int64_t[]){2}, &in[1]));
        bp_tensor *out[3] = {NULL, NULL, NULL};
        BPT_OK(bp_graph_run(exe, 2, in, 3, out));
        double *a = to_host(out[0]), *b = to_host(out[1]), *d = to_host(out[2]);
        for (int j = 0; j < 3; j++) {
            cr_expect_eq(a[j], sv[j] * cv[j], "on %s", bp_backend_name(be));
            cr_expect_eq(d[j], xv[j] * cv[j], "on %s", bp_backend_name(be));
        }
        cr_expect(b[0] == 0 && b[1] == 0, "on %s: an input the output does not use",
                  bp_backend_name(be));
        free(a), free(b), free(d);
        bp_tensor *rel[] = {in[0], in[1], out[0], out[1], out[2], x, u, y, gx[0], gx[1], gs, c,
                            seed, s};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
            bp_tensor_release(rel[i]);
        bp_graph_exec_release(exe);
        bp_graph_release(g);
    }
    END_BACKENDS;
}

/* ---- refusals ------------------------------------------------------------------------ */

Test(grad, refusals_name_the_op_the_argument_and_the_fix)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(ctx, &be));
    bp_graph *g = NULL, *h = NULL;
    bp_tensor *x = NULL, *i = NULL, *am = NULL, *amf = NULL, *p = NULL, *l = NULL, *v = NULL;
    bp_tensor *gr = NULL, *other = NULL, *c = NULL;
    BPT_OK(bp_graph_create(be, &g));
    BPT_OK(bp_graph_create(be, &h));
    BPT_OK(bp_graph_input(g, BP_F64, 1, (const int64_t[]){4}, &x));
    BPT_OK(bp_graph_input(g, BP_I64, 1, (const int64_t[]){4}, &i));
    BPT_OK(bp_graph_input(h, BP_F64, 1, (const int64_t[]){4}, &other));
    BPT_OK(bp_zeros(be, BP_F64, 1, (const int64_t[]){4}, &c));

    /* through an integer value: argmax, then a cast to float */
    BPT_OK(bp_argmax(x, 0, NULL, true, &am));
    BPT_OK(bp_cast(am, BP_F64, &amf));
    BPT_OK(bp_mul(x, amf, &p));
    BPT_OK(bp_sum(p, 0, NULL, false, &l));
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_graph_grad(g, l, 1, (const bp_tensor *const[]){x}, &gr));
    cr_expect(strstr(bp_last_error(), "cast") && strstr(bp_last_error(), "i64"), "%s",
              bp_last_error());
    cr_expect_null(gr);

    /* a differentiable op in a form its rule does not cover yet */
    bp_tensor *srt = NULL, *l2 = NULL;
    bp_tensor *where = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_I64, 1, (const int64_t[]){2}, (const int64_t[]){3, 0},
                               &where));
    BPT_OK(bp_slice(x, (const int64_t[]){0}, (const int64_t[]){2}, NULL, &v));
    BPT_OK(bp_scatter_elements(x, where, v, 0, BP_SCATTER_MUL, &srt));
    bp_tensor_release(where);
    bp_tensor_release(v);
    v = NULL;
    BPT_OK(bp_sum(srt, 0, NULL, false, &l2));
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_graph_grad(g, l2, 1, (const bp_tensor *const[]){x}, &gr));
    cr_expect(strstr(bp_last_error(), "scatter_elements") && strstr(bp_last_error(), "mul") &&
              strstr(bp_last_error(), "not supported yet"), "%s", bp_last_error());

    /* wrt: concrete, integer, of another graph; loss: not a scalar */
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT,
              bp_graph_grad(g, l, 1, (const bp_tensor *const[]){c}, &gr));
    cr_expect(strstr(bp_last_error(), "bp_graph_input"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_DTYPE, bp_graph_grad(g, l, 1, (const bp_tensor *const[]){i}, &gr));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT,
              bp_graph_grad(g, l, 1, (const bp_tensor *const[]){other}, &gr));
    cr_expect(strstr(bp_last_error(), "another graph"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_SHAPE, bp_graph_grad(g, x, 1, (const bp_tensor *const[]){x}, &gr));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_graph_grad(NULL, l, 1, (const bp_tensor *const[]){x},
                                                     &gr));
    /* a seed of the wrong shape */
    BPT_OK(bp_zeros(be, BP_F64, 1, (const int64_t[]){3}, &v));
    BPT_FAILS(BP_ERR_SHAPE, bp_graph_vjp(g, 1, (const bp_tensor *const[]){x},
                                         (const bp_tensor *const[]){v}, 1,
                                         (const bp_tensor *const[]){x}, &gr));
    cr_expect_null(gr);
    bp_tensor *rel[] = {x, i, am, amf, p, l, v, other, c, srt, l2};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        bp_tensor_release(rel[k]);
    bp_graph_release(g);
    bp_graph_release(h);
    bp_context_destroy(ctx);
}

Test(grad, every_differentiable_op_of_the_table_has_a_rule)
{
    for (int op = 0; op < BP_OP_COUNT; op++)
        for (int32_t k = 0; k < 5; k++)
            cr_expect_neq(bp_op_gradient((bp_op)op, k), BP_GRADIENT_NOT_YET,
                          "%s's input %d has no gradient rule yet", bp_op_name((bp_op)op), k);
}

Test(grad, the_gradient_column_says_which_inputs_a_gradient_reaches)
{
    cr_expect_eq(bp_op_gradient(BP_OP_MUL, 0), BP_GRADIENT_RULE);
    cr_expect_eq(bp_op_gradient(BP_OP_MUL, 1), BP_GRADIENT_RULE);
    cr_expect_eq(bp_op_gradient(BP_OP_MUL, 2), BP_GRADIENT_NONE);
    cr_expect_eq(bp_op_gradient(BP_OP_WHERE, 0), BP_GRADIENT_NONE); /* the condition */
    cr_expect_eq(bp_op_gradient(BP_OP_WHERE, 1), BP_GRADIENT_RULE);
    cr_expect_eq(bp_op_gradient(BP_OP_FLOOR, 0), BP_GRADIENT_ZERO);
    cr_expect_eq(bp_op_gradient(BP_OP_ARGMAX, 0), BP_GRADIENT_NONE);
    cr_expect_eq(bp_op_gradient(BP_OP_GATHER, 1), BP_GRADIENT_NONE); /* indices */
    cr_expect_eq(bp_op_gradient((bp_op)-1, 0), BP_GRADIENT_NONE);
}

/* ---- nn: conv (strides, pads, dilations, groups), layer_norm, rms_norm -------------- */

static bp_tensor *conv_model(bp_backend *be, bp_tensor *const *x)
{
    /* x (2, 4, 7, 6), w (6, 2, 3, 2): 2 groups, stride (2, 1), dilation (1, 2),
     * pads (1, 0, 2, 1) */
    bp_window w = BP_WINDOW_INIT;
    w.strides[0] = 2, w.strides[1] = 1;
    w.dilations[0] = 1, w.dilations[1] = 2;
    w.pads[0] = 1, w.pads[1] = 0, w.pads[2] = 2, w.pads[3] = 1;
    w.groups = 2;
    bp_tensor *y = NULL;
    BPT_OK(bp_conv(x[0], x[1], x[2], &w, &y));
    return weighted_sum(be, y);
}

Test(grad, conv_with_strides_pads_dilations_groups_and_bias)
{
    model_case mc = {3, {4, 4, 1}, {{2, 4, 7, 6}, {6, 2, 3, 2}, {6}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, conv_model, &mc);
    END_BACKENDS;
}

static bp_tensor *conv1d_model(bp_backend *be, bp_tensor *const *x)
{
    bp_window w = BP_WINDOW_INIT;
    w.strides[0] = 3;
    w.pads[0] = 2, w.pads[1] = 1;
    bp_tensor *y = NULL;
    BPT_OK(bp_conv(x[0], x[1], NULL, &w, &y));
    return weighted_sum(be, y);
}

Test(grad, conv_1d_whose_stride_leaves_input_columns_unread)
{
    model_case mc = {2, {3, 3}, {{2, 3, 11}, {4, 3, 2}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, conv1d_model, &mc);
    END_BACKENDS;
}

static bp_tensor *conv_transpose_model(bp_backend *be, bp_tensor *const *x)
{
    /* x (2, 4, 3, 4), w (4, 3, 2, 3): 2 groups of 3 outputs, stride (2, 1),
     * dilation (1, 2), pads (1, 0, 0, 1), output_padding (1, 0) */
    bp_window w = BP_WINDOW_INIT;
    w.strides[0] = 2, w.strides[1] = 1;
    w.dilations[0] = 1, w.dilations[1] = 2;
    w.pads[0] = 1, w.pads[1] = 0, w.pads[2] = 0, w.pads[3] = 1;
    w.output_padding[0] = 1;
    w.groups = 2;
    bp_tensor *y = NULL;
    BPT_OK(bp_conv_transpose(x[0], x[1], x[2], &w, &y));
    return weighted_sum(be, y);
}

Test(grad, conv_transpose_with_strides_pads_dilations_groups_output_padding_and_bias)
{
    model_case mc = {3, {4, 4, 1}, {{2, 4, 3, 4}, {4, 3, 2, 3}, {6}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, conv_transpose_model, &mc);
    END_BACKENDS;
}

/* Outputs past the natural extent (negative pads: at the end for an
 * output_shape, at both ends for SAME_LOWER), and an output_padding not
 * below the stride (allowed below the dilation) whose convolution back
 * reaches one position past x. */
static bp_tensor *conv_transpose_1d_model(bp_backend *be, bp_tensor *const *x)
{
    bp_window w1 = BP_WINDOW_INIT, w2 = BP_WINDOW_INIT, w3 = BP_WINDOW_INIT;
    w1.strides[0] = 2, w1.output_shape[0] = 12; /* natural 9: pads (0, -3) */
    w2 = w1, w2.auto_pad = BP_AUTO_PAD_SAME_LOWER; /* pads (-1, -2) */
    w3.dilations[0] = 2, w3.output_padding[0] = 1;
    bp_tensor *y[3] = {NULL}, *s = NULL, *t = NULL;
    BPT_OK(bp_conv_transpose(x[0], x[1], NULL, &w1, &y[0]));
    BPT_OK(bp_conv_transpose(x[0], x[1], NULL, &w2, &y[1]));
    BPT_OK(bp_conv_transpose(x[0], x[1], NULL, &w3, &y[2])); /* (2, 2, 9) */
    BPT_OK(bp_concat(3, (const bp_tensor *const *)y, 2, &s));
    for (int k = 0; k < 3; k++)
        bp_tensor_release(y[k]);
    BPT_OK(bp_tanh(s, &t));
    bp_tensor_release(s);
    return weighted_sum(be, t);
}

Test(grad, conv_transpose_1d_with_outputs_past_the_natural_extent)
{
    model_case mc = {2, {3, 3}, {{2, 3, 4}, {3, 2, 3}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, conv_transpose_1d_model, &mc);
    END_BACKENDS;
}

static bp_tensor *norm_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *y = NULL, *r = NULL, *s = NULL;
    BPT_OK(bp_layer_norm(x[0], 1, x[1], x[2], 1e-5, &y, NULL, NULL)); /* over (3, 4) */
    BPT_OK(bp_rms_norm(y, -1, x[3], 1e-6, &r));
    BPT_OK(bp_add(y, r, &s));
    bp_tensor_release(y);
    bp_tensor_release(r);
    return weighted_sum(be, s);
}

Test(grad, layer_norm_and_rms_norm_with_broadcast_scale_and_bias)
{
    model_case mc = {4, {3, 2, 1, 1}, {{2, 3, 4}, {1, 4}, {4}, {4}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, norm_model, &mc);
    END_BACKENDS;
}

/* ---- pools ------------------------------------------------------------------------------- */

static bp_tensor *avg_pool_model(bp_backend *be, bp_tensor *const *x)
{
    bp_window a = BP_WINDOW_INIT, b = BP_WINDOW_INIT;
    a.kernel[0] = 3, a.kernel[1] = 2;
    a.strides[0] = 2, a.strides[1] = 1;
    a.pads[0] = 1, a.pads[1] = 0, a.pads[2] = 1, a.pads[3] = 1;
    b = a;
    b.count_include_pad = true;
    bp_tensor *p = NULL, *q = NULL, *s = NULL;
    BPT_OK(bp_average_pool(x[0], &a, &p)); /* the count inside x */
    BPT_OK(bp_average_pool(x[0], &b, &q)); /* the window's extent */
    BPT_OK(bp_mul(p, q, &s));
    bp_tensor_release(p);
    bp_tensor_release(q);
    return weighted_sum(be, s);
}

Test(grad, average_pool_with_padding_counted_or_not)
{
    model_case mc = {1, {4}, {{2, 3, 7, 5}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, avg_pool_model, &mc);
    END_BACKENDS;
}

static bp_tensor *max_pool_model(bp_backend *be, bp_tensor *const *x)
{
    bp_window w = BP_WINDOW_INIT;
    w.kernel[0] = 2, w.kernel[1] = 3;
    w.strides[0] = 2, w.strides[1] = 2;
    w.pads[0] = 0, w.pads[1] = 1, w.pads[2] = 1, w.pads[3] = 1;
    bp_tensor *p = NULL, *idx = NULL, *q = NULL, *s = NULL;
    BPT_OK(bp_max_pool(x[0], &w, &p, &idx)); /* overlapping windows: one input, two outputs */
    w.strides[1] = 3, w.pads[1] = w.pads[3] = 0;
    BPT_OK(bp_max_pool(x[0], &w, &q, NULL)); /* no indices: the rule pools again */
    bp_tensor *sp = weighted_sum(be, p), *sq = weighted_sum(be, q);
    BPT_OK(bp_add(sp, sq, &s));
    bp_tensor_release(idx);
    bp_tensor_release(sp);
    bp_tensor_release(sq);
    return s;
}

Test(grad, max_pool_routes_each_gradient_to_its_windows_maximum)
{
    model_case mc = {1, {4}, {{2, 3, 6, 7}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, max_pool_model, &mc);
    END_BACKENDS;
}

/* ---- gathers (an index read twice gets both gradients) and the losses ------------------ */

static bp_tensor *gather_model(bp_backend *be, bp_tensor *const *x)
{
    int64_t iv[6] = {2, 0, 2, -1, 1, 2}, ev[8] = {1, 0, 1, 1, 0, 0, 1, 0};
    int64_t nv[4] = {1, 0, 1, 0}; /* gather_nd: (2, 2) index pairs, one repeated */
    bp_tensor *i = NULL, *e = NULL, *nd = NULL, *a = NULL, *b = NULL, *d = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_I64, 2, (const int64_t[]){2, 3}, iv, &i));
    BPT_OK(bp_tensor_from_host(be, BP_I64, 2, (const int64_t[]){2, 4}, ev, &e));
    BPT_OK(bp_tensor_from_host(be, BP_I64, 2, (const int64_t[]){2, 2}, nv, &nd));
    BPT_OK(bp_gather(x[0], i, 1, &a));            /* (2, 2, 3) */
    BPT_OK(bp_gather_elements(x[1], e, 0, &b));   /* x1 (3, 4): (2, 4) */
    BPT_OK(bp_gather_nd(x[1], nd, 0, &d));        /* (2, 4)... rows (1, 0) */
    bp_tensor *sa = weighted_sum(be, a), *sb = weighted_sum(be, b), *sd = weighted_sum(be, d);
    bp_tensor *t = NULL, *u = NULL;
    BPT_OK(bp_add(sa, sb, &t));
    BPT_OK(bp_add(t, sd, &u));
    bp_tensor *rel[] = {i, e, nd, sa, sb, sd, t};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        bp_tensor_release(rel[k]);
    return u;
}

Test(grad, gathers_add_the_gradient_back_at_every_index_read)
{
    model_case mc = {2, {2, 2}, {{2, 3}, {3, 4}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, gather_model, &mc);
    END_BACKENDS;
}

/* x (3, 4), updates (2, 4) written along axis 0 with places written twice
 * (column 0: row 0 by both updates, the second wins; column 3: row -2 and
 * row 1, one place), and scatter_nd of update rows (3, 4) at index tuples
 * (2, 0, 2): row 2 twice. */
static bp_tensor *scatter_model(bp_backend *be, bp_tensor *const *x)
{
    int64_t ev[8] = {0, 2, 1, -2, 0, 0, 1, 1}, nv[3] = {2, 0, 2};
    bp_tensor *e = NULL, *nd = NULL, *a = NULL, *b = NULL, *d = NULL, *u3 = NULL, *x2 = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_I64, 2, (const int64_t[]){2, 4}, ev, &e));
    BPT_OK(bp_tensor_from_host(be, BP_I64, 2, (const int64_t[]){3, 1}, nv, &nd));
    BPT_OK(bp_scatter_elements(x[0], e, x[1], 0, BP_SCATTER_NONE, &a));
    BPT_OK(bp_scatter_elements(x[0], e, x[1], 0, BP_SCATTER_ADD, &b));
    BPT_OK(bp_concat(2, (const bp_tensor *const[]){x[1], x[1]}, 0, &u3)); /* (4, 4) */
    bp_tensor *u = NULL;
    BPT_OK(bp_slice(u3, (const int64_t[]){0, 0}, (const int64_t[]){3, 4}, NULL, &u));
    BPT_OK(bp_mul(x[0], x[0], &x2));
    BPT_OK(bp_scatter_nd(x2, nd, u, BP_SCATTER_NONE, &d));
    bp_tensor *sa = weighted_sum(be, a), *sb = weighted_sum(be, b), *sd = weighted_sum(be, d);
    bp_tensor *t = NULL, *r = NULL;
    BPT_OK(bp_add(sa, sb, &t));
    BPT_OK(bp_add(t, sd, &r));
    bp_tensor *rel[] = {e, nd, u3, u, x2, sa, sb, sd, t};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        bp_tensor_release(rel[k]);
    return r;
}

Test(grad, scatters_give_each_place_written_twice_to_the_write_that_won)
{
    model_case mc = {2, {2, 2}, {{3, 4}, {2, 4}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, scatter_model, &mc);
    END_BACKENDS;
}

/* batch_norm's five inputs, instance_norm's three, on x (2, 3, 2, 2);
 * batch_norm's var is x[5] squared plus 0.5, so it stays positive. */
static bp_tensor *channel_norm_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *v2 = NULL, *var = NULL, *half = constant(be, 0.5), *bn = NULL, *in = NULL;
    bp_tensor *s = NULL;
    BPT_OK(bp_mul(x[5], x[5], &v2));
    BPT_OK(bp_add(v2, half, &var));
    BPT_OK(bp_batch_norm(x[0], x[1], x[2], x[3], var, 1e-5, &bn));
    BPT_OK(bp_instance_norm(bn, x[4], x[2], 1e-3, &in));
    BPT_OK(bp_add(bn, in, &s));
    bp_tensor *rel[] = {v2, var, half, bn, in};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        bp_tensor_release(rel[k]);
    return weighted_sum(be, s);
}

Test(grad, batch_norm_and_instance_norm_for_every_input)
{
    model_case mc = {6, {4, 1, 1, 1, 1, 1}, {{2, 3, 2, 2}, {3}, {3}, {3}, {3}, {3}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, channel_norm_model, &mc);
    END_BACKENDS;
}

/* lrn with odd and even windows (the even one reaching one channel further
 * up than down), one wider than every channel, and an alpha large enough
 * that the normalisation is far from the identity. */
static bp_tensor *lrn_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *a = NULL, *b = NULL, *c = NULL, *ab = NULL, *abc = NULL;
    BPT_OK(bp_lrn(x[0], 3, 0.9, 0.75, 1.0, &a));
    BPT_OK(bp_lrn(x[0], 4, 1.5, 0.6, 2.0, &b));
    BPT_OK(bp_lrn(x[0], 11, 0.7, 1.2, 0.5, &c));
    BPT_OK(bp_add(a, b, &ab));
    BPT_OK(bp_add(ab, c, &abc));
    bp_tensor *rel[] = {a, b, c, ab};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        bp_tensor_release(rel[k]);
    return weighted_sum(be, abc);
}

Test(grad, lrn_with_odd_even_and_wider_than_channels_windows)
{
    model_case mc = {1, {4}, {{2, 5, 2, 3}}, -1.5, 1.5};
    FOR_EACH_BACKEND(be) check_model(be, lrn_model, &mc);
    END_BACKENDS;
}

/* sort along axis 0 (moved last by the core) descending, values only;
 * topk of 2 along axis 1, smallest, unsorted, with its indices. */
static bp_tensor *sort_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *sv = NULL, *tv = NULL, *ti = NULL, *e = NULL;
    BPT_OK(bp_sort(x[0], 0, true, &sv, NULL));
    BPT_OK(bp_topk(x[0], 2, 1, false, false, &tv, &ti));
    BPT_OK(bp_exp(tv, &e));
    bp_tensor *a = weighted_sum(be, sv), *b = weighted_sum(be, e), *r = NULL;
    BPT_OK(bp_add(a, b, &r));
    bp_tensor *rel[] = {tv, ti, a, b};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        bp_tensor_release(rel[k]);
    return r;
}

Test(grad, sort_and_topk_put_each_values_gradient_back_where_it_came_from)
{
    model_case mc = {1, {3}, {{3, 4, 2}}, -2, 2};
    FOR_EACH_BACKEND(be) check_model(be, sort_model, &mc);
    END_BACKENDS;
}

/* cumprod in its four forms along axis 1 of x (2, 4) whose rows hold zeros
 * (one, and two): the gradient is exact there (no division by x). */
static bp_tensor *cumprod_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *y[4] = {NULL}, *s = NULL;
    for (int m = 0; m < 4; m++)
        BPT_OK(bp_cumprod(x[0], 1, m & 1, m & 2, &y[m]));
    BPT_OK(bp_concat(4, (const bp_tensor *const *)y, 0, &s)); /* (8, 4) */
    for (int m = 0; m < 4; m++)
        bp_tensor_release(y[m]);
    return weighted_sum(be, s);
}

Test(grad, cumprod_forward_reverse_exclusive_with_zeros_in_x)
{
    static const double x[8] = {2, 0, 3, 0.5, 0, -1.5, 0, 1.25};
    model_case mc = {1, {2}, {{2, 4}}, -2, 2};
    FOR_EACH_BACKEND(be)
    {
        check_model_at(be, cumprod_model, &mc, (const double *const[]){x});
        check_model(be, cumprod_model, &mc);
    }
    END_BACKENDS;
}

/* x (1, 2, 7, 4) resized: linear (half_pixel) by scales (1, 1, 0.5, 1.75),
 * where 0.5 of 7 rows gives 3 at a scale that is not 3 / 7; cubic
 * (align_corners, exclude_outside) to sizes (1, 2, 5, 9); nearest
 * (asymmetric, floor) by (1, 1, 2, 0.5). */
static bp_tensor *resize_model(bp_backend *be, bp_tensor *const *x)
{
    bp_resize_options lin = BP_RESIZE_OPTIONS_INIT, cub = BP_RESIZE_OPTIONS_INIT;
    bp_resize_options nn = BP_RESIZE_OPTIONS_INIT;
    lin.mode = BP_RESIZE_LINEAR;
    cub.mode = BP_RESIZE_CUBIC, cub.coordinates = BP_RESIZE_ALIGN_CORNERS;
    cub.exclude_outside = true;
    nn.coordinates = BP_RESIZE_ASYMMETRIC, nn.nearest = BP_NEAREST_FLOOR;
    bp_tensor *a = NULL, *b = NULL, *d = NULL;
    BPT_OK(bp_resize(x[0], (const double[]){1, 1, 0.5, 1.75}, NULL, &lin, &a));
    BPT_OK(bp_resize(x[0], NULL, (const int64_t[]){1, 2, 5, 9}, &cub, &b));
    BPT_OK(bp_resize(x[0], (const double[]){1, 1, 2, 0.5}, NULL, &nn, &d));
    bp_tensor *sa = weighted_sum(be, a), *sb = weighted_sum(be, b), *sd = weighted_sum(be, d);
    bp_tensor *t = NULL, *r = NULL;
    BPT_OK(bp_add(sa, sb, &t));
    BPT_OK(bp_add(t, sd, &r));
    bp_tensor *rel[] = {sa, sb, sd, t};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        bp_tensor_release(rel[k]);
    return r;
}

Test(grad, resize_linear_cubic_and_nearest_by_scales_and_sizes)
{
    model_case mc = {1, {4}, {{1, 2, 7, 4}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, resize_model, &mc);
    END_BACKENDS;
}

/* gather_nd after batch axes: x (2, 3, 4) with one batch axis, index
 * tuples of one component (batch 0 reads row 2 twice), and with two batch
 * axes, i32 indices. */
static bp_tensor *gather_nd_batch_model(bp_backend *be, bp_tensor *const *x)
{
    int64_t v1[4] = {2, 2, 0, -1};
    int32_t v2[6] = {3, 0, 1, -1, 2, 2};
    bp_tensor *i1 = NULL, *i2 = NULL, *a = NULL, *b = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_I64, 3, (const int64_t[]){2, 2, 1}, v1, &i1));
    BPT_OK(bp_tensor_from_host(be, BP_I32, 3, (const int64_t[]){2, 3, 1}, v2, &i2));
    BPT_OK(bp_gather_nd(x[0], i1, 1, &a)); /* (2, 2, 4) */
    BPT_OK(bp_gather_nd(x[0], i2, 2, &b)); /* (2, 3) */
    bp_tensor *sa = weighted_sum(be, a), *sb = weighted_sum(be, b), *r = NULL;
    BPT_OK(bp_add(sa, sb, &r));
    bp_tensor *rel[] = {i1, i2, sa, sb};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        bp_tensor_release(rel[k]);
    return r;
}

Test(grad, gather_nd_after_batch_axes_adds_the_gradient_back_in_each_batch)
{
    model_case mc = {1, {3}, {{2, 3, 4}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, gather_nd_batch_model, &mc);
    END_BACKENDS;
}

static bp_tensor *loss_model(bp_backend *be, bp_tensor *const *x)
{
    /* scores (4, 3, 2): class axis 1 for the loss ops (N, C, d) */
    int64_t lv[8] = {0, 2, 1, -7, 2, 2, 0, 1};
    double wv[3] = {0.5, 2.0, 1.25};
    bp_tensor *labels = NULL, *w = NULL, *l1 = NULL, *l2 = NULL, *l3 = NULL, *lp = NULL;
    bp_tensor *l4 = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_I64, 2, (const int64_t[]){4, 2}, lv, &labels));
    BPT_OK(bp_tensor_from_host(be, BP_F64, 1, (const int64_t[]){3}, wv, &w));
    const int64_t ignore = -7;
    BPT_OK(bp_softmax_cross_entropy_loss(x[0], labels, w, BP_LOSS_MEAN, &ignore, &l1, NULL));
    BPT_OK(bp_softmax_cross_entropy_loss(x[0], labels, NULL, BP_LOSS_NONE, &ignore, &l2, NULL));
    BPT_OK(bp_log_softmax(x[0], 1, &lp));
    BPT_OK(bp_nll_loss(lp, labels, w, BP_LOSS_SUM, &ignore, &l3));
    bp_tensor *s2 = weighted_sum(be, l2), *t = NULL;
    BPT_OK(bp_add(l1, s2, &t));
    BPT_OK(bp_add(t, l3, &l4));
    bp_tensor *rel[] = {labels, w, l1, l3, lp, s2, t};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        bp_tensor_release(rel[k]);
    return l4;
}

Test(grad, losses_with_class_weights_an_ignored_label_and_each_reduction)
{
    model_case mc = {1, {3}, {{4, 3, 2}}, -2, 2};
    FOR_EACH_BACKEND(be) check_model(be, loss_model, &mc);
    END_BACKENDS;
}

/* ---- dropout: composed of ops, so its gradient is theirs (the same mask) ------------- */

static bp_tensor *dropout_model(bp_backend *be, bp_tensor *const *x)
{
    bp_tensor *y = NULL;
    BPT_OK(bp_dropout(x[0], 0.4, true, 1234, 0, &y, NULL));
    return weighted_sum(be, y);
}

Test(grad, dropout_in_training_passes_the_gradient_through_its_mask)
{
    model_case mc = {1, {2}, {{6, 7}}, -1, 1};
    FOR_EACH_BACKEND(be) check_model(be, dropout_model, &mc);
    END_BACKENDS;
}

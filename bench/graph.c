/* Graphs against eager calls, side by side in one process:
 *
 *   bp_bench_graph [BACKEND] [REPS]
 *
 * 1. dispatch: a chain of 100 ops on 4-element f32 tensors (add, mul, tanh,
 *    relu in turn), as 100 eager calls and as one bp_graph_run of the same
 *    chain recorded once; the median over REPS runs (default 2000) of each,
 *    interleaved so that both see the same machine load.
 * 2. compile: bp_graph_compile of a 1000-node chain, the best and the median
 *    of 20 compiles.
 * Prints one line per measurement: "<what> <backend> <value> <unit>". Every
 * result is also checked against eager's bits, so a fast wrong plan fails. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <backplane/backplane.h>

#define CHAIN 100
#define BIG_CHAIN 1000

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* The chain's op k on t (c: a constant of t's shape); releases t. */
static bp_status chain_step(int k, bp_tensor *t, const bp_tensor *c, bp_tensor **out)
{
    bp_status st;
    switch (k % 4) {
    case 0: st = bp_add(t, c, out); break;
    case 1: st = bp_mul(t, c, out); break;
    case 2: st = bp_tanh(t, out); break;
    default: st = bp_relu(t, out); break;
    }
    bp_tensor_release(t);
    return st;
}

/* n steps from x (retained, not consumed) into *out. */
static bp_status chain(int n, bp_tensor *x, const bp_tensor *c, bp_tensor **out)
{
    bp_tensor_retain(x);
    bp_tensor *t = x;
    for (int k = 0; k < n; k++) {
        bp_tensor *next = NULL;
        bp_status st = chain_step(k, t, c, &next);
        if (st != BP_OK)
            return st;
        t = next;
    }
    *out = t;
    return BP_OK;
}

/* Record the n-step chain on a graph of be, compile it. */
static bp_status compiled(bp_backend *be, int n, const bp_tensor *c, const int64_t *shape,
                          bp_graph_exec **exe, double *compile_s)
{
    bp_graph *g = NULL;
    bp_tensor *x = NULL, *y = NULL;
    bp_status st = bp_graph_create(be, &g);
    if (st == BP_OK)
        st = bp_graph_input(g, BP_F32, 1, shape, &x);
    if (st == BP_OK)
        st = chain(n, x, c, &y);
    if (st == BP_OK)
        st = bp_graph_output(g, y);
    double t0 = now();
    if (st == BP_OK)
        st = bp_graph_compile(g, NULL, exe);
    *compile_s = now() - t0;
    bp_tensor_release(y);
    bp_tensor_release(x);
    bp_graph_release(g);
    return st;
}

#define TRY(call)                                                                          \
    do {                                                                                   \
        if ((call) != BP_OK) {                                                             \
            fprintf(stderr, "bp_bench_graph: %s: %s\n", #call, bp_last_error());          \
            goto done;                                                                     \
        }                                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : NULL;
    int reps = argc > 2 ? atoi(argv[2]) : 2000;
    if (reps < 1)
        reps = 1;
    int rc = 1;
    bp_context *ctx = NULL;
    bp_backend *be = NULL;
    bp_tensor *x = NULL, *c = NULL, *ref = NULL, *got = NULL;
    bp_graph_exec *exe = NULL, *big = NULL;
    double *t_eager = calloc((size_t)reps, sizeof *t_eager);
    double *t_graph = calloc((size_t)reps, sizeof *t_graph);
    double t_compile[20];
    const int64_t shape[1] = {4};
    const float xv[4] = {-1.5f, -0.25f, 0.5f, 2.0f}, cv[4] = {0.5f, 0.75f, 1.25f, -0.5f};
    if (!t_eager || !t_graph) {
        fprintf(stderr, "bp_bench_graph: out of memory\n");
        goto done;
    }
    TRY(bp_context_create(NULL, &ctx));
    TRY(name ? bp_backend_get(ctx, name, &be) : bp_backend_default(ctx, &be));
    TRY(bp_tensor_from_host(be, BP_F32, 1, shape, xv, &x));
    TRY(bp_tensor_from_host(be, BP_F32, 1, shape, cv, &c));
    double unused;
    TRY(compiled(be, CHAIN, c, shape, &exe, &unused));

    /* the same bits as eager, or the timing means nothing */
    float a[4], b[4];
    TRY(chain(CHAIN, x, c, &ref));
    TRY(bp_graph_run(exe, 1, &x, 1, &got));
    TRY(bp_tensor_to_host(ref, a, sizeof a));
    TRY(bp_tensor_to_host(got, b, sizeof b));
    if (memcmp(a, b, sizeof a) != 0) {
        fprintf(stderr, "bp_bench_graph: the plan's result differs from eager's\n");
        goto done;
    }
    for (int r = 0; r < reps; r++) {
        bp_tensor *o = NULL;
        double t0 = now();
        TRY(chain(CHAIN, x, c, &o));
        TRY(bp_tensor_to_host(o, a, sizeof a));
        t_eager[r] = now() - t0;
        bp_tensor_release(o);
        o = NULL;
        t0 = now();
        TRY(bp_graph_run(exe, 1, &x, 1, &o));
        TRY(bp_tensor_to_host(o, b, sizeof b));
        t_graph[r] = now() - t0;
        bp_tensor_release(o);
    }
    double me = median(t_eager, reps), mg = median(t_graph, reps);
    const char *bn = bp_backend_name(be);
    printf("eager_100_ops %s %.1f us\n", bn, me * 1e6);
    printf("graph_run_100_ops %s %.1f us\n", bn, mg * 1e6);
    printf("graph_speedup %s %.2f x\n", bn, me / mg);

    for (int r = 0; r < 20; r++) {
        bp_graph_exec_release(big);
        big = NULL;
        TRY(compiled(be, BIG_CHAIN, c, shape, &big, &t_compile[r]));
    }
    double best = t_compile[0];
    for (int r = 1; r < 20; r++)
        best = t_compile[r] < best ? t_compile[r] : best;
    printf("compile_1000_nodes_best %s %.3f ms\n", bn, best * 1e3);
    printf("compile_1000_nodes_median %s %.3f ms\n", bn, median(t_compile, 20) * 1e3);
    rc = 0;
done:
    bp_graph_exec_release(big);
    bp_graph_exec_release(exe);
    bp_tensor_release(got);
    bp_tensor_release(ref);
    bp_tensor_release(c);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
    free(t_eager);
    free(t_graph);
    return rc;
}

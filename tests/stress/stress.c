/* The ThreadSanitizer stress test (docs/reliability.md; tests/stress/run.sh).
 *
 * Phase 1: ST_THREADS threads share one context. Each races the others to
 * open the backends (bp_backend_get "binary" and "blas_cpu",
 * bp_backend_default), then loops: makes tensors, runs ops, copies and
 * transfers between the backends, reads and checks the values, provokes an
 * error of its own and checks that bp_last_error() is still its own after
 * the others have set theirs, releases everything.
 * Phase 1b: each thread makes a context of its own, computes on its blas_cpu
 * backend and destroys it, all at once (plugins loaded and unloaded, and
 * OpenBLAS's process-wide thread count set, from several threads).
 * Phase 1c: one plan (tests/stress/st_plan.c) run by every thread at once,
 * each result the first run's bits, while thread 0 starts and stops its
 * profile and reads the times.
 * Phase 2: a second context whose default_backend list has nothing that
 * opens; ST_DEFAULT_THREADS threads race bp_backend_default and
 * bp_context_default_reason on it.
 * Phase 3: each thread keeps a tensor; the main thread destroys the first
 * context while the threads still compute with theirs, then they release
 * them (the context must live until the last one is gone).
 *
 * usage: stress CONFIG.ini NOTHING_OPENS.ini [ITERATIONS]
 * exit: 0 when every check held (ThreadSanitizer adds its own exit status). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st_check.h"
#include "st_plan.h"
#include "st_work.h"

#define ST_THREADS 8
#define ST_DEFAULT_THREADS 6

static pthread_barrier_t st_barrier;

typedef struct st_arg {
    int id;
    int iterations;
    const char *config;
    bp_context *ctx;
    bp_context *empty;   /* the context where no backend opens */
    bp_tensor *kept;     /* phase 3 */
    st_plan *plan;       /* phase 1c */
} st_arg;

static void *st_phase1(void *p)
{
    st_arg *a = p;
    pthread_barrier_wait(&st_barrier); /* start together: race the opening */
    st_open_backends(a->ctx, a->id);
    for (int i = 0; i < a->iterations; i++)
        st_iteration(a->ctx, a->id, i);
    a->kept = st_make_kept(a->ctx, a->id);
    return NULL;
}

static void *st_phase1b(void *p)
{
    st_arg *a = p;
    pthread_barrier_wait(&st_barrier);
    for (int i = 0; i < 3; i++) {
        bp_context *own = NULL;
        ST_OK(bp_context_create(a->config, &own));
        if (!own)
            return NULL;
        st_open_backends_private(own, a->id);
        st_iteration(own, a->id, i);
        bp_context_destroy(own);
    }
    return NULL;
}

static void *st_phase1c(void *p)
{
    st_arg *a = p;
    pthread_barrier_wait(&st_barrier);
    st_plan_work(a->plan, a->id, a->iterations / 4 + 1);
    return NULL;
}

static void *st_phase2(void *p)
{
    st_arg *a = p;
    pthread_barrier_wait(&st_barrier);
    for (int i = 0; i < 20; i++)
        st_default_nothing_opens(a->empty, a->id);
    return NULL;
}

static void *st_phase3(void *p)
{
    st_arg *a = p;
    pthread_barrier_wait(&st_barrier); /* the context is being destroyed now */
    st_use_kept(a->kept, a->id);
    bp_tensor_release(a->kept);
    return NULL;
}

static void st_run(void *(*fn)(void *), st_arg *args, int n, bool main_joins_barrier,
                   bp_context *destroy)
{
    pthread_t th[ST_THREADS];
    pthread_barrier_init(&st_barrier, NULL, (unsigned)n + (main_joins_barrier ? 1 : 0));
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, fn, &args[i]) != 0) {
            st_report("pthread_create failed");
            exit(1);
        }
    if (main_joins_barrier) {
        pthread_barrier_wait(&st_barrier);
        bp_context_destroy(destroy);
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&st_barrier);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: stress CONFIG.ini NOTHING_OPENS.ini [ITERATIONS]\n");
        return 2;
    }
    int iterations = argc > 3 ? atoi(argv[3]) : 40;
    bp_context *ctx = NULL, *empty = NULL;
    if (st_check("bp_context_create", bp_context_create(argv[1], &ctx)) != BP_OK ||
        st_check("bp_context_create", bp_context_create(argv[2], &empty)) != BP_OK) {
        fprintf(stderr, "stress: cannot create the contexts: %s\n", bp_last_error());
        return 1;
    }
    st_arg args[ST_THREADS];
    for (int i = 0; i < ST_THREADS; i++)
        args[i] = (st_arg){.id = i, .iterations = iterations, .config = argv[1], .ctx = ctx,
                           .empty = empty};

    st_run(st_phase1, args, ST_THREADS, false, NULL);
    st_run(st_phase1b, args, ST_THREADS, false, NULL);
    st_plan *plan = st_plan_make(ctx);
    if (plan) {
        for (int i = 0; i < ST_THREADS; i++)
            args[i].plan = plan;
        st_run(st_phase1c, args, ST_THREADS, false, NULL);
        st_plan_free(plan);
    }
    st_run(st_phase2, args, ST_DEFAULT_THREADS, false, NULL);
    bp_context_destroy(empty);
    st_run(st_phase3, args, ST_THREADS, true, ctx);

    int broken = atomic_load(&st_broken);
    fprintf(stderr, "stress: %d threads x %d iterations: %s\n", ST_THREADS, iterations,
            broken ? "BROKEN checks above" : "every check held");
    return broken ? 1 : 0;
}

/* The thread pool: threads - 1 workers that wait between jobs, plus the
 * calling thread, which always works too.
 *
 * Why not OpenMP: libgomp's idle threads and its end-of-region barrier spin
 * (GOMP_SPINCOUNT, some hundred thousand rounds), and the wait policy can
 * only be set by environment before libgomp starts, i.e. not by a plugin.
 * On a shared machine the spinning steals the very cores the team needs;
 * measured on the 2-core benchmark machine under load ~5,
 * OMP_WAIT_POLICY=passive made sum 2^24 ~2.5x and add ~1.4x faster than the
 * default (medians of 3; docs/performance.md).
 *
 * Waiting: a worker that finishes a job watches for the next one for
 * BPC_SPIN_NS (tens of microseconds, not GOMP's milliseconds), then sleeps
 * on a condition variable. Ops arrive back to back in a program (and in a
 * benchmark), and waking a sleeping thread costs 15-20 us on a virtual
 * machine: as much as the work of a 65536-element op. The caller signals
 * only when some worker sleeps, and waits for the workers still in its job
 * the same way: briefly watching, then sleeping.
 *
 * Workers start when a job first wants them, not when the device opens: a
 * program that opens the backend and runs nothing parallel (or only small
 * ops) never starts a thread, and `threads = 1024` costs 1023 threads only
 * once work asks for that team (opening it in a loop, as the configuration
 * fuzzer does, started and joined them every time).
 *
 * Items are handed out one at a time from an atomic counter, so a thread
 * that loses its core mid-job leaves its remaining items to the others. The
 * caller waits only for workers that actually joined: once it has run out
 * of items it closes the job, and a worker that wakes up later does not
 * join at all (waiting for a descheduled thread to wake just to find no
 * work was the other half of the barrier cost). One job at a time per pool:
 * a second caller (entries may run on several threads) runs its items
 * itself. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "blas_cpu.h"

struct bpc_pool {
    pthread_mutex_t lock;           /* guards everything but `next` */
    pthread_cond_t wake, done;
    pthread_mutex_t busy;           /* held by the caller running a job */
    pthread_t *threads;             /* room for `capacity`; the first nworkers started */
    int capacity;
    int nworkers;                   /* grows under `busy` only */
    _Atomic bool stop;
    _Atomic uint64_t generation;    /* bumped per job (under lock) */
    int seats;                      /* workers that may still join this job */
    _Atomic int joined;             /* workers in the job and not yet done (changed under lock) */
    int sleepers;                   /* workers in pthread_cond_wait(wake) */
    bool caller_sleeps;             /* the caller is in pthread_cond_wait(done) */
    bpc_item_fn fn;
    void *ctx;
    int64_t n;
    _Atomic int64_t next;
};

static void run_items(bpc_pool *p, bpc_item_fn fn, void *ctx, int64_t n)
{
    for (int64_t i; (i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed)) < n;)
        fn(ctx, i);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Watch (without the lock) until done(p, arg) or BPC_SPIN_NS have passed;
 * true if done. */
static bool spin_until(bpc_pool *p, bool (*done)(bpc_pool *, uint64_t), uint64_t arg)
{
    int64_t until = now_ns() + BPC_SPIN_NS;
    for (;;) {
        for (int i = 0; i < 32; i++) {
            if (done(p, arg))
                return true;
            cpu_relax();
        }
        if (now_ns() >= until)
            return false;
    }
}

static bool new_job(bpc_pool *p, uint64_t seen)
{
    return atomic_load_explicit(&p->stop, memory_order_relaxed) ||
           atomic_load_explicit(&p->generation, memory_order_relaxed) != seen;
}

static bool all_left(bpc_pool *p, uint64_t unused)
{
    (void)unused;
    return atomic_load_explicit(&p->joined, memory_order_relaxed) == 0;
}

static void *worker(void *arg)
{
    bpc_pool *p = arg;
    uint64_t seen = 0;
    /* named, for top -H, a debugger and the tests (OpenBLAS starts threads of
     * its own when it loads) */
    pthread_setname_np(pthread_self(), "bp_blas_cpu");
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (!p->stop && (p->generation == seen || p->seats == 0)) {
            uint64_t g = p->generation;
            pthread_mutex_unlock(&p->lock);
            spin_until(p, new_job, g);
            pthread_mutex_lock(&p->lock);
            p->sleepers++;
            while (!p->stop && (p->generation == seen || p->seats == 0))
                pthread_cond_wait(&p->wake, &p->lock);
            p->sleepers--;
        }
        if (p->stop)
            break;
        seen = p->generation;
        p->seats--;
        atomic_fetch_add_explicit(&p->joined, 1, memory_order_relaxed);
        bpc_item_fn fn = p->fn;
        void *ctx = p->ctx;
        int64_t n = p->n;
        pthread_mutex_unlock(&p->lock);
        run_items(p, fn, ctx, n);
        pthread_mutex_lock(&p->lock);
        if (atomic_fetch_sub_explicit(&p->joined, 1, memory_order_relaxed) == 1 &&
            p->caller_sleeps)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

bp_status bpc_pool_create(int workers, bpc_pool **out)
{
    bpc_pool *p = calloc(1, sizeof *p);
    if (!p)
        return BP_ERR_OUT_OF_MEMORY;
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_init(&p->busy, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    atomic_init(&p->stop, false);
    atomic_init(&p->generation, 0);
    atomic_init(&p->joined, 0);
    p->threads = workers > 0 ? calloc((size_t)workers, sizeof *p->threads) : NULL;
    if (workers > 0 && !p->threads) {
        bpc_pool_destroy(p);
        return BP_ERR_OUT_OF_MEMORY;
    }
    p->capacity = workers > 0 ? workers : 0;
    *out = p;
    return BP_OK;
}

void bpc_pool_destroy(bpc_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    atomic_store_explicit(&p->stop, true, memory_order_relaxed);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nworkers; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->busy);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Start workers until there are `want` (the caller holds busy). A thread
 * that cannot start leaves fewer workers: still correct, the caller works. */
static int start_workers(bpc_pool *p, int want)
{
    while (p->nworkers < want && pthread_create(&p->threads[p->nworkers], NULL, worker, p) == 0)
        p->nworkers++;
    return p->nworkers < want ? p->nworkers : want;
}

void bpc_pool_run(bpc_pool *p, int team, int64_t n, bpc_item_fn fn, void *ctx)
{
    int helpers = team - 1 < p->capacity ? team - 1 : p->capacity;
    if (helpers <= 0 || n <= 1 || pthread_mutex_trylock(&p->busy) != 0) {
        for (int64_t i = 0; i < n; i++)
            fn(ctx, i);
        return;
    }
    helpers = start_workers(p, helpers);
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->seats = helpers;
    atomic_store_explicit(&p->generation, p->generation + 1, memory_order_relaxed);
    if (p->sleepers > 0)
        pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);

    run_items(p, fn, ctx, n);

    pthread_mutex_lock(&p->lock);
    p->seats = 0; /* closed: late wakers do not join */
    if (p->joined > 0) {
        pthread_mutex_unlock(&p->lock);
        spin_until(p, all_left, 0);
        pthread_mutex_lock(&p->lock);
        p->caller_sleeps = true;
        while (p->joined > 0)
            pthread_cond_wait(&p->done, &p->lock);
        p->caller_sleeps = false;
    }
    pthread_mutex_unlock(&p->lock); /* the workers left under the lock: their writes are seen */
    pthread_mutex_unlock(&p->busy);
}

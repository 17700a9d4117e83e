/* bench/gpu's timing (gpu_bench.c, wide.c): the best of three batches of
 * back-to-back calls after a warm-up, each batch ending in a
 * synchronisation and lasting at least `batch` seconds, as torch_bench.py
 * times PyTorch. */
#ifndef BENCH_GPU_TIMING_H
#define BENCH_GPU_TIMING_H

#include <time.h>

static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Seconds per call of fn(arg). */
static inline double bench_time(void (*fn)(void *), void *arg, void (*sync)(void), double batch)
{
    fn(arg);
    sync();
    long reps = 1;
    for (;;) { /* grow the batch until it lasts `batch` seconds */
        double t0 = bench_now();
        for (long i = 0; i < reps; i++)
            fn(arg);
        sync();
        if (bench_now() - t0 >= batch || reps >= (1L << 24))
            break;
        reps *= 2;
    }
    double best = 1e30;
    for (int b = 0; b < 3; b++) {
        double t0 = bench_now();
        for (long i = 0; i < reps; i++)
            fn(arg);
        sync();
        double t = (bench_now() - t0) / (double)reps;
        best = t < best ? t : best;
    }
    return best;
}

#endif

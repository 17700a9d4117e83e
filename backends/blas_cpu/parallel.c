/* The thread pool: OpenMP's. A kernel describes its work as a function over a
 * slice [lo, hi) of elements (or rows); bpc_parallel gives each thread of the
 * team one contiguous slice, so each thread streams through its own part of
 * memory and no two threads write the same cache line (slice edges are
 * rounded to 64 elements). The team size is passed per call (num_threads),
 * not set with omp_set_num_threads, because that setting is per calling
 * thread and entries may be called from any thread. */
#include <omp.h>

#include "blas_cpu.h"

int bpc_team(const bpc_dev *dev, int64_t total, int64_t grain)
{
    if (dev->threads <= 1 || total < grain)
        return 1;
    int64_t t = total / (grain / 2 > 0 ? grain / 2 : 1);
    return t < dev->threads ? (int)t : dev->threads;
}

void bpc_parallel(const bpc_dev *dev, int64_t total, int64_t grain, bpc_range_fn fn, void *ctx)
{
    if (total <= 0)
        return;
    int team = bpc_team(dev, total, grain);
    if (team <= 1 || omp_in_parallel()) {
        fn(ctx, 0, total);
        return;
    }
#pragma omp parallel num_threads(team)
    {
        int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
        int64_t q = total / nt, r = total % nt;
        int64_t lo = q * t + (t < r ? t : r), hi = lo + q + (t < r);
        if (t > 0)
            lo &= ~(int64_t)63;
        if (t + 1 < nt)
            hi &= ~(int64_t)63;
        if (hi > lo)
            fn(ctx, lo, hi);
    }
}

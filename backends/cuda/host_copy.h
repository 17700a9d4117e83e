/* Host memcpy split across a few helper threads, for the staging copies of
 * large transfers: one core copies ~10-20 GB/s, below what a PCIe 4 or 5
 * link moves from pinned memory (25-55 GB/s), so a single-threaded copy into
 * the staging buffers would bound host <-> device bandwidth (docs/gpu.md).
 * The helpers start at the first large copy and stop at destroy. */
#ifndef BPCU_HOST_COPY_H
#define BPCU_HOST_COPY_H

#include <stddef.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#define BPCU_COPY_MAX_THREADS 16

typedef struct bpcu_copier {
    int want;                      /* threads to use, the caller included (>= 1) */
    int started;                   /* helpers running */
    bool stop;
    std::mutex busy;               /* held by the one parallel copy at a time */
    std::mutex mu;                 /* guards everything below */
    std::condition_variable go, done;
    unsigned long long gen;        /* bumped for each job */
    int pending;                   /* helpers still copying the current job */
    char *dst;
    const char *src;
    size_t n;
    int parts;
    std::thread th[BPCU_COPY_MAX_THREADS];
} bpcu_copier;

/* memcpy(dst, src, n), by up to c->want threads when n is large and no
 * other parallel copy (the other transfer direction's) is running; else by
 * the caller alone. */
void bpcu_host_copy(bpcu_copier *c, void *dst, const void *src, size_t n);

/* Stop and join the helpers. */
void bpcu_copier_stop(bpcu_copier *c);

#endif

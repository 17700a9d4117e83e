/* bpcu_host_copy (host_copy.h): part k of a job is the k-th of `parts`
 * slices, 4 KiB aligned; the caller copies slice 0 and waits for the rest. */
#include <string.h>

#include "host_copy.h"

#define SMALL ((size_t)1 << 20) /* below this one thread is as fast */

static void slice(const bpcu_copier *c, int k, size_t *off, size_t *len)
{
    size_t per = (c->n / (size_t)c->parts + 4095) & ~(size_t)4095;
    size_t a = per * (size_t)k;
    *off = a < c->n ? a : c->n;
    size_t b = a + per < c->n ? a + per : c->n;
    *len = b > *off ? b - *off : 0;
}

static void helper(bpcu_copier *c, int k)
{
    unsigned long long seen = 0;
    std::unique_lock<std::mutex> lock(c->mu);
    for (;;) {
        c->go.wait(lock, [&] { return c->stop || c->gen != seen; });
        if (c->stop)
            return;
        seen = c->gen;
        size_t off, len;
        slice(c, k, &off, &len);
        lock.unlock();
        if (len)
            memcpy(c->dst + off, c->src + off, len);
        lock.lock();
        if (--c->pending == 0)
            c->done.notify_one();
    }
}

/* Start helpers 1 .. want-1 that are not running; a thread that cannot be
 * started leaves fewer (the copy still happens). Called under c->mu. */
static void start_helpers(bpcu_copier *c)
{
    while (c->started + 1 < c->want && c->started + 1 < BPCU_COPY_MAX_THREADS) {
        try {
            c->th[c->started + 1] = std::thread(helper, c, c->started + 1);
        } catch (...) {
            c->want = c->started + 1;
            return;
        }
        c->started++;
    }
}

void bpcu_host_copy(bpcu_copier *c, void *dst, const void *src, size_t n)
{
    std::unique_lock<std::mutex> mine(c->busy, std::defer_lock);
    if (n < SMALL || c->want <= 1 || !mine.try_lock()) {
        memcpy(dst, src, n);
        return;
    }
    std::unique_lock<std::mutex> lock(c->mu);
    start_helpers(c);
    if (c->started == 0) {
        lock.unlock();
        memcpy(dst, src, n);
        return;
    }
    c->dst = (char *)dst, c->src = (const char *)src, c->n = n;
    c->parts = c->started + 1;
    c->pending = c->started;
    c->gen++;
    c->go.notify_all();
    size_t off, len;
    slice(c, 0, &off, &len);
    lock.unlock();
    memcpy(c->dst + off, c->src + off, len);
    lock.lock();
    c->done.wait(lock, [&] { return c->pending == 0; });
}

void bpcu_copier_stop(bpcu_copier *c)
{
    {
        std::lock_guard<std::mutex> lock(c->mu);
        c->stop = true;
    }
    c->go.notify_all();
    for (int k = 1; k <= c->started; k++)
        if (c->th[k].joinable())
            c->th[k].join();
    c->started = 0;
}

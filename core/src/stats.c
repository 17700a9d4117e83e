/* Per-backend counters (stats.h): relaxed atomic increments, so counting
 * costs nothing measurable beside an op and never takes a lock. */
#include <string.h>

#include "internal.h"

#define ADD(field, n) atomic_fetch_add_explicit(&b->stats.field, (n), memory_order_relaxed)

void bp__count_op(bp_backend *b) { ADD(ops, 1); }

void bp__count_h2d(bp_backend *b, uint64_t bytes)
{
    ADD(h2d_calls, 1);
    ADD(h2d_bytes, bytes);
}

void bp__count_d2h(bp_backend *b, uint64_t bytes)
{
    ADD(d2h_calls, 1);
    ADD(d2h_bytes, bytes);
}

void bp__count_sync(bp_backend *b) { ADD(sync_reads, 1); }

void bp__count_hit(bp_backend *b) { ADD(copy_hits, 1); }

void bp__count_copy(bp_backend *from, bp_backend *to, uint64_t bytes)
{
    atomic_fetch_add_explicit(&from->stats.copies_out, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&from->stats.copies_out_bytes, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&to->stats.copies_in, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&to->stats.copies_in_bytes, bytes, memory_order_relaxed);
}

void bp__count_alloc(bp_backend *b, uint64_t bytes)
{
    ADD(allocs, 1);
    uint64_t now = (uint64_t)atomic_fetch_add(&b->live_bytes, (long long)bytes) + bytes;
    uint64_t peak = atomic_load_explicit(&b->stats.peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(&b->stats.peak, &peak, now,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed))
        ;
}

void bp__count_free(bp_backend *b, uint64_t bytes)
{
    atomic_fetch_sub(&b->live_bytes, (long long)bytes);
}

#define LOAD(field) atomic_load_explicit(&b->stats.field, memory_order_relaxed)

bp_status bp_backend_stats(const bp_backend *backend, bp_stats *out)
{
    if (!backend || !out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_backend_stats: backend or out is NULL");
    bp_backend *b = (bp_backend *)backend; /* atomics are read, never written */
    bp_stats s = {
        .struct_size = sizeof s,
        .ops = LOAD(ops),
        .h2d_calls = LOAD(h2d_calls),
        .h2d_bytes = LOAD(h2d_bytes),
        .d2h_calls = LOAD(d2h_calls),
        .d2h_bytes = LOAD(d2h_bytes),
        .copies_in = LOAD(copies_in),
        .copies_in_bytes = LOAD(copies_in_bytes),
        .copies_out = LOAD(copies_out),
        .copies_out_bytes = LOAD(copies_out_bytes),
        .copy_hits = LOAD(copy_hits),
        .sync_reads = LOAD(sync_reads),
        .allocs = LOAD(allocs),
        .bytes_in_use = (uint64_t)atomic_load(&b->live_bytes),
        .peak_bytes_in_use = LOAD(peak),
    };
    return bp__struct_out("bp_backend_stats", "bp_stats", out,
                          offsetof(bp_stats, peak_bytes_in_use) + sizeof s.peak_bytes_in_use, &s,
                          sizeof s);
}

bp_status bp_backend_stats_reset(bp_backend *b)
{
    if (!b)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_backend_stats_reset: backend is NULL");
    atomic_uint_fast64_t *fields[] = {
        &b->stats.ops,        &b->stats.h2d_calls,  &b->stats.h2d_bytes,  &b->stats.d2h_calls,
        &b->stats.d2h_bytes,  &b->stats.copies_in,  &b->stats.copies_in_bytes,
        &b->stats.copies_out, &b->stats.copies_out_bytes, &b->stats.copy_hits,
        &b->stats.sync_reads, &b->stats.allocs,
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        atomic_store_explicit(fields[i], 0, memory_order_relaxed);
    atomic_store_explicit(&b->stats.peak, (uint64_t)atomic_load(&b->live_bytes),
                          memory_order_relaxed);
    return BP_OK;
}

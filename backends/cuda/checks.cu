/* Index checks on the device and the deferred error they produce
 * (checks.h says how they work; plugin.h's deferred_error is the
 * contract). */
#include <stdio.h>
#include <string.h>

#include "checks.h"

typedef struct bpcu_commit_args {
    bpcu_ixerr *res;               /* the slot's result (mapped pinned memory) */
    unsigned long long *bad;       /* the slot's smallest bad position (device memory) */
    const char *idx;               /* the indices the op read */
    bool i64;
    int32_t rank, m, axis0;
    int64_t shape[BP_MAX_RANK], strides[BP_MAX_RANK];
    int64_t dims[BP_MAX_RANK];
} bpcu_commit_args;

/* One thread: the slot's result, and its bad position reset for the next
 * op that uses the slot. The result's set flag is written last. */
__global__ void bpcu_k_check_commit(bpcu_commit_args a)
{
    unsigned long long p = *a.bad;
    bpcu_ixerr r;
    memset(&r, 0, sizeof r);
    if (p != BPCU_NO_BAD_INDEX) {
        int64_t q = (int64_t)p, off = 0;
        for (int32_t k = a.rank - 1; k >= 0; k--) {
            off += (q % a.shape[k]) * a.strides[k];
            q /= a.shape[k];
        }
        int32_t c = (int32_t)(p % (unsigned long long)a.m);
        r.pos = p;
        r.value = a.i64 ? ((const int64_t *)a.idx)[off] : (long long)((const int32_t *)a.idx)[off];
        r.extent = a.dims[c];
        r.axis = a.axis0 + c;
        r.set = 1;
        *a.bad = BPCU_NO_BAD_INDEX;
    }
    volatile bpcu_ixerr *out = a.res;
    out->pos = r.pos;
    out->value = r.value;
    out->extent = r.extent;
    out->axis = r.axis;
    __threadfence_system();
    out->set = r.set;
}

/* Every index against its extent, nothing else (check_all). */
__global__ void bpcu_k_check_all(bpcu_commit_args a, int64_t n)
{
    BPCU_FOR(i, n) {
        int64_t q = i, off = 0;
        for (int32_t k = a.rank - 1; k >= 0; k--) {
            off += (q % a.shape[k]) * a.strides[k];
            q /= a.shape[k];
        }
        int64_t v = a.i64 ? ((const int64_t *)a.idx)[off] : (int64_t)((const int32_t *)a.idx)[off];
        bpcu_index_ok(&v, a.dims[i % a.m], i, a.bad);
    }
}

/* ---- the slots ------------------------------------------------------------------- */

cudaError_t bpcu_checks_create(bpcu_device *d)
{
    bpcu_checks *c = &d->checks;
    c->head = c->tail = 0;
    c->status = BP_OK;
    c->msg[0] = '\0';
    size_t n = BPCU_CHECK_SLOTS;
    cudaError_t e = cudaHostAlloc((void **)&c->host, n * sizeof(bpcu_ixerr), cudaHostAllocMapped);
    if (e != cudaSuccess) {
        c->host = NULL;
        return e;
    }
    memset(c->host, 0, n * sizeof(bpcu_ixerr));
    e = cudaHostGetDevicePointer((void **)&c->dev, c->host, 0);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&c->bad, n * sizeof(unsigned long long));
    if (e != cudaSuccess) {
        c->bad = NULL;
        return e;
    }
    /* on the compute stream (non-blocking: a legacy-stream memset would not
     * be ordered before its kernels) */
    e = cudaMemsetAsync(c->bad, 0xff, n * sizeof(unsigned long long), d->stream);
    for (size_t k = 0; k < n && e == cudaSuccess; k++)
        e = cudaEventCreateWithFlags(&c->done[k], cudaEventDisableTiming);
    return e;
}

void bpcu_checks_destroy(bpcu_device *d)
{
    bpcu_checks *c = &d->checks;
    for (size_t k = 0; k < BPCU_CHECK_SLOTS; k++)
        if (c->done[k])
            cudaEventDestroy(c->done[k]);
    if (c->bad)
        cudaFree(c->bad);
    if (c->host)
        cudaFreeHost(c->host);
}

/* The message of a slot's result, in index_check.c's words. */
static void describe(bpcu_checks *c, uint64_t s, const volatile bpcu_ixerr *r)
{
    long long ext = r->extent;
    c->status = BP_ERR_INDEX;
    if (c->labels[s]) {
        snprintf(c->msg, sizeof c->msg,
                 "bp_%s: label %lld (flat position %llu) is not a class: labels must lie in "
                 "[0, %lld)%s",
                 bp_op_name(c->op[s]), r->value, r->pos, ext,
                 c->labels[s] == 2 ? " or equal ignore_index" : "");
        return;
    }
    snprintf(c->msg, sizeof c->msg,
             "bp_%s: indices[%llu] (flat position) is %lld, out of range for axis %d of extent "
             "%lld; indices must lie in [%lld, %lld)",
             bp_op_name(c->op[s]), r->pos, r->value, r->axis, ext, -ext, ext);
}

/* Take the results of the finished slots, oldest first, keeping the first
 * bad one as the deferred error; wait_oldest: wait for the oldest slot
 * first (the ring is full). Under the check lock. */
static void harvest(bpcu_device *d, bool wait_oldest)
{
    bpcu_checks *c = &d->checks;
    while (c->head < c->tail) {
        uint64_t s = c->head % BPCU_CHECK_SLOTS;
        cudaError_t e = wait_oldest ? cudaEventSynchronize(c->done[s]) : cudaEventQuery(c->done[s]);
        wait_oldest = false;
        if (e == cudaErrorNotReady)
            return;
        if (e != cudaSuccess) { /* the slot's work failed: the device is lost, or it never ran */
            bpcu_note_lost(d, e);
            return;
        }
        const volatile bpcu_ixerr *r = &c->host[s];
        if (r->set && c->status == BP_OK)
            describe(c, s, r);
        c->head++;
    }
}

bpcu_index_check::bpcu_index_check(bpcu_device *d, bp_op op)
    : status(BP_OK), d_(d), op_(op), slot_(0), labels_(0), lock_(d->checks.mu)
{
    bpcu_checks *c = &d->checks;
    if (c->tail - c->head >= BPCU_CHECK_SLOTS / 2)
        harvest(d, false);
    if (c->tail - c->head >= BPCU_CHECK_SLOTS)
        harvest(d, true);
    if (c->tail - c->head >= BPCU_CHECK_SLOTS) { /* the oldest failed: the device is lost */
        status = bpcu_fail(d, BP_ERR_BACKEND, "cuda: device %d: the index checks of %s cannot "
                           "be queued: earlier work on the device failed", d->ordinal,
                           bp_op_name(op));
        return;
    }
    slot_ = c->tail % BPCU_CHECK_SLOTS;
}

unsigned long long *bpcu_index_check::bad() const { return d_->checks.bad + slot_; }

void bpcu_index_check::labels(bool has_ignore) { labels_ = has_ignore ? 2 : 1; }

/* The commit kernel's arguments for this slot. */
static bpcu_commit_args commit_args(bpcu_device *d, uint64_t slot, const bp_view *indices,
                                    int32_t m, const int64_t *dims, int32_t axis0)
{
    bpcu_checks *c = &d->checks;
    bpcu_commit_args a;
    memset(&a, 0, sizeof a);
    a.res = c->dev + slot;
    a.bad = c->bad + slot;
    a.idx = bpcu_ptr(indices);
    a.i64 = indices->dtype == BP_I64;
    a.rank = indices->rank;
    a.m = m > 0 ? m : 1;
    a.axis0 = axis0;
    for (int32_t k = 0; k < indices->rank; k++)
        a.shape[k] = indices->shape[k], a.strides[k] = indices->strides[k];
    for (int32_t k = 0; k < a.m && k < BP_MAX_RANK; k++)
        a.dims[k] = dims[k];
    return a;
}

bp_status bpcu_index_check::check_all(const bp_view *indices, int32_t m, const int64_t *dims,
                                      int32_t axis0)
{
    if (status != BP_OK)
        return status;
    int64_t n = bpcu_numel(indices);
    cudaError_t e = cudaSuccess;
    if (n > 0)
        e = bpcu_launch(d_->stream, bpcu_blocks(n), BPCU_THREADS, 0, bpcu_k_check_all,
                        commit_args(d_, slot_, indices, m, dims, axis0), n);
    bp_status st = commit(indices, m, dims, axis0);
    return e != cudaSuccess ? bpcu_launched(d_, e, "index check kernel") : st;
}

bp_status bpcu_index_check::commit(const bp_view *indices, int32_t m, const int64_t *dims,
                                   int32_t axis0)
{
    if (status != BP_OK)
        return status;
    bpcu_checks *c = &d_->checks;
    cudaError_t e = bpcu_launch(d_->stream, 1, 1, 0, bpcu_k_check_commit,
                                commit_args(d_, slot_, indices, m, dims, axis0));
    if (e == cudaSuccess)
        e = cudaEventRecord(c->done[slot_], d_->stream);
    if (e != cudaSuccess)
        return bpcu_cuda_fail(d_, e, "queueing the index check of %s", bp_op_name(op_));
    c->op[slot_] = op_;
    c->labels[slot_] = labels_;
    c->tail++;
    return BP_OK;
}

/* ---- the entry ------------------------------------------------------------------- */

bp_status bpcu_deferred_error(void *dev)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, "deferred_error", false);
    if (in.status != BP_OK)
        return in.status;
    char msg[sizeof d->checks.msg];
    bp_status st;
    {
        std::lock_guard<std::mutex> lock(d->checks.mu);
        harvest(d, false);
        st = d->checks.status;
        memcpy(msg, d->checks.msg, sizeof msg);
        d->checks.status = BP_OK;
        d->checks.msg[0] = '\0';
    }
    return st == BP_OK ? BP_OK : bpcu_fail(d, st, "%s", msg);
}

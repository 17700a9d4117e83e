/* Index bounds checked on the device (plugin.h's deferred_error).
 *
 * The core does not read a gather's or scatter's indices to the host for a
 * plugin with deferred_error (that would synchronise every call), so each
 * kernel that reads indices checks them itself: an index outside
 * [-dim, dim) is noted (the smallest flat position wins, atomicMin) and
 * the element is not read through it (a gather writes zero there, a scatter
 * skips the update). Behind the op's kernels a one-thread commit kernel
 * turns the noted position into the op's result, with the index value, the
 * axis and its extent, in mapped pinned memory, and an event is recorded.
 * deferred_error(), which the core calls after every synchronising call,
 * reads the results of the ops whose events have completed, in queue order,
 * and reports the first bad one as BP_ERR_INDEX in the core's own words
 * (index_check.c). Nothing here waits for the device, except when
 * BPCU_CHECK_SLOTS index ops are in flight at once (then for the oldest). */
#ifndef BPCU_CHECKS_H
#define BPCU_CHECKS_H

#include <mutex>

#include "bpcu.h"

#define BPCU_NO_BAD_INDEX 0xffffffffffffffffull

#ifdef __CUDACC__
/* *j, an index read at flat position pos of indices, made non-negative if
 * it lies in [-dim, dim) (true); else pos is noted in *bad and false. */
static __device__ __forceinline__ bool bpcu_index_ok(int64_t *j, int64_t dim, int64_t pos,
                                                     unsigned long long *bad)
{
    int64_t v = *j;
    if (v < -dim || v >= dim) {
        atomicMin(bad, (unsigned long long)pos);
        return false;
    }
    *j = v < 0 ? v + dim : v;
    return true;
}
#endif

/* One op's check: takes a result slot (holding the device's check lock
 * until it goes out of scope, so that slots follow the stream's order),
 * gives the kernels bad(), and queues the commit behind them:
 *
 *     bpcu_index_check chk(d, BP_OP_GATHER);
 *     if (chk.status != BP_OK) return chk.status;
 *     e = launch(..., chk.bad());
 *     bp_status st = chk.commit(indices, 1, &dim, axis);   // even if e failed
 */
class bpcu_index_check {
  public:
    bpcu_index_check(bpcu_device *d, bp_op op);
    ~bpcu_index_check() = default;
    bpcu_index_check(const bpcu_index_check &) = delete;
    bpcu_index_check &operator=(const bpcu_index_check &) = delete;
    bp_status status;
    unsigned long long *bad() const;
    /* Queue the commit: flat position p of indices (the view the kernels
     * read) indexes axis axis0 + p % m of x, of extent dims[p % m]. */
    bp_status commit(const bp_view *indices, int32_t m, const int64_t *dims, int32_t axis0);
    /* Check every index and commit, for an op with nothing else to do
     * (an empty output), so that a bad index is still reported. */
    bp_status check_all(const bp_view *indices, int32_t m, const int64_t *dims, int32_t axis0);
    /* The indices are class labels (the losses): a bad one is described as a
     * label that is not a class (extent: the classes), not as an index. */
    void labels(bool has_ignore);

  private:
    bpcu_device *d_;
    bp_op op_;
    uint64_t slot_;
    signed char labels_;
    std::unique_lock<std::mutex> lock_;
};

#endif

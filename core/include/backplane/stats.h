/* backplane: what a program moves and waits for, per backend.
 *
 * The two failures this answers: a training loop that reads the loss back
 * to the host every step (the GPU idles while the host waits), and a loop
 * that copies every parameter across backends every step. Both show up
 * here as counts per step. Counting costs a few relaxed atomic increments
 * per call; nothing is timed. */
#ifndef BACKPLANE_STATS_H
#define BACKPLANE_STATS_H

#include <stdint.h>

#include "context.h"
#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counters since the backend was opened (or last reset). Members are only
 * appended: set struct_size = sizeof(bp_stats) before the call. */
typedef struct bp_stats {
    uint32_t struct_size;
    uint64_t ops;                 /* op calls dispatched to the backend */
    uint64_t h2d_calls;           /* host -> backend: bp_tensor_from_host (and imports) */
    uint64_t h2d_bytes;
    uint64_t d2h_calls;           /* backend -> host: bp_tensor_to_host, bp_item_*,
                                     printing, checkpoints */
    uint64_t d2h_bytes;
    uint64_t copies_in;           /* bp_backend_copy/transfer arriving from another backend */
    uint64_t copies_in_bytes;
    uint64_t copies_out;          /* ... leaving for another backend */
    uint64_t copies_out_bytes;
    uint64_t copy_hits;           /* copies answered without moving data: to the tensor's
                                     own backend, or again while an earlier copy lives */
    uint64_t sync_reads;          /* calls that waited for the backend's queued work:
                                     every backend -> host read, bp_synchronize, a
                                     copy out of a device, a host-side index check */
    uint64_t allocs;              /* buffers allocated */
    uint64_t bytes_in_use;        /* tensor bytes alive on the backend now */
    uint64_t peak_bytes_in_use;   /* the most at any time since open (or reset) */
} bp_stats;

/* Fill *out (struct_size set by the caller). BP_ERR_INVALID_ARGUMENT for a
 * NULL backend or a struct_size too small. */
BP_API bp_status bp_backend_stats(const bp_backend *backend, bp_stats *out);

/* Zero every counter; bytes_in_use stays what it is and the peak restarts
 * from it. */
BP_API bp_status bp_backend_stats_reset(bp_backend *backend);

#ifdef __cplusplus
}
#endif
#endif

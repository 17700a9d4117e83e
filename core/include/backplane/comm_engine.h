/* backplane: the ABI between the core and a collective engine.
 *
 * An engine moves bytes between the processes of a job on an existing
 * transport (MPI, NCCL). It is a shared object of its own, comm_NAME.so,
 * installed beside the backend plugins and opened by bp_comm_create (never
 * earlier). It exports one symbol,
 *
 *     BP_PLUGIN_EXPORT const bp_comm_engine *bp_comm_engine_entry(void);
 *
 * and, like a plugin, never links libbackplane: what it needs from the core
 * comes in bp_comm_engine_host. Versioning as in plugin.h: every struct
 * starts with uint32_t struct_size, members are only appended (minor bump),
 * the core refuses another major. plugins/comm_template/ is the smallest
 * engine that passes the project's collective checks (one process), built
 * out of tree: copy it to start one of your own.
 *
 * What the core checks of an engine: the descriptor's size and major, its
 * name against the file's (comm_NAME.so), every entry present, and that
 * size() is in 1..2^24 and rank() in 0..size-1 after open.
 *
 * What the core guarantees before a collective entry: buffers are dense,
 * of the memory kind the communicator was opened for, of the sizes the
 * entry's comment gives; outputs never alias inputs; the dtype and op are
 * ones supports() accepted; entries of one communicator are never called
 * concurrently. Buffers may be empty (0 elements): the entry still takes
 * part (the ranks agree) and touches no memory.
 *
 * Agreement: each entry is handed this rank's record of the call. Before
 * any data moves the engine makes every rank's record known to every rank;
 * if any differs (bytewise) from this rank's, it copies all of them, in rank
 * order, to `all` and returns BP_ERR_SHAPE having moved no data. Every rank
 * of a mismatched call then returns that verdict, and the core words it.
 *
 * Faults: no entry waits more than the timeout given at open without
 * progress. An engine that gives up returns BP_ERR_BACKEND after set_error()
 * with which ranks it waited for and what it was waiting for ("rank 2 did
 * not arrive"); the communicator is then failed: later entries return
 * BP_ERR_BACKEND at once.
 *
 * Reductions: SUM, PROD and AVG over floats are computed in rank order and
 * rounded once to the dtype where the engine can (the MPI engine: f16, bf16
 * and f32 accumulate in double); an engine that cannot (NCCL: f16, bf16)
 * says so with supports() and the core widens first. */
#ifndef BACKPLANE_COMM_ENGINE_H
#define BACKPLANE_COMM_ENGINE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm.h"
#include "dtype.h"
#include "export.h"
#include "plugin.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* History:
 *   1.0  open .. barrier. */
#define BP_COMM_ENGINE_ABI_MAJOR 1
#define BP_COMM_ENGINE_ABI_MINOR 0

typedef enum bp_comm_collective {
    BP_COMM_ALL_REDUCE = 1,
    BP_COMM_BROADCAST = 2,
    BP_COMM_ALL_GATHER = 3,
    BP_COMM_REDUCE_SCATTER = 4,
    BP_COMM_BARRIER = 5
} bp_comm_collective;

/* What this rank was asked to do; compared across ranks, bytewise. Fields
 * that do not apply are -1 (op, root, axis) or 0 (shape beyond rank). */
typedef struct bp_comm_record {
    uint64_t seq;                  /* the call's number on this communicator, from 1 */
    int32_t collective;            /* bp_comm_collective */
    int32_t dtype;                 /* bp_dtype; -1 for a barrier */
    int32_t op;                    /* bp_reduce_op */
    int32_t root;                  /* broadcast */
    int32_t axis;                  /* all_gather, reduce_scatter (normalised) */
    int32_t rank;                  /* the tensor's number of axes */
    int64_t shape[BP_MAX_RANK];
} bp_comm_record;

/* What the core offers an engine. Valid from open() until close() returns. */
typedef struct bp_comm_engine_host {
    uint32_t struct_size;
    void *host;                    /* pass back as the first argument below */
    /* Log at a level; dropped below the configured level. No trailing newline. */
    void (*log)(void *host, bp_log_level level, const char *fmt, ...);
    /* Set the detail for the error the current entry is about to return. */
    void (*set_error)(void *host, const char *fmt, ...);
} bp_comm_engine_host;

/* Where the communicator's buffers live and how long to wait. */
typedef struct bp_comm_engine_args {
    uint32_t struct_size;
    int32_t memory_kind;           /* BP_MEMORY_HOST or BP_MEMORY_CUDA */
    int32_t device;                /* the device of that kind (CUDA ordinal), else 0 */
    const void *mpi_comm;          /* (optional) the application's MPI_Comm *; NULL: WORLD */
    double timeout_s;              /* > 0 */
} bp_comm_engine_args;

typedef struct bp_comm_engine {
    uint32_t struct_size;          /* sizeof(bp_comm_engine) as the engine was built */
    uint32_t abi_major;            /* BP_COMM_ENGINE_ABI_MAJOR it was built against */
    uint32_t abi_minor;
    const char *name;              /* "mpi", "nccl" */
    const char *description;       /* one line, e.g. "Open MPI 4.1.4" */

    /* Join the job's processes (collective). The library the engine needs,
     * a device that fits, the other processes: whatever is missing, it fails
     * with set_error() saying what and how to fix it (BP_ERR_PLUGIN for a
     * missing library, BP_ERR_UNSUPPORTED_DEVICE for an unusable device). */
    bp_status (*open)(const bp_comm_engine_host *host, const bp_comm_engine_args *args,
                      void **comm);
    void (*close)(void *comm);     /* frees everything; not collective */
    int32_t (*rank)(void *comm);
    int32_t (*size)(void *comm);
    /* Whether the engine reduces dtype with op (op -1: only carries it). */
    bool (*supports)(void *comm, bp_dtype dtype, int32_t op);

    /* dst[i] = op over ranks of src[i]; count elements each. */
    bp_status (*all_reduce)(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                            const void *src, void *dst, size_t count, bp_dtype dtype,
                            bp_reduce_op op);
    /* dst = the root's src; bytes each. */
    bp_status (*broadcast)(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                           const void *src, void *dst, size_t bytes, int32_t root);
    /* dst (size * bytes) = every rank's src (bytes) in rank order. */
    bp_status (*all_gather)(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                            const void *src, void *dst, size_t bytes);
    /* src holds size blocks of count elements; dst (count) = op over ranks
     * of block `rank`. */
    bp_status (*reduce_scatter)(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                const void *src, void *dst, size_t count, bp_dtype dtype,
                                bp_reduce_op op);
    /* The records only. */
    bp_status (*barrier)(void *comm, const bp_comm_record *rec, bp_comm_record *all);
    /* Members above are valid for ABI 1.0. */
} bp_comm_engine;

typedef const bp_comm_engine *(*bp_comm_engine_entry_fn)(void);
#define BP_COMM_ENGINE_ENTRY_SYMBOL "bp_comm_engine_entry"

#ifdef __cplusplus
}
#endif
#endif

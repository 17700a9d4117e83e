/* backplane: collectives across the processes of a job.
 *
 * A bp_comm spans the processes of a job (those mpirun started, or an
 * MPI communicator of the application's) on an existing engine: MPI for
 * backends whose memory the host can address (binary, blas_cpu) and for any
 * other backend by staging through host memory; NCCL for cuda. Each engine
 * is a shared object of its own beside the backend plugins, opened at
 * bp_comm_create and never earlier, so a program that never communicates
 * pays nothing and a machine without MPI or NCCL runs everything else.
 *
 *     bp_comm *comm = NULL;
 *     bp_comm_create(backend, NULL, &comm);      // collective: every rank calls it
 *     bp_all_reduce(comm, grad, BP_REDUCE_AVG, &avg);
 *     bp_comm_destroy(comm);
 *
 * Every collective is called by every rank of the communicator, in the same
 * order, with tensors of the same shape and dtype on the communicator's
 * backend. Like every op it returns a new tensor. Before any data moves the
 * ranks compare what each was asked to do: a rank that passed another shape
 * (BP_ERR_SHAPE), dtype (BP_ERR_DTYPE), or called another collective or
 * with another op, root or axis (BP_ERR_INVALID_ARGUMENT) makes every rank
 * fail with the same message, naming that rank and both values; nothing is
 * corrupted and the communicator stays usable.
 *
 * Faults: no collective waits forever. A rank that does not arrive, or stops
 * answering, for [comm] timeout_s seconds (default 300; options->timeout_s
 * overrides) makes the others fail with BP_ERR_BACKEND and a message naming
 * the collective and the rank. The communicator is then unusable: every
 * later call fails at once; destroy it (and, usually, end the job).
 *
 * Determinism: on the MPI engine a sum (or product, or mean) over ranks is
 * computed element by element in rank order, x_0 + x_1 + ... + x_{n-1},
 * floats accumulated in double and rounded once to the tensor's dtype
 * (integers wrap), so the result has the same bits in every run with the
 * same number of ranks, on every rank. NCCL's order is its own; see
 * docs/distributed.md.
 *
 * Threads: one thread at a time per communicator (the ranks must agree on
 * the order of collectives anyway); separate communicators may be used from
 * separate threads. */
#ifndef BACKPLANE_COMM_H
#define BACKPLANE_COMM_H

#include <stdint.h>

#include "context.h"
#include "export.h"
#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bp_comm bp_comm;

/* How bp_all_reduce and bp_reduce_scatter combine the ranks' values. SUM,
 * PROD, MAX and MIN take every dtype but bool (integers wrap; MAX and MIN
 * give NaN if any rank has NaN); AVG (the sum divided by the number of
 * ranks) takes float dtypes. */
typedef enum bp_reduce_op {
    BP_REDUCE_SUM = 0,
    BP_REDUCE_PROD = 1,
    BP_REDUCE_MAX = 2,
    BP_REDUCE_MIN = 3,
    BP_REDUCE_AVG = 4
} bp_reduce_op;

/* Options of bp_comm_create; NULL means every default. Members are only
 * appended: start from BP_COMM_OPTIONS_INIT. */
typedef struct bp_comm_options {
    uint32_t struct_size;   /* sizeof(bp_comm_options): BP_COMM_OPTIONS_INIT sets it */
    const char *engine;     /* "mpi" or "nccl"; NULL: the one that fits the backend
                               (nccl for cuda, mpi for everything else) */
    const void *mpi_comm;   /* (optional) address of the application's MPI_Comm (an
                               MPI_Comm *), whose processes the communicator spans;
                               MPI must be initialised. NULL: MPI_COMM_WORLD, MPI
                               initialised by the engine if the application has not */
    double timeout_s;       /* seconds a collective waits for a rank before failing;
                               0: [comm] timeout_s of the context's configuration */
} bp_comm_options;

#define BP_COMM_OPTIONS_INIT {.struct_size = sizeof(bp_comm_options)}

/* A communicator over the processes of the job, for tensors of `backend`.
 * Collective: every process of the job (of *options->mpi_comm) calls it,
 * and it fails on every one if a process does not arrive within the
 * timeout. The engine is opened here (comm_mpi.so / comm_nccl.so, found
 * where the backend plugins are). When the engine initialised MPI itself,
 * MPI stays initialised until the process exits (MPI cannot be initialised
 * twice); an application that initialises MPI calls bp_comm_destroy before
 * MPI_Finalize. Errors: BP_ERR_INVALID_ARGUMENT (a NULL backend or out, a
 * graph's recording backend, options smaller than any bp_comm_options, a
 * timeout that is not a positive number, an engine name that is none),
 * BP_ERR_NOT_FOUND (no such engine installed), BP_ERR_PLUGIN (the engine,
 * or the library it needs, cannot be loaded; or it reports a rank and size
 * no job has), BP_ERR_UNSUPPORTED_DEVICE (the engine cannot serve this
 * backend: NCCL without a GPU), BP_ERR_BACKEND (the transport failed, or a
 * process did not arrive), BP_ERR_CONFIG, BP_ERR_OUT_OF_MEMORY. */
BP_API bp_status bp_comm_create(bp_backend *backend, const bp_comm_options *options,
                                bp_comm **out);

/* This process's rank (0 .. size - 1) and the number of processes; -1 for a
 * NULL communicator. */
BP_API int32_t bp_comm_rank(const bp_comm *comm);
BP_API int32_t bp_comm_size(const bp_comm *comm);

/* Free the communicator (not collective; NULL is a no-op). Tensors made by
 * its collectives stay valid. */
BP_API void bp_comm_destroy(bp_comm *comm);

/* Every rank gets op applied over the ranks' x, element by element; out has
 * x's shape and dtype. */
BP_API bp_status bp_all_reduce(bp_comm *comm, const bp_tensor *x, bp_reduce_op op,
                               bp_tensor **out);

/* Every rank gets the root's x. Every rank passes a tensor of the root's
 * shape and dtype; only the root's values count. */
BP_API bp_status bp_broadcast(bp_comm *comm, const bp_tensor *x, int32_t root, bp_tensor **out);

/* The ranks' x concatenated on `axis` in rank order (every rank passes the
 * same shape): out's extent on axis is size times x's. x has rank >= 1;
 * negative axes count from the end. */
BP_API bp_status bp_all_gather(bp_comm *comm, const bp_tensor *x, int32_t axis, bp_tensor **out);

/* op over the ranks' x, then rank r keeps the r-th of size equal parts along
 * `axis`: out's extent on axis is x's divided by size (an extent that size
 * does not divide: BP_ERR_SHAPE). */
BP_API bp_status bp_reduce_scatter(bp_comm *comm, const bp_tensor *x, bp_reduce_op op,
                                   int32_t axis, bp_tensor **out);

/* Returns once every rank has called it (or fails on the timeout). */
BP_API bp_status bp_barrier(bp_comm *comm);

/* "sum", "prod", "max", "min", "avg"; "?" for a value not in the enum. */
BP_API const char *bp_reduce_op_name(bp_reduce_op op);

#ifdef __cplusplus
}
#endif
#endif

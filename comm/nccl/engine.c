/* The nccl engine (comm_nccl.so): collectives on CUDA device memory with
 * NCCL, which it opens itself (nccl_api.c), so that it builds without NCCL
 * and a machine without NCCL or a GPU only hears of it when it asks.
 *
 * The processes find each other over MPI (job.c): rank 0's NCCL unique id
 * reaches the others with a broadcast that has a deadline, and every
 * collective starts with the records of job_heads, so a rank that does not
 * arrive, or a call the ranks disagree about, is caught on the host, named,
 * before anything is queued on the GPU.
 *
 * Each collective runs on the engine's own stream, and the engine waits for
 * it (polling, with the deadline: a stuck NCCL call is aborted and reported
 * rather than hanging). The core synchronises the backend before, so inputs
 * are ready and outputs are free. Queuing on the backend's own stream, so
 * that the host need not wait, would need the stream from the cuda plugin;
 * docs/distributed.md says so. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backplane/comm_engine.h"
#include "job.h"
#include "nccl_api.h"

typedef struct nccl_state {
    job *j;
    nccl_api api;
    nccl_comm comm;
    cu_stream stream;
    int device;
    cu_context ctx;       /* the device's primary context, made current for each call */
    bool ctx_retained;
} nccl_state;

static char engine_description[96] = "collectives on CUDA device memory with NCCL";

static double nccl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nccl_close(void *comm)
{
    nccl_state *s = comm;
    if (!s)
        return;
    if (s->comm)
        (s->j && s->j->failed ? s->api.comm_abort : s->api.comm_destroy)(s->comm);
    if (s->stream)
        s->api.cu_stream_destroy(s->stream);
    if (s->ctx_retained)
        s->api.cu_primary_ctx_release(s->device);
    job_leave(s->j);
    /* the libraries stay loaded: NCCL keeps threads of its own */
    free(s);
}

static bp_status nccl_open(const bp_comm_engine_host *host, const bp_comm_engine_args *args,
                           void **out)
{
    *out = NULL;
    if (args->memory_kind != BP_MEMORY_CUDA) {
        host->set_error(host->host, "the nccl engine moves CUDA device memory only; use the mpi "
                        "engine for host memory");
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    nccl_state *s = calloc(1, sizeof *s);
    if (!s) {
        host->set_error(host->host, "out of memory");
        return BP_ERR_OUT_OF_MEMORY;
    }
    s->device = args->device;
    char why[512];
    int missing = nccl_api_load(&s->api, why, sizeof why);
    if (missing) {
        host->set_error(host->host, "%s", why);
        free(s);
        return missing == 1 ? BP_ERR_PLUGIN : BP_ERR_UNSUPPORTED_DEVICE;
    }
    snprintf(engine_description, sizeof engine_description,
             "collectives on CUDA device memory with NCCL %d.%d.%d", s->api.version / 10000,
             s->api.version / 100 % 100, s->api.version % 100);
    nccl_api *a = &s->api;
    int cu_dev = 0;
    cu_context ctx = NULL;
    if (a->cu_device_get(&cu_dev, args->device) != CU_SUCCESS ||
        a->cu_primary_ctx_retain(&ctx, cu_dev) != CU_SUCCESS) {
        host->set_error(host->host, "CUDA device %d cannot be opened by the driver",
                        (int)args->device);
        free(s);
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    s->device = cu_dev;
    s->ctx = ctx;
    s->ctx_retained = true;
    a->cu_ctx_set_current(ctx); /* NCCL (the CUDA runtime) uses the current context */
    bp_status st = job_join(host, args->mpi_comm, args->timeout_s, &s->j);
    if (st != BP_OK) {
        nccl_close(s);
        return st;
    }
    job *j = s->j;
    nccl_unique_id id;
    memset(&id, 0, sizeof id);
    if (j->rank == 0 && a->get_unique_id(&id) != NCCL_SUCCESS)
        memset(&id, 0, sizeof id); /* all zero: every rank fails below, alike */
    st = job_share(j, &id, sizeof id, 0, "NCCL's unique id");
    static const nccl_unique_id zero;
    if (st == BP_OK && memcmp(&id, &zero, sizeof id) == 0)
        st = job_error(j, BP_ERR_BACKEND, "rank 0 could not make NCCL's unique id "
                       "(ncclGetUniqueId failed: see NCCL_DEBUG=WARN)");
    int rc = NCCL_SUCCESS;
    if (st == BP_OK && (rc = a->comm_init_rank(&s->comm, j->size, id, j->rank)) != NCCL_SUCCESS) {
        s->comm = NULL;
        st = job_error(j, BP_ERR_BACKEND, "ncclCommInitRank failed on rank %d: %s", j->rank,
                       a->get_error_string(rc));
    }
    if (st == BP_OK && a->cu_stream_create(&s->stream, CU_STREAM_NON_BLOCKING) != CU_SUCCESS) {
        s->stream = NULL;
        st = job_error(j, BP_ERR_BACKEND, "cuStreamCreate failed on CUDA device %d", s->device);
    }
    if (st != BP_OK) {
        nccl_close(s);
        return st;
    }
    *out = s;
    return BP_OK;
}

static int32_t nccl_rank(void *comm) { return ((nccl_state *)comm)->j->rank; }
static int32_t nccl_size(void *comm) { return ((nccl_state *)comm)->j->size; }

static int nccl_dtype(bp_dtype dt)
{
    switch (dt) {
    case BP_BOOL:
    case BP_U8: return NCCL_UINT8;
    case BP_I8: return NCCL_INT8;
    case BP_I32: return NCCL_INT32;
    case BP_U32: return NCCL_UINT32;
    case BP_I64: return NCCL_INT64;
    case BP_U64: return NCCL_UINT64;
    case BP_F16: return NCCL_FLOAT16;
    case BP_BF16: return NCCL_BFLOAT16;
    case BP_F32: return NCCL_FLOAT32;
    case BP_F64: return NCCL_FLOAT64;
    case BP_I16: case BP_U16: break; /* NCCL has no 16-bit integers: refused by supports */
    }
    return NCCL_UINT8;
}

static int nccl_op(bp_reduce_op op)
{
    switch (op) {
    case BP_REDUCE_SUM: return NCCL_SUM;
    case BP_REDUCE_PROD: return NCCL_PROD;
    case BP_REDUCE_MAX: return NCCL_MAX;
    case BP_REDUCE_MIN: return NCCL_MIN;
    case BP_REDUCE_AVG: return NCCL_AVG;
    }
    return NCCL_SUM;
}

static bool nccl_supports(void *comm, bp_dtype dtype, int32_t op)
{
    (void)comm;
    if (dtype == BP_I16 || dtype == BP_U16) /* NCCL has no 16-bit integer type */
        return false;
    if (op < 0)
        return bp_dtype_valid((int)dtype);
    if (dtype == BP_BOOL)
        return false;
    /* NCCL sums f16 and bf16 in their own precision: the core widens them */
    if ((dtype == BP_F16 || dtype == BP_BF16) &&
        (op == BP_REDUCE_SUM || op == BP_REDUCE_AVG || op == BP_REDUCE_PROD))
        return false;
    return op >= BP_REDUCE_SUM && op <= BP_REDUCE_AVG;
}

/* After enqueueing: wait for the stream with the deadline; abort NCCL on a
 * timeout or an asynchronous error. */
static bp_status nccl_finish(nccl_state *s, const char *call, int rc)
{
    job *j = s->j;
    nccl_api *a = &s->api;
    if (rc != NCCL_SUCCESS && rc != NCCL_IN_PROGRESS) {
        job_fail(j, "%s failed: %s", call, a->get_error_string(rc));
        return BP_ERR_BACKEND;
    }
    double start = nccl_now();
    unsigned idle = 0;
    for (;;) {
        int q = a->cu_stream_query(s->stream);
        if (q == CU_SUCCESS)
            return BP_OK;
        if (q != CU_ERROR_NOT_READY) {
            job_fail(j, "%s: the GPU reported CUDA error %d", call, q);
            return BP_ERR_BACKEND;
        }
        int async = NCCL_SUCCESS;
        a->comm_get_async_error(s->comm, &async);
        bool late = nccl_now() - start > j->timeout_s;
        if ((async != NCCL_SUCCESS && async != NCCL_IN_PROGRESS) || late) {
            if (late)
                job_fail(j,
                         "%s did not complete within %g s ([comm] timeout_s): a rank stopped "
                         "(every rank had arrived at the call; NCCL does not say which)",
                         call, j->timeout_s);
            else
                job_fail(j, "%s failed: %s", call, a->get_error_string(async));
            a->comm_abort(s->comm);
            s->comm = NULL;
            return BP_ERR_BACKEND;
        }
        if (++idle > 64) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
}

/* The records; then the device's context is made current on this thread
 * (the caller may have used another device since), for the NCCL call. */
static bp_status nccl_heads(nccl_state *s, const bp_comm_record *rec, bp_comm_record *all,
                            const char *fn)
{
    bp_status st = job_check(s->j, fn);
    if (st == BP_OK)
        st = job_heads(s->j, rec, all, NULL, NULL, NULL, NULL);
    if (st == BP_OK && s->api.cu_ctx_set_current(s->ctx) != CU_SUCCESS)
        st = job_error(s->j, BP_ERR_BACKEND, "cuCtxSetCurrent failed for CUDA device %d",
                       s->device);
    return st;
}

static bp_status nccl_all_reduce(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                 const void *src, void *dst, size_t count, bp_dtype dt,
                                 bp_reduce_op op)
{
    nccl_state *s = comm;
    bp_status st = nccl_heads(s, rec, all, "bp_all_reduce");
    if (st != BP_OK)
        return st;
    return nccl_finish(s, "ncclAllReduce",
                       s->api.all_reduce(src, dst, count, nccl_dtype(dt), nccl_op(op), s->comm,
                                         s->stream));
}

static bp_status nccl_broadcast(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                const void *src, void *dst, size_t bytes, int32_t root)
{
    nccl_state *s = comm;
    bp_status st = nccl_heads(s, rec, all, "bp_broadcast");
    if (st != BP_OK)
        return st;
    return nccl_finish(s, "ncclBroadcast",
                       s->api.broadcast(src, dst, bytes, NCCL_UINT8, root, s->comm, s->stream));
}

static bp_status nccl_all_gather(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                 const void *src, void *dst, size_t bytes)
{
    nccl_state *s = comm;
    bp_status st = nccl_heads(s, rec, all, "bp_all_gather");
    if (st != BP_OK)
        return st;
    return nccl_finish(s, "ncclAllGather",
                       s->api.all_gather(src, dst, bytes, NCCL_UINT8, s->comm, s->stream));
}

static bp_status nccl_reduce_scatter(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                     const void *src, void *dst, size_t count, bp_dtype dt,
                                     bp_reduce_op op)
{
    nccl_state *s = comm;
    bp_status st = nccl_heads(s, rec, all, "bp_reduce_scatter");
    if (st != BP_OK)
        return st;
    return nccl_finish(s, "ncclReduceScatter",
                       s->api.reduce_scatter(src, dst, count, nccl_dtype(dt), nccl_op(op),
                                             s->comm, s->stream));
}

static bp_status nccl_barrier(void *comm, const bp_comm_record *rec, bp_comm_record *all)
{
    return nccl_heads(comm, rec, all, "bp_barrier");
}

static const bp_comm_engine nccl_engine = {
    .struct_size = sizeof(bp_comm_engine),
    .abi_major = BP_COMM_ENGINE_ABI_MAJOR,
    .abi_minor = BP_COMM_ENGINE_ABI_MINOR,
    .name = "nccl",
    .description = engine_description,
    .open = nccl_open,
    .close = nccl_close,
    .rank = nccl_rank,
    .size = nccl_size,
    .supports = nccl_supports,
    .all_reduce = nccl_all_reduce,
    .broadcast = nccl_broadcast,
    .all_gather = nccl_all_gather,
    .reduce_scatter = nccl_reduce_scatter,
    .barrier = nccl_barrier,
};

BP_PLUGIN_EXPORT const bp_comm_engine *bp_comm_engine_entry(void);
BP_PLUGIN_EXPORT const bp_comm_engine *bp_comm_engine_entry(void) { return &nccl_engine; }

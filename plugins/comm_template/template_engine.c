/* comm_template.so: the smallest collective engine, to copy when writing
 * your own (comm_engine.h is the whole ABI; README.md beside this file
 * walks through it).
 *
 * It spans one process: rank 0 of 1. Every collective is then a copy (the
 * op over one rank is that rank's value, the mean included), the records
 * of "every rank" are this rank's, so they always agree, and nothing ever
 * waits. A real engine keeps this shape and replaces the bodies: open joins
 * the job over its transport, each entry first exchanges the records (and
 * refuses a call on which the ranks disagree, having moved no data), then
 * moves the bytes, giving up after args->timeout_s without progress. */
#include <stdlib.h>
#include <string.h>

#include <backplane/comm_engine.h>

typedef struct tp_comm {
    bp_comm_engine_host host; /* the core's table: log and set_error */
} tp_comm;

static bp_status tp_open(const bp_comm_engine_host *host, const bp_comm_engine_args *args,
                         void **comm)
{
    *comm = NULL;
    if (args->memory_kind != BP_MEMORY_HOST) {
        host->set_error(host->host, "the template engine moves host memory only; this "
                                    "communicator's backend keeps its buffers elsewhere: use "
                                    "engine \"mpi\" (host) or \"nccl\" (cuda)");
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    tp_comm *c = calloc(1, sizeof *c);
    if (!c) {
        host->set_error(host->host, "out of memory opening the template engine");
        return BP_ERR_OUT_OF_MEMORY;
    }
    c->host = *host;
    /* args->mpi_comm names the processes to span; on one process there is
     * nothing to join. */
    c->host.log(c->host.host, BP_LOG_DEBUG, "template engine: one process, rank 0 of 1");
    *comm = c;
    return BP_OK;
}

static void tp_close(void *comm) { free(comm); }
static int32_t tp_rank(void *comm) { return 0; }
static int32_t tp_size(void *comm) { return 1; }

/* Every dtype and op: over one rank a reduction computes nothing. A real
 * engine says false where its transport cannot reduce a dtype (the core
 * then widens to one it can, as for NCCL's f16). */
static bool tp_supports(void *comm, bp_dtype dtype, int32_t op) { return true; }

/* The agreement step: every rank's record into `all`, in rank order. With
 * one rank the records cannot differ; a real engine returns BP_ERR_SHAPE
 * here, having copied every record to `all`, when any differs. */
static bp_status tp_agree(const bp_comm_record *rec, bp_comm_record *all)
{
    memcpy(&all[0], rec, sizeof *rec);
    return BP_OK;
}

static bp_status tp_all_reduce(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                               const void *src, void *dst, size_t count, bp_dtype dtype,
                               bp_reduce_op op)
{
    bp_status st = tp_agree(rec, all);
    if (st == BP_OK && count)
        memcpy(dst, src, count * bp_dtype_size(dtype)); /* op over one rank: its value */
    return st;
}

static bp_status tp_broadcast(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                              const void *src, void *dst, size_t bytes, int32_t root)
{
    bp_status st = tp_agree(rec, all);
    if (st == BP_OK && bytes)
        memcpy(dst, src, bytes); /* root is 0: the core checked it against size */
    return st;
}

static bp_status tp_all_gather(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                               const void *src, void *dst, size_t bytes)
{
    bp_status st = tp_agree(rec, all);
    if (st == BP_OK && bytes)
        memcpy(dst, src, bytes); /* size (1) blocks of bytes */
    return st;
}

static bp_status tp_reduce_scatter(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                   const void *src, void *dst, size_t count, bp_dtype dtype,
                                   bp_reduce_op op)
{
    bp_status st = tp_agree(rec, all);
    if (st == BP_OK && count)
        memcpy(dst, src, count * bp_dtype_size(dtype)); /* block `rank` (0) of one */
    return st;
}

static bp_status tp_barrier(void *comm, const bp_comm_record *rec, bp_comm_record *all)
{
    return tp_agree(rec, all);
}

BP_PLUGIN_EXPORT const bp_comm_engine *bp_comm_engine_entry(void); /* the one export */
BP_PLUGIN_EXPORT const bp_comm_engine *bp_comm_engine_entry(void)
{
    static const bp_comm_engine engine = {
        .struct_size = sizeof(bp_comm_engine),
        .abi_major = BP_COMM_ENGINE_ABI_MAJOR,
        .abi_minor = BP_COMM_ENGINE_ABI_MINOR,
        .name = "template", /* the file must be comm_template.so */
        .description = "one process (a template to copy)",
        .open = tp_open,
        .close = tp_close,
        .rank = tp_rank,
        .size = tp_size,
        .supports = tp_supports,
        .all_reduce = tp_all_reduce,
        .broadcast = tp_broadcast,
        .all_gather = tp_all_gather,
        .reduce_scatter = tp_reduce_scatter,
        .barrier = tp_barrier,
    };
    return &engine;
}

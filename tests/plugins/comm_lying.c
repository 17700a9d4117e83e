/* A collective engine (comm_lying.so) that reports the rank and size it is
 * told to in $BPT_LYING_RANK and $BPT_LYING_SIZE (default 0 and 1): a
 * defect bp_comm_create must refuse instead of sizing buffers by it. Told
 * the truth (rank 0 of 1) it is a working job of one process: every
 * collective copies src to dst. */
#include <stdlib.h>
#include <string.h>

#include <backplane/comm_engine.h>

static int state_token;

static int32_t from_env(const char *name, int32_t fallback)
{
    const char *v = getenv(name);
    return v && *v ? (int32_t)strtol(v, NULL, 10) : fallback;
}

static bp_status lying_open(const bp_comm_engine_host *host, const bp_comm_engine_args *args,
                            void **comm)
{
    (void)host;
    (void)args;
    *comm = &state_token;
    return BP_OK;
}
static void lying_close(void *comm) { (void)comm; }
static int32_t lying_rank(void *comm) { (void)comm; return from_env("BPT_LYING_RANK", 0); }
static int32_t lying_size(void *comm) { (void)comm; return from_env("BPT_LYING_SIZE", 1); }
static bool lying_supports(void *comm, bp_dtype dtype, int32_t op)
{
    (void)comm;
    (void)dtype;
    (void)op;
    return true;
}

static bp_status lying_all_reduce(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                  const void *src, void *dst, size_t count, bp_dtype dtype,
                                  bp_reduce_op op)
{
    (void)comm; (void)rec; (void)all; (void)op;
    if (count)
        memcpy(dst, src, count * bp_dtype_size(dtype));
    return BP_OK;
}
static bp_status lying_broadcast(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                 const void *src, void *dst, size_t bytes, int32_t root)
{
    (void)comm; (void)rec; (void)all; (void)root;
    if (bytes)
        memcpy(dst, src, bytes);
    return BP_OK;
}
static bp_status lying_all_gather(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                  const void *src, void *dst, size_t bytes)
{
    (void)comm; (void)rec; (void)all;
    if (bytes)
        memcpy(dst, src, bytes);
    return BP_OK;
}
static bp_status lying_reduce_scatter(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                      const void *src, void *dst, size_t count, bp_dtype dtype,
                                      bp_reduce_op op)
{
    return lying_all_reduce(comm, rec, all, src, dst, count, dtype, op);
}
static bp_status lying_barrier(void *comm, const bp_comm_record *rec, bp_comm_record *all)
{
    (void)comm; (void)rec; (void)all;
    return BP_OK;
}

static const bp_comm_engine engine = {
    .struct_size = sizeof(bp_comm_engine),
    .abi_major = BP_COMM_ENGINE_ABI_MAJOR,
    .abi_minor = BP_COMM_ENGINE_ABI_MINOR,
    .name = "lying",
    .description = "a test engine reporting the rank and size it is told to",
    .open = lying_open,
    .close = lying_close,
    .rank = lying_rank,
    .size = lying_size,
    .supports = lying_supports,
    .all_reduce = lying_all_reduce,
    .broadcast = lying_broadcast,
    .all_gather = lying_all_gather,
    .reduce_scatter = lying_reduce_scatter,
    .barrier = lying_barrier,
};

BP_PLUGIN_EXPORT const bp_comm_engine *bp_comm_engine_entry(void);
const bp_comm_engine *bp_comm_engine_entry(void) { return &engine; }

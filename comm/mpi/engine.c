/* The MPI engine (comm_mpi.so): collectives on host memory over the
 * system's MPI, written on MPI's point-to-point calls rather than its
 * collectives, for three reasons MPI_Allreduce cannot meet:
 *   - the order of a sum over ranks is fixed (rank order, reduce.c), so
 *     results are the same bits in every run; MPI leaves its order to the
 *     algorithm it picks, which changes with message size and rank count;
 *   - every wait has a deadline, so a missing rank is an error naming it;
 *   - every call starts by comparing what each rank was asked (job.c).
 *
 * Algorithms. A call whose data is small (at most FUSE_BYTES per message)
 * travels with its record: one round of messages in all. Larger calls
 * exchange records first, then:
 *   all_reduce      reduce-scatter then all-gather, each rank reducing one
 *                   part (the bandwidth-optimal pair, as MPI's and NCCL's
 *                   large-message algorithms): it receives its part from
 *                   every rank in blocks of BLOCK_BYTES, two blocks in
 *                   flight, and combines them in rank order;
 *   reduce_scatter  the first half of that;
 *   all_gather      every rank sends its tensor to every other;
 *   broadcast       the root sends to every other rank. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backplane/comm_engine.h"
#include "job.h"
#include "reduce.h"

#define TRY(expr)                   \
    do {                            \
        bp_status try_ = (expr);    \
        if (try_ != BP_OK)          \
            return try_;            \
    } while (0)

enum {
    FUSE_BYTES = 16 << 10,     /* data riding with the record */
    BLOCK_BYTES = 512 << 10    /* one block of a part being reduced */
};

static char engine_description[160];

static bp_status mpi_open(const bp_comm_engine_host *host, const bp_comm_engine_args *args,
                          void **out)
{
    *out = NULL;
    if (args->memory_kind != BP_MEMORY_HOST) {
        host->set_error(host->host, "the mpi engine moves host memory only (memory kind %d asked "
                        "for); the core stages device memory through the host",
                        (int)args->memory_kind);
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    job *j = NULL;
    bp_status st = job_join(host, args->mpi_comm, args->timeout_s, &j);
    if (st != BP_OK)
        return st;
    *out = j;
    return BP_OK;
}

static void mpi_close(void *comm) { job_leave(comm); }
static int32_t mpi_rank(void *comm) { return ((job *)comm)->rank; }
static int32_t mpi_size(void *comm) { return ((job *)comm)->size; }

static bool mpi_supports(void *comm, bp_dtype dtype, int32_t op)
{
    (void)comm;
    if (op < 0)
        return bp_dtype_valid((int)dtype);
    if (dtype == BP_BOOL)
        return false;
    if (op == BP_REDUCE_AVG)
        return bp_dtype_is_float(dtype);
    return op >= BP_REDUCE_SUM && op <= BP_REDUCE_AVG;
}

/* Element range [first, first + n) of part r when count elements are cut
 * into `size` parts as evenly as can be (the first count % size parts have
 * one more). */
static void part_of(size_t count, int size, int r, size_t *first, size_t *n)
{
    size_t base = count / (size_t)size, extra = count % (size_t)size;
    *n = base + ((size_t)r < extra);
    *first = (size_t)r * base + ((size_t)r < extra ? (size_t)r : extra);
}

/* ---- reduce-scatter --------------------------------------------------------------
 * Rank r reduces part r: src_of(k) is where peer k's data for part r starts
 * in k's buffer, mine is this rank's own copy of it; my_count elements land
 * at dst. The sender side sends, for each peer k, its part k (send_at[k],
 * send_count[k] elements) in blocks of the same size. */
typedef struct scatter_plan {
    const char *const *send_at;  /* per peer: the start of what it reduces, in src */
    const size_t *send_count;    /* per peer: elements */
    const void *mine;            /* this rank's contribution to its own part */
    size_t my_count;
    void *dst;                   /* my_count elements */
} scatter_plan;

/* One reduce-scatter's requests and buffers. Sender and receiver cut a part
 * into the same blocks of `block` elements. */
typedef struct scatter_call {
    size_t es, block;            /* bytes per element; elements per block */
    size_t my_blocks;            /* of the part this rank reduces */
    MPI_Request *sends;          /* every block this rank sends, ... */
    int *send_peer;              /* ... to whom */
    size_t n_sends;              /* posted */
    int *recv_peer;              /* size: k at k */
    const void **parts;          /* size: the operands of one block */
    char *scratch;               /* two slots of a block from every peer */
    MPI_Request *slots;          /* 2 * size: the receives into slot 0, then 1 */
} scatter_call;

static size_t blocks_of(size_t count, size_t block)
{
    return (count + block - 1) / block;
}

/* Elements in the block that starts at element b0 of count. */
static size_t block_len(size_t count, size_t b0, size_t block)
{
    return count - b0 < block ? count - b0 : block;
}

/* Scratch slot b % 2: a block from every peer, peer k's at k blocks in. */
static char *scatter_slot(const job *j, const scatter_call *c, size_t b)
{
    return c->scratch + (b % 2) * (size_t)j->size * c->block * c->es;
}

static bp_status scatter_alloc(job *j, const scatter_plan *pl, scatter_call *c)
{
    const int n = j->size;
    size_t n_sends = 0;
    for (int k = 0; k < n; k++)
        if (k != j->rank)
            n_sends += blocks_of(pl->send_count[k], c->block);
    c->sends = calloc(n_sends ? n_sends : 1, sizeof *c->sends);
    c->send_peer = calloc(n_sends ? n_sends : 1, sizeof *c->send_peer);
    c->recv_peer = calloc((size_t)n, sizeof *c->recv_peer);
    c->parts = calloc((size_t)n, sizeof *c->parts);
    /* two blocks in flight from each peer */
    size_t scratch_bytes = 2 * (size_t)n * c->block * c->es;
    c->scratch = c->my_blocks ? malloc(scratch_bytes) : NULL;
    if (c->sends && c->send_peer && c->recv_peer && c->parts && (!c->my_blocks || c->scratch))
        return BP_OK;
    free(c->sends);
    free(c->send_peer);
    free(c->recv_peer);
    free(c->parts);
    free(c->scratch);
    return job_error(j, BP_ERR_OUT_OF_MEMORY, "out of memory for the reduce-scatter's "
                     "buffers (%zu bytes of scratch)", scratch_bytes);
}

/* Everything this rank owes the others goes out at once; MPI moves it as
 * the receivers ask. */
static bp_status scatter_post_sends(job *j, const scatter_plan *pl, scatter_call *c)
{
    for (int k = 0; k < j->size; k++) {
        if (k == j->rank)
            continue;
        for (size_t b0 = 0; b0 < pl->send_count[k]; b0 += c->block) {
            size_t m = block_len(pl->send_count[k], b0, c->block);
            c->send_peer[c->n_sends] = k;
            int rc = MPI_Isend(pl->send_at[k] + b0 * c->es, (int)(m * c->es), MPI_BYTE, k,
                               JOB_TAG_SCATTER, j->comm, &c->sends[c->n_sends]);
            if (rc != MPI_SUCCESS)
                return job_mpi_error(j, "MPI_Isend of a block to reduce", rc);
            c->n_sends++;
        }
    }
    return BP_OK;
}

/* Receive block b from every peer into scratch slot b % 2. */
static bp_status scatter_post_block(job *j, const scatter_plan *pl, scatter_call *c, size_t b)
{
    const int n = j->size;
    size_t m = block_len(pl->my_count, b * c->block, c->block);
    char *slot = scatter_slot(j, c, b);
    MPI_Request *pending = c->slots + (b % 2) * (size_t)n;
    for (int k = 0; k < n; k++) {
        if (k == j->rank)
            continue;
        int rc = MPI_Irecv(slot + (size_t)k * c->block * c->es, (int)(m * c->es), MPI_BYTE, k,
                           JOB_TAG_SCATTER, j->comm, &pending[k]);
        if (rc != MPI_SUCCESS)
            return job_mpi_error(j, "MPI_Irecv of a block to reduce", rc);
    }
    return BP_OK;
}

/* Wait for block p from every peer and combine it with this rank's own, in
 * rank order, into dst. */
static bp_status scatter_reduce_block(job *j, const scatter_plan *pl, scatter_call *c, size_t p,
                                      bp_dtype dt, bp_reduce_op op)
{
    const int n = j->size;
    size_t b0 = p * c->block;
    size_t m = block_len(pl->my_count, b0, c->block);
    char *slot = scatter_slot(j, c, p);
    for (int k = 0; k < n; k++)
        c->recv_peer[k] = k;
    bp_status st = job_wait(j, c->slots + (p % 2) * (size_t)n, c->recv_peer, n,
                            "the blocks to reduce", NULL);
    if (st != BP_OK)
        return st;
    for (int k = 0; k < n; k++)
        c->parts[k] = k == j->rank ? (const char *)pl->mine + b0 * c->es
                                   : slot + (size_t)k * c->block * c->es;
    reduce_in_rank_order(dt, op, c->parts, n, (char *)pl->dst + b0 * c->es, m);
    return BP_OK;
}

/* After a failure whatever is still in flight may touch scratch: both go
 * to the job. Then everything else is freed. */
static void scatter_release(job *j, scatter_call *c, bp_status st)
{
    if (st != BP_OK) {
        if (c->slots)
            job_abandon(j, c->slots, 2 * j->size, c->scratch);
        else
            free(c->scratch);
        c->scratch = NULL;
        job_abandon(j, c->sends, (int)c->n_sends, NULL);
    }
    free(c->slots);
    free(c->sends);
    free(c->send_peer);
    free(c->recv_peer);
    free(c->parts);
    free(c->scratch);
}

static bp_status scatter_reduce(job *j, const scatter_plan *pl, bp_dtype dt, bp_reduce_op op)
{
    const int n = j->size;
    scatter_call c = {.es = bp_dtype_size(dt)};
    c.block = BLOCK_BYTES / c.es;
    c.my_blocks = blocks_of(pl->my_count, c.block);
    TRY(scatter_alloc(j, pl, &c));
    bp_status st = scatter_post_sends(j, pl, &c);
    c.slots = calloc(2 * (size_t)n, sizeof *c.slots);
    if (!c.slots && st == BP_OK)
        st = job_error(j, BP_ERR_OUT_OF_MEMORY, "out of memory for the reduce-scatter");
    /* null even when a send failed: the error path hands slots to job_abandon */
    for (int i = 0; c.slots && i < 2 * n; i++)
        c.slots[i] = MPI_REQUEST_NULL;
    /* post block b (if any), then finish block b - 1 while b travels */
    for (size_t b = 0; st == BP_OK && b < c.my_blocks + 1; b++) {
        if (b < c.my_blocks)
            st = scatter_post_block(j, pl, &c, b);
        if (st == BP_OK && b > 0)
            st = scatter_reduce_block(j, pl, &c, b - 1, dt, op);
    }
    if (st == BP_OK)
        st = job_wait(j, c.sends, c.send_peer, (int)c.n_sends,
                      "the blocks this rank sends to be reduced", NULL);
    scatter_release(j, &c, st);
    return st;
}

/* ---- the collectives ------------------------------------------------------------ */

static bp_status heads_only(job *j, const bp_comm_record *rec, bp_comm_record *all)
{
    return job_heads(j, rec, all, NULL, NULL, NULL, NULL);
}

static bp_status mpi_all_reduce(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                const void *src, void *dst, size_t count, bp_dtype dt,
                                bp_reduce_op op)
{
    job *j = comm;
    TRY(job_check(j, "bp_all_reduce"));
    const int n = j->size, me = j->rank;
    const size_t es = bp_dtype_size(dt), bytes = count * es;
    if (bytes <= FUSE_BYTES) {
        /* Everyone's tensor rides with its record; each rank reduces it all. */
        char *scratch = job_scratch(j, (size_t)n * bytes);
        if (!scratch)
            return BP_ERR_OUT_OF_MEMORY;
        for (int k = 0; k < n; k++) {
            j->payload[k] = src;
            j->payload_bytes[k] = bytes;
            j->incoming[k] = scratch + (size_t)k * bytes;
            j->incoming_bytes[k] = bytes;
        }
        TRY(job_heads(j, rec, all, j->payload, j->payload_bytes, j->incoming,
                      j->incoming_bytes));
        for (int k = 0; k < n; k++)
            j->parts[k] = k == me ? src : scratch + (size_t)k * bytes;
        reduce_in_rank_order(dt, op, j->parts, n, dst, count);
        return BP_OK;
    }
    TRY(heads_only(j, rec, all));
    /* Reduce-scatter: part r is reduced by rank r ... */
    const char **send_at = calloc((size_t)n, sizeof *send_at);
    size_t *send_count = calloc((size_t)n, sizeof *send_count);
    /* the all-gather's messages: a part from and to every peer, in pieces */
    size_t slots = 2 * (size_t)n * (size_t)job_pieces((count / (size_t)n + 1) * es);
    int *peer = calloc(slots, sizeof *peer);
    MPI_Request *reqs = calloc(slots, sizeof *reqs);
    if (!send_at || !send_count || !peer || !reqs) {
        free(send_at);
        free(send_count);
        free(peer);
        free(reqs);
        return job_error(j, BP_ERR_OUT_OF_MEMORY, "out of memory");
    }
    size_t my_first = 0, my_n = 0;
    for (int k = 0; k < n; k++) {
        size_t first, c;
        part_of(count, n, k, &first, &c);
        send_at[k] = (const char *)src + first * es;
        send_count[k] = c;
        if (k == me) {
            my_first = first;
            my_n = c;
        }
    }
    scatter_plan pl = {send_at, send_count, (const char *)src + my_first * es, my_n,
                       (char *)dst + my_first * es};
    bp_status st = scatter_reduce(j, &pl, dt, op);
    /* ... then every rank's reduced part goes to every other. */
    int r = 0;
    for (int k = 0; k < n && st == BP_OK; k++) {
        if (k == me)
            continue;
        size_t first, c;
        part_of(count, n, k, &first, &c);
        st = job_post(j, false, (char *)dst + first * es, c * es, k, JOB_TAG_GATHER, reqs, peer,
                      &r);
        if (st == BP_OK)
            st = job_post(j, true, (char *)dst + my_first * es, my_n * es, k, JOB_TAG_GATHER,
                          reqs, peer, &r);
    }
    if (st == BP_OK)
        st = job_wait(j, reqs, peer, r, "the reduced parts", NULL);
    else
        job_abandon(j, reqs, r, NULL);
    free(send_at);
    free(send_count);
    free(peer);
    free(reqs);
    return st;
}

static bp_status mpi_reduce_scatter(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                    const void *src, void *dst, size_t count, bp_dtype dt,
                                    bp_reduce_op op)
{
    job *j = comm;
    TRY(job_check(j, "bp_reduce_scatter"));
    const int n = j->size, me = j->rank;
    const size_t es = bp_dtype_size(dt), bytes = count * es;
    if (bytes <= FUSE_BYTES) {
        /* Each peer's block rides with the record sent to it. */
        char *scratch = job_scratch(j, (size_t)n * bytes);
        if (!scratch)
            return BP_ERR_OUT_OF_MEMORY;
        for (int k = 0; k < n; k++) {
            j->payload[k] = (const char *)src + (size_t)k * bytes;
            j->payload_bytes[k] = bytes;
            j->incoming[k] = scratch + (size_t)k * bytes;
            j->incoming_bytes[k] = bytes;
        }
        TRY(job_heads(j, rec, all, j->payload, j->payload_bytes, j->incoming,
                      j->incoming_bytes));
        for (int k = 0; k < n; k++)
            j->parts[k] = k == me ? (const char *)src + (size_t)me * bytes
                                  : scratch + (size_t)k * bytes;
        reduce_in_rank_order(dt, op, j->parts, n, dst, count);
        return BP_OK;
    }
    TRY(heads_only(j, rec, all));
    const char **send_at = calloc((size_t)n, sizeof *send_at);
    size_t *send_count = calloc((size_t)n, sizeof *send_count);
    if (!send_at || !send_count) {
        free(send_at);
        free(send_count);
        return job_error(j, BP_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int k = 0; k < n; k++) {
        send_at[k] = (const char *)src + (size_t)k * bytes;
        send_count[k] = count;
    }
    scatter_plan pl = {send_at, send_count, (const char *)src + (size_t)me * bytes, count, dst};
    bp_status st = scatter_reduce(j, &pl, dt, op);
    free(send_at);
    free(send_count);
    return st;
}

static bp_status mpi_all_gather(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                                const void *src, void *dst, size_t bytes)
{
    job *j = comm;
    TRY(job_check(j, "bp_all_gather"));
    const int n = j->size, me = j->rank;
    if (bytes)
        memcpy((char *)dst + (size_t)me * bytes, src, bytes);
    if (bytes <= FUSE_BYTES) {
        for (int k = 0; k < n; k++) {
            j->payload[k] = src;
            j->payload_bytes[k] = bytes;
            j->incoming[k] = (char *)dst + (size_t)k * bytes;
            j->incoming_bytes[k] = bytes;
        }
        return job_heads(j, rec, all, j->payload, j->payload_bytes, j->incoming,
                         j->incoming_bytes);
    }
    TRY(heads_only(j, rec, all));
    size_t slots = 2 * (size_t)n * (size_t)job_pieces(bytes);
    MPI_Request *reqs = calloc(slots, sizeof *reqs);
    int *peer = calloc(slots, sizeof *peer);
    if (!reqs || !peer) {
        free(reqs);
        free(peer);
        return job_error(j, BP_ERR_OUT_OF_MEMORY, "out of memory");
    }
    bp_status st = BP_OK;
    int r = 0;
    for (int k = 0; k < n && st == BP_OK; k++) {
        if (k == me)
            continue;
        st = job_post(j, false, (char *)dst + (size_t)k * bytes, bytes, k, JOB_TAG_GATHER, reqs,
                      peer, &r);
        if (st == BP_OK)
            st = job_post(j, true, src, bytes, k, JOB_TAG_GATHER, reqs, peer, &r);
    }
    if (st == BP_OK)
        st = job_wait(j, reqs, peer, r, "the tensors to gather", NULL);
    else
        job_abandon(j, reqs, r, NULL);
    free(reqs);
    free(peer);
    return st;
}

static bp_status mpi_broadcast(void *comm, const bp_comm_record *rec, bp_comm_record *all,
                               const void *src, void *dst, size_t bytes, int32_t root)
{
    job *j = comm;
    TRY(job_check(j, "bp_broadcast"));
    const int n = j->size, me = j->rank;
    if (me == root && bytes)
        memcpy(dst, src, bytes);
    if (bytes <= FUSE_BYTES) {
        for (int k = 0; k < n; k++) {
            j->payload[k] = src;
            j->payload_bytes[k] = me == root ? bytes : 0;
            j->incoming[k] = dst;
            j->incoming_bytes[k] = k == root && me != root ? bytes : 0;
        }
        return job_heads(j, rec, all, j->payload, j->payload_bytes, j->incoming,
                         j->incoming_bytes);
    }
    TRY(heads_only(j, rec, all));
    size_t slots = (size_t)n * (size_t)job_pieces(bytes);
    MPI_Request *reqs = calloc(slots, sizeof *reqs);
    int *peer = calloc(slots, sizeof *peer);
    if (!reqs || !peer) {
        free(reqs);
        free(peer);
        return job_error(j, BP_ERR_OUT_OF_MEMORY, "out of memory");
    }
    bp_status st = BP_OK;
    int r = 0;
    if (me == root) {
        for (int k = 0; k < n && st == BP_OK; k++)
            if (k != me)
                st = job_post(j, true, src, bytes, k, JOB_TAG_ROOT, reqs, peer, &r);
    } else {
        st = job_post(j, false, dst, bytes, root, JOB_TAG_ROOT, reqs, peer, &r);
    }
    if (st == BP_OK)
        st = job_wait(j, reqs, peer, r,
                      me == root ? "the broadcast this rank sends" : "the broadcast from the root",
                      NULL);
    else
        job_abandon(j, reqs, r, NULL);
    free(reqs);
    free(peer);
    return st;
}

static bp_status mpi_barrier(void *comm, const bp_comm_record *rec, bp_comm_record *all)
{
    job *j = comm;
    TRY(job_check(j, "bp_barrier"));
    return heads_only(j, rec, all);
}

static const bp_comm_engine mpi_engine = {
    .struct_size = sizeof(bp_comm_engine),
    .abi_major = BP_COMM_ENGINE_ABI_MAJOR,
    .abi_minor = BP_COMM_ENGINE_ABI_MINOR,
    .name = "mpi",
    .description = engine_description,
    .open = mpi_open,
    .close = mpi_close,
    .rank = mpi_rank,
    .size = mpi_size,
    .supports = mpi_supports,
    .all_reduce = mpi_all_reduce,
    .broadcast = mpi_broadcast,
    .all_gather = mpi_all_gather,
    .reduce_scatter = mpi_reduce_scatter,
    .barrier = mpi_barrier,
};

BP_PLUGIN_EXPORT const bp_comm_engine *bp_comm_engine_entry(void);
BP_PLUGIN_EXPORT const bp_comm_engine *bp_comm_engine_entry(void)
{
    if (!engine_description[0])
        snprintf(engine_description, sizeof engine_description,
                 "collectives on host memory over %s, in a fixed order", job_mpi_version());
    return &mpi_engine;
}

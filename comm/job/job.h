/* The job's processes over MPI, as both engines use them: joining (MPI
 * initialised once per process, the communicator duplicated without ever
 * blocking past the timeout), the records every collective starts with, and
 * waiting for messages with a deadline that names the ranks still owed.
 *
 * Nothing here blocks in MPI: every wait polls nonblocking requests, so a
 * rank that never arrives becomes an error (with its rank) rather than a
 * hang. After such an error the job is failed: every later call returns the
 * first failure at once. */
#ifndef BP_COMM_JOB_H
#define BP_COMM_JOB_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "backplane/comm_engine.h"

/* Message tags on the job's own communicator. */
enum {
    JOB_TAG_HEAD = 1,     /* a record (and a small payload: job_heads) */
    JOB_TAG_SCATTER = 2,  /* blocks sent to the rank that reduces them */
    JOB_TAG_GATHER = 3,   /* reduced or gathered parts sent to every rank */
    JOB_TAG_ROOT = 4,     /* a broadcast's data */
    JOB_TAG_PAYLOAD = 5   /* a payload that follows its record (job_heads) */
};

typedef struct job {
    const bp_comm_engine_host *host;
    MPI_Comm comm;          /* our duplicate: errors return, never abort */
    int rank, size;
    double timeout_s;
    const char *fn;         /* the collective being run, for messages */
    bool failed;
    char failure[512];      /* why, once failed */
    int thread_level;       /* what MPI provides */
    /* Space every call reuses, sized at job_join (buf, spare and scratch
     * grow), so that a small collective allocates nothing. A failed call
     * hands what pending requests may still touch to the stranded list. */
    MPI_Request *reqs;      /* 3 * size */
    int *peers;             /* 3 * size */
    int *indices;           /* 3 * size, for MPI_Testsome */
    MPI_Status *statuses;   /* 3 * size */
    unsigned char *owed;    /* size */
    size_t *lens;           /* size: the payload each peer said it sends */
    char *buf;              /* the records (and payloads) this rank sends */
    size_t buf_cap;
    char *spare;            /* a record that came with an unexpected size */
    size_t spare_cap;
    /* for the engines: job_heads' per-peer arrays and a scratch buffer */
    const void **payload;   /* size each */
    size_t *payload_bytes;
    void **incoming;
    size_t *incoming_bytes;
    const void **parts;
    char *scratch;
    size_t scratch_cap;
    /* Requests a fault left behind: freed at job_leave, not before, with
     * the buffers they name (see job_wait). */
    MPI_Request *stranded;
    size_t n_stranded;
    void **stranded_memory;
    size_t n_stranded_memory;
} job;

/* Join the processes of *app_comm (NULL: MPI_COMM_WORLD), initialising MPI
 * if nobody has (then finalised at process exit). BP_OK with *out, or an
 * error with host->set_error() called. */
bp_status job_join(const bp_comm_engine_host *host, const void *app_comm, double timeout_s,
                   job **out);
void job_leave(job *j);

/* The MPI library's own name and version, e.g. "Open MPI v4.1.4". */
const char *job_mpi_version(void);

/* At least bytes of j->scratch (grown if need be), or NULL (error set). */
char *job_scratch(job *j, size_t bytes);

/* An error: set_error(fmt...) and return st. */
bp_status job_error(job *j, bp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The job is failed (every later call refuses), for the reason given,
 * which is also set as the entry's error. */
void job_fail(job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An MPI call failed: the message names the call and MPI's text. */
bp_status job_mpi_error(job *j, const char *call, int code);
/* If the job failed earlier: BP_ERR_BACKEND naming the first failure. */
bp_status job_check(job *j, const char *fn);

/* The start of every collective. Every rank sends its record to every other
 * rank, followed by payload[k] (payload_bytes[k] bytes, NULL arrays: none)
 * for peer k, and receives every peer's record into all[k] and its payload
 * into incoming[k] (incoming_bytes[k] expected). BP_OK when every record
 * equals rec; BP_ERR_SHAPE with all[] filled when any differs (payloads are
 * then meaningless); BP_ERR_BACKEND when a rank does not arrive in time.
 * On the wire a head is the record and the payload's length, with the
 * payload inside when the whole fits MPI's eager size (so that it arrives
 * in one message without a handshake), else in a message of its own. */
bp_status job_heads(job *j, const bp_comm_record *rec, bp_comm_record *all,
                    const void *const *payload, const size_t *payload_bytes,
                    void *const *incoming, const size_t *incoming_bytes);

/* Wait for n requests; peer[i] is the rank request i talks to. what says
 * what the requests are ("the reduced parts") for the timeout's message.
 * On a timeout or an MPI error the job fails, the requests still pending
 * are kept until job_leave (with `keep`, a buffer they may still touch:
 * freed then, not before; NULL for none) and the entry's error returned. */
bp_status job_wait(job *j, MPI_Request *reqs, const int *peer, int n, const char *what,
                   void *keep);

/* The root's bytes to every rank (MPI_Ibcast, with the deadline). */
bp_status job_share(job *j, void *buf, size_t bytes, int root, const char *what);

/* A message carries at most JOB_PIECE_BYTES (MPI counts are ints): a
 * transfer of more goes as consecutive pieces, cut alike by both sides. */
#define JOB_PIECE_BYTES ((size_t)1 << 30)
static inline int job_pieces(size_t bytes)
{
    return (int)((bytes + JOB_PIECE_BYTES - 1) / JOB_PIECE_BYTES);
}
/* Post the transfer of bytes at buf to (send) or from peer with tag, as
 * job_pieces(bytes) requests appended at reqs[*n] (peers[*n] = peer);
 * *n grows by those posted, also on failure (an MPI error: the job fails). */
bp_status job_post(job *j, bool send, const void *buf, size_t bytes, int peer, int tag,
                   MPI_Request *reqs, int *peers, int *n);

/* After a failure: requests that may still be pending are kept until
 * job_leave; if any was, the job is failed. `keep` (a buffer they may
 * touch, or NULL) is then kept as long, else freed. */
void job_abandon(job *j, MPI_Request *reqs, int n, void *keep);

#endif

/* The job's processes over MPI (job.h): joining, records, timed waits. */
#define _GNU_SOURCE
#include "job.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- time and patience ------------------------------------------------------ */

static double job_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Between polls that completed nothing: keep polling (each poll also moves
 * MPI's fragments along, and a message is usually microseconds away), then
 * give the core to the ranks it is shared with (mpirun --oversubscribe),
 * then, once the wait is long anyway, sleep, so that a rank waiting minutes
 * for a slow one does not burn its core. */
typedef struct patience {
    double start;       /* of the current wait for a completion */
    unsigned polls;     /* since then */
} patience;

enum { PATIENCE_SPIN_US = 2000, PATIENCE_YIELD_US = 100000 };

static void patience_reset(patience *p)
{
    p->start = job_now();
    p->polls = 0;
}

/* After a poll that completed nothing: true once timeout_s has passed
 * since the last completion. The clock is read every 32nd poll. */
static bool patience_idle(patience *p, double timeout_s)
{
    if (++p->polls % 32 != 0)
        return false;
    double waited = job_now() - p->start;
    if (waited > timeout_s)
        return true;
    if (waited * 1e6 < PATIENCE_SPIN_US)
        return false;
    if (waited * 1e6 < PATIENCE_YIELD_US) {
        sched_yield();
        return false;
    }
    struct timespec ts = {0, 200000}; /* 0.2 ms */
    nanosleep(&ts, NULL);
    return false;
}

/* ---- errors ------------------------------------------------------------------ */

/* Set once a communicator of this process failed (job_finalize_at_exit). */
static _Atomic double job_fault_timeout_s;

bp_status job_error(job *j, bp_status st, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    j->host->set_error(j->host->host, "%s", msg);
    return st;
}

void job_fail(job *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->failure, sizeof j->failure, fmt, ap);
    va_end(ap);
    j->failed = true;
    if (j->timeout_s > atomic_load(&job_fault_timeout_s))
        atomic_store(&job_fault_timeout_s, j->timeout_s);
    j->host->set_error(j->host->host, "%s", j->failure);
}

bp_status job_mpi_error(job *j, const char *call, int code)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", code);
    job_fail(j, "%s failed on rank %d: %s", call, j->rank, text);
    return BP_ERR_BACKEND;
}

bp_status job_check(job *j, const char *fn)
{
    j->fn = fn;
    if (!j->failed)
        return BP_OK;
    j->host->set_error(j->host->host,
                       "this communicator failed earlier and cannot be used again (%s); destroy "
                       "it with bp_comm_destroy",
                       j->failure);
    return BP_ERR_BACKEND;
}

/* ---- joining ----------------------------------------------------------------- */

static pthread_mutex_t job_init_lock = PTHREAD_MUTEX_INITIALIZER;

static void *job_exit_watchdog(void *arg)
{
    double s = *(const double *)arg;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
    fprintf(stderr, "backplane: MPI_Finalize still waits for a missing rank after %g s; "
                    "exiting without it (mpirun ends the job)\n", s);
    _exit(1);
    return NULL;
}

/* MPI initialised here ends here. After a fault, MPI_Finalize may wait for
 * a rank that is gone (Open MPI's finalize meets every process): the ranks
 * still alive reach it within their own timeout, so it gets that long (and
 * a little more); then the process leaves without it, and mpirun, seeing a
 * process end without MPI_Finalize, ends the job. */
static void job_finalize_at_exit(void)
{
    int done = 0;
    if (MPI_Finalized(&done) != MPI_SUCCESS || done)
        return;
    static double grace;
    grace = atomic_load(&job_fault_timeout_s);
    if (grace > 0) {
        grace += 5.0;
        pthread_t t;
        if (pthread_create(&t, NULL, job_exit_watchdog, &grace) == 0)
            pthread_detach(t);
    }
    MPI_Finalize();
}

static char job_version[MPI_MAX_LIBRARY_VERSION_STRING];
static pthread_once_t job_version_once = PTHREAD_ONCE_INIT;

static void job_read_version(void)
{
    /* MPI_Get_library_version may be called before MPI_Init. */
    int len = 0;
    MPI_Get_library_version(job_version, &len);
    job_version[strcspn(job_version, ",\n")] = '\0'; /* "Open MPI v4.1.4" */
}

const char *job_mpi_version(void)
{
    pthread_once(&job_version_once, job_read_version);
    return job_version;
}

/* MPI initialised, by the application or here (once per process). */
static bp_status job_init_mpi(job *j, bool app_comm)
{
    pthread_mutex_lock(&job_init_lock);
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    bp_status st = BP_OK;
    if (finalized) {
        st = job_error(j, BP_ERR_BACKEND,
                       "MPI was finalised earlier in this process and cannot be initialised "
                       "again; keep MPI initialised for the life of the job (call MPI_Finalize "
                       "only after the last bp_comm_destroy)");
    } else if (!inited && app_comm) {
        st = job_error(j, BP_ERR_INVALID_ARGUMENT,
                       "options->mpi_comm names an MPI communicator but MPI is not initialised; "
                       "call MPI_Init first (or leave mpi_comm NULL: backplane then initialises "
                       "MPI itself)");
    } else if (!inited) {
        int provided = 0;
        int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
        if (rc != MPI_SUCCESS)
            st = job_error(j, BP_ERR_BACKEND,
                           "MPI_Init_thread failed (code %d); run the program with mpirun, or "
                           "check that Open MPI works: mpirun -np 2 hostname",
                           rc);
        else
            atexit(job_finalize_at_exit); /* the engine is never unloaded */
    }
    pthread_mutex_unlock(&job_init_lock);
    if (st == BP_OK)
        MPI_Query_thread(&j->thread_level);
    return st;
}

bp_status job_join(const bp_comm_engine_host *host, const void *app_comm, double timeout_s,
                   job **out)
{
    *out = NULL;
    job *j = calloc(1, sizeof *j);
    if (!j) {
        host->set_error(host->host, "out of memory");
        return BP_ERR_OUT_OF_MEMORY;
    }
    j->host = host;
    j->timeout_s = timeout_s;
    j->comm = MPI_COMM_NULL;
    j->fn = "bp_comm_create";
    bp_status st = job_init_mpi(j, app_comm != NULL);
    if (st != BP_OK) {
        free(j);
        return st;
    }
    MPI_Comm base = app_comm ? *(const MPI_Comm *)app_comm : MPI_COMM_WORLD;
    if (base == MPI_COMM_NULL) {
        free(j);
        host->set_error(host->host, "options->mpi_comm points to MPI_COMM_NULL; pass the address "
                        "of a valid communicator");
        return BP_ERR_INVALID_ARGUMENT;
    }
    /* A nonblocking duplicate: a process that never calls bp_comm_create
     * becomes a timeout here, not a hang. */
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Comm_idup(base, &j->comm, &req);
    if (rc != MPI_SUCCESS) {
        st = job_mpi_error(j, "MPI_Comm_idup", rc);
        free(j);
        return st;
    }
    patience p;
    patience_reset(&p);
    int done = 0;
    while (!done) {
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            st = job_mpi_error(j, "MPI_Comm_idup", rc);
            free(j);
            return st;
        }
        if (done)
            break;
        if (patience_idle(&p, timeout_s)) {
            int size = 0, rank = 0;
            MPI_Comm_size(base, &size);
            MPI_Comm_rank(base, &rank);
            host->set_error(host->host,
                            "not every one of the %d processes called bp_comm_create within %g s "
                            "([comm] timeout_s; this is rank %d): one may have exited, crashed or "
                            "be busy elsewhere",
                            size, timeout_s, rank);
            /* The pending duplicate cannot be cancelled: it is left to MPI. */
            free(j);
            return BP_ERR_BACKEND;
        }
    }
    MPI_Comm_set_errhandler(j->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(j->comm, &j->rank);
    MPI_Comm_size(j->comm, &j->size);
    size_t n = (size_t)j->size;
    j->reqs = calloc(3 * n, sizeof *j->reqs);
    j->peers = calloc(3 * n, sizeof *j->peers);
    j->indices = calloc(3 * n, sizeof *j->indices);
    j->statuses = calloc(3 * n, sizeof *j->statuses);
    j->owed = calloc(n, 1);
    j->lens = calloc(n, sizeof *j->lens);
    j->payload = calloc(n, sizeof *j->payload);
    j->payload_bytes = calloc(n, sizeof *j->payload_bytes);
    j->incoming = calloc(n, sizeof *j->incoming);
    j->incoming_bytes = calloc(n, sizeof *j->incoming_bytes);
    j->parts = calloc(n, sizeof *j->parts);
    if (!j->reqs || !j->peers || !j->indices || !j->statuses || !j->owed || !j->lens ||
        !j->payload ||
        !j->payload_bytes || !j->incoming || !j->incoming_bytes || !j->parts) {
        job_leave(j);
        host->set_error(host->host, "out of memory");
        return BP_ERR_OUT_OF_MEMORY;
    }
    *out = j;
    return BP_OK;
}

char *job_scratch(job *j, size_t bytes)
{
    if (bytes <= j->scratch_cap && j->scratch)
        return j->scratch;
    char *grown = realloc(j->scratch, bytes ? bytes : 1);
    if (!grown) {
        job_error(j, BP_ERR_OUT_OF_MEMORY, "out of memory (%zu bytes of scratch)", bytes);
        return NULL;
    }
    j->scratch = grown;
    j->scratch_cap = bytes;
    return grown;
}

void job_leave(job *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n_stranded; i++) {
        if (j->stranded[i] == MPI_REQUEST_NULL)
            continue;
        MPI_Cancel(&j->stranded[i]);
        int done = 0;
        MPI_Test(&j->stranded[i], &done, MPI_STATUS_IGNORE);
        if (!done)
            MPI_Request_free(&j->stranded[i]);
    }
    free(j->stranded);
    for (size_t i = 0; i < j->n_stranded_memory; i++)
        free(j->stranded_memory[i]);
    free(j->stranded_memory);
    if (j->comm != MPI_COMM_NULL)
        MPI_Comm_free(&j->comm);
    free(j->reqs);
    free(j->peers);
    free(j->indices);
    free(j->statuses);
    free(j->owed);
    free(j->lens);
    free(j->buf);
    free(j->spare);
    free(j->payload);
    free(j->payload_bytes);
    free(j->incoming);
    free(j->incoming_bytes);
    free(j->parts);
    free(j->scratch);
    free(j);
}

/* ---- waiting ----------------------------------------------------------------- */

/* "rank 2", "ranks 1, 3" for the ranks whose flag is set. */
static void job_rank_list(const job *j, const unsigned char *owed, char *buf, size_t cap)
{
    int n = 0;
    for (int k = 0; k < j->size; k++)
        n += owed[k] != 0;
    size_t used = (size_t)snprintf(buf, cap, "%s", n == 1 ? "rank " : "ranks ");
    int listed = 0;
    for (int k = 0; k < j->size && used < cap; k++) {
        if (!owed[k])
            continue;
        if (listed == 8) {
            snprintf(buf + used, cap - used, " and %d more", n - listed);
            return;
        }
        used += (size_t)snprintf(buf + used, cap - used, listed ? ", %d" : "%d", k);
        listed++;
    }
}

/* Keep what a failed call leaves pending until job_leave (the array's
 * entries become MPI_REQUEST_NULL), with a buffer they may still touch. */
static void job_strand(job *j, MPI_Request *reqs, int n, void *keep)
{
    size_t live = 0;
    for (int i = 0; i < n; i++)
        live += reqs[i] != MPI_REQUEST_NULL;
    MPI_Request *grown = live ? realloc(j->stranded, (j->n_stranded + live) * sizeof *grown) : NULL;
    if (grown)
        j->stranded = grown;
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        if (grown)
            j->stranded[j->n_stranded++] = reqs[i];
        /* else left to MPI: without memory it cannot be cancelled later */
        reqs[i] = MPI_REQUEST_NULL;
    }
    if (!keep)
        return;
    void **mem = realloc(j->stranded_memory, (j->n_stranded_memory + 1) * sizeof *mem);
    if (mem) {
        j->stranded_memory = mem;
        j->stranded_memory[j->n_stranded_memory++] = keep;
    } /* else leaked on purpose: MPI may still write into it */
}

void job_abandon(job *j, MPI_Request *reqs, int n, void *keep)
{
    bool live = false;
    for (int i = 0; i < n && !live; i++)
        live = reqs[i] != MPI_REQUEST_NULL;
    if (live && !j->failed) {
        job_fail(j, "a collective was abandoned half-way on rank %d", j->rank);
    }
    /* a failed job's buffers may still be written by requests stranded
     * earlier in the same call: kept too */
    job_strand(j, reqs, n, j->failed ? keep : NULL);
    if (!j->failed)
        free(keep);
}

/* job_wait; with `arrival`, requests whose peer has not called the
 * collective at all (its record): the timeout's message says so. With
 * sts_out (n entries), every request's status is kept there, errors in
 * status included (a truncated record is the caller's to judge). */
static bp_status job_wait_as(job *j, MPI_Request *reqs, const int *peer, int n, const char *what,
                             void *keep, bool arrival, MPI_Status *sts_out)
{
    if (n == 0)
        return BP_OK;
    int flag = 0;
    if (!sts_out && MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS && flag)
        return BP_OK; /* the common case of small messages: done already */
    bool own = n > 2 * j->size; /* the job's arrays hold 3 * size: sts_out may use the last */
    int *done = own ? malloc((size_t)n * sizeof *done) : j->indices;
    MPI_Status *sts = own ? malloc((size_t)n * sizeof *sts) : j->statuses;
    if (!done || !sts) {
        if (own) {
            free(done);
            free(sts);
        }
        /* No memory to poll with: the requests cannot be waited for safely. */
        job_strand(j, reqs, n, keep);
        job_fail(j, "out of memory while waiting for %s", what);
        return BP_ERR_OUT_OF_MEMORY;
    }
    patience p;
    patience_reset(&p);
    bp_status st = BP_OK;
    for (;;) {
        int count = 0;
        int rc = MPI_Testsome(n, reqs, &count, done, sts);
        if (sts_out && count != MPI_UNDEFINED) {
            for (int i = 0; i < count; i++)
                sts_out[done[i]] = sts[i];
            if (rc == MPI_ERR_IN_STATUS)
                rc = MPI_SUCCESS; /* judged by the caller */
        }
        if (rc != MPI_SUCCESS) {
            int code = rc;
            int bad = 0;
            for (int i = 0; rc == MPI_ERR_IN_STATUS && i < count; i++) {
                if (sts[i].MPI_ERROR != MPI_SUCCESS) {
                    code = sts[i].MPI_ERROR;
                    bad = done[i];
                    break;
                }
            }
            char call[128];
            snprintf(call, sizeof call, "exchanging %s with rank %d", what, peer[bad]);
            job_strand(j, reqs, n, keep);
            st = job_mpi_error(j, call, code);
            break;
        }
        if (count == MPI_UNDEFINED)
            break; /* all complete */
        if (count > 0) {
            patience_reset(&p);
            continue;
        }
        if (patience_idle(&p, j->timeout_s)) {
            char ranks[160];
            memset(j->owed, 0, (size_t)j->size);
            for (int i = 0; i < n; i++)
                if (reqs[i] != MPI_REQUEST_NULL)
                    j->owed[peer[i]] = 1;
            int n_owed = 0;
            for (int k = 0; k < j->size; k++)
                n_owed += j->owed[k];
            job_rank_list(j, j->owed, ranks, sizeof ranks);
            job_strand(j, reqs, n, keep);
            if (arrival)
                job_fail(j,
                         "%s did not arrive within %g s ([comm] timeout_s): %s not called this "
                         "collective (it may have exited, crashed, or be stuck before the call)",
                         ranks, j->timeout_s, n_owed == 1 ? "it has" : "they have");
            else
                job_fail(j,
                         "%s stopped answering: nothing of %s moved for %g s ([comm] "
                         "timeout_s); it may have exited or crashed",
                         ranks, what, j->timeout_s);
            st = BP_ERR_BACKEND;
            break;
        }
    }
    if (own) {
        free(done);
        free(sts);
    }
    return st;
}

bp_status job_wait(job *j, MPI_Request *reqs, const int *peer, int n, const char *what,
                   void *keep)
{
    return job_wait_as(j, reqs, peer, n, what, keep, false, NULL);
}

bp_status job_post(job *j, bool send, const void *buf, size_t bytes, int peer, int tag,
                   MPI_Request *reqs, int *peers, int *n)
{
    for (size_t at = 0; at < bytes; at += JOB_PIECE_BYTES) {
        size_t piece = bytes - at < JOB_PIECE_BYTES ? bytes - at : JOB_PIECE_BYTES;
        int rc = send ? MPI_Isend((const char *)buf + at, (int)piece, MPI_BYTE, peer, tag,
                                  j->comm, &reqs[*n])
                      : MPI_Irecv((char *)buf + at, (int)piece, MPI_BYTE, peer, tag, j->comm,
                                  &reqs[*n]);
        if (rc != MPI_SUCCESS)
            return job_mpi_error(j, send ? "MPI_Isend" : "MPI_Irecv", rc);
        peers[(*n)++] = peer;
    }
    return BP_OK;
}

bp_status job_share(job *j, void *buf, size_t bytes, int root, const char *what)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, j->comm, &req);
    if (rc != MPI_SUCCESS)
        return job_mpi_error(j, "MPI_Ibcast", rc);
    /* every rank takes part: a rank that does not is named as owed by the root */
    int peer = root;
    return job_wait(j, &req, &peer, 1, what, NULL);
}

/* ---- the records every collective starts with ------------------------------- */

static bool job_record_equal(const bp_comm_record *a, const bp_comm_record *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* A peer whose message had another size than this rank expects was asked
 * something else; its record says what, unless (a defect) it equals ours:
 * then it is made to differ, so that no rank goes on to move data. */
static void job_mark_unequal(bp_comm_record *theirs, const bp_comm_record *mine)
{
    if (job_record_equal(theirs, mine))
        theirs->seq = ~theirs->seq;
}

/* At least bytes in *buf (grown if need be). */
static bool job_grow(char **buf, size_t *cap, size_t bytes)
{
    if (*buf && bytes <= *cap)
        return true;
    char *grown = realloc(*buf, bytes ? bytes : 1);
    if (!grown)
        return false;
    *buf = grown;
    *cap = bytes;
    return true;
}

/* A head: the record, then the payload's length, then (inline) the payload. */
typedef struct job_head {
    bp_comm_record rec;
    uint64_t len;
} job_head;

/* The largest message sent without a handshake by Open MPI's shared-memory
 * transport (btl_vader_eager_limit): a head and payload up to this size go
 * as one message, a larger payload as a second one (both eager up to it). */
enum { JOB_INLINE_BYTES = 4096 };

/* Whether a payload of len bytes travels inside its head. */
static bool head_holds(uint64_t len)
{
    return sizeof(job_head) + len <= JOB_INLINE_BYTES;
}

/* The size of the message that carries a head with a payload of len bytes. */
static size_t head_bytes(size_t len)
{
    return sizeof(job_head) + (head_holds(len) ? len : 0);
}

/* One call of job_heads, as this rank sees it. The job's arrays hold 3n
 * requests: receives (and then the payloads that follow heads) in the
 * first n, sends (a head and perhaps a payload per peer) in the other 2n. */
typedef struct heads_call {
    const bp_comm_record *rec;
    const void *const *payload;     /* NULL: none */
    const size_t *payload_bytes;
    void *const *incoming;          /* NULL: none */
    const size_t *incoming_bytes;
    char *out_area, *in_area;       /* in j->buf: the heads sent, received */
    char **in_slots;                /* per peer: where its head lands */
    MPI_Request *recvs, *sends;
    int *recv_peer, *send_peer;
    int n_recvs, n_sends;
    MPI_Status *sts;                /* the receives' statuses */
    MPI_Request *fetch;             /* payloads that follow their heads */
    int *fetch_peer;
    int n_fetch;
    size_t spare_total;             /* bytes of payloads of a call that differs */
} heads_call;

/* Up to this many ranks, in_slots lives on job_heads' stack. */
enum { HEADS_SLOTS_ON_STACK = 64 };

static size_t heads_sent(const heads_call *c, int k)
{
    return c->payload ? c->payload_bytes[k] : 0;
}

static size_t heads_expected(const heads_call *c, int k)
{
    return c->incoming ? c->incoming_bytes[k] : 0;
}

/* Where heads go and come from: one slot per peer each way in j->buf, with
 * room for the payload when it travels inside (this rank's view of the
 * call); every request null. in_slot: HEADS_SLOTS_ON_STACK entries. */
static bp_status heads_lay_out(job *j, heads_call *c, char **in_slot)
{
    const int n = j->size, me = j->rank;
    size_t out_total = 0, in_total = 0;
    for (int k = 0; k < n; k++) {
        if (k == me)
            continue;
        out_total += head_bytes(heads_sent(c, k));
        in_total += head_bytes(heads_expected(c, k));
    }
    if (!job_grow(&j->buf, &j->buf_cap, out_total + in_total))
        return job_error(j, BP_ERR_OUT_OF_MEMORY, "out of memory for the records of the call");
    c->out_area = j->buf;
    c->in_area = j->buf + out_total;
    for (int i = 0; i < 3 * n; i++)
        j->reqs[i] = MPI_REQUEST_NULL;
    c->recvs = j->reqs;
    c->sends = j->reqs + n;
    c->recv_peer = j->peers;
    c->send_peer = j->peers + n;
    c->sts = j->statuses + 2 * n;
    c->fetch = j->reqs; /* once the receives are done, their slots are free */
    c->fetch_peer = j->peers;
    c->in_slots = n <= HEADS_SLOTS_ON_STACK ? in_slot : malloc((size_t)n * sizeof *c->in_slots);
    if (!c->in_slots)
        return job_error(j, BP_ERR_OUT_OF_MEMORY, "out of memory for the records of the call");
    return BP_OK;
}

/* Receives first, sized as this rank expects: a head of another size is a
 * call that differs (and is truncated, or short; its record, at the front,
 * is read either way: heads_read_one). */
static bp_status heads_post_receives(job *j, heads_call *c)
{
    size_t at = 0;
    for (int k = 0; k < j->size; k++) {
        if (k == j->rank)
            continue;
        size_t bytes = head_bytes(heads_expected(c, k));
        c->in_slots[k] = c->in_area + at;
        at += bytes;
        c->recv_peer[c->n_recvs] = k;
        int rc = MPI_Irecv(c->in_slots[k], (int)bytes, MPI_BYTE, k, JOB_TAG_HEAD, j->comm,
                           &c->recvs[c->n_recvs]);
        if (rc != MPI_SUCCESS)
            return job_mpi_error(j, "MPI_Irecv of a record", rc);
        c->n_recvs++;
    }
    return BP_OK;
}

/* Write the head for a payload of len bytes at `at`, with the payload
 * inside when it fits; its message's size. */
static size_t head_pack(char *at, const bp_comm_record *rec, const void *payload, size_t len)
{
    job_head h;
    memset(&h, 0, sizeof h);
    h.rec = *rec;
    h.len = len;
    memcpy(at, &h, sizeof h);
    if (head_holds(len) && len)
        memcpy(at + sizeof h, payload, len);
    return head_bytes(len);
}

static int heads_isend(job *j, heads_call *c, const void *buf, size_t bytes, int k, int tag)
{
    c->send_peer[c->n_sends] = k;
    int rc = MPI_Isend(buf, (int)bytes, MPI_BYTE, k, tag, j->comm, &c->sends[c->n_sends]);
    if (rc == MPI_SUCCESS)
        c->n_sends++;
    return rc;
}

/* ... then this rank's heads, each with its payload inside when small, else
 * followed by it. */
static bp_status heads_post_sends(job *j, heads_call *c)
{
    size_t at = 0;
    for (int k = 0; k < j->size; k++) {
        if (k == j->rank)
            continue;
        size_t pb = heads_sent(c, k);
        char *head = c->out_area + at;
        size_t bytes = head_pack(head, c->rec, pb ? c->payload[k] : NULL, pb);
        at += bytes;
        int rc = heads_isend(j, c, head, bytes, k, JOB_TAG_HEAD);
        if (rc == MPI_SUCCESS && pb > 0 && !head_holds(pb))
            rc = heads_isend(j, c, c->payload[k], pb, k, JOB_TAG_PAYLOAD);
        if (rc != MPI_SUCCESS)
            return job_mpi_error(j, "MPI_Isend of this rank's record", rc);
    }
    return BP_OK;
}

/* The bytes a head arrived with, -1 when longer than this rank's slot
 * (another call), or an MPI error. */
static bp_status heads_received_bytes(job *j, const MPI_Status *s, int *count)
{
    *count = 0;
    if (s->MPI_ERROR == MPI_ERR_TRUNCATE) {
        *count = -1;
        return BP_OK;
    }
    if (s->MPI_ERROR != MPI_SUCCESS)
        return job_mpi_error(j, "receiving a record", s->MPI_ERROR);
    MPI_Get_count(s, MPI_BYTE, count);
    return BP_OK;
}

/* Peer k sends its payload (len bytes) in a message of its own: take it,
 * into incoming[k] when its head was as expected, else (a call that
 * differs) into spare, posted once every head is read (heads_drop_spare). */
static bp_status heads_fetch(job *j, heads_call *c, int k, bool as_expected, size_t len)
{
    c->fetch_peer[c->n_fetch] = k;
    if (!as_expected) {
        c->spare_total += len;
        c->fetch[c->n_fetch++] = MPI_REQUEST_NULL;
        return BP_OK;
    }
    int rc = MPI_Irecv(c->incoming[k], (int)len, MPI_BYTE, k, JOB_TAG_PAYLOAD, j->comm,
                       &c->fetch[c->n_fetch]);
    if (rc != MPI_SUCCESS)
        return job_mpi_error(j, "MPI_Irecv of a payload", rc);
    c->n_fetch++;
    return BP_OK;
}

/* Receive i's head: its record into all[k], its length into j->lens[k].
 * A head of another size or length than this rank expects is a call that
 * differs (its record marked unequal); one as expected hands over its
 * payload, copied from inside or fetched. */
static bp_status heads_read_one(job *j, heads_call *c, int i, bp_comm_record *all)
{
    const size_t hs = sizeof(job_head);
    int k = c->recv_peer[i];
    int count = 0;
    bp_status st = heads_received_bytes(j, &c->sts[i], &count);
    if (st != BP_OK)
        return st;
    size_t want = heads_expected(c, k);
    job_head h;
    memset(&h, 0, sizeof h);
    if (count < 0 || (size_t)count >= hs)
        memcpy(&h, c->in_slots[k], hs);
    all[k] = h.rec;
    j->lens[k] = (size_t)h.len;
    /* (an equal length also means both sides agree whether it is inside) */
    bool as_expected = count >= 0 && h.len == want && (size_t)count == head_bytes(want);
    if (!as_expected)
        job_mark_unequal(&all[k], c->rec);
    if (as_expected && head_holds(want) && want)
        memcpy(c->incoming[k], c->in_slots[k] + hs, want);
    if (h.len > 0 && !head_holds(h.len))
        return heads_fetch(j, c, k, as_expected, (size_t)h.len);
    return BP_OK;
}

static bp_status heads_read(job *j, heads_call *c, bp_comm_record *all)
{
    for (int i = 0; i < c->n_recvs; i++) {
        bp_status st = heads_read_one(j, c, i, all);
        if (st != BP_OK)
            return st;
    }
    return BP_OK;
}

/* Payloads of a call that differs: received (and dropped), never left
 * behind to meet a later call. */
static bp_status heads_drop_spare(job *j, heads_call *c)
{
    if (!job_grow(&j->spare, &j->spare_cap, c->spare_total)) {
        job_fail(j, "out of memory receiving a payload that differs");
        return BP_ERR_OUT_OF_MEMORY;
    }
    size_t off = 0;
    for (int i = 0; i < c->n_fetch; i++) {
        if (c->fetch[i] != MPI_REQUEST_NULL)
            continue;
        int k = c->fetch_peer[i];
        int rc = MPI_Irecv(j->spare + off, (int)j->lens[k], MPI_BYTE, k, JOB_TAG_PAYLOAD, j->comm,
                           &c->fetch[i]);
        off += j->lens[k];
        if (rc != MPI_SUCCESS)
            return job_mpi_error(j, "MPI_Irecv of a payload", rc);
    }
    return BP_OK;
}

/* After a failure: what is still in flight may touch the buffers, so they
 * go with the job. */
static void heads_abandon(job *j, const heads_call *c)
{
    job_abandon(j, j->reqs, 3 * j->size, j->buf);
    j->buf = NULL;
    j->buf_cap = 0;
    if (c->spare_total > 0) {
        job_abandon(j, j->reqs, 0, j->spare);
        j->spare = NULL;
        j->spare_cap = 0;
    }
}

bp_status job_heads(job *j, const bp_comm_record *rec, bp_comm_record *all,
                    const void *const *payload, const size_t *payload_bytes,
                    void *const *incoming, const size_t *incoming_bytes)
{
    all[j->rank] = *rec;
    if (j->size == 1)
        return BP_OK;
    heads_call c = {.rec = rec,
                    .payload = payload,
                    .payload_bytes = payload_bytes,
                    .incoming = incoming,
                    .incoming_bytes = incoming_bytes};
    char *in_slot[HEADS_SLOTS_ON_STACK];
    bp_status st = heads_lay_out(j, &c, in_slot);
    if (st != BP_OK)
        return st;
    st = heads_post_receives(j, &c);
    if (st == BP_OK)
        st = heads_post_sends(j, &c);
    if (st == BP_OK)
        st = job_wait_as(j, c.recvs, c.recv_peer, c.n_recvs, "the records", NULL, true, c.sts);
    if (st == BP_OK)
        st = heads_read(j, &c, all);
    if (st == BP_OK && c.spare_total > 0)
        st = heads_drop_spare(j, &c);
    if (st == BP_OK)
        st = job_wait(j, c.fetch, c.fetch_peer, c.n_fetch, "the data that follows a record", NULL);
    if (st == BP_OK)
        st = job_wait(j, c.sends, c.send_peer, c.n_sends, "this rank's record", NULL);
    if (c.in_slots != in_slot)
        free(c.in_slots);
    if (st != BP_OK) {
        heads_abandon(j, &c);
        return st;
    }
    for (int k = 0; k < j->size; k++)
        if (!job_record_equal(&all[k], rec))
            return BP_ERR_SHAPE;
    return BP_OK;
}

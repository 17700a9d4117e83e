/* fuzz_comm: the collectives of comm.h on a job of one process.
 *
 * Each input drives up to FC_STEPS calls over a context, its binary and
 * blas_cpu backends, FC_COMMS communicator slots and FC_SLOTS tensor slots:
 * bp_comm_create with fuzzed options (engine names good, missing, invalid
 * and unusable for host memory; struct_size, timeouts; NULL backend or out;
 * a graph's recording backend), every collective (bp_all_reduce,
 * bp_broadcast, bp_all_gather, bp_reduce_scatter, bp_barrier) with every
 * dtype, ranks 0..8, empty and absurd extents, any op, root and axis, NULL
 * communicators, tensors and outs, tensors of the other backend, symbolic
 * tensors of a graph, tensors given away by bp_backend_transfer, a
 * communicator destroyed, or its context destroyed while it lives on.
 *
 * The engines are the one-process ones built beside the harness
 * (FZ_COMM_ENGINE_DIR, named in the context's plugin_path):
 * comm_template.so (plugins/comm_template/, the engine users copy: rank 0 of
 * 1) and comm_lying.so (tests/plugins/comm_lying.c), which reports the rank
 * and size the harness sets in $BPT_LYING_RANK / $BPT_LYING_SIZE. The mpi
 * engine is never opened (MPI would be initialised in the fuzzing process):
 * where it is built, the calls that would pick it are not made.
 *
 * Oracles (a violation prints "fuzz oracle: ..." and traps):
 *  - every status is a known code; a failure comes with a fresh, non-empty
 *    bp_last_error() and leaves *out NULL;
 *  - the contract of comm.h, predicted by the harness: each fault of a call
 *    (NULL or given-away arguments, a symbolic tensor, the other backend, an
 *    op outside bp_reduce_op, bool, AVG of integers, a root outside the job,
 *    a scalar or an axis out of range for all_gather / reduce_scatter, an
 *    extent the ranks cannot share, a rank-8 tensor on an axis > 0, options
 *    too small, a timeout that is not a positive number, an engine name that
 *    is none, nccl for host memory, an engine that is not installed, an
 *    engine reporting a rank and size no job has) names the status it
 *    gives; a call with faults must fail with one of theirs, a call with
 *    none must succeed (out of memory aside);
 *  - an engine reporting a size outside 1..2^24 or a rank outside
 *    0..size-1 is refused with BP_ERR_PLUGIN naming the engine's file and
 *    what it reported;
 *  - a success has x's dtype, the documented shape (size times x's extent
 *    on the axis for all_gather, divided by size for reduce_scatter), lives
 *    on the communicator's backend, and on one process has the values a job
 *    of one must give: x's bytes, for every op (the sum, product, max, min
 *    and mean over one rank are that rank's value) and every collective;
 *  - bp_comm_rank / bp_comm_size are what the engine reported, -1 for NULL;
 *    bp_reduce_op_name names the five ops and says "?" for anything else;
 *  - after the last call every tensor is released, every communicator
 *    destroyed, and both backends report 0 bytes in use; nothing reached
 *    stdout; LeakSanitizer finds no leak.
 *
 * Decoding (fz_bytes.h): each call starts with a byte picking it, then reads
 * its own arguments; past the end every read gives 0. Seeds:
 * tests/fuzz/corpus/fuzz_comm, written by make_comm_seeds.py. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <backplane/backplane.h>

#include "fz_anchor.h"
#include "fz_bytes.h"
#include "fz_data.h"
#include "fz_oracle.h"

#define FC_SLOTS 8
#define FC_COMMS 2
#define FC_STEPS 40
#define FC_CAP_ELEMS 4096
#define FC_MAX_SIZE (1 << 24) /* the largest job bp_comm_create believes */
#define FC_GARBAGE ((void *)(uintptr_t)0x10)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fc_slot {
    bp_tensor *t;
    bool symbolic;
} fc_slot;

typedef struct fc_comm {
    bp_comm *c;
    bp_backend *be;    /* whose tensors it carries */
    int32_t rank, size;
    bool one;          /* a job of one process: results are x's bytes */
} fc_comm;

typedef struct fc_state {
    fz_in in;
    bp_context *ctx;   /* NULL once destroyed (its tensors and comms live on) */
    bp_backend *be[2]; /* binary, blas_cpu */
    bp_graph *graph;   /* for symbolic tensors, made when first needed */
    bp_backend *rec;   /* its recording backend */
    fc_comm comm[FC_COMMS];
    fc_slot slot[FC_SLOTS];
} fc_state;

static char fc_config[600];
static char fc_lying_path[600];
static bool fc_has_mpi; /* comm_mpi.so is installed: never let bp_comm_create pick it */

/* ---- set-up ------------------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *dir = fz_setup();
    snprintf(fc_config, sizeof fc_config, "%s/comm.ini", dir);
    FILE *f = fopen(fc_config, "w");
    if (!f || fprintf(f, "[backplane]\nlog_level = off\nplugin_path = %s\n[comm]\ntimeout_s = 7\n",
                      FZ_COMM_ENGINE_DIR) < 0 || fclose(f) != 0)
        fz_fail("cannot write %s", fc_config);
    snprintf(fc_lying_path, sizeof fc_lying_path, "%s/comm_lying.so", FZ_COMM_ENGINE_DIR);
    if (access(fc_lying_path, R_OK) != 0)
        fz_fail("the harness's engines are not built: %s", fc_lying_path);
    fz_anchor(dir);
    char mpi[700];
    const char *binary = fz_plugin_file("binary");
    const char *slash = strrchr(binary, '/');
    snprintf(mpi, sizeof mpi, "%.*s/comm_mpi.so", slash ? (int)(slash - binary) : 1,
             slash ? binary : ".");
    fc_has_mpi = access(mpi, F_OK) == 0;
    return 0;
}

/* ---- expected statuses --------------------------------------------------------- */

/* The statuses a call may fail with: one per fault found. Empty: it must
 * succeed. any: the harness cannot tell (it may succeed or fail). */
typedef struct fc_expect {
    bp_status allowed[8];
    const char *why[8];
    int n;
    bool any;
} fc_expect;

static void fc_fault(fc_expect *e, bp_status st, const char *why)
{
    if (e->n < 8) {
        e->allowed[e->n] = st;
        e->why[e->n++] = why;
        fz_trace("  expect %s: %s", bp_status_string(st), why);
    }
}

static void fc_check(const char *call, bp_status st, const fc_expect *e)
{
    fz_trace("  %s -> %s%s%s", call, bp_status_string(st), st ? ": " : "",
             st ? bp_last_error() : "");
    fz_status(call, st);
    if (e->any || st == BP_ERR_OUT_OF_MEMORY)
        return;
    if (st == BP_OK && e->n > 0)
        fz_fail("%s succeeded, but the contract says it fails with %s (%s)", call,
                bp_status_string(e->allowed[0]), e->why[0]);
    if (st != BP_OK && e->n == 0)
        fz_fail("%s refused a call the contract accepts: %s: %s", call, bp_status_string(st),
                bp_last_error());
    bool listed = st == BP_OK;
    for (int k = 0; k < e->n && !listed; k++)
        listed = e->allowed[k] == st;
    if (!listed)
        fz_fail("%s failed with %s, but its faults say %s (%s): %s", call, bp_status_string(st),
                bp_status_string(e->allowed[0]), e->why[0], bp_last_error());
}

/* ---- tensors ------------------------------------------------------------------- */

static void fc_slot_set(fc_state *s, int i, bp_tensor *t, bool symbolic)
{
    bp_tensor_release(s->slot[i].t);
    s->slot[i].t = t;
    s->slot[i].symbolic = symbolic;
}

static int fc_slot_pick(fc_state *s) { return (int)fz_pick(&s->in, FC_SLOTS); }

/* A shape: mostly small extents 0..5, sometimes the edges of fz_extent. */
static int32_t fc_shape(fc_state *s, int64_t *shape)
{
    static const int32_t ranks[] = {0, 1, 1, 2, 2, 2, 3, 3, 4, 7, 8};
    int32_t rank = ranks[fz_pick(&s->in, sizeof ranks / sizeof ranks[0])];
    for (int32_t k = 0; k < rank; k++) {
        uint8_t b = fz_u8(&s->in);
        shape[k] = b < 240 ? (int64_t)(b % 6) : fz_extent(&s->in);
    }
    return rank;
}

static void fc_act_make(fc_state *s)
{
    int dst = fc_slot_pick(s);
    bp_backend *be = s->be[fz_pick(&s->in, 2)];
    bp_dtype dt = (bp_dtype)fz_pick(&s->in, BP_DTYPE_COUNT);
    int64_t shape[BP_MAX_RANK], numel;
    int32_t rank = fc_shape(s, shape);
    if (!be || !fz_numel(rank, shape, bp_dtype_size(dt), &numel) || numel > FC_CAP_ELEMS)
        return; /* fuzz_api makes the tensors the library must refuse */
    void *data = fz_host_data(&s->in, (int)dt, numel);
    static _Alignas(64) unsigned char zeros[FC_CAP_ELEMS * 8];
    bp_tensor *t = FC_GARBAGE;
    fz_mark();
    bp_status st = bp_tensor_from_host(be, dt, rank, shape, data ? data : zeros, &t);
    fz_result("bp_tensor_from_host", st, t);
    /* a zero-element shape whose other extents overflow may be refused */
    if (st != BP_OK && st != BP_ERR_OUT_OF_MEMORY && st != BP_ERR_SHAPE)
        fz_fail("bp_tensor_from_host refused a small tensor: %s", bp_last_error());
    if (st == BP_OK)
        fc_slot_set(s, dst, t, false);
}

static void fc_act_symbolic(fc_state *s)
{
    int dst = fc_slot_pick(s);
    if (!s->graph) {
        if (!s->be[0])
            return;
        fz_mark();
        bp_status st = bp_graph_create(s->be[0], &s->graph);
        fz_status("bp_graph_create", st);
        if (st != BP_OK)
            return;
    }
    int64_t shape[BP_MAX_RANK], numel;
    int32_t rank = fc_shape(s, shape);
    bp_dtype dt = (bp_dtype)fz_pick(&s->in, BP_DTYPE_COUNT);
    if (!fz_numel(rank, shape, bp_dtype_size(dt), &numel) || numel > FC_CAP_ELEMS)
        return;
    bp_tensor *t = FC_GARBAGE;
    fz_mark();
    bp_status st = bp_graph_input(s->graph, dt, rank, shape, &t);
    fz_result("bp_graph_input", st, t);
    if (st == BP_OK) {
        s->rec = bp_tensor_backend(t);
        fc_slot_set(s, dst, t, true);
    }
}

/* A tensor given away (to the other backend, or its own): later calls must
 * refuse the handle. */
static void fc_act_transfer(fc_state *s)
{
    int src = fc_slot_pick(s), dst = fc_slot_pick(s);
    bp_backend *to = s->be[fz_pick(&s->in, 2)];
    if (!s->slot[src].t || s->slot[src].symbolic || !to || !bp_tensor_is_valid(s->slot[src].t))
        return;
    bp_tensor *out = FC_GARBAGE;
    fz_mark();
    bp_status st = bp_backend_transfer(s->slot[src].t, to, &out);
    fz_result("bp_backend_transfer", st, out);
    if (st == BP_OK && dst != src)
        fc_slot_set(s, dst, out, false);
    else
        bp_tensor_release(out);
}

/* x's bytes (nbytes of them, into a buffer to free), or NULL for none. */
static unsigned char *fc_bytes(const bp_tensor *t)
{
    size_t n = bp_tensor_nbytes(t);
    unsigned char *p = malloc(n ? n : 1);
    if (!p)
        fz_fail("out of memory in the harness");
    fz_mark();
    bp_status st = bp_tensor_to_host(t, p, n);
    fz_status("bp_tensor_to_host", st);
    if (st != BP_OK)
        fz_fail("bp_tensor_to_host of a live tensor failed: %s", bp_last_error());
    return p;
}

/* ---- communicators -------------------------------------------------------------- */

typedef struct fc_engine {
    const char *name;
    int kind; /* 0 template, 1 lying, 2 missing, 3 invalid name, 4 nccl, 5 default (mpi) */
} fc_engine;

static const fc_engine fc_engines[] = {
    {"template", 0}, {"template", 0}, {"lying", 1},  {"lying", 1}, {NULL, 5},
    {"mpi", 5},      {"nccl", 4},     {"nosuch", 2}, {"", 3},      {"Template", 3},
    {"../template", 3}, {"tem plate", 3}, {"comm_template", 2},
    {"abcdefghijklmnopqrstuvwxyz_1234", 2},  /* 31 characters: the longest name */
    {"abcdefghijklmnopqrstuvwxyz_12345", 3}, /* 32: too long */
};

/* (rank, size) the lying engine reports. */
static const int32_t fc_lies[][2] = {
    {0, 1}, {0, 1}, {0, 2}, {1, 3}, {2, 3}, {0, 0}, {0, -1}, {5, 2}, {2, 2}, {-1, 2},
    {0, INT32_MAX}, {0, FC_MAX_SIZE}, {FC_MAX_SIZE - 1, FC_MAX_SIZE}, {0, FC_MAX_SIZE + 1},
    {INT32_MIN, 1}, {1, 1},
};

static void fc_act_create(fc_state *s)
{
    int c = (int)fz_pick(&s->in, FC_COMMS);
    const fc_engine *eng = &fc_engines[fz_pick(&s->in, sizeof fc_engines / sizeof fc_engines[0])];
    const int32_t *lie = fc_lies[fz_pick(&s->in, sizeof fc_lies / sizeof fc_lies[0])];
    uint8_t which = fz_u8(&s->in);
    bp_backend *be = which % 8 < 3 ? s->be[0] : which % 8 < 6 ? s->be[1]
                     : which % 8 == 6 ? s->rec : NULL;
    static const double timeouts[] = {0.0, 1.0, 300.0, 1e-300, -1.0, -0.0, NAN, INFINITY, 1e300};
    double timeout = timeouts[fz_pick(&s->in, sizeof timeouts / sizeof timeouts[0])];
    static const uint32_t sizes[] = {sizeof(bp_comm_options), sizeof(bp_comm_options) + 24, 0, 4,
                                     offsetof(bp_comm_options, timeout_s)};
    uint32_t struct_size = sizes[fz_u8(&s->in) < 224 ? 0 : fz_pick(&s->in, 5)];
    uint8_t flags = fz_u8(&s->in);
    bool null_options = flags & 1, null_out = (flags & 0x70) == 0x70, app_comm = flags & 2;
    if (fc_has_mpi && eng->kind == 5)
        eng = &fc_engines[0]; /* MPI would start in the fuzzing process */
    if (fc_has_mpi)
        null_options = false; /* the same: NULL options pick the mpi engine */

    /* the options, in a buffer larger than the struct (struct_size may say more) */
    union {
        bp_comm_options o;
        unsigned char bytes[sizeof(bp_comm_options) + 32];
    } opt;
    memset(&opt, 0, sizeof opt);
    opt.o.struct_size = struct_size;
    opt.o.engine = eng->name;
    opt.o.mpi_comm = app_comm ? FC_GARBAGE : NULL; /* a one-process engine never reads it */
    opt.o.timeout_s = timeout;
    if (struct_size <= offsetof(bp_comm_options, timeout_s))
        opt.o.timeout_s = 0.0; /* beyond struct_size: never read (leave it harmless) */
    char lie_rank[16], lie_size[16];
    snprintf(lie_rank, sizeof lie_rank, "%d", (int)lie[0]);
    snprintf(lie_size, sizeof lie_size, "%d", (int)lie[1]);
    setenv("BPT_LYING_RANK", lie_rank, 1);
    setenv("BPT_LYING_SIZE", lie_size, 1);

    fc_expect e = {0};
    bool read_timeout = struct_size > offsetof(bp_comm_options, timeout_s);
    if (null_out)
        fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "out is NULL");
    if (!be)
        fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "backend is NULL");
    if (be && be == s->rec)
        fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "a graph's recording backend carries no data");
    if (!null_options) {
        if (struct_size < sizeof(bp_comm_options))
            fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "options->struct_size is too small");
        if (read_timeout && (!(timeout >= 0.0) || !isfinite(timeout) || timeout < 0.0))
            fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "the timeout is not a positive number");
    }
    const char *engine = null_options ? NULL : eng->name;
    int kind = null_options ? 5 : eng->kind;
    bool lying_bad = false;
    switch (kind) {
    case 2: case 5: fc_fault(&e, BP_ERR_NOT_FOUND, "the engine is not installed"); break;
    case 3: fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "the engine's name is not one"); break;
    case 4: fc_fault(&e, BP_ERR_UNSUPPORTED_DEVICE, "nccl moves CUDA memory only"); break;
    case 1:
        lying_bad = lie[1] < 1 || lie[1] > FC_MAX_SIZE || lie[0] < 0 || lie[0] >= lie[1];
        if (lying_bad)
            fc_fault(&e, BP_ERR_PLUGIN, "the engine reports a rank and size no job has");
        break;
    default: break;
    }
    fz_trace("  bp_comm_create(%s, engine %s, lying %d of %d, timeout %g, struct_size %u%s)",
             be == s->rec && be ? "recording backend" : be ? bp_backend_name(be) : "NULL",
             engine ? engine : "(default)", (int)lie[0], (int)lie[1], timeout,
             (unsigned)struct_size, null_options ? ", options NULL" : "");
    if (s->comm[c].c) {
        bp_comm_destroy(s->comm[c].c);
        memset(&s->comm[c], 0, sizeof s->comm[c]);
    }
    bp_comm *comm = FC_GARBAGE;
    fz_mark();
    bp_status st = bp_comm_create(be, null_options ? NULL : &opt.o, null_out ? NULL : &comm);
    fc_check("bp_comm_create", st, &e);
    if (null_out)
        return;
    if (st != BP_OK) {
        if (comm != NULL)
            fz_fail("bp_comm_create failed but left *out = %p", (void *)comm);
        if (st == BP_ERR_PLUGIN && lying_bad) {
            char said[96];
            snprintf(said, sizeof said, "rank %d of a job of %d processes", (int)lie[0],
                     (int)lie[1]);
            if (!strstr(bp_last_error(), fc_lying_path) || !strstr(bp_last_error(), said))
                fz_fail("bp_comm_create refused an engine reporting rank %d of %d without "
                        "naming its file (%s) and what it reported: %s",
                        (int)lie[0], (int)lie[1], fc_lying_path, bp_last_error());
        }
        return;
    }
    if (!comm)
        fz_fail("bp_comm_create returned BP_OK but *out is NULL");
    int32_t want_rank = kind == 1 ? lie[0] : 0, want_size = kind == 1 ? lie[1] : 1;
    if (bp_comm_rank(comm) != want_rank || bp_comm_size(comm) != want_size)
        fz_fail("bp_comm_create: rank %d of %d, the engine reported %d of %d",
                (int)bp_comm_rank(comm), (int)bp_comm_size(comm), (int)want_rank, (int)want_size);
    if (want_size > 3) {
        /* a "job" of 2^24: believed, but every collective would size its
         * records (and gathers) by it; fuzz_comm stops here */
        bp_comm_destroy(comm);
        return;
    }
    s->comm[c] = (fc_comm){.c = comm, .be = be, .rank = want_rank, .size = want_size,
                           .one = want_size == 1};
}

static void fc_act_destroy(fc_state *s)
{
    int c = (int)fz_pick(&s->in, FC_COMMS);
    bp_comm_destroy(s->comm[c].c); /* NULL: a no-op */
    memset(&s->comm[c], 0, sizeof s->comm[c]);
}

/* The context goes while its tensors and communicators live on: they keep
 * what they need. Its backend handles may no longer be used. */
static void fc_act_context(fc_state *s)
{
    if (fz_u8(&s->in) < 200 || !s->ctx)
        return;
    bp_context_destroy(s->ctx);
    s->ctx = NULL;
    s->be[0] = s->be[1] = NULL;
}

static void fc_act_query(fc_state *s)
{
    int c = (int)fz_pick(&s->in, FC_COMMS);
    const fc_comm *k = &s->comm[c];
    if (bp_comm_rank(k->c) != (k->c ? k->rank : -1) || bp_comm_size(k->c) != (k->c ? k->size : -1))
        fz_fail("bp_comm_rank / bp_comm_size: %d of %d, want %d of %d", (int)bp_comm_rank(k->c),
                (int)bp_comm_size(k->c), k->c ? (int)k->rank : -1, k->c ? (int)k->size : -1);
    static const char *const names[] = {"sum", "prod", "max", "min", "avg"};
    int32_t op = (int32_t)fz_u32(&s->in);
    const char *name = bp_reduce_op_name((bp_reduce_op)op);
    const char *want = op >= 0 && op < 5 ? names[op] : "?";
    if (!name || strcmp(name, want) != 0)
        fz_fail("bp_reduce_op_name(%d) is \"%s\", want \"%s\"", (int)op, name ? name : "(null)",
                want);
}

/* ---- collectives ------------------------------------------------------------------ */

enum { FC_ALL_REDUCE, FC_BROADCAST, FC_ALL_GATHER, FC_REDUCE_SCATTER, FC_BARRIER };
static const char *const fc_names[] = {"bp_all_reduce", "bp_broadcast", "bp_all_gather",
                                       "bp_reduce_scatter", "bp_barrier"};

/* Zero elements, but extents whose product overflows: creation may refuse
 * what they make. */
static bool fc_odd(const bp_tensor *t)
{
    int64_t n;
    return bp_tensor_numel(t) == 0 &&
           !fz_numel(bp_tensor_rank(t), bp_tensor_shape(t), bp_dtype_size(bp_tensor_dtype(t)), &n);
}

static void fc_act_collective(fc_state *s)
{
    static const int32_t ops[] = {0, 1, 2, 3, 4, 0, 4, -1, 5, 100, INT32_MIN};
    static const int32_t axes[] = {0, 1, -1, 2, -2, 3, 0, 7, -9, 8, INT32_MIN, INT32_MAX};
    int which = (int)fz_pick(&s->in, 5);
    int c = (int)fz_pick(&s->in, FC_COMMS);
    int xi = fc_slot_pick(s), dst = fc_slot_pick(s);
    int32_t op = ops[fz_pick(&s->in, sizeof ops / sizeof ops[0])];
    int32_t axis = axes[fz_pick(&s->in, sizeof axes / sizeof axes[0])];
    uint8_t rootb = fz_u8(&s->in);
    bool null_out = fz_u8(&s->in) == 0xff;
    fc_comm *k = &s->comm[c];
    const fc_slot *xs = &s->slot[xi];
    const bp_tensor *x = xs->t;
    static const int32_t roots[] = {0, 1, -1, 2, INT32_MAX, INT32_MIN};
    int32_t root = rootb < 160 ? 0 : rootb < 200 && k->c ? k->size - 1 + rootb % 2
                                               : roots[rootb % 6];
    /* the lying engine reads no source on a rank that is not the root:
     * with data to move it would copy from NULL (its defect, not the core's) */
    if (which == FC_BROADCAST && k->c && !k->one && root >= 0 && root < k->size)
        root = k->rank;

    fc_expect e = {0};
    const char *fn = fc_names[which];
    bool tensors = which != FC_BARRIER;
    if (tensors && null_out)
        fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "out is NULL");
    if (!k->c)
        fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "comm is NULL");
    bool usable = tensors && x && bp_tensor_is_valid(x);
    if (tensors && !x)
        fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "x is NULL");
    if (tensors && x && !bp_tensor_is_valid(x))
        fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "x was given away");
    if (usable && xs->symbolic)
        fc_fault(&e, BP_ERR_UNSUPPORTED_OP, "x is symbolic");
    else if (usable && k->c && bp_tensor_backend(x) != k->be)
        fc_fault(&e, BP_ERR_BACKEND_MISMATCH, "x is on another backend");
    bp_dtype dt = bp_tensor_dtype(x);
    int32_t rank = bp_tensor_rank(x);
    const int64_t *shape = bp_tensor_shape(x);
    bool reduces = which == FC_ALL_REDUCE || which == FC_REDUCE_SCATTER;
    if (usable && reduces) {
        if (op < 0 || op > 4)
            fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "op is not a bp_reduce_op");
        if (dt == BP_BOOL)
            fc_fault(&e, BP_ERR_DTYPE, "bool cannot be reduced");
        if (op == BP_REDUCE_AVG && !bp_dtype_is_float(dt))
            fc_fault(&e, BP_ERR_DTYPE, "avg takes floats");
    }
    if (usable && k->c && which == FC_BROADCAST && (root < 0 || root >= k->size))
        fc_fault(&e, BP_ERR_INVALID_ARGUMENT, "root is not a rank");
    /* the result's shape */
    int64_t out_shape[BP_MAX_RANK];
    int32_t ax = axis < 0 ? axis + rank : axis;
    for (int32_t d = 0; usable && d < rank; d++)
        out_shape[d] = shape[d];
    bool axial = which == FC_ALL_GATHER || which == FC_REDUCE_SCATTER;
    if (usable && axial) {
        if (rank == 0)
            fc_fault(&e, BP_ERR_SHAPE, "x is a scalar");
        else if (axis < -rank || axis >= rank)
            fc_fault(&e, BP_ERR_SHAPE, "the axis is out of range");
        else if (k->c && ax > 0 && rank == BP_MAX_RANK)
            fc_fault(&e, BP_ERR_SHAPE, "an axis > 0 of a rank-8 tensor");
        else if (k->c && which == FC_REDUCE_SCATTER && shape[ax] % k->size != 0)
            fc_fault(&e, BP_ERR_SHAPE, "the ranks cannot share the extent equally");
        else if (k->c && which == FC_ALL_GATHER && shape[ax] > INT64_MAX / k->size)
            fc_fault(&e, BP_ERR_SHAPE, "the gathered extent overflows");
        else if (k->c)
            out_shape[ax] = which == FC_ALL_GATHER ? shape[ax] * k->size : shape[ax] / k->size;
        int64_t n;
        /* zero elements, but gathering makes the non-zero extents overflow */
        if (e.n == 0 && !fz_numel(rank, out_shape, bp_dtype_size(dt), &n))
            fc_fault(&e, BP_ERR_SHAPE, "the result's shape is too large");
    }
    if (usable && fc_odd(x))
        e.any = true; /* the result's shape may be refused like x's would be now */

    bp_tensor *out = FC_GARBAGE;
    bp_status st;
    fz_trace("  %s(comm %d%s, slot %d, op %d, root %d, axis %d%s)", fn, c, k->c ? "" : " (NULL)",
             xi, (int)op, (int)root, (int)axis, null_out ? ", out NULL" : "");
    fz_mark();
    switch (which) {
    case FC_ALL_REDUCE: st = bp_all_reduce(k->c, x, (bp_reduce_op)op, null_out ? NULL : &out); break;
    case FC_BROADCAST: st = bp_broadcast(k->c, x, root, null_out ? NULL : &out); break;
    case FC_ALL_GATHER: st = bp_all_gather(k->c, x, axis, null_out ? NULL : &out); break;
    case FC_REDUCE_SCATTER:
        st = bp_reduce_scatter(k->c, x, (bp_reduce_op)op, axis, null_out ? NULL : &out);
        break;
    default: st = bp_barrier(k->c); out = NULL; break;
    }
    fc_check(fn, st, &e);
    if (!tensors || null_out)
        return;
    fz_result(fn, st, out);
    if (st != BP_OK)
        return;
    if (bp_tensor_dtype(out) != dt || bp_tensor_rank(out) != rank ||
        memcmp(bp_tensor_shape(out), out_shape, (size_t)rank * sizeof(int64_t)) != 0)
        fz_fail("%s made a %s tensor of rank %d (first extent %lld) from a %s tensor of rank %d "
                "(first extent %lld)", fn, bp_dtype_name(bp_tensor_dtype(out)),
                (int)bp_tensor_rank(out), rank ? (long long)bp_tensor_shape(out)[0] : -1LL,
                bp_dtype_name(dt), (int)rank, rank ? (long long)shape[0] : -1LL);
    if (bp_tensor_backend(out) != k->be)
        fz_fail("%s made its result on backend %s, not the communicator's %s", fn,
                bp_backend_name(bp_tensor_backend(out)), bp_backend_name(k->be));
    if (k->one) {
        /* one rank: the op over one value is that value; gathering or
         * scattering over one rank is x itself */
        unsigned char *want = fc_bytes(x), *got = fc_bytes(out);
        size_t n = bp_tensor_nbytes(x);
        if (bp_tensor_nbytes(out) != n || memcmp(want, got, n) != 0) {
            size_t i = 0;
            while (i < n && want[i] == got[i])
                i++;
            fz_fail("%s on a job of one process changed x (%s, %s): byte %zu is 0x%02x, x has "
                    "0x%02x", fn, bp_dtype_name(dt),
                    reduces ? bp_reduce_op_name((bp_reduce_op)op) : "no op", i,
                    i < n ? got[i] : 0, i < n ? want[i] : 0);
        }
        free(want);
        free(got);
    }
    if (bp_tensor_numel(out) > FC_CAP_ELEMS)
        bp_tensor_release(out);
    else
        fc_slot_set(s, dst, out, false);
}

/* ---- the input ---------------------------------------------------------------------- */

typedef struct fc_action {
    void (*run)(fc_state *s);
    const char *name;
} fc_action;

#define FC_ACT(name) {fc_act_##name, #name}
static const fc_action fc_actions[] = {
    FC_ACT(make),       FC_ACT(make),       FC_ACT(make),     FC_ACT(create),   FC_ACT(create),
    FC_ACT(collective), FC_ACT(collective), FC_ACT(collective), FC_ACT(collective),
    FC_ACT(collective), FC_ACT(destroy),    FC_ACT(symbolic), FC_ACT(transfer), FC_ACT(query),
    FC_ACT(context),
};

static void fc_teardown(fc_state *s)
{
    for (int i = 0; i < FC_SLOTS; i++)
        fc_slot_set(s, i, NULL, false);
    for (int c = 0; c < FC_COMMS; c++)
        bp_comm_destroy(s->comm[c].c);
    bp_graph_release(s->graph);
    for (int i = 0; i < 2 && s->ctx; i++) {
        bp_memory_info mi = {.struct_size = sizeof(bp_memory_info)};
        fz_mark();
        bp_status st = bp_backend_memory_info(s->be[i], &mi);
        fz_status("bp_backend_memory_info", st);
        if (st == BP_OK && mi.used != 0)
            fz_fail("backend %s still has %llu bytes in use after every tensor was released "
                    "and every communicator destroyed",
                    bp_backend_name(s->be[i]), (unsigned long long)mi.used);
    }
    bp_context_destroy(s->ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fc_state s;
    memset(&s, 0, sizeof s);
    s.in.p = data;
    s.in.n = size;
    fz_mark();
    bp_status st = bp_context_create(fc_config, &s.ctx);
    fz_status("bp_context_create", st);
    if (st != BP_OK)
        fz_fail("bp_context_create(%s): %s", fc_config, bp_last_error());
    static const char *const names[2] = {"binary", "blas_cpu"};
    for (int i = 0; i < 2; i++) {
        fz_mark();
        st = bp_backend_get(s.ctx, names[i], &s.be[i]);
        fz_status("bp_backend_get", st);
        if (st != BP_OK)
            fz_fail("bp_backend_get(%s): %s", names[i], bp_last_error());
    }
    for (int step = 0; step < FC_STEPS && !fz_done(&s.in); step++) {
        const fc_action *a = &fc_actions[fz_pick(&s.in, sizeof fc_actions / sizeof fc_actions[0])];
        fz_trace("step %d: %s", step, a->name);
        a->run(&s);
    }
    fc_teardown(&s);
    fz_stdout_check();
    return 0;
}

/* backplane core: what comm.c (communicators, engines) and comm_ops.c (the
 * collectives) share. Nothing here is API. */
#ifndef BP_COMM_INTERNAL_H
#define BP_COMM_INTERNAL_H

#include "backplane/comm.h"
#include "backplane/comm_engine.h"
#include "internal.h"

struct bp_comm {
    bp_context *ctx;               /* retained for the communicator's life */
    bp_backend *backend;           /* whose tensors it carries */
    const bp_comm_engine *vt;
    void *dl;                      /* the engine's handle (never unloaded: see comm.c) */
    void *state;                   /* from vt->open */
    char engine[32];               /* "mpi" */
    char *path;                    /* the engine's file */
    int32_t memory_kind;           /* what the engine moves: BP_MEMORY_HOST or _CUDA */
    bool staged;                   /* the backend's memory goes through host buffers */
    int32_t rank, size;
    double timeout_s;
    uint64_t seq;                  /* collectives called so far */
    bool failed;                   /* a fault: every later call fails at once */
    char *failure;                 /* why */
    /* What a faulted collective's transfers may still touch, kept until
     * bp_comm_destroy. */
    bp_tensor **kept;
    size_t n_kept;
    void **kept_memory;
    size_t n_kept_memory;
    bp_comm_engine_host host;
};

/* "bp_all_reduce" for BP_COMM_ALL_REDUCE. */
const char *bp__comm_fn(int32_t collective);

/* After an engine entry returned st (the engine's detail in
 * bp__plugin_detail()): BP_OK; the verdict on a mismatched call, worded
 * from every rank's record (all); or the engine's failure, which fails the
 * communicator when it is BP_ERR_BACKEND. */
bp_status bp__comm_outcome(bp_comm *comm, const char *fn, bp_status st,
                           const bp_comm_record *all);

/* Keep a tensor (a reference is taken) or host memory (ownership is taken)
 * until bp_comm_destroy: a faulted collective's transfers may still touch it. */
void bp__comm_keep(bp_comm *comm, bp_tensor *t, void *memory);

#endif

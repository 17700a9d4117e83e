/* fuzz_api's state: two contexts, their binary and blas_cpu backends, a few
 * tensor slots, and what the harness knows about each tensor (which storage
 * it shares, whether its handle was given away by bp_backend_transfer). */
#ifndef FA_STATE_H
#define FA_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include <backplane/backplane.h>

#include "fz_bytes.h"

#define FA_SLOTS 10
#define FA_BACKENDS 4          /* ctx c: [2c] binary, [2c + 1] blas_cpu */
#define FA_STORAGES 1024
#define FA_STEPS 48            /* actions per input */
/* Tensors the harness lets the library make: the point is that the library
 * refuses absurd shapes itself, so those are always passed, but shapes it
 * must accept are kept small enough not to exhaust memory or time. */
#define FA_CAP_BYTES ((int64_t)1 << 20)
#define FA_CAP_ELEMS ((int64_t)1 << 17)
#define FA_CAP_FLOPS ((int64_t)1 << 21)
/* What *out holds before each call: a failure must overwrite it with NULL. */
#define FA_GARBAGE ((bp_tensor *)(uintptr_t)0x10)

typedef struct fa_slot {
    bp_tensor *t;
    int storage;               /* tensors sharing data share this id */
    int be_id;                 /* which backend instance holds it (fa_state.be_id) */
    int ctx_id;                /* which context instance (fa_state.ctx_id) */
    bool odd;                  /* zero elements but an overflowing extent product */
    bool gone;                 /* this handle gave its data away (bp_backend_transfer);
                                  other handles on the same data stay valid */
} fa_slot;

/* A DLPack tensor the harness made (fa_dlpack.c): a library's export
 * wrapped so that its deleter is counted, or harness memory lent like
 * NumPy lends an array. Whoever owns it calls the deleter exactly once: the
 * harness while it is pending, the library once an import took it. */
#define FA_LENDS 16
typedef struct fa_block {
    int refs;                  /* lends of this memory not yet deleted */
    float data[64];
} fa_block;
typedef struct fa_lend {
    DLManagedTensor m;         /* what an import receives */
    int64_t shape[BP_MAX_RANK];
    DLManagedTensor *inner;    /* the export wrapped, or NULL */
    const bp_tensor *of;       /* the tensor exported (holds a reference), or NULL */
    fa_block *block;           /* harness memory, or NULL */
    int deleted;               /* runs of m's deleter */
    bool taken;                /* an import owns it */
} fa_lend;

typedef struct fa_state {
    fz_in in;
    const char *config[2];     /* the two contexts' ini files */
    bp_context *ctx[2];        /* NULL: not created, or destroyed */
    int ctx_id[2];             /* a fresh id for each context created */
    int ctx_ids;
    bp_backend *be[FA_BACKENDS];
    int be_id[FA_BACKENDS];    /* a fresh id each time a backend pointer is stored */
    int be_ids;
    fa_slot slot[FA_SLOTS];
    int storages;
    fa_lend lend[FA_LENDS];
    int n_lends;
} fa_state;

/* ---- verdicts ------------------------------------------------------------ */

typedef enum fa_verdict {
    FA_VALID,    /* the contract says it succeeds (barring OOM / backend failure) */
    FA_INVALID,  /* the contract says it fails */
    FA_UNSURE    /* either is acceptable (e.g. zero-element tensors with absurd extents) */
} fa_verdict;

typedef struct fa_expect {
    fa_verdict verdict;
    const char *why;           /* for FA_INVALID: the reason, for the report */
    bool known;                /* the result's dtype and shape below are predicted */
    int dtype;
    int32_t rank;
    int64_t shape[BP_MAX_RANK];
    int64_t numel;             /* of the predicted shape (0 when odd) */
    int64_t flops;             /* work beyond one pass over the output (matmul) */
    const bp_backend *backend; /* the result's backend, NULL if not predicted */
    int be_id;                 /* and its ids, for the slot */
    int ctx_id;
} fa_expect;

/* Start an expectation: valid, nothing predicted. */
fa_expect fa_expect_valid(void);
/* Mark invalid (the first reason wins). */
void fa_invalid(fa_expect *e, const char *why);
void fa_unsure(fa_expect *e);
/* Predict the result (dtype, rank, shape). A shape whose element count
 * overflows makes the expectation invalid, or unsure when an extent is 0. */
void fa_predict(fa_expect *e, int dtype, int32_t rank, const int64_t *shape);
/* Whether the harness may make the call: always when the result's shape is
 * invalid; otherwise only when the predicted result is within the caps. */
bool fa_affordable(const fa_expect *e);

/* Check a call's outcome against e, then store a successful result in slot
 * `dst` (releasing what was there) with the given storage id (-1: new). */
void fa_finish(fa_state *s, const char *call, bp_status st, bp_tensor *out, const fa_expect *e,
               int dst, int storage);

/* ---- slots --------------------------------------------------------------- */

/* A slot index read from the input; its tensor may be NULL. */
int fa_slot_pick(fa_state *s);
bp_tensor *fa_tensor(fa_state *s, int slot);
/* Input checks shared by every op: NULL, given away, odd. */
void fa_expect_input(fa_state *s, fa_expect *e, int slot);
/* Inputs on different backends (or contexts) must be refused. */
void fa_expect_same_backend(fa_state *s, fa_expect *e, int a, int b);
void fa_slot_clear(fa_state *s, int slot);
int fa_storage_new(fa_state *s);
/* A backend index read from the input; fa_state.be[i] may be NULL. */
int fa_backend_pick(fa_state *s);
/* Remember backend b of context c in its place (by plugin name); checks that
 * a backend is one object per (context, name). */
void fa_backend_store(fa_state *s, int c, bp_backend *b);
/* The result of an op on slot's tensor lives on the same backend. */
void fa_expect_backend_of(fa_state *s, fa_expect *e, int slot);

/* ---- reading shapes -------------------------------------------------------- */
/* A rank: mostly 0..4, sometimes up to 8, sometimes out of range. */
int32_t fa_rank(fa_state *s);
/* rank extents into buf (BP_MAX_RANK entries); NULL now and then. */
const int64_t *fa_shape(fa_state *s, int32_t rank, int64_t *buf);
/* Fill n bytes for numel elements of dtype in the harness's host buffer. */
void *fa_host_data(fa_state *s, int dtype, int64_t numel);

/* ---- actions (one per file family) --------------------------------------- */
void fa_act_op(fa_state *s);          /* fa_table.c: every op of the op table */
void fa_act_dlpack(fa_state *s);      /* fa_dlpack.c: exports, imports, lent memory */
/* References to t held outside the slots: pending or imported exports of it. */
int fa_lend_holds(const fa_state *s, const bp_tensor *t);
/* Delete the pending lends, then check every lend was deleted exactly once. */
void fa_lends_end(fa_state *s);
void fa_act_backend(fa_state *s);     /* fa_make.c */
void fa_act_context(fa_state *s);
void fa_act_from_host(fa_state *s);
void fa_act_fill(fa_state *s);
void fa_act_arange_eye(fa_state *s);
void fa_act_random(fa_state *s);
void fa_act_unary(fa_state *s);       /* fa_ops.c */
void fa_act_binary(fa_state *s);
void fa_act_where(fa_state *s);
void fa_act_reduce(fa_state *s);
void fa_act_softmax(fa_state *s);
void fa_act_matmul(fa_state *s);
void fa_act_cast(fa_state *s);
void fa_act_transpose(fa_state *s);   /* fa_move.c */
void fa_act_slice(fa_state *s);
void fa_act_concat(fa_state *s);
void fa_act_pad(fa_state *s);
void fa_act_gather(fa_state *s);
void fa_act_broadcast(fa_state *s);
void fa_act_reshape(fa_state *s);     /* fa_view.c */
void fa_act_squeeze(fa_state *s);
void fa_act_unsqueeze(fa_state *s);
void fa_act_copy(fa_state *s);        /* fa_xfer.c */
void fa_act_read(fa_state *s);
void fa_act_lifetime(fa_state *s);
void fa_act_inspect(fa_state *s);
void fa_act_guards(fa_state *s);
/* Release every tensor, check that live contexts' backends hold no bytes,
 * destroy the contexts. */
void fa_teardown(fa_state *s);

#endif

/* What each stress-test thread does (st_work.c). */
#ifndef ST_WORK_H
#define ST_WORK_H

#include <backplane/backplane.h>

/* Race the other threads to open binary, blas_cpu and the default backend;
 * everyone must get the same backend objects. */
void st_open_backends(bp_context *ctx, int id);
/* The same on a context only this thread uses. */
void st_open_backends_private(bp_context *ctx, int id);
/* One round of tensors, ops, copies, a transfer, value checks, and an error
 * of this thread's own. Everything made is released. */
void st_iteration(bp_context *ctx, int id, int iteration);
/* A tensor kept past bp_context_destroy (phase 3), and its use there. */
bp_tensor *st_make_kept(bp_context *ctx, int id);
void st_use_kept(bp_tensor *t, int id);
/* bp_backend_default on a context where nothing opens must fail, with its
 * reason readable, however many threads ask at once. */
void st_default_nothing_opens(bp_context *ctx, int id);

#endif

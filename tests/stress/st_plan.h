/* The stress test's plan phase (st_plan.c): one compiled plan run by every
 * thread at once while one of them starts and stops its profile and reads
 * the times. */
#ifndef ST_PLAN_H
#define ST_PLAN_H

#include <backplane/backplane.h>

typedef struct st_plan st_plan;

/* A plan on ctx's blas_cpu (a prepared convolution with its Relu, a sum, a
 * fused group), its input and its result from one plain run; NULL (a
 * broken check reported) if any of it fails. */
st_plan *st_plan_make(bp_context *ctx);
/* Run the plan `runs` times, each result checked against the first; thread
 * 0 also toggles the profile and reads every step between runs. */
void st_plan_work(st_plan *p, int id, int runs);
void st_plan_free(st_plan *p);

#endif

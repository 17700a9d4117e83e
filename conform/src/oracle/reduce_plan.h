/* The oracle's plan of a reduction over some axes of a row-major array
 * (reduce.c): which axes are kept and which reduced, where
 * their elements lie, and the result's shape. Internal to the oracle. */
#ifndef BP_CONFORM_ORACLE_REDUCE_PLAN_H
#define BP_CONFORM_ORACLE_REDUCE_PLAN_H

#include "oracle.h"

typedef struct cf_plan {
    int32_t krank, rrank;
    int64_t kshape[BP_MAX_RANK], rshape[BP_MAX_RANK];
    int64_t kstride[BP_MAX_RANK], rstride[BP_MAX_RANK]; /* element strides in x */
    int32_t orank;
    int64_t oshape[BP_MAX_RANK];
    int64_t K; /* elements reduced into each output */
} cf_plan;

/* axes: n_axes entries, negative ones count from the end; n_axes 0: all. */
void cf_plan_make(const cf_array *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                  cf_plan *p);
/* The flat index in x of output o's first term, and of its r-th term. */
int64_t cf_plan_first(const cf_plan *p, int64_t o);
int64_t cf_plan_term(const cf_plan *p, int64_t base, int64_t r);

#endif

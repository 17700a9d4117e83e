/* The nn op suites' helpers (tests/test_nn_*.c): random host arrays for the
 * oracle, and the norm-wise comparison conform uses for sums (conv, pools,
 * norms, losses, resize), so a suite checks an accumulation by the size of
 * what was summed rather than by the size of the result. */
#ifndef BPT_EXPECT_NN_H
#define BPT_EXPECT_NN_H

#include <stdint.h>

#include "expect.h"

/* Values in [lo, hi) (xorshift from seed) as dt stores them. */
cf_array bpt_random_array(bp_dtype dt, int32_t rank, const int64_t *shape, uint64_t seed,
                          double lo, double hi);
/* Integers in [0, n) of an integer dtype (class labels). */
cf_array bpt_random_labels(bp_dtype dt, int32_t rank, const int64_t *shape, uint64_t seed,
                           int64_t n);
/* Metadata, then per element |got - want| <= c * k * eps(dt) * terms[i] + one
 * ulp of dt at want (the result's rounding); NaN must be NaN and an infinity
 * the same infinity. terms NULL: |want|. */
void bpt_expect_norm(const char *what, const bp_tensor *t, const cf_array *want,
                     const double *terms, int64_t k, double c);

#endif

/* What the cuda plugin computes: every op of the op table (opcodes.h) for
 * every dtype its row accepts, less the gaps listed in support.c, each with
 * its reason. Plain C, read by supports() and the op entry, and checked by
 * tests/test_cuda_support.c on machines without a GPU. */
#ifndef BPCU_SUPPORT_H
#define BPCU_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <backplane/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dtype sets as bit masks (1 << bp_dtype) */
#define BPCU_DT(dt) (1u << (unsigned)(dt))

/* An op the plugin runs for fewer dtypes than its row accepts: a decision
 * on record, never an accident. runs 0: not implemented yet. */
typedef struct bpcu_gap {
    bp_op op;
    uint32_t runs;       /* the dtypes it runs (a subset of the row's) */
    const char *why;     /* for the op entry's BP_ERR_UNSUPPORTED_OP */
} bpcu_gap;

/* The gaps, n of them (0 when the plugin runs everything its rows accept). */
const bpcu_gap *bpcu_gaps(size_t *n);

/* The dtypes op's row accepts, as a mask (0 for a code this build lacks). */
uint32_t bpcu_row_dtypes(bp_op op);

/* Why the plugin runs fewer dtypes of op than its row accepts; NULL when it
 * runs them all, and for a code this build does not know. */
const char *bpcu_op_missing(bp_op op);

/* supports(): in the row's dtypes and not left out by a gap; false for a
 * code this build does not know (a later op) and for an invalid dtype. */
bool bpcu_op_supported(bp_op op, bp_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif

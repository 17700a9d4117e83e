/* Which ops of ABI 1.4 the cuda plugin runs, for which input dtypes: one
 * table (support.c, plain C), read by supports() and checked by
 * tests/test_cuda_support.c against opcodes.h's list and against the dtypes
 * the core accepts, on machines without a GPU. */
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
#define BPCU_FLOATS (BPCU_DT(BP_F16) | BPCU_DT(BP_BF16) | BPCU_DT(BP_F32) | BPCU_DT(BP_F64))
#define BPCU_INTS (BPCU_DT(BP_U8) | BPCU_DT(BP_I8) | BPCU_DT(BP_I32) | BPCU_DT(BP_I64))
#define BPCU_NUMERIC (BPCU_FLOATS | BPCU_INTS)
#define BPCU_BOOLS BPCU_DT(BP_BOOL)
#define BPCU_ALL (BPCU_NUMERIC | BPCU_BOOLS)

typedef struct bpcu_support {
    bp_op op;
    uint32_t accepts;              /* the input dtypes the core lets through (ops.h) */
    uint32_t runs;                 /* those this plugin computes; a subset of accepts (0
                                      for an op not implemented yet) */
    const char *missing;           /* why runs != accepts (NULL when they are equal) */
} bpcu_support;

/* The table: one row per op of BP_OP_LIST_1_4, in opcodes.h's order. */
const bpcu_support *bpcu_support_table(size_t *rows);

/* Why the plugin runs fewer dtypes of op than the core accepts (a NOT_YET
 * row: why it runs none), for the op entry's refusal; NULL for an op that
 * runs every dtype the core accepts and for a code the table lacks. */
const char *bpcu_op_missing(bp_op op);

/* supports() for an op of ABI 1.4: false for a code the table lacks (a
 * later op) and for a dtype outside `runs`. */
bool bpcu_op_supported(bp_op op, bp_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif

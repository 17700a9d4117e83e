/* Fuzzed arguments for an op of the op table (tests/support/op_args.h's
 * bpt_op_args): shared by fuzz_api's op-table action and fuzz_graph. */
#ifndef FZ_OP_ARGS_H
#define FZ_OP_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include <backplane/backplane.h>

#include "fz_bytes.h"
#include "op_args.h"

/* What the pointers of a fuzzed bpt_op_args point into: keep it alive (and
 * in place) as long as the arguments are used. */
typedef struct fz_op_store {
    bp_window window;
    bp_resize_options resize;
    int64_t buf[4 * BP_MAX_RANK];  /* slices, pads, shapes */
    int32_t axes[BP_MAX_RANK];
    double scales[BP_MAX_RANK];
    int64_t ignore;
} fz_op_store;

/* Every argument of a beyond its tensors and backend read from the input:
 * axes, k, flags, reals with their specials, windows (their struct_size
 * too), resize options, reductions, ignore_index. The arguments that scale
 * an output (k, depth, scales, sizes, strides, arange's count) come from
 * small sets plus the values that must be refused. */
void fz_op_args(fz_in *in, bp_op op, bpt_op_args *a, fz_op_store *store);

/* Whether dt is in an op row's dtype class. */
bool fz_op_dtype_in_class(bp_op_dtypes cls, bp_dtype dt);

#endif

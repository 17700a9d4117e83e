/* Every op of the op table called through its public function with small
 * valid operands: for tests that walk the table (what the core accepts,
 * what it refuses) without a switch of their own. */
#ifndef BPT_OP_CALLS_H
#define BPT_OP_CALLS_H

#include <backplane/backplane.h>

/* Call op's function on be: its typed input (the row's TYPED) of dtype dt,
 * the others as the op needs them (indices i64, where's cond bool,
 * one_hot's values f32, the rest dt); the inputs the row marks optional
 * left out. Input k of the row is NULL when k == null_input (-1: none).
 * Outputs are released. Returns the op's status (the message is
 * bp_last_error()). Fails the test for an op it has no call for. */
bp_status bpt_op_call(bp_backend *be, bp_op op, bp_dtype dt, int32_t null_input);

#endif

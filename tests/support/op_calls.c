/* bpt_op_call: the row's tensors made small and valid, then the op called
 * by op_args.c with its default arguments. */
#include <criterion/criterion.h>

#include "op_args.h"
#include "op_calls.h"

bp_status bpt_op_call(bp_backend *be, bp_op op, bp_dtype dt, int32_t null_input)
{
    bp_tensor *in[5] = {NULL, NULL, NULL, NULL, NULL}, *o1 = NULL, *o2 = NULL;
    bp_status made = bpt_op_operands(be, op, dt, in);
    cr_assert_eq(made, BP_OK, "making %s's operands: %s", bp_op_name(op), bp_last_error());
    bp_tensor *held = NULL;
    if (null_input >= 0 && null_input < 5) {
        held = in[null_input];
        in[null_input] = NULL;
    }
    bpt_op_args args;
    bpt_op_args_default(op, be, dt, &args);
    bp_status st = BP_ERR_INVALID_ARGUMENT;
    if (!bpt_op_invoke(op, in, &args, &o1, &o2, &st))
        cr_assert_fail("no call for %s in tests/support/op_args.c: add it", bp_op_name(op));
    bp_tensor_release(held);
    for (int k = 0; k < 5; k++)
        bp_tensor_release(in[k]);
    bp_tensor_release(o1);
    bp_tensor_release(o2);
    return st;
}

/* fuzz_api: every op of the op table, through tests/support/op_args.c.
 *
 * The op's tensors come from the slots (a required one may be NULL, an
 * optional one may be left out); its other arguments are fuzzed
 * (fz_op_args.c: axes, k, flags, reals with their specials, windows and
 * their struct_size, resize options, reductions, ignore_index). The
 * contract checked is the op table's: a call with a required input NULL, an input given away, inputs
 * on two backends, or a typed input of a dtype outside its row must fail.
 * Any other call may succeed or fail (shapes are not predicted here), but it
 * never crashes, never leaves an output set when it fails, and its result
 * lives on its inputs' backend. Inputs are at most FA_OP_ELEMS elements and
 * the arguments that scale an output (k, depth, scales, sizes, strides)
 * come from small sets plus the values that must be refused, so that no
 * accepted call outgrows the caps. Pad's counts are the exception (they come
 * from the extents' edges, 2^31 among them, as fuzz_graph wants them): its
 * result's size is computed here and a call the caps cannot afford is not
 * made, as the pad action does. */
#include <string.h>

#include "fa_state.h"
#include "fz_op_args.h"
#include "fz_oracle.h"
#include "op_args.h"

#define FA_OP_ELEMS 4096

/* Whether bp_pad's result fits the caps, or the call is one the library must
 * refuse before allocating (a negative count, an extent or a byte size that
 * overflows), which is always made. */
static bool fa_pad_affordable(const bp_tensor *x, const bpt_op_args *a)
{
    if (!x || !a->before || !a->after)
        return true;
    int32_t rank = bp_tensor_rank(x);
    int64_t shape[BP_MAX_RANK];
    for (int32_t k = 0; k < rank; k++) {
        if (a->before[k] < 0 || a->after[k] < 0 ||
            __builtin_add_overflow(a->before[k], bp_tensor_shape(x)[k], &shape[k]) ||
            __builtin_add_overflow(shape[k], a->after[k], &shape[k]))
            return true;
    }
    size_t elem = bp_dtype_size(bp_tensor_dtype(x));
    int64_t numel;
    if (!fz_numel(rank, shape, elem, &numel))
        return true;
    return numel <= FA_CAP_ELEMS && numel * (int64_t)elem <= FA_CAP_BYTES;
}

void fa_act_op(fa_state *s)
{
    bp_op op = (bp_op)fz_pick(&s->in, BP_OP_COUNT);
    const bp_op_info *row = bp_op_info_of(op);
    uint32_t optional;
    int32_t n_in = bp_op_arity(row->in, &optional);
    int slots[5] = {0};
    bp_tensor *in[5] = {NULL, NULL, NULL, NULL, NULL};
    fa_expect e = fa_expect_valid();
    fa_unsure(&e); /* shapes and arguments are not predicted here */
    int first = -1;
    for (int32_t k = 0; k < n_in; k++) {
        slots[k] = fa_slot_pick(s);
        if ((optional >> k & 1u) && fz_bool(&s->in))
            continue; /* an optional input left out */
        in[k] = fa_tensor(s, slots[k]);
        if (bp_tensor_numel(in[k]) > FA_OP_ELEMS)
            return;
        if (!in[k] && (optional >> k & 1u))
            continue; /* an empty slot for an optional input: left out too */
        fa_expect_input(s, &e, slots[k]);
        if (!in[k])
            continue;
        if (first < 0) {
            first = slots[k];
            fa_expect_backend_of(s, &e, slots[k]);
        } else {
            fa_expect_same_backend(s, &e, first, slots[k]);
        }
    }
    if (row->typed >= 0 && in[row->typed] && !fz_op_dtype_in_class(row->dtypes, bp_tensor_dtype(in[row->typed])))
        fa_invalid(&e, "the typed input's dtype is outside the op's row");
    bpt_op_args a;
    fz_op_store store;
    memset(&store, 0, sizeof store);
    int be = fa_backend_pick(s);
    bpt_op_args_default(op, s->be[be], BP_F32, &a);
    if (fz_bool(&s->in))
        fz_op_args(&s->in, op, &a, &store);
    if (n_in == 0) {
        a.backend = s->be[be];
        if (!a.backend)
            fa_invalid(&e, "the backend is NULL");
        e.backend = a.backend;
        e.be_id = s->be_id[be];
        e.ctx_id = s->ctx_id[be / 2];
    }
    if (op == BP_OP_PAD && !fa_pad_affordable(in[0], &a))
        return;
    int dst = fa_slot_pick(s);
    bp_tensor *o1 = FA_GARBAGE, *o2 = FA_GARBAGE;
    bp_status st = BP_OK;
    char call[64];
    snprintf(call, sizeof call, "bp_%s", row->name);
    fz_trace("  %s on slots %d %d %d, %s arguments", call, slots[0], slots[1], slots[2],
             a.window == &store.window ? "fuzzed" : "default");
    fz_mark();
    if (!bpt_op_invoke(op, in, &a, &o1, &o2, &st))
        fz_fail("op_args.c has no call for %s", row->name);
    if (bp_op_arity(row->out, NULL) > 1 && st != BP_OK && o2 != FA_GARBAGE && o2 != NULL)
        fz_fail("%s failed but left its second output set", call);
    if (o2 != FA_GARBAGE)
        bp_tensor_release(o2);
    fa_finish(s, call, st, o1, &e, dst, -1);
}

/* fuzz_api: every op of the op table, through tests/support/op_args.c.
 *
 * The op's tensors come from the slots (a required one may be NULL, an
 * optional one may be left out); its other arguments are fuzzed: axes, k,
 * flags, reals with their specials, windows (their struct_size too),
 * resize options, reductions, ignore_index. The contract checked is the op
 * table's: a call with a required input NULL, an input given away, inputs
 * on two backends, or a typed input of a dtype outside its row must fail.
 * Any other call may succeed or fail (shapes are not predicted here), but it
 * never crashes, never leaves an output set when it fails, and its result
 * lives on its inputs' backend. Inputs are at most FA_OP_ELEMS elements and
 * the arguments that scale an output (k, depth, scales, sizes, strides)
 * come from small sets plus the values that must be refused, so that no
 * accepted call outgrows the caps. */
#include <math.h>
#include <string.h>

#include "fa_state.h"
#include "fz_oracle.h"
#include "op_args.h"

#define FA_OP_ELEMS 4096

static int64_t pick_i64(fa_state *s, const int64_t *v, unsigned n) { return v[fz_pick(&s->in, n)]; }

static void fuzz_window(fa_state *s, bp_window *w)
{
    static const int64_t kern[] = {1, 2, 3, 0, -1, INT64_MAX};
    static const int64_t stride[] = {1, 2, 3, 0, -2, INT64_MAX};
    static const int64_t pad[] = {0, 1, 2, -1, INT64_MAX, INT64_MIN};
    static const int64_t outs[] = {0, 1, 5, -3, INT64_MAX};
    memset(w, 0, sizeof *w);
    uint8_t b = fz_u8(&s->in);
    w->struct_size = b == 0xff ? 4 : b == 0xfe ? (uint32_t)sizeof *w + 64 : (uint32_t)sizeof *w;
    for (int j = 0; j < 3; j++) {
        w->kernel[j] = pick_i64(s, kern, 6);
        w->strides[j] = pick_i64(s, stride, 6);
        w->dilations[j] = pick_i64(s, stride, 6);
        w->pads[j] = pick_i64(s, pad, 6);
        w->pads[3 + j] = pick_i64(s, pad, 6);
        w->output_padding[j] = pick_i64(s, pad, 4);
        w->output_shape[j] = pick_i64(s, outs, 5);
    }
    w->auto_pad = (bp_auto_pad)fz_pick(&s->in, 6);
    w->groups = pick_i64(s, stride, 6);
    w->ceil_mode = fz_bool(&s->in);
    w->count_include_pad = fz_bool(&s->in);
    w->storage_order = (int32_t)fz_pick(&s->in, 3);
}

static void fuzz_args(fa_state *s, bp_op op, bpt_op_args *a, bp_window *w, bp_resize_options *ro,
                      int64_t *buf, int32_t *axes, double *scales, int64_t *ignore)
{
    static const int64_t small[] = {1, 2, 3, 0, 16, -1, INT64_MAX, INT64_MIN};
    static const double reals[] = {0.5, 3.0, 0.0, 1.0, 0.25, 4.0, -1.0, 1e-300, 1e300};
    /* slices, pads and shapes: 8 values each from the extents' edges */
    for (int k = 0; k < 4 * BP_MAX_RANK; k++)
        buf[k] = fz_u8(&s->in) < 200 ? (int64_t)fz_pick(&s->in, 4) - 1 : fz_extent(&s->in);
    a->n_axes = (int32_t)fz_pick(&s->in, 4);
    for (int k = 0; k < 3; k++)
        axes[k] = fz_axis(&s->in);
    a->axes = fz_u8(&s->in) == 0xff ? NULL : axes;
    a->keepdims = fz_bool(&s->in);
    a->axis = fz_axis(&s->in);
    a->k = pick_i64(s, small, 8);
    a->flag0 = fz_bool(&s->in);
    a->flag1 = fz_bool(&s->in);
    a->f0 = fz_double(&s->in);
    a->f1 = fz_double(&s->in);
    a->f2 = fz_double(&s->in);
    if (op == BP_OP_ARANGE) /* a count of (stop - start) / step: kept within the caps */
        a->f0 = (double)fz_pick(&s->in, 9) - 4, a->f1 = (double)fz_pick(&s->in, 64),
        a->f2 = reals[fz_pick(&s->in, 9)];
    a->dtype = (bp_dtype)fz_dtype(&s->in);
    a->rank = fa_rank(s);
    a->shape = fz_u8(&s->in) == 0xff ? NULL : buf + 3 * BP_MAX_RANK;
    for (int k = 0; k < BP_MAX_RANK; k++) /* creation and broadcast_to shapes: small */
        buf[3 * BP_MAX_RANK + k] = fz_u8(&s->in) < 240 ? (int64_t)fz_pick(&s->in, 5) : -1;
    a->perm = fz_u8(&s->in) < 128 ? NULL : axes;
    a->starts = buf;
    a->stops = fz_u8(&s->in) == 0xff ? NULL : buf + BP_MAX_RANK;
    a->steps = fz_u8(&s->in) < 200 ? NULL : buf + 2 * BP_MAX_RANK;
    a->before = fz_u8(&s->in) == 0xff ? NULL : buf;
    a->after = buf + BP_MAX_RANK;
    a->n_concat = (int32_t)fz_pick(&s->in, 5) - 1;
    fuzz_window(s, w);
    a->window = fz_u8(&s->in) == 0xff ? NULL : w;
    a->reduction = (int32_t)fz_pick(&s->in, 7) - 1;
    *ignore = (int64_t)fz_pick(&s->in, 4) - 2;
    a->ignore_index = fz_bool(&s->in) ? ignore : NULL;
    for (int k = 0; k < BP_MAX_RANK; k++)
        scales[k] = reals[fz_pick(&s->in, 9)];
    a->scales = fz_u8(&s->in) < 200 ? scales : NULL;
    a->sizes = a->scales && fz_u8(&s->in) < 230 ? NULL : buf + 3 * BP_MAX_RANK;
    *ro = (bp_resize_options)BP_RESIZE_OPTIONS_INIT;
    ro->mode = (bp_resize_mode)fz_pick(&s->in, 4);
    ro->coordinates = (bp_resize_coordinates)fz_pick(&s->in, 7);
    ro->nearest = (bp_resize_nearest)fz_pick(&s->in, 5);
    ro->cubic_coeff_a = fz_double(&s->in);
    ro->exclude_outside = fz_bool(&s->in);
    if (fz_u8(&s->in) == 0xff)
        ro->struct_size = 2;
    a->resize = fz_bool(&s->in) ? ro : NULL;
    a->seed = fz_u64(&s->in);
    a->offset = fz_u64(&s->in);
}

static bool in_class(bp_op_dtypes cls, bp_dtype dt)
{
    switch (cls) {
    case BP_DTYPES_NUMERIC: return dt != BP_BOOL;
    case BP_DTYPES_FLOAT: return bp_dtype_is_float(dt);
    case BP_DTYPES_BOOL: return dt == BP_BOOL;
    case BP_DTYPES_INTEGER: return bp_dtype_is_int(dt);
    default: return true;
    }
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
    if (row->typed >= 0 && in[row->typed] && !in_class(row->dtypes, bp_tensor_dtype(in[row->typed])))
        fa_invalid(&e, "the typed input's dtype is outside the op's row");
    bpt_op_args a;
    bp_window w;
    bp_resize_options ro;
    int64_t buf[4 * BP_MAX_RANK], ignore;
    int32_t axes[BP_MAX_RANK] = {0};
    double scales[BP_MAX_RANK];
    int be = fa_backend_pick(s);
    bpt_op_args_default(op, s->be[be], BP_F32, &a);
    if (fz_bool(&s->in))
        fuzz_args(s, op, &a, &w, &ro, buf, axes, scales, &ignore);
    if (n_in == 0) {
        a.backend = s->be[be];
        if (!a.backend)
            fa_invalid(&e, "the backend is NULL");
        e.backend = a.backend;
        e.be_id = s->be_id[be];
        e.ctx_id = s->ctx_id[be / 2];
    }
    int dst = fa_slot_pick(s);
    bp_tensor *o1 = FA_GARBAGE, *o2 = FA_GARBAGE;
    bp_status st = BP_OK;
    char call[64];
    snprintf(call, sizeof call, "bp_%s", row->name);
    fz_trace("  %s on slots %d %d %d, %s arguments", call, slots[0], slots[1], slots[2],
             a.window == &w ? "fuzzed" : "default");
    fz_mark();
    if (!bpt_op_invoke(op, in, &a, &o1, &o2, &st))
        fz_fail("op_args.c has no call for %s", row->name);
    if (bp_op_arity(row->out, NULL) > 1 && st != BP_OK && o2 != FA_GARBAGE && o2 != NULL)
        fz_fail("%s failed but left its second output set", call);
    if (o2 != FA_GARBAGE)
        bp_tensor_release(o2);
    fa_finish(s, call, st, o1, &e, dst, -1);
}

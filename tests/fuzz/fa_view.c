/* fuzz_api: the metadata-only views (reshape, squeeze, unsqueeze): they share
 * their input's data, so a transfer of either gives both away. */
#include <string.h>

#include "fa_state.h"
#include "fz_oracle.h"

void fa_act_reshape(fa_state *s)
{
    int x = fa_slot_pick(s), dst = fa_slot_pick(s);
    const bp_tensor *t = fa_tensor(s, x);
    int64_t n = bp_tensor_numel(t), buf[BP_MAX_RANK];
    int32_t rank;
    const int64_t *shape = buf;
    switch (fz_pick(&s->in, 4)) {
    case 0: rank = fa_rank(s); shape = fa_shape(s, rank, buf); break;
    case 1: rank = 1; buf[0] = fz_bool(&s->in) ? -1 : n; break;
    case 2: rank = 2; buf[0] = -1; buf[1] = fz_extent(&s->in); break;
    default:
        rank = bp_tensor_rank(t) < BP_MAX_RANK ? bp_tensor_rank(t) + 1 : 1;
        buf[0] = 1;
        for (int32_t k = 1; k < rank; k++)
            buf[k] = bp_tensor_rank(t) > 1 ? bp_tensor_shape(t)[k - 1] : n;
        if (rank == 1)
            buf[0] = n;
        break;
    }
    if (shape && rank > 0 && rank <= BP_MAX_RANK && fz_u8(&s->in) == 0xfe)
        buf[fz_pick(&s->in, (unsigned)rank)] = -1;
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    fa_expect_backend_of(s, &e, x);
    if (t) {
        int64_t dims[BP_MAX_RANK], known = 1;
        int32_t infer = -1;
        bool zero = false, overflow = false;
        if (rank < 0 || rank > BP_MAX_RANK || (rank > 0 && !shape))
            fa_invalid(&e, "bad rank or NULL shape");
        for (int32_t k = 0; e.verdict != FA_INVALID && k < rank; k++) {
            dims[k] = shape[k];
            if (shape[k] == -1) {
                if (infer >= 0)
                    fa_invalid(&e, "two -1 extents");
                infer = k;
            } else if (shape[k] < 0) {
                fa_invalid(&e, "negative extent");
            } else if (shape[k] == 0) {
                zero = true;
            } else if (__builtin_mul_overflow(known, shape[k], &known)) {
                overflow = true;
            }
        }
        if (e.verdict != FA_INVALID) {
            if (overflow && (!zero || infer >= 0))
                fa_invalid(&e, "the new shape overflows");
            else if (overflow)
                fa_unsure(&e); /* zero elements, absurd extents */
            else if (infer >= 0 && (zero || n % known != 0))
                fa_invalid(&e, "the -1 extent cannot be inferred");
            else if (infer >= 0)
                dims[infer] = n / known;
            else if ((zero ? 0 : known) != n)
                fa_invalid(&e, "element counts differ");
            if (e.verdict != FA_INVALID)
                fa_predict(&e, bp_tensor_dtype(t), rank, dims);
        }
    }
    bp_tensor *out = FA_GARBAGE; /* a view: nothing to allocate, always affordable */
    fz_mark();
    bp_status st = bp_reshape(t, rank, shape, &out);
    fa_finish(s, "bp_reshape", st, out, &e, dst, t ? s->slot[x].storage : -1);
}

void fa_act_squeeze(fa_state *s)
{
    int x = fa_slot_pick(s), dst = fa_slot_pick(s);
    uint8_t b = fz_u8(&s->in);
    int32_t n = b < 240 ? b % 4 : b == 240 ? -1 : (int32_t)(b - 240) % 9;
    int32_t axes[BP_MAX_RANK];
    for (int k = 0; k < BP_MAX_RANK; k++)
        axes[k] = fz_axis(&s->in);
    bool null_axes = fz_u8(&s->in) == 0xff;
    const bp_tensor *t = fa_tensor(s, x);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    fa_expect_backend_of(s, &e, x);
    if (n < 0 || (n > 0 && null_axes))
        fa_invalid(&e, "bad n_axes / axes");
    if (t && e.verdict != FA_INVALID) {
        int32_t rank = bp_tensor_rank(t), r = 0;
        const int64_t *sh = bp_tensor_shape(t);
        bool drop[BP_MAX_RANK] = {false};
        for (int32_t i = 0; i < n; i++) {
            int32_t a = axes[i];
            if (a < -rank || a >= rank) {
                fa_invalid(&e, "axis out of range");
                break;
            }
            a = a < 0 ? a + rank : a;
            if (sh[a] != 1)
                fa_invalid(&e, "squeezing an axis whose extent is not 1");
            if (drop[a])
                fa_unsure(&e); /* the same axis twice: unspecified */
            drop[a] = true;
        }
        int64_t shape[BP_MAX_RANK];
        for (int32_t k = 0; k < rank; k++)
            if (!(n == 0 ? sh[k] == 1 : drop[k]))
                shape[r++] = sh[k];
        fa_predict(&e, bp_tensor_dtype(t), r, shape);
    }
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_squeeze(t, n, null_axes ? NULL : axes, &out);
    fa_finish(s, "bp_squeeze", st, out, &e, dst, t ? s->slot[x].storage : -1);
}

void fa_act_unsqueeze(fa_state *s)
{
    int x = fa_slot_pick(s), dst = fa_slot_pick(s);
    int32_t axis = fz_axis(&s->in);
    const bp_tensor *t = fa_tensor(s, x);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    fa_expect_backend_of(s, &e, x);
    if (t) {
        int32_t rank = bp_tensor_rank(t);
        if (rank >= BP_MAX_RANK)
            fa_invalid(&e, "the result would have rank 9");
        else if (axis < -rank - 1 || axis > rank)
            fa_invalid(&e, "axis out of range");
        else {
            int32_t a = axis < 0 ? axis + rank + 1 : axis;
            int64_t shape[BP_MAX_RANK];
            for (int32_t k = 0, j = 0; k <= rank; k++)
                shape[k] = k == a ? 1 : bp_tensor_shape(t)[j++];
            fa_predict(&e, bp_tensor_dtype(t), rank + 1, shape);
        }
    }
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_unsqueeze(t, axis, &out);
    fa_finish(s, "bp_unsqueeze", st, out, &e, dst, t ? s->slot[x].storage : -1);
}

/* fuzz_api: movement ops (transpose, slice, concat, pad, gather, broadcast_to). */
#include <stdlib.h>
#include <string.h>

#include "fa_state.h"
#include "fz_oracle.h"

static const int64_t *fa_per_axis(fa_state *s, int64_t *buf)
{
    if (fz_u8(&s->in) == 0xff)
        return NULL;
    for (int k = 0; k < BP_MAX_RANK; k++) {
        int64_t v = fz_extent(&s->in);
        buf[k] = fz_u8(&s->in) & 1 && v != INT64_MIN ? -v : v;
    }
    return buf;
}

void fa_act_transpose(fa_state *s)
{
    int x = fa_slot_pick(s), dst = fa_slot_pick(s);
    int32_t pbuf[BP_MAX_RANK];
    bool null_perm = fz_u8(&s->in) < 64;
    bool shuffle = fz_bool(&s->in);
    const bp_tensor *t = fa_tensor(s, x);
    int32_t rank = bp_tensor_rank(t);
    for (int32_t k = 0; k < BP_MAX_RANK; k++)
        pbuf[k] = k < rank ? k : 0;
    for (int32_t k = rank - 1; k > 0 && shuffle; k--) { /* a permutation, or anything */
        int32_t j = (int32_t)fz_pick(&s->in, (unsigned)k + 1), tmp = pbuf[k];
        pbuf[k] = pbuf[j];
        pbuf[j] = tmp;
    }
    if (!shuffle)
        for (int32_t k = 0; k < rank; k++)
            pbuf[k] = fz_axis(&s->in);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    fa_expect_backend_of(s, &e, x);
    if (t) {
        int64_t shape[BP_MAX_RANK];
        bool seen[BP_MAX_RANK] = {false};
        for (int32_t k = 0; k < rank; k++) {
            int32_t p = null_perm ? rank - 1 - k : pbuf[k];
            if (p < -rank || p >= rank) {
                fa_invalid(&e, "perm entry out of range");
                break;
            }
            p = p < 0 ? p + rank : p;
            if (seen[p])
                fa_invalid(&e, "perm is not a permutation");
            seen[p] = true;
            shape[k] = bp_tensor_shape(t)[p];
        }
        fa_predict(&e, bp_tensor_dtype(t), rank, shape);
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_transpose(t, null_perm ? NULL : pbuf, &out);
    fa_finish(s, "bp_transpose", st, out, &e, dst, -1);
}

/* ONNX Slice as ops.h states it (negative counts from the end, then clamp;
 * hi last, so that an empty axis stays empty). */
static int64_t fa_clamp(int64_t i, int64_t dim, int64_t lo, int64_t hi)
{
    if (i < 0)
        i += dim;
    if (i < lo)
        i = lo;
    return i > hi ? hi : i;
}

void fa_act_slice(fa_state *s)
{
    int x = fa_slot_pick(s), dst = fa_slot_pick(s);
    int64_t b0[BP_MAX_RANK], b1[BP_MAX_RANK], b2[BP_MAX_RANK];
    const int64_t *starts = fa_per_axis(s, b0), *stops = fa_per_axis(s, b1);
    const int64_t *steps = fa_per_axis(s, b2);
    if (steps && fz_bool(&s->in)) /* mostly small steps */
        for (int k = 0; k < BP_MAX_RANK; k++)
            b2[k] = b2[k] % 4 ? b2[k] % 4 : 1;
    const bp_tensor *t = fa_tensor(s, x);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    fa_expect_backend_of(s, &e, x);
    if (t) {
        int32_t rank = bp_tensor_rank(t);
        int64_t shape[BP_MAX_RANK];
        if (rank > 0 && !starts)
            fa_invalid(&e, "starts is NULL");
        for (int32_t k = 0; k < rank && starts; k++) {
            int64_t dim = bp_tensor_shape(t)[k], step = steps ? steps[k] : 1;
            if (step == 0) {
                fa_invalid(&e, "a step is 0");
                break;
            }
            bool back = step < 0;
            int64_t b = fa_clamp(starts[k], dim, 0, back ? dim - 1 : dim);
            int64_t end = !stops ? (back ? -1 : dim)
                                 : fa_clamp(stops[k], dim, back ? -1 : 0, back ? dim - 1 : dim);
            uint64_t mag = back ? 0 - (uint64_t)step : (uint64_t)step;
            int64_t span = back ? b - end : end - b;
            shape[k] = span > 0 ? (int64_t)((uint64_t)(span - 1) / mag + 1) : 0;
            fz_trace("  axis %d of %lld: start %lld stop %lld step %lld", (int)k, (long long)dim,
                     (long long)starts[k], stops ? (long long)stops[k] : 0LL, (long long)step);
        }
        fa_predict(&e, bp_tensor_dtype(t), rank, shape);
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_slice(t, starts, stops, steps, &out);
    fa_finish(s, "bp_slice", st, out, &e, dst, -1);
}

void fa_act_concat(fa_state *s)
{
    int32_t n = (int32_t)fz_pick(&s->in, 6) - (fz_u8(&s->in) == 0xff ? 7 : 0);
    int idx[5] = {0};
    const bp_tensor *xs[5] = {NULL};
    for (int i = 0; i < 5; i++) {
        idx[i] = fa_slot_pick(s);
        xs[i] = fa_tensor(s, idx[i]);
    }
    bool null_xs = fz_u8(&s->in) == 0xff;
    int32_t axis = fz_axis(&s->in);
    int dst = fa_slot_pick(s);
    fa_expect e = fa_expect_valid();
    if (n <= 0 || null_xs)
        fa_invalid(&e, "nothing to join");
    for (int32_t i = 0; i < n && i < 5; i++) {
        fa_expect_input(s, &e, idx[i]);
        fa_expect_same_backend(s, &e, idx[0], idx[i]);
    }
    if (n > 0)
        fa_expect_backend_of(s, &e, idx[0]);
    if (e.verdict != FA_INVALID) {
        const bp_tensor *x0 = xs[0];
        int32_t rank = bp_tensor_rank(x0);
        int64_t shape[BP_MAX_RANK];
        memcpy(shape, bp_tensor_shape(x0), (size_t)rank * sizeof(int64_t));
        int32_t ax = axis < 0 ? axis + rank : axis;
        if (axis < -rank || axis >= rank || rank == 0)
            fa_invalid(&e, "axis out of range");
        for (int32_t i = 1; i < n && e.verdict != FA_INVALID; i++) {
            if (bp_tensor_dtype(xs[i]) != bp_tensor_dtype(x0))
                fa_invalid(&e, "dtypes differ");
            bool same = bp_tensor_rank(xs[i]) == rank;
            for (int32_t k = 0; same && k < rank; k++)
                same = k == ax || bp_tensor_shape(xs[i])[k] == shape[k];
            if (!same)
                fa_invalid(&e, "shapes differ off the axis");
            else if (__builtin_add_overflow(shape[ax], bp_tensor_shape(xs[i])[ax], &shape[ax]))
                fa_invalid(&e, "the joined extent overflows");
        }
        fa_predict(&e, bp_tensor_dtype(x0), rank, shape);
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_concat(n, null_xs ? NULL : xs, axis, &out);
    fa_finish(s, "bp_concat", st, out, &e, dst, -1);
}

void fa_act_pad(fa_state *s)
{
    int x = fa_slot_pick(s), dst = fa_slot_pick(s);
    int64_t b0[BP_MAX_RANK], b1[BP_MAX_RANK];
    const int64_t *before = fa_per_axis(s, b0), *after = fa_per_axis(s, b1);
    double value = fz_double(&s->in);
    const bp_tensor *t = fa_tensor(s, x);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    fa_expect_backend_of(s, &e, x);
    if (t) {
        int32_t rank = bp_tensor_rank(t);
        int64_t shape[BP_MAX_RANK];
        if (rank > 0 && (!before || !after))
            fa_invalid(&e, "before or after is NULL");
        for (int32_t k = 0; k < rank && before && after; k++) {
            if (before[k] < 0 || after[k] < 0) {
                fa_invalid(&e, "a negative pad");
                break;
            }
            if (__builtin_add_overflow(before[k], bp_tensor_shape(t)[k], &shape[k]) ||
                __builtin_add_overflow(shape[k], after[k], &shape[k])) {
                fa_invalid(&e, "the padded extent overflows");
                break;
            }
        }
        fa_predict(&e, bp_tensor_dtype(t), rank, shape);
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_pad(t, before, after, value, &out);
    fa_finish(s, "bp_pad", st, out, &e, dst, -1);
}

/* Whether every index (read through the library) lies in [-dim, dim). */
static bool fa_indices_in_range(const bp_tensor *ind, int64_t dim)
{
    int64_t n = bp_tensor_numel(ind);
    size_t bytes = bp_tensor_nbytes(ind);
    if (n == 0)
        return true;
    void *host = malloc(bytes);
    if (!host || bp_tensor_to_host(ind, host, bytes) != BP_OK)
        fz_fail("cannot read %lld gather indices: %s", (long long)n, bp_last_error());
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++) {
        int64_t v;
        if (bp_tensor_dtype(ind) == BP_I32) {
            int32_t w;
            memcpy(&w, (char *)host + 4 * i, 4);
            v = w;
        } else {
            memcpy(&v, (char *)host + 8 * i, 8);
        }
        ok = v >= -dim && v < dim;
    }
    free(host);
    return ok;
}

void fa_act_gather(fa_state *s)
{
    int x = fa_slot_pick(s), ind = fa_slot_pick(s), dst = fa_slot_pick(s);
    int32_t axis = fz_axis(&s->in);
    const bp_tensor *t = fa_tensor(s, x), *ti = fa_tensor(s, ind);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    fa_expect_input(s, &e, ind);
    fa_expect_same_backend(s, &e, x, ind);
    fa_expect_backend_of(s, &e, x);
    if (e.verdict != FA_INVALID) {
        int32_t rank = bp_tensor_rank(t), ri = bp_tensor_rank(ti);
        if (bp_tensor_dtype(ti) != BP_I32 && bp_tensor_dtype(ti) != BP_I64)
            fa_invalid(&e, "indices are not i32 or i64");
        if (axis < -rank || axis >= rank || rank == 0)
            fa_invalid(&e, "axis out of range");
        else if (rank - 1 + ri > BP_MAX_RANK)
            fa_invalid(&e, "the result's rank is over 8");
        if (e.verdict != FA_INVALID) {
            int32_t ax = axis < 0 ? axis + rank : axis, r = 0;
            int64_t shape[BP_MAX_RANK];
            for (int32_t k = 0; k < ax; k++)
                shape[r++] = bp_tensor_shape(t)[k];
            for (int32_t k = 0; k < ri; k++)
                shape[r++] = bp_tensor_shape(ti)[k];
            for (int32_t k = ax + 1; k < rank; k++)
                shape[r++] = bp_tensor_shape(t)[k];
            fa_predict(&e, bp_tensor_dtype(t), r, shape);
            if (e.verdict != FA_INVALID && fa_affordable(&e) &&
                !fa_indices_in_range(ti, bp_tensor_shape(t)[ax]))
                fa_invalid(&e, "an index is out of range");
        }
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_gather(t, ti, axis, &out);
    fa_finish(s, "bp_gather", st, out, &e, dst, -1);
}

void fa_act_broadcast(fa_state *s)
{
    int x = fa_slot_pick(s), dst = fa_slot_pick(s);
    int32_t rank = fa_rank(s);
    int64_t buf[BP_MAX_RANK];
    const int64_t *shape = fa_shape(s, rank, buf);
    const bp_tensor *t = fa_tensor(s, x);
    if (t && shape && fz_bool(&s->in)) /* often: a target built from x's own shape */
        for (int32_t k = 0, j = bp_tensor_rank(t) - (rank < 0 ? 0 : rank); k < rank && k < BP_MAX_RANK; k++, j++)
            if (j >= 0 && buf[k] < 9 && buf[k] % 2 == 0)
                buf[k] = bp_tensor_shape(t)[j];
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    fa_expect_backend_of(s, &e, x);
    if (t) {
        fa_predict(&e, bp_tensor_dtype(t), rank, shape);
        if (e.verdict != FA_INVALID) {
            int32_t rx = bp_tensor_rank(t);
            bool ok = rank >= rx;
            for (int32_t j = rx - 1, k = rank - 1; ok && j >= 0; j--, k--)
                ok = bp_tensor_shape(t)[j] == 1 || bp_tensor_shape(t)[j] == shape[k];
            if (!ok)
                fa_invalid(&e, "x does not broadcast to the target");
        }
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_broadcast_to(t, rank, shape, &out);
    fa_finish(s, "bp_broadcast_to", st, out, &e, dst, -1);
}

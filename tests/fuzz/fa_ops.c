/* fuzz_api: elementwise ops, reductions, softmax, matmul, cast. */
#include <string.h>

#include "fa_state.h"
#include "fz_oracle.h"

#define FA_RANGE(first, last) ((unsigned)(BP_OP_##last - BP_OP_##first + 1))

/* An op code: mostly one of [first, first + n), sometimes anything. */
static bp_op fa_op(fa_state *s, bp_op first, unsigned n)
{
    static const int odd[] = {-1, BP_OP_COUNT, BP_OP_COUNT + 1, 1000, -2147483647 - 1,
                              BP_OP_ADD, BP_OP_SUM, BP_OP_NEG, BP_OP_MATMUL, BP_OP_FILL,
                              BP_OP_SOFTMAX, BP_OP_WHERE, BP_OP_COPY, BP_OP_CAST, BP_OP_GATHER,
                              BP_OP_RANDOM_NORMAL};
    uint8_t b = fz_u8(&s->in);
    if (b < 240)
        return (bp_op)(first + b % n);
    return (bp_op)odd[b - 240];
}

static bool fa_in_family(bp_op op, bp_op_family fam)
{
    return (unsigned)op < (unsigned)BP_OP_COUNT && bp_op_family_of(op) == fam;
}

/* NumPy broadcasting of two shapes. */
static bool fa_broadcast(int32_t ra, const int64_t *sa, int32_t rb, const int64_t *sb,
                         int32_t *r, int64_t *out)
{
    *r = ra > rb ? ra : rb;
    for (int32_t k = 0; k < *r; k++) {
        int64_t da = k < *r - ra ? 1 : sa[k - (*r - ra)];
        int64_t db = k < *r - rb ? 1 : sb[k - (*r - rb)];
        if (da != db && da != 1 && db != 1)
            return false;
        out[k] = da == 1 ? db : da;
    }
    return true;
}

static bp_dtype fa_dt(const bp_tensor *t) { return bp_tensor_dtype(t); }

void fa_act_unary(fa_state *s)
{
    bp_op op = fa_op(s, BP_OP_NEG, FA_RANGE(NEG, LOGICAL_NOT));
    int x = fa_slot_pick(s), dst = fa_slot_pick(s);
    const bp_tensor *t = fa_tensor(s, x);
    fa_expect e = fa_expect_valid();
    if (!fa_in_family(op, BP_FAMILY_UNARY))
        fa_invalid(&e, "not a unary op code");
    fa_expect_input(s, &e, x);
    fa_expect_backend_of(s, &e, x);
    if (t) {
        bp_dtype dt = fa_dt(t);
        bool numeric = op == BP_OP_NEG || op == BP_OP_ABS || op == BP_OP_SIGN || op == BP_OP_RELU;
        if (op == BP_OP_LOGICAL_NOT ? dt != BP_BOOL : numeric ? dt == BP_BOOL : !bp_dtype_is_float(dt))
            fa_invalid(&e, "a dtype the op does not accept");
        fa_predict(&e, op == BP_OP_ISNAN || op == BP_OP_ISINF ? BP_BOOL : dt, bp_tensor_rank(t),
                   bp_tensor_shape(t));
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_unary(op, t, &out);
    fa_finish(s, "bp_unary", st, out, &e, dst, -1);
}

void fa_act_binary(fa_state *s)
{
    bp_op op = fa_op(s, BP_OP_ADD, FA_RANGE(ADD, LOGICAL_XOR));
    int a = fa_slot_pick(s), b = fa_slot_pick(s), dst = fa_slot_pick(s);
    const bp_tensor *ta = fa_tensor(s, a), *tb = fa_tensor(s, b);
    fa_expect e = fa_expect_valid();
    if (!fa_in_family(op, BP_FAMILY_BINARY))
        fa_invalid(&e, "not a binary op code");
    fa_expect_input(s, &e, a);
    fa_expect_input(s, &e, b);
    fa_expect_same_backend(s, &e, a, b);
    fa_expect_backend_of(s, &e, a);
    if (ta && tb) {
        bp_dtype dt = fa_dt(ta);
        bool cmp = op >= BP_OP_EQ && op <= BP_OP_GE;
        bool logical = op >= BP_OP_LOGICAL_AND && op <= BP_OP_LOGICAL_XOR;
        if (fa_dt(tb) != dt)
            fa_invalid(&e, "operand dtypes differ");
        if (logical ? dt != BP_BOOL : !cmp && dt == BP_BOOL)
            fa_invalid(&e, "a dtype the op does not accept");
        int32_t r;
        int64_t shape[BP_MAX_RANK];
        if (!fa_broadcast(bp_tensor_rank(ta), bp_tensor_shape(ta), bp_tensor_rank(tb),
                          bp_tensor_shape(tb), &r, shape))
            fa_invalid(&e, "shapes do not broadcast");
        else
            fa_predict(&e, cmp ? BP_BOOL : dt, r, shape);
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_binary(op, ta, tb, &out);
    fa_finish(s, "bp_binary", st, out, &e, dst, -1);
}

void fa_act_where(fa_state *s)
{
    int c = fa_slot_pick(s), a = fa_slot_pick(s), b = fa_slot_pick(s), dst = fa_slot_pick(s);
    const bp_tensor *tc = fa_tensor(s, c), *ta = fa_tensor(s, a), *tb = fa_tensor(s, b);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, c);
    fa_expect_input(s, &e, a);
    fa_expect_input(s, &e, b);
    fa_expect_same_backend(s, &e, c, a);
    fa_expect_same_backend(s, &e, a, b);
    fa_expect_backend_of(s, &e, a);
    if (tc && ta && tb) {
        if (fa_dt(tc) != BP_BOOL)
            fa_invalid(&e, "cond is not bool");
        if (fa_dt(ta) != fa_dt(tb))
            fa_invalid(&e, "a and b dtypes differ");
        int32_t r1, r;
        int64_t s1[BP_MAX_RANK], shape[BP_MAX_RANK];
        if (!fa_broadcast(bp_tensor_rank(tc), bp_tensor_shape(tc), bp_tensor_rank(ta),
                          bp_tensor_shape(ta), &r1, s1) ||
            !fa_broadcast(r1, s1, bp_tensor_rank(tb), bp_tensor_shape(tb), &r, shape))
            fa_invalid(&e, "shapes do not broadcast");
        else
            fa_predict(&e, fa_dt(ta), r, shape);
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_where(tc, ta, tb, &out);
    fa_finish(s, "bp_where", st, out, &e, dst, -1);
}

/* axes for reduce / squeeze: n (maybe negative or over 8) and values. */
static const int32_t *fa_axes(fa_state *s, int32_t *n, int32_t *buf)
{
    uint8_t b = fz_u8(&s->in);
    *n = b < 200 ? b % 4 : b < 250 ? b % 10 : b == 250 ? -1 : b == 251 ? INT32_MIN : 64;
    for (int i = 0; i < 16; i++)
        buf[i] = i < 8 ? fz_axis(&s->in) : 0;
    if (fz_u8(&s->in) == 0xff)
        return NULL;
    if (*n > 16)
        *n = 16; /* the harness's array: the library reads n entries */
    return buf;
}

void fa_act_reduce(fa_state *s)
{
    bp_op op = fa_op(s, BP_OP_SUM, FA_RANGE(SUM, LOGSUMEXP));
    int x = fa_slot_pick(s), dst = fa_slot_pick(s);
    int32_t n, axbuf[16];
    const int32_t *axes = fa_axes(s, &n, axbuf);
    bool keepdims = fz_bool(&s->in);
    const bp_tensor *t = fa_tensor(s, x);
    fa_expect e = fa_expect_valid();
    if (!fa_in_family(op, BP_FAMILY_REDUCE))
        fa_invalid(&e, "not a reduction op code");
    fa_expect_input(s, &e, x);
    fa_expect_backend_of(s, &e, x);
    if (t) {
        bp_dtype dt = fa_dt(t);
        int32_t rank = bp_tensor_rank(t);
        const int64_t *sh = bp_tensor_shape(t);
        if (dt == BP_BOOL || ((op == BP_OP_MEAN || op == BP_OP_LOGSUMEXP) && !bp_dtype_is_float(dt)))
            fa_invalid(&e, "a dtype the reduction does not accept");
        bool red[BP_MAX_RANK] = {false};
        if (n < 0 || (n > 0 && !axes))
            fa_invalid(&e, "bad n_axes / axes");
        for (int32_t i = 0; i < n && axes; i++) {
            int32_t a = axes[i];
            if (a < -rank || a >= rank) {
                fa_invalid(&e, "axis out of range");
                break;
            }
            a = a < 0 ? a + rank : a;
            if (red[a])
                fa_invalid(&e, "an axis given twice");
            red[a] = true;
        }
        int64_t shape[BP_MAX_RANK], kept = 1, reduced = 1;
        int32_t r = 0;
        for (int32_t k = 0; k < rank; k++) {
            if (n == 0 || red[k]) {
                reduced = sh[k] == 0 ? 0 : reduced;
                if (keepdims)
                    shape[r++] = 1;
            } else {
                kept = sh[k] == 0 ? 0 : kept;
                shape[r++] = sh[k];
            }
        }
        bool arg = op == BP_OP_ARGMAX || op == BP_OP_ARGMIN;
        if ((arg || op == BP_OP_MAX || op == BP_OP_MIN) && reduced == 0 && kept != 0)
            fa_invalid(&e, "max/min/argmax/argmin over zero elements");
        fa_predict(&e, arg ? BP_I64 : dt, r, shape);
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_reduce(op, t, n, axes, keepdims, &out);
    fa_finish(s, "bp_reduce", st, out, &e, dst, -1);
}

void fa_act_softmax(fa_state *s)
{
    bool log = fz_bool(&s->in);
    int x = fa_slot_pick(s), dst = fa_slot_pick(s);
    int32_t axis = fz_axis(&s->in);
    const bp_tensor *t = fa_tensor(s, x);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    fa_expect_backend_of(s, &e, x);
    if (t) {
        int32_t rank = bp_tensor_rank(t);
        if (!bp_dtype_is_float(fa_dt(t)))
            fa_invalid(&e, "softmax of a non-float dtype");
        if (axis < -rank || axis >= rank || rank == 0)
            fa_invalid(&e, "axis out of range");
        fa_predict(&e, fa_dt(t), rank, bp_tensor_shape(t));
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = log ? bp_log_softmax(t, axis, &out) : bp_softmax(t, axis, &out);
    fa_finish(s, log ? "bp_log_softmax" : "bp_softmax", st, out, &e, dst, -1);
}

/* NumPy matmul's result shape; false (with e invalid) if the shapes do not fit. */
static void fa_matmul_shape(fa_expect *e, const bp_tensor *a, const bp_tensor *b)
{
    int32_t ra = bp_tensor_rank(a), rb = bp_tensor_rank(b);
    if (ra == 0 || rb == 0) {
        fa_invalid(e, "matmul of a scalar");
        return;
    }
    int64_t pa[BP_MAX_RANK + 1], pb[BP_MAX_RANK + 1];
    memcpy(pa + (ra == 1), bp_tensor_shape(a), (size_t)ra * sizeof(int64_t));
    memcpy(pb, bp_tensor_shape(b), (size_t)rb * sizeof(int64_t));
    bool avec = ra == 1, bvec = rb == 1;
    if (avec)
        pa[0] = 1, ra = 2;
    if (bvec)
        pb[1] = 1, rb = 2;
    int64_t M = pa[ra - 2], K = pa[ra - 1], N = pb[rb - 1];
    int32_t br;
    int64_t shape[BP_MAX_RANK + 2];
    if (pb[rb - 2] != K) {
        fa_invalid(e, "inner dimensions differ");
        return;
    }
    if (!fa_broadcast(ra - 2, pa, rb - 2, pb, &br, shape)) {
        fa_invalid(e, "batch dimensions do not broadcast");
        return;
    }
    int64_t batch = 1, flops;
    for (int32_t k = 0; k < br; k++)
        batch = shape[k] == 0 ? 0 : batch;
    int32_t r = br;
    if (!avec)
        shape[r++] = M;
    if (!bvec)
        shape[r++] = N;
    fa_predict(e, bp_tensor_dtype(a), r, shape);
    /* the work: batch * M * N * K multiply-adds (saturating) */
    for (int32_t k = 0; k < br; k++)
        if (__builtin_mul_overflow(batch, shape[k], &batch))
            batch = INT64_MAX;
    if (__builtin_mul_overflow(batch, M, &flops) || __builtin_mul_overflow(flops, N, &flops) ||
        __builtin_mul_overflow(flops, K, &flops))
        flops = INT64_MAX;
    e->flops = flops;
}

void fa_act_matmul(fa_state *s)
{
    int a = fa_slot_pick(s), b = fa_slot_pick(s), dst = fa_slot_pick(s);
    const bp_tensor *ta = fa_tensor(s, a), *tb = fa_tensor(s, b);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, a);
    fa_expect_input(s, &e, b);
    fa_expect_same_backend(s, &e, a, b);
    fa_expect_backend_of(s, &e, a);
    if (ta && tb) {
        if (fa_dt(ta) != fa_dt(tb))
            fa_invalid(&e, "operand dtypes differ");
        if (fa_dt(ta) == BP_BOOL)
            fa_invalid(&e, "matmul of bool");
        fa_matmul_shape(&e, ta, tb);
    }
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_matmul(ta, tb, &out);
    fa_finish(s, "bp_matmul", st, out, &e, dst, -1);
}

void fa_act_cast(fa_state *s)
{
    int x = fa_slot_pick(s), dst = fa_slot_pick(s);
    int dtype = fz_dtype(&s->in);
    const bp_tensor *t = fa_tensor(s, x);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    fa_expect_backend_of(s, &e, x);
    if (!bp_dtype_valid(dtype))
        fa_invalid(&e, "not a dtype");
    if (t)
        fa_predict(&e, dtype, bp_tensor_rank(t), bp_tensor_shape(t));
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_cast(t, (bp_dtype)dtype, &out);
    fa_finish(s, "bp_cast", st, out, &e, dst, -1);
}

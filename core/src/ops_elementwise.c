/* backplane core: elementwise ops (UNARY, BINARY, WHERE families).
 *
 * Validation only: dtypes, broadcasting, backend identity. The arithmetic is
 * the plugin's unary / binary / where entry, called with views already
 * broadcast to the output's shape. */
#include <stdio.h>

#include "internal.h"

static bp__dtype_class unary_class(bp_op op)
{
    switch (op) {
    case BP_OP_NEG: case BP_OP_ABS: case BP_OP_SIGN: case BP_OP_RELU:
        return BP__ACCEPT_NUMERIC;
    case BP_OP_LOGICAL_NOT:
        return BP__ACCEPT_BOOL;
    default:
        return BP__ACCEPT_FLOAT;
    }
}

static bp__dtype_class binary_class(bp_op op)
{
    switch (op) {
    case BP_OP_EQ: case BP_OP_NE: case BP_OP_LT: case BP_OP_LE: case BP_OP_GT: case BP_OP_GE:
        return BP__ACCEPT_ANY;
    case BP_OP_LOGICAL_AND: case BP_OP_LOGICAL_OR: case BP_OP_LOGICAL_XOR:
        return BP__ACCEPT_BOOL;
    default:
        return BP__ACCEPT_NUMERIC;
    }
}

static bool binary_is_comparison(bp_op op)
{
    return op == BP_OP_EQ || op == BP_OP_NE || op == BP_OP_LT || op == BP_OP_LE ||
           op == BP_OP_GT || op == BP_OP_GE;
}

/* The op code must exist and belong to `family`, else INVALID_ARGUMENT. */
static bp_status check_family(const char *entry, bp_op op, bp_op_family family, const char *what)
{
    if ((unsigned)op >= (unsigned)BP_OP_COUNT || bp_op_family_of(op) != family)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: op %d (%s) is not a %s op; pass one of the %s op codes "
                         "from opcodes.h",
                         entry, (int)op, bp_op_name(op), what, what);
    return BP_OK;
}

bp_status bp_unary(bp_op op, const bp_tensor *x, bp_tensor **out)
{
    BP__TRY(bp__check_out("bp_unary", out));
    BP__TRY(check_family("bp_unary", op, BP_FAMILY_UNARY, "unary"));
    char fn[48];
    bp__op_fn(op, fn, sizeof fn);
    BP__TRY(bp__check_input(fn, "x", x));
    BP__TRY(bp__check_dtype(fn, bp_op_name(op), "x", x->dtype, unary_class(op)));

    bp_backend *be = bp__backend_of(x);
    BP__TRY(bp__require_op(be, op, x->dtype, BP__HAS(be->vt, unary)));

    bp_dtype out_dtype = (op == BP_OP_ISNAN || op == BP_OP_ISINF) ? BP_BOOL : x->dtype;
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, out_dtype, x->rank, x->shape, &res));
    bp_view vx, vo;
    bp__view_dense(x, &vx);
    bp__view_dense(res, &vo);
    return bp__deliver(res, BP__OP_CALL(be, bp_op_name(op), unary, op, &vx, &vo), out);
}

bp_status bp_binary(bp_op op, const bp_tensor *a, const bp_tensor *b, bp_tensor **out)
{
    BP__TRY(bp__check_out("bp_binary", out));
    BP__TRY(check_family("bp_binary", op, BP_FAMILY_BINARY, "binary"));
    char fn[48];
    bp__op_fn(op, fn, sizeof fn);
    BP__TRY(bp__check_input(fn, "a", a));
    BP__TRY(bp__check_input(fn, "b", b));
    BP__TRY(bp__check_same_backend(fn, 2, (const bp_tensor *const[]){a, b},
                                   (const char *const[]){"a", "b"}));
    if (a->dtype != b->dtype)
        return bp__error(BP_ERR_DTYPE,
                         "%s: a is %s but b is %s; operands must share a dtype (no implicit "
                         "promotion): convert one with bp_cast first",
                         fn, bp_dtype_name(a->dtype), bp_dtype_name(b->dtype));
    BP__TRY(bp__check_dtype(fn, bp_op_name(op), "a", a->dtype, binary_class(op)));

    int32_t rank = 0;
    int64_t shape[BP_MAX_RANK];
    BP__TRY(bp__broadcast_shapes(fn, a->rank, a->shape, b->rank, b->shape, &rank, shape));

    bp_backend *be = bp__backend_of(a);
    BP__TRY(bp__require_op(be, op, a->dtype, BP__HAS(be->vt, binary)));

    bp_dtype out_dtype = binary_is_comparison(op) ? BP_BOOL : a->dtype;
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, out_dtype, rank, shape, &res));
    bp_view va, vb, vo;
    bp__view_broadcast(a, rank, shape, &va);
    bp__view_broadcast(b, rank, shape, &vb);
    bp__view_dense(res, &vo);
    return bp__deliver(res, BP__OP_CALL(be, bp_op_name(op), binary, op, &va, &vb, &vo), out);
}

bp_status bp_where(const bp_tensor *cond, const bp_tensor *a, const bp_tensor *b, bp_tensor **out)
{
    static const char fn[] = "bp_where";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "cond", cond));
    BP__TRY(bp__check_input(fn, "a", a));
    BP__TRY(bp__check_input(fn, "b", b));
    BP__TRY(bp__check_same_backend(fn, 3, (const bp_tensor *const[]){cond, a, b},
                                   (const char *const[]){"cond", "a", "b"}));
    if (cond->dtype != BP_BOOL)
        return bp__error(BP_ERR_DTYPE,
                         "%s: cond is %s but must be bool; make it with a comparison "
                         "(bp_ne(x, zeros)) or bp_cast(cond, BP_BOOL)",
                         fn, bp_dtype_name(cond->dtype));
    if (a->dtype != b->dtype)
        return bp__error(BP_ERR_DTYPE,
                         "%s: a is %s but b is %s; they must share a dtype: convert one "
                         "with bp_cast first",
                         fn, bp_dtype_name(a->dtype), bp_dtype_name(b->dtype));

    int32_t r1 = 0, rank = 0;
    int64_t s1[BP_MAX_RANK], shape[BP_MAX_RANK];
    BP__TRY(bp__broadcast_shapes(fn, cond->rank, cond->shape, a->rank, a->shape, &r1, s1));
    BP__TRY(bp__broadcast_shapes(fn, r1, s1, b->rank, b->shape, &rank, shape));

    bp_backend *be = bp__backend_of(a);
    BP__TRY(bp__require_op(be, BP_OP_WHERE, a->dtype, BP__HAS(be->vt, where)));

    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, a->dtype, rank, shape, &res));
    bp_view vc, va, vb, vo;
    bp__view_broadcast(cond, rank, shape, &vc);
    bp__view_broadcast(a, rank, shape, &va);
    bp__view_broadcast(b, rank, shape, &vb);
    bp__view_dense(res, &vo);
    return bp__deliver(res, BP__OP_CALL(be, "where", where, &vc, &va, &vb, &vo), out);
}

/* bp_neg ... bp_logical_xor, generated from the one op list so they never
 * drift; ops.h declares each in writing (tests/test_api.c checks the two). */
#define BP__DEF_OP(NAME, name, FAMILY) BP__DEF_OP_##FAMILY(NAME, name)
#define BP__DEF_OP_UNARY(NAME, name)                                 \
    BP_API bp_status bp_##name(const bp_tensor *x, bp_tensor **out) \
    {                                                                \
        return bp_unary(BP_OP_##NAME, x, out);                       \
    }
#define BP__DEF_OP_BINARY(NAME, name)                                                      \
    BP_API bp_status bp_##name(const bp_tensor *a, const bp_tensor *b, bp_tensor **out) \
    {                                                                                      \
        return bp_binary(BP_OP_##NAME, a, b, out);                                         \
    }
#define BP__DEF_OP_WHERE(NAME, name)
#define BP__DEF_OP_REDUCE(NAME, name)
#define BP__DEF_OP_MATMUL(NAME, name)
#define BP__DEF_OP_MOVEMENT(NAME, name)
#define BP__DEF_OP_GATHER(NAME, name)
#define BP__DEF_OP_SOFTMAX(NAME, name)
#define BP__DEF_OP_CREATION(NAME, name)
#define BP__DEF_OP_RANDOM(NAME, name)
BP_OP_LIST(BP__DEF_OP)

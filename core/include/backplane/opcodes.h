/* backplane: operation codes, shared by the public API and the plugin ABI.
 *
 * Ops come in families; each family is one plugin entry, and the op code says
 * which member of the family is wanted. A new op appends a code (a minor ABI
 * bump), never renumbers one. */
#ifndef BACKPLANE_OPCODES_H
#define BACKPLANE_OPCODES_H

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, name, FAMILY). Order is the numbering: append only. */
#define BP_OP_LIST(X)                                                      \
    /* unary: out = f(x), same shape; out dtype = x dtype unless noted */  \
    X(NEG, neg, UNARY)                                                     \
    X(ABS, abs, UNARY)                                                     \
    X(SIGN, sign, UNARY)                                                   \
    X(EXP, exp, UNARY)                                                     \
    X(LOG, log, UNARY)                                                     \
    X(SQRT, sqrt, UNARY)                                                   \
    X(RSQRT, rsqrt, UNARY)                                                 \
    X(RECIPROCAL, reciprocal, UNARY)                                       \
    X(SIN, sin, UNARY)                                                     \
    X(COS, cos, UNARY)                                                     \
    X(TAN, tan, UNARY)                                                     \
    X(TANH, tanh, UNARY)                                                   \
    X(SIGMOID, sigmoid, UNARY)                                             \
    X(RELU, relu, UNARY)                                                   \
    X(GELU, gelu, UNARY)                                                   \
    X(ERF, erf, UNARY)                                                     \
    X(FLOOR, floor, UNARY)                                                 \
    X(CEIL, ceil, UNARY)                                                   \
    X(ROUND, round, UNARY)                                                 \
    X(ISNAN, isnan, UNARY)            /* -> bool */                        \
    X(ISINF, isinf, UNARY)            /* -> bool */                        \
    X(LOGICAL_NOT, logical_not, UNARY)                                     \
    /* binary: out = f(a, b), operands broadcast to out's shape */         \
    X(ADD, add, BINARY)                                                    \
    X(SUB, sub, BINARY)                                                    \
    X(MUL, mul, BINARY)                                                    \
    X(DIV, div, BINARY)                                                    \
    X(POW, pow, BINARY)                                                    \
    X(MAXIMUM, maximum, BINARY)                                            \
    X(MINIMUM, minimum, BINARY)                                            \
    X(MOD, mod, BINARY)                                                    \
    X(EQ, eq, BINARY)                 /* -> bool */                        \
    X(NE, ne, BINARY)                 /* -> bool */                        \
    X(LT, lt, BINARY)                 /* -> bool */                        \
    X(LE, le, BINARY)                 /* -> bool */                        \
    X(GT, gt, BINARY)                 /* -> bool */                        \
    X(GE, ge, BINARY)                 /* -> bool */                        \
    X(LOGICAL_AND, logical_and, BINARY)                                    \
    X(LOGICAL_OR, logical_or, BINARY)                                      \
    X(LOGICAL_XOR, logical_xor, BINARY)                                    \
    X(WHERE, where, WHERE)                                                 \
    /* reductions over the trailing n_reduce axes of the view */           \
    X(SUM, sum, REDUCE)                                                    \
    X(PROD, prod, REDUCE)                                                  \
    X(MEAN, mean, REDUCE)                                                  \
    X(MAX, max, REDUCE)                                                    \
    X(MIN, min, REDUCE)                                                    \
    X(ARGMAX, argmax, REDUCE)         /* -> i64 */                         \
    X(ARGMIN, argmin, REDUCE)         /* -> i64 */                         \
    X(LOGSUMEXP, logsumexp, REDUCE)                                        \
    X(MATMUL, matmul, MATMUL)                                              \
    /* movement: strided element copy, the core computes the views */      \
    X(COPY, copy, MOVEMENT)           /* contiguous/strided copy */        \
    X(TRANSPOSE, transpose, MOVEMENT)                                      \
    X(SLICE, slice, MOVEMENT)                                              \
    X(CONCAT, concat, MOVEMENT)                                            \
    X(BROADCAST_TO, broadcast_to, MOVEMENT)                                \
    X(PAD, pad, MOVEMENT)                                                  \
    X(CAST, cast, MOVEMENT)           /* src and dst dtypes differ */      \
    X(GATHER, gather, GATHER)                                              \
    X(SOFTMAX, softmax, SOFTMAX)                                           \
    X(LOG_SOFTMAX, log_softmax, SOFTMAX)                                   \
    /* creation */                                                         \
    X(FILL, fill, CREATION)                                                \
    X(ARANGE, arange, CREATION)                                            \
    X(RANDOM_UNIFORM, random_uniform, RANDOM)                              \
    X(RANDOM_NORMAL, random_normal, RANDOM)

typedef enum bp_op {
#define BP__OP_ENUM(NAME, name, FAMILY) BP_OP_##NAME,
    BP_OP_LIST(BP__OP_ENUM)
#undef BP__OP_ENUM
    BP_OP_COUNT /* not an op: the number of codes in this header */
} bp_op;

typedef enum bp_op_family {
    BP_FAMILY_UNARY,
    BP_FAMILY_BINARY,
    BP_FAMILY_WHERE,
    BP_FAMILY_REDUCE,
    BP_FAMILY_MATMUL,
    BP_FAMILY_MOVEMENT,
    BP_FAMILY_GATHER,
    BP_FAMILY_SOFTMAX,
    BP_FAMILY_CREATION,
    BP_FAMILY_RANDOM
} bp_op_family;

static inline const char *bp_op_name(bp_op op)
{
    switch (op) {
#define BP__OP_NAME(NAME, name, FAMILY) case BP_OP_##NAME: return #name;
        BP_OP_LIST(BP__OP_NAME)
#undef BP__OP_NAME
    case BP_OP_COUNT: break;
    }
    return "?";
}

static inline bp_op_family bp_op_family_of(bp_op op)
{
    switch (op) {
#define BP__OP_FAM(NAME, name, FAMILY) case BP_OP_##NAME: return BP_FAMILY_##FAMILY;
        BP_OP_LIST(BP__OP_FAM)
#undef BP__OP_FAM
    case BP_OP_COUNT: break;
    }
    return BP_FAMILY_UNARY;
}

#ifdef __cplusplus
}
#endif
#endif

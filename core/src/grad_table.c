/* The op table's gradient column: for every row of BP_OP_TABLE, in its
 * order, the rule that gives its vector-Jacobian product (one per kind,
 * grad_<kind>.c, switching on the op), and the inputs a gradient flows to.
 *
 *   X(NAME, RULE, DIFF)
 *
 * RULE  a kind's rule; ZERO: the gradient is zero almost everywhere (floor,
 *       round, sign: as JAX and PyTorch give it); NONE: the op has no
 *       gradient (its outputs are indices, bools or integers); TODO: it is
 *       differentiable and its rule is not written yet (docs/gradients.md).
 *       Asking for a gradient through NONE or TODO is BP_ERR_UNSUPPORTED_OP
 *       at bp_graph_grad, naming the op.
 * DIFF  the inputs (by IN's names) that a gradient flows to; the others
 *       (indices, conditions, bounds given as data) carry none. For NONE it
 *       is the inputs through which asking would reach the op.
 *
 * The build checks that every op has one row, at its place. */
#include <string.h>

#include "grad_internal.h"

#define BP__GRAD_TABLE(X)                                                                      \
    X(NEG, unary, "x") X(ABS, unary, "x") X(SIGN, ZERO, "x") X(EXP, unary, "x")              \
    X(LOG, unary, "x") X(SQRT, unary, "x") X(RSQRT, unary, "x") X(RECIPROCAL, unary, "x")    \
    X(SIN, unary, "x") X(COS, unary, "x") X(TAN, unary, "x") X(TANH, unary, "x")             \
    X(SIGMOID, unary, "x") X(RELU, unary, "x") X(GELU, unary, "x") X(ERF, unary, "x")        \
    X(FLOOR, ZERO, "x") X(CEIL, ZERO, "x") X(ROUND, ZERO, "x") X(ISNAN, NONE, "x")           \
    X(ISINF, NONE, "x") X(LOGICAL_NOT, NONE, "x")                                              \
    X(ADD, binary, "a b") X(SUB, binary, "a b") X(MUL, binary, "a b") X(DIV, binary, "a b")  \
    X(POW, binary, "a b") X(MAXIMUM, binary, "a b") X(MINIMUM, binary, "a b")                 \
    X(MOD, binary, "a b") X(EQ, NONE, "a b") X(NE, NONE, "a b") X(LT, NONE, "a b")            \
    X(LE, NONE, "a b") X(GT, NONE, "a b") X(GE, NONE, "a b") X(LOGICAL_AND, NONE, "a b")      \
    X(LOGICAL_OR, NONE, "a b") X(LOGICAL_XOR, NONE, "a b") X(WHERE, where, "a b")             \
    X(SUM, reduce, "x") X(PROD, reduce, "x") X(MEAN, reduce, "x") X(MAX, reduce, "x")         \
    X(MIN, reduce, "x") X(ARGMAX, NONE, "x") X(ARGMIN, NONE, "x") X(LOGSUMEXP, reduce, "x")   \
    X(MATMUL, matmul, "a b") X(COPY, movement, "x") X(TRANSPOSE, movement, "x")               \
    X(SLICE, movement, "x") X(CONCAT, movement, "x") X(BROADCAST_TO, movement, "x")           \
    X(PAD, movement, "x") X(CAST, movement, "x") X(GATHER, index, "x")                         \
    X(SOFTMAX, softmax, "x") X(LOG_SOFTMAX, softmax, "x") X(FILL, NONE, "")                   \
    X(ARANGE, NONE, "") X(RANDOM_UNIFORM, NONE, "") X(RANDOM_NORMAL, NONE, "")                \
    X(ACOS, unary, "x") X(ASIN, unary, "x") X(ATAN, unary, "x") X(ACOSH, unary, "x")         \
    X(ASINH, unary, "x") X(ATANH, unary, "x") X(SINH, unary, "x") X(COSH, unary, "x")        \
    X(LOG1P, unary, "x") X(EXPM1, unary, "x") X(SOFTPLUS, unary, "x")                         \
    X(SOFTSIGN, unary, "x") X(SILU, unary, "x") X(SQUARE, unary, "x") X(ELU, unary, "x")     \
    X(SELU, unary, "x") X(LEAKY_RELU, unary, "x") X(THRESHOLDED_RELU, unary, "x")             \
    X(HARD_SIGMOID, unary, "x") X(HARDSWISH, unary, "x") X(SHRINK, unary, "x")                \
    X(BITWISE_NOT, NONE, "x") X(CLIP, clip, "x lo hi") X(FMOD, binary, "a b")                 \
    X(PRELU, binary, "x slope") X(BITWISE_AND, NONE, "a b") X(BITWISE_OR, NONE, "a b")        \
    X(BITWISE_XOR, NONE, "a b") X(BITSHIFT_LEFT, NONE, "a b") X(BITSHIFT_RIGHT, NONE, "a b")  \
    X(REDUCE_L1, reduce, "x") X(REDUCE_L2, reduce, "x") X(REDUCE_SUM_SQUARE, reduce, "x")     \
    X(REDUCE_LOG_SUM, reduce, "x") X(REDUCE_VAR, reduce, "x") X(REDUCE_STD, reduce, "x")      \
    X(REDUCE_ANY, NONE, "x") X(REDUCE_ALL, NONE, "x") X(ARGMAX_LAST, NONE, "x")               \
    X(ARGMIN_LAST, NONE, "x") X(HARDMAX, ZERO, "x") X(CUMSUM, scan, "x")                      \
    X(CUMPROD, scan, "x") X(SORT, sort, "x") X(TOPK, sort, "x") X(TRILU, trilu, "x")           \
    X(ONE_HOT, NONE, "values") X(GATHER_ELEMENTS, index, "x") X(GATHER_ND, index, "x")          \
    X(SCATTER_ELEMENTS, index, "x updates") X(SCATTER_ND, index, "x updates")                   \
    X(GEMM, gemm, "a b c") X(CONV, conv, "x w bias") X(CONV_TRANSPOSE, conv, "x w bias")      \
    X(MAX_POOL, max_pool, "x") X(AVERAGE_POOL, average_pool, "x") X(LRN, lrn, "x")                       \
    X(BATCH_NORM, norm, "x scale bias mean var") X(INSTANCE_NORM, norm, "x scale bias")       \
    X(LAYER_NORM, norm, "x scale bias") X(RMS_NORM, norm, "x scale")                          \
    X(SOFTMAX_CROSS_ENTROPY_LOSS, loss, "scores") X(NLL_LOSS, loss, "log_prob") \
    X(RESIZE, resize, "x") X(CELU, unary, "x") X(MISH, unary, "x")

/* one row per op, at its op's place */
#define BP__GRAD_POS(NAME, RULE, DIFF) BP__GRAD_##NAME,
enum { BP__GRAD_TABLE(BP__GRAD_POS) BP__GRAD_COUNT };
#undef BP__GRAD_POS
_Static_assert((int)BP__GRAD_COUNT == (int)BP_OP_COUNT,
               "the gradient column (grad_table.c) needs one row per row of BP_OP_TABLE");
#define BP__GRAD_AT(NAME, RULE, DIFF)                                                           \
    _Static_assert((int)BP__GRAD_##NAME == (int)BP_OP_##NAME,                                  \
                   "the gradient column's row " #NAME " is not where BP_OP_TABLE has it");
BP__GRAD_TABLE(BP__GRAD_AT)
#undef BP__GRAD_AT

#define BP__RULE_ZERO NULL, true
#define BP__RULE_NONE NULL, false
#define BP__RULE_TODO NULL, false
#define BP__RULE_unary bp__vjp_unary, false
#define BP__RULE_binary bp__vjp_binary, false
#define BP__RULE_where bp__vjp_where, false
#define BP__RULE_clip bp__vjp_clip, false
#define BP__RULE_reduce bp__vjp_reduce, false
#define BP__RULE_softmax bp__vjp_softmax, false
#define BP__RULE_scan bp__vjp_scan, false
#define BP__RULE_matmul bp__vjp_matmul, false
#define BP__RULE_gemm bp__vjp_gemm, false
#define BP__RULE_movement bp__vjp_movement, false
#define BP__RULE_norm bp__vjp_norm, false
#define BP__RULE_conv bp__vjp_conv, false
#define BP__RULE_loss bp__vjp_loss, false
#define BP__RULE_trilu bp__vjp_trilu, false
#define BP__RULE_max_pool bp__vjp_max_pool, false
#define BP__RULE_index bp__vjp_index, false
#define BP__RULE_average_pool bp__vjp_average_pool, false
#define BP__RULE_lrn bp__vjp_lrn, false
#define BP__RULE_sort bp__vjp_sort, false
#define BP__RULE_resize bp__vjp_resize, false
/* NONE's DIFF names where asking would reach it; the row keeps "" for ops
 * whose gradient does not exist so that the error can say which it is */
#define BP__DIFF_NONE(DIFF) ""
#define BP__DIFF_ZERO(DIFF) DIFF
#define BP__DIFF_TODO(DIFF) DIFF
#define BP__DIFF_unary(DIFF) DIFF
#define BP__DIFF_binary(DIFF) DIFF
#define BP__DIFF_where(DIFF) DIFF
#define BP__DIFF_clip(DIFF) DIFF
#define BP__DIFF_reduce(DIFF) DIFF
#define BP__DIFF_softmax(DIFF) DIFF
#define BP__DIFF_scan(DIFF) DIFF
#define BP__DIFF_matmul(DIFF) DIFF
#define BP__DIFF_gemm(DIFF) DIFF
#define BP__DIFF_movement(DIFF) DIFF
#define BP__DIFF_norm(DIFF) DIFF
#define BP__DIFF_conv(DIFF) DIFF
#define BP__DIFF_loss(DIFF) DIFF
#define BP__DIFF_trilu(DIFF) DIFF
#define BP__DIFF_max_pool(DIFF) DIFF
#define BP__DIFF_index(DIFF) DIFF
#define BP__DIFF_average_pool(DIFF) DIFF
#define BP__DIFF_lrn(DIFF) DIFF
#define BP__DIFF_sort(DIFF) DIFF
#define BP__DIFF_resize(DIFF) DIFF

static const bp__grad_row rows[BP_OP_COUNT] = {
#define BP__GRAD_ROW(NAME, RULE, DIFF) {BP__RULE_##RULE, BP__DIFF_##RULE(DIFF)},
    BP__GRAD_TABLE(BP__GRAD_ROW)
#undef BP__GRAD_ROW
};

/* the inputs asking would reach, for every row (NONE's included) */
static const char *const reach[BP_OP_COUNT] = {
#define BP__GRAD_REACH(NAME, RULE, DIFF) DIFF,
    BP__GRAD_TABLE(BP__GRAD_REACH)
#undef BP__GRAD_REACH
};

const bp__grad_row *bp__grad_row_of(bp_op op)
{
    return (unsigned)op < (unsigned)BP_OP_COUNT ? &rows[op] : NULL;
}

bool bp__grad_diff_input(bp_op op, int32_t k)
{
    if ((unsigned)op >= (unsigned)BP_OP_COUNT)
        return false;
    char name[32];
    bp_op_arg_name(bp_op_info_of(op)->in, k, name, sizeof name);
    size_t n = strlen(name);
    if (n > 0 && name[n - 1] == '?')
        name[--n] = '\0';
    for (const char *s = reach[op]; *s;) {
        while (*s == ' ')
            s++;
        size_t len = strcspn(s, " ");
        if (len == n && strncmp(s, name, n) == 0)
            return true;
        s += len;
    }
    return false;
}

bp_gradient bp_op_gradient(bp_op op, int32_t k)
{
    const bp__grad_row *row = bp__grad_row_of(op);
    if (!row || k < 0 || !bp__grad_diff_input(op, k))
        return BP_GRADIENT_NONE;
    if (row->rule)
        return BP_GRADIENT_RULE;
    if (row->zero)
        return BP_GRADIENT_ZERO;
    return row->diff[0] ? BP_GRADIENT_NOT_YET : BP_GRADIENT_NONE;
}

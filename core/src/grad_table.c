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
#include <pthread.h>
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

/* RULE names a rule, bp__vjp_RULE (grad_internal.h), or is one of these */
#define BP__ROW_ZERO(DIFF) {NULL, BP__GRAD_IS_ZERO, DIFF}
#define BP__ROW_NONE(DIFF) {NULL, BP__GRAD_IS_NONE, DIFF}
#define BP__ROW_TODO(DIFF) {NULL, BP__GRAD_IS_TODO, DIFF}
#define BP__ROW_average_pool(DIFF) {bp__vjp_average_pool, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_binary(DIFF) {bp__vjp_binary, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_clip(DIFF) {bp__vjp_clip, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_conv(DIFF) {bp__vjp_conv, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_gemm(DIFF) {bp__vjp_gemm, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_index(DIFF) {bp__vjp_index, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_loss(DIFF) {bp__vjp_loss, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_lrn(DIFF) {bp__vjp_lrn, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_matmul(DIFF) {bp__vjp_matmul, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_max_pool(DIFF) {bp__vjp_max_pool, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_movement(DIFF) {bp__vjp_movement, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_norm(DIFF) {bp__vjp_norm, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_reduce(DIFF) {bp__vjp_reduce, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_resize(DIFF) {bp__vjp_resize, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_scan(DIFF) {bp__vjp_scan, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_softmax(DIFF) {bp__vjp_softmax, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_sort(DIFF) {bp__vjp_sort, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_trilu(DIFF) {bp__vjp_trilu, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_unary(DIFF) {bp__vjp_unary, BP__GRAD_HAS_RULE, DIFF}
#define BP__ROW_where(DIFF) {bp__vjp_where, BP__GRAD_HAS_RULE, DIFF}

static const bp__grad_row rows[BP_OP_COUNT] = {
#define BP__GRAD_ROW(NAME, RULE, DIFF) BP__ROW_##RULE(DIFF),
    BP__GRAD_TABLE(BP__GRAD_ROW)
#undef BP__GRAD_ROW
};

const bp__grad_row *bp__grad_row_of(bp_op op)
{
    return (unsigned)op < (unsigned)BP_OP_COUNT ? &rows[op] : NULL;
}

/* Per op, the inputs its DIFF names, as bits, found once. */
static uint32_t reach_mask[BP_OP_COUNT];
static pthread_once_t reach_once = PTHREAD_ONCE_INIT;

static void reach_init(void)
{
    for (int op = 0; op < BP_OP_COUNT; op++) {
        uint32_t mask = 0;
        for (int32_t k = 0; k < 32; k++) {
            char name[32];
            if (!*bp_op_arg_name(bp_op_info_of((bp_op)op)->in, k, name, sizeof name))
                break;
            size_t n = strlen(name);
            if (n > 0 && name[n - 1] == '?')
                name[--n] = '\0';
            for (const char *s = rows[op].diff; *s;) {
                while (*s == ' ')
                    s++;
                size_t len = strcspn(s, " ");
                if (len == n && strncmp(s, name, n) == 0)
                    mask |= 1u << k;
                s += len;
            }
        }
        reach_mask[op] = mask;
    }
}

bool bp__grad_diff_input(bp_op op, int32_t k)
{
    if ((unsigned)op >= (unsigned)BP_OP_COUNT || k < 0 || k >= 32)
        return false;
    pthread_once(&reach_once, reach_init);
    return reach_mask[op] >> k & 1u;
}

bp_gradient bp_op_gradient(bp_op op, int32_t k)
{
    const bp__grad_row *row = bp__grad_row_of(op);
    if (!row || row->is == BP__GRAD_IS_NONE || !bp__grad_diff_input(op, k))
        return BP_GRADIENT_NONE;
    return row->is == BP__GRAD_HAS_RULE ? BP_GRADIENT_RULE
           : row->is == BP__GRAD_IS_ZERO ? BP_GRADIENT_ZERO
                                          : BP_GRADIENT_NOT_YET;
}

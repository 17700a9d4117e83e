/* backplane: operation codes, shared by the public API and the plugin ABI.
 *
 * Ops come in families; each family is one plugin entry, and the op code says
 * which member of the family is wanted. A new op appends a code (a minor ABI
 * bump), never renumbers one. */
#ifndef BACKPLANE_OPCODES_H
#define BACKPLANE_OPCODES_H

#include <stdint.h>

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

/* Ops added in ABI 1.4. Every one of them reaches a plugin through its `op`
 * entry (plugin.h) with bp_op_params, never through the family entries
 * above, so a plugin built before 1.4 is never handed one. in[] and out[]
 * are the views the entry receives, p the parameters it reads; "x last"
 * means the core has moved the op's axis (or reduced axes) to the end.
 * X(NAME, name) */
#define BP_OP_LIST_1_4(X)                                                                      \
    /* elementwise, in: x; out: x's shape and dtype */                                         \
    X(ACOS, acos) X(ASIN, asin) X(ATAN, atan) X(ACOSH, acosh) X(ASINH, asinh)                 \
    X(ATANH, atanh) X(SINH, sinh) X(COSH, cosh) X(LOG1P, log1p) X(EXPM1, expm1)               \
    X(SOFTPLUS, softplus)            /* log(1 + e^x) */                                      \
    X(SOFTSIGN, softsign)            /* x / (1 + |x|) */                                     \
    X(SILU, silu)                    /* x * sigmoid(x) */                                    \
    X(SQUARE, square)                /* x * x; integers wrap */                              \
    X(ELU, elu)                      /* p.f[0] alpha */                                      \
    X(SELU, selu)                    /* p.f[0] alpha, p.f[1] gamma */                        \
    X(LEAKY_RELU, leaky_relu)        /* p.f[0] alpha */                                      \
    X(THRESHOLDED_RELU, thresholded_relu) /* p.f[0] alpha */                                 \
    X(HARD_SIGMOID, hard_sigmoid)    /* p.f[0] alpha, p.f[1] beta */                         \
    X(HARDSWISH, hardswish)                                                                    \
    X(SHRINK, shrink)                /* p.f[0] bias, p.f[1] lambd */                         \
    X(BITWISE_NOT, bitwise_not)      /* integers */                                          \
    /* in: x, lo, hi (lo, hi broadcast to x; p.i[0] / p.i[1]: lo / hi given) */               \
    X(CLIP, clip)                                                                              \
    /* elementwise, in: a, b broadcast to out */                                               \
    X(FMOD, fmod)                    /* C fmod; integers truncate, x % 0 is 0 */             \
    X(PRELU, prelu)                  /* a < 0 ? a * b : a (b: the slope) */                  \
    X(BITWISE_AND, bitwise_and) X(BITWISE_OR, bitwise_or) X(BITWISE_XOR, bitwise_xor)          \
    X(BITSHIFT_LEFT, bitshift_left) X(BITSHIFT_RIGHT, bitshift_right)                          \
    /* reductions, in: x with the reduced axes last (p.i[0] of them); out: the rest */         \
    X(REDUCE_L1, reduce_l1) X(REDUCE_L2, reduce_l2) X(REDUCE_SUM_SQUARE, reduce_sum_square)   \
    X(REDUCE_LOG_SUM, reduce_log_sum)                                                          \
    X(REDUCE_VAR, reduce_var) X(REDUCE_STD, reduce_std) /* p.f[0] correction (ddof) */        \
    X(REDUCE_ANY, reduce_any) X(REDUCE_ALL, reduce_all) /* bool -> bool */                   \
    X(ARGMAX_LAST, argmax_last) X(ARGMIN_LAST, argmin_last) /* the last index on ties */     \
    /* along one axis, in: x with the axis last */                                              \
    X(HARDMAX, hardmax)              /* out: 1 at the first maximum, else 0 */              \
    X(CUMSUM, cumsum) X(CUMPROD, cumprod) /* p.i[0] exclusive, p.i[1] reverse */             \
    X(SORT, sort)                    /* out: values, indices (i64); p.i[0] descending */    \
    X(TOPK, topk)                    /* out: values, indices (i64), k = out's last extent;  \
                                        p.i[0] largest, p.i[1] sorted */                     \
    /* indexing */                                                                              \
    X(TRILU, trilu)                  /* in: x (rank >= 2); p.i[0] upper, p.i[1] k */         \
    X(ONE_HOT, one_hot)              /* in: indices, values (2: off, on); out: the depth     \
                                        axis last; p.i[0] depth */                           \
    X(GATHER_ELEMENTS, gather_elements) /* in: x, indices; p.i[0] axis */                   \
    X(GATHER_ND, gather_nd)          /* in: x, indices; p.i[0] batch_dims */                \
    X(SCATTER_ELEMENTS, scatter_elements) /* in: x, indices, updates; p.i[0] axis,          \
                                             p.i[1] reduction (bp_scatter_reduction) */     \
    X(SCATTER_ND, scatter_nd)        /* in: x, indices, updates; p.i[1] reduction */        \
    /* in: a (M, K), b (K, N) as views (transposes are strides), c broadcast to (M, N);       \
     * out = p.f[0] alpha * a b + p.f[1] beta * c; p.i[0] c given */                          \
    X(GEMM, gemm)

/* Ops added in ABI 1.5, through the op entry like those of 1.4.
 * X(NAME, name) */
#define BP_OP_LIST_1_5(X)                                                                      \
    /* neural-network ops (nn.h). Windows over the s = rank - 2 spatial axes of x (N, C,      \
     * spatial...), s in 1..3; per spatial axis j: p.i[j] kernel extent (pools), p.i[3+j]     \
     * stride, p.i[6+j] dilation, p.i[9+j] / p.i[12+j] the padding before / after (auto_pad  \
     * resolved by the core; may be negative for conv_transpose's output_shape) */           \
    X(CONV, conv)                    /* in: x, w (M, C/g, k...), bias (M) or NULL; out: y     \
                                        (N, M, o...); p.i[15] groups g */                    \
    X(CONV_TRANSPOSE, conv_transpose) /* in: x, w (C, M/g, k...), bias or NULL; out: y;      \
                                         p.i[15] groups */                                   \
    X(MAX_POOL, max_pool)            /* out: y, indices (i64, flat into x) or NULL;          \
                                        p.i[15] storage_order (1: column-major indices) */   \
    X(AVERAGE_POOL, average_pool)    /* out: y; p.i[15] count_include_pad */                 \
    X(LRN, lrn)                      /* in: x (N, C, ...); p.i[0] size; p.f[0] alpha,         \
                                        p.f[1] beta, p.f[2] bias */                          \
    X(BATCH_NORM, batch_norm)        /* in: x (N, C, ...), scale, bias, mean, var (each (C)); \
                                        p.f[0] epsilon */                                    \
    X(INSTANCE_NORM, instance_norm)  /* in: x (N, C, ...), scale, bias (each (C));            \
                                        p.f[0] epsilon */                                    \
    X(LAYER_NORM, layer_norm)        /* in: x, scale, bias (broadcast to x; bias may be      \
                                        NULL); out: y, mean, inv_std (x's leading axes; or   \
                                        NULL); p.i[0] normalised trailing axes, p.f[0] eps */ \
    X(RMS_NORM, rms_norm)            /* in: x, scale (broadcast to x) or NULL; out: y;       \
                                        p.i[0] normalised trailing axes, p.f[0] epsilon */   \
    /* losses, in: scores / log-probabilities with the class axis last (N, d..., C), labels \
     * (N, d...) i32/i64, weights (C) or NULL; p.i[0] reduction (bp_loss_reduction),       \
     * p.i[1] ignore_index given, p.i[2] ignore_index */                                    \
    X(SOFTMAX_CROSS_ENTROPY_LOSS, softmax_cross_entropy_loss) /* out: loss, log_prob or NULL */ \
    X(NLL_LOSS, nll_loss)            /* out: loss */                                          \
    X(RESIZE, resize)                /* in: x; out: y; p.i[0] mode, p.i[1] coordinate         \
                                        transformation, p.i[2] nearest mode, p.i[3]          \
                                        exclude_outside (nn.h's enums); p.f[0] cubic_coeff_a; \
                                        p.f[8+k] the scale of axis k */

typedef enum bp_op {
#define BP__OP_ENUM(NAME, name, FAMILY) BP_OP_##NAME,
    BP_OP_LIST(BP__OP_ENUM)
#undef BP__OP_ENUM
#define BP__OP_ENUM_1_4(NAME, name) BP_OP_##NAME,
    BP_OP_LIST_1_4(BP__OP_ENUM_1_4)
    BP_OP_LIST_1_5(BP__OP_ENUM_1_4)
#undef BP__OP_ENUM_1_4
    BP_OP_COUNT /* not an op: the number of codes in this header */
} bp_op;

/* How scatter_elements / scatter_nd combine an update with the element it
 * lands on (their p.i[1]; ops.h's bp_scatter_elements). Here rather than in
 * ops.h because plugins, which include only plugin.h, read it too. */
typedef enum bp_scatter_reduction {
    BP_SCATTER_NONE = 0,   /* write (on duplicate indices, the last in row-major order wins) */
    BP_SCATTER_ADD = 1,
    BP_SCATTER_MUL = 2,
    BP_SCATTER_MAX = 3,
    BP_SCATTER_MIN = 4
} bp_scatter_reduction;

/* The first op of ABI 1.4: codes from here on come through the op entry. */
#define BP_OP_FIRST_1_4 BP_OP_ACOS
/* The first op of ABI 1.5. */
#define BP_OP_FIRST_1_5 BP_OP_CONV

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
    BP_FAMILY_RANDOM,
    BP_FAMILY_OP       /* every op since ABI 1.4: the plugin's op entry */
} bp_op_family;

static inline const char *bp_op_name(bp_op op)
{
    switch (op) {
#define BP__OP_NAME(NAME, name, FAMILY) case BP_OP_##NAME: return #name;
        BP_OP_LIST(BP__OP_NAME)
#undef BP__OP_NAME
#define BP__OP_NAME_1_4(NAME, name) case BP_OP_##NAME: return #name;
        BP_OP_LIST_1_4(BP__OP_NAME_1_4)
        BP_OP_LIST_1_5(BP__OP_NAME_1_4)
#undef BP__OP_NAME_1_4
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
    default: return BP_FAMILY_OP; /* every code of BP_OP_LIST_1_4 and later */
    }
    return BP_FAMILY_UNARY;
}

/* The plugin ABI minor that introduced op (0 for the ops of 1.0). The core
 * never hands a plugin an op newer than the ABI it was built for. */
static inline uint32_t bp_op_since(bp_op op)
{
    return op >= BP_OP_FIRST_1_5 ? 5u : op >= BP_OP_FIRST_1_4 ? 4u : 0u;
}

#ifdef __cplusplus
}
#endif
#endif

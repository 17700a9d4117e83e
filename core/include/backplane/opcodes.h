/* backplane: the op table, shared by the public API and the plugin ABI.
 *
 * Every op is one row of BP_OP_TABLE: its code, name, kind, inputs and
 * outputs, dtypes and the ABI minor it arrived in. A new op appends a row
 * (a minor ABI bump), never renumbers one. */
#ifndef BACKPLANE_OPCODES_H
#define BACKPLANE_OPCODES_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The op table: one row per op, in code order. A new op appends a row (its
 * code is its position: codes are never renumbered) and its kernels; every
 * list, name and check below, in the core, the backends, the conformance
 * suite and the Python package is derived from these rows.
 *
 *   X(NAME, name, KIND, SINCE, IN, OUT, TYPED, DTYPES, RESULT, COST)
 *
 * NAME, name  BP_OP_NAME; the op's name (bp_<name> in ops.h / nn.h)
 * KIND        what it is (bp_op_kind): the ops of a kind share the core's
 *             checks, their parameters' layout and, in a backend, a kernel
 * SINCE       the plugin ABI minor it arrived in: a plugin built for an
 *             older minor is never handed it
 * IN, OUT     the views the op entry receives, in order, by name; a name
 *             ending in '?' may be absent (NULL). The public function takes
 *             the same tensors in the same order.
 * TYPED       the input whose dtype the op is typed by (what supports() is
 *             asked about; -1: the dtype the call names, as in creation)
 * DTYPES      the dtypes it accepts for that input (bp_op_dtypes)
 * RESULT      out[0]'s dtype (bp_op_result)
 * COST        per element, against its bytes (bp_op_cost): a backend
 *             splits HEAVY work across threads at smaller sizes
 *
 * The parameters each kind reads (bp_op_params) are listed with bp_op_kind
 * below; the row's comment adds an op's own. */
#define BP_OP_TABLE(X)                                                                              \
    /* NAME         name          KIND    SINCE IN    OUT  TYPED DTYPES   RESULT COST */            \
    X(NEG,          neg,          UNARY,  0, "x",     "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(ABS,          abs,          UNARY,  0, "x",     "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(SIGN,         sign,         UNARY,  0, "x",     "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(EXP,          exp,          UNARY,  0, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(LOG,          log,          UNARY,  0, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(SQRT,         sqrt,         UNARY,  0, "x",     "y", 0, FLOAT,   SAME, CHEAP)                 \
    X(RSQRT,        rsqrt,        UNARY,  0, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(RECIPROCAL,   reciprocal,   UNARY,  0, "x",     "y", 0, FLOAT,   SAME, CHEAP)                 \
    X(SIN,          sin,          UNARY,  0, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(COS,          cos,          UNARY,  0, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(TAN,          tan,          UNARY,  0, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(TANH,         tanh,         UNARY,  0, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(SIGMOID,      sigmoid,      UNARY,  0, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(RELU,         relu,         UNARY,  0, "x",     "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(GELU,         gelu,         UNARY,  0, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(ERF,          erf,          UNARY,  0, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(FLOOR,        floor,        UNARY,  0, "x",     "y", 0, FLOAT,   SAME, CHEAP)                 \
    X(CEIL,         ceil,         UNARY,  0, "x",     "y", 0, FLOAT,   SAME, CHEAP)                 \
    X(ROUND,        round,        UNARY,  0, "x",     "y", 0, FLOAT,   SAME, CHEAP)                 \
    X(ISNAN,        isnan,        UNARY,  0, "x",     "y", 0, FLOAT,   BOOL, CHEAP)                 \
    X(ISINF,        isinf,        UNARY,  0, "x",     "y", 0, FLOAT,   BOOL, CHEAP)                 \
    X(LOGICAL_NOT,  logical_not,  UNARY,  0, "x",     "y", 0, BOOL,    SAME, CHEAP)                 \
    X(ADD,          add,          BINARY, 0, "a b",   "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(SUB,          sub,          BINARY, 0, "a b",   "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(MUL,          mul,          BINARY, 0, "a b",   "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(DIV,          div,          BINARY, 0, "a b",   "y", 0, NUMERIC, SAME, HEAVY)                 \
    X(POW,          pow,          BINARY, 0, "a b",   "y", 0, NUMERIC, SAME, HEAVY)                 \
    X(MAXIMUM,      maximum,      BINARY, 0, "a b",   "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(MINIMUM,      minimum,      BINARY, 0, "a b",   "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(MOD,          mod,          BINARY, 0, "a b",   "y", 0, NUMERIC, SAME, HEAVY)                 \
    X(EQ,           eq,           BINARY, 0, "a b",   "y", 0, ANY,     BOOL, CHEAP)                 \
    X(NE,           ne,           BINARY, 0, "a b",   "y", 0, ANY,     BOOL, CHEAP)                 \
    X(LT,           lt,           BINARY, 0, "a b",   "y", 0, ANY,     BOOL, CHEAP)                 \
    X(LE,           le,           BINARY, 0, "a b",   "y", 0, ANY,     BOOL, CHEAP)                 \
    X(GT,           gt,           BINARY, 0, "a b",   "y", 0, ANY,     BOOL, CHEAP)                 \
    X(GE,           ge,           BINARY, 0, "a b",   "y", 0, ANY,     BOOL, CHEAP)                 \
    X(LOGICAL_AND,  logical_and,  BINARY, 0, "a b",   "y", 0, BOOL,    SAME, CHEAP)                 \
    X(LOGICAL_OR,   logical_or,   BINARY, 0, "a b",   "y", 0, BOOL,    SAME, CHEAP)                 \
    X(LOGICAL_XOR,  logical_xor,  BINARY, 0, "a b",   "y", 0, BOOL,    SAME, CHEAP)                 \
    X(WHERE,        where,        WHERE,  0, "cond a b", "y", 1, ANY,  SAME, CHEAP)                 \
    X(SUM,          sum,          REDUCE, 0, "x",     "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(PROD,         prod,         REDUCE, 0, "x",     "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(MEAN,         mean,         REDUCE, 0, "x",     "y", 0, FLOAT,   SAME, CHEAP)                 \
    X(MAX,          max,          REDUCE, 0, "x",     "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(MIN,          min,          REDUCE, 0, "x",     "y", 0, NUMERIC, SAME, CHEAP)                 \
    X(ARGMAX,       argmax,       REDUCE, 0, "x",     "y", 0, NUMERIC, I64,  CHEAP)                 \
    X(ARGMIN,       argmin,       REDUCE, 0, "x",     "y", 0, NUMERIC, I64,  CHEAP)                 \
    X(LOGSUMEXP,    logsumexp,    REDUCE, 0, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(MATMUL,       matmul,       MATMUL, 0, "a b",   "y", 0, NUMERIC, SAME, HEAVY)                 \
    X(COPY,         copy,         MOVEMENT, 0, "x",   "y", 0, ANY,     SAME, CHEAP)                 \
    X(TRANSPOSE,    transpose,    MOVEMENT, 0, "x",   "y", 0, ANY,     SAME, HEAVY)                 \
    X(SLICE,        slice,        MOVEMENT, 0, "x",   "y", 0, ANY,     SAME, HEAVY)                 \
    X(CONCAT,       concat,       MOVEMENT, 0, "x",   "y", 0, ANY,     SAME, HEAVY)                 \
    X(BROADCAST_TO, broadcast_to, MOVEMENT, 0, "x",   "y", 0, ANY,     SAME, HEAVY)                 \
    X(PAD,          pad,          MOVEMENT, 0, "x",   "y", 0, ANY,     SAME, HEAVY)                 \
    X(CAST,         cast,         MOVEMENT, 0, "x",   "y", 0, ANY,     GIVEN, CHEAP)                \
    X(GATHER,       gather,       GATHER, 0, "x indices", "y", 0, ANY, SAME, HEAVY)                 \
    X(SOFTMAX,      softmax,      SOFTMAX, 0, "x",    "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(LOG_SOFTMAX,  log_softmax,  SOFTMAX, 0, "x",    "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(FILL,         fill,         FILL,   0, "",      "y", -1, ANY,    GIVEN, HEAVY)                \
    X(ARANGE,       arange,       ARANGE, 0, "",      "y", -1, NUMERIC, GIVEN, HEAVY)               \
    X(RANDOM_UNIFORM, random_uniform, RANDOM, 0, "",  "y", -1, FLOAT,  GIVEN, HEAVY)                \
    X(RANDOM_NORMAL, random_normal, RANDOM, 0, "",    "y", -1, FLOAT,  GIVEN, HEAVY)                \
    /* ABI 1.4 */                                                                                   \
    X(ACOS,         acos,         UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(ASIN,         asin,         UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(ATAN,         atan,         UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(ACOSH,        acosh,        UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(ASINH,        asinh,        UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(ATANH,        atanh,        UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(SINH,         sinh,         UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(COSH,         cosh,         UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(LOG1P,        log1p,        UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(EXPM1,        expm1,        UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(SOFTPLUS,     softplus,     UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY) /* log(1+e^x) */ \
    X(SOFTSIGN,     softsign,     UNARY,  4, "x",     "y", 0, FLOAT,   SAME, CHEAP) /* x/(1+|x|) */ \
    X(SILU,         silu,         UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY) /* x sigmoid(x) */ \
    X(SQUARE,       square,       UNARY,  4, "x",     "y", 0, NUMERIC, SAME, CHEAP) /* ints wrap */ \
    X(ELU,          elu,          UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY) /* f0 alpha */  \
    X(SELU,         selu,         UNARY,  4, "x",     "y", 0, FLOAT,   SAME, HEAVY) /* f0 alpha, f1 gamma */ \
    X(LEAKY_RELU,   leaky_relu,   UNARY,  4, "x",     "y", 0, FLOAT,   SAME, CHEAP) /* f0 alpha */  \
    X(THRESHOLDED_RELU, thresholded_relu, UNARY, 4, "x", "y", 0, FLOAT, SAME, CHEAP) /* f0 alpha */ \
    X(HARD_SIGMOID, hard_sigmoid, UNARY,  4, "x",     "y", 0, FLOAT,   SAME, CHEAP) /* f0 alpha, f1 beta */ \
    X(HARDSWISH,    hardswish,    UNARY,  4, "x",     "y", 0, FLOAT,   SAME, CHEAP)                 \
    X(SHRINK,       shrink,       UNARY,  4, "x",     "y", 0, NUMERIC, SAME, CHEAP) /* f0 bias, f1 lambd */ \
    X(BITWISE_NOT,  bitwise_not,  UNARY,  4, "x",     "y", 0, INTEGER, SAME, CHEAP)                 \
    X(CLIP,         clip,         CLIP,   4, "x lo? hi?", "y", 0, NUMERIC, SAME, CHEAP)             \
    X(FMOD,         fmod,         BINARY, 4, "a b",   "y", 0, NUMERIC, SAME, HEAVY) /* C fmod; x % 0 is 0 */ \
    X(PRELU,        prelu,        BINARY, 4, "x slope", "y", 0, NUMERIC, SAME, CHEAP) /* x < 0 ? x slope : x */ \
    X(BITWISE_AND,  bitwise_and,  BINARY, 4, "a b",   "y", 0, INTEGER, SAME, CHEAP)                 \
    X(BITWISE_OR,   bitwise_or,   BINARY, 4, "a b",   "y", 0, INTEGER, SAME, CHEAP)                 \
    X(BITWISE_XOR,  bitwise_xor,  BINARY, 4, "a b",   "y", 0, INTEGER, SAME, CHEAP)                 \
    X(BITSHIFT_LEFT, bitshift_left, BINARY, 4, "a b", "y", 0, INTEGER, SAME, CHEAP)                 \
    X(BITSHIFT_RIGHT, bitshift_right, BINARY, 4, "a b", "y", 0, INTEGER, SAME, CHEAP)               \
    X(REDUCE_L1,    reduce_l1,    REDUCE, 4, "x",     "y", 0, NUMERIC, SAME, HEAVY)                 \
    X(REDUCE_L2,    reduce_l2,    REDUCE, 4, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(REDUCE_SUM_SQUARE, reduce_sum_square, REDUCE, 4, "x", "y", 0, NUMERIC, SAME, HEAVY)           \
    X(REDUCE_LOG_SUM, reduce_log_sum, REDUCE, 4, "x", "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(REDUCE_VAR,   reduce_var,   REDUCE, 4, "x",     "y", 0, FLOAT,   SAME, HEAVY) /* f0 correction */ \
    X(REDUCE_STD,   reduce_std,   REDUCE, 4, "x",     "y", 0, FLOAT,   SAME, HEAVY) /* f0 correction */ \
    X(REDUCE_ANY,   reduce_any,   REDUCE, 4, "x",     "y", 0, BOOL,    SAME, HEAVY)                 \
    X(REDUCE_ALL,   reduce_all,   REDUCE, 4, "x",     "y", 0, BOOL,    SAME, HEAVY)                 \
    X(ARGMAX_LAST,  argmax_last,  REDUCE, 4, "x",     "y", 0, NUMERIC, I64,  HEAVY) /* last on ties */ \
    X(ARGMIN_LAST,  argmin_last,  REDUCE, 4, "x",     "y", 0, NUMERIC, I64,  HEAVY)                 \
    X(HARDMAX,      hardmax,      HARDMAX, 4, "x",    "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(CUMSUM,       cumsum,       SCAN,   4, "x",     "y", 0, NUMERIC, SAME, HEAVY)                 \
    X(CUMPROD,      cumprod,      SCAN,   4, "x",     "y", 0, NUMERIC, SAME, HEAVY)                 \
    X(SORT,         sort,         SORT,   4, "x",     "values indices", 0, NUMERIC, SAME, HEAVY)    \
    X(TOPK,         topk,         SORT,   4, "x",     "values indices", 0, NUMERIC, SAME, HEAVY)    \
    X(TRILU,        trilu,        TRILU,  4, "x",     "y", 0, ANY,     SAME, HEAVY)                 \
    X(ONE_HOT,      one_hot,      ONE_HOT, 4, "indices values", "y", 0, NUMERIC, IN1, HEAVY)       \
    X(GATHER_ELEMENTS, gather_elements, INDEX, 4, "x indices", "y", 0, ANY, SAME, HEAVY)            \
    X(GATHER_ND,    gather_nd,    INDEX,  4, "x indices", "y", 0, ANY, SAME, HEAVY)                 \
    X(SCATTER_ELEMENTS, scatter_elements, SCATTER, 4, "x indices updates", "y", 0, ANY, SAME, HEAVY) \
    X(SCATTER_ND,   scatter_nd,   SCATTER, 4, "x indices updates", "y", 0, ANY, SAME, HEAVY)        \
    X(GEMM,         gemm,         GEMM,   4, "a b c?", "y", 0, NUMERIC, SAME, HEAVY)                \
    /* ABI 1.5 */                                                                                   \
    X(CONV,         conv,         CONV,   5, "x w bias?", "y", 0, FLOAT, SAME, HEAVY)               \
    X(CONV_TRANSPOSE, conv_transpose, CONV, 5, "x w bias?", "y", 0, FLOAT, SAME, HEAVY)             \
    X(MAX_POOL,     max_pool,     POOL,   5, "x",     "y indices?", 0, NUMERIC, SAME, HEAVY)        \
    X(AVERAGE_POOL, average_pool, POOL,   5, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(LRN,          lrn,          LRN,    5, "x",     "y", 0, FLOAT,   SAME, HEAVY)                 \
    X(BATCH_NORM,   batch_norm,   NORM,   5, "x scale bias mean var", "y", 0, FLOAT, SAME, HEAVY)   \
    X(INSTANCE_NORM, instance_norm, NORM, 5, "x scale bias", "y", 0, FLOAT, SAME, HEAVY)            \
    X(LAYER_NORM,   layer_norm,   NORM,   5, "x scale bias?", "y mean? inv_std?", 0, FLOAT, SAME, HEAVY) \
    X(RMS_NORM,     rms_norm,     NORM,   5, "x scale?", "y", 0, FLOAT, SAME, HEAVY)                \
    X(SOFTMAX_CROSS_ENTROPY_LOSS, softmax_cross_entropy_loss, LOSS, 5, "scores labels weights?",    \
      "loss log_prob?", 0, FLOAT, SAME, HEAVY)                                                      \
    X(NLL_LOSS,     nll_loss,     LOSS,   5, "log_prob target weights?", "loss", 0, FLOAT, SAME, HEAVY) \
    X(RESIZE,       resize,       RESIZE, 5, "x",     "y", 0, NUMERIC, SAME, HEAVY)               \
    X(CELU,         celu,         UNARY,  7, "x",     "y", 0, FLOAT,   SAME, HEAVY) /* f0 alpha */ \
    X(MISH,         mish,         UNARY,  8, "x",     "y", 0, FLOAT,   SAME, HEAVY) /* x*tanh(softplus(x)) */

/* The table's schema: each op's public function and its inputs' domains, one
 * row per op keyed by the same NAME, in the table's order (the core's build
 * checks both: core/src/op_schema.c). Python's functions, the ONNX runner's
 * calls and attribute maps, conformance's and bench's random inputs all read
 * these rows; ops.h's BP_FN_SCHEMA holds the same for the public functions
 * that are no row (zeros, split, einsum...).
 *
 *   X(NAME, NAMES, SIGNATURE, DOMAINS)
 *
 * NAMES      space-separated, each optional: "onnx:Op" the ONNX operator that
 *            is this function with the row's inputs as its inputs, in order,
 *            and the parameters as its attributes (by the rule below);
 *            "numpy:name" another Python name for it; "fn:name" the public
 *            function is bp_<name>, not bp_<row's name> ("fn:-": it has none);
 *            "python:-" no Python function
 * SIGNATURE  the public function's arguments in C order, without the outputs
 *            (the row's OUT; BP_FN_SCHEMA's add "-> out, mask?"), ", "
 *            between them. "x" is a tensor sharing the call's dtype, "x?" one
 *            that may be NULL (Python: None), anything else is
 *              name: TYPE [= DEFAULT] [@onnx_attribute]
 *            TYPE       C argument(s)
 *            f64 i32 i64 u64 bool  double int32_t int64_t uint64_t bool
 *            i32[] i64[] f64[]     const int32_t * ... (NULL: None)
 *            i64?                  const int64_t * to one value (NULL: None)
 *            axes                  int32_t n_axes, const int32_t *axes
 *            shape                 int32_t rank, const int64_t *shape
 *            tensors               int32_t n, const bp_tensor *const *xs
 *            split                 int32_t n, const int64_t *sizes (outputs: outs[])
 *            tensor(own)           a tensor with a dtype of its own (indices)
 *            ones(axis)            a tensor; Python's None: ones of x's shape from axis on
 *            dtype, dtype(a b)     bp_dtype; with names: None infers it from them
 *            backend str           bp_backend *, const char *
 *            window(kw...)         const bp_window *, its ONNX keywords
 *            resize                const bp_resize_options *
 *            loss_reduction, scatter_reduction   the enums, by name
 *            DEFAULT is a literal (1.0, -1, false, 'none', None: NULL). An
 *            ONNX attribute has the parameter's name unless @ names another.
 * DOMAINS    what random inputs to draw, "; " between entries (an input
 *            without one: the consumer's default range):
 *              x: [lo, hi]              uniform; integer dtypes: its integers,
 *                                       clipped to the dtype
 *              x: int[lo, hi]           integers in [lo, hi] in every dtype
 *                                       (ties for comparisons)
 *              x: [lo, hi] ints [l, h]  the second range for integer dtypes
 *              alpha = 2                a parameter's value to test with
 *                                       (else its default)
 *            bp_op_domain (ops.h) reads them. */
#define BP_OP_SCHEMA(X)                                                                            \
    X(NEG,               "onnx:Neg numpy:negative", "x", "x: [-100, 100]")                         \
    X(ABS,               "onnx:Abs numpy:absolute", "x", "x: [-100, 100]")                         \
    X(SIGN,              "onnx:Sign", "x", "x: [-100, 100]")                                       \
    X(EXP,               "onnx:Exp", "x", "x: [-10, 10]")                                          \
    X(LOG,               "onnx:Log", "x", "x: [0.001, 100]")                                       \
    X(SQRT,              "onnx:Sqrt", "x", "x: [0, 100]")                                          \
    X(RSQRT,             "", "x", "x: [0.001, 100]")                                               \
    X(RECIPROCAL,        "onnx:Reciprocal", "x", "x: [-10, 10]")                                   \
    X(SIN,               "onnx:Sin", "x", "x: [-10, 10]")                                          \
    X(COS,               "onnx:Cos", "x", "x: [-10, 10]")                                          \
    X(TAN,               "onnx:Tan", "x", "x: [-1.5, 1.5]")                                        \
    X(TANH,              "onnx:Tanh", "x", "x: [-5, 5]")                                           \
    X(SIGMOID,           "onnx:Sigmoid", "x", "x: [-10, 10]")                                      \
    X(RELU,              "onnx:Relu", "x", "x: [-100, 100]")                                       \
    X(GELU,              "", "x", "x: [-5, 5]")                                                    \
    X(ERF,               "onnx:Erf", "x", "x: [-3, 3]")                                            \
    X(FLOOR,             "onnx:Floor", "x", "x: [-100, 100]")                                      \
    X(CEIL,              "onnx:Ceil", "x", "x: [-100, 100]")                                       \
    X(ROUND,             "onnx:Round", "x", "x: [-100, 100]")                                      \
    X(ISNAN,             "onnx:IsNaN", "x", "x: [-1, 1]")                                          \
    X(ISINF,             "", "x", "x: [-1, 1]")                                                    \
    X(LOGICAL_NOT,       "onnx:Not", "x", "x: [0, 1]")                                             \
    X(ADD,               "onnx:Add", "a, b", "a: [-100, 100]; b: [-100, 100]")                     \
    X(SUB,               "onnx:Sub numpy:subtract", "a, b", "a: [-100, 100]; b: [-100, 100]")      \
    X(MUL,               "onnx:Mul numpy:multiply", "a, b", "a: [-100, 100]; b: [-100, 100]")      \
    X(DIV,               "onnx:Div numpy:divide numpy:true_divide",                                \
      "a, b", "a: [-100, 100]; b: [-12, 12]")                                                      \
    X(POW,               "numpy:power",                                                            \
      "a, b", "a: [0.1, 10] ints [-4, 4]; b: [-3, 3] ints [-3, 12]")                               \
    X(MAXIMUM,           "", "a, b", "a: [-100, 100]; b: [-100, 100]")                             \
    X(MINIMUM,           "", "a, b", "a: [-100, 100]; b: [-100, 100]")                             \
    X(MOD,               "", "a, b", "a: [-100, 100]; b: [-12, 12]")                               \
    X(EQ,                "onnx:Equal numpy:equal", "a, b", "a: int[-3, 3]; b: int[-3, 3]")         \
    X(NE,                "numpy:not_equal", "a, b", "a: int[-3, 3]; b: int[-3, 3]")                \
    X(LT,                "onnx:Less numpy:less", "a, b", "a: int[-3, 3]; b: int[-3, 3]")           \
    X(LE,                "onnx:LessOrEqual numpy:less_equal",                                      \
      "a, b", "a: int[-3, 3]; b: int[-3, 3]")                                                      \
    X(GT,                "onnx:Greater numpy:greater", "a, b", "a: int[-3, 3]; b: int[-3, 3]")     \
    X(GE,                "onnx:GreaterOrEqual numpy:greater_equal",                                \
      "a, b", "a: int[-3, 3]; b: int[-3, 3]")                                                      \
    X(LOGICAL_AND,       "onnx:And", "a, b", "a: [0, 1]; b: [0, 1]")                               \
    X(LOGICAL_OR,        "onnx:Or", "a, b", "a: [0, 1]; b: [0, 1]")                                \
    X(LOGICAL_XOR,       "onnx:Xor", "a, b", "a: [0, 1]; b: [0, 1]")                               \
    X(WHERE,             "", "cond: tensor(own), a, b", "")                                        \
    X(SUM,               "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(PROD,              "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(MEAN,              "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(MAX,               "numpy:amax", "x, axis: axes = None, keepdims: bool = false", "")         \
    X(MIN,               "numpy:amin", "x, axis: axes = None, keepdims: bool = false", "")         \
    X(ARGMAX,            "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(ARGMIN,            "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(LOGSUMEXP,         "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(MATMUL,            "", "a, b", "")                                                           \
    X(COPY,              "fn:-", "x", "")                                                          \
    X(TRANSPOSE,         "", "x, axes: i32[] = None @perm", "")                                    \
    X(SLICE,             "", "x, starts: i64[], stops: i64[] = None, steps: i64[] = None", "")     \
    X(CONCAT,            "numpy:concatenate", "xs: tensors, axis: i32 = 0", "")                    \
    X(BROADCAST_TO,      "", "x, shape: shape", "")                                                \
    X(PAD,               "", "x, before: i64[], after: i64[], value: f64 = 0.0", "")               \
    X(CAST,              "", "x, dtype: dtype", "")                                                \
    X(GATHER,            "", "x, indices: tensor(own), axis: i32 = 0", "")                         \
    X(SOFTMAX,           "", "x, axis: i32 = -1", "")                                              \
    X(LOG_SOFTMAX,       "", "x, axis: i32 = -1", "")                                              \
    X(FILL,              "fn:full",                                                                \
      "backend: backend = None, dtype: dtype(value) = None, shape: shape, value: f64", "")         \
    X(ARANGE,            "",                                                                       \
      "backend: backend = None, dtype: dtype(start stop step) = None, start: f64, stop: f64, "     \
      "step: f64 = 1", "")                                                                         \
    X(RANDOM_UNIFORM,    "",                                                                       \
      "backend: backend = None, dtype: dtype = 'float64', shape: shape, seed: u64 = 0, "           \
      "offset: u64 = 0, low: f64 = 0.0, high: f64 = 1.0", "")                                      \
    X(RANDOM_NORMAL,     "",                                                                       \
      "backend: backend = None, dtype: dtype = 'float64', shape: shape, seed: u64 = 0, "           \
      "offset: u64 = 0, mean: f64 = 0.0, stddev: f64 = 1.0", "")                                   \
    X(ACOS,              "onnx:Acos", "x", "x: [-1, 1]")                                           \
    X(ASIN,              "onnx:Asin", "x", "x: [-1, 1]")                                           \
    X(ATAN,              "onnx:Atan", "x", "x: [-20, 20]")                                         \
    X(ACOSH,             "onnx:Acosh", "x", "x: [1, 50]")                                          \
    X(ASINH,             "onnx:Asinh", "x", "x: [-50, 50]")                                        \
    X(ATANH,             "onnx:Atanh", "x", "x: [-0.999, 0.999]")                                  \
    X(SINH,              "onnx:Sinh", "x", "x: [-10, 10]")                                         \
    X(COSH,              "onnx:Cosh", "x", "x: [-10, 10]")                                         \
    X(LOG1P,             "", "x", "x: [-0.99, 50]")                                                \
    X(EXPM1,             "", "x", "x: [-10, 10]")                                                  \
    X(SOFTPLUS,          "onnx:Softplus", "x", "x: [-20, 20]")                                     \
    X(SOFTSIGN,          "onnx:Softsign", "x", "x: [-20, 20]")                                     \
    X(SILU,              "", "x", "x: [-10, 10]")                                                  \
    X(SQUARE,            "", "x", "x: [-100, 100]")                                                \
    X(ELU,               "onnx:Elu", "x, alpha: f64 = 1.0", "x: [-5, 5]")                          \
    X(SELU,              "onnx:Selu",                                                              \
      "x, alpha: f64 = 1.6732631921768188, gamma: f64 = 1.0507010221481323", "x: [-5, 5]")         \
    X(LEAKY_RELU,        "onnx:LeakyRelu", "x, alpha: f64 = 0.01", "x: [-10, 10]")                 \
    X(THRESHOLDED_RELU,  "onnx:ThresholdedRelu", "x, alpha: f64 = 1.0", "x: [-3, 3]")              \
    X(HARD_SIGMOID,      "onnx:HardSigmoid", "x, alpha: f64 = 0.2, beta: f64 = 0.5", "x: [-5, 5]") \
    X(HARDSWISH,         "onnx:HardSwish", "x", "x: [-5, 5]")                                      \
    X(SHRINK,            "onnx:Shrink",                                                            \
      "x, bias: f64 = 0.0, lambd: f64 = 0.5", "x: [-3, 3]; bias = 0.5; lambd = 1")                 \
    X(BITWISE_NOT,       "", "x", "x: [-100, 100]")                                                \
    X(CLIP,              "", "x, min?, max?", "")                                                  \
    X(FMOD,              "", "a, b", "a: [-100, 100]; b: [-12, 12]")                               \
    X(PRELU,             "onnx:PRelu", "x, slope", "x: [-100, 100]; slope: [-2, 2]")               \
    X(BITWISE_AND,       "", "a, b", "a: [-100, 100]; b: [-100, 100]")                             \
    X(BITWISE_OR,        "", "a, b", "a: [-100, 100]; b: [-100, 100]")                             \
    X(BITWISE_XOR,       "", "a, b", "a: [-100, 100]; b: [-100, 100]")                             \
    X(BITSHIFT_LEFT,     "", "a, b", "a: [-100, 100]; b: [-2, 66]")                                \
    X(BITSHIFT_RIGHT,    "", "a, b", "a: [-100, 100]; b: [-2, 66]")                                \
    X(REDUCE_L1,         "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(REDUCE_L2,         "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(REDUCE_SUM_SQUARE, "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(REDUCE_LOG_SUM,    "", "x, axis: axes = None, keepdims: bool = false", "x: [0.001, 100]")    \
    X(REDUCE_VAR,        "",                                                                       \
      "x, axis: axes = None, keepdims: bool = false, correction: f64 = 0.0", "")                   \
    X(REDUCE_STD,        "",                                                                       \
      "x, axis: axes = None, keepdims: bool = false, correction: f64 = 0.0", "")                   \
    X(REDUCE_ANY,        "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(REDUCE_ALL,        "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(ARGMAX_LAST,       "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(ARGMIN_LAST,       "", "x, axis: axes = None, keepdims: bool = false", "")                   \
    X(HARDMAX,           "", "x, axis: i32 = -1", "")                                              \
    X(CUMSUM,            "",                                                                       \
      "x, axis: i32 = 0, exclusive: bool = false, reverse: bool = false", "")                      \
    X(CUMPROD,           "",                                                                       \
      "x, axis: i32 = 0, exclusive: bool = false, reverse: bool = false", "")                      \
    X(SORT,              "", "x, axis: i32 = -1, descending: bool = false", "")                    \
    X(TOPK,              "",                                                                       \
      "x, k: i64, axis: i32 = -1, largest: bool = true, sorted: bool = true", "")                  \
    X(TRILU,             "", "x, upper: bool = true, k: i64 = 0", "")                              \
    X(ONE_HOT,           "", "indices: tensor(own), depth: i64, axis: i32 = -1, values", "")       \
    X(GATHER_ELEMENTS,   "", "x, indices: tensor(own), axis: i32 = 0", "")                         \
    X(GATHER_ND,         "", "x, indices: tensor(own), batch_dims: i32 = 0", "")                   \
    X(SCATTER_ELEMENTS,  "",                                                                       \
      "x, indices: tensor(own), updates, axis: i32 = 0, reduction: scatter_reduction = 'none'",    \
      "")                                                                                          \
    X(SCATTER_ND,        "",                                                                       \
      "x, indices: tensor(own), updates, reduction: scatter_reduction = 'none'", "")               \
    X(GEMM,              "",                                                                       \
      "a, b, c?, alpha: f64 = 1.0, beta: f64 = 1.0, trans_a: bool = false @transA, "               \
      "trans_b: bool = false @transB", "")                                                         \
    X(CONV,              "",                                                                       \
      "x, w, bias?, window: window(strides pads dilations groups auto_pad)", "")                   \
    X(CONV_TRANSPOSE,    "",                                                                       \
      "x, w, bias?, "                                                                              \
      "window: window(strides pads dilations groups auto_pad output_padding output_shape)", "")    \
    X(MAX_POOL,          "",                                                                       \
      "x, window: window(kernel_shape strides pads dilations ceil_mode storage_order auto_pad)",   \
      "")                                                                                          \
    X(AVERAGE_POOL,      "",                                                                       \
      "x, window: window(kernel_shape strides pads ceil_mode count_include_pad auto_pad)", "")     \
    X(LRN,               "",                                                                       \
      "x, size: i64, alpha: f64 = 0.0001, beta: f64 = 0.75, bias: f64 = 1.0", "")                  \
    X(BATCH_NORM,        "", "x, scale, bias, mean, var, epsilon: f64 = 1e-05", "var: [0.1, 4]")   \
    X(INSTANCE_NORM,     "", "x, scale, bias, epsilon: f64 = 1e-05", "")                           \
    X(LAYER_NORM,        "",                                                                       \
      "x, axis: i32 = -1, scale: ones(axis), bias?, epsilon: f64 = 1e-05", "")                     \
    X(RMS_NORM,          "", "x, axis: i32 = -1, scale?, epsilon: f64 = 1e-05", "")                \
    X(SOFTMAX_CROSS_ENTROPY_LOSS, "",                                                              \
      "scores, labels: tensor(own), weights?, reduction: loss_reduction = 'mean', "                \
      "ignore_index: i64? = None", "")                                                             \
    X(NLL_LOSS,          "",                                                                       \
      "log_prob, target: tensor(own), weights?, reduction: loss_reduction = 'mean', "              \
      "ignore_index: i64? = None", "")                                                             \
    X(RESIZE,            "", "x, scales: f64[] = None, sizes: i64[] = None, options: resize", "")  \
    X(CELU,              "onnx:Celu", "x, alpha: f64 = 1.0", "x: [-5, 5]; alpha = 2")          \
    X(MISH,              "onnx:Mish", "x", "x: [-20, 20]")

/* What an op is: ops of one kind are checked alike by the core, read their
 * parameters (bp_op_params) alike, and share a kernel in a backend. The
 * views of every kind are as its ops' rows say; "x last" means the core has
 * moved the op's axis (or reduced axes) to the end of the view. */
typedef enum bp_op_kind {
    BP_KIND_UNARY,    /* y = f(x) elementwise; 1.4's: f0, f1 as their rows say */
    BP_KIND_BINARY,   /* y = f(a, b), a and b broadcast to y */
    BP_KIND_WHERE,    /* y = cond ? a : b, all broadcast to y */
    BP_KIND_REDUCE,   /* y = x reduced over its last i0 axes; f0: var/std's correction */
    BP_KIND_MATMUL,   /* y[..., M, N] = a[..., M, K] b[..., K, N], batch axes broadcast */
    BP_KIND_MOVEMENT, /* y = x element by element over y's shape (x strided; cast converts) */
    BP_KIND_GATHER,   /* y = x.take(indices, axis i0) */
    BP_KIND_SOFTMAX,  /* over x's last axis */
    BP_KIND_FILL,     /* every element of y = the element whose bytes are i0's first bytes */
    BP_KIND_ARANGE,   /* y[i] = f0 + i f1, in double, then cast */
    BP_KIND_RANDOM,   /* philox.h's draws: i0 seed, i1 offset (as unsigned), f0, f1 (low,
                         high / mean, stddev) */
    BP_KIND_CLIP,     /* y = min(max(x, lo), hi); lo, hi broadcast to x, each may be absent */
    BP_KIND_HARDMAX,  /* along x's last axis: 1 at the first maximum, else 0 */
    BP_KIND_SCAN,     /* along x's last axis; i0 exclusive, i1 reverse */
    BP_KIND_SORT,     /* along x's last axis; sort: i0 descending; topk: k = y's last
                         extent, i0 largest, i1 sorted */
    BP_KIND_TRILU,    /* x rank >= 2; i0 upper, i1 k */
    BP_KIND_ONE_HOT,  /* values (2: off, on); y has the depth axis last; i0 depth */
    BP_KIND_INDEX,    /* gather_elements: i0 axis; gather_nd: i0 batch_dims */
    BP_KIND_SCATTER,  /* scatter_elements: i0 axis; both: i1 reduction (bp_scatter_reduction) */
    BP_KIND_GEMM,     /* a (M, K), b (K, N) as views (transposes are strides), c broadcast
                         to (M, N): y = f0 alpha a b + f1 beta c; i0: c given */
    BP_KIND_CONV,     /* windows (below); w (M, C/g, k...) or, transposed, (C, M/g, k...);
                         bias (M); i15 groups */
    BP_KIND_POOL,     /* windows; max_pool: indices flat into x, i15 storage_order (1:
                         column-major); average_pool: i15 count_include_pad */
    BP_KIND_LRN,      /* x (N, C, ...); i0 size; f0 alpha, f1 beta, f2 bias */
    BP_KIND_NORM,     /* batch_norm: scale, bias, mean, var (each (C)); instance_norm: scale,
                         bias (C); layer_norm: scale, bias broadcast to x, mean and inv_std
                         over x's leading axes, i0 normalised trailing axes; rms_norm: scale
                         broadcast to x, i0 likewise; all: f0 epsilon */
    BP_KIND_LOSS,     /* scores / log_prob (N, d..., C) class axis last, labels (N, d...)
                         i32/i64, weights (C); i0 reduction (bp_loss_reduction), i1
                         ignore_index given, i2 ignore_index */
    BP_KIND_RESIZE,   /* i0 mode, i1 coordinate transformation, i2 nearest mode, i3
                         exclude_outside (nn.h's enums); f0 cubic_coeff_a; f[8+k] axis k's
                         scale */
    BP_KIND_COUNT     /* not a kind: how many there are */
} bp_op_kind;
/* Windows (conv, conv_transpose, pools) over the s = rank - 2 spatial axes of
 * x (N, C, spatial...), s in 1..3; per spatial axis j: i[j] kernel extent
 * (pools), i[3+j] stride, i[6+j] dilation, i[9+j] / i[12+j] the padding
 * before / after (auto_pad resolved by the core; conv_transpose's may be
 * negative for an output_shape). */

/* The dtypes an op accepts for its typed input. */
typedef enum bp_op_dtypes {
    BP_DTYPES_ANY,
    BP_DTYPES_NUMERIC,  /* every dtype but bool */
    BP_DTYPES_FLOAT,    /* f16, bf16, f32, f64 */
    BP_DTYPES_BOOL,
    BP_DTYPES_INTEGER   /* u8, i8, i16, u16, i32, u32, i64, u64 */
} bp_op_dtypes;

/* out[0]'s dtype. */
typedef enum bp_op_result {
    BP_RESULT_SAME,     /* the typed input's */
    BP_RESULT_BOOL,
    BP_RESULT_I64,
    BP_RESULT_GIVEN,    /* the dtype the call names (creation, cast) */
    BP_RESULT_IN1       /* in[1]'s (one_hot: its values') */
} bp_op_result;

typedef enum bp_op_cost {
    BP_COST_CHEAP,      /* a few instructions an element (sqrt, floor and a float
                         * division are instructions): memory-bound */
    BP_COST_HEAVY       /* a libm call or more an element */
} bp_op_cost;

/* One row of the table. */
typedef struct bp_op_info {
    const char *name;
    bp_op_kind kind;
    uint32_t since;
    const char *in, *out;  /* names, space-separated; '?': may be NULL */
    int32_t typed;
    bp_op_dtypes dtypes;
    bp_op_result result;
    bp_op_cost cost;
} bp_op_info;

typedef enum bp_op {
#define BP__OP_ENUM(NAME, name, KIND, SINCE, IN, OUT, TYPED, DTYPES, RESULT, COST) BP_OP_##NAME,
    BP_OP_TABLE(BP__OP_ENUM)
#undef BP__OP_ENUM
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

/* The first op of ABI 1.4 and of 1.5 (rows with SINCE 4 and 5 start there). */
#define BP_OP_FIRST_1_4 BP_OP_ACOS
#define BP_OP_FIRST_1_5 BP_OP_CONV

/* The op's row; NULL for a code this header does not know. */
static inline const bp_op_info *bp_op_info_of(bp_op op)
{
    static const bp_op_info table[] = {
#define BP__OP_ROW(NAME, name, KIND, SINCE, IN, OUT, TYPED, DTYPES, RESULT, COST)                  \
    {#name, BP_KIND_##KIND, SINCE, IN, OUT, TYPED, BP_DTYPES_##DTYPES, BP_RESULT_##RESULT,          \
     BP_COST_##COST},
        BP_OP_TABLE(BP__OP_ROW)
#undef BP__OP_ROW
    };
    return (unsigned)op < (unsigned)BP_OP_COUNT ? &table[op] : (const bp_op_info *)0;
}

static inline const char *bp_op_name(bp_op op)
{
    const bp_op_info *r = bp_op_info_of(op);
    return r ? r->name : "?";
}

static inline bp_op_kind bp_op_kind_of(bp_op op)
{
    const bp_op_info *r = bp_op_info_of(op);
    return r ? r->kind : BP_KIND_COUNT;
}

/* The op's schema row (BP_OP_SCHEMA); NULL for a code this header does not
 * know. */
typedef struct bp_op_schema {
    const char *names, *signature, *domains;
} bp_op_schema;

static inline const bp_op_schema *bp_op_schema_of(bp_op op)
{
    static const bp_op_schema table[BP_OP_COUNT] = {
#define BP__OP_SCHEMA_ROW(NAME, NAMES, SIGNATURE, DOMAINS) {NAMES, SIGNATURE, DOMAINS},
        BP_OP_SCHEMA(BP__OP_SCHEMA_ROW)
#undef BP__OP_SCHEMA_ROW
    };
    return (unsigned)op < (unsigned)BP_OP_COUNT ? &table[op] : (const bp_op_schema *)0;
}

/* How many parameters a unary op takes (0, 1 or 2: its schema's f64
 * parameters, the plugin's p->f[0], p->f[1]), with their defaults (ONNX's,
 * which bp_unary uses) in f (0 where it takes none). */
static inline int bp_op_param_defaults(bp_op op, double f[2])
{
    int n = 0;
    f[0] = f[1] = 0;
    if (bp_op_kind_of(op) != BP_KIND_UNARY)
        return 0;
    for (const char *s = bp_op_schema_of(op)->signature;
         n < 2 && (s = strstr(s, ": f64 = ")) != (const char *)0;)
        f[n++] = strtod(s + 8, (char **)0), s += 8;
    return n;
}

/* The name of a unary op's parameter k (0 or 1, as bp_op_param_defaults
 * counts them) into buf; "" if it has none. */
static inline const char *bp_op_param_name(bp_op op, int k, char *buf, size_t cap)
{
    const char *s = bp_op_kind_of(op) == BP_KIND_UNARY ? bp_op_schema_of(op)->signature : "";
    size_t n = 0;
    for (const char *end; (end = strstr(s, ": f64 = ")) != (const char *)0; s = end + 8) {
        if (k-- > 0)
            continue;
        const char *start = end;
        while (start > s && start[-1] != ' ')
            start--;
        n = (size_t)(end - start) < cap ? (size_t)(end - start) : (cap ? cap - 1 : 0);
        memcpy(buf, start, n);
        break;
    }
    if (cap)
        buf[n] = '\0';
    return buf;
}

/* The plugin ABI minor that introduced op (0 for the ops of 1.0). The core
 * never hands a plugin an op newer than the ABI it was built for. */
static inline uint32_t bp_op_since(bp_op op)
{
    const bp_op_info *r = bp_op_info_of(op);
    return r ? r->since : ~0u;
}

/* How many names a row's in or out list holds, and which may be absent
 * (bit k: name k ends in '?'). */
static inline int32_t bp_op_arity(const char *names, uint32_t *optional)
{
    int32_t n = 0;
    uint32_t opt = 0;
    for (const char *s = names; *s;) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        while (*s && *s != ' ')
            s++;
        if (s[-1] == '?')
            opt |= 1u << n;
        n++;
    }
    if (optional)
        *optional = opt;
    return n;
}

/* Name k of a row's in or out list into buf (without its '?'); "" if none. */
static inline const char *bp_op_arg_name(const char *names, int32_t k, char *buf, size_t cap)
{
    const char *s = names;
    size_t n = 0;
    for (int32_t i = 0; *s; i++) {
        while (*s == ' ')
            s++;
        const char *start = s;
        while (*s && *s != ' ')
            s++;
        if (i == k) {
            n = (size_t)(s - start);
            if (n && start[n - 1] == '?')
                n--;
            if (n >= cap)
                n = cap ? cap - 1 : 0;
            for (size_t j = 0; j < n; j++)
                buf[j] = start[j];
            break;
        }
    }
    if (cap)
        buf[n] = '\0';
    return buf;
}

/* The op families of ABI 1.0: the typed entries of the plugin descriptor
 * that took the ops of 1.0 before ABI 1.6 (every op comes through the op
 * entry since). */
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

static inline bp_op_family bp_op_family_of(bp_op op)
{
    if (bp_op_since(op) != 0)
        return BP_FAMILY_OP;
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: return BP_FAMILY_UNARY;
    case BP_KIND_BINARY: return BP_FAMILY_BINARY;
    case BP_KIND_WHERE: return BP_FAMILY_WHERE;
    case BP_KIND_REDUCE: return BP_FAMILY_REDUCE;
    case BP_KIND_MATMUL: return BP_FAMILY_MATMUL;
    case BP_KIND_MOVEMENT: return BP_FAMILY_MOVEMENT;
    case BP_KIND_GATHER: return BP_FAMILY_GATHER;
    case BP_KIND_SOFTMAX: return BP_FAMILY_SOFTMAX;
    case BP_KIND_RANDOM: return BP_FAMILY_RANDOM;
    default: return BP_FAMILY_CREATION; /* fill, arange */
    }
}

#ifdef __cplusplus
}
#endif
#endif

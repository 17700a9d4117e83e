/* backplane: operations.
 *
 * Ops are functional: each returns a new tensor through its last argument and
 * leaves its inputs untouched. Every op is validated here in the core before a
 * backend sees it. Common errors for every op:
 *   BP_ERR_INVALID_ARGUMENT  NULL tensor/out, or a tensor given away by transfer
 *   BP_ERR_BACKEND_MISMATCH  inputs on different backends (message names the fix)
 *   BP_ERR_DTYPE             dtype the op does not accept, or operands differ
 *   BP_ERR_SHAPE             shapes that do not broadcast / bad axes
 *   BP_ERR_UNSUPPORTED_OP    the backend does not implement op for the dtype
 * Binary ops use NumPy broadcasting and require equal dtypes (bp_cast first).
 * Where NumPy is silent, ONNX semantics hold. Integer arithmetic wraps; integer
 * division truncates toward zero; x / 0 and x % 0 give 0 for integers; mod has
 * the sign of the divisor (ONNX Mod, fmod = 0). */
#ifndef BACKPLANE_OPS_H
#define BACKPLANE_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "context.h"
#include "opcodes.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- creation ---------------------------------------------------------- */
/* value is converted to dtype with the cast rules (NaN -> 0, saturate). */
BP_API bp_status bp_full(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                         double value, bp_tensor **out);
BP_API bp_status bp_zeros(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                          bp_tensor **out);
BP_API bp_status bp_ones(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                         bp_tensor **out);
/* bp_full from an int64, for the values a double cannot hold (it holds every
 * integer only up to 2^53): every bit kept in BP_I64 and BP_U64 (so -1 fills
 * a u64 with UINT64_MAX); other integer dtypes saturate, float dtypes round
 * once from the integer (the cast rules). */
BP_API bp_status bp_full_i64(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                             int64_t value, bp_tensor **out);
/* [start, stop) by step (step != 0): ceil((stop - start) / step) elements, >= 0. */
BP_API bp_status bp_arange(bp_backend *b, bp_dtype dtype, double start, double stop, double step,
                           bp_tensor **out);
/* bp_arange over int64, exact for every int64 (bp_arange computes each
 * element in double, which loses bits beyond 2^53): start, start + step, ...
 * while before stop (below it for step > 0, above it for step < 0), the
 * count computed in integers without overflow; an empty range gives an
 * empty tensor. Each value is converted to dtype once by the cast rules
 * (integers saturate, floats round once). step 0: BP_ERR_INVALID_ARGUMENT;
 * more than 2^53 elements: BP_ERR_SHAPE; bool: BP_ERR_DTYPE. Beyond 2^53
 * the values are composed of arange, mul and add (and cast) in int64, so
 * the backend needs those ops for int64. */
BP_API bp_status bp_arange_i64(bp_backend *b, bp_dtype dtype, int64_t start, int64_t stop,
                               int64_t step, bp_tensor **out);
/* rows x cols with ones on the main diagonal. */
BP_API bp_status bp_eye(bp_backend *b, bp_dtype dtype, int64_t rows, int64_t cols, bp_tensor **out);
/* Counter-based (philox.h): the same (seed, offset) gives the same values on
 * every backend. Element i uses stream position offset + i. Float dtypes. */
BP_API bp_status bp_random_uniform(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                                   uint64_t seed, uint64_t offset, double low, double high,
                                   bp_tensor **out);
/* Normal draws with the given mean and stddev (>= 0), counter-based like
 * bp_random_uniform. Float dtypes. */
BP_API bp_status bp_random_normal(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                                  uint64_t seed, uint64_t offset, double mean, double stddev,
                                  bp_tensor **out);

/* ---- elementwise -------------------------------------------------------- */
/* Any op code of the UNARY kind (opcodes.h), each with the dtypes its row
 * accepts. Floats only: exp log sqrt rsqrt reciprocal sin cos tan tanh
 * sigmoid gelu erf floor ceil round(half to even) isnan isinf and the
 * functions below. Numeric (not bool): neg abs sign relu square shrink.
 * Bool only: logical_not. Integers: bitwise_not. isnan/isinf -> bool. The
 * ops with parameters take ONNX's defaults here: elu alpha 1, selu alpha
 * 1.67326 gamma 1.05070, leaky_relu alpha 0.01, thresholded_relu alpha 1,
 * hard_sigmoid alpha 0.2 beta 0.5, shrink bias 0 lambd 0.5. */
BP_API bp_status bp_unary(bp_op op, const bp_tensor *x, bp_tensor **out);
/* The same with the op's parameters f0, f1 (its f64 parameters in
 * opcodes.h's BP_OP_SCHEMA: elu's alpha, selu's alpha and gamma...); an op that takes one
 * ignores f1, one that takes none ignores both. NaN is refused. */
BP_API bp_status bp_unary_params(bp_op op, const bp_tensor *x, double f0, double f1,
                                 bp_tensor **out);
/* Any op code of the BINARY kind (opcodes.h). Numeric: add sub mul div pow
 * maximum minimum mod fmod prelu (pow: floats and integers; integer negative
 * exponents give 0 unless the base is +-1). Comparisons: every dtype, ->
 * bool. logical_*: bool only. bitwise_* and bitshift_*: integers. */
BP_API bp_status bp_binary(bp_op op, const bp_tensor *a, const bp_tensor *b, bp_tensor **out);
/* cond (bool) ? a : b; all three broadcast together; a and b share a dtype. */
BP_API bp_status bp_where(const bp_tensor *cond, const bp_tensor *a, const bp_tensor *b,
                          bp_tensor **out);

/* ---- elementwise, one function per op (bp_unary / bp_binary by code) ---- *
 * Each returns a tensor of x's shape (binary: a and b broadcast together) and
 * x's dtype, bool for the comparisons, isnan and isinf. The dtypes each
 * accepts are BP_ERR_DTYPE otherwise. */

/* -x. Numeric dtypes; integers wrap (-INT_MIN is INT_MIN). */
BP_API bp_status bp_neg(const bp_tensor *x, bp_tensor **out);

/* |x|. Numeric dtypes; integers wrap (|INT_MIN| is INT_MIN). */
BP_API bp_status bp_abs(const bp_tensor *x, bp_tensor **out);

/* -1, 0 or 1 by the sign of x (NaN stays NaN). Numeric dtypes. */
BP_API bp_status bp_sign(const bp_tensor *x, bp_tensor **out);

/* e^x. Float dtypes. */
BP_API bp_status bp_exp(const bp_tensor *x, bp_tensor **out);

/* Natural logarithm (log 0 = -inf, log of a negative = NaN). Float dtypes. */
BP_API bp_status bp_log(const bp_tensor *x, bp_tensor **out);

/* Square root (NaN below 0). Float dtypes. */
BP_API bp_status bp_sqrt(const bp_tensor *x, bp_tensor **out);

/* 1 / sqrt(x). Float dtypes. */
BP_API bp_status bp_rsqrt(const bp_tensor *x, bp_tensor **out);

/* 1 / x (+-inf at +-0). Float dtypes. */
BP_API bp_status bp_reciprocal(const bp_tensor *x, bp_tensor **out);

/* Sine, x in radians. Float dtypes. */
BP_API bp_status bp_sin(const bp_tensor *x, bp_tensor **out);

/* Cosine, x in radians. Float dtypes. */
BP_API bp_status bp_cos(const bp_tensor *x, bp_tensor **out);

/* Tangent, x in radians. Float dtypes. */
BP_API bp_status bp_tan(const bp_tensor *x, bp_tensor **out);

/* Hyperbolic tangent. Float dtypes. */
BP_API bp_status bp_tanh(const bp_tensor *x, bp_tensor **out);

/* 1 / (1 + e^-x). Float dtypes. */
BP_API bp_status bp_sigmoid(const bp_tensor *x, bp_tensor **out);

/* max(x, 0) (NaN stays NaN). Numeric dtypes. */
BP_API bp_status bp_relu(const bp_tensor *x, bp_tensor **out);

/* x * Phi(x), the exact (erf) form: 0.5 x erfc(-x / sqrt 2). Float dtypes. */
BP_API bp_status bp_gelu(const bp_tensor *x, bp_tensor **out);

/* The error function. Float dtypes. */
BP_API bp_status bp_erf(const bp_tensor *x, bp_tensor **out);

/* Largest integer value <= x. Float dtypes. */
BP_API bp_status bp_floor(const bp_tensor *x, bp_tensor **out);

/* Smallest integer value >= x. Float dtypes. */
BP_API bp_status bp_ceil(const bp_tensor *x, bp_tensor **out);

/* Nearest integer value, halves to even (ONNX Round). Float dtypes. */
BP_API bp_status bp_round(const bp_tensor *x, bp_tensor **out);

/* Whether x is NaN -> bool. Float dtypes. */
BP_API bp_status bp_isnan(const bp_tensor *x, bp_tensor **out);

/* Whether x is +-inf -> bool. Float dtypes. */
BP_API bp_status bp_isinf(const bp_tensor *x, bp_tensor **out);

/* !x. Bool only. */
BP_API bp_status bp_logical_not(const bp_tensor *x, bp_tensor **out);

/* a + b. Numeric dtypes; integers wrap. */
BP_API bp_status bp_add(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a - b. Numeric dtypes; integers wrap. */
BP_API bp_status bp_sub(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a * b. Numeric dtypes; integers wrap. */
BP_API bp_status bp_mul(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a / b. Numeric; integers truncate toward zero, x / 0 is 0, INT_MIN / -1 wraps. */
BP_API bp_status bp_div(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a^b. Floats as C pow; integers by repeated squaring (wrapping), a negative
 * exponent gives 0 unless a is +-1. */
BP_API bp_status bp_pow(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* The larger of a and b; NaN if either is NaN. Numeric dtypes. */
BP_API bp_status bp_maximum(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* The smaller of a and b; NaN if either is NaN. Numeric dtypes. */
BP_API bp_status bp_minimum(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a mod b with the sign of b (ONNX Mod, fmod = 0; Python's %); integer x % 0
 * is 0. Numeric dtypes. */
BP_API bp_status bp_mod(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a == b -> bool. Every dtype. */
BP_API bp_status bp_eq(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a != b -> bool. Every dtype. */
BP_API bp_status bp_ne(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a < b -> bool. Every dtype. */
BP_API bp_status bp_lt(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a <= b -> bool. Every dtype. */
BP_API bp_status bp_le(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a > b -> bool. Every dtype. */
BP_API bp_status bp_gt(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a >= b -> bool. Every dtype. */
BP_API bp_status bp_ge(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a && b. Bool only. */
BP_API bp_status bp_logical_and(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a || b. Bool only. */
BP_API bp_status bp_logical_or(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* a != b. Bool only. */
BP_API bp_status bp_logical_xor(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);


/* ---- reductions, one function per op (bp_reduce by code) ---------------- *
 * Over the given axes (n_axes == 0 and axes NULL: every axis; negative axes
 * count from the end; no axis twice); keepdims keeps them as size 1. */

/* Sum over the axes (0 over none). Numeric dtypes; integers wrap; floats
 * accumulate in f64. */
BP_API bp_status bp_sum(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                        bp_tensor **out);

/* Product over the axes (1 over none). Numeric dtypes; integers wrap. */
BP_API bp_status bp_prod(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                         bp_tensor **out);

/* Arithmetic mean (NaN over zero elements). Float dtypes. */
BP_API bp_status bp_mean(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                         bp_tensor **out);

/* Largest value; NaN if any is NaN. Numeric; refused over zero elements. */
BP_API bp_status bp_max(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                        bp_tensor **out);

/* Smallest value; NaN if any is NaN. Numeric; refused over zero elements. */
BP_API bp_status bp_min(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                        bp_tensor **out);

/* Row-major index (i64) of the largest value within the reduced axes, the
 * first on ties, a NaN before any number. Numeric; refused over zero elements. */
BP_API bp_status bp_argmax(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                           bp_tensor **out);

/* Row-major index (i64) of the smallest value, as argmax. */
BP_API bp_status bp_argmin(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                           bp_tensor **out);

/* log(sum(exp(x))), computed stably (-inf over zero elements). Float dtypes. */
BP_API bp_status bp_logsumexp(const bp_tensor *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                              bp_tensor **out);


/* ---- softmax -------------------------------------------------------------- */

/* exp(x - max) / sum(exp(x - max)) along axis (negative counts from the end).
 * Float dtypes. */
BP_API bp_status bp_softmax(const bp_tensor *x, int32_t axis, bp_tensor **out);

/* x - max - log(sum(exp(x - max))) along axis. Float dtypes. */
BP_API bp_status bp_log_softmax(const bp_tensor *x, int32_t axis, bp_tensor **out);

/* ---- reductions --------------------------------------------------------- */
/* Any op code of the REDUCE kind (opcodes.h) over the given axes (n_axes ==
 * 0: every axis; negative axes count from the end; no axis twice). keepdims
 * keeps them as size 1; reduce_var and reduce_std take correction 0 here.
 * sum prod max min: numeric, result in x's dtype (integers wrap). mean and
 * logsumexp: floats. argmax/argmin: numeric, -> i64 index into the reduced
 * axes in row-major order, first on ties; refused (BP_ERR_SHAPE) over zero
 * elements, like max and min. */
BP_API bp_status bp_reduce(bp_op op, const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                           bool keepdims, bp_tensor **out);

/* ---- linear algebra ------------------------------------------------------ */
/* NumPy matmul: 1-D operands are promoted (and the axis dropped again), batch
 * dimensions broadcast. Numeric dtypes; f16/bf16 accumulate in f32. */
BP_API bp_status bp_matmul(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* ---- movement ----------------------------------------------------------- */
/* perm: a permutation of 0..rank-1; NULL reverses the axes. */
BP_API bp_status bp_transpose(const bp_tensor *x, const int32_t *perm, bp_tensor **out);
/* Per axis (arrays of x's rank): ONNX Slice semantics. starts/stops clamp to
 * the extent, negative values count from the end; steps NULL means all 1,
 * a step may be negative but not 0 (then use INT64_MIN as a stop to reach the
 * front). stops NULL means to the end in the step's direction. */
BP_API bp_status bp_slice(const bp_tensor *x, const int64_t *starts, const int64_t *stops,
                          const int64_t *steps, bp_tensor **out);
/* Join n >= 1 tensors of one dtype and rank along axis; other extents equal. */
BP_API bp_status bp_concat(int32_t n, const bp_tensor *const *xs, int32_t axis, bp_tensor **out);
/* NumPy broadcast_to. */
BP_API bp_status bp_broadcast_to(const bp_tensor *x, int32_t rank, const int64_t *shape,
                                 bp_tensor **out);
/* Constant padding: before[k] / after[k] >= 0 elements on axis k. */
BP_API bp_status bp_pad(const bp_tensor *x, const int64_t *before, const int64_t *after,
                        double value, bp_tensor **out);
/* ONNX Gather: indices (i32 or i64, on x's backend) in [-dim, dim); negative
 * ones count from the end. An index out of range is BP_ERR_INDEX naming the
 * axis, the index and its flat position: at once on a host backend; on a
 * device backend that checks indices on the device, at the next call that
 * waits for it (bp_synchronize, a read), so gather never synchronises. */
BP_API bp_status bp_gather(const bp_tensor *x, const bp_tensor *indices, int32_t axis,
                           bp_tensor **out);
/* Convert every element: NaN -> 0 for integers (and true for bool), out of range
 * saturates, float -> bool is x != 0, float -> int truncates toward zero. */
BP_API bp_status bp_cast(const bp_tensor *x, bp_dtype dtype, bp_tensor **out);

/* ==== ops added with plugin ABI 1.4 (opcodes.h's BP_OP_LIST_1_4) ========== *
 * ONNX semantics; NumPy's where ONNX is silent. A backend whose plugin was
 * built before ABI 1.4 answers them with BP_ERR_UNSUPPORTED_OP. */

/* ---- more elementwise ------------------------------------------------------ */
/* Float dtypes: the inverse and hyperbolic trigonometric functions, log(1+x),
 * e^x - 1, softplus log(1 + e^x), softsign x / (1 + |x|), silu x sigmoid(x),
 * hardswish x max(0, min(1, x / 6 + 1/2)). */
BP_API bp_status bp_acos(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_asin(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_atan(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_acosh(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_asinh(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_atanh(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_sinh(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_cosh(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_log1p(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_expm1(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_softplus(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_softsign(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_silu(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_hardswish(const bp_tensor *x, bp_tensor **out);
/* x * x. Numeric dtypes; integers wrap. */
BP_API bp_status bp_square(const bp_tensor *x, bp_tensor **out);
/* ~x. Integer dtypes (u8, i8, i16, u16, i32, u32, i64, u64). */
BP_API bp_status bp_bitwise_not(const bp_tensor *x, bp_tensor **out);
/* x < 0 ? alpha (e^x - 1) : x (ONNX Elu, alpha 1). Float dtypes. */
BP_API bp_status bp_elu(const bp_tensor *x, double alpha, bp_tensor **out);
/* x < 0 ? alpha (e^(x / alpha) - 1) : x (ONNX Celu, alpha 1; since 1.7).
 * Float dtypes. */
BP_API bp_status bp_celu(const bp_tensor *x, double alpha, bp_tensor **out);
/* x tanh(softplus(x)) = x tanh(log(1 + e^x)) (ONNX Mish; since 1.8); -inf
 * gives NaN, as the formula does. Float dtypes. */
BP_API bp_status bp_mish(const bp_tensor *x, bp_tensor **out);
/* gamma (x > 0 ? x : alpha (e^x - 1)) (ONNX Selu: alpha 1.67326319217681884765625,
 * gamma 1.05070102214813232421875). Float dtypes. */
BP_API bp_status bp_selu(const bp_tensor *x, double alpha, double gamma, bp_tensor **out);
/* x < 0 ? alpha x : x (ONNX LeakyRelu, alpha 0.01). Float dtypes. */
BP_API bp_status bp_leaky_relu(const bp_tensor *x, double alpha, bp_tensor **out);
/* x > alpha ? x : 0 (ONNX ThresholdedRelu, alpha 1). Float dtypes. */
BP_API bp_status bp_thresholded_relu(const bp_tensor *x, double alpha, bp_tensor **out);
/* max(0, min(1, alpha x + beta)) (ONNX HardSigmoid, alpha 0.2, beta 0.5). Floats. */
BP_API bp_status bp_hard_sigmoid(const bp_tensor *x, double alpha, double beta, bp_tensor **out);
/* x < -lambd ? x + bias : x > lambd ? x - bias : 0 (ONNX Shrink, bias 0,
 * lambd 0.5). Numeric dtypes (the result converted by the cast rules). */
BP_API bp_status bp_shrink(const bp_tensor *x, double bias, double lambd, bp_tensor **out);
/* min(max(x, lo), hi); lo and hi are NULL (no bound) or tensors of x's dtype
 * that broadcast to x's shape (ONNX Clip's scalars included). NaN stays NaN.
 * Numeric dtypes. */
BP_API bp_status bp_clip(const bp_tensor *x, const bp_tensor *lo, const bp_tensor *hi,
                         bp_tensor **out);
/* bp_clip with bounds given as numbers (converted to x's dtype by the cast
 * rules; -INFINITY / INFINITY for none). */
BP_API bp_status bp_clip_scalar(const bp_tensor *x, double lo, double hi, bp_tensor **out);
/* a - trunc(a / b) b, the sign of a (C fmod; ONNX Mod with fmod = 1); an
 * integer x % 0 is 0. Numeric dtypes. */
BP_API bp_status bp_fmod(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);
/* x < 0 ? slope x : x, slope broadcast to x's shape (ONNX PRelu's one-way
 * broadcasting: out has x's shape). Numeric dtypes. */
BP_API bp_status bp_prelu(const bp_tensor *x, const bp_tensor *slope, bp_tensor **out);
/* Bitwise a & b, a | b, a ^ b. Integer dtypes. */
BP_API bp_status bp_bitwise_and(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);
BP_API bp_status bp_bitwise_or(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);
BP_API bp_status bp_bitwise_xor(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);
/* a << b and a >> b (ONNX BitShift). Integer dtypes; the bits shifted out are
 * lost; a right shift of a negative signed value fills with ones (as NumPy);
 * a shift by a negative count or by the type's width or more gives 0 (-1 for
 * a negative value shifted right). */
BP_API bp_status bp_bitshift_left(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);
BP_API bp_status bp_bitshift_right(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);

/* ---- more reductions (the axes as in bp_reduce) ---------------------------------- */
/* sum |x| (ReduceL1) and sum x^2 (ReduceSumSquare): numeric dtypes, integers
 * wrap. sqrt(sum x^2) (ReduceL2) and log(sum x) (ReduceLogSum): floats. */
BP_API bp_status bp_reduce_l1(const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                              bool keepdims, bp_tensor **out);
BP_API bp_status bp_reduce_l2(const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                              bool keepdims, bp_tensor **out);
BP_API bp_status bp_reduce_sum_square(const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                                      bool keepdims, bp_tensor **out);
BP_API bp_status bp_reduce_log_sum(const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                                   bool keepdims, bp_tensor **out);
/* Variance sum (x - mean)^2 / (n - correction) and its square root; NaN
 * when n - correction <= 0. correction 0: the population's, 1: the sample's.
 * Float dtypes. */
BP_API bp_status bp_reduce_var(const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                               bool keepdims, double correction, bp_tensor **out);
BP_API bp_status bp_reduce_std(const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                               bool keepdims, double correction, bp_tensor **out);
/* Whether any / every element is true (true / false over none). Bool only. */
BP_API bp_status bp_reduce_any(const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                               bool keepdims, bp_tensor **out);
BP_API bp_status bp_reduce_all(const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                               bool keepdims, bp_tensor **out);
/* bp_argmax / bp_argmin, the last index on ties (ONNX select_last_index); a
 * NaN wins over any number, and the last NaN over earlier ones. */
BP_API bp_status bp_argmax_last(const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                                bool keepdims, bp_tensor **out);
BP_API bp_status bp_argmin_last(const bp_tensor *x, int32_t n_axes, const int32_t *axes,
                                bool keepdims, bp_tensor **out);
/* 1 where x has the first maximum along axis, 0 elsewhere (ONNX Hardmax);
 * the maximum is bp_argmax's (a NaN wins, the first NaN). Float dtypes. */
BP_API bp_status bp_hardmax(const bp_tensor *x, int32_t axis, bp_tensor **out);

/* ---- scans ------------------------------------------------------------------------ */
/* Running sum / product along axis (ONNX CumSum): exclusive leaves out the
 * element itself (the first output is 0 / 1), reverse runs from the end.
 * Numeric dtypes; integers wrap; floats accumulate in f64. */
BP_API bp_status bp_cumsum(const bp_tensor *x, int32_t axis, bool exclusive, bool reverse,
                           bp_tensor **out);
BP_API bp_status bp_cumprod(const bp_tensor *x, int32_t axis, bool exclusive, bool reverse,
                            bp_tensor **out);

/* ---- sorting ------------------------------------------------------------------------ */
/* The k largest (or smallest) elements along axis and their indices (i64),
 * in order if sorted (else in an order of the backend's choosing); ties go
 * to the lower index; NaN counts as larger than any number (ONNX TopK).
 * 0 <= k <= the axis' extent. Numeric dtypes. */
BP_API bp_status bp_topk(const bp_tensor *x, int64_t k, int32_t axis, bool largest, bool sorted,
                         bp_tensor **values, bp_tensor **indices);
/* Stable sort along axis, ascending or descending (NaN last when ascending,
 * first when descending, as NumPy; -0 and +0 are equal, so they keep their
 * order); values and the i64 indices that sort x (either out may be NULL if
 * not wanted, not both). Numeric dtypes. */
BP_API bp_status bp_sort(const bp_tensor *x, int32_t axis, bool descending, bp_tensor **values,
                         bp_tensor **indices);
/* The indices alone (i64). */
BP_API bp_status bp_argsort(const bp_tensor *x, int32_t axis, bool descending,
                            bp_tensor **indices);

/* ---- indexing and movement -------------------------------------------------------- */
/* Split along axis into n parts: sizes NULL gives equal parts (the extent
 * must divide by n), else parts of those extents, summing to the axis'.
 * outs holds n tensors on success (each to be released), NULLs on failure. */
BP_API bp_status bp_split(const bp_tensor *x, int32_t axis, int32_t n, const int64_t *sizes,
                          bp_tensor **outs);
/* x repeated reps[k] >= 0 times along each axis k (NumPy tile, ONNX Tile). */
BP_API bp_status bp_tile(const bp_tensor *x, const int64_t *reps, bp_tensor **out);
/* The upper (or lower) triangle of the last two axes, from diagonal k
 * (0: the main one, k > 0 above it), zero elsewhere (ONNX Trilu). Rank >= 2. */
BP_API bp_status bp_trilu(const bp_tensor *x, bool upper, int64_t k, bp_tensor **out);
/* One-hot along a new axis (ONNX OneHot): out has indices' shape with an
 * axis of extent depth inserted at axis (-rank-1 <= axis <= rank), of values'
 * dtype; values holds (off, on). Negative indices count from depth's end;
 * an index outside [-depth, depth) (a NaN too) gives a row of off values.
 * indices: numeric (floats truncated toward zero); depth >= 1. */
BP_API bp_status bp_one_hot(const bp_tensor *indices, int64_t depth, int32_t axis,
                            const bp_tensor *values, bp_tensor **out);
/* out[...i_axis...] = x[...indices[...]...] with indices of x's rank and any
 * extents (ONNX GatherElements); out has indices' shape. Indices as in
 * bp_gather (i32/i64, in [-dim, dim), checked as there). */
BP_API bp_status bp_gather_elements(const bp_tensor *x, const bp_tensor *indices, int32_t axis,
                                    bp_tensor **out);
/* ONNX GatherND: indices (..., m) address the first m axes of x after its
 * first batch_dims axes, which x and indices share. */
BP_API bp_status bp_gather_nd(const bp_tensor *x, const bp_tensor *indices, int32_t batch_dims,
                              bp_tensor **out);
/* bp_scatter_reduction (opcodes.h: the plugin reads it too) says how an
 * update combines with the element it lands on. */
/* A copy of x with updates written at indices along axis (ONNX
 * ScatterElements; updates and indices share a shape of x's rank), combined
 * by reduction, in row-major order of the indices. ADD and MUL on floats
 * accumulate each element in f64 and round once (a device backend may add
 * duplicates in another order); MAX and MIN propagate NaN as bp_maximum
 * does; integers wrap. Scatter-add is gather's gradient. */
BP_API bp_status bp_scatter_elements(const bp_tensor *x, const bp_tensor *indices,
                                     const bp_tensor *updates, int32_t axis,
                                     bp_scatter_reduction reduction, bp_tensor **out);
/* A copy of x with updates written at the index tuples of indices (ONNX
 * ScatterND). */
BP_API bp_status bp_scatter_nd(const bp_tensor *x, const bp_tensor *indices,
                               const bp_tensor *updates, bp_scatter_reduction reduction,
                               bp_tensor **out);
/* (N, C, H, W) -> (N, C / b^2, H b, W b) (ONNX DepthToSpace; crd picks CRD
 * mode, else DCR) and its inverse (N, C, H, W) -> (N, C b^2, H / b, W / b). */
BP_API bp_status bp_depth_to_space(const bp_tensor *x, int64_t blocksize, bool crd,
                                   bp_tensor **out);
BP_API bp_status bp_space_to_depth(const bp_tensor *x, int64_t blocksize, bp_tensor **out);
/* The elementwise maximum, minimum, sum or mean of n >= 1 tensors of one
 * dtype, broadcast together (ONNX Max, Min, Sum, Mean). mean: floats. */
BP_API bp_status bp_max_n(int32_t n, const bp_tensor *const *xs, bp_tensor **out);
BP_API bp_status bp_min_n(int32_t n, const bp_tensor *const *xs, bp_tensor **out);
BP_API bp_status bp_sum_n(int32_t n, const bp_tensor *const *xs, bp_tensor **out);
BP_API bp_status bp_mean_n(int32_t n, const bp_tensor *const *xs, bp_tensor **out);

/* ---- linear algebra -------------------------------------------------------------------- */
/* alpha op(a) op(b) + beta c (ONNX Gemm): a, b 2-D (op: transposed if
 * trans_a / trans_b; the transpose is a view, never a copy), c NULL or
 * broadcasting to (M, N). Numeric dtypes. As BLAS (and cuBLAS, PyTorch's
 * addmm) define it: with beta == 0 c is not read, so its NaN and infinities
 * do not propagate; with alpha == 0 a and b are not read. f16/bf16: the
 * product accumulates in f32, then alpha p + beta c rounds once. Integers:
 * the product wraps as bp_matmul's; whole alpha and beta scale it in
 * wrapping integer arithmetic, others in double, converted by the cast
 * rules. */
BP_API bp_status bp_gemm(const bp_tensor *a, const bp_tensor *b, const bp_tensor *c, double alpha,
                         double beta, bool trans_a, bool trans_b, bp_tensor **out);
/* Einstein summation over one or two operands ("ij,jk->ik", "bij,bjk->bik",
 * "ij->ji", "ij->i"): the contractions that transposes, sums and a batched
 * matmul express. Repeated indices within one operand (diagonals), ellipses
 * and more than two operands are BP_ERR_INVALID_ARGUMENT saying so. */
BP_API bp_status bp_einsum(const char *equation, int32_t n, const bp_tensor *const *xs,
                           bp_tensor **out);

/* ---- the schema of the public functions that are no op-table row -------- *
 * One row per function bp_<name> of ops.h, nn.h and tensor.h's views that
 * composes ops (or changes metadata only), in the form of opcodes.h's
 * BP_OP_SCHEMA: X(name, NAMES, SIGNATURE), the signature ending in its
 * outputs ("-> out, mask?": '?' may be NULL; "outs[]" an array). Python's
 * functions are generated from both tables. */
#define BP_FN_SCHEMA(X)                                                                            \
    X(zeros,               "",                                                                     \
      "backend: backend = None, dtype: dtype = 'float64', shape: shape -> out")                    \
    X(ones,                "",                                                                     \
      "backend: backend = None, dtype: dtype = 'float64', shape: shape -> out")                    \
    X(eye,                 "",                                                                     \
      "backend: backend = None, dtype: dtype = 'float64', rows: i64, cols: i64 -> out")            \
    X(argsort,             "", "x, axis: i32 = -1, descending: bool = false -> indices")           \
    X(split,               "", "x, axis: i32 = 0, split: split -> outs[]")                         \
    X(tile,                "", "x, reps: i64[] -> out")                                            \
    X(depth_to_space,      "", "x, blocksize: i64, crd: bool = false -> out")                      \
    X(space_to_depth,      "", "x, blocksize: i64 -> out")                                         \
    X(max_n,               "", "xs: tensors -> out")                                               \
    X(min_n,               "", "xs: tensors -> out")                                               \
    X(sum_n,               "", "xs: tensors -> out")                                               \
    X(mean_n,              "", "xs: tensors -> out")                                               \
    X(einsum,              "", "equation: str, *xs: tensors -> out")                               \
    X(global_max_pool,     "", "x -> out")                                                         \
    X(global_average_pool, "", "x -> out")                                                         \
    X(dropout,             "",                                                                     \
      "x, ratio: f64 = 0.5, training: bool = false, seed: u64 = 0, offset: u64 = 0 -> out, "       \
      "mask?")                                                                                     \
    X(reshape,             "", "x, shape: shape -> out")                                           \
    X(squeeze,             "", "x, axes: axes = None -> out")                                      \
    X(unsqueeze,           "", "x, axis: i32 -> out")                                              \
    X(clip_scalar,         "python:-", "x, min: f64, max: f64 -> out")

/* An input's or a parameter's domain, from its op's schema (opcodes.h's
 * BP_OP_SCHEMA DOMAINS): the range [*lo, *hi] to draw random values of dtype
 * from (*integral: integers only, even for a float dtype; an integer dtype
 * takes the integers of the range); for a parameter, the value to test with
 * (*lo == *hi). BP_ERR_INVALID_ARGUMENT when the row gives name no domain
 * (the caller's default then applies) or op is no code. */
BP_API bp_status bp_op_domain(bp_op op, const char *name, bp_dtype dtype, double *lo, double *hi,
                              bool *integral);

#ifdef __cplusplus
}
#endif
#endif

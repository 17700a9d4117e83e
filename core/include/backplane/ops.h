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
/* [start, stop) by step (step != 0): ceil((stop - start) / step) elements, >= 0. */
BP_API bp_status bp_arange(bp_backend *b, bp_dtype dtype, double start, double stop, double step,
                           bp_tensor **out);
/* rows x cols with ones on the main diagonal. */
BP_API bp_status bp_eye(bp_backend *b, bp_dtype dtype, int64_t rows, int64_t cols, bp_tensor **out);
/* Counter-based (philox.h): the same (seed, offset) gives the same values on
 * every backend. Element i uses stream position offset + i. Float dtypes. */
BP_API bp_status bp_random_uniform(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                                   uint64_t seed, uint64_t offset, double low, double high,
                                   bp_tensor **out);
BP_API bp_status bp_random_normal(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                                  uint64_t seed, uint64_t offset, double mean, double stddev,
                                  bp_tensor **out);

/* ---- elementwise -------------------------------------------------------- */
/* Any UNARY op code. Floats only: exp log sqrt rsqrt reciprocal sin cos tan
 * tanh sigmoid gelu erf floor ceil round(half to even) isnan isinf. Numeric
 * (not bool): neg abs sign relu. Bool only: logical_not. isnan/isinf -> bool. */
BP_API bp_status bp_unary(bp_op op, const bp_tensor *x, bp_tensor **out);
/* Any BINARY op code. Numeric: add sub mul div pow maximum minimum mod
 * (pow: floats and integers; integer negative exponents give 0 unless the base
 * is +-1). Comparisons: every dtype, -> bool. logical_*: bool only. */
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
/* Any REDUCE op code over the given axes (n_axes == 0: every axis; negative
 * axes count from the end; no axis twice). keepdims keeps them as size 1.
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

#ifdef __cplusplus
}
#endif
#endif

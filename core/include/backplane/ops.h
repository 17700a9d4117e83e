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

#define BP__DECL_OP(NAME, name, FAMILY) BP__DECL_OP_##FAMILY(name)
#define BP__DECL_OP_UNARY(name) BP_API bp_status bp_##name(const bp_tensor *x, bp_tensor **out);
#define BP__DECL_OP_BINARY(name) \
    BP_API bp_status bp_##name(const bp_tensor *a, const bp_tensor *b, bp_tensor **out);
#define BP__DECL_OP_WHERE(name)
#define BP__DECL_OP_REDUCE(name)                                                        \
    BP_API bp_status bp_##name(const bp_tensor *x, int32_t n_axes, const int32_t *axes, \
                               bool keepdims, bp_tensor **out);
#define BP__DECL_OP_MATMUL(name)
#define BP__DECL_OP_MOVEMENT(name)
#define BP__DECL_OP_GATHER(name)
#define BP__DECL_OP_SOFTMAX(name) \
    BP_API bp_status bp_##name(const bp_tensor *x, int32_t axis, bp_tensor **out);
#define BP__DECL_OP_CREATION(name)
#define BP__DECL_OP_RANDOM(name)
/* bp_neg(x, &out) ... bp_logical_xor(a, b, &out), bp_sum(x, n_axes, axes,
 * keepdims, &out) ... bp_logsumexp, bp_softmax(x, axis, &out), bp_log_softmax. */
BP_OP_LIST(BP__DECL_OP)

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
/* ONNX Gather: indices (i32 or i64, on x's backend) in [-dim, dim). */
BP_API bp_status bp_gather(const bp_tensor *x, const bp_tensor *indices, int32_t axis,
                           bp_tensor **out);
/* Convert every element: NaN -> 0 for integers (and true for bool), out of range
 * saturates, float -> bool is x != 0, float -> int truncates toward zero. */
BP_API bp_status bp_cast(const bp_tensor *x, bp_dtype dtype, bp_tensor **out);

#ifdef __cplusplus
}
#endif
#endif

/* The oracle: what every op should give, computed on the host in double
 * precision (long double for sums where it matters) or exactly in 64-bit
 * integers, independently of the library's and every backend's arithmetic.
 * One oracle serves both `backplane conform` (conform/src/case_oracle.c)
 * and the op tests (tests/test_ops_*.c).
 *
 * Contract of every array oracle cf_oracle_NAME: its arguments are those of
 * bp_NAME in ops.h, in the same order, with host arrays (cf_array) in place
 * of tensors and `want` in place of `out`. Inputs hold the values as the
 * dtype stores them (cf_array_from_f64 rounds them so; conform decodes what
 * the backend holds). want is initialised by the oracle (free it with
 * cf_array_free, also after a failure); float results stay unrounded: the
 * comparison rounds them to the dtype (exact ops) or measures the distance
 * in ulps. Ops compared norm-wise (reductions, softmax, matmul) also give, if
 * scale is not NULL, *scale: per output element the magnitude of the terms
 * that made it (malloc'd), and *k: the terms per element. Returns false only
 * when out of memory. Inputs are valid (the library checks arguments before
 * any backend runs): the oracle does not check them again.
 *
 * Adding an op's oracle (cumsum, topk, scatter, conv, layer_norm, ...) is one
 * function in one place:
 *   - an elementwise op: one case in cf_unary_f / cf_unary_i (unary) or
 *     cf_binary_f / cf_binary_i (binary) in elementwise.c; the array oracles
 *     of the family pick it up;
 *   - any other op: cf_oracle_NAME, declared below by the rule above, in the
 *     file of its family (reduce.c, softmax.c, matmul.c, movement.c,
 *     creation.c; a new family gets a new file named after it, including
 *     "independent.h" last), built from the helpers here (cf_array_init,
 *     cf_unravel, cf_ravel, cf_bcast_index, the cast rules).
 * Then the op tests call it from tests/test_ops_FAMILY.c, and conform maps
 * its cases' parameters to it in one line of case_oracle.c.
 *
 * The cast rules the oracle applies (cast_rules.h) and its Philox are written
 * out here, on purpose apart from the library's <backplane/cast.h>,
 * <backplane/dtype.h> conversions and <backplane/philox.h>: the oracle never
 * calls the code it checks, and independent.h, included last by every file
 * here, makes the build refuse their names. */
#ifndef BP_CONFORM_ORACLE_H
#define BP_CONFORM_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <backplane/backplane.h>

#include "cast_rules.h"

/* ---- dtype sets (dtypes.c) ------------------------------------------------ */
extern const bp_dtype cf_all_dtypes[13];    /* every dtype */
extern const bp_dtype cf_numeric_dtypes[12]; /* every dtype but bool */
extern const bp_dtype cf_float_dtypes[4];   /* f16 bf16 f32 f64 */
extern const bp_dtype cf_int_dtypes[8];     /* u8 i8 i32 i64 i16 u16 u32 u64 */
#define CF_COUNT(arr) ((int)(sizeof(arr) / sizeof((arr)[0])))

bool cf_is_float(bp_dtype dt);
size_t cf_dtype_size(bp_dtype dt); /* bytes per element */
/* Edge values of integer dtype dt into v (room for n_mid + 4): its min,
 * min + 1, then those of mid that dt can hold, then max - 1, max; in that
 * order, without repeats. Returns how many. */
int64_t cf_int_edges(bp_dtype dt, const int64_t *mid, size_t n_mid, int64_t *v);

/* ---- host arrays (array.c) ------------------------------------------------- */
/* The values of one tensor on the host: floats as doubles in f, integers and
 * bools exactly in i (only the one matching dt is allocated). */
typedef struct cf_array {
    bp_dtype dt;
    int32_t rank;
    int64_t shape[BP_MAX_RANK];
    int64_t n;
    double *f;
    int64_t *i;
} cf_array;

int64_t cf_numel(int32_t rank, const int64_t *shape);
/* Zeros of dt and shape; false when out of memory. */
bool cf_array_init(cf_array *a, bp_dtype dt, int32_t rank, const int64_t *shape);
void cf_array_free(cf_array *a);
/* The values v (n = numel, NULL: zeros) as dt stores them: floats rounded to
 * dt, integers and bools by the cast rules. */
bool cf_array_from_f64(cf_array *a, bp_dtype dt, int32_t rank, const int64_t *shape,
                       const double *v);
bool cf_array_from_i64(cf_array *a, bp_dtype dt, int32_t rank, const int64_t *shape,
                       const int64_t *v);
double cf_get_f(const cf_array *a, int64_t k);   /* any dtype, as a double */
int64_t cf_get_i(const cf_array *a, int64_t k);  /* any dtype, cast rules for floats */
void cf_set_f(cf_array *a, int64_t k, double v); /* floats unrounded; ints by the cast rules */
void cf_set_i(cf_array *a, int64_t k, int64_t v); /* floats rounded once, from the integer */

/* One element of a raw buffer of dtype dt (row-major, element i). Stores
 * apply the cast rules; loads of integers are exact. */
void cf_store_f64(bp_dtype dt, void *base, int64_t i, double v);
void cf_store_i64(bp_dtype dt, void *base, int64_t i, int64_t v);
double cf_load_f64(bp_dtype dt, const void *base, int64_t i);
int64_t cf_load_i64(bp_dtype dt, const void *base, int64_t i);
/* A whole array to / from raw bytes (dtype elements, row-major). */
void cf_encode(const cf_array *a, void *raw);
void cf_decode(cf_array *a, const void *raw);

/* ---- indexing (index.c) ------------------------------------------------------ */
/* Row-major flat index <-> per-axis index. */
void cf_unravel(int32_t rank, const int64_t *shape, int64_t flat, int64_t *idx);
int64_t cf_ravel(int32_t rank, const int64_t *shape, const int64_t *idx);
/* NumPy broadcasting: the flat index into an input of in_shape (rank in_rank,
 * right-aligned, size-1 axes broadcast) at the output index idx (out_rank
 * axes). */
int64_t cf_bcast_index(int32_t out_rank, const int64_t *idx, int32_t in_rank,
                       const int64_t *in_shape);
/* The broadcast shape of n arrays; returns its rank. */
int32_t cf_broadcast_shape(int n, const cf_array *const *in, int64_t *shape);

/* ---- the counter-based generator (philox.c) ---------------------------------- */
/* Philox4x32-10, written from the text of philox.h (not its code): the value
 * at stream position pos of key seed. */
double cf_philox_uniform01(uint64_t seed, uint64_t pos);
double cf_philox_normal01(uint64_t seed, uint64_t pos);

/* ---- element oracles (elementwise.c) ------------------------------------------ */
/* One element of a unary or binary op, for floats (in double, unrounded) and
 * for integers and bools (exactly, wrapping to dt). Comparisons and
 * isnan/isinf give 0 or 1. NaN for a float op the switch does not know. */
double cf_unary_f(bp_op op, double x);
int64_t cf_unary_i(bp_op op, bp_dtype dt, int64_t x);
/* The unary ops with ONNX attributes (elu, selu, leaky_relu,
 * thresholded_relu, hard_sigmoid, shrink: p0, p1 as opcodes.h's p.f[0],
 * p.f[1]); any other op is cf_unary_f's. */
double cf_unary_pf(bp_op op, double x, double p0, double p1);
double cf_binary_f(bp_op op, double a, double b);
int64_t cf_binary_i(bp_op op, bp_dtype dt, int64_t a, int64_t b);
/* The result dtype of a unary or binary op on dt (bool for comparisons and
 * isnan/isinf). */
bp_dtype cf_elementwise_dtype(bp_op op, bp_dtype dt);

/* ---- array oracles: elementwise (elementwise.c) ------------------------------ */
bool cf_oracle_unary(bp_op op, const cf_array *x, cf_array *want);
/* The same with the op's parameters (its f64 parameters in opcodes.h's
 * BP_OP_SCHEMA; an op without ignores them). */
bool cf_oracle_unary_params(bp_op op, const cf_array *x, double p0, double p1, cf_array *want);
bool cf_oracle_binary(bp_op op, const cf_array *a, const cf_array *b, cf_array *want);
bool cf_oracle_where(const cf_array *cond, const cf_array *a, const cf_array *b, cf_array *want);
bool cf_oracle_cast(const cf_array *x, bp_dtype dtype, cf_array *want);

/* ---- reductions and softmax (reduce.c, softmax.c) ----------------------------- */
/* axes: n_axes entries, negative ones count from the end; n_axes 0: all. */
bool cf_oracle_reduce(bp_op op, const cf_array *x, int32_t n_axes, const int32_t *axes,
                      bool keepdims, cf_array *want, double **scale, int64_t *k);
bool cf_oracle_softmax(const cf_array *x, int32_t axis, cf_array *want, double **scale,
                       int64_t *k);
bool cf_oracle_log_softmax(const cf_array *x, int32_t axis, cf_array *want, double **scale,
                           int64_t *k);

/* ---- matmul (matmul.c) ---------------------------------------------------------- */
bool cf_oracle_matmul(const cf_array *a, const cf_array *b, cf_array *want, double **scale,
                      int64_t *k);

/* ---- movement (movement.c) ------------------------------------------------------ */
bool cf_oracle_transpose(const cf_array *x, const int32_t *perm, cf_array *want);
bool cf_oracle_slice(const cf_array *x, const int64_t *starts, const int64_t *stops,
                     const int64_t *steps, cf_array *want);
bool cf_oracle_concat(int32_t n, const cf_array *const *xs, int32_t axis, cf_array *want);
bool cf_oracle_broadcast_to(const cf_array *x, int32_t rank, const int64_t *shape,
                            cf_array *want);
bool cf_oracle_pad(const cf_array *x, const int64_t *before, const int64_t *after, double value,
                   cf_array *want);
bool cf_oracle_gather(const cf_array *x, const cf_array *indices, int32_t axis, cf_array *want);

/* ---- creation (creation.c) ---------------------------------------------------------- */
bool cf_oracle_full(bp_dtype dtype, int32_t rank, const int64_t *shape, double value,
                    cf_array *want);
bool cf_oracle_arange(bp_dtype dtype, double start, double stop, double step, cf_array *want);
bool cf_oracle_eye(bp_dtype dtype, int64_t rows, int64_t cols, cf_array *want);
bool cf_oracle_random_uniform(bp_dtype dtype, int32_t rank, const int64_t *shape, uint64_t seed,
                              uint64_t offset, double low, double high, cf_array *want);
bool cf_oracle_random_normal(bp_dtype dtype, int32_t rank, const int64_t *shape, uint64_t seed,
                             uint64_t offset, double mean, double std, cf_array *want);

/* ---- the ops with attributes, the reductions, scans, sorts, indexing and
 * gemm (elementwise.c, reduce.c, scan.c, sort.c, softmax.c, index.c,
 * scatter.c, compose.c, matmul.c, einsum.c) ----------------------------------- *
 * By the contract above; lo / hi of clip may be NULL; split fills n arrays;
 * topk and sort fill values and indices (values NULL for argsort); the
 * scatters, scans and reductions give *scale and *k for norm-wise floats. */
bool cf_oracle_elu(const cf_array *x, double alpha, cf_array *want);
bool cf_oracle_selu(const cf_array *x, double alpha, double gamma, cf_array *want);
bool cf_oracle_leaky_relu(const cf_array *x, double alpha, cf_array *want);
bool cf_oracle_thresholded_relu(const cf_array *x, double alpha, cf_array *want);
bool cf_oracle_hard_sigmoid(const cf_array *x, double alpha, double beta, cf_array *want);
bool cf_oracle_shrink(const cf_array *x, double bias, double lambd, cf_array *want);
bool cf_oracle_clip(const cf_array *x, const cf_array *lo, const cf_array *hi, cf_array *want);
bool cf_oracle_max_n(int32_t n, const cf_array *const *xs, cf_array *want);
bool cf_oracle_min_n(int32_t n, const cf_array *const *xs, cf_array *want);
bool cf_oracle_sum_n(int32_t n, const cf_array *const *xs, cf_array *want);
bool cf_oracle_mean_n(int32_t n, const cf_array *const *xs, cf_array *want);

bool cf_oracle_reduce_l1(const cf_array *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                         cf_array *want, double **scale, int64_t *k);
bool cf_oracle_reduce_l2(const cf_array *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                         cf_array *want, double **scale, int64_t *k);
bool cf_oracle_reduce_sum_square(const cf_array *x, int32_t n_axes, const int32_t *axes,
                                 bool keepdims, cf_array *want, double **scale, int64_t *k);
bool cf_oracle_reduce_log_sum(const cf_array *x, int32_t n_axes, const int32_t *axes,
                              bool keepdims, cf_array *want, double **scale, int64_t *k);
bool cf_oracle_reduce_var(const cf_array *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                          double correction, cf_array *want, double **scale, int64_t *k);
bool cf_oracle_reduce_std(const cf_array *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                          double correction, cf_array *want, double **scale, int64_t *k);
bool cf_oracle_reduce_any(const cf_array *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                          cf_array *want, double **scale, int64_t *k);
bool cf_oracle_reduce_all(const cf_array *x, int32_t n_axes, const int32_t *axes, bool keepdims,
                          cf_array *want, double **scale, int64_t *k);
bool cf_oracle_argmax_last(const cf_array *x, int32_t n_axes, const int32_t *axes,
                           bool keepdims, cf_array *want, double **scale, int64_t *k);
bool cf_oracle_argmin_last(const cf_array *x, int32_t n_axes, const int32_t *axes,
                           bool keepdims, cf_array *want, double **scale, int64_t *k);
bool cf_oracle_hardmax(const cf_array *x, int32_t axis, cf_array *want);

bool cf_oracle_cumsum(const cf_array *x, int32_t axis, bool exclusive, bool reverse,
                      cf_array *want, double **scale, int64_t *k);
bool cf_oracle_cumprod(const cf_array *x, int32_t axis, bool exclusive, bool reverse,
                       cf_array *want, double **scale, int64_t *k);
bool cf_oracle_topk(const cf_array *x, int64_t k, int32_t axis, bool largest, bool sorted,
                    cf_array *values, cf_array *indices);
bool cf_oracle_sort(const cf_array *x, int32_t axis, bool descending, cf_array *values,
                    cf_array *indices);
bool cf_oracle_argsort(const cf_array *x, int32_t axis, bool descending, cf_array *indices);

bool cf_oracle_split(const cf_array *x, int32_t axis, int32_t n, const int64_t *sizes,
                     cf_array *outs);
bool cf_oracle_tile(const cf_array *x, const int64_t *reps, cf_array *want);
bool cf_oracle_trilu(const cf_array *x, bool upper, int64_t k, cf_array *want);
bool cf_oracle_one_hot(const cf_array *indices, int64_t depth, int32_t axis,
                       const cf_array *values, cf_array *want);
bool cf_oracle_gather_elements(const cf_array *x, const cf_array *indices, int32_t axis,
                               cf_array *want);
bool cf_oracle_gather_nd(const cf_array *x, const cf_array *indices, int32_t batch_dims,
                         cf_array *want);
bool cf_oracle_scatter_elements(const cf_array *x, const cf_array *indices,
                                const cf_array *updates, int32_t axis,
                                bp_scatter_reduction reduction, cf_array *want, double **scale,
                                int64_t *k);
bool cf_oracle_scatter_nd(const cf_array *x, const cf_array *indices, const cf_array *updates,
                          bp_scatter_reduction reduction, cf_array *want, double **scale,
                          int64_t *k);
bool cf_oracle_depth_to_space(const cf_array *x, int64_t blocksize, bool crd, cf_array *want);
bool cf_oracle_space_to_depth(const cf_array *x, int64_t blocksize, cf_array *want);

bool cf_oracle_gemm(const cf_array *a, const cf_array *b, const cf_array *c, double alpha,
                    double beta, bool trans_a, bool trans_b, cf_array *want, double **scale,
                    int64_t *k);
bool cf_oracle_einsum(const char *equation, int32_t n, const cf_array *const *xs,
                      cf_array *want, double **scale, int64_t *k);

#include "oracle_nn.h" /* nn.h's ops */

#endif

/* The op tests' side of the oracle: tensors made from values by the cast
 * rules, read back, and compared with what the oracle says.
 *
 * The oracle itself (element and array oracles, host arrays, indexing,
 * Philox, dtype sets, the cast rules) is the one `backplane conform` uses:
 * conform/src/oracle/oracle.h, included here. A test computes its expected
 * values there (cf_oracle_reduce, cf_binary_f, ...) and checks a result with
 * bpt_expect_array; nothing here computes an op. */
#ifndef BPT_EXPECT_H
#define BPT_EXPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <backplane/backplane.h>

#include "oracle.h"

/* ---- tensors ---- */
/* A tensor of dtype dt from double values converted with the cast rules
 * (NULL vals: zeros). */
bp_tensor *bpt_tensor(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                      const double *vals);
bp_tensor *bpt_tensor_i64(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                          const int64_t *vals);
bp_tensor *bpt_scalar(bp_backend *be, bp_dtype dt, double v);
/* Shorthand for rank 1. */
bp_tensor *bpt_vec(bp_backend *be, bp_dtype dt, int64_t n, const double *vals);
/* A tensor holding a's values exactly. */
bp_tensor *bpt_tensor_of(bp_backend *be, const cf_array *a);

/* Read every element back (malloc'd, caller frees; at least one slot). */
double *bpt_read(const bp_tensor *t);
int64_t *bpt_read_i64(const bp_tensor *t);
/* t's bytes as stored (malloc'd, caller frees; at least one byte). */
void *bpt_read_bytes(const bp_tensor *t);
/* The same number of bytes, and the same bytes (NaN payloads included). */
bool bpt_same_bytes(const bp_tensor *a, const bp_tensor *b);

/* Host arrays for the oracle, failing the test when out of memory: the
 * values as dt stores them (cf_array_from_f64 / _i64). */
cf_array bpt_array(bp_dtype dt, int32_t rank, const int64_t *shape, const double *vals);
cf_array bpt_array_i64(bp_dtype dt, int32_t rank, const int64_t *shape, const int64_t *vals);

/* ---- comparison ---- */
typedef struct bpt_tol {
    double rtol, atol; /* f32/f64: |got - want| <= atol + rtol * |want| */
    int half_ulps;     /* f16/bf16: |got - want| <= half_ulps ulp of the type */
} bpt_tol;
bpt_tol bpt_exact(void);          /* bit-for-bit value equality (NaN == NaN) */
bpt_tol bpt_math(bp_dtype dt);    /* transcendental: a few ulp (f32 ~4e-7, halves 1 ulp) */

/* Check dtype, rank and shape of t. `what` names the op (and anything else). */
void bpt_expect_meta(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
                     const int64_t *shape);
/* Check metadata and every value against `want` (unrounded oracle values:
 * they are rounded to dt with the cast rules before comparison). */
void bpt_expect(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
                const int64_t *shape, const double *want, bpt_tol tol);
/* Integer / bool dtypes, exact in int64. */
void bpt_expect_i64(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
                    const int64_t *shape, const int64_t *want);
/* An oracle's result: its dtype, shape and values (floats within tol,
 * integers and bools exactly). */
void bpt_expect_array(const char *what, const bp_tensor *t, const cf_array *want, bpt_tol tol);
/* Check that the elements' sign bits are as given (1 = negative); for -0. */
void bpt_expect_signbits(const char *what, const bp_tensor *t, const int *neg);

/* ---- support ---- */
/* Whether backend be implements op for dtype; the binary reference backend
 * must implement everything (asserted). */
bool bpt_supports(bp_backend *be, bp_op op, bp_dtype dt);
/* Deterministic pseudo-random test data in [lo, hi) (xorshift). */
void bpt_fill_random(double *dst, int64_t n, uint64_t seed, double lo, double hi);

#endif

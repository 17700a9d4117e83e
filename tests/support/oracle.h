/* The op tests' oracle: values computed independently of the library, in
 * double precision (or int64 for integers), and the helpers to move them in
 * and out of tensors and compare.
 *
 * Every conversion here implements the cast rules of ops.h / DESIGN.md in
 * plain C, without calling the library: NaN -> 0 for integers (true for bool),
 * float -> int truncates toward zero, out-of-range values saturate, float ->
 * bool is x != 0, floats round to nearest even (overflow gives infinity).
 * f16 and bf16 are encoded and decoded here too. */
#ifndef BPT_ORACLE_H
#define BPT_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <backplane/backplane.h>

/* The cast rules themselves (cf_round, cf_int_of_f64, cf_wrap, cf_f16_bits,
 * ...) are shared with `backplane conform`: conform/src/oracle/cast_rules.h. */
#include "cast_rules.h"

/* dtype lists for loops */
extern const bp_dtype orc_all_dtypes[9];     /* every dtype */
extern const bp_dtype orc_numeric_dtypes[8]; /* every dtype but bool */
extern const bp_dtype orc_float_dtypes[4];   /* f16 bf16 f32 f64 */
extern const bp_dtype orc_int_dtypes[4];     /* u8 i8 i32 i64 */
#define ORC_N(arr) ((int)(sizeof(arr) / sizeof((arr)[0])))

int64_t orc_numel(int32_t rank, const int64_t *shape);

/* ---- conversions (the cast rules, implemented in the test) ---- */

/* Store / load one element of a host array of dtype dt. */
void orc_store_f64(bp_dtype dt, void *base, int64_t i, double v);
void orc_store_i64(bp_dtype dt, void *base, int64_t i, int64_t v);
double orc_load_f64(bp_dtype dt, const void *base, int64_t i);
int64_t orc_load_i64(bp_dtype dt, const void *base, int64_t i); /* ints/bool exact */

/* ---- tensors ---- */
/* A tensor of dtype dt from double values converted with the cast rules. */
bp_tensor *orc_tensor(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                      const double *vals);
bp_tensor *orc_tensor_i64(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                          const int64_t *vals);
bp_tensor *orc_scalar(bp_backend *be, bp_dtype dt, double v);
/* Shorthand for rank 1. */
bp_tensor *orc_vec(bp_backend *be, bp_dtype dt, int64_t n, const double *vals);

/* Read every element back (malloc'd, caller frees; at least one slot). */
double *orc_read(const bp_tensor *t);
int64_t *orc_read_i64(const bp_tensor *t);

/* ---- comparison ---- */
typedef struct orc_tol {
    double rtol, atol; /* f32/f64: |got - want| <= atol + rtol * |want| */
    int half_ulps;     /* f16/bf16: |got - want| <= half_ulps ulp of the type */
} orc_tol;
orc_tol orc_exact(void);          /* bit-for-bit value equality (NaN == NaN) */
orc_tol orc_math(bp_dtype dt);    /* transcendental: a few ulp (f32 ~4e-7, halves 1 ulp) */

/* Check dtype, rank and shape of t. `what` names the op (and anything else). */
void orc_expect_meta(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
                     const int64_t *shape);
/* Check metadata and every value against `want` (unrounded oracle values:
 * they are rounded to dt with the cast rules before comparison). */
void orc_expect(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
                const int64_t *shape, const double *want, orc_tol tol);
/* Integer / bool dtypes, exact in int64. */
void orc_expect_i64(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
                    const int64_t *shape, const int64_t *want);
/* Check that the elements' sign bits are as given (1 = negative); for -0. */
void orc_expect_signbits(const char *what, const bp_tensor *t, const int *neg);

/* ---- broadcasting / indexing ---- */
/* Flat index into an input of shape in_shape (rank in_rank, right-aligned,
 * size-1 axes broadcast) for flat index `flat` of an output of out_shape. */
int64_t orc_bcast_index(int32_t out_rank, const int64_t *out_shape, int64_t flat,
                        int32_t in_rank, const int64_t *in_shape);
/* Unravel a flat row-major index. */
void orc_unravel(int32_t rank, const int64_t *shape, int64_t flat, int64_t *idx);
int64_t orc_ravel(int32_t rank, const int64_t *shape, const int64_t *idx);

/* ---- support ---- */
/* Whether backend be implements op for dtype; the binary reference backend
 * must implement everything (asserted). */
bool orc_supports(bp_backend *be, bp_op op, bp_dtype dt);
/* Deterministic pseudo-random doubles in [lo, hi) (xorshift). */
void orc_fill_random(double *dst, int64_t n, uint64_t seed, double lo, double hi);
/* Philox4x32-10 implemented in the test from the spec text in philox.h. */
double orc_philox_uniform01(uint64_t seed, uint64_t position);
double orc_philox_normal01(uint64_t seed, uint64_t position);


/* Edge values of integer dtype dt into v (room for n_mid + 4): its min,
 * min + 1, then those of mid that dt can hold, then max - 1, max; in that
 * order, without repeats. Returns how many. */
int64_t orc_int_edges(bp_dtype dt, const int64_t *mid, size_t n_mid, int64_t *v);

#endif

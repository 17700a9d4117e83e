/* backplane core: creation ops (CREATION and RANDOM families).
 *
 * full / zeros / ones / eye use the plugin's fill entry (eye fills a strided
 * diagonal view), arange its arange entry, random_* its random entry.
 * arange_i64 uses the arange entry where doubles are exact and composes
 * arange, mul and add in int64 beyond that (no entry of its own). */
#include <math.h>
#include <stdio.h>

#include <string.h>

#include "internal.h"

static bp_status check_backend(const char *fn, const bp_backend *b)
{
    if (b == NULL)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: backend is NULL; get one with bp_backend_default or "
                         "bp_backend_get",
                         fn);
    return BP_OK;
}

static bp_status check_dtype_valid(const char *fn, bp_dtype dtype)
{
    if (!bp_dtype_valid((int)dtype))
        return bp__error(BP_ERR_DTYPE,
                         "%s: %d is not a dtype; pass one of BP_BOOL, BP_U8, BP_I8, BP_I16, "
                         "BP_U16, BP_I32, BP_U32, BP_I64, BP_U64, BP_F16, BP_BF16, BP_F32, BP_F64",
                         fn, (int)dtype);
    return BP_OK;
}

/* Fill v with elem, one element of v's dtype (its first bytes). */
static bp_status fill_view_bytes(bp_backend *be, const bp_view *v, const unsigned char elem[8])
{
    bp_op_params p = bp__params();
    memcpy(&p.i[0], elem, 8); /* the element's bytes first (opcodes.h) */
    return bp__op_run(be, BP_OP_FILL, &p, NULL, (const bp_view *[]){v});
}

bp_status bp__fill_view(bp_backend *be, const bp_view *v, double value)
{
    unsigned char elem[8] = {0};
    bp_elem_store_f64(v->dtype, elem, value);
    return fill_view_bytes(be, v, elem);
}

/* value is stored with the cast rules from a double (is_i64 false) or from
 * an int64 (true: every bit kept where dtype holds it). */
static bp_status full_impl(const char *fn, bp_backend *b, bp_dtype dtype, int32_t rank,
                           const int64_t *shape, double value, bool is_i64, int64_t ivalue,
                           bp_tensor **out)
{
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(check_backend(fn, b));
    BP__TRY(check_dtype_valid(fn, dtype));
    BP__TRY(bp__shape_check(fn, dtype, rank, shape, NULL, NULL));
    BP__TRY(bp__op_require(b, BP_OP_FILL, dtype));

    unsigned char elem[8] = {0};
    if (is_i64)
        bp_elem_store_i64(dtype, elem, ivalue);
    else
        bp_elem_store_f64(dtype, elem, value);
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, b, dtype, rank, shape, &res));
    bp_view v;
    bp__view_dense(res, &v);
    return bp__deliver(res, fill_view_bytes(b, &v, elem), out);
}

bp_status bp_full(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape, double value,
                  bp_tensor **out)
{
    return full_impl("bp_full", b, dtype, rank, shape, value, false, 0, out);
}

bp_status bp_full_i64(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                      int64_t value, bp_tensor **out)
{
    return full_impl("bp_full_i64", b, dtype, rank, shape, 0.0, true, value, out);
}

bp_status bp_zeros(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                   bp_tensor **out)
{
    return full_impl("bp_zeros", b, dtype, rank, shape, 0.0, false, 0, out);
}

bp_status bp_ones(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                  bp_tensor **out)
{
    return full_impl("bp_ones", b, dtype, rank, shape, 1.0, false, 0, out);
}

static bp_status arange_checks(const char *fn, bp_backend *b, bp_dtype dtype, bp_tensor **out)
{
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(check_backend(fn, b));
    BP__TRY(check_dtype_valid(fn, dtype));
    if (dtype == BP_BOOL)
        return bp__error(BP_ERR_DTYPE,
                         "%s: dtype is bool but arange makes numeric dtypes; make it in a "
                         "numeric dtype and compare or bp_cast it",
                         fn);
    return BP_OK;
}

/* The ARANGE kernel: element i = start + i step in double, then the cast
 * rules (creation_rules.h). */
static bp_status arange_kernel(const char *fn, bp_backend *b, bp_dtype dtype, double start,
                               double step, int64_t n, bp_tensor **out)
{
    BP__TRY(bp__shape_check(fn, dtype, 1, &n, NULL, NULL));
    BP__TRY(bp__op_require(b, BP_OP_ARANGE, dtype));
    bp_op_params p = bp__params();
    p.f[0] = start;
    p.f[1] = step;
    return bp__op_into_new(fn, b, BP_OP_ARANGE, &p, NULL, dtype, 1, &n, out);
}

bp_status bp_arange(bp_backend *b, bp_dtype dtype, double start, double stop, double step,
                    bp_tensor **out)
{
    static const char fn[] = "bp_arange";
    BP__TRY(arange_checks(fn, b, dtype, out));
    if (!isfinite(start) || !isfinite(stop) || !isfinite(step))
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: start %g, stop %g and step %g must all be finite", fn, start,
                         stop, step);
    if (step == 0.0)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: step is 0; pass a nonzero step", fn);
    double q = ceil((stop - start) / step);
    if (!isfinite(q) || !(q < 9223372036854775808.0)) /* 2^63: must fit int64 */
        return bp__error(BP_ERR_SHAPE,
                         "%s: [%g, %g) by %g has too many elements to fit int64; use a larger "
                         "step",
                         fn, start, stop, step);
    int64_t n = q > 0 ? (int64_t)q : 0;
    return arange_kernel(fn, b, dtype, start, step, n, out);
}

/* ---- arange over int64, exact ---------------------------------------------- */

#define ARANGE_EXACT ((uint64_t)1 << 53) /* every integer up to this is a double */

/* The int64 whose two's complement bits are u. */
static int64_t i64_of_bits(uint64_t u)
{
    int64_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static uint64_t magnitude(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

/* How many of start, start + step, ... come before stop (step != 0), in
 * unsigned arithmetic: the span of two int64 always fits a uint64. */
static uint64_t arange_count(int64_t start, int64_t stop, int64_t step)
{
    if (step > 0 ? stop <= start : stop >= start)
        return 0;
    uint64_t span = step > 0 ? (uint64_t)stop - (uint64_t)start : (uint64_t)start - (uint64_t)stop;
    uint64_t by = magnitude(step);
    return span / by + (span % by != 0);
}

/* A tensor of one int64 value, for broadcasting. */
static bp_status i64_scalar(bp_backend *b, int64_t v, bp_tensor **out)
{
    return bp_full_i64(b, BP_I64, 0, NULL, v, out);
}

/* start + i step for i < n, beyond what doubles hold: i from the ARANGE
 * kernel in int64 (exact: n <= 2^53), times step, plus start, in int64.
 * Integer ops wrap, so the products that overflow still sum to the exact
 * value, which lies between start and stop. Then cast to dtype. */
static bp_status arange_composed(const char *fn, bp_backend *b, bp_dtype dtype, int64_t start,
                                 int64_t step, int64_t n, bp_tensor **out)
{
    bp_tensor *idx = NULL, *by = NULL, *from = NULL, *scaled = NULL, *vals = NULL;
    bp_status st = arange_kernel(fn, b, BP_I64, 0.0, 1.0, n, &idx);
    if (st == BP_OK)
        st = i64_scalar(b, step, &by);
    if (st == BP_OK)
        st = i64_scalar(b, start, &from);
    if (st == BP_OK)
        st = bp_mul(idx, by, &scaled);
    if (st == BP_OK)
        st = bp_add(scaled, from, &vals);
    if (st == BP_OK && dtype != BP_I64)
        st = bp_cast(vals, dtype, out);
    else if (st == BP_OK) {
        *out = vals;
        vals = NULL;
    }
    bp_tensor_release(idx);
    bp_tensor_release(by);
    bp_tensor_release(from);
    bp_tensor_release(scaled);
    bp_tensor_release(vals);
    if (st != BP_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", bp_last_error());
        return bp__error(st,
                         "%s: values beyond 2^53 are made of arange, mul and add in int64 on "
                         "backend %s, and one failed: %s",
                         fn, b->name, why);
    }
    return BP_OK;
}

bp_status bp_arange_i64(bp_backend *b, bp_dtype dtype, int64_t start, int64_t stop, int64_t step,
                        bp_tensor **out)
{
    static const char fn[] = "bp_arange_i64";
    BP__TRY(arange_checks(fn, b, dtype, out));
    if (step == 0)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: step is 0; pass a nonzero step", fn);
    uint64_t n = arange_count(start, stop, step);
    if (n > (uint64_t)INT64_MAX)
        return bp__error(BP_ERR_SHAPE,
                         "%s: [%lld, %lld) by %lld has %llu elements, more than int64 counts; "
                         "use a larger step",
                         fn, (long long)start, (long long)stop, (long long)step,
                         (unsigned long long)n);
    if (n > ARANGE_EXACT) /* 2^56 bytes and more: no machine holds it */
        return bp__error(BP_ERR_SHAPE,
                         "%s: [%lld, %lld) by %lld has %llu elements, more than 2^53; use a "
                         "larger step",
                         fn, (long long)start, (long long)stop, (long long)step,
                         (unsigned long long)n);
    /* the kernel computes start + i step in double: exact when start, the
     * last value and every i step are integers a double holds */
    uint64_t travel = n > 0 ? (n - 1) * magnitude(step) : 0; /* <= the span: no overflow */
    int64_t last = i64_of_bits((uint64_t)start + (n > 0 ? n - 1 : 0) * (uint64_t)step);
    if (magnitude(start) <= ARANGE_EXACT && magnitude(last) <= ARANGE_EXACT &&
        travel <= ARANGE_EXACT)
        return arange_kernel(fn, b, dtype, (double)start, (double)step, (int64_t)n, out);
    BP__TRY(bp__shape_check(fn, dtype, 1, (const int64_t[]){(int64_t)n}, NULL, NULL));
    return arange_composed(fn, b, dtype, start, step, (int64_t)n, out);
}

bp_status bp_eye(bp_backend *b, bp_dtype dtype, int64_t rows, int64_t cols, bp_tensor **out)
{
    static const char fn[] = "bp_eye";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(check_backend(fn, b));
    BP__TRY(check_dtype_valid(fn, dtype));
    if (rows < 0 || cols < 0)
        return bp__error(BP_ERR_SHAPE, "%s: rows %lld and cols %lld must both be >= 0", fn,
                         (long long)rows, (long long)cols);
    int64_t shape[2] = {rows, cols};
    BP__TRY(bp__shape_check(fn, dtype, 2, shape, NULL, NULL));
    BP__TRY(bp__op_require(b, BP_OP_FILL, dtype));

    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, b, dtype, 2, shape, &res));
    bp_view all, diag;
    bp__view_dense(res, &all);
    bp_status st = bp__fill_view(b, &all, 0.0);
    if (st == BP_OK) {
        /* The diagonal as a rank-1 view: element i at i * (cols + 1). When it
         * has two or more elements, rows >= 2 and rows * cols fits, so cols + 1
         * does too. */
        int64_t n = rows < cols ? rows : cols;
        diag = all;
        diag.rank = 1;
        diag.shape[0] = n;
        diag.strides[0] = n > 1 ? cols + 1 : 1;
        st = bp__fill_view(b, &diag, 1.0);
    }
    return bp__deliver(res, st, out);
}

static bp_status random_impl(const char *fn, bp_op op, bp_backend *b, bp_dtype dtype,
                             int32_t rank, const int64_t *shape, uint64_t seed, uint64_t offset,
                             double p0, double p1, bp_tensor **out)
{
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(check_backend(fn, b));
    BP__TRY(check_dtype_valid(fn, dtype));
    if (!bp_dtype_is_float(dtype))
        return bp__error(BP_ERR_DTYPE,
                         "%s: dtype is %s but random numbers come in float dtypes (f16, bf16, "
                         "f32, f64); draw floats and bp_cast them",
                         fn, bp_dtype_name(dtype));
    bool uniform = op == BP_OP_RANDOM_UNIFORM;
    const char *n0 = uniform ? "low" : "mean", *n1 = uniform ? "high" : "stddev";
    if (!isfinite(p0) || !isfinite(p1))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s %g and %s %g must both be finite", fn,
                         n0, p0, n1, p1);
    if (uniform && p0 > p1)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: low %g is above high %g; swap them", fn,
                         p0, p1);
    if (!uniform && p1 < 0)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: stddev %g is negative; it must be >= 0",
                         fn, p1);
    BP__TRY(bp__shape_check(fn, dtype, rank, shape, NULL, NULL));
    BP__TRY(bp__op_require(b, op, dtype));

    bp_op_params p = bp__params();
    p.i[0] = (int64_t)seed; /* as unsigned: the bits (opcodes.h) */
    p.i[1] = (int64_t)offset;
    p.f[0] = p0;
    p.f[1] = p1;
    return bp__op_into_new(fn, b, op, &p, NULL, dtype, rank, shape, out);
}

bp_status bp_random_uniform(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                            uint64_t seed, uint64_t offset, double low, double high,
                            bp_tensor **out)
{
    return random_impl("bp_random_uniform", BP_OP_RANDOM_UNIFORM, b, dtype, rank, shape, seed,
                       offset, low, high, out);
}

bp_status bp_random_normal(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                           uint64_t seed, uint64_t offset, double mean, double stddev,
                           bp_tensor **out)
{
    return random_impl("bp_random_normal", BP_OP_RANDOM_NORMAL, b, dtype, rank, shape, seed,
                       offset, mean, stddev, out);
}

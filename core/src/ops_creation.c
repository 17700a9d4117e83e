/* backplane core: creation ops (CREATION and RANDOM families).
 *
 * full / zeros / ones / eye use the plugin's fill entry (eye fills a strided
 * diagonal view), arange its arange entry, random_* its random entry. */
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
                         "%s: %d is not a dtype; pass one of BP_BOOL, BP_U8, BP_I8, BP_I32, "
                         "BP_I64, BP_F16, BP_BF16, BP_F32, BP_F64",
                         fn, (int)dtype);
    return BP_OK;
}

bp_status bp__fill_view(bp_backend *be, const bp_view *v, double value)
{
    bp_op_params p = bp__params();
    unsigned char elem[8] = {0};
    bp_elem_store_f64(v->dtype, elem, value);
    memcpy(&p.i[0], elem, sizeof elem); /* the element's bytes first (opcodes.h) */
    return bp__op_run(be, BP_OP_FILL, &p, NULL, (const bp_view *[]){v});
}

static bp_status full_impl(const char *fn, bp_backend *b, bp_dtype dtype, int32_t rank,
                           const int64_t *shape, double value, bp_tensor **out)
{
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(check_backend(fn, b));
    BP__TRY(check_dtype_valid(fn, dtype));
    BP__TRY(bp__shape_check(fn, dtype, rank, shape, NULL, NULL));
    BP__TRY(bp__op_require(b, BP_OP_FILL, dtype));

    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, b, dtype, rank, shape, &res));
    bp_view v;
    bp__view_dense(res, &v);
    return bp__deliver(res, bp__fill_view(b, &v, value), out);
}

bp_status bp_full(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape, double value,
                  bp_tensor **out)
{
    return full_impl("bp_full", b, dtype, rank, shape, value, out);
}

bp_status bp_zeros(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                   bp_tensor **out)
{
    return full_impl("bp_zeros", b, dtype, rank, shape, 0.0, out);
}

bp_status bp_ones(bp_backend *b, bp_dtype dtype, int32_t rank, const int64_t *shape,
                  bp_tensor **out)
{
    return full_impl("bp_ones", b, dtype, rank, shape, 1.0, out);
}

bp_status bp_arange(bp_backend *b, bp_dtype dtype, double start, double stop, double step,
                    bp_tensor **out)
{
    static const char fn[] = "bp_arange";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(check_backend(fn, b));
    BP__TRY(check_dtype_valid(fn, dtype));
    if (dtype == BP_BOOL)
        return bp__error(BP_ERR_DTYPE,
                         "%s: dtype is bool but arange makes numeric dtypes; make it in a "
                         "numeric dtype and compare or bp_cast it",
                         fn);
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
    BP__TRY(bp__shape_check(fn, dtype, 1, &n, NULL, NULL));
    BP__TRY(bp__op_require(b, BP_OP_ARANGE, dtype));

    bp_op_params p = bp__params();
    p.f[0] = start;
    p.f[1] = step;
    return bp__op_into_new(fn, b, BP_OP_ARANGE, &p, NULL, dtype, 1, &n, out);
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

/* Creation ops: full, arange, eye and the counter-based generators, values
 * given to the dtype by the cast rules (floats unrounded). */
#include <math.h>

#include "oracle.h"
#include "independent.h"

bool cf_oracle_full(bp_dtype dtype, int32_t rank, const int64_t *shape, double value,
                    cf_array *want)
{
    if (!cf_array_init(want, dtype, rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++)
        cf_set_f(want, k, value);
    return true;
}

/* ceil((stop - start) / step) elements (none if that is negative):
 * start + k step. */
bool cf_oracle_arange(bp_dtype dtype, double start, double stop, double step, cf_array *want)
{
    double q = ceil((stop - start) / step);
    int64_t n = q > 0 ? (int64_t)q : 0;
    if (!cf_array_init(want, dtype, 1, &n))
        return false;
    for (int64_t k = 0; k < n; k++)
        cf_set_f(want, k, start + (double)k * step);
    return true;
}

bool cf_oracle_eye(bp_dtype dtype, int64_t rows, int64_t cols, cf_array *want)
{
    int64_t shape[2] = {rows, cols};
    if (!cf_array_init(want, dtype, 2, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++)
        cf_set_f(want, k, k / cols == k % cols ? 1.0 : 0.0);
    return true;
}

/* Element k: low + (high - low) u at stream position offset + k. */
bool cf_oracle_random_uniform(bp_dtype dtype, int32_t rank, const int64_t *shape, uint64_t seed,
                              uint64_t offset, double low, double high, cf_array *want)
{
    if (!cf_array_init(want, dtype, rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++)
        cf_set_f(want, k, low + (high - low) * cf_philox_uniform01(seed, offset + (uint64_t)k));
    return true;
}

/* Element k: mean + std z at stream position offset + k. */
bool cf_oracle_random_normal(bp_dtype dtype, int32_t rank, const int64_t *shape, uint64_t seed,
                             uint64_t offset, double mean, double std, cf_array *want)
{
    if (!cf_array_init(want, dtype, rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++)
        cf_set_f(want, k, mean + std * cf_philox_normal01(seed, offset + (uint64_t)k));
    return true;
}

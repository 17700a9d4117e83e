/* Dropout with a key, as nn.h defines it: in training, element i is kept
 * when the f32 uniform at stream position offset + i of seed is >= ratio
 * rounded to f32, and is then x / (1 - ratio); dropped elements are 0. In
 * inference y = x and the mask is all true. */
#include "oracle.h"
#include "independent.h"

bool cf_oracle_dropout(const cf_array *x, double ratio, bool training, uint64_t seed,
                       uint64_t offset, cf_array *want, cf_array *mask)
{
    if (!cf_array_init(want, x->dt, x->rank, x->shape))
        return false;
    if (mask && !cf_array_init(mask, BP_BOOL, x->rank, x->shape))
        return false;
    const double r32 = cf_round(BP_F32, ratio);
    for (int64_t i = 0; i < x->n; i++) {
        /* the uniform has 24 bits: its f32 value is exact */
        bool keep = !training || cf_philox_uniform01(seed, offset + (uint64_t)i) >= r32;
        want->f[i] = !keep ? 0.0 : training ? x->f[i] / (1.0 - ratio) : x->f[i];
        if (mask)
            mask->i[i] = keep;
    }
    return true;
}

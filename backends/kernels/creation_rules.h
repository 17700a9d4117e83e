/* What the creation ops compute for one element, stated once for the host
 * kernels (creation.c) and the cuda kernels (backends/cuda/creation.cu):
 * host C and CUDA device code, like backplane/cast.h. Each value then goes
 * through the cast rules (bp_elem_store_f64), so every backend writes the
 * same bits. */
#ifndef BPK_CREATION_RULES_H
#define BPK_CREATION_RULES_H

#include <stdint.h>
#include <string.h>

#include <backplane/dtype.h>
#include <backplane/philox.h>

/* fill's element: the first bytes of value as dt's element (raw bits, in
 * the low bytes of the result), a bool made 0 or 1. */
BP_HOST_DEVICE static inline uint64_t bpk_fill_bits(bp_dtype dt, const void *value)
{
    uint64_t bits = 0;
    memcpy(&bits, value, bp_dtype_size(dt));
    if (dt == BP_BOOL)
        bits = (bits & 0xffu) != 0;
    return bits;
}

/* arange's element i: start + i step in double, each operation rounded (no
 * fused multiply-add: the cuda plugin compiles with --fmad=false). */
BP_HOST_DEVICE static inline double bpk_arange_at(double start, double step, int64_t i)
{
    return start + (double)i * step;
}

/* random_uniform's element from a uniform draw u in [0, 1) (philox.h), and
 * random_normal's from a standard normal draw z. */
BP_HOST_DEVICE static inline double bpk_uniform_at(double low, double high, double u)
{
    return low + (high - low) * u;
}

BP_HOST_DEVICE static inline double bpk_normal_at(double mean, double stddev, double z)
{
    return mean + stddev * z;
}

#endif

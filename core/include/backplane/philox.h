/* backplane: the counter-based random number generator every backend uses.
 *
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
 * SC'11). A draw is a pure function of (seed, position), so every backend,
 * serial or parallel, produces the same values for the same key.
 *
 * Element i of a tensor drawn with (seed, offset) sits at stream position
 * p = offset + i (row-major order). The 64-bit seed is the key; the counter
 * is the 64-bit block number in words 0-1, zero in words 2-3.
 *   uniform: block p / 4, word p % 4: u = (w >> 8) * 2^-24 in [0, 1);
 *            value = low + (high - low) * u, computed in double.
 *   normal:  block p, words 0 and 1: u1 = ((w0 >> 8) + 1) * 2^-24 in (0, 1],
 *            u2 = (w1 >> 8) * 2^-24; z = sqrt(-2 ln u1) * cos(2 pi u2);
 *            value = mean + stddev * z, computed in double.
 * The double result is then rounded to the output dtype. */
#ifndef BACKPLANE_PHILOX_H
#define BACKPLANE_PHILOX_H

#include <math.h>
#include <stdint.h>

#include "dtype.h" /* BP_HOST_DEVICE */

#ifdef __cplusplus
extern "C" {
#endif

BP_HOST_DEVICE static inline void bp_philox4x32_10(uint64_t seed, uint64_t block, uint32_t out[4])
{
    uint32_t c0 = (uint32_t)block, c1 = (uint32_t)(block >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* One word of the stream as a uniform draw in [0, 1): its top 24 bits. */
BP_HOST_DEVICE static inline double bp_philox_word_uniform01(uint32_t word)
{
    return (double)(word >> 8) * (1.0 / 16777216.0);
}

BP_HOST_DEVICE static inline double bp_philox_uniform01(uint64_t seed, uint64_t position)
{
    uint32_t w[4];
    bp_philox4x32_10(seed, position / 4u, w);
    return bp_philox_word_uniform01(w[position % 4u]);
}

BP_HOST_DEVICE static inline double bp_philox_normal01(uint64_t seed, uint64_t position)
{
    uint32_t w[4];
    bp_philox4x32_10(seed, position, w);
    double u1 = ((double)(w[0] >> 8) + 1.0) * (1.0 / 16777216.0);
    double u2 = (double)(w[1] >> 8) * (1.0 / 16777216.0);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

#ifdef __cplusplus
}
#endif
#endif

/* Philox4x32-10 written from the text of philox.h (not its code): counter
 * (block lo, block hi, 0, 0), key (seed lo, seed hi), ten rounds. */
#include <math.h>
#include <string.h>

#include "oracle.h"
#include "independent.h"

static uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

static void philox(uint64_t seed, uint64_t block, uint32_t w[4])
{
    uint32_t c[4] = {(uint32_t)block, (uint32_t)(block >> 32), 0, 0};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    for (int r = 0; r < 10; r++) {
        uint32_t hi0, hi1;
        uint32_t lo0 = mulhilo(0xD2511F53u, c[0], &hi0);
        uint32_t lo1 = mulhilo(0xCD9E8D57u, c[2], &hi1);
        uint32_t n[4] = {hi1 ^ c[1] ^ key[0], lo1, hi0 ^ c[3] ^ key[1], lo0};
        memcpy(c, n, sizeof c);
        key[0] += 0x9E3779B9u;
        key[1] += 0xBB67AE85u;
    }
    memcpy(w, c, sizeof c);
}

/* uniform: block pos / 4, word pos % 4, its top 24 bits * 2^-24 in [0, 1). */
double cf_philox_uniform01(uint64_t seed, uint64_t pos)
{
    uint32_t w[4];
    philox(seed, pos >> 2, w);
    return ldexp((double)(w[pos & 3u] >> 8), -24);
}

/* normal: block pos, words 0 and 1, Box-Muller with u1 in (0, 1]. */
double cf_philox_normal01(uint64_t seed, uint64_t pos)
{
    uint32_t w[4];
    philox(seed, pos, w);
    double u1 = ldexp((double)(w[0] >> 8) + 1.0, -24), u2 = ldexp((double)(w[1] >> 8), -24);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

/* f32 pow in vector lanes (bpc_vmath's pow_f32 in vmath.h).
 *
 * The reference computes (float)pow((double)a, (double)b): one libm call per
 * element. Here, for a positive finite base and a finite exponent,
 * t = b log(a) and exp(t) are evaluated in double, branch-free, so the loops
 * run in 4 double lanes (AVX2): log by vmath's core (< 1 ulp of double), exp
 * by the Taylor series to r^11 (truncation < 1e-14 relative). log's error
 * times |t| <= 104 (below that the f32 result is 0, above 88.8 it is inf) is
 * < 4e-14 absolute in t, so the double result is within ~5e-14 relative of
 * the exact one, far below one f32 ulp (6e-8): rounded, it is the
 * reference's, except where the exact value lies within that distance of a
 * float rounding boundary (then one ulp apart; 2^-150, a tie the reference
 * rounds to 0, may give 2^-149). The conformance file allows 5 ulp for f32
 * pow, the op tests 4e-7 relative. Everything else (a base <= 0, inf or
 * NaN, an exponent inf or NaN) is patched with the reference formula, so
 * pow's special cases (0^y, (-8)^(1/3), 1^NaN, x^0 for such x) come out as
 * the reference's bits. */
#include <math.h>

#include "vmath.h"

#define CHUNK 1024

static inline int pow_in(double a, double b)
{
    return (a > 0.0) & (a < INFINITY) & (fabs(b) < INFINITY);
}

/* exp(t) for |t| <= 708 as bpc_exp_core (same reduction), with the series
 * cut after r^11 and evaluated by Estrin's scheme rather than Horner's: a
 * dependency chain of ~5 multiply-adds instead of 12, which is what bounded
 * the loop (measured 48 -> 37 ms for 2^22 elements, one thread). */
static inline double exp_short(double x)
{
    const double shifter = 6755399441055744.0; /* 0x1.8p52 */
    const double log2e = 1.4426950408889634074;
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    double t = x * log2e + shifter;
    double n = t - shifter;
    uint64_t tb, sb;
    memcpy(&tb, &t, 8);
    memcpy(&sb, &shifter, 8);
    double r = (x - n * ln2_hi) - n * ln2_lo;
    double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    double q0 = 0.5 + r * (1.0 / 6.0), q1 = 1.0 / 24.0 + r * (1.0 / 120.0);
    double q2 = 1.0 / 720.0 + r * (1.0 / 5040.0), q3 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
    double q4 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
    double p = ((q0 + r2 * q1) + r4 * (q2 + r2 * q3)) + r8 * q4;
    double y = (p * r2 + r) + 1.0;
    uint64_t eb = (tb - sb + 1023u) << 52; /* 2^n, n in [-1022, 1023] */
    double scale;
    memcpy(&scale, &eb, 8);
    return y * scale;
}

/* A chunk in two passes (t = b log a, then exp(t)): two short loops keep
 * more elements in flight than one long one. Lanes outside the fast range
 * are computed on 1^0, then patched. t is clamped to [-708, 708], where
 * exp_short holds: beyond 88.8 the f32 result is inf, below -104 it is 0,
 * as the reference's (a clamp, not a mask: GCC 12 vectorises only the
 * former). SB is b's stride, 1 (dense) or 0 (one exponent). */
#define POW_CHUNKS(SB)                                                              \
    double t[CHUNK];                                                                \
    for (int64_t c = 0; c < n; c += CHUNK) {                                        \
        int64_t len = n - c < CHUNK ? n - c : CHUNK;                                \
        const float *ac = a + c, *bc = b + c * (SB);                                \
        float *oc = o + c;                                                          \
        int ok = 1;                                                                 \
        for (int64_t i = 0; i < len; i++) {                                         \
            double x = (double)ac[i], y = (double)bc[i * (SB)];                     \
            int in = pow_in(x, y);                                                  \
            x = in ? x : 1.0;                                                       \
            y = in ? y : 0.0;                                                       \
            double ti = y * bpc_log_core(x);                                        \
            ti = ti < -708.0 ? -708.0 : ti;                                         \
            t[i] = ti > 708.0 ? 708.0 : ti;                                         \
            ok &= in;                                                               \
        }                                                                           \
        for (int64_t i = 0; i < len; i++)                                           \
            oc[i] = (float)exp_short(t[i]);                                         \
        if (!ok)                                                                    \
            for (int64_t i = 0; i < len; i++) {                                     \
                double x = (double)ac[i], y = (double)bc[i * (SB)];                 \
                if (!pow_in(x, y))                                                  \
                    oc[i] = (float)pow(x, y);                                       \
            }                                                                       \
    }

static void pow_dense(const float *restrict a, const float *restrict b,
                                 float *restrict o, int64_t n)
{
    POW_CHUNKS(1)
}

static void pow_scalar_exp(const float *restrict a, const float *restrict b,
                                      float *restrict o, int64_t n)
{
    POW_CHUNKS(0)
}

void BPC_LEVEL_FN(bpc_vpow_f32)(const float *a, const float *b, int64_t b_stride, float *o, int64_t n)
{
    if (b_stride == 0)
        pow_scalar_exp(a, b, o, n);
    else
        pow_dense(a, b, o, n);
}

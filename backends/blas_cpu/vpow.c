/* f32 pow in vector lanes (bpc_vmath's pow_f32 in vmath.h).
 *
 * The reference computes (float)pow((double)a, (double)b): one libm call per
 * element. Here, for a positive finite base and a finite exponent,
 * t = b log(a) and exp(t) are evaluated in double, branch-free, so the loops
 * run in double lanes: with fused multiply-adds where the level has them
 * (below), else log by vmath's core (< 1 ulp of double) and exp by the
 * Taylor series to r^11 (truncation < 1e-14 relative). log's error times
 * |t| <= 104 (below that the f32 result is 0, above 88.8 it is inf) keeps
 * the double result far within one f32 ulp (6e-8) of the exact one:
 * rounded, it is the reference's, except where the exact value lies that
 * close to a float rounding boundary (then one ulp apart; 2^-150, a tie the
 * reference rounds to 0, may give 2^-149). bench/vmath_ulp.c sweeps every
 * float against fixed exponents and bases. The conformance file allows 5
 * ulp for f32 pow, the op tests 4e-7 relative. Everything else (a base <= 0,
 * inf or NaN, an exponent inf or NaN) is patched with the reference
 * formula, so pow's special cases (0^y, (-8)^(1/3), 1^NaN, x^0 for such x)
 * come out as the reference's bits. */
#include <math.h>

#include "vmath.h"

#define CHUNK 1024

static inline int pow_in(double a, double b)
{
    return (a > 0.0) & (a < INFINITY) & (fabs(b) < INFINITY);
}

#if defined(FP_FAST_FMA) || defined(__FMA__)
/* With fused multiply-adds (every level but the x86-64 baseline): log
 * without a double division and exp with a shorter polynomial, each to what
 * an f32 result needs. log(a) = k ln2 + 2s + s^3 R(s^2), s = f / (2 + f)
 * from musl's split (f = m - 1, m in [sqrt(2)/2, sqrt(2))), 1 / (2 + f) a
 * float quotient refined by one Newton step (2^-46), R fitted (2^-43): t's
 * error stays below 2^-37 absolute over the range where the f32 result is
 * finite and nonzero (|t| < 104). exp(t) = 2^n (1 + r + r^2 Q(r)), Q fitted
 * (2^-32). t is clamped to [-110, 90], outside which the f32 result is 0 or
 * inf either way. */
static inline double log_fma(double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    u -= 0x3fe6a09e667f3bcdull;
    double k = (double)((int64_t)u >> 52);
    uint64_t mb = (u & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull;
    double m;
    memcpy(&m, &mb, 8);
    double f = m - 1.0, d = 2.0 + f;
    double q = (double)(1.0f / (float)d);
    q = fma(q, fma(-q, d, 1.0), q);
    double s = f * q, z = s * s;
    double R = 0.19362653714202008;
    R = fma(R, z, 0.22191400830308503);
    R = fma(R, z, 0.2857175453591449);
    R = fma(R, z, 0.3999999879733759);
    R = fma(R, z, 0.6666666666737509);
    return fma(k, 0.6931471805599453094, fma(s * z, R, 2.0 * s));
}

static inline double exp_fma(double t)
{
    const double shifter = 6755399441055744.0, log2e = 1.4426950408889634074;
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    double s = fma(t, log2e, shifter);
    double n = s - shifter;
    uint64_t sb;
    memcpy(&sb, &s, 8);
    double r = fma(-n, ln2_lo, fma(-n, ln2_hi, t));
    double p = 0.00019890980869750327;
    p = fma(p, r, 0.0013933641031986701);
    p = fma(p, r, 0.008333310934448869);
    p = fma(p, r, 0.04166646500604005);
    p = fma(p, r, 0.16666666681614256);
    p = fma(p, r, 0.5000000013457727);
    double y = 1.0 + fma(r * r, p, r);
    uint64_t eb = (sb - 0x4338000000000000ull + 1023u) << 52; /* 2^n, n in [-159, 130] */
    double scale;
    memcpy(&scale, &eb, 8);
    return y * scale;
}

/* One pass over a chunk; lanes outside the fast range (a positive and
 * finite, b finite) computed on 1^0 and patched with the reference. */
#define POW_CHUNKS(SB)                                                              \
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
            double t = y * log_fma(x);                                              \
            t = t < -110.0 ? -110.0 : t;                                            \
            t = t > 90.0 ? 90.0 : t;                                                \
            oc[i] = (float)exp_fma(t);                                              \
            ok &= in;                                                               \
        }                                                                           \
        if (!ok)                                                                    \
            for (int64_t i = 0; i < len; i++) {                                     \
                double x = (double)ac[i], y = (double)bc[i * (SB)];                 \
                if (!pow_in(x, y))                                                  \
                    oc[i] = (float)pow(x, y);                                       \
            }                                                                       \
    }

#else
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

#endif

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

/* Vectorisable math for the hot float kernels.
 *
 * libm's exp() is a function call per element that the compiler cannot
 * vectorise (without -ffast-math, which would change other results). These
 * are branch-free inline versions the auto-vectoriser turns into SIMD code,
 * accurate to about 1e-14 relative in double: once rounded to f32 they give
 * the correctly rounded value but in rare near-halfway cases (then 1 ulp). */
#ifndef BPC_VMATH_H
#define BPC_VMATH_H

#include <stdint.h>
#include <string.h>

/* The hot loops are compiled twice, for the x86-64 baseline (SSE2) and for
 * AVX2 + FMA, and the loader picks one by CPU (GCC function multiversioning),
 * so the plugin stays portable while using the wider vectors where present. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BPC_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BPC_CLONES
#endif

/* exp(x) for x in double. x is clamped to [-708, 709] so 2^n stays a normal
 * double (outputs of f32 kernels saturate to 0 / inf correctly); NaN passes
 * the comparisons untouched and propagates. Cody-Waite reduction
 * x = n ln2 + r, |r| <= ln2 / 2, then a degree-11 Taylor polynomial
 * (truncation error r^12 / 12! < 7e-15). */
static inline double bpc_exp_d(double x)
{
    const double shifter = 6755399441055744.0; /* 0x1.8p52: adding it rounds to an integer */
    const double log2e = 1.4426950408889634074;
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    x = x < -708.0 ? -708.0 : x;
    x = x > 709.0 ? 709.0 : x;
    double t = x * log2e + shifter;
    double n = t - shifter;
    uint64_t tb, sb;
    memcpy(&tb, &t, 8);
    memcpy(&sb, &shifter, 8);
    int64_t ni = (int64_t)(tb - sb);
    double r = (x - n * ln2_hi) - n * ln2_lo;
    double p = 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    uint64_t eb = (uint64_t)(ni + 1023) << 52;
    double scale;
    memcpy(&scale, &eb, 8);
    return p * scale;
}

/* o[i] = (float)exp((double)x[i]) over contiguous arrays. */
void bpc_vexp_f32(const float *x, float *o, int64_t n);
/* buf[i] = exp(buf[i] - m); returns the sum of the new buf[i]. */
double bpc_vexp_shift_sum(double *buf, int64_t n, double m);
/* The sum of n floats (stride 1) accumulated in double. */
double bpc_vsum_f32(const float *p, int64_t n);
double bpc_vsum_f64(const double *p, int64_t n);

#endif

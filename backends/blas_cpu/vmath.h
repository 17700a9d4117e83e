/* Vectorised overrides of reference kernels, for the f32 ops the benchmarks
 * lean on. Each is allowed to differ from the reference (binary backend) only
 * within the tolerance the op tests enforce; see each function.
 *
 * The reference computes f32 exp as (float)exp((double)x) with libm: one
 * call per element that the compiler cannot vectorise. bpc_expf evaluates
 * exp in float instead, branch-free, so the auto-vectoriser can run 8 lanes
 * (AVX2): measured over every float in its fast range it is within 1 ulp of
 * the reference (see vmath.c). Inputs outside the fast range (overflow,
 * subnormal results, inf, NaN) take the reference's formula, so the IEEE
 * limits come out bit-identical. */
#ifndef BPC_VMATH_H
#define BPC_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The hot loops are compiled twice, for the x86-64 baseline (SSE2) and for
 * AVX2 + FMA, and the loader picks one by CPU (GCC function multiversioning),
 * so the plugin stays portable while using the wider vectors where present.
 * No FMA contraction (-std=c11), so both clones give the same bits. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BPC_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BPC_CLONES
#endif

/* The fast range: 2^n stays a normal float and the result is normal. */
#define BPC_EXPF_LO (-86.5f)
#define BPC_EXPF_HI (88.3f)

/* exp(x) for x in [BPC_EXPF_LO, BPC_EXPF_HI]: x = n ln2 + r with n rounded
 * by the 1.5 * 2^23 shifter, ln2 split in a part with few bits (so n * C1 is
 * exact) and the rest (Cody-Waite), |r| <= ln2 / 2; then Cephes' degree-7
 * polynomial 1 + r + r^2 P(r) and the exponent added in the bits. */
static inline float bpc_expf_core(float x)
{
    const float shifter = 12582912.0f; /* 0x1.8p23 */
    const float log2e = 1.44269504088896341f;
    const float c1 = 0.693359375f, c2 = -2.12194440e-4f;
    float t = x * log2e + shifter;
    float n = t - shifter;
    uint32_t tb, sb;
    memcpy(&tb, &t, 4);
    memcpy(&sb, &shifter, 4);
    float r = x - n * c1;
    r = r - n * c2;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float y = (p * (r * r) + r) + 1.0f;
    uint32_t eb = (tb - sb + 127u) << 23; /* 2^n, n in [-125, 127] */
    float scale;
    memcpy(&scale, &eb, 4);
    return y * scale;
}

static inline int bpc_expf_in_range(float x) { return (x >= BPC_EXPF_LO) & (x <= BPC_EXPF_HI); }

/* One element, the same bits as bpc_vexp_f32 gives it. */
static inline float bpc_expf(float x)
{
    return bpc_expf_in_range(x) ? bpc_expf_core(x) : (float)exp((double)x);
}

/* o[i] = bpc_expf(x[i]) over contiguous arrays. */
void bpc_vexp_f32(const float *x, float *o, int64_t n);

/* One dense f32 row: o = softmax(x), fused (max; exp(x - max) and its sum
 * in double; scale by the reciprocal). False, with o untouched, when the
 * row's max is not finite (NaN, inf, all -inf): the caller then uses the
 * reference. Within ~2 ulp + the rounding of x - max in f32 (the op tests'
 * f32 softmax tolerance is 2e-6 relative). */
bool bpc_softmax_row_f32(const float *x, float *o, int64_t n);

/* The sum of n contiguous elements in double, 8 interleaved partial sums. */
double bpc_vsum_f32(const float *p, int64_t n);
double bpc_vsum_f64(const double *p, int64_t n);

#endif

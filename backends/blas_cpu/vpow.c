/* f32 pow in vector lanes (bpc_vmath's pow_f32 in vmath.h).
 *
 * The reference computes (float)pow((double)a, (double)b): one libm call per
 * element. Here, for a positive finite base and a finite exponent,
 * t = b log(a) and exp(t) are evaluated in double, branch-free, so the loops
 * run in double lanes, by one of three formulas: at AVX-512 with tables in
 * registers (first below); at other levels with fused multiply-adds (AVX2)
 * with those; else (the x86-64 baseline) log by vmath's core (< 1 ulp of
 * double) and exp by the Taylor series to r^11 (truncation < 1e-14
 * relative). log's error times
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

#include "elementwise_formulas.h"
#include "vmath.h"

#define CHUNK 1024

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>

/* At the AVX-512 level, pow is written with intrinsics around 16-entry
 * tables held in register pairs (vpermt2pd picks an entry per lane), which
 * GCC cannot make of C: no division and shorter polynomials than the other
 * levels' log_fma and exp_fma (below) need. One thread, 4096 elements: 2.7
 * -> 1.3 ns an element.
 * All in double; vpow_tables.py (mpmath) makes the tables and polynomials
 * and prints their errors.
 *
 * log2(a) = k + log2(1 / invc_i) + log2(1 + r): a = 2^k z with z in
 * [0.699, 1.398) (the float's bits less 0x3f330000, as ARM's
 * optimized-routines powf splits it), i the next 4 bits, invc_i ~ 1 / c_i
 * for c_i the middle of subinterval i (1 where the subinterval holds 1, so
 * that nothing cancels near a = 1), r = z invc_i - 1 (one rounding;
 * |r| < 0.0297), and log2(1 + r) = r Q(r), Q of degree 6 (relative error
 * 2^-44.5). 2^t = 2^(N/16) 2^f: N = t rounded to sixteenths (the 1.5 * 2^48
 * shifter), f = t - N/16 exact, |f| <= 1/32, 2^(j/16) from a table whose
 * entries have j << 48 subtracted so that adding N << 48 to the bits also
 * adds N >> 4 to the exponent, and 2^f = 1 + f E(f), E of degree 4
 * (2^-46.6). t is clamped to [-160, 130], outside which the f32 result is 0
 * or inf either way. t's error stays below 2^-36 absolute there, far within
 * the 2^-24 of an f32 ulp: rounded, the result is the reference's except
 * where the exact value lies that close to a rounding boundary (then one ulp
 * apart). Lanes whose base is not a positive normal float or whose exponent
 * is not finite are the reference's, computed one by one. */
static const double pow_invc[16] = {
    1.3989071038251366, 1.3403141361256545, 1.2864321608040201, 1.2367149758454106,
    1.1906976744186046, 1.147982062780269,  1.1082251082251082, 1.0711297071129706,
    1.0364372469635628, 1.0,                0.9481481481481482, 0.8951048951048951,
    0.847682119205298,  0.8050314465408805, 0.7664670658682635, 0.7314285714285714};
static const double pow_log2c[16] = { /* log2(1 / invc_i), rounded */
    -0.4843001617159575,  -0.4225711719642514,  -0.3633753794563512, -0.3065130425006747,
    -0.2518071504105397,  -0.19910010007969525, -0.14825095858394247, -0.09913319201925132,
    -0.05163276841532236, 0.0,                  0.07681559705083084,  0.1598713367783894,
    0.2384047393250789,   0.3128829552843553,   0.38370429247405213,  0.4512111118323288};
static const uint64_t pow_exp2_bits[16] = { /* bits of 2^(j/16), less j << 48 */
    0x3ff0000000000000ull, 0x3fefb5586cf9890full, 0x3fef72b83c7d517bull, 0x3fef387a6e756238ull,
    0x3fef06fe0a31b715ull, 0x3feedea64c123422ull, 0x3feebfdad5362a27ull, 0x3feeab07dd485429ull,
    0x3feea09e667f3bcdull, 0x3feea11473eb0187ull, 0x3feeace5422aa0dbull, 0x3feec49182a3f090ull,
    0x3feee89f995ad3adull, 0x3fef199bdd85529cull, 0x3fef5818dcfba487ull, 0x3fefa4afa2a490daull};

typedef struct {
    __m512d invc_lo, invc_hi, log2c_lo, log2c_hi;
    __m512i exp2_lo, exp2_hi;
} pow_regs;

/* 8 lanes: k, z and i of the split (above), y = b */
static inline __m256 pow8(const pow_regs *g, __m256i k32, __m256i z32, __m256i i32, __m256 y)
{
    __m512d k = _mm512_cvtepi32_pd(k32);
    __m512d z = _mm512_cvtps_pd(_mm256_castsi256_ps(z32));
    __m512i i = _mm512_cvtepu32_epi64(i32); /* vpermt2pd reads the low 4 bits */
    __m512d invc = _mm512_permutex2var_pd(g->invc_lo, i, g->invc_hi);
    __m512d log2c = _mm512_permutex2var_pd(g->log2c_lo, i, g->log2c_hi);
    __m512d r = _mm512_fmsub_pd(z, invc, _mm512_set1_pd(1.0));
    __m512d r2 = _mm512_mul_pd(r, r), r4 = _mm512_mul_pd(r2, r2); /* Estrin: short chains */
    __m512d q01 = _mm512_fmadd_pd(_mm512_set1_pd(-0.7213475204578444), r,
                                  _mm512_set1_pd(1.4426950408889634));
    __m512d q23 = _mm512_fmadd_pd(_mm512_set1_pd(-0.36067363846541756), r,
                                  _mm512_set1_pd(0.4808983469748661));
    __m512d q45 = _mm512_fmadd_pd(_mm512_set1_pd(-0.2407264776892176), r,
                                  _mm512_set1_pd(0.288538899946697));
    __m512d q46 = _mm512_fmadd_pd(_mm512_set1_pd(0.20634578910520734), r2, q45);
    __m512d q = _mm512_fmadd_pd(q46, r4, _mm512_fmadd_pd(q23, r2, q01));
    __m512d lg = _mm512_fmadd_pd(r, q, _mm512_add_pd(k, log2c));
    __m512d t = _mm512_mul_pd(_mm512_cvtps_pd(y), lg);
    t = _mm512_min_pd(_mm512_max_pd(t, _mm512_set1_pd(-160.0)), _mm512_set1_pd(130.0));
    const __m512d shifter = _mm512_set1_pd(0x1.8p48);
    __m512d kd = _mm512_add_pd(t, shifter);
    __m512i ki = _mm512_castpd_si512(kd);
    __m512d f = _mm512_sub_pd(t, _mm512_sub_pd(kd, shifter));
    __m512i sb = _mm512_add_epi64(_mm512_permutex2var_epi64(g->exp2_lo, ki, g->exp2_hi),
                                  _mm512_slli_epi64(ki, 48));
    __m512d f2 = _mm512_mul_pd(f, f);
    __m512d e01 = _mm512_fmadd_pd(_mm512_set1_pd(0.24022650691319414), f,
                                  _mm512_set1_pd(0.6931471805599453));
    __m512d e23 = _mm512_fmadd_pd(_mm512_set1_pd(0.009618317140580765), f,
                                  _mm512_set1_pd(0.05550410866027587));
    __m512d e24 = _mm512_fmadd_pd(_mm512_set1_pd(0.0013333744338239965), f2, e23);
    __m512d e = _mm512_fmadd_pd(_mm512_fmadd_pd(e24, f2, e01), f, _mm512_set1_pd(1.0));
    return _mm512_cvtpd_ps(_mm512_mul_pd(e, _mm512_castsi512_pd(sb)));
}

/* SB: b's stride, 1 or 0 */
static inline void pow_avx512(const float *restrict a, const float *restrict b, int64_t sb,
                              float *restrict o, int64_t n)
{
    const pow_regs g = {
        _mm512_loadu_pd(pow_invc),  _mm512_loadu_pd(pow_invc + 8),
        _mm512_loadu_pd(pow_log2c), _mm512_loadu_pd(pow_log2c + 8),
        _mm512_loadu_si512(pow_exp2_bits), _mm512_loadu_si512(pow_exp2_bits + 8)};
    const __m512i off = _mm512_set1_epi32(0x3f330000), min_normal = _mm512_set1_epi32(0x00800000);
    const __m512i normals = _mm512_set1_epi32(0x7f000000), abs_mask = _mm512_set1_epi32(0x7fffffff);
    const __m512i inf = _mm512_set1_epi32(0x7f800000);
    if (n <= 0)
        return; /* b[0] may not exist */
    __m512 y1 = _mm512_set1_ps(b[0]);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512i ia = _mm512_castps_si512(_mm512_maskz_loadu_ps(m, a + i));
        __m512 y = sb ? _mm512_maskz_loadu_ps(m, b + i) : y1;
        __mmask16 in = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(ia, min_normal), normals) &
                       _mm512_cmplt_epu32_mask(_mm512_and_si512(_mm512_castps_si512(y), abs_mask),
                                               inf);
        __m512i tmp = _mm512_sub_epi32(ia, off);
        __m512i top = _mm512_and_si512(tmp, _mm512_set1_epi32((int)0xff800000u));
        __m512i k = _mm512_srai_epi32(top, 23), z = _mm512_sub_epi32(ia, top);
        __m512i idx = _mm512_srli_epi32(tmp, 19);
        __m256 lo = pow8(&g, _mm512_castsi512_si256(k), _mm512_castsi512_si256(z),
                         _mm512_castsi512_si256(idx), _mm512_castps512_ps256(y));
        __m256 hi = pow8(&g, _mm512_extracti64x4_epi64(k, 1), _mm512_extracti64x4_epi64(z, 1),
                         _mm512_extracti64x4_epi64(idx, 1),
                         _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(y), 1)));
        _mm512_mask_storeu_ps(o + i, m, _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1));
        for (unsigned bad = (unsigned)(m & ~in); bad; bad &= bad - 1) {
            int64_t j = i + __builtin_ctz(bad);
            o[j] = (float)bpf_pow((double)a[j], (double)b[j * sb]);
        }
    }
}

static void pow_dense(const float *restrict a, const float *restrict b,
                                 float *restrict o, int64_t n)
{
    pow_avx512(a, b, 1, o, n);
}

static void pow_scalar_exp(const float *restrict a, const float *restrict b,
                                      float *restrict o, int64_t n)
{
    pow_avx512(a, b, 0, o, n);
}

#else
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
                    oc[i] = (float)bpf_pow(x, y);                                   \
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
                    oc[i] = (float)bpf_pow(x, y);                                   \
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

#endif

/* a^2, the most common exponent (a magnitude's square: silero-vad's STFT):
 * the reference's pow((double)a, 2.0) is exact in double (a float's square
 * has at most 48 significant bits and lies well within double's range), so
 * rounded to float it is the one rounding of a * a: the same bits for every
 * a, negative, -0, inf and NaN included. */
static void square(const float *restrict a, float *restrict o, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        o[i] = a[i] * a[i];
}

void BPC_LEVEL_FN(bpc_vpow_f32)(const float *a, const float *b, int64_t b_stride, float *o, int64_t n)
{
    if (b_stride == 0 && b[0] == 2.0f)
        square(a, o, n);
    else if (b_stride == 0)
        pow_scalar_exp(a, b, o, n);
    else
        pow_dense(a, b, o, n);
}

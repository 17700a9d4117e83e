/* Math functions built on fused multiply-adds (vmath.h), for the levels that
 * have them: f32 tanh and log in float lanes (16 per AVX-512 vector), f32
 * sin, cos, tan and erf in double lanes (the first three from a double
 * reduction), with polynomials only as long as an f32 result needs; f64 log
 * without a double division.
 *
 * Bound: every f32 result is within one f32 ulp of the reference, (float)f
 * of the double value (libm), and the reference's own bits outside each
 * fast range (NaN, infinities, zeros where it matters, huge arguments): the
 * vmath.c kernels' bound, which blas_cpu's tests check. Measured over every
 * float by bench/vmath_ulp.c; the counts are in docs/performance.md. f64
 * log: within 2 ulp of libm's (the tests allow 1e-14 relative).
 *
 * fmaf/fma are one instruction wherever FP_FAST_FMAF or __FMA__ says so
 * (x86-64-v3 and up, AArch64); without them (the x86-64 baseline) a call per
 * operation would cost more than the reference itself, so that level keeps
 * vmath.c's double kernels and bpc_vunary_fma declines every op. Each kernel is one
 * formula whatever the vector width, so the AVX2 and AVX-512 levels give
 * the same bits. */
#include <math.h>

#include "elementwise_formulas.h"
#include "vmath.h"

#if (defined(FP_FAST_FMAF) && defined(FP_FAST_FMA)) || defined(__FMA__)

#define CHUNK 1024

/* A chunk in one branch-free pass over every lane (inputs outside the fast
 * range IN replaced by SAFE), then the few lanes outside it patched with the
 * reference REF (its formula, elementwise_formulas.h's), as vmath.c's
 * PATCHED. */
#define PATCHED_F32(x, o, n, IN, SAFE, CORE, REF)                                    \
    for (int64_t c_ = 0; c_ < n; c_ += CHUNK) {                                      \
        int64_t len_ = n - c_ < CHUNK ? n - c_ : CHUNK;                              \
        const float *xc_ = x + c_;                                                   \
        float *oc_ = o + c_;                                                         \
        int ok_ = 1;                                                                 \
        for (int64_t i_ = 0; i_ < len_; i_++) {                                      \
            float v = xc_[i_];                                                       \
            int in_ = IN;                                                            \
            ok_ &= in_;                                                              \
            v = in_ ? v : SAFE;                                                      \
            oc_[i_] = CORE;                                                          \
        }                                                                            \
        if (!ok_)                                                                    \
            for (int64_t i_ = 0; i_ < len_; i_++) {                                  \
                float v = xc_[i_];                                                   \
                if (!(IN))                                                           \
                    oc_[i_] = (float)REF((double)v);                                 \
            }                                                                        \
    }

/* ---- tanh ---------------------------------------------------------------
 * |x| < 0.5625: x + x^3 P(x^2), P of degree 5 fitted to tanh (2^-32
 * relative); the correction is at most 11% of the result, so its roundings
 * add ~0.2 ulp to the last one.
 * Above: 1 - 2 / (e^(2t) + 1), t = |x| clamped at 9.5 (tanh rounds to 1 in
 * f32 from 9.02): e^(2t) = 2^k q with q = e^r, |r| <= ln2/2, a degree-6
 * polynomial (2^-26.6); d = 2^k q + 1 in one rounding (fmaf); then 2 / d
 * and 1 - that. The quotient is at most 0.5, so its ~1.6 roundings cost
 * at most ~0.8 ulp of a result in [0.5, 1). Both on |x|, the sign copied
 * last (so -0 stays -0). NaN is patched. */
#define TANH_SMALL 0.5625f

static inline float expf_poly(float r) /* e^r, |r| <= ln2 / 2 */
{
    float q = 0.001392617611993558f;
    q = fmaf(q, r, 0.008363173074513711f);
    q = fmaf(q, r, 0.041666554662050534f);
    q = fmaf(q, r, 0.1666657702559799f);
    q = fmaf(q, r, 0.5f);
    return fmaf(r * r, q, r) + 1.0f;
}

static inline float tanhf_core(float x)
{
    float t = fabsf(x), w = x * x;
    float p = 0.002487614648031548f;
    p = fmaf(p, w, -0.008499247828795086f);
    p = fmaf(p, w, 0.021811902608433444f);
    p = fmaf(p, w, -0.05396406382647735f);
    p = fmaf(p, w, 0.1333332207319158f);
    p = fmaf(p, w, -0.33333333283938266f);
    float small = fmaf(t * w, p, t);

    const float shifter = 12582912.0f, log2e = 1.44269504088896341f;
    const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    float u = 2.0f * (t < 9.5f ? t : 9.5f);
    float s = fmaf(u, log2e, shifter);
    float k = s - shifter;
    float r = fmaf(-k, ln2_lo, fmaf(-k, ln2_hi, u));
    uint32_t sb;
    memcpy(&sb, &s, 4);
    uint32_t eb = (sb - 0x4B400000u + 127u) << 23; /* 2^k, k in [0, 28] */
    float scale;
    memcpy(&scale, &eb, 4);
    float d = fmaf(scale, expf_poly(r), 1.0f);
    float big = 1.0f - 2.0f / d;
    return copysignf(t < TANH_SMALL ? small : big, x); /* odd, -0 included */
}

/* ---- log ----------------------------------------------------------------
 * x = 2^k m with m in [sqrt(2)/2, sqrt(2)) (the bits of x less those of
 * sqrt(2)/2: musl's split), f = m - 1 exact; log(1 + f) = f + f^2 (f R(f) -
 * 1/2), R of degree 9 fitted on that interval (2^-30.9); then k ln2 added
 * with ln2 in two parts. f is exact and the f^2 term at most a quarter of
 * the result. Zero, negatives, subnormals, inf and NaN are patched. */
static inline float logf_core(float x)
{
    uint32_t ix;
    memcpy(&ix, &x, 4);
    ix -= 0x3f3504f3u;
    int32_t k = (int32_t)ix >> 23; /* arithmetic: k < 0 below sqrt(2)/2 */
    uint32_t mb = (ix & 0x007fffffu) + 0x3f3504f3u;
    float m;
    memcpy(&m, &mb, 4);
    float f = m - 1.0f;
    float R = -0.06201500119018334f;
    R = fmaf(R, f, 0.10530864738938345f);
    R = fmaf(R, f, -0.10646191638199634f);
    R = fmaf(R, f, 0.1103778335905502f);
    R = fmaf(R, f, -0.12450743320911725f);
    R = fmaf(R, f, 0.14286524547786641f);
    R = fmaf(R, f, -0.16668001523071926f);
    R = fmaf(R, f, 0.20000010039684973f);
    R = fmaf(R, f, -0.24999990275042186f);
    R = fmaf(R, f, 0.33333333281199246f);
    float lp = fmaf(f * f, fmaf(f, R, -0.5f), f);
    const float ln2_hi = 0.693147182464599609375f, ln2_lo = -1.904654323148236e-09f;
    float fk = (float)k;
    return fmaf(fk, ln2_hi, fmaf(fk, ln2_lo, lp));
}

/* ---- sin, cos, tan --------------------------------------------------------
 * In double: q = rint(x 2/pi) and r = x - q pi/2 with pi/2 in two doubles
 * (fma: each product exact), so r is exact to ~2^-100 absolute for |x| <=
 * 65536; then sin r = r + r z S(z) and cos r = 1 - z/2 + z^2 C(z), z = r^2,
 * S and C of degree 4 fitted on [0, (pi/4)^2] (2^-35 and 2^-39 relative),
 * the quadrant choosing which and the sign. tan: the quotient of the two,
 * 1 / den as a float quotient refined by one Newton step (2^-46; a double
 * division costs twice the rest of the kernel). One rounding to f32 at the
 * end; a zero is returned as it is (its sign). |x| > 65536, inf and NaN are
 * patched. */
#define TRIG_MAX 65536.0f

static inline double trig_reduce(float xf, uint64_t *quadrant)
{
    const double shifter = 6755399441055744.0, invpio2 = 6.36619772367581382433e-01;
    const double pio2_hi = 1.5707963267948966, pio2_lo = 6.123233995736766e-17;
    double x = (double)xf;
    double s = fma(x, invpio2, shifter);
    double q = s - shifter;
    memcpy(quadrant, &s, 8); /* its low bits: q mod 4 */
    return fma(-q, pio2_lo, fma(-q, pio2_hi, x));
}

static inline double sin_poly(double r, double z)
{
    double p = 2.724992580305979e-06;
    p = fma(p, z, -0.00019840086735384846);
    p = fma(p, z, 0.008333331874710208);
    p = fma(p, z, -0.1666666666385529);
    return fma(r * z, p, r);
}

static inline double cos_poly(double z)
{
    double p = -2.730095920390147e-07;
    p = fma(p, z, 2.480060037715673e-05);
    p = fma(p, z, -0.001388888767201679);
    p = fma(p, z, 0.0416666666643212);
    p = fma(p, z, -0.5);
    return fma(p, z, 1.0);
}

static inline float sinf_core(float x)
{
    uint64_t k;
    double r = trig_reduce(x, &k), z = r * r;
    double s = sin_poly(r, z), c = cos_poly(z);
    double y = (k & 1u) ? c : s;
    return x == 0.0f ? x : (float)((k & 2u) ? -y : y); /* -0 keeps its sign */
}

static inline float cosf_core(float x)
{
    uint64_t k;
    double r = trig_reduce(x, &k), z = r * r;
    double s = sin_poly(r, z), c = cos_poly(z);
    double y = (k & 1u) ? s : c;
    return (float)(((k + 1u) & 2u) ? -y : y);
}

static inline double recip_newton(double d) /* 1 / d to ~2^-46 relative */
{
    double q = (double)(1.0f / (float)d);
    return fma(q, fma(-q, d, 1.0), q);
}

static inline float tanf_core(float x)
{
    uint64_t k;
    double r = trig_reduce(x, &k), z = r * r;
    double s = sin_poly(r, z), c = cos_poly(z);
    double num = (k & 1u) ? -c : s, den = (k & 1u) ? s : c;
    return x == 0.0f ? x : (float)(num * recip_newton(den));
}

/* ---- erf ------------------------------------------------------------------
 * In double: |x| < 1: x P(x^2), P of degree 7 fitted to erf(x)/x (2^-34.7
 * relative); 1 <= |x| < 4: a degree-17 polynomial in |x| - 2.5 fitted to erf
 * (2^-32.8 absolute, where erf >= 0.84), its sign copied; from 4 on, 1 (erf
 * rounds to 1 in f32 from 3.92). Both computed, one selected; one rounding
 * to f32. NaN is patched. */
static inline float erff_core(float xf)
{
    double x = (double)xf, t = fabs(x), w = x * x;
    double p = -9.6670445714869964152e-6;
    p = fma(p, w, 0.00011265959025606608973);
    p = fma(p, w, -0.00084840804055351062944);
    p = fma(p, w, 0.0052210318078580227973);
    p = fma(p, w, -0.026865430727670242894);
    p = fma(p, w, 0.1128378249523684454);
    p = fma(p, w, -0.37612638468028710398);
    p = fma(p, w, 1.1283791670615434152);
    double small = x * p; /* odd: -0 stays -0 */
    double u = (t < 4.0 ? t : 4.0) - 2.5;
    double q = 3.367066063814951549e-8;
    q = fma(q, u, 1.0937593684177201987e-8);
    q = fma(q, u, -6.7323637915770495118e-7);
    q = fma(q, u, 7.9170270535195998344e-7);
    q = fma(q, u, 4.7301070639122759413e-6);
    q = fma(q, u, -0.00001535938628642623666);
    q = fma(q, u, 5.108798022442378071e-6);
    q = fma(q, u, 0.00008041534432093937319);
    q = fma(q, u, -0.00025027432878852366743);
    q = fma(q, u, 0.00025945266908571307589);
    q = fma(q, u, 0.00054240816469916124294);
    q = fma(q, u, -0.0027979684828147319235);
    q = fma(q, u, 0.0061173482407097927389);
    q = fma(q, u, -0.0086224879283276664808);
    q = fma(q, u, 0.0083500895643364560039);
    q = fma(q, u, -0.0054457011192225166093);
    q = fma(q, u, 0.0021782842301029431903);
    q = fma(q, u, 0.99959304785139049476);
    double big = copysign(t < 4.0 ? q : 1.0, x);
    return (float)(t < 1.0 ? small : big);
}

/* ---- f64 log ------------------------------------------------------------
 * fdlibm's e_log.c (vmath.h's bpc_log_core) on musl's split of x, with
 * s = f / (2 + f) as f times a float reciprocal refined by two Newton steps
 * (~1 ulp) instead of a double division, which costs a vector division per
 * element (a 512-bit one has a fraction of the throughput of the rest). */
static inline double log_core_fma(double x)
{
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    const double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                 Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                 Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                 Lg7 = 1.479819860511658591e-01;
    uint64_t u;
    memcpy(&u, &x, 8);
    u -= 0x3fe6a09e667f3bcdull; /* sqrt(2)/2 */
    double k = (double)((int64_t)u >> 52);
    uint64_t mb = (u & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull;
    double m;
    memcpy(&m, &mb, 8);
    double f = m - 1.0, d = 2.0 + f;
    double q = (double)(1.0f / (float)d);
    q = fma(q, fma(-q, d, 1.0), q);
    q = fma(q, fma(-q, d, 1.0), q);
    double s = f * q, z = s * s, w = z * z;
    double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
    double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
    double R = t2 + t1, hfsq = 0.5 * f * f;
    return k * ln2_hi - ((hfsq - (s * (hfsq + R) + k * ln2_lo)) - f);
}

static void u_log_f64(const double *restrict x, double *restrict o, int64_t n)
{
    for (int64_t c = 0; c < n; c += CHUNK) {
        int64_t len = n - c < CHUNK ? n - c : CHUNK;
        const double *xc = x + c;
        double *oc = o + c;
        int ok = 1;
        for (int64_t i = 0; i < len; i++) {
            double v = xc[i];
            int in = v >= 0x1p-1022 && v < INFINITY;
            ok &= in;
            oc[i] = log_core_fma(in ? v : 1.0);
        }
        if (!ok)
            for (int64_t i = 0; i < len; i++)
                if (!(xc[i] >= 0x1p-1022 && xc[i] < INFINITY))
                    oc[i] = log(xc[i]);
    }
}

#define IN_TRIG (fabsf(v) <= TRIG_MAX)
#define IN_LOG (v >= 0x1p-126f && v < INFINITY)

static void u_tanh(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED_F32(x, o, n, v == v, 0.0f, tanhf_core(v), bpf_tanh)
}
static void u_log(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED_F32(x, o, n, IN_LOG, 1.0f, logf_core(v), bpf_log)
}
static void u_erf(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED_F32(x, o, n, v == v, 0.0f, erff_core(v), bpf_erf)
}
static void u_sin(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED_F32(x, o, n, IN_TRIG, 0.0f, sinf_core(v), bpf_sin)
}
static void u_cos(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED_F32(x, o, n, IN_TRIG, 0.0f, cosf_core(v), bpf_cos)
}
static void u_tan(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED_F32(x, o, n, IN_TRIG, 0.0f, tanf_core(v), bpf_tan)
}

bool BPC_LEVEL_FN(bpc_vunary_fma)(bp_op op, bp_dtype dt, const void *x, void *o, int64_t n)
{
    void (*f)(const float *, float *, int64_t) = NULL;
    if (dt == BP_F64 && op == BP_OP_LOG) {
        u_log_f64(x, o, n);
        return true;
    }
    switch (dt == BP_F32 ? op : BP_OP_COUNT) {
    case BP_OP_TANH: f = u_tanh; break;
    case BP_OP_LOG: f = u_log; break;
    case BP_OP_SIN: f = u_sin; break;
    case BP_OP_COS: f = u_cos; break;
    case BP_OP_TAN: f = u_tan; break;
    case BP_OP_ERF: f = u_erf; break;
    default: return false;
    }
    f(x, o, n);
    return true;
}

#else

bool BPC_LEVEL_FN(bpc_vunary_fma)(bp_op op, bp_dtype dt, const void *x, void *o, int64_t n)
{
    (void)op, (void)dt, (void)x, (void)o, (void)n;
    return false;
}

#endif

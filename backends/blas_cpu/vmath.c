/* One instruction level's vector kernels (vmath.h: this file is compiled
 * once per level, and exports that level's bpc_vmath table).
 *
 * Accuracy of bpc_expf, measured over every float in [BPC_EXPF_LO,
 * BPC_EXPF_HI] against the reference (float)exp((double)x): see the record
 * in docs/performance.md. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#if defined(__AVX__)
#include <immintrin.h> /* EXTREME_SEL */
#endif

#include "elementwise_formulas.h"
#include "half_floats.h"
#include "vmath.h"

#define CHUNK 1024

/* A chunk runs branch-free over every lane (out-of-range inputs clamped), and
 * only a chunk holding an out-of-range input is then patched element by
 * element with the reference formula. */
static void vexp_f32(const float *restrict x, float *restrict o, int64_t n)
{
    for (int64_t c = 0; c < n; c += CHUNK) {
        int64_t len = n - c < CHUNK ? n - c : CHUNK;
        const float *xc = x + c;
        float *oc = o + c;
        int ok = 1;
        for (int64_t i = 0; i < len; i++) {
            float v = xc[i];
            ok &= bpc_expf_in_range(v);
            v = v < BPC_EXPF_LO ? BPC_EXPF_LO : v;
            v = v > BPC_EXPF_HI ? BPC_EXPF_HI : v;
            oc[i] = bpc_expf_core(v);
        }
        if (!ok)
            for (int64_t i = 0; i < len; i++)
                if (!bpc_expf_in_range(xc[i]))
                    oc[i] = (float)exp((double)xc[i]);
    }
}

/* Eight interleaved partial sums: vectorisable without reassociation flags
 * (each lane keeps its own order), and a little more accurate than one. */
#define SUM_BODY(p, n)                                                           \
    double part[8] = {0};                                                        \
    int64_t i = 0;                                                               \
    for (; i + 8 <= n; i += 8)                                                   \
        for (int j = 0; j < 8; j++)                                              \
            part[j] += (double)p[i + j];                                         \
    for (; i < n; i++)                                                           \
        part[i & 7] += (double)p[i];                                             \
    return ((part[0] + part[1]) + (part[2] + part[3])) +                         \
           ((part[4] + part[5]) + (part[6] + part[7]))

static double vsum_f32(const float *restrict p, int64_t n) { SUM_BODY(p, n); }
static double vsum_f64(const double *restrict p, int64_t n) { SUM_BODY(p, n); }

static bool softmax_row_f32(const float *restrict x, float *restrict o, int64_t n)
{
    float m;
    if (!bpc_row_max_f32(x, n, &m))
        return false;
    double part[8] = {0};
    for (int64_t c = 0; c < n; c += CHUNK) {
        int64_t len = n - c < CHUNK ? n - c : CHUNK;
        const float *xc = x + c;
        float *oc = o + c;
        int ok = 1;
        for (int64_t i = 0; i < len; i++) {
            float v = xc[i] - m; /* <= 0 */
            ok &= v >= BPC_EXPF_LO;
            v = v < BPC_EXPF_LO ? BPC_EXPF_LO : v;
            oc[i] = bpc_expf_core(v);
        }
        if (!ok)
            for (int64_t i = 0; i < len; i++)
                if (!(xc[i] - m >= BPC_EXPF_LO))
                    oc[i] = (float)exp((double)(xc[i] - m));
        int64_t i = 0;
        for (; i + 8 <= len; i += 8)
            for (int j = 0; j < 8; j++)
                part[j] += (double)oc[i + j];
        for (; i < len; i++)
            part[i & 7] += (double)oc[i];
    }
    double s = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    float inv = (float)(1.0 / s);
    for (int64_t i = 0; i < n; i++)
        o[i] *= inv;
    return true;
}

/* ---- dense unary kernels ------------------------------------------------- */

/* One chunk at a time: every lane through the branch-free CORE (inputs
 * outside the fast range IN replaced by a harmless value first), then the
 * few elements outside the range patched with the reference REF. */
#define PATCHED(T, x, o, n, IN, SAFE, CORE, REF)                                     \
    for (int64_t c_ = 0; c_ < n; c_ += CHUNK) {                                      \
        int64_t len_ = n - c_ < CHUNK ? n - c_ : CHUNK;                              \
        const T *xc_ = x + c_;                                                       \
        T *oc_ = o + c_;                                                             \
        int ok_ = 1;                                                                 \
        for (int64_t i_ = 0; i_ < len_; i_++) {                                      \
            double v = (double)xc_[i_];                                              \
            int in_ = IN;                                                            \
            ok_ &= in_;                                                              \
            v = in_ ? v : SAFE;                                                      \
            oc_[i_] = (T)(CORE);                                                     \
        }                                                                            \
        if (!ok_)                                                                    \
            for (int64_t i_ = 0; i_ < len_; i_++) {                                  \
                double v = (double)xc_[i_];                                          \
                if (!(IN))                                                           \
                    oc_[i_] = (T)(REF);                                              \
            }                                                                        \
    }

static inline double tanh_core(double v)
{
    double t = fabs(v);
    double e = bpc_exp_core(-2.0 * (t < 20.0 ? t : 20.0));
    double y = t < 0x1p-20 ? t - t * t * t * (1.0 / 3.0) : (1.0 - e) / (1.0 + e);
    return copysign(y, v);
}

/* expm1(u) for |u| <= ln2/2: u + u^2 (1/2! + u/3! + ... + u^11/13!), the
 * Taylor series cut after u^13 (truncation < 2e-17 relative at the ends).
 * No cancellation: u^2 P(u) is at most a fifth of |u|. */
static inline double expm1_small(double u)
{
    double p = 1.0 / 6227020800.0;
    p = p * u + 1.0 / 479001600.0;
    p = p * u + 1.0 / 39916800.0;
    p = p * u + 1.0 / 3628800.0;
    p = p * u + 1.0 / 362880.0;
    p = p * u + 1.0 / 40320.0;
    p = p * u + 1.0 / 5040.0;
    p = p * u + 1.0 / 720.0;
    p = p * u + 1.0 / 120.0;
    p = p * u + 1.0 / 24.0;
    p = p * u + 1.0 / 6.0;
    p = p * u + 0.5;
    return u + (u * u) * p;
}

/* tanh in double to a few ulp (tanh_core's 1 - e cancels for small |x|:
 * ~1e-16 / |x| relative, fine once rounded to f32, not in f64). With
 * t = |x|: below ln2/4, -m / (2 + m) with m = expm1(-2t) from its series;
 * above, (1 - e) / (1 + e) with e = exp(-2t) <= 1/sqrt(2), so 1 - e keeps
 * all but ~2 bits; t clamped at 20, where tanh is 1 in double. Both sides
 * computed, one selected (branch-free, one division). NaN: patched. */
#define TANH_SMALL 0.17328679513998632 /* ln2 / 4 */
static inline double tanh_core_f64(double v)
{
    double t = fabs(v);
    double m = expm1_small(-2.0 * (t < TANH_SMALL ? t : TANH_SMALL));
    double e = bpc_exp_core(-2.0 * (t < 20.0 ? t : 20.0));
    int small = t < TANH_SMALL;
    double num = small ? -m : 1.0 - e;
    double den = small ? 2.0 + m : 1.0 + e;
    return copysign(num / den, v);
}

/* sin and tan are odd: a zero keeps its sign (the polynomial's r + r z S
 * gives +0 for r = -0) */
static inline double sin_core(double v)
{
    double s, c;
    bpc_sincos_core(v, &s, &c);
    return v == 0.0 ? v : s;
}
static inline double cos_core(double v)
{
    double s, c;
    bpc_sincos_core(v, &s, &c);
    return c;
}
static inline double tan_core(double v)
{
    double s, c;
    bpc_sincos_core(v, &s, &c);
    return v == 0.0 ? v : s / c;
}

#define IN_EXP (v >= -708.0 && v <= 708.0)
#define IN_LOG (v > 0x1p-1022 && v < INFINITY)
#define IN_TRIG (fabs(v) <= BPC_TRIG_MAX)

static void u_log_f32(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED(float, x, o, n, IN_LOG, 1.0, bpc_log_core(v), bpf_log(v))
}
static void u_log_f64(const double *restrict x, double *restrict o, int64_t n)
{
    PATCHED(double, x, o, n, IN_LOG, 1.0, bpc_log_core(v), bpf_log(v))
}
static void u_exp_f64(const double *restrict x, double *restrict o, int64_t n)
{
    PATCHED(double, x, o, n, IN_EXP, 0.0, bpc_exp_core(v), bpf_exp(v))
}
static void u_sin_f32(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED(float, x, o, n, IN_TRIG, 0.0, sin_core(v), bpf_sin(v))
}
static void u_cos_f32(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED(float, x, o, n, IN_TRIG, 0.0, cos_core(v), bpf_cos(v))
}
static void u_tan_f32(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED(float, x, o, n, IN_TRIG, 0.0, tan_core(v), bpf_tan(v))
}
/* f64: fdlibm's kernels on the three-part reduction (vmath.h), ~1 ulp of
 * double for |x| <= BPC_TRIG_MAX: r's error is ~2^-85 absolute there, far
 * below one ulp of any r a double argument leaves. tan divides. */
static void u_sin_f64(const double *restrict x, double *restrict o, int64_t n)
{
    PATCHED(double, x, o, n, IN_TRIG, 0.0, sin_core(v), bpf_sin(v))
}
static void u_cos_f64(const double *restrict x, double *restrict o, int64_t n)
{
    PATCHED(double, x, o, n, IN_TRIG, 0.0, cos_core(v), bpf_cos(v))
}
static void u_tan_f64(const double *restrict x, double *restrict o, int64_t n)
{
    PATCHED(double, x, o, n, IN_TRIG, 0.0, tan_core(v), bpf_tan(v))
}
static void u_tanh_f32(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED(float, x, o, n, v == v, 0.0, tanh_core(v), bpf_tanh(v))
}
static void u_tanh_f64(const double *restrict x, double *restrict o, int64_t n)
{
    PATCHED(double, x, o, n, v == v, 0.0, tanh_core_f64(v), bpf_tanh(v))
}
static void u_sigmoid_f32(const float *restrict x, float *restrict o, int64_t n)
{
    PATCHED(float, x, o, n, IN_EXP, 0.0, 1.0 / (1.0 + bpc_exp_core(-v)), bpf_sigmoid(v))
}
static void u_sigmoid_f64(const double *restrict x, double *restrict o, int64_t n)
{
    PATCHED(double, x, o, n, IN_EXP, 0.0, 1.0 / (1.0 + bpc_exp_core(-v)), bpf_sigmoid(v))
}

/* Exact in the dtype's own arithmetic: the same bits as the reference's
 * double evaluation rounded once (sqrt, floor, ceil and rint of a float are
 * floats; sqrt is correctly rounded either way). */
#define SIMPLE(NAME, T, EXPR)                                                        \
    static void NAME(const T *restrict x, T *restrict o, int64_t n)       \
    {                                                                                \
        for (int64_t i = 0; i < n; i++) {                                            \
            T v = x[i];                                                              \
            o[i] = (EXPR);                                                           \
        }                                                                            \
    }
SIMPLE(u_sqrt_f32, float, bpf_sqrt_f(v))
SIMPLE(u_sqrt_f64, double, bpf_sqrt(v))
SIMPLE(u_rsqrt_f64, double, bpf_rsqrt(v))
SIMPLE(u_floor_f32, float, bpf_floor_f(v))
SIMPLE(u_floor_f64, double, bpf_floor(v))
SIMPLE(u_ceil_f32, float, bpf_ceil_f(v))
SIMPLE(u_ceil_f64, double, bpf_ceil(v))
SIMPLE(u_round_f32, float, bpf_round_f(v))
SIMPLE(u_round_f64, double, bpf_round(v))
SIMPLE(u_abs_f32, float, bpf_abs_f(v))
SIMPLE(u_abs_f64, double, bpf_abs(v))
SIMPLE(u_neg_f32, float, bpf_neg_f(v))
SIMPLE(u_neg_f64, double, bpf_neg(v))
SIMPLE(u_relu_f32, float, bpf_relu_f(v))
SIMPLE(u_relu_f64, double, bpf_relu(v))

/* f32 rsqrt with the reference's bits, (float)(1 / sqrt((double)x)), but
 * without a double square root and division per element (those two cost ~3.5
 * cycles an element at AVX-512, NumPy's float 1 / sqrt ~1):
 *   y0 = 1 / sqrtf(x) in float lanes      relative error e0 <= 2^-23
 *   z  = y0 + y0/2 (1 - x y0^2) in double  one Newton step: 1.5 e0^2
 *                                          + ~2^-52 of roundings <= 2^-45.3
 * The reference's double r is within 2^-52 of 1/sqrt(x), so |z - r| < 2^-45.3
 * of the result: under 200 double ulps. Both round to the same float unless
 * a rounding boundary (the low 29 bits of the double at 2^28) lies within
 * RSQRT_MARGIN ulps of z; those lanes (about 1 in 2^18) and x outside
 * (0, inf) are patched with the reference. So the bits are the reference's
 * for every input, at every level (the formula needs no fused multiply-add). */
#define RSQRT_MARGIN 1024

/* z as above; *near: a rounding boundary is within the margin (or x is
 * outside (0, inf), where z means nothing). Branch-free, so the loop below
 * vectorises (a select or && in it stopped gcc 12). */
static inline float rsqrt_fast(float v, int64_t *near)
{
    float y0 = 1.0f / sqrtf(v);
    double yd = y0, r = 1.0 - ((double)v * yd) * yd;
    double z = yd + (0.5 * yd) * r;
    int64_t b;
    memcpy(&b, &z, sizeof b);
    int64_t off = (b & (((int64_t)1 << 29) - 1)) - ((int64_t)1 << 28) + RSQRT_MARGIN;
    *near = ((uint64_t)off <= 2 * RSQRT_MARGIN) | !(v > 0.0f) | !(v < INFINITY);
    return (float)z;
}

static void u_rsqrt_f32(const float *restrict x, float *restrict o, int64_t n)
{
    for (int64_t c = 0; c < n; c += CHUNK) {
        int64_t len = n - c < CHUNK ? n - c : CHUNK, any = 0, near;
        for (int64_t i = 0; i < len; i++) {
            o[c + i] = rsqrt_fast(x[c + i], &near);
            any |= near;
        }
        if (!any)
            continue;
        for (int64_t i = 0; i < len; i++) {
            float v = x[c + i];
            rsqrt_fast(v, &near);
            if (near)
                o[c + i] = (float)bpf_rsqrt((double)v);
        }
    }
}

typedef void (*u_f32_fn)(const float *, float *, int64_t);
typedef void (*u_f64_fn)(const double *, double *, int64_t);

static bool vunary(bp_op op, bp_dtype dt, const void *x, void *o, int64_t n)
{
    u_f32_fn f = NULL;
    u_f64_fn d = NULL;
    switch (op) {
    case BP_OP_EXP: f = vexp_f32, d = u_exp_f64; break;
    case BP_OP_LOG: f = u_log_f32, d = u_log_f64; break;
    case BP_OP_SIN: f = u_sin_f32, d = u_sin_f64; break;
    case BP_OP_COS: f = u_cos_f32, d = u_cos_f64; break;
    case BP_OP_TAN: f = u_tan_f32, d = u_tan_f64; break;
    case BP_OP_TANH: f = u_tanh_f32, d = u_tanh_f64; break;
    case BP_OP_SIGMOID: f = u_sigmoid_f32, d = u_sigmoid_f64; break;
    case BP_OP_SQRT: f = u_sqrt_f32, d = u_sqrt_f64; break;
    case BP_OP_RSQRT: f = u_rsqrt_f32, d = u_rsqrt_f64; break;
    case BP_OP_FLOOR: f = u_floor_f32, d = u_floor_f64; break;
    case BP_OP_CEIL: f = u_ceil_f32, d = u_ceil_f64; break;
    case BP_OP_ROUND: f = u_round_f32, d = u_round_f64; break;
    case BP_OP_ABS: f = u_abs_f32, d = u_abs_f64; break;
    case BP_OP_NEG: f = u_neg_f32, d = u_neg_f64; break;
    case BP_OP_RELU: f = u_relu_f32, d = u_relu_f64; break;
    default: break;
    }
    if (BPC_LEVEL_FN(bpc_vunary_fma)(op, dt, x, o, n))
        return true;
    if (dt == BP_F32 && f)
        f(x, o, n);
    else if (dt == BP_F64 && d)
        d(x, o, n);
    else
        return false;
    return true;
}

/* ---- row reductions ------------------------------------------------------ */

/* Max (min) in vector lanes with a NaN mask, in GCC's vector extensions: the
 * select has to be spelled out for the compiler to keep it in vectors (the
 * plain `a > b ? a : b` over an array of lanes stays scalar). Then the lanes
 * combined; a zero result is re-read as the first zero (its sign), as one
 * sequential pass keeps it. */
typedef float vf8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));
typedef double vd4 __attribute__((vector_size(32)));
typedef int64_t vl4 __attribute__((vector_size(32)));

/* a > m ? a : m (is_max) or a < m ? a : m, lane by lane: x86's max and min
 * instructions are exactly that (the second operand when the comparison is
 * false, NaN included); elsewhere a spelled-out select. With AVX-512 the
 * select compiled to a masked store of the accumulator to the stack, a
 * store-to-load chain per vector (max over 4096 x 4096 f32: 1.4x the AVX2
 * build's time). */
#if defined(__AVX__)
#define EXTREME_SEL(VT, VI, a, m, is_max)                                            \
    (sizeof(VT) == sizeof(__m256) && sizeof((a)[0]) == sizeof(float)                 \
         ? (VT)((is_max) ? _mm256_max_ps((__m256)(a), (__m256)(m))                   \
                         : _mm256_min_ps((__m256)(a), (__m256)(m)))                  \
         : (VT)((is_max) ? _mm256_max_pd((__m256d)(a), (__m256d)(m))                 \
                         : _mm256_min_pd((__m256d)(a), (__m256d)(m))))
#else
#define EXTREME_SEL(VT, VI, a, m, is_max)                                            \
    ((VT)(((VI)(a) & ((is_max) ? (VI)((a) > (m)) : (VI)((a) < (m)))) |               \
          ((VI)(m) & ~((is_max) ? (VI)((a) > (m)) : (VI)((a) < (m))))))
#endif

#define EXTREME_BODY(T, VT, VI, L, p, n, is_max)                                     \
    VT m0, m1;                                                                       \
    VI n0 = {0}, n1 = {0};                                                           \
    for (int j = 0; j < L; j++)                                                      \
        m0[j] = m1[j] = p[0];                                                        \
    int64_t i = 0;                                                                   \
    for (; i + 2 * L <= n; i += 2 * L) {                                             \
        VT a, b;                                                                     \
        memcpy(&a, p + i, sizeof a);                                                 \
        memcpy(&b, p + i + L, sizeof b);                                             \
        m0 = EXTREME_SEL(VT, VI, a, m0, is_max);                                     \
        m1 = EXTREME_SEL(VT, VI, b, m1, is_max);                                     \
        n0 |= (VI)(a != a);                                                          \
        n1 |= (VI)(b != b);                                                          \
    }                                                                                \
    T m[2 * L];                                                                      \
    bool nan = false;                                                                \
    for (int j = 0; j < L; j++) {                                                    \
        m[j] = m0[j], m[L + j] = m1[j];                                              \
        nan |= n0[j] != 0 || n1[j] != 0;                                             \
    }                                                                                \
    for (; i < n; i++) {                                                             \
        T a = p[i];                                                                  \
        m[0] = (is_max ? a > m[0] : a < m[0]) ? a : m[0];                            \
        nan |= a != a;                                                               \
    }                                                                                \
    T r = m[0];                                                                      \
    for (int j = 0; j < 2 * L; j++) {                                                \
        nan |= m[j] != m[j];                                                         \
        r = (is_max ? m[j] > r : m[j] < r) ? m[j] : r;                               \
    }                                                                                \
    if (nan)                                                                         \
        return (T)NAN;                                                               \
    if (r == 0)                                                                      \
        for (i = 0; i < n; i++)                                                      \
            if (p[i] == 0)                                                           \
                return p[i];                                                         \
    return r

static float vextreme_f32(const float *restrict p, int64_t n, bool is_max)
{
    EXTREME_BODY(float, vf8, vi8, 8, p, n, is_max);
}
static double vextreme_f64(const double *restrict p, int64_t n, bool is_max)
{
    EXTREME_BODY(double, vd4, vl4, 4, p, n, is_max);
}

/* The first index holding v (v == v), or the first NaN (v != v): blocks of 64
 * tested branch-free, the hit block then scanned. */
#define FIND_BODY(T, p, n, v)                                                        \
    bool nan = v != v;                                                               \
    int64_t i = 0;                                                                   \
    for (; i + 64 <= n; i += 64) {                                                   \
        int hit = 0;                                                                 \
        for (int j = 0; j < 64; j++)                                                 \
            hit |= nan ? p[i + j] != p[i + j] : p[i + j] == v;                       \
        if (hit)                                                                     \
            break;                                                                   \
    }                                                                                \
    for (; i < n; i++)                                                               \
        if (nan ? p[i] != p[i] : p[i] == v)                                          \
            return i;                                                                \
    return 0

static int64_t find_f32(const float *restrict p, int64_t n, float v) { FIND_BODY(float, p, n, v); }
static int64_t find_f64(const double *restrict p, int64_t n, double v) { FIND_BODY(double, p, n, v); }

/* ARGMAX/ARGMIN in one pass: per lane the best value and the index where it
 * first appeared (a strict compare keeps the first of equal values), 2 x L
 * lanes; then the lane with the best value and, among equal ones (0 and -0
 * included), the least index; the tail scalar, strictly after. A NaN
 * anywhere is noted on the way and answered by a search for the first one.
 * Indices run in the lanes' integer width (int32 for f32): longer f32 runs
 * take the two passes (extreme, then find). */
#define ARG_BODY(T, VT, VI, IT, L, p, n, GT)                                         \
    VT m0, m1;                                                                       \
    VI k0 = {0}, k1 = {0}, c0, c1, nan = {0}, step;                                  \
    for (int j = 0; j < L; j++) {                                                    \
        m0[j] = m1[j] = p[0];                                                        \
        c0[j] = (IT)j, c1[j] = (IT)(L + j), step[j] = 2 * L;                         \
    }                                                                                \
    int64_t i = 0;                                                                   \
    for (; i + 2 * L <= n; i += 2 * L) {                                             \
        VT a, b;                                                                     \
        memcpy(&a, p + i, sizeof a);                                                 \
        memcpy(&b, p + i + L, sizeof b);                                             \
        VI ga = (VI)GT(a, m0), gb = (VI)GT(b, m1);                                   \
        m0 = (VT)(((VI)a & ga) | ((VI)m0 & ~ga));                                    \
        m1 = (VT)(((VI)b & gb) | ((VI)m1 & ~gb));                                    \
        k0 = (c0 & ga) | (k0 & ~ga);                                                 \
        k1 = (c1 & gb) | (k1 & ~gb);                                                 \
        nan |= (VI)(a != a) | (VI)(b != b);                                          \
        c0 += step, c1 += step;                                                      \
    }                                                                                \
    /* the two halves, then the lanes, without branches (a branch per lane \
     * mispredicts on random data, which costs short rows dearly) */        \
    VI g = (VI)GT(m1, m0) | ((VI)(m1 == m0) & (k1 < k0));                            \
    m0 = (VT)(((VI)m1 & g) | ((VI)m0 & ~g));                                         \
    k0 = (k1 & g) | (k0 & ~g);                                                       \
    bool any_nan = false;                                                            \
    T best = m0[0];                                                                  \
    for (int j = 1; j < L; j++)                                                      \
        best = GT(m0[j], best) ? m0[j] : best;                                       \
    int64_t bi = INT64_MAX;                                                          \
    for (int j = 0; j < L; j++) {                                                    \
        int64_t c = m0[j] == best ? (int64_t)k0[j] : INT64_MAX;                      \
        bi = c < bi ? c : bi;                                                        \
        any_nan |= nan[j] != 0;                                                      \
    }                                                                                \
    for (; i < n; i++) {                                                             \
        any_nan |= p[i] != p[i];                                                     \
        bool u = GT(p[i], best);                                                     \
        best = u ? p[i] : best;                                                      \
        bi = u ? i : bi;                                                             \
    }                                                                                \
    return any_nan ? -1 : bi

#define ARG_GT(a, b) ((a) > (b))
#define ARG_LT(a, b) ((a) < (b))
/* -1: a NaN is there */
static int64_t argmax_f32(const float *restrict p, int64_t n)
{
    ARG_BODY(float, vf8, vi8, int32_t, 8, p, n, ARG_GT);
}
static int64_t argmin_f32(const float *restrict p, int64_t n)
{
    ARG_BODY(float, vf8, vi8, int32_t, 8, p, n, ARG_LT);
}
static int64_t argmax_f64(const double *restrict p, int64_t n)
{
    ARG_BODY(double, vd4, vl4, int64_t, 4, p, n, ARG_GT);
}
static int64_t argmin_f64(const double *restrict p, int64_t n)
{
    ARG_BODY(double, vd4, vl4, int64_t, 4, p, n, ARG_LT);
}

static int64_t varg_f32(const float *p, int64_t n, bool is_max)
{
    if (n <= 0)
        return 0;
    if (n > INT32_MAX - 64)
        return find_f32(p, n, vextreme_f32(p, n, is_max));
    int64_t k = is_max ? argmax_f32(p, n) : argmin_f32(p, n);
    return k >= 0 ? k : find_f32(p, n, NAN);
}
static int64_t varg_f64(const double *p, int64_t n, bool is_max)
{
    if (n <= 0)
        return 0;
    int64_t k = is_max ? argmax_f64(p, n) : argmin_f64(p, n);
    return k >= 0 ? k : find_f64(p, n, NAN);
}

/* max m, then exp(x - m) of a chunk into a buffer (a plain loop, so it
 * vectorises) and the buffer summed in 8 lanes */
#define LSE_BODY(T, p, n, M)                                                         \
    double m = (double)(M);                                                          \
    if (m != m)                                                                      \
        return NAN;                                                                  \
    if (m == INFINITY || m == -INFINITY)                                             \
        return m; /* +inf somewhere, or every element -inf */                        \
    double e[CHUNK], s = 0;                                                          \
    for (int64_t c = 0; c < n; c += CHUNK) {                                         \
        int64_t len = n - c < CHUNK ? n - c : CHUNK;                                 \
        const T *pc = p + c;                                                         \
        for (int64_t i = 0; i < len; i++) {                                          \
            double d = (double)pc[i] - m; /* <= 0 */                                 \
            e[i] = d < -708.0 ? 0.0 : bpc_exp_core(d < -708.0 ? -708.0 : d);         \
        }                                                                            \
        s += vsum_f64(e, len);                                                   \
    }                                                                                \
    return m + log(s)

static double vlogsumexp_f32(const float *restrict p, int64_t n)
{
    LSE_BODY(float, p, n, vextreme_f32(p, n, true));
}
static double vlogsumexp_f64(const double *restrict p, int64_t n)
{
    LSE_BODY(double, p, n, vextreme_f64(p, n, true));
}

static bool log_softmax_row_f32(const float *restrict x, float *restrict o, int64_t n)
{
    float m = vextreme_f32(x, n, true);
    if (!(m > -INFINITY && m < INFINITY))
        return false;
    double part[8] = {0};
    float e[CHUNK];
    for (int64_t c = 0; c < n; c += CHUNK) {
        int64_t len = n - c < CHUNK ? n - c : CHUNK;
        const float *xc = x + c;
        for (int64_t i = 0; i < len; i++) {
            float v = xc[i] - m; /* <= 0 */
            v = v < BPC_EXPF_LO ? BPC_EXPF_LO : v; /* exp(-86.5) is far below the sum's ulp */
            e[i] = bpc_expf_core(v);
        }
        int64_t i = 0;
        for (; i + 8 <= len; i += 8)
            for (int j = 0; j < 8; j++)
                part[j] += (double)e[i + j];
        for (; i < len; i++)
            part[i & 7] += (double)e[i];
    }
    double s = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    double sub = (double)m + log(s);
    for (int64_t i = 0; i < n; i++)
        o[i] = (float)((double)x[i] - sub);
    return true;
}

static bool softmax_row_f64(bool lg, const double *restrict x, double *restrict o, int64_t n)
{
    double m = vextreme_f64(x, n, true);
    if (!(m > -INFINITY && m < INFINITY))
        return false;
    double part[8] = {0}, e[CHUNK];
    for (int64_t c = 0; c < n; c += CHUNK) {
        int64_t len = n - c < CHUNK ? n - c : CHUNK;
        const double *xc = x + c;
        double *dst = lg ? e : o + c;
        int ok = 1;
        for (int64_t i = 0; i < len; i++) {
            double d = xc[i] - m; /* <= 0 */
            ok &= d >= -708.0;
            dst[i] = bpc_exp_core(d < -708.0 ? -708.0 : d);
        }
        if (!ok) /* subnormal and zero terms: libm's, as the reference */
            for (int64_t i = 0; i < len; i++)
                if (!(xc[i] - m >= -708.0))
                    dst[i] = exp(xc[i] - m);
        int64_t i = 0;
        for (; i + 8 <= len; i += 8)
            for (int j = 0; j < 8; j++)
                part[j] += dst[i + j];
        for (; i < len; i++)
            part[i & 7] += dst[i];
    }
    double s = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    if (lg) {
        double add = -log(s);
        for (int64_t i = 0; i < n; i++)
            o[i] = (x[i] - m) + add;
    } else {
        double mul = 1.0 / s;
        for (int64_t i = 0; i < n; i++)
            o[i] *= mul;
    }
    return true;
}

static void softmax_cols_f32(bool lg, const float *restrict x, int64_t sx,
                                     float *restrict o, int64_t so, int64_t n, int64_t k,
                                     bool *restrict bad)
{
    float m[BPC_COLS];
    double s[BPC_COLS];
    int nn[BPC_COLS];
    for (int64_t c = 0; c < k; c++)
        m[c] = -INFINITY, s[c] = 0, nn[c] = 0;
    for (int64_t i = 0; i < n; i++) {
        const float *xr = x + i * sx;
        for (int64_t c = 0; c < k; c++) {
            float a = xr[c], b = m[c];
            m[c] = a > b ? a : b;
            nn[c] |= a != a;
        }
    }
    for (int64_t c = 0; c < k; c++) {
        bad[c] = nn[c] || !(m[c] > -INFINITY && m[c] < INFINITY);
        m[c] = bad[c] ? 0.0f : m[c]; /* any finite value: the column is redone */
    }
    float tmp[BPC_COLS];
    for (int64_t i = 0; i < n; i++) {
        const float *xr = x + i * sx;
        float *dst = lg ? tmp : o + i * so;
        int ok = 1;
        for (int64_t c = 0; c < k; c++) {
            float v = xr[c] - m[c];
            ok &= v >= BPC_EXPF_LO;
            v = v < BPC_EXPF_LO ? BPC_EXPF_LO : v > 0.0f ? 0.0f : v;
            dst[c] = bpc_expf_core(v);
        }
        if (!ok && !lg) /* tiny results: the reference's bits, as softmax_row_f32 */
            for (int64_t c = 0; c < k; c++)
                if (!(xr[c] - m[c] >= BPC_EXPF_LO))
                    dst[c] = (float)exp((double)(xr[c] - m[c]));
        for (int64_t c = 0; c < k; c++)
            s[c] += (double)dst[c];
    }
    if (lg) {
        double sub[BPC_COLS];
        for (int64_t c = 0; c < k; c++)
            sub[c] = (double)m[c] + log(s[c]);
        for (int64_t i = 0; i < n; i++) {
            const float *xr = x + i * sx;
            float *orow = o + i * so;
            for (int64_t c = 0; c < k; c++)
                orow[c] = (float)((double)xr[c] - sub[c]);
        }
        return;
    }
    float inv[BPC_COLS];
    for (int64_t c = 0; c < k; c++)
        inv[c] = (float)(1.0 / s[c]);
    for (int64_t i = 0; i < n; i++) {
        float *orow = o + i * so;
        for (int64_t c = 0; c < k; c++)
            orow[c] *= inv[c];
    }
}

#define LSE_COLS_BODY(T)                                                             \
    double m[BPC_COLS], s[BPC_COLS], e[BPC_COLS];                                    \
    int nn[BPC_COLS];                                                                \
    for (int64_t c = 0; c < k; c++)                                                  \
        m[c] = -INFINITY, s[c] = 0, nn[c] = 0;                                       \
    for (int64_t i = 0; i < n; i++) {                                                \
        const T *xr = x + i * sx;                                                    \
        for (int64_t c = 0; c < k; c++) {                                            \
            double a = (double)xr[c], b = m[c];                                      \
            m[c] = a > b ? a : b;                                                    \
            nn[c] |= a != a;                                                         \
        }                                                                            \
    }                                                                                \
    for (int64_t i = 0; i < n; i++) {                                                \
        const T *xr = x + i * sx;                                                    \
        for (int64_t c = 0; c < k; c++) {                                            \
            double d = (double)xr[c] - m[c];                                         \
            d = d != d ? 0.0 : d; /* NaN/inf columns: any value, replaced below */   \
            e[c] = d < -708.0 ? 0.0 : bpc_exp_core(d < -708.0 ? -708.0 : d);         \
        }                                                                            \
        for (int64_t c = 0; c < k; c++)                                              \
            s[c] += e[c];                                                            \
    }                                                                                \
    for (int64_t c = 0; c < k; c++)                                                  \
        out[c] = nn[c] ? NAN : (m[c] == INFINITY || m[c] == -INFINITY) ? m[c]        \
                                                                     : m[c] + log(s[c])

static void logsumexp_cols_f32(const float *restrict x, int64_t sx, int64_t n, int64_t k,
                                       double *restrict out)
{
    LSE_COLS_BODY(float);
}
static void logsumexp_cols_f64(const double *restrict x, int64_t sx, int64_t n, int64_t k,
                                       double *restrict out)
{
    LSE_COLS_BODY(double);
}

/* Eight lanes, then the lanes multiplied together. A lane can leave double's
 * range where one pass would not (one lane at inf, another at 0: NaN for a
 * finite product), so a result that is not finite is redone in one pass, the
 * reference's order: an inf or NaN that the data really gives costs twice. */
#define PROD_BODY(p, n)                                                              \
    double part[8] = {1, 1, 1, 1, 1, 1, 1, 1};                                       \
    int64_t i = 0;                                                                   \
    for (; i + 8 <= n; i += 8)                                                       \
        for (int j = 0; j < 8; j++)                                                  \
            part[j] *= (double)p[i + j];                                             \
    for (; i < n; i++)                                                               \
        part[i & 7] *= (double)p[i];                                                 \
    double r = ((part[0] * part[1]) * (part[2] * part[3])) *                         \
               ((part[4] * part[5]) * (part[6] * part[7]));                          \
    if (isfinite(r))                                                                 \
        return r;                                                                    \
    r = 1;                                                                           \
    for (i = 0; i < n; i++)                                                          \
        r *= (double)p[i];                                                           \
    return r

static double vprod_f32(const float *restrict p, int64_t n) { PROD_BODY(p, n); }
static double vprod_f64(const double *restrict p, int64_t n) { PROD_BODY(p, n); }

/* ---- column folds -------------------------------------------------------
 * A strip of columns in vector accumulators through every row, each column
 * folded in row order (one add or multiply per row, as the reference's
 * column mode). f32 strips are 32 columns (four 8-double vectors), f64
 * strips 16; columns left over go one at a time. */
typedef float vf8x __attribute__((vector_size(32)));
typedef double vd8 __attribute__((vector_size(64)));

/* LOAD(dst, p): 8 columns at p into a vector of doubles (macros: a vector
 * wider than the level's registers may not be returned by value). At
 * AVX-512 one vcvtps2pd: GCC 12 makes __builtin_convertvector two halves,
 * an extract and an insert, and those shuffles bounded the loop (sum over
 * axis 0 of 256 x 256 f32 took twice the adds' time). */
#if defined(__AVX512F__)
#define LD_F32X8(dst, p) ((dst) = (vd8)_mm512_cvtps_pd(_mm256_loadu_ps((const float *)(p))))
#else
#define LD_F32X8(dst, p)                                                             \
    do {                                                                             \
        vf8x f_;                                                                     \
        memcpy(&f_, (p), sizeof f_);                                                 \
        dst = __builtin_convertvector(f_, vd8);                                      \
    } while (0)
#endif
#define LD_F64X8(dst, p) memcpy(&(dst), (p), sizeof(dst))

#define FOLD(acc, x, prod) ((prod) ? (acc) * (x) : (acc) + (x))

/* W vectors of 8 columns: a[w] folded with LOAD(p + 8 w) for every row */
#define COLS_STRIP(T, W, LOAD)                                                       \
    for (; c + 8 * W <= k; c += 8 * W) {                                             \
        vd8 a[W], t;                                                                 \
        memcpy(a, v + c, sizeof a);                                                  \
        const T *p = x + c;                                                          \
        if (prod)                                                                    \
            for (int64_t i = 0; i < n; i++, p += sx)                                 \
                for (int w = 0; w < W; w++) {                                        \
                    LOAD(t, p + 8 * w);                                              \
                    a[w] *= t;                                                       \
                }                                                                    \
        else                                                                         \
            for (int64_t i = 0; i < n; i++, p += sx)                                 \
                for (int w = 0; w < W; w++) {                                        \
                    LOAD(t, p + 8 * w);                                              \
                    a[w] += t;                                                       \
                }                                                                    \
        memcpy(v + c, a, sizeof a);                                                  \
    }                                                                                \
    for (; c < k; c++) {                                                             \
        double acc = v[c];                                                           \
        for (int64_t i = 0; i < n; i++)                                              \
            acc = FOLD(acc, (double)x[i * sx + c], prod);                            \
        v[c] = acc;                                                                  \
    }

static void cols_fold_f32(bool prod, const float *restrict x, int64_t sx, int64_t n, int64_t k,
                          double *restrict v)
{
    int64_t c = 0;
    COLS_STRIP(float, 4, LD_F32X8)
}

static void cols_fold_f64(bool prod, const double *restrict x, int64_t sx, int64_t n, int64_t k,
                          double *restrict v)
{
    int64_t c = 0;
    COLS_STRIP(double, 2, LD_F64X8)
}

/* vmath.h's f16_unary: the conversions compiled for this level, so that
 * they vectorise (at the x86-64 baseline, in ops.c, they took five times
 * the f32 exp's time). The f32 kernels are within one f32 ulp of
 * (float)f((double)x) (the tests check it at every level), so within 1.5
 * of f(x): a result more than BPC_F16_MARGIN ulps from every f16 rounding
 * boundary (the low 13 bits of its mantissa at 0x1000) rounds to the f16
 * that f(x) in double, rounded once (the reference), gives. */
static int64_t f16_unary(bp_op op, const uint16_t *x, uint16_t *o, int64_t n,
                         unsigned char *unsure)
{
    float in[BPC_F16_CHUNK] = {0}, res[BPC_F16_CHUNK]; /* zeroed: GCC 12 sees no fill */
    if (n > BPC_F16_CHUNK || !vunary(op, BP_F32, NULL, NULL, 0))
        return -1;
    for (int64_t i = 0; i < n; i++)
        in[i] = f16_f32(x[i]);
    vunary(op, BP_F32, in, res, n);
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t b = f_bits(res[i]), a = b & 0x7fffffffu;
        unsigned char u = ((uint32_t)((b & 0x1fffu) - 0x1000u + BPC_F16_MARGIN) <=
                           2 * BPC_F16_MARGIN) |
                          (a < 0x38800000u) | (a >= 0x7f800000u);
        unsure[i] = u;
        count += u;
        o[i] = f32_f16(res[i]);
    }
    return count;
}

const bpc_vmath BPC_LEVEL_FN(bpc_vmath) = {
    .level = BPC_LEVEL_NAME,
    .isa = BPC_LEVEL_ISA,
    .unary = vunary,
    .pow_f32 = BPC_LEVEL_FN(bpc_vpow_f32),
    .softmax_row_f32 = softmax_row_f32,
    .log_softmax_row_f32 = log_softmax_row_f32,
    .softmax_row_f64 = softmax_row_f64,
    .softmax_cols_f32 = softmax_cols_f32,
    .sum_f32 = vsum_f32,
    .sum_f64 = vsum_f64,
    .prod_f32 = vprod_f32,
    .prod_f64 = vprod_f64,
    .extreme_f32 = vextreme_f32,
    .extreme_f64 = vextreme_f64,
    .arg_f32 = varg_f32,
    .arg_f64 = varg_f64,
    .logsumexp_f32 = vlogsumexp_f32,
    .logsumexp_f64 = vlogsumexp_f64,
    .logsumexp_cols_f32 = logsumexp_cols_f32,
    .logsumexp_cols_f64 = logsumexp_cols_f64,
    .cols_fold_f32 = cols_fold_f32,
    .cols_fold_f64 = cols_fold_f64,
    .f16_unary = f16_unary,
    .dots_f32 = BPC_LEVEL_FN(bpc_vdots_f32),
    .dots_f64 = BPC_LEVEL_FN(bpc_vdots_f64),
#if defined(__AVX2__) && defined(__FMA__)
    .conv_block_f32 = BPC_LEVEL_FN(bpc_vconv_block_f32),
    .conv_store_f32 = BPC_LEVEL_FN(bpc_vconv_store_f32),
    .depthwise_3x3_f32 = BPC_LEVEL_FN(bpc_vdepthwise_3x3_f32),
#endif
#if defined(__AVX512F__)
    .conv_direct_1x1 = true,
#elif defined(__AVX2__) && defined(__FMA__)
    .conv_wide_channel_block = 32,
#endif
#if defined(__AVX2__)
    .max3_fold_s2_f32 = BPC_LEVEL_FN(bpc_vmax3_fold_s2_f32),
#endif
};

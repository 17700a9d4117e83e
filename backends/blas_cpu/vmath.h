/* Vectorised overrides of reference kernels, for the f32/f64 ops the
 * benchmarks lean on. Each is allowed to differ from the reference (binary
 * backend) only within the tolerance the op tests enforce; see each function.
 *
 * The reference computes f32 exp as (float)exp((double)x) with libm: one
 * call per element that the compiler cannot vectorise. bpc_expf evaluates
 * exp in float instead, branch-free, so the auto-vectoriser can run 8 lanes
 * (AVX2) or 16 (AVX-512): measured over every float in its fast range it is
 * within 1 ulp of the reference (see vmath.c). Inputs outside the fast range
 * (overflow, subnormal results, inf, NaN) take the reference's formula, so
 * the IEEE limits come out bit-identical.
 *
 * Instruction levels. The kernels behind bpc_vmath (vmath.c, vpow.c,
 * vmath_fma.c) are compiled once per x86-64 level, each object with its own
 * -march (CMakeLists.txt): AVX-512 (x86-64-v4, 512-bit vectors), AVX2
 * (x86-64-v3) and the baseline (SSE2); elsewhere the baseline only. A device
 * runs one level's table, chosen at open (simd.c): the widest the CPU runs,
 * or the one the `simd` key names. No FMA contraction (-std=c11) and no
 * reassociation, so the AVX-512 and AVX2 levels give the same bits; only the
 * width differs. f32 pow is the exception: each level has its own formula
 * (vpow.c: tables in registers at AVX-512, fma at AVX2, neither at the
 * baseline), each within one ulp of the reference. BPC_LEVEL is defined while compiling a level's objects. */
#ifndef BPC_VMATH_H
#define BPC_VMATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <backplane/plugin.h>

/* The other hot loops of the plugin (norm.c, loss.c, window_pool.c) are
 * multiversioned instead: compiled for AVX-512, AVX2 + FMA and the baseline,
 * the loader picking one by CPU (GCC function multiversioning). Inside a
 * level's objects the level's -march already applies. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(BPC_LEVEL)
#define BPC_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define BPC_CLONES
#endif

/* A depthwise 3x3 plane's geometry (bpc_vmath's depthwise_3x3_f32). */
typedef struct bpc_dw3x3 {
    int64_t ih, iw;         /* x's plane */
    int64_t ph, pw, pt, pl; /* the padded plane, x's place in it; ph 0: none */
    int64_t oh, ow, sh, sw, dh, dw;
} bpc_dw3x3;

/* One level's kernels. Every member is present. Contracts: */
typedef struct bpc_vmath {
    const char *level;      /* "avx512", "avx2" or "baseline" */
    const char *isa;        /* what it was compiled for, for humans */
    /* A dense unary op: o[i] = op(x[i]) for n contiguous elements of dt (f32
     * or f64). False, with o untouched, when (op, dt) has no kernel here (so
     * a call with n = 0 asks whether it has one). */
    bool (*unary)(bp_op op, bp_dtype dt, const void *x, void *o, int64_t n);
    /* o[i] = pow(a[i], b[i * b_stride]) in f32 for n contiguous elements, a
     * and o dense, b dense (b_stride 1) or one exponent (0): within one f32
     * ulp of the reference (float)pow((double)a, (double)b), its bits
     * outside the fast range (vpow.c). */
    void (*pow_f32)(const float *a, const float *b, int64_t b_stride, float *o, int64_t n);
    /* One dense f32 row: o = softmax(x), fused (max; exp(x - max) and its
     * sum in double; scale by the reciprocal). False, with o untouched, when
     * the row's max is not finite (NaN, inf, all -inf): the caller then uses
     * the reference. Within ~2 ulp + the rounding of x - max in f32 (the op
     * tests' f32 softmax tolerance is 2e-6 relative). */
    bool (*softmax_row_f32)(const float *x, float *o, int64_t n);
    /* One dense f32 row: o = log_softmax(x), fused (max; the sum of
     * exp(x - max) in double with the float exp; o = (x - max) - log(sum) in
     * double, rounded once). False, with o untouched, when the max is not
     * finite. */
    bool (*log_softmax_row_f32)(const float *x, float *o, int64_t n);
    /* One dense f64 row: softmax (lg false) or log_softmax, the reference's
     * formulas (max; exp(x - max) and its sum; times 1 / sum, or x - max -
     * log(sum)) with exp in vector lanes (< 1 ulp) and the sum in 8 partial
     * sums. False, with o untouched, when the max is not finite. */
    bool (*softmax_row_f64)(bool lg, const double *x, double *o, int64_t n);
    /* Softmax (or log_softmax, `lg`) of k adjacent f32 columns along n rows:
     * column c is x[i * sx + c], i < n (rows contiguous over the k columns),
     * and goes to o[i * so + c]. Three passes that stream whole rows: the max
     * per column, exp and its sum, the scale. bad[c] is set (and column c
     * left to the caller) when its max is not finite. k <= BPC_COLS. */
    void (*softmax_cols_f32)(bool lg, const float *x, int64_t sx, float *o, int64_t so,
                             int64_t n, int64_t k, bool *bad);
    /* The sum of n contiguous elements in double, 8 interleaved partial sums. */
    double (*sum_f32)(const float *p, int64_t n);
    double (*sum_f64)(const double *p, int64_t n);
    /* The product of n elements: eight interleaved partial products in
     * double (another association than one pass: within the op's tolerance);
     * a result that is not finite is redone in one pass, the reference's
     * order. */
    double (*prod_f32)(const float *p, int64_t n);
    double (*prod_f64)(const double *p, int64_t n);
    /* max (is_max) or min of n >= 1 elements, the first one on ties of equal
     * value (so +0 and -0 come out as the reference's), NaN if any is NaN
     * (the canonical NaN, as the reference stores). */
    float (*extreme_f32)(const float *p, int64_t n, bool is_max);
    double (*extreme_f64)(const double *p, int64_t n, bool is_max);
    /* the index of the first max (min), or of the first NaN if there is one */
    int64_t (*arg_f32)(const float *p, int64_t n, bool is_max);
    int64_t (*arg_f64)(const double *p, int64_t n, bool is_max);
    /* log(sum(exp(x))) of n >= 1 elements: max m, then m + log(sum exp(x - m))
     * in double; NaN if any is NaN, +inf if any is +inf, -inf if all are -inf. */
    double (*logsumexp_f32)(const float *p, int64_t n);
    double (*logsumexp_f64)(const double *p, int64_t n);
    /* log(sum(exp(x))) of k adjacent columns along n rows (column c is
     * x[i * sx + c]), into out[c] (a double per column): the max per column,
     * then the sum of exp(x - max), streaming whole rows. NaN, +inf and all
     * -inf columns as logsumexp_f32. k <= BPC_COLS. */
    void (*logsumexp_cols_f32)(const float *x, int64_t sx, int64_t n, int64_t k, double *out);
    void (*logsumexp_cols_f64)(const double *x, int64_t sx, int64_t n, int64_t k, double *out);
    /* Column sums (prod false) or products of k adjacent columns along n
     * rows (column c is x[i * sx + c]): v[c] = v[c] + x[c] (or times), row
     * after row in order, in double: the reference's column fold (reduce.c),
     * so the same bits. Strips of columns held in registers through every
     * row: for blocks that sit in the cache (each line is read once). */
    void (*cols_fold_f32)(bool prod, const float *x, int64_t sx, int64_t n, int64_t k, double *v);
    void (*cols_fold_f64)(bool prod, const double *x, int64_t sx, int64_t n, int64_t k,
                          double *v);
    /* f16 through this level's f32 kernel for op (ops.c's heavy f16 path):
     * for n <= BPC_F16_CHUNK contiguous elements, o[i] = the f16 rounding
     * of the f32 result, and unsure[i] = 1 where that may differ from the
     * reference's (the result within BPC_F16_MARGIN f32 ulps of an f16
     * rounding boundary, below the normal f16 range, or not finite: the
     * caller then takes the reference's). Returns the number unsure, or -1
     * (nothing written) when op has no f32 kernel here. */
    int64_t (*f16_unary)(bp_op op, const uint16_t *x, uint16_t *o, int64_t n,
                         unsigned char *unsure);
    /* y[r * ldy + o] = bias[r] + sum over j < k of w[r k + j] c[o k + j], for
     * rows r < m of w and vectors o < n of c (both dense rows of k; bias
     * NULL: none): BPC_DOTS_F32 (f64: BPC_DOTS_F64) interleaved partial sums
     * per product, fma where the level has it, then added in double in lane
     * order with the rest of k and the bias, rounded once (vdots.c). */
    void (*dots_f32)(const float *w, int64_t m, const float *c, int64_t n, int64_t k,
                     const double *bias, float *y, int64_t ldy);
    void (*dots_f64)(const double *w, int64_t m, const double *c, int64_t n, int64_t k,
                     const double *bias, double *y, int64_t ldy);
    /* nb <= BPC_CONV_BLOCKS blocks of a direct f32 convolution
     * (conv_direct.c), BPC_CONV_FILTERS filters each (on the vector lanes),
     * at nj <= BPC_CONV_RUN output positions, over channels [c0, c1) and
     * every one of the taps: for block b, whose weights start at
     * wp + b wstride and whose tile at t + b tstride,
     *     t[j][f] (+)= sum over c, k of wp[(c taps + k) BPC_CONV_FILTERS + f]
     *                                  * xb[j][c plane + toff[k]]
     * with one fma per product, channel by channel and tap by tap; t
     * starts at 0 when first, else from what it holds. NULL where the level
     * has no fma (the convolution then takes the GEMM). */
    void (*conv_block_f32)(const float *const *xb, int nj, const float *wp, int64_t wstride,
                           int nb, int64_t c0, int64_t c1, int64_t taps, const int64_t *toff,
                           int64_t plane, float *t, int64_t tstride, bool first);
    /* A block's tile to y: y[f ldy + o] = t[o BPC_CONV_FILTERS + f] + bias[f]
     * for filters f < nf and positions o < n (the tile transposed), plus
     * res[f ldy + o] where res (a plan's residual add after the
     * convolution; each sum rounded), through bpf_relu_f where relu (a
     * plan's Relu after the convolution, or after its add). NULL with
     * conv_block_f32. */
    void (*conv_store_f32)(const float *t, int64_t n, int nf, const float *bias,
                           const float *res, bool relu, float *y, int64_t ldy);
    /* One output plane (oh x ow) of a depthwise convolution with a 3x3
     * window (g: its geometry) from x's plane:
     *     y[r ow + c] = b + sum over k of w[k] p[(r sh + kh dh) pw + c sw + kw dw]
     * (k = 3 kh + kw), the products in that order, the first rounded, each
     * next one fused (fma), the bias added last; p is x itself (g->ph 0,
     * pw then g->iw) or pad, ph x pw floats whose zeros around x's place
     * (row pt, column pl) the caller set, into which x's plane is copied.
     * line: NULL, or at least (oh - 1) pw + ow floats of scratch, with
     * which stride 1 runs the plane as one line (vdepthwise.c). NULL where
     * the level has no fma (the convolution then runs as eager calls do). */
    void (*depthwise_3x3_f32)(const bpc_dw3x3 *g, const float *x, const float *w,
                              float b, float *y, float *pad, float *line);
    /* Whether conv_block_f32 beats a GEMM of 256-bit kernels (OpenBLAS's
     * AVX2 ones) on 1x1 kernels: where it holds two blocks of 16 filters
     * in 512-bit registers (ResNet-50 1.21x, SqueezeNet 1.13x on a Zen 5
     * whose OpenBLAS runs Haswell kernels), not with AVX2's 256-bit ones
     * (0.63-0.81x on a Zen 3, where OpenBLAS's packed panels read x faster
     * than the block's broadcasts from NCHW planes). Against OpenBLAS's
     * AVX-512 kernels it loses (0.85-0.92x on a Sapphire Rapids class
     * Xeon): the device takes 1x1 direct only where both hold
     * (plugin.c). */
    bool conv_direct_1x1;
    /* Channels per pass of conv_block_f32 over a chunk's runs where the
     * output plane has 512 positions or more (conv_direct.c; 0: its
     * default, 128). The bits do not depend on it (each pass resumes the
     * same sums in the same order). AVX2: 32. Its block takes the two
     * blocks of filters one after the other at each run of six positions,
     * and the inputs a run reads over 128 channels (some 36 KiB of lines)
     * left L1 before the second block read them again; with 32 they and one
     * block's weights (18 KiB) fit. Measured on a Zen 3, one process, the
     * bits unchanged: 3x3 over 56 x 56 (64 channels) 1.09-1.13x on one
     * thread and 1.06x on two, over 28 x 28 (96 and 128 channels)
     * 1.07-1.09x; over 14 x 14 and 7 x 7 the same 32 ran 2-4% slower
     * (hence the plane's size). AVX-512's block runs both blocks in one
     * pass over the channels: unmeasured there, it keeps the default. */
    int conv_wide_channel_block;
    /* The row fold of a 3x3 max pool at stride 2 over a plane without NaN:
     *     h[i] = the first largest of x[2i], x[2i + 1], x[2i + 2]
     * for i < n (ties keep the first; reads x[0 .. 2n]); returns whether
     * x[0 .. 2n] holds a NaN (h then is to be thrown away). NULL where the
     * level has no AVX2 (window_pool.c folds in C). */
    bool (*max3_fold_s2_f32)(float *h, const float *x, int64_t n);
} bpc_vmath;

#define BPC_CONV_FILTERS 16
#define BPC_CONV_RUN 12
#define BPC_CONV_BLOCKS 2

#define BPC_DOTS_F32 8
#define BPC_DOTS_F64 4

#define BPC_F16_CHUNK 256
#define BPC_F16_MARGIN 4

#define BPC_COLS 2048

/* The level for a device (simd.c): `want` is the `simd` key's value (NULL or
 * "auto": the widest level this CPU runs). NULL, with the reason in why,
 * when want names no level of this build or one the CPU cannot run. */
const bpc_vmath *bpc_vmath_pick(const char *want, char *why, size_t cap);
/* The levels of this build, widest first, and how many. */
const bpc_vmath *const *bpc_vmath_levels(int *count);
/* Whether this CPU runs that level's instructions. */
bool bpc_vmath_cpu_runs(const bpc_vmath *vm);

/* While a level's objects are compiled: the name its table is exported
 * under (bpc_vmath_avx512...) and a level-unique name for its other
 * cross-file functions. */
#ifdef BPC_LEVEL
#define BPC_CAT_(a, b) a##_##b
#define BPC_CAT(a, b) BPC_CAT_(a, b)
#define BPC_STR_(a) #a
#define BPC_STR(a) BPC_STR_(a)
#define BPC_LEVEL_FN(name) BPC_CAT(name, BPC_LEVEL)
#define BPC_LEVEL_NAME BPC_STR(BPC_LEVEL)
extern const bpc_vmath BPC_LEVEL_FN(bpc_vmath);
void BPC_LEVEL_FN(bpc_vpow_f32)(const float *a, const float *b, int64_t b_stride, float *o,
                                int64_t n);
/* vmath_fma.c's kernels: as bpc_vmath's unary; false when (op, dt) has none
 * there (vmath.c's then runs). */
bool BPC_LEVEL_FN(bpc_vunary_fma)(bp_op op, bp_dtype dt, const void *x, void *o, int64_t n);
/* vdots.c's: bpc_vmath's dots_f32 and dots_f64 */
void BPC_LEVEL_FN(bpc_vconv_block_f32)(const float *const *xb, int nj, const float *wp,
                                       int64_t wstride, int nb, int64_t c0, int64_t c1,
                                       int64_t taps, const int64_t *toff, int64_t plane,
                                       float *t, int64_t tstride, bool first);
void BPC_LEVEL_FN(bpc_vconv_store_f32)(const float *t, int64_t n, int nf, const float *bias,
                                       const float *res, bool relu, float *y, int64_t ldy);
void BPC_LEVEL_FN(bpc_vdepthwise_3x3_f32)(const bpc_dw3x3 *g, const float *x, const float *w,
                                          float b, float *y, float *pad, float *line);
bool BPC_LEVEL_FN(bpc_vmax3_fold_s2_f32)(float *h, const float *x, int64_t n);
void BPC_LEVEL_FN(bpc_vdots_f32)(const float *w, int64_t m, const float *c, int64_t n,
                                 int64_t k, const double *bias, float *y, int64_t ldy);
void BPC_LEVEL_FN(bpc_vdots_f64)(const double *w, int64_t m, const double *c, int64_t n,
                                 int64_t k, const double *bias, double *y, int64_t ldy);
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

/* One element, the same bits as the f32 EXP kernel gives it. */
static inline float bpc_expf(float x)
{
    return bpc_expf_in_range(x) ? bpc_expf_core(x) : (float)exp((double)x);
}

/* ---- double-precision cores (vmath.c's vectorised unary kernels) ---------
 * Evaluated in double, so an f32 result is the reference's (libm in double,
 * rounded once) except where the double value lies within ~1e-15 relative of
 * a float rounding boundary: then one ulp apart, inside the op tests' f32
 * tolerance (4e-7 relative) and the conformance file's 4 ulp. Each core has
 * a fast range; kernels patch inputs outside it with the reference formula. */

/* The max of an f32 row, NaN-aware: false if it is not finite (a NaN, or
 * +-inf). Inline, so that it is vectorised in each caller's clones. */
static inline bool bpc_row_max_f32(const float *restrict x, int64_t n, float *m_out)
{
    float m[8];
    int nan = 0;
    for (int j = 0; j < 8; j++)
        m[j] = -INFINITY;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) {
            float v = x[i + j];
            nan |= v != v;
            m[j] = v > m[j] ? v : m[j];
        }
    for (; i < n; i++) {
        nan |= x[i] != x[i];
        m[0] = x[i] > m[0] ? x[i] : m[0];
    }
    float r = m[0];
    for (int j = 1; j < 8; j++)
        r = m[j] > r ? m[j] : r;
    *m_out = r;
    return !nan && r > -INFINITY && r < INFINITY;
}

/* exp(x) for |x| <= 708: x = n ln2 + r (fdlibm's ln2 split, n * ln2_hi
 * exact), |r| <= ln2/2, the Taylor polynomial of degree 13 (truncation
 * < 1e-17 relative), 2^n put in the exponent bits. */
static inline double bpc_exp_core(double x)
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
    double p = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    double y = (p * (r * r) + r) + 1.0;
    uint64_t eb = (tb - sb + 1023u) << 52; /* 2^n, n in [-1022, 1023] */
    double scale;
    memcpy(&scale, &eb, 8);
    return y * scale;
}

/* log(x) for x positive, finite and normal (fdlibm's e_log.c: x = 2^k m,
 * m in [sqrt(2)/2, sqrt(2)), f = m - 1, s = f / (2 + f), log(1 + f) from
 * its odd series in s; < 1 ulp). */
static inline double bpc_log_core(double x)
{
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    const double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                 Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                 Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                 Lg7 = 1.479819860511658591e-01;
    uint64_t u, eb;
    memcpy(&u, &x, 8);
    uint64_t mb = (u & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
    eb = (u >> 52) | 0x4330000000000000ull; /* the biased exponent, as 2^52 + e */
    double m, e;
    memcpy(&m, &mb, 8);
    memcpy(&e, &eb, 8);
    e = (e - 4503599627370496.0) - 1023.0; /* the unbiased exponent */
    double big = m > 1.4142135623730951 ? 1.0 : 0.0;
    m = big != 0.0 ? m * 0.5 : m;
    double k = e + big;
    double f = m - 1.0;
    double s = f / (2.0 + f), z = s * s, w = z * z;
    double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
    double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
    double R = t2 + t1, hfsq = 0.5 * f * f;
    return k * ln2_hi - ((hfsq - (s * (hfsq + R) + k * ln2_lo)) - f);
}

/* sin and cos of x for |x| <= BPC_TRIG_MAX: x = q pi/2 + r with fdlibm's
 * three-part pi/2 (each part 33 bits, so q * part is exact for q < 2^20),
 * |r| <= pi/4, and fdlibm's kernels (k_sin.c, k_cos.c). */
#define BPC_TRIG_MAX 262144.0
static inline void bpc_sincos_core(double x, double *s_out, double *c_out)
{
    const double shifter = 6755399441055744.0, invpio2 = 6.36619772367581382433e-01;
    const double pio2_1 = 1.57079632673412561417e+00, pio2_2 = 6.07710050630396597660e-11,
                 pio2_3 = 2.02226624871116645580e-21;
    const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                 S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                 S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
    const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                 C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                 C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
    double t = x * invpio2 + shifter;
    double q = t - shifter;
    uint64_t tb;
    memcpy(&tb, &t, 8);
    double r = ((x - q * pio2_1) - q * pio2_2) - q * pio2_3;
    double z = r * r;
    double ps = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
    double sn = r + (z * r) * (S1 + z * ps);
    double pc = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
    double hz = 0.5 * z, w = 1.0 - hz;
    double cs = w + (((1.0 - w) - hz) + z * pc);
    uint64_t k = tb & 3u; /* the quadrant */
    double s1 = (k & 1u) ? cs : sn, c1 = (k & 1u) ? sn : cs;
    *s_out = (k & 2u) ? -s1 : s1;
    *c_out = ((k + 1u) & 2u) ? -c1 : c1;
}

#endif

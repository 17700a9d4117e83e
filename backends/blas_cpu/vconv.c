/* The block of a direct f32 convolution (vmath.h's conv_block_f32),
 * compiled once per instruction level; the levels with fma have it.
 *
 * BPC_CONV_FILTERS = 16 filters sit on the lanes of the vector registers
 * (one 16-float register with AVX-512, two 8-float ones with AVX2); each
 * output position of a run has its own accumulators, and each product is
 * one weight vector times one input value broadcast: per channel and tap,
 * the weights' loads and one broadcast per position feed one fma per
 * register of accumulators. AVX-512 takes two blocks of filters
 * (BPC_CONV_BLOCKS) at a run of up to BPC_CONV_RUN = 12 positions at once
 * (24 accumulators of its 32 registers); AVX2 takes one block at six
 * positions at a time (12 accumulators of its 16). The positions' inputs are pointers, so a run of
 * positions may cross output rows and take any stride; the taps are
 * offsets from them (toff), the same for every position (the input is
 * padded first: conv_direct.c); AVX-512 runs a full run that lies along
 * one or two lines (an output row, or one and the next) at stride 1 or 2
 * from two pointers (block_lines). Both levels add the products in the same
 * order, so their results are the same bits. This is the arrangement of
 * onnxruntime's MLAS direct convolutions and of oneDNN's "filters on the
 * lanes" kernels. */
#include "elementwise_formulas.h"
#include "vmath.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#if defined(__AVX512F__)
/* The block for exactly NB filter blocks (1 or 2) at NJ positions, one
 * register per block and position (constants, so that the loops unroll
 * and the accumulators stay in registers): with two blocks each broadcast
 * feeds two fmas, and 24 accumulators are in flight. One block of 16 at 12
 * positions measured 156 GFLOP/s on one Zen 5 core, two blocks 240 (the
 * broadcasts, one per fma, held the first back). */
static inline __attribute__((always_inline)) void block(const int nb, const int nj,
                                                        const float *const *xb, const float *wp,
                                                        int64_t wstride, int64_t c0, int64_t c1,
                                                        int64_t taps, const int64_t *toff,
                                                        int64_t plane, float *t, int64_t tstride,
                                                        bool first)
{
    __m512 acc[BPC_CONV_BLOCKS][BPC_CONV_RUN];
#pragma GCC unroll 2
    for (int f = 0; f < nb; f++)
#pragma GCC unroll 12
        for (int j = 0; j < nj; j++)
            acc[f][j] = first ? _mm512_setzero_ps()
                              : _mm512_loadu_ps(t + f * tstride + j * BPC_CONV_FILTERS);
    for (int64_t c = c0; c < c1; c++) {
        const float *w = wp + c * taps * BPC_CONV_FILTERS;
        const int64_t at = c * plane;
        for (int64_t k = 0; k < taps; k++) {
            __m512 wv[BPC_CONV_BLOCKS];
#pragma GCC unroll 2
            for (int f = 0; f < nb; f++)
                wv[f] = _mm512_loadu_ps(w + f * wstride + k * BPC_CONV_FILTERS);
            const int64_t o = at + toff[k];
#pragma GCC unroll 12
            for (int j = 0; j < nj; j++) {
                const __m512 x = _mm512_set1_ps(xb[j][o]);
#pragma GCC unroll 2
                for (int f = 0; f < nb; f++)
                    acc[f][j] = _mm512_fmadd_ps(wv[f], x, acc[f][j]);
            }
        }
    }
#pragma GCC unroll 2
    for (int f = 0; f < nb; f++)
#pragma GCC unroll 12
        for (int j = 0; j < nj; j++)
            _mm512_storeu_ps(t + f * tstride + j * BPC_CONV_FILTERS, acc[f][j]);
}

/* The block for a full run (BPC_CONV_RUN positions) whose inputs lie
 * along at most two lines at a stride S of 1 or 2: the first K positions at
 * a[j S], the rest at b[(j - K) S] (a run of an output row, or one that
 * crosses into the next row once). Two pointers instead of twelve: with
 * twelve, the run's pointers, the offsets and the counters outgrew the 16
 * general registers and the loop reloaded three from the stack each tap
 * (measured 1.06-1.13x on SqueezeNet's 3x3 layers on a Sapphire Rapids
 * Xeon). The products, and their order, are block()'s: the same bits. */
static inline __attribute__((always_inline)) void block_lines(const int nb, const int S,
                                                              const int K, const float *a,
                                                              const float *b, const float *wp,
                                                              int64_t wstride, int64_t c0,
                                                              int64_t c1, int64_t taps,
                                                              const int64_t *toff, int64_t plane,
                                                              float *t, int64_t tstride,
                                                              bool first)
{
    enum { NJ = BPC_CONV_RUN };
    __m512 acc[BPC_CONV_BLOCKS][NJ];
#pragma GCC unroll 2
    for (int f = 0; f < nb; f++)
#pragma GCC unroll 12
        for (int j = 0; j < NJ; j++)
            acc[f][j] = first ? _mm512_setzero_ps()
                              : _mm512_loadu_ps(t + f * tstride + j * BPC_CONV_FILTERS);
    for (int64_t c = c0; c < c1; c++) {
        const float *w = wp + c * taps * BPC_CONV_FILTERS;
        const int64_t at = c * plane;
        for (int64_t k = 0; k < taps; k++) {
            __m512 wv[BPC_CONV_BLOCKS];
#pragma GCC unroll 2
            for (int f = 0; f < nb; f++)
                wv[f] = _mm512_loadu_ps(w + f * wstride + k * BPC_CONV_FILTERS);
            const float *pa = a + at + toff[k], *pb = b + at + toff[k];
#pragma GCC unroll 12
            for (int j = 0; j < NJ; j++) {
                const __m512 x = _mm512_set1_ps(j < K ? pa[j * S] : pb[(j - K) * S]);
#pragma GCC unroll 2
                for (int f = 0; f < nb; f++)
                    acc[f][j] = _mm512_fmadd_ps(wv[f], x, acc[f][j]);
            }
        }
    }
#pragma GCC unroll 2
    for (int f = 0; f < nb; f++)
#pragma GCC unroll 12
        for (int j = 0; j < NJ; j++)
            _mm512_storeu_ps(t + f * tstride + j * BPC_CONV_FILTERS, acc[f][j]);
}

/* Where the full run xb lies along at most two lines at stride s: the
 * positions on the first (BPC_CONV_RUN: one line); 0 if it does not. */
static int first_line(const float *const *xb, int64_t s)
{
    int k = BPC_CONV_RUN;
    for (int j = 1; j < BPC_CONV_RUN; j++)
        if (xb[j] - xb[j - 1] != s) {
            if (k != BPC_CONV_RUN)
                return 0;
            k = j;
        }
    return k;
}

#define LINES_CASE(nb, S, K)                                                                    \
    case K:                                                                                     \
        block_lines(nb, S, K, xb[0], xb[K % BPC_CONV_RUN], wp, wstride, c0, c1, taps, toff,   \
                    plane, t, tstride, first);                                                  \
        return true

#define LINES_SWITCH(nb, S)                                                                     \
    switch (k) {                                                                                \
        LINES_CASE(nb, S, 12);                                                                  \
        LINES_CASE(nb, S, 11);                                                                  \
        LINES_CASE(nb, S, 10);                                                                  \
        LINES_CASE(nb, S, 9);                                                                   \
        LINES_CASE(nb, S, 8);                                                                   \
        LINES_CASE(nb, S, 7);                                                                   \
        LINES_CASE(nb, S, 6);                                                                   \
        LINES_CASE(nb, S, 5);                                                                   \
        LINES_CASE(nb, S, 4);                                                                   \
        LINES_CASE(nb, S, 3);                                                                   \
        LINES_CASE(nb, S, 2);                                                                   \
        LINES_CASE(nb, S, 1);                                                                   \
    default:                                                                                    \
        return false;                                                                           \
    }

/* block_lines for the full runs that take it; false for the others. */
static bool run_on_lines(const float *const *xb, const float *wp, int64_t wstride, int nb,
                         int64_t c0, int64_t c1, int64_t taps, const int64_t *toff,
                         int64_t plane, float *t, int64_t tstride, bool first)
{
    int k = first_line(xb, 1);
    if (k) {
        if (nb == 2) {
            LINES_SWITCH(2, 1)
        } else {
            LINES_SWITCH(1, 1)
        }
    }
    k = first_line(xb, 2);
    if (k) {
        if (nb == 2) {
            LINES_SWITCH(2, 2)
        } else {
            LINES_SWITCH(1, 2)
        }
    }
    return false;
}

#define BLOCK_CASE(nb, nj)                                                                      \
    case nj:                                                                                    \
        block(nb, nj, xb, wp, wstride, c0, c1, taps, toff, plane, t, tstride, first);          \
        break

#define BLOCK_SWITCH(nb)                                                                        \
    switch (nj) {                                                                               \
        BLOCK_CASE(nb, 12);                                                                     \
        BLOCK_CASE(nb, 11);                                                                     \
        BLOCK_CASE(nb, 10);                                                                     \
        BLOCK_CASE(nb, 9);                                                                      \
        BLOCK_CASE(nb, 8);                                                                      \
        BLOCK_CASE(nb, 7);                                                                      \
        BLOCK_CASE(nb, 6);                                                                      \
        BLOCK_CASE(nb, 5);                                                                      \
        BLOCK_CASE(nb, 4);                                                                      \
        BLOCK_CASE(nb, 3);                                                                      \
        BLOCK_CASE(nb, 2);                                                                      \
    default:                                                                                    \
        block(nb, 1, xb, wp, wstride, c0, c1, taps, toff, plane, t, tstride, first);           \
        break;                                                                                  \
    }

void BPC_LEVEL_FN(bpc_vconv_block_f32)(const float *const *xb, int nj, const float *wp,
                                       int64_t wstride, int nb, int64_t c0, int64_t c1,
                                       int64_t taps, const int64_t *toff, int64_t plane,
                                       float *t, int64_t tstride, bool first)
{
    if (nj == BPC_CONV_RUN &&
        run_on_lines(xb, wp, wstride, nb, c0, c1, taps, toff, plane, t, tstride, first))
        return;
    if (nb == 2) {
        BLOCK_SWITCH(2)
    } else {
        BLOCK_SWITCH(1)
    }
}
#else
/* AVX2 takes the positions six at a time. */
#define RUN_AVX2 6

/* The block for exactly NJ positions: a constant, so that the loops over
 * the positions unroll and the accumulators stay in registers (the pragmas:
 * -O2 does not unroll them by itself, and the accumulators then live on the
 * stack, at less than half the speed). */
static inline __attribute__((always_inline)) void block(const int nj, const float *const *xb,
                                                        const float *wp, int64_t c0, int64_t c1,
                                                        int64_t taps, const int64_t *toff,
                                                        int64_t plane, float *t, bool first)
{
    __m256 lo[RUN_AVX2], hi[RUN_AVX2];
#pragma GCC unroll 6
    for (int j = 0; j < nj; j++) {
        lo[j] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(t + j * BPC_CONV_FILTERS);
        hi[j] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(t + j * BPC_CONV_FILTERS + 8);
    }
    for (int64_t c = c0; c < c1; c++) {
        const float *w = wp + c * taps * BPC_CONV_FILTERS;
        const int64_t at = c * plane;
        for (int64_t k = 0; k < taps; k++) {
            const __m256 w0 = _mm256_loadu_ps(w + k * BPC_CONV_FILTERS);
            const __m256 w1 = _mm256_loadu_ps(w + k * BPC_CONV_FILTERS + 8);
            const int64_t o = at + toff[k];
#pragma GCC unroll 6
            for (int j = 0; j < nj; j++) {
                const __m256 b = _mm256_broadcast_ss(xb[j] + o);
                lo[j] = _mm256_fmadd_ps(w0, b, lo[j]);
                hi[j] = _mm256_fmadd_ps(w1, b, hi[j]);
            }
        }
    }
#pragma GCC unroll 6
    for (int j = 0; j < nj; j++) {
        _mm256_storeu_ps(t + j * BPC_CONV_FILTERS, lo[j]);
        _mm256_storeu_ps(t + j * BPC_CONV_FILTERS + 8, hi[j]);
    }
}

static void block_run(const float *const *xb, int nj, const float *wp, int64_t c0, int64_t c1,
                      int64_t taps, const int64_t *toff, int64_t plane, float *t, bool first)
{
    switch (nj) {
    case 6: block(6, xb, wp, c0, c1, taps, toff, plane, t, first); break;
    case 5: block(5, xb, wp, c0, c1, taps, toff, plane, t, first); break;
    case 4: block(4, xb, wp, c0, c1, taps, toff, plane, t, first); break;
    case 3: block(3, xb, wp, c0, c1, taps, toff, plane, t, first); break;
    case 2: block(2, xb, wp, c0, c1, taps, toff, plane, t, first); break;
    default: block(1, xb, wp, c0, c1, taps, toff, plane, t, first); break;
    }
}

void BPC_LEVEL_FN(bpc_vconv_block_f32)(const float *const *xb, int nj, const float *wp,
                                       int64_t wstride, int nb, int64_t c0, int64_t c1,
                                       int64_t taps, const int64_t *toff, int64_t plane,
                                       float *t, int64_t tstride, bool first)
{
    for (int f = 0; f < nb; f++)
        for (int j = 0; j < nj; j += RUN_AVX2)
            block_run(xb + j, nj - j < RUN_AVX2 ? nj - j : RUN_AVX2, wp + f * wstride, c0, c1,
                      taps, toff, plane, t + f * tstride + j * BPC_CONV_FILTERS, first);
}
#endif

/* v, or (relu) v where v > 0 or v is NaN and +0 elsewhere: bpf_relu_f's
 * values, -0 included. */
static inline __m256 store_relu(__m256 v, bool relu)
{
    return relu ? _mm256_and_ps(v, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_NLE_UQ)) : v;
}

/* v + bias, plus the residual's row where there is one (each sum
 * rounded, as the add after the convolution would round it). */
static inline __m256 store_sum(__m256 v, float bias, const float *res)
{
    v = _mm256_add_ps(v, _mm256_set1_ps(bias));
    return res ? _mm256_add_ps(v, _mm256_loadu_ps(res)) : v;
}

/* One 8 x 8 block: positions o..o+7 (rows of t) x filters f..f+7 into
 * y's rows f..f+7, bias added (then the residual's rows res, where there
 * are, then relu, where asked): the rows transposed in registers. */
static inline void store_8x8(const float *t, const float *bias, const float *res, float *y,
                             int64_t ldy, bool relu)
{
    __m256 r[8], u[8], v[8];
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps(t + i * BPC_CONV_FILTERS);
    for (int i = 0; i < 8; i += 2) {
        u[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        u[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        v[i] = _mm256_shuffle_ps(u[i], u[i + 2], 0x44);
        v[i + 1] = _mm256_shuffle_ps(u[i], u[i + 2], 0xee);
        v[i + 2] = _mm256_shuffle_ps(u[i + 1], u[i + 3], 0x44);
        v[i + 3] = _mm256_shuffle_ps(u[i + 1], u[i + 3], 0xee);
    }
    for (int i = 0; i < 4; i++) {
        const __m256 a = _mm256_permute2f128_ps(v[i], v[i + 4], 0x20);
        const __m256 b = _mm256_permute2f128_ps(v[i], v[i + 4], 0x31);
        _mm256_storeu_ps(y + i * ldy,
                         store_relu(store_sum(a, bias[i], res ? res + i * ldy : NULL), relu));
        _mm256_storeu_ps(y + (i + 4) * ldy,
                         store_relu(store_sum(b, bias[i + 4], res ? res + (i + 4) * ldy : NULL),
                                    relu));
    }
}

void BPC_LEVEL_FN(bpc_vconv_store_f32)(const float *t, int64_t n, int nf, const float *bias,
                                       const float *res, bool relu, float *y, int64_t ldy)
{
    int64_t o = 0;
    if (nf == BPC_CONV_FILTERS)
        for (; o + 8 <= n; o += 8)
            for (int f = 0; f < BPC_CONV_FILTERS; f += 8)
                store_8x8(t + o * BPC_CONV_FILTERS + f, bias + f,
                          res ? res + f * ldy + o : NULL, y + f * ldy + o, ldy, relu);
    for (int f = 0; f < nf; f++)
        for (int64_t i = o; i < n; i++) {
            float v = t[i * BPC_CONV_FILTERS + f] + bias[f];
            if (res)
                v = v + res[f * ldy + i];
            y[f * ldy + i] = relu ? bpf_relu_f(v) : v;
        }
}

_Static_assert(BPC_CONV_FILTERS == 16 && BPC_CONV_RUN == 12 && BPC_CONV_BLOCKS == 2,
               "the block holds 16 filters a register, at most 12 positions and 2 blocks");
#else
/* The baseline has no fma: its table leaves conv_block_f32 NULL. */
typedef int bpc_vconv_none;
#endif

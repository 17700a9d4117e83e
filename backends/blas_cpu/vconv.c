/* The block of a direct f32 convolution (vmath.h's conv_block_f32),
 * compiled once per instruction level; the levels with fma have it.
 *
 * BPC_CONV_FILTERS = 16 filters sit on the lanes of two 8-float registers;
 * each of up to BPC_CONV_RUN = 6 output positions has its own pair of
 * accumulators (12 in all, of the 16 registers), and each product is one
 * weight pair times one input value broadcast: per channel and tap, two
 * loads of weights and six broadcasts feed twelve fmas. The positions'
 * inputs are six pointers, so a run of positions may cross output rows and
 * take any stride; the taps are offsets from them (toff), the same for
 * every position (the input is padded first: conv_direct.c). This is the
 * arrangement of onnxruntime's MLAS direct convolutions and of oneDNN's
 * "filters on the lanes" kernels. */
#include "vmath.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

/* The block for exactly NJ positions: a constant, so that the loops over
 * the positions unroll and the accumulators stay in registers (the pragmas:
 * -O2 does not unroll them by itself, and the accumulators then live on the
 * stack, at less than half the speed). */
static inline __attribute__((always_inline)) void block(const int nj, const float *const *xb,
                                                        const float *wp, int64_t c0, int64_t c1,
                                                        int64_t taps, const int64_t *toff,
                                                        int64_t plane, float *t, bool first)
{
    __m256 lo[BPC_CONV_RUN], hi[BPC_CONV_RUN];
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

void BPC_LEVEL_FN(bpc_vconv_block_f32)(const float *const *xb, int nj, const float *wp,
                                       int64_t c0, int64_t c1, int64_t taps,
                                       const int64_t *toff, int64_t plane, float *t, bool first)
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
/* One 8 x 8 block: positions o..o+7 (rows of t) x filters f..f+7 into
 * y's rows f..f+7, bias added: the rows transposed in registers. */
static inline void store_8x8(const float *t, const float *bias, float *y, int64_t ldy)
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
        _mm256_storeu_ps(y + i * ldy, _mm256_add_ps(a, _mm256_set1_ps(bias[i])));
        _mm256_storeu_ps(y + (i + 4) * ldy, _mm256_add_ps(b, _mm256_set1_ps(bias[i + 4])));
    }
}

void BPC_LEVEL_FN(bpc_vconv_store_f32)(const float *t, int64_t n, int nf, const float *bias,
                                       float *y, int64_t ldy)
{
    int64_t o = 0;
    if (nf == BPC_CONV_FILTERS)
        for (; o + 8 <= n; o += 8)
            for (int f = 0; f < BPC_CONV_FILTERS; f += 8)
                store_8x8(t + o * BPC_CONV_FILTERS + f, bias + f, y + f * ldy + o, ldy);
    for (int f = 0; f < nf; f++)
        for (int64_t i = o; i < n; i++)
            y[f * ldy + i] = t[i * BPC_CONV_FILTERS + f] + bias[f];
}

_Static_assert(BPC_CONV_FILTERS == 16 && BPC_CONV_RUN == 6,
               "the block holds 16 filters in two registers and 6 positions");
#else
/* The baseline has no fma: its table leaves conv_block_f32 NULL. */
typedef int bpc_vconv_none;
#endif

/* The row fold of a strided 3x3 max pool (vmath.h's max3_fold_s2_f32),
 * compiled once per instruction level; the levels with AVX2 have it.
 *
 * At stride 2 the three taps of output i are x[2i], x[2i + 1] and
 * x[2i + 2]: two loads of eight hold sixteen values, whose even and odd
 * ones two shuffles gather (in the order [0 1 4 5 2 3 6 7] of the eight
 * outputs: vshufps works within each 128-bit half), the third tap is the
 * evens moved one output along (a permute, and x[2i + 16] into the last
 * one), and one permute of 64-bit pairs puts the eight maxima in order.
 * The compiler's vectorisation of the same loop took six lane-crossing
 * permutes and three blends for the three strided loads. The loads
 * also say whether the values hold a NaN, so the separate pass over the
 * plane that decided this before (read past L2 when the convolution
 * before the pool had just written it) is gone. */
#include "vmath.h"

#if defined(__AVX2__)
#include <immintrin.h>

/* The step of a plane without NaN: v where v > b, else b (ties keep the
 * first); vmaxps returns its second operand unless the first is larger. */
static inline __m256 step(__m256 b, __m256 v) { return _mm256_max_ps(v, b); }

/* Outputs [i, i + 8) of the fold, reading x[2i .. 2i + 16]; *bad gains
 * the lanes where x[2i .. 2i + 15] holds a NaN. */
static inline void fold8(float *h, const float *x, int64_t i, __m256 *bad)
{
    const float *p = x + 2 * i;
    const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    const __m256 even = _mm256_shuffle_ps(a, b, 0x88); /* x 0 2 8 10 | 4 6 12 14 */
    const __m256 odd = _mm256_shuffle_ps(a, b, 0xdd);  /* x 1 3 9 11 | 5 7 13 15 */
    /* x 2 4 10 12 | 6 8 14 16: lanes 1 4 3 6 5 2 7 of even, then x[16] */
    const __m256 next = _mm256_blend_ps(
        _mm256_permutevar8x32_ps(even, _mm256_setr_epi32(1, 4, 3, 6, 5, 2, 7, 0)),
        _mm256_broadcast_ss(p + 16), 0x80);
    const __m256 m = step(step(even, odd), next);
    _mm256_storeu_ps(h + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xd8)));
    *bad = _mm256_or_ps(*bad, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}

bool BPC_LEVEL_FN(bpc_vmax3_fold_s2_f32)(float *restrict h, const float *restrict x, int64_t n)
{
    __m256 bad = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        fold8(h, x, i, &bad);
    if (i < n && n >= 8) /* the last eight again, overlapping: the same values */
        fold8(h, x, n - 8, &bad);
    else
        for (; i < n; i++) {
            const float a = x[2 * i], b = x[2 * i + 1];
            float v = b > a ? b : a;
            v = x[2 * i + 2] > v ? x[2 * i + 2] : v;
            h[i] = v;
            if (a != a || b != b)
                bad = _mm256_set1_ps(-1.0f);
        }
    return _mm256_movemask_ps(bad) != 0 || x[2 * n] != x[2 * n];
}
#else
/* The baseline leaves max3_fold_s2_f32 NULL (window_pool.c folds in C). */
typedef int bpc_vpool_none;
#endif

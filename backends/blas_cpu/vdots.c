/* Dot products of rows (vmath.h's dots_f32 / dots_f64), compiled once per
 * instruction level: a matrix times a few vectors, for convolutions with a
 * handful of output positions (conv_narrow.c).
 *
 * Every product w[r] . c[o] is the same formula at every blocking: LANES
 * interleaved partial sums along k (lane l takes j = l mod LANES), added in
 * double in lane order, then the rest of k and the bias, rounded once. A
 * multiply-add is fused where the level has fma (AVX2 and AVX-512 run the
 * same 256-bit code, so the same bits); the baseline multiplies, then adds.
 *
 * With AVX2, blocks of rows x vectors keep 8 accumulators in registers
 * (2 x 4, 4 x 2 or 8 x 1 as the vectors left allow: computing 4 against
 * one vector wasted three quarters of the multiplications), so each
 * element of w is loaded once per block of vectors and each vector's once
 * per block of rows (a gemv per vector read all of w for each). */
#include <math.h>

#include "vmath.h"

/* A block's results: the partial sums part[a][b][...] in double, in lane
 * order, the rest of k from j on, the bias; stored for the rows and the
 * vectors that exist (a block past the last row or vector computed on the
 * last one's data, so its loops keep their counts). */
#define FINISH(T, LANES, R, C)                                                             \
    for (int a = 0; a < (R) && r + a < m; a++)                                             \
        for (int b = 0; b < (C) && o + b < n; b++) {                                       \
            const T *wa = w + (r + a) * k, *cb = c + (o + b) * k;                          \
            double s = 0;                                                                  \
            for (int l = 0; l < (LANES); l++)                                              \
                s += (double)part[a][b][l];                                                \
            for (int64_t t = j; t < k; t++)                                                \
                s += (double)wa[t] * (double)cb[t];                                        \
            if (bias)                                                                      \
                s += bias[r + a];                                                          \
            y[(r + a) * ldy + o + b] = (T)s;                                               \
        }

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

/* Rows [r, r + R) against vectors [o, o + C) in R x C accumulators */
#define BLOCK(NAME, T, LANES, V, LOAD, FMA, STORE, ZERO, R, C)                             \
    static inline void NAME(const T *w, int64_t m, int64_t r, const T *c, int64_t n,      \
                            int64_t o, int64_t k, const double *bias, T *y, int64_t ldy)   \
    {                                                                                      \
        const T *wr[R], *cv[C];                                                            \
        for (int a = 0; a < (R); a++)                                                      \
            wr[a] = w + (r + a < m ? r + a : m - 1) * k;                                   \
        for (int b = 0; b < (C); b++)                                                      \
            cv[b] = c + (o + b < n ? o + b : n - 1) * k;                                   \
        V acc[R][C];                                                                       \
        for (int a = 0; a < (R); a++)                                                      \
            for (int b = 0; b < (C); b++)                                                  \
                acc[a][b] = ZERO();                                                        \
        int64_t j = 0;                                                                     \
        for (; j + (LANES) <= k; j += (LANES)) {                                           \
            V xa[R];                                                                       \
            for (int a = 0; a < (R); a++)                                                  \
                xa[a] = LOAD(wr[a] + j);                                                   \
            for (int b = 0; b < (C); b++) {                                                \
                const V v = LOAD(cv[b] + j);                                               \
                for (int a = 0; a < (R); a++)                                              \
                    acc[a][b] = FMA(xa[a], v, acc[a][b]);                                  \
            }                                                                              \
        }                                                                                  \
        T part[R][C][LANES];                                                               \
        for (int a = 0; a < (R); a++)                                                      \
            for (int b = 0; b < (C); b++)                                                  \
                STORE(part[a][b], acc[a][b]);                                              \
        FINISH(T, LANES, R, C)                                                             \
    }

#define DOTS(NAME, T, LANES, V, LOAD, FMA, STORE, ZERO)                                    \
    BLOCK(NAME##_2x4, T, LANES, V, LOAD, FMA, STORE, ZERO, 2, 4)                           \
    BLOCK(NAME##_4x2, T, LANES, V, LOAD, FMA, STORE, ZERO, 4, 2)                           \
    BLOCK(NAME##_8x1, T, LANES, V, LOAD, FMA, STORE, ZERO, 8, 1)                           \
    static void NAME(const T *w, int64_t m, const T *c, int64_t n, int64_t k,             \
                     const double *bias, T *y, int64_t ldy)                                \
    {                                                                                      \
        for (int64_t o = 0; o < n;) {                                                      \
            if (n - o >= 4) {                                                              \
                for (int64_t r = 0; r < m; r += 2)                                         \
                    NAME##_2x4(w, m, r, c, n, o, k, bias, y, ldy);                         \
                o += 4;                                                                    \
            } else if (n - o >= 2) {                                                       \
                for (int64_t r = 0; r < m; r += 4)                                         \
                    NAME##_4x2(w, m, r, c, n, o, k, bias, y, ldy);                         \
                o += 2;                                                                    \
            } else {                                                                       \
                for (int64_t r = 0; r < m; r += 8)                                         \
                    NAME##_8x1(w, m, r, c, n, o, k, bias, y, ldy);                         \
                o += 1;                                                                    \
            }                                                                              \
        }                                                                                  \
    }

DOTS(dots_f32, float, BPC_DOTS_F32, __m256, _mm256_loadu_ps, _mm256_fmadd_ps, _mm256_storeu_ps,
     _mm256_setzero_ps)
DOTS(dots_f64, double, BPC_DOTS_F64, __m256d, _mm256_loadu_pd, _mm256_fmadd_pd,
     _mm256_storeu_pd, _mm256_setzero_pd)

#else /* one product at a time, the same formula */

#if defined(FP_FAST_FMAF) && defined(FP_FAST_FMA)
#define MADD_F32(x, v, s) fmaf(x, v, s)
#define MADD_F64(x, v, s) fma(x, v, s)
#else
#define MADD_F32(x, v, s) ((x) * (v) + (s))
#define MADD_F64(x, v, s) ((x) * (v) + (s))
#endif

#define DOTS(NAME, T, LANES, MADD)                                                         \
    static void NAME(const T *w, int64_t m, const T *c, int64_t n, int64_t k,             \
                     const double *bias, T *y, int64_t ldy)                                \
    {                                                                                      \
        for (int64_t r = 0; r < m; r++)                                                    \
            for (int64_t o = 0; o < n; o++) {                                              \
                const T *wr = w + r * k, *cv = c + o * k;                                  \
                T part[1][1][LANES] = {{{0}}};                                             \
                int64_t j = 0;                                                             \
                for (; j + (LANES) <= k; j += (LANES))                                     \
                    for (int l = 0; l < (LANES); l++)                                      \
                        part[0][0][l] = MADD(wr[j + l], cv[j + l], part[0][0][l]);         \
                FINISH(T, LANES, 1, 1)                                                     \
            }                                                                              \
    }

DOTS(dots_f32, float, BPC_DOTS_F32, MADD_F32)
DOTS(dots_f64, double, BPC_DOTS_F64, MADD_F64)
#endif

void BPC_LEVEL_FN(bpc_vdots_f32)(const float *w, int64_t m, const float *c, int64_t n,
                                 int64_t k, const double *bias, float *y, int64_t ldy)
{
    dots_f32(w, m, c, n, k, bias, y, ldy);
}

void BPC_LEVEL_FN(bpc_vdots_f64)(const double *w, int64_t m, const double *c, int64_t n,
                                 int64_t k, const double *bias, double *y, int64_t ldy)
{
    dots_f64(w, m, c, n, k, bias, y, ldy);
}

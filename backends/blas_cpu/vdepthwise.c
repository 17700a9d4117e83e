/* One output plane of a depthwise f32 convolution with a 3x3 window
 * (vmath.h's depthwise_3x3_f32), compiled once per instruction level; the
 * levels with fma have it.
 *
 * Each output is its nine products in row-major tap order: the first
 * rounded, each next one fused into the sum (fmaf), the bias added last.
 * The loops run along the outputs, so the compiler puts consecutive
 * outputs on the vector lanes, and every level gives the same bits.
 *
 * A padded window reads the plane from a copy with its zeros around it;
 * the caller zeroes that buffer once for all its planes, and each plane
 * copies only its interior in. At stride 1 the plane is one line: output
 * (r, c) is computed at r pw + c, the padded plane's own pitch, so the
 * taps are nine fixed offsets from it and a 7 x 7 plane (pw 9) fills four
 * 16-float vectors where its rows would fill seven a third full; the
 * outputs that fall in the padding columns are computed and dropped as the
 * rows are copied out. The copies are masked vector loads and stores (a
 * library call per row of 7 to 28 floats cost more than the arithmetic). */
#include "vmath.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#include <math.h>

/* n floats from src to dst, which do not overlap. */
static inline void copy_floats(float *restrict dst, const float *restrict src, int64_t n)
{
#if defined(__AVX512F__)
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_loadu_ps(src + i));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(dst + i, m, _mm512_maskz_loadu_ps(m, src + i));
    }
#else
    static const int32_t lanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_loadu_ps(src + i));
    if (i < n) {
        const __m256i m = _mm256_loadu_si256((const __m256i *)(lanes + 8 - (n - i)));
        _mm256_maskstore_ps(dst + i, m, _mm256_maskload_ps(src + i, m));
    }
#endif
}

/* The nine taps of the output whose first tap is P[I]. */
#define TAPS(P, I)                                                                               \
    fmaf(w8, (P)[(I) + o8],                                                                      \
         fmaf(w7, (P)[(I) + o7],                                                                 \
              fmaf(w6, (P)[(I) + o6],                                                            \
                   fmaf(w5, (P)[(I) + o5],                                                       \
                        fmaf(w4, (P)[(I) + o4],                                                  \
                             fmaf(w3, (P)[(I) + o3],                                             \
                                  fmaf(w2, (P)[(I) + o2],                                        \
                                       fmaf(w1, (P)[(I) + o1], w0 * (P)[(I) + o0]))))))))

void BPC_LEVEL_FN(bpc_vdepthwise_3x3_f32)(const bpc_dw3x3 *g, const float *x, const float *w,
                                          float b, float *restrict y, float *restrict pad,
                                          float *restrict line)
{
    const float *restrict p = x;
    const int64_t pw = g->ph ? g->pw : g->iw, oh = g->oh, ow = g->ow, sh = g->sh, sw = g->sw;
    if (g->ph) { /* the interior, clipped to the rows and columns the outputs reach */
        const int64_t rows = g->ih < g->ph - g->pt ? g->ih : g->ph - g->pt;
        const int64_t cols = g->iw < g->pw - g->pl ? g->iw : g->pw - g->pl;
        for (int64_t r = 0; r < rows && cols > 0; r++)
            copy_floats(pad + (r + g->pt) * pw + g->pl, x + r * g->iw, cols);
        p = pad;
    }
    const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6],
                w7 = w[7], w8 = w[8];
    const int64_t dw = g->dw, o0 = 0, o1 = dw, o2 = 2 * dw, o3 = g->dh * pw, o4 = o3 + dw,
                  o5 = o3 + 2 * dw, o6 = 2 * o3, o7 = o6 + dw, o8 = o6 + 2 * dw;
    if (sh == 1 && sw == 1 && line) {
        const int64_t n = (oh - 1) * pw + ow;
        for (int64_t i = 0; i < n; i++)
            line[i] = TAPS(p, i) + b;
        for (int64_t r = 0; r < oh; r++)
            copy_floats(y + r * ow, line + r * pw, ow);
        return;
    }
    for (int64_t r = 0; r < oh; r++) {
        const float *restrict pr = p + r * sh * pw;
        float *restrict yr = y + r * ow;
        if (sw == 1)
            for (int64_t c = 0; c < ow; c++)
                yr[c] = TAPS(pr, c) + b;
        else if (sw == 2) /* its own copy: a constant stride the compiler vectorises */
            for (int64_t c = 0; c < ow; c++)
                yr[c] = TAPS(pr, 2 * c) + b;
        else
            for (int64_t c = 0; c < ow; c++)
                yr[c] = TAPS(pr, c * sw) + b;
    }
}
#else
/* The baseline has no fma: its table leaves depthwise_3x3_f32 NULL. */
typedef int bpc_vdepthwise_none;
#endif

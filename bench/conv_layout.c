/* bench/conv_layout.c: what a channel-blocked layout would give blas_cpu's
 * 1x1 convolutions, measured before any of it is built (docs/performance.md).
 *
 * Half of ResNet-50's multiply-adds are 1x1 convolutions. blas_cpu runs them
 * as OpenBLAS's sgemm on the plain layout (y = w x, x as C x P with the
 * positions P in rows), or on AVX-512 directly with filters on the lanes;
 * there each broadcast of x reads a channel's plane a plane apart, and the
 * direct kernel reached 108 GFLOP/s on 1x1 shapes against 240 on 3x3 ones.
 * onnxruntime keeps activations in blocks of channels between its
 * convolutions (NCHWc): x[c / 16][p][c % 16], so that the broadcasts of one
 * position read consecutive floats. This program times, on one thread, for
 * ResNet-50's 1x1 layers at batch 1:
 *
 *   sgemm     OpenBLAS's cblas_sgemm on the plain layout (beta 0): what
 *             blas_cpu runs today;
 *   blocked   the direct kernel's arrangement (two blocks of 16 filters on
 *             the lanes of 24 AVX-512 accumulators, 12 positions a run) over
 *             x in blocks of 16 channels, writing y in the same layout, with
 *             positions in chunks that stay in L2 while every filter block
 *             passes over them;
 *   to/from   the reorders a chain of blocked nodes pays where it starts and
 *             ends: x plain -> blocked, y blocked -> plain.
 *
 * It checks that both give the same products within the sum's rounding
 * bound (K eps sum |w x|) and prints GFLOP/s, the ratio blocked / sgemm, and
 * the reorders' time against the blocked convolution's. Needs AVX-512F;
 * elsewhere it says so and exits 2.
 *
 *   bp_bench_conv_layout [--reps N]            (OPENBLAS_NUM_THREADS is set to 1)
 */
#define _POSIX_C_SOURCE 200809L

#include <float.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "openblas.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_X86 1
#endif

enum { LANES = 16, RUN = 12, CHUNK = 96 }; /* CHUNK: positions kept in L2 per pass */

typedef struct shape {
    const char *what;
    int c, m, h; /* channels in, out; an h x h plane */
} shape;

/* ResNet-50's 1x1 layers (stride 1) at batch 1 */
static const shape SHAPES[] = {
    {"l1 reduce 64->64", 64, 64, 56},     {"l1 expand 64->256", 64, 256, 56},
    {"l1 reduce 256->64", 256, 64, 56},   {"l2 reduce 256->128", 256, 128, 56},
    {"l2 expand 128->512", 128, 512, 28}, {"l2 reduce 512->128", 512, 128, 28},
    {"l3 reduce 512->256", 512, 256, 28}, {"l3 expand 256->1024", 256, 1024, 14},
    {"l3 reduce 1024->256", 1024, 256, 14}, {"l4 reduce 1024->512", 1024, 512, 14},
    {"l4 expand 512->2048", 512, 2048, 7}, {"l4 reduce 2048->512", 2048, 512, 7},
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *falloc(size_t n)
{
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "conv_layout: out of memory (%zu floats)\n", n);
        exit(1);
    }
    return p;
}

#ifdef HAVE_X86
/* NJ positions of NB filter blocks (constants: the loops unroll, the
 * accumulators stay in registers) over all C channels: channel cb 16 + ci
 * of position j at xb + cb cbs + ci cis + j js (blocked: cbs = 16 P, cis =
 * 1, js = 16; plain: cbs = 16 P, cis = P, js = 1), the NB blocks' weights
 * at wp ([C][NB 16]: channel c's NB 16 filters), y blocked at yb (block
 * f's plane at yb + f P 16, position j at + j 16). Each broadcast of an x
 * feeds NB fmas. */
static inline __attribute__((always_inline, target("avx512f,fma"))) void
run(const int nb, const int nj, const float *xb, int64_t P, int64_t cis, int64_t js, int C,
    const float *wp, float *yb)
{
    __m512 acc[4][RUN];
#pragma GCC unroll 4
    for (int f = 0; f < nb; f++)
#pragma GCC unroll 12
        for (int j = 0; j < nj; j++)
            acc[f][j] = _mm512_setzero_ps();
    for (int cb = 0; cb < C / LANES; cb++) {
        const float *x = xb + (int64_t)cb * P * LANES;
        const float *w = wp + (int64_t)cb * LANES * nb * LANES;
        for (int ci = 0; ci < LANES; ci++) {
            __m512 wv[4];
#pragma GCC unroll 4
            for (int f = 0; f < nb; f++)
                wv[f] = _mm512_load_ps(w + (ci * nb + f) * LANES);
#pragma GCC unroll 12
            for (int j = 0; j < nj; j++) {
                const __m512 b = _mm512_set1_ps(x[j * js + ci * cis]);
#pragma GCC unroll 4
                for (int f = 0; f < nb; f++)
                    acc[f][j] = _mm512_fmadd_ps(wv[f], b, acc[f][j]);
            }
        }
    }
#pragma GCC unroll 4
    for (int f = 0; f < nb; f++)
#pragma GCC unroll 12
        for (int j = 0; j < nj; j++)
            _mm512_store_ps(yb + ((int64_t)f * P + j) * LANES, acc[f][j]);
}

/* The blocks measured: NB filter blocks by NJ positions (NB NJ = 24
 * accumulators and NB weight registers; each broadcast feeds NB fmas). 2 x
 * 12 is blas_cpu's direct kernel's. */
typedef struct blocking {
    int nb, nj;
} blocking;
static const blocking BLOCKINGS[] = {{2, 12}, {4, 6}};
enum { NBLOCKINGS = sizeof BLOCKINGS / sizeof BLOCKINGS[0] };

#define RUN_CASE(NB, NJ)                                                                         \
    case NJ: run(NB, NJ, xb, P, cis, js, C, wp, yb); return

#define RUN_SWITCH(NB)                                                                           \
    switch (nj) {                                                                                \
        RUN_CASE(NB, 12); RUN_CASE(NB, 11); RUN_CASE(NB, 10); RUN_CASE(NB, 9);                  \
        RUN_CASE(NB, 8); RUN_CASE(NB, 7); RUN_CASE(NB, 6); RUN_CASE(NB, 5); RUN_CASE(NB, 4);     \
        RUN_CASE(NB, 3); RUN_CASE(NB, 2);                                                        \
    default: run(NB, 1, xb, P, cis, js, C, wp, yb); return;                                      \
    }

/* x blocked (the strides constants) */
static __attribute__((target("avx512f,fma"))) void run_blocked(int nb, int nj, const float *xb,
                                                               int64_t P, int C, const float *wp,
                                                               float *yb)
{
    const int64_t cis = 1, js = LANES;
    if (nb == 2) {
        RUN_SWITCH(2)
    } else {
        RUN_SWITCH(4)
    }
}

/* x plain, C x P (blas_cpu's direct kernel's reads: a channel a plane on) */
static __attribute__((target("avx512f,fma"))) void run_plain(int nb, int nj, const float *xb,
                                                             int64_t P, int C, const float *wp,
                                                             float *yb)
{
    const int64_t cis = P, js = 1;
    if (nb == 2) {
        RUN_SWITCH(2)
    } else {
        RUN_SWITCH(4)
    }
}

/* y (blocked, M / 16 planes of P x 16) = w x for x blocked (C / 16 planes),
 * the weights packed per group of bk.nb filter blocks as [C][nb 16] (M a
 * multiple of nb 16). Positions in chunks of CHUNK, each chunk passed over
 * by every group of filter blocks while it is in L2. */
static __attribute__((target("avx512f,fma"))) void conv_blocked(blocking bk, bool plain,
                                                                const float *xb,
                                                                const float *wp, float *yb,
                                                                int C, int M, int64_t P)
{
    const int g = bk.nb * LANES;
    for (int64_t p0 = 0; p0 < P; p0 += CHUNK) {
        const int64_t p1 = p0 + CHUNK < P ? p0 + CHUNK : P;
        for (int f = 0; f < M / g; f++) {
            const float *w = wp + (int64_t)f * C * g;
            float *y = yb + (int64_t)f * bk.nb * P * LANES;
            for (int64_t p = p0; p < p1; p += bk.nj) {
                const int nj = (int)(p1 - p < bk.nj ? p1 - p : bk.nj);
                if (plain)
                    run_plain(bk.nb, nj, xb + p, P, C, w, y + p * LANES);
                else
                    run_blocked(bk.nb, nj, xb + p * LANES, P, C, w, y + p * LANES);
            }
        }
    }
}

/* The core's f32 FMA rate with no loads: 12 independent accumulators
 * (enough to cover the FMA latency of every core this targets), written out
 * so that they stay in registers; GFLOP/s of n rounds. */
static __attribute__((target("avx512f,fma"))) double peak_gflops(int64_t n)
{
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    /* distinct starts, so that no two chains are the same computation */
#define START(k) _mm512_set1_ps(1.0f + 0.01f * (float)(k))
    __m512 a0 = START(0), a1 = START(1), a2 = START(2), a3 = START(3), a4 = START(4),
           a5 = START(5), a6 = START(6), a7 = START(7), a8 = START(8), a9 = START(9),
           a10 = START(10), a11 = START(11);
#undef START
    const double t = now();
    for (int64_t i = 0; i < n; i++) {
        a0 = _mm512_fmadd_ps(a0, m, c), a1 = _mm512_fmadd_ps(a1, m, c);
        a2 = _mm512_fmadd_ps(a2, m, c), a3 = _mm512_fmadd_ps(a3, m, c);
        a4 = _mm512_fmadd_ps(a4, m, c), a5 = _mm512_fmadd_ps(a5, m, c);
        a6 = _mm512_fmadd_ps(a6, m, c), a7 = _mm512_fmadd_ps(a7, m, c);
        a8 = _mm512_fmadd_ps(a8, m, c), a9 = _mm512_fmadd_ps(a9, m, c);
        a10 = _mm512_fmadd_ps(a10, m, c), a11 = _mm512_fmadd_ps(a11, m, c);
    }
    const double d = now() - t;
    const __m512 s = _mm512_add_ps(
        _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                      _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7))),
        _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    float out[LANES];
    _mm512_storeu_ps(out, s);
    if (out[0] == 12345.0f) /* keep the loop's result alive */
        fprintf(stderr, "conv_layout: unlikely sum\n");
    return 2.0 * LANES * 12 * (double)n / d * 1e-9;
}

#endif

/* x[c][p] -> xb[c / 16][p][c % 16] */
static void to_blocked(const float *x, float *xb, int C, int64_t P)
{
    for (int cb = 0; cb < C / LANES; cb++)
        for (int64_t p = 0; p < P; p++)
            for (int ci = 0; ci < LANES; ci++)
                xb[((int64_t)cb * P + p) * LANES + ci] = x[(int64_t)(cb * LANES + ci) * P + p];
}

/* yb[m / 16][p][m % 16] -> y[m][p] */
static void from_blocked(const float *yb, float *y, int M, int64_t P)
{
    for (int mb = 0; mb < M / LANES; mb++)
        for (int mi = 0; mi < LANES; mi++)
            for (int64_t p = 0; p < P; p++)
                y[(int64_t)(mb * LANES + mi) * P + p] = yb[((int64_t)mb * P + p) * LANES + mi];
}

/* w[m][c] -> wp[m / g][c][m % g], g = nb 16 filters a group */
static void pack_weights(const float *w, float *wp, int C, int M, int g)
{
    for (int m = 0; m < M; m++)
        for (int c = 0; c < C; c++)
            wp[((int64_t)(m / g) * C + c) * g + m % g] = w[(int64_t)m * C + c];
}

/* the best of reps timed calls, after one warm-up */
#define BEST(reps, out, CALL)                                                                    \
    do {                                                                                         \
        CALL;                                                                                    \
        (out) = 1e30;                                                                            \
        for (int r_ = 0; r_ < (reps); r_++) {                                                    \
            const double t_ = now();                                                             \
            CALL;                                                                                \
            const double d_ = now() - t_;                                                        \
            (out) = d_ < (out) ? d_ : (out);                                                     \
        }                                                                                        \
    } while (0)

int main(int argc, char **argv)
{
    int reps = 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 1) {
                fprintf(stderr, "conv_layout: --reps takes a positive count\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: bp_bench_conv_layout [--reps N]\n");
            return 2;
        }
    }
#ifndef HAVE_X86
    fprintf(stderr, "conv_layout: the blocked kernel is written for x86-64 with AVX-512F\n");
    return 2;
#else
    if (!__builtin_cpu_supports("avx512f")) {
        fprintf(stderr, "conv_layout: this CPU has no AVX-512F (the blocked kernel's level)\n");
        return 2;
    }
    openblas_set_num_threads(1);
    double peak = 0;
    for (int r = 0; r < 5; r++) {
        const double g = peak_gflops((int64_t)1 << 22);
        peak = g > peak ? g : peak;
    }
    printf("1x1 convolutions, batch 1, one thread; best of %d; GFLOP/s (this core's AVX-512 "
           "FMA rate with no loads: %.1f)\n", reps, peak);
    printf("%-22s %7s %8s %11s", "layer", "plane", "sgemm", "plain 2x12");
    for (int k = 0; k < NBLOCKINGS; k++)
        printf("  blocked %dx%-2d", BLOCKINGS[k].nb, BLOCKINGS[k].nj);
    printf(" %7s %13s %13s\n", "best/sgemm", "to+from/conv", "max err/bound");
    double geo = 0;
    int n = 0;
    for (size_t s = 0; s < sizeof SHAPES / sizeof SHAPES[0]; s++) {
        const int C = SHAPES[s].c, M = SHAPES[s].m;
        const int64_t P = (int64_t)SHAPES[s].h * SHAPES[s].h;
        float *x = falloc((size_t)(C * P)), *w = falloc((size_t)M * C);
        float *y = falloc((size_t)(M * P)), *xb = falloc((size_t)(C * P));
        float *wp = falloc((size_t)M * C), *yb = falloc((size_t)(M * P));
        float *yr = falloc((size_t)(M * P));
        srand(7);
        for (int64_t i = 0; i < C * P; i++)
            x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        for (int64_t i = 0; i < (int64_t)M * C; i++)
            w[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        double t_gemm, t_plain = 0, t_blk[NBLOCKINGS], t_to, t_from = 0, worst = 0;
        BEST(reps, t_gemm, cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, (int)P, C,
                                       1.0f, w, C, x, (int)P, 0.0f, y, (int)P));
        BEST(reps, t_to, to_blocked(x, xb, C, P));
        for (int k = -1; k < NBLOCKINGS; k++) {
            /* k = -1: the plain layout, blas_cpu's blocking */
            const blocking bk = BLOCKINGS[k < 0 ? 0 : k];
            pack_weights(w, wp, C, M, bk.nb * LANES);
            if (k < 0)
                BEST(reps, t_plain, conv_blocked(bk, true, x, wp, yb, C, M, P));
            else
                BEST(reps, t_blk[k], conv_blocked(bk, false, xb, wp, yb, C, M, P));
            if (k == 0)
                BEST(reps, t_from, from_blocked(yb, yr, M, P));
            else
                from_blocked(yb, yr, M, P);
            /* against sgemm's, within the bound of both roundings: |y - yr|
             * <= 2 C eps sum_c |w x| (each is within C eps of the exact sum) */
            for (int m = 0; m < M; m++)
                for (int64_t p = 0; p < P; p += 7) {
                    double bound = 0;
                    for (int c = 0; c < C; c++)
                        bound += fabs((double)w[(int64_t)m * C + c] * (double)x[c * P + p]);
                    bound *= 2.0 * C * FLT_EPSILON;
                    const double e = fabs((double)y[m * P + p] - (double)yr[m * P + p]);
                    worst = bound > 0 && e / bound > worst ? e / bound : worst;
                }
        }
        const double flop = 2.0 * M * C * (double)P;
        double best = t_blk[0];
        printf("%-22s %3dx%-3d %8.1f %11.1f", SHAPES[s].what, SHAPES[s].h, SHAPES[s].h,
               flop / t_gemm * 1e-9, flop / t_plain * 1e-9);
        for (int k = 0; k < NBLOCKINGS; k++) {
            printf(" %14.1f", flop / t_blk[k] * 1e-9);
            best = t_blk[k] < best ? t_blk[k] : best;
        }
        geo += log(t_gemm / best);
        n++;
        printf(" %9.2fx %13.2f %13.3f%s\n", t_gemm / best, (t_to + t_from) / best, worst,
               worst > 1 ? "  BEYOND THE BOUND" : "");
        free(x), free(w), free(y), free(xb), free(wp), free(yb), free(yr);
        if (worst > 1)
            return 1;
    }
    printf("geometric mean of the best blocked / sgemm over the %d layers: %.2fx\n", n,
           exp(geo / n));
    return 0;
#endif
}

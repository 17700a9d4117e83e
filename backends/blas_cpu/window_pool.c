/* f32 max_pool (without the indices output) and average_pool over dense
 * (n, c) planes, threaded over planes. The reference (binary nn_pool.c)
 * walks each output's window tap by tap, decoding every tap's position with
 * divisions and converting through double; here every tap of the window is
 * applied to a whole output line at once, over the range of outputs whose
 * tap lies inside x (conv's tap ranges), so the inner loop is a plain
 * strided max or sum. Taps reach each output in the reference's kernel
 * order, so the bits are the reference's:
 *   max: each line starts at -inf; the comparison is the reference's (a
 *     larger value, or a first NaN, replaces the best; ties keep the first),
 *     and the max of floats is exact;
 *   average: each line's sums are doubles starting at 0, the taps added in
 *     the reference's order, then divided by the reference's count (taps
 *     inside x, or inside x and its padding with count_include_pad; the
 *     count is a product of one count per axis) and rounded to float once.
 * Measured on ShuffleNet's 3x3 stride-2 pools (1, 24, 56, 56): the
 * reference took 1.65 ms, 25x onnxruntime's. */
#include <math.h>
#include <stdlib.h>

#include "blas_cpu_nn.h"
#include "vmath.h"

bool bpc_max_pool_takes(const bp_view *x, const bp_view *y, const bp_view *indices)
{
    return x->dtype == BP_F32 && !indices && bpk_view_dense(x) && bpk_view_dense(y);
}

/* The reference's step: a larger value, or a first NaN, replaces the best. */
static inline float max_step(float b, float v) { return (v > b || (v != v && b == b)) ? v : b; }

/* y[o] = max(y[o], x[o st + off]) for o in [lo, hi). */
static inline void tap_line(float *restrict y, const float *restrict x, int64_t lo,
                            int64_t hi, int64_t st, int64_t off)
{
    for (int64_t o = lo; o < hi; o++)
        y[o] = max_step(y[o], x[o * st + off]);
}

/* y[o] += x[o st + off] for o in [lo, hi), in double. */
static inline void sum_line(double *restrict y, const float *restrict x, int64_t lo,
                            int64_t hi, int64_t st, int64_t off)
{
    if (st == 1) { /* contiguous: vectorised */
        const float *restrict xs = x + off;
        for (int64_t o = lo; o < hi; o++)
            y[o] += (double)xs[o];
        return;
    }
    for (int64_t o = lo; o < hi; o++)
        y[o] += (double)x[o * st + off];
}

typedef struct pool_job {
    bpk_window g;
    const float *x;
    float *y;
    const double *count;   /* average: per output, what its sum is divided by */
} pool_job;

/* Every tap of plane xp applied to the output lines of yp (floats for max,
 * doubles for average), in the reference's kernel order. */
BPC_CLONES static void walk_taps(const bpk_window *g, const float *xp, void *yp, bool average)
{
    int64_t lo2[64], hi2[64]; /* the line's range per k2; a kernel wider than 64: computed */
    const bool table = g->k[2] <= 64;
    for (int64_t k2 = 0; table && k2 < g->k[2]; k2++)
        bpk_tap_range(g->in[2], g->out[2], g->st[2], k2 * g->dl[2] - g->pb[2], &lo2[k2],
                      &hi2[k2]);
    for (int64_t o0 = 0; o0 < g->out[0]; o0++)
        for (int64_t k0 = 0; k0 < g->k[0]; k0++) {
            const int64_t i0 = o0 * g->st[0] + k0 * g->dl[0] - g->pb[0];
            if (i0 < 0 || i0 >= g->in[0])
                continue;
            for (int64_t o1 = 0; o1 < g->out[1]; o1++) {
                const int64_t line = (o0 * g->out[1] + o1) * g->out[2];
                for (int64_t k1 = 0; k1 < g->k[1]; k1++) {
                    const int64_t i1 = o1 * g->st[1] + k1 * g->dl[1] - g->pb[1];
                    if (i1 < 0 || i1 >= g->in[1])
                        continue;
                    const float *xl = xp + (i0 * g->in[1] + i1) * g->in[2];
                    for (int64_t k2 = 0; k2 < g->k[2]; k2++) {
                        const int64_t off = k2 * g->dl[2] - g->pb[2];
                        int64_t a, b;
                        if (table)
                            a = lo2[k2], b = hi2[k2];
                        else
                            bpk_tap_range(g->in[2], g->out[2], g->st[2], off, &a, &b);
                        if (average)
                            sum_line((double *)yp + line, xl, a, b, g->st[2], off);
                        else
                            tap_line((float *)yp + line, xl, a, b, g->st[2], off);
                    }
                }
            }
        }
}

/* ---- 3x3 max windows of a 2-D plane (nearly every CNN's pools) ------------------ */

/* Strided windows only: at stride 1 (Inception's 3x3 pad 1 on 28 x 28)
 * walk_taps's passes are contiguous, and the outputs at the edges, one
 * tap at a time here, made this path no faster (0.36-0.42 ms against
 * 0.34-0.38 for (1, 192, 28, 28), three alternating runs). */
static bool max_is_3x3(const bpk_window *g)
{
    return bpc_window_is_3x3(g) && g->st[2] >= 2;
}

/* One output whose window may leave x: its taps inside, in the kernel's order. */
static inline float max9_edge(const bpk_window *g, const float *xp, int64_t o1, int64_t o2)
{
    float b = -INFINITY;
    int64_t at;
    for (int kh = 0; kh < 3; kh++)
        for (int kw = 0; kw < 3; kw++)
            if (bpc_tap_inside(g, o1, o2, kh, kw, &at))
                b = max_step(b, xp[at]);
    return b;
}

/* Outputs [lo, hi) of a line whose windows lie in rows x0, x1, x2, column
 * c = o2 SW - pb first, dw apart: the nine taps in the kernel's order, one
 * store. Constants (stride 2, dilation 1) let the loads vectorise. */
#define MAX9_LINE(SW, dw)                                                                 \
    for (int64_t o2 = lo; o2 < hi; o2++) {                                                \
        const int64_t c = o2 * (SW) - pb;                                                 \
        float b = -INFINITY;                                                              \
        b = max_step(b, x0[c]);                                                           \
        b = max_step(b, x0[c + dw]);                                                      \
        b = max_step(b, x0[c + 2 * dw]);                                                  \
        b = max_step(b, x1[c]);                                                           \
        b = max_step(b, x1[c + dw]);                                                      \
        b = max_step(b, x1[c + 2 * dw]);                                                  \
        b = max_step(b, x2[c]);                                                           \
        b = max_step(b, x2[c + dw]);                                                      \
        b = max_step(b, x2[c + 2 * dw]);                                                  \
        yr[o2] = b;                                                                       \
    }

/* The outputs [*lo, *hi) along axis (1: rows, 2: columns) of a 3x3 window
 * whose three taps all lie inside x's extent there (the strided 3x3
 * paths' interior). */
static void inside_outputs(const bpk_window *g, int axis, int64_t *lo, int64_t *hi)
{
    const int64_t n = g->in[axis], on = g->out[axis], st = g->st[axis], dl = g->dl[axis];
    const int64_t pb = g->pb[axis];
    int64_t lo2, hi2;
    bpk_tap_range(n, on, st, -pb, lo, hi);
    bpk_tap_range(n, on, st, 2 * dl - pb, &lo2, &hi2);
    *lo = *lo > lo2 ? *lo : lo2;
    *hi = *hi < hi2 ? *hi : hi2;
    if (*hi < *lo)
        *hi = *lo;
}

/* The step of a plane without NaN: the reference's step there (a larger
 * value replaces the best, ties keep the first), one vmaxps. */
static inline float max_step_finite(float b, float v) { return v > b ? v : b; }

/* Outputs per strip of max3_interior's line buffers. */
#define MAX3_STRIP 256

/* Each row's three taps folded once: h[o2 - lo] for outputs [lo, hi) of
 * row x (column c = o2 SW - pb first, dw apart), in the kernel's order. */
#define MAX3_FOLD(SW, dw)                                                                 \
    for (int64_t o2 = lo; o2 < hi; o2++) {                                                \
        const int64_t c = o2 * (SW) - pb;                                                 \
        float b = xr[c];                                                                  \
        b = max_step_finite(b, xr[c + dw]);                                               \
        b = max_step_finite(b, xr[c + 2 * dw]);                                           \
        h[o2 - lo] = b;                                                                   \
    }

/* Row x's fold over the strip's outputs [lo, hi) into h; whether the
 * values it read, x[lo sw - pb .. (hi - 1) sw - pb + 2 dw], hold a NaN
 * (a pass over them while they are in L1; the level's AVX2 fold tells
 * as it loads them). */
static inline bool max3_fold_row(const bpc_vmath *vm, float *restrict h,
                                 const float *restrict xr, int64_t lo, int64_t hi, int64_t sw,
                                 int64_t dw, int64_t pb)
{
    if (sw == 2 && dw == 1 && vm->max3_fold_s2_f32)
        return vm->max3_fold_s2_f32(h, xr + 2 * lo - pb, hi - lo);
    if (sw == 2 && dw == 1)
        MAX3_FOLD(2, 1)
    else
        MAX3_FOLD(sw, dw)
    int any = 0;
    for (int64_t c = lo * sw - pb; c <= (hi - 1) * sw - pb + 2 * dw; c++)
        any |= xr[c] != xr[c];
    return any != 0;
}
#undef MAX3_FOLD

/* The interior of a plane: output rows [a, b) whose three rows lie inside
 * x, columns [lo, hi) whose three taps do, computed as if the values held
 * no NaN; returns whether they do (then the caller computes it again by
 * the reference's step). Each row of x is folded across its three taps
 * once into a line buffer (a row serves two output rows at stride 2), and
 * each output is the fold of its three rows' folds. The maximum as the
 * reference picks it is the first of the largest values in the kernel's
 * (row-major) order, and folding each row first keeps that order, so the
 * bits are the reference's; without NaN the reference's step is one
 * vmaxps, against the six instructions that carry a first NaN.
 * (1, 64, 111, 111) 3x3 stride 2: see performance.md. */
BPC_CLONES static bool max3_interior(const bpc_vmath *vm, const bpk_window *g,
                                     const float *restrict xp, float *restrict yp, int64_t a,
                                     int64_t b, int64_t lo, int64_t hi)
{
    const int64_t W = g->in[2], OW = g->out[2], sw = g->st[2], dw = g->dl[2], pb = g->pb[2];
    const int64_t sh = g->st[1], dh = g->dl[1], ph = g->pb[1];
    float buf[3][MAX3_STRIP];
    bool nan = false;
    for (int64_t s0 = lo; s0 < hi; s0 += MAX3_STRIP) {
        const int64_t s1 = hi - s0 < MAX3_STRIP ? hi : s0 + MAX3_STRIP;
        int64_t held[3] = {-1, -1, -1}; /* the row of x each buffer holds */
        for (int64_t o1 = a; o1 < b; o1++) {
            const float *rows[3];
            unsigned used = 0; /* the slots this window's rows hold */
            for (int k = 0; k < 3; k++) {
                const int64_t r = o1 * sh - ph + k * dh;
                int slot = -1;
                for (int q = 0; q < 3; q++)
                    if (held[q] == r)
                        slot = q;
                if (slot < 0) { /* into the free slot that holds the oldest row */
                    for (int q = 0; q < 3; q++)
                        if (!(used >> q & 1u) && (slot < 0 || held[q] < held[slot]))
                            slot = q;
                    if (max3_fold_row(vm, buf[slot], xp + r * W, s0, s1, sw, dw, pb))
                        nan = true;
                    held[slot] = r;
                }
                used |= 1u << slot;
                rows[k] = buf[slot];
            }
            const float *restrict h0 = rows[0], *restrict h1 = rows[1], *restrict h2 = rows[2];
            float *restrict yr = yp + o1 * OW + s0;
            for (int64_t i = 0; i < s1 - s0; i++)
                yr[i] = max_step_finite(max_step_finite(h0[i], h1[i]), h2[i]);
        }
        if (nan)
            return true;
    }
    return false;
}

/* Each output's nine taps at once, in the kernel's order and by the
 * reference's step, so the bits are walk_taps's (and the reference's);
 * walk_taps makes nine passes over each output line, and lines of 13 to 55
 * outputs spent more in the passes than in the comparisons. The interior
 * of a plane runs through max3_interior first, and again by these steps
 * where the values it read hold a NaN. */
BPC_CLONES static void max_3x3(const bpc_vmath *vm, const bpk_window *g,
                               const float *restrict xp, float *restrict yp)
{
    const int64_t W = g->in[2], H = g->in[1], OH = g->out[1], OW = g->out[2];
    const int64_t sw = g->st[2], dw = g->dl[2], dh = g->dl[1], pb = g->pb[2];
    int64_t lo, hi, ra, rb; /* the columns whose three taps lie inside, and the rows */
    inside_outputs(g, 2, &lo, &hi);
    inside_outputs(g, 1, &ra, &rb);
    /* lines of fewer than 16 inside outputs (SqueezeNet's 27 x 27 to 13 x
     * 13) measured no faster in max3_interior: their vector loops are
     * mostly tails */
    const bool fast = hi - lo >= 16 && ra < rb && !max3_interior(vm, g, xp, yp, ra, rb, lo, hi);
    for (int64_t o1 = 0; o1 < OH; o1++) {
        float *yr = yp + o1 * OW;
        const int64_t r0 = o1 * g->st[1] - g->pb[1];
        if (o1 < ra || o1 >= rb) { /* a row of the window leaves x: tap by tap */
            for (int64_t o2 = 0; o2 < OW; o2++)
                yr[o2] = -INFINITY;
            for (int64_t kh = 0; kh < 3; kh++) {
                const int64_t r = r0 + kh * dh;
                if (r < 0 || r >= H)
                    continue;
                for (int64_t kw = 0; kw < 3; kw++) {
                    int64_t a, b;
                    bpk_tap_range(W, OW, sw, kw * dw - pb, &a, &b);
                    tap_line(yr, xp + r * W, a, b, sw, kw * dw - pb);
                }
            }
            continue;
        }
        for (int64_t o2 = 0; o2 < lo; o2++)
            yr[o2] = max9_edge(g, xp, o1, o2);
        if (!fast) {
            const float *x0 = xp + r0 * W, *x1 = x0 + dh * W, *x2 = x1 + dh * W;
            if (sw == 2 && dw == 1)
                MAX9_LINE(2, 1)
            else
                MAX9_LINE(sw, dw)
        }
        for (int64_t o2 = hi; o2 < OW; o2++)
            yr[o2] = max9_edge(g, xp, o1, o2);
    }
}
#undef MAX9_LINE

static bp_status max_planes(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    const pool_job *j = args;
    const int64_t nin = bpk_window_numel(j->g.in), nout = bpk_window_numel(j->g.out);
    if (max_is_3x3(&j->g)) {
        for (int64_t u = lo; u < hi; u++)
            max_3x3(d->vm, &j->g, j->x + u * nin, j->y + u * nout);
        return BP_OK;
    }
    for (int64_t u = lo; u < hi; u++) {
        float *yp = j->y + u * nout;
        for (int64_t i = 0; i < nout; i++)
            yp[i] = -INFINITY;
        walk_taps(&j->g, j->x + u * nin, yp, false);
    }
    return BP_OK;
}

/* ---- 3x3 average windows of a 2-D plane, strided (ShuffleNet's shortcuts) ------- */

/* One output's sum over the taps inside x, in the kernel's order. */
static inline double sum9_edge(const bpk_window *g, const float *xp, int64_t o1, int64_t o2)
{
    double s = 0;
    int64_t at;
    for (int kh = 0; kh < 3; kh++)
        for (int kw = 0; kw < 3; kw++)
            if (bpc_tap_inside(g, o1, o2, kh, kw, &at))
                s += (double)xp[at];
    return s;
}

/* Outputs [lo, hi) of a line whose windows lie in rows x0, x1, x2: the nine
 * taps added in the kernel's order from 0, in double, divided by the
 * output's count, rounded once: walk_taps's additions, so its bits. */
#define SUM9_LINE(SW, dw)                                                                 \
    for (int64_t o2 = lo; o2 < hi; o2++) {                                                \
        const int64_t c = o2 * (SW) - pb;                                                 \
        double s = 0;                                                                     \
        s += (double)x0[c];                                                               \
        s += (double)x0[c + dw];                                                          \
        s += (double)x0[c + 2 * dw];                                                      \
        s += (double)x1[c];                                                               \
        s += (double)x1[c + dw];                                                          \
        s += (double)x1[c + 2 * dw];                                                      \
        s += (double)x2[c];                                                               \
        s += (double)x2[c + dw];                                                          \
        s += (double)x2[c + 2 * dw];                                                      \
        yr[o2] = (float)(s / cr[o2]);                                                     \
    }

/* walk_taps made nine passes over each output line of doubles, and a pass
 * over the plane's sums to divide them: 5-6% of ShuffleNet's samples for
 * its four (1, C, 56 or 28 or 14, ...) 3x3 stride-2 pools. */
BPC_CLONES static void average_3x3(const bpk_window *g, const float *restrict xp,
                                   float *restrict yp, const double *count)
{
    const int64_t W = g->in[2], H = g->in[1], OH = g->out[1], OW = g->out[2];
    const int64_t sw = g->st[2], dw = g->dl[2], dh = g->dl[1], pb = g->pb[2];
    int64_t lo, hi; /* the columns whose three taps lie inside */
    inside_outputs(g, 2, &lo, &hi);
    for (int64_t o1 = 0; o1 < OH; o1++) {
        float *yr = yp + o1 * OW;
        const double *cr = count + o1 * OW;
        const int64_t r0 = o1 * g->st[1] - g->pb[1];
        if (r0 < 0 || r0 + 2 * dh >= H) { /* a row of the window leaves x */
            for (int64_t o2 = 0; o2 < OW; o2++)
                yr[o2] = (float)(sum9_edge(g, xp, o1, o2) / cr[o2]);
            continue;
        }
        const float *x0 = xp + r0 * W, *x1 = x0 + dh * W, *x2 = x1 + dh * W;
        for (int64_t o2 = 0; o2 < lo; o2++)
            yr[o2] = (float)(sum9_edge(g, xp, o1, o2) / cr[o2]);
        if (sw == 2 && dw == 1)
            SUM9_LINE(2, 1)
        else
            SUM9_LINE(sw, dw)
        for (int64_t o2 = hi; o2 < OW; o2++)
            yr[o2] = (float)(sum9_edge(g, xp, o1, o2) / cr[o2]);
    }
}
#undef SUM9_LINE

/* ---- a window that is the whole plane (the last pool of ResNet, Inception) ---------- */

/* No padding and one output: the window is x's plane. */
static bool whole_plane(const bpk_window *g)
{
    for (int a = 0; a < 3; a++)
        if (g->k[a] != g->in[a] || g->out[a] != 1 || g->pb[a] || g->pe[a] ||
            (g->k[a] > 1 && g->dl[a] != 1))
            return false;
    return true;
}

/* Planes' means, each plane's values added in the kernel's (row-major)
 * order from 0 in double and divided by count, as walk_taps does: its
 * bits. One plane's additions wait on each other, so eight planes' run
 * side by side; walk_taps made a call per tap for lines of one output
 * (ResNet-50's (1, 2048, 7, 7): 720 us, against 26 for onnxruntime). */
#define WHOLE_PLANES 8
BPC_CLONES static void average_whole(const float *restrict x, float *restrict y, int64_t nin,
                                     int64_t planes, double count)
{
    int64_t u = 0;
    for (; u + WHOLE_PLANES <= planes; u += WHOLE_PLANES) {
        double s[WHOLE_PLANES] = {0};
        for (int64_t i = 0; i < nin; i++)
            for (int p = 0; p < WHOLE_PLANES; p++)
                s[p] += (double)x[(u + p) * nin + i];
        for (int p = 0; p < WHOLE_PLANES; p++)
            y[u + p] = (float)(s[p] / count);
    }
    for (; u < planes; u++) {
        double s = 0;
        for (int64_t i = 0; i < nin; i++)
            s += (double)x[u * nin + i];
        y[u] = (float)(s / count);
    }
}
#undef WHOLE_PLANES

static bp_status average_planes(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    const pool_job *j = args;
    const int64_t nin = bpk_window_numel(j->g.in), nout = bpk_window_numel(j->g.out);
    if (max_is_3x3(&j->g)) { /* 3x3, strided: the same test as max pooling's */
        for (int64_t u = lo; u < hi; u++)
            average_3x3(&j->g, j->x + u * nin, j->y + u * nout, j->count);
        return BP_OK;
    }
    if (whole_plane(&j->g)) {
        average_whole(j->x + lo * nin, j->y + lo, nin, hi - lo, j->count[0]);
        return BP_OK;
    }
    double *sum = malloc((size_t)nout * sizeof *sum);
    if (!sum)
        return bpk_fail(d, BP_ERR_OUT_OF_MEMORY, "average_pool: out of memory for one plane");
    for (int64_t u = lo; u < hi; u++) {
        for (int64_t i = 0; i < nout; i++)
            sum[i] = 0;
        walk_taps(&j->g, j->x + u * nin, sum, true);
        float *yp = j->y + u * nout;
        for (int64_t i = 0; i < nout; i++)
            yp[i] = (float)(sum[i] / j->count[i]);
    }
    free(sum);
    return BP_OK;
}

bp_status bpc_max_pool(bpc_dev *dev, const bp_op_params *p, const bp_view *x, const bp_view *y)
{
    pool_job j = {.x = (const float *)bpk_base(x), .y = (float *)bpk_base(y)};
    bpk_window_of(p, x, y, NULL, &j.g);
    const int64_t n = x->shape[0] * x->shape[1];
    const int64_t nout = bpk_window_numel(j.g.out), nk = bpk_window_numel(j.g.k);
    if (n == 0 || nout == 0)
        return BP_OK;
    return bpc_ranges(dev, "max_pool", n, n * nout * (nk > 0 ? nk : 1), max_planes, &j);
}

bool bpc_average_pool_takes(const bp_view *x, const bp_view *y)
{
    return x->dtype == BP_F32 && bpk_view_dense(x) && bpk_view_dense(y);
}

/* How many of axis j's taps of output o count: inside x, or inside x and
 * its padding. */
static int64_t taps_counted(const bpk_window *g, int j, int64_t o, bool include_pad)
{
    const int64_t lo = include_pad ? -g->pb[j] : 0, hi = g->in[j] + (include_pad ? g->pe[j] : 0);
    int64_t c = 0;
    for (int64_t k = 0; k < g->k[j]; k++) {
        const int64_t i = o * g->st[j] + k * g->dl[j] - g->pb[j];
        c += i >= lo && i < hi;
    }
    return c;
}

bp_status bpc_average_pool(bpc_dev *dev, const bp_op_params *p, const bp_view *x,
                           const bp_view *y)
{
    pool_job j = {.x = (const float *)bpk_base(x), .y = (float *)bpk_base(y)};
    bpk_window_of(p, x, y, NULL, &j.g);
    const bpk_window *g = &j.g;
    const int64_t n = x->shape[0] * x->shape[1];
    const int64_t nout = bpk_window_numel(g->out), nk = bpk_window_numel(g->k);
    if (n == 0 || nout == 0)
        return BP_OK;
    const bool include_pad = p->i[15] != 0;
    double *count = malloc((size_t)nout * sizeof *count);
    if (!count)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "average_pool: out of memory for %lld counts",
                        (long long)nout);
    for (int64_t o0 = 0, i = 0; o0 < g->out[0]; o0++)
        for (int64_t o1 = 0; o1 < g->out[1]; o1++)
            for (int64_t o2 = 0; o2 < g->out[2]; o2++, i++)
                count[i] = (double)(taps_counted(g, 0, o0, include_pad) *
                                    taps_counted(g, 1, o1, include_pad) *
                                    taps_counted(g, 2, o2, include_pad));
    j.count = count;
    bp_status st = bpc_ranges(dev, "average_pool", n, n * nout * (nk > 0 ? nk : 1),
                              average_planes, &j);
    free(count);
    return st;
}

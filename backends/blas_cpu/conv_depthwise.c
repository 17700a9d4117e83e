/* Depthwise f32 convolutions (one input channel per group: ShuffleNet's and
 * MobileNet's 3x3 layers).
 *
 * Eager calls (bpc_conv_depthwise) take each output plane's taps over whole
 * lines, in double, in the reference's order: its bits (6x the reference
 * on ShuffleNet's 3x3 layers).
 *
 * A compiled graph whose 3x3 weights are a constant, all finite, runs them
 * prepared (bpc_conv_depthwise_prepare, plugin.h's prepare): in f32, one
 * fma per tap (vmath.h's depthwise_3x3_f32, on levels with fma), within
 * the op's tolerance of eager's result rather than its bits, as the direct
 * convolutions of conv_direct.c are. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas_cpu_nn.h"
#include "vmath.h"

/* Grouped convolutions with one input channel per group (groups > 1). One
 * input channel and one group is an ordinary convolution, and goes to
 * conv_narrow.c or the GEMM: its kernel may be long against its output
 * (silero-vad's first convolution: 258 filters of 256 taps over 3 outputs
 * took 1.5 ms here, a tap at a time, against some 30 us as one matrix
 * product). */
bool bpc_conv_depthwise_takes(const bp_op_params *p, const bp_view *x, const bp_view *w,
                              const bp_view *bias, const bp_view *y)
{
    return x->dtype == BP_F32 && x->rank >= 3 && p->i[15] > 1 && x->shape[1] == p->i[15] &&
           w->shape[1] == 1 &&
           bpk_view_dense(x) && bpk_view_dense(w) && bpk_view_dense(y) &&
           (!bias || bias->dtype == BP_F32);
}

typedef struct depthwise_job {
    bpk_window g;
    const float *x, *w;
    const bp_view *bias;
    float *y;
    int64_t M, mg;
} depthwise_job;

/* acc[o] += wv x[o st + off] over one output line, in double (inlined into
 * the plane's clones: a call per line of 28 cost as much as the work). */
static inline void tap_line(double *restrict acc, const float *restrict x, int64_t lo,
                            int64_t hi, int64_t st, int64_t off, double wv)
{
    if (st == 1) { /* contiguous: vectorised */
        const float *restrict xs = x + off;
        for (int64_t o = lo; o < hi; o++)
            acc[o] += wv * (double)xs[o];
        return;
    }
    for (int64_t o = lo; o < hi; o++)
        acc[o] += wv * (double)x[o * st + off];
}

/* One output plane: the taps in the reference's order (bpk_conv_units: k
 * row-major, each over the outputs it reaches), summed in double, the bias
 * added last, rounded once: the reference's bits. */
BPC_CLONES static void depthwise_plane(const depthwise_job *j, const float *xp,
                                       const float *wp, double *acc)
{
    const bpk_window *g = &j->g;
    const int64_t nk = bpk_window_numel(g->k);
    for (int64_t k = 0; k < nk; k++) {
        const int64_t kk[3] = {k / (g->k[1] * g->k[2]), k / g->k[2] % g->k[1], k % g->k[2]};
        int64_t lo[3], hi[3], off[3];
        for (int a = 0; a < 3; a++) {
            off[a] = kk[a] * g->dl[a] - g->pb[a];
            bpk_tap_range(g->in[a], g->out[a], g->st[a], off[a], &lo[a], &hi[a]);
        }
        const double wv = (double)wp[k];
        for (int64_t o0 = lo[0]; o0 < hi[0]; o0++)
            for (int64_t o1 = lo[1]; o1 < hi[1]; o1++) {
                const int64_t i0 = o0 * g->st[0] + off[0], i1 = o1 * g->st[1] + off[1];
                tap_line(acc + (o0 * g->out[1] + o1) * g->out[2],
                         xp + (i0 * g->in[1] + i1) * g->in[2], lo[2], hi[2], g->st[2], off[2],
                         wv);
            }
    }
}

/* A 3x3 kernel over a plane (2-D): each output's nine taps in one go, held
 * in a register, in the same order (row by row), the taps in the padding
 * skipped: the same additions to each output as depthwise_plane's, so the
 * same bits; a plane of 7 x 7 or 14 x 14 spent more in depthwise_plane's
 * nine passes over short lines than in arithmetic. */

/* One output whose taps may reach the padding. */
static inline double taps_3x3_edge(const bpk_window *g, const float *xp, const double *w,
                                   int64_t o1, int64_t o2)
{
    double acc = 0;
    int64_t at;
    for (int kh = 0; kh < 3; kh++)
        for (int kw = 0; kw < 3; kw++)
            if (bpc_tap_inside(g, o1, o2, kh, kw, &at))
                acc += w[kh * 3 + kw] * (double)xp[at];
    return acc;
}

/* One output line's outputs [lo, hi) whose taps all lie in rows x0, x1, x2
 * (x0[c] is the first tap of output c / sw). The stride-1 loop is its own
 * copy so that its loads are contiguous and it vectorises. */
static inline void line_3x3(const float *restrict x0, const float *restrict x1,
                            const float *restrict x2, const double *w, double b,
                            float *restrict yr, int64_t lo, int64_t hi, int64_t sw, int64_t dw)
{
    if (sw == 1)
        for (int64_t o2 = lo; o2 < hi; o2++) {
            double acc = 0;
            acc += w[0] * (double)x0[o2];
            acc += w[1] * (double)x0[o2 + dw];
            acc += w[2] * (double)x0[o2 + 2 * dw];
            acc += w[3] * (double)x1[o2];
            acc += w[4] * (double)x1[o2 + dw];
            acc += w[5] * (double)x1[o2 + 2 * dw];
            acc += w[6] * (double)x2[o2];
            acc += w[7] * (double)x2[o2 + dw];
            acc += w[8] * (double)x2[o2 + 2 * dw];
            yr[o2] = (float)(acc + b);
        }
    else
        for (int64_t o2 = lo; o2 < hi; o2++) {
            const int64_t c = o2 * sw;
            double acc = 0;
            acc += w[0] * (double)x0[c];
            acc += w[1] * (double)x0[c + dw];
            acc += w[2] * (double)x0[c + 2 * dw];
            acc += w[3] * (double)x1[c];
            acc += w[4] * (double)x1[c + dw];
            acc += w[5] * (double)x1[c + 2 * dw];
            acc += w[6] * (double)x2[c];
            acc += w[7] * (double)x2[c + dw];
            acc += w[8] * (double)x2[c + 2 * dw];
            yr[o2] = (float)(acc + b);
        }
}

/* The rows and columns of the padded plane a 3x3 window's outputs reach. */
static void padded_extent(const bpk_window *g, int64_t *ph, int64_t *pw)
{
    *ph = (g->out[1] - 1) * g->st[1] + 2 * g->dl[1] + 1;
    *pw = (g->out[2] - 1) * g->st[2] + 2 * g->dl[2] + 1;
}

/* A 2-D plane xp into pad (PH rows of PW, the extents above) with its
 * zeros around it. */
static void pad_plane(const bpk_window *g, const float *restrict xp, float *restrict pad,
                      int64_t PH, int64_t PW)
{
    const int64_t W = g->in[2];
    const int64_t c_from = g->pb[2] < PW ? g->pb[2] : PW;
    const int64_t c_to = W + g->pb[2] < PW ? W + g->pb[2] : PW;
    for (int64_t r = 0; r < PH; r++) {
        float *pr = pad + r * PW;
        const int64_t ir = r - g->pb[1];
        if (ir < 0 || ir >= g->in[1] || c_to <= c_from) {
            memset(pr, 0, (size_t)PW * sizeof *pr);
            continue;
        }
        memset(pr, 0, (size_t)c_from * sizeof *pr);
        memcpy(pr + c_from, xp + ir * W, (size_t)(c_to - c_from) * sizeof *pr);
        memset(pr + c_to, 0, (size_t)(PW - c_to) * sizeof *pr);
    }
}

/* A small plane (pad not NULL) with finite weights is first copied into
 * pad with its zeros around it, and every output takes the interior's
 * loop: a tap in the padding adds w 0 = +-0, which leaves the sum as it was
 * (it starts at +0 and never becomes -0), so the bits are those of skipping
 * it. On planes of 7 x 7 or 14 x 14, the outputs at the edges were half the
 * time; on big ones the copy costs more than the edges. An infinite or NaN
 * weight would make 0 w NaN: those planes take the edges one tap at a
 * time. */
BPC_CLONES static void depthwise_3x3(const bpk_window *g, const float *restrict xp,
                                     const float *restrict wp, double b, float *restrict yp,
                                     float *restrict pad)
{
    const int64_t W = g->in[2], OH = g->out[1], OW = g->out[2], sw = g->st[2], dw = g->dl[2];
    const int64_t dh = g->dl[1];
    double w[9];
    bool finite = true;
    for (int k = 0; k < 9; k++) {
        w[k] = (double)wp[k];
        finite = finite && isfinite(w[k]);
    }
    if (finite && pad) {
        int64_t PH, PW;
        padded_extent(g, &PH, &PW);
        pad_plane(g, xp, pad, PH, PW);
        for (int64_t o1 = 0; o1 < OH; o1++) {
            const float *x0 = pad + o1 * g->st[1] * PW, *x1 = x0 + dh * PW, *x2 = x1 + dh * PW;
            line_3x3(x0, x1, x2, w, b, yp + o1 * OW, 0, OW, sw, dw);
        }
        return;
    }
    /* the columns whose three taps all lie inside x */
    int64_t c_lo = bpk_div_ceil(g->pb[2], sw);
    int64_t c_hi = bpk_div_floor(W - 1 + g->pb[2] - 2 * dw, sw) + 1;
    c_lo = c_lo < 0 ? 0 : c_lo > OW ? OW : c_lo;
    c_hi = c_hi > OW ? OW : c_hi < c_lo ? c_lo : c_hi;
    for (int64_t o1 = 0; o1 < OH; o1++) {
        float *yr = yp + o1 * OW;
        const int64_t r0 = o1 * g->st[1] - g->pb[1];
        if (r0 < 0 || r0 + 2 * dh >= g->in[1]) {
            for (int64_t o2 = 0; o2 < OW; o2++)
                yr[o2] = (float)(taps_3x3_edge(g, xp, w, o1, o2) + b);
            continue;
        }
        for (int64_t o2 = 0; o2 < c_lo; o2++)
            yr[o2] = (float)(taps_3x3_edge(g, xp, w, o1, o2) + b);
        const float *x0 = xp + r0 * W - g->pb[2], *x1 = x0 + dh * W, *x2 = x1 + dh * W;
        line_3x3(x0, x1, x2, w, b, yr, c_lo, c_hi, sw, dw);
        for (int64_t o2 = c_hi; o2 < OW; o2++)
            yr[o2] = (float)(taps_3x3_edge(g, xp, w, o1, o2) + b);
    }
}

/* Planes of at most this many outputs, at stride 1, are padded first
 * (measured on ShuffleNet's: 1.3-1.8x faster at 28 x 28 and below; the copy
 * cost more than it saved at 56 x 56 and above, and at stride 2, whose
 * input is four times its output). */
#define DEPTHWISE_PADDED 1024

static bp_status depthwise_planes(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    const depthwise_job *j = args;
    const int64_t nin = bpk_window_numel(j->g.in), nout = bpk_window_numel(j->g.out);
    const int64_t nk = bpk_window_numel(j->g.k);
    const bool k3x3 = bpc_window_is_3x3(&j->g);
    int64_t ph = 0, pw = 0;
    if (k3x3)
        padded_extent(&j->g, &ph, &pw);
    const bool padded = k3x3 && nout <= DEPTHWISE_PADDED && j->g.st[1] == 1 && j->g.st[2] == 1;
    /* 3x3: the padded plane; else the output plane's sums */
    void *scratch = malloc(k3x3 ? (size_t)(ph * pw) * sizeof(float)
                                : (size_t)nout * sizeof(double));
    if (!scratch)
        return bpk_fail(d, BP_ERR_OUT_OF_MEMORY, "conv: out of memory for one plane");
    double *acc = scratch;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t n = u / j->M, m = u % j->M, grp = m / j->mg;
        const float *xp = j->x + (n * (j->M / j->mg) + grp) * nin;
        const double b = j->bias ? (double)*(const float *)(bpk_base(j->bias) +
                                                            m * j->bias->strides[0] * 4)
                                 : 0.0;
        float *yp = j->y + u * nout;
        if (k3x3) {
            depthwise_3x3(&j->g, xp, j->w + m * nk, b, yp, padded ? scratch : NULL);
            continue;
        }
        for (int64_t i = 0; i < nout; i++)
            acc[i] = 0;
        depthwise_plane(j, xp, j->w + m * nk, acc);
        for (int64_t i = 0; i < nout; i++)
            yp[i] = (float)(acc[i] + b);
    }
    free(acc);
    return BP_OK;
}

bp_status bpc_conv_depthwise(bpc_dev *dev, const bp_op_params *p, const bp_view *x,
                             const bp_view *w, const bp_view *bias, const bp_view *y)
{
    depthwise_job j = {.x = (const float *)bpk_base(x), .w = (const float *)bpk_base(w),
                       .bias = bias, .y = (float *)bpk_base(y), .M = y->shape[1]};
    bpk_window_of(p, x, y, NULL, &j.g);
    j.mg = j.M / p->i[15];
    const int64_t units = x->shape[0] * j.M, nout = bpk_window_numel(j.g.out);
    const int64_t nk = bpk_window_numel(j.g.k);
    if (units == 0 || nout == 0)
        return BP_OK;
    return bpc_ranges(dev, "conv", units, units * nout * (nk > 0 ? nk : 1), depthwise_planes, &j);
}

/* ---- prepared: f32, one fma per tap ----------------------------------------- */

typedef struct bpc_depthwise_prepared {
    bpc_prepared_kind kind; /* BPC_PREPARED_DEPTHWISE: first, for op.c */
    int64_t M;
    float *w; /* the weights, M x 9 */
} bpc_depthwise_prepared;

bool bpc_conv_depthwise_prepares(const bpc_dev *d, const bp_op_params *p, const bp_view *x,
                                 const bp_view *w, const bp_view *y)
{
    if (!d->vm->depthwise_3x3_f32 || x->rank != 4 ||
        !bpc_conv_depthwise_takes(p, x, w, NULL, y))
        return false;
    bpk_window g;
    bpk_window_of(p, x, y, NULL, &g);
    if (!bpc_window_is_3x3(&g))
        return false;
    /* the padding's taps are computed (0 w): an infinite or NaN weight
     * would make them NaN where eager skips them */
    const float *wv = (const float *)bpk_base(w);
    for (int64_t i = 0; i < w->shape[0] * 9; i++)
        if (!isfinite(wv[i]))
            return false;
    return true;
}

bp_status bpc_conv_depthwise_prepare(bpc_dev *dev, const bp_view *w, void **prepared)
{
    const int64_t M = w->shape[0];
    bpc_depthwise_prepared *q = calloc(1, sizeof *q);
    float *wc = malloc((size_t)(M * 9) * sizeof *wc);
    if (!q || !wc) {
        free(q);
        free(wc);
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY,
                        "conv: out of memory copying the weights of %lld depthwise filters",
                        (long long)M);
    }
    memcpy(wc, bpk_base(w), (size_t)(M * 9) * sizeof *wc);
    *q = (bpc_depthwise_prepared){.kind = BPC_PREPARED_DEPTHWISE, .M = M, .w = wc};
    *prepared = q;
    return BP_OK;
}

void bpc_conv_depthwise_free(void *prepared)
{
    bpc_depthwise_prepared *q = prepared;
    if (q)
        free(q->w);
    free(q);
}

typedef struct prepared_job {
    const bpc_depthwise_prepared *q;
    const bpc_vmath *vm;
    bpc_dw3x3 g;
    int64_t M, mg, nin;
    const float *x, *bias; /* bias: dense f32, or NULL with bias_view */
    const bp_view *bias_view;
    float *y;
} prepared_job;

static bp_status prepared_planes(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    const prepared_job *j = args;
    const bpc_dw3x3 *g = &j->g;
    const int64_t npad = g->ph * g->pw;
    const int64_t nline = g->sh == 1 && g->sw == 1 ? (g->oh - 1) * (g->ph ? g->pw : g->iw) + g->ow
                                                   : 0;
    float *scratch = NULL;
    if (npad + nline > 0 && !(scratch = malloc((size_t)(npad + nline) * sizeof *scratch)))
        return bpk_fail(d, BP_ERR_OUT_OF_MEMORY, "conv: out of memory for one plane");
    /* the padding's zeros, once: each plane writes only the interior */
    if (npad)
        memset(scratch, 0, (size_t)npad * sizeof *scratch);
    float *pad = npad ? scratch : NULL, *line = nline ? scratch + npad : NULL;
    const int64_t nout = g->oh * g->ow;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t n = u / j->M, m = u % j->M, grp = m / j->mg;
        float b = 0;
        if (j->bias)
            b = j->bias[m];
        else if (j->bias_view) {
            double v;
            bpk_block_load(j->bias_view, m, 1, &v);
            b = (float)v;
        }
        j->vm->depthwise_3x3_f32(g, j->x + (n * (j->M / j->mg) + grp) * j->nin,
                                 j->q->w + m * 9, b, j->y + u * nout, pad, line);
    }
    free(scratch);
    return BP_OK;
}

bp_status bpc_conv_depthwise_prepared(bpc_dev *dev, const void *prepared, const bp_op_params *p,
                                      const bp_view *x, const bp_view *bias, const bp_view *y)
{
    const bpc_depthwise_prepared *q = prepared;
    bpk_window w;
    bpk_window_of(p, x, y, NULL, &w);
    prepared_job j = {.q = q, .vm = dev->vm, .M = q->M, .mg = q->M / p->i[15],
                      .nin = w.in[1] * w.in[2], .x = (const float *)bpk_base(x),
                      .y = (float *)bpk_base(y)};
    if (bias && bias->dtype == BP_F32 && bpk_view_dense(bias))
        j.bias = (const float *)bpk_base(bias);
    else
        j.bias_view = bias;
    j.g = (bpc_dw3x3){.ih = w.in[1], .iw = w.in[2], .pt = w.pb[1], .pl = w.pb[2],
                      .oh = w.out[1], .ow = w.out[2], .sh = w.st[1], .sw = w.st[2],
                      .dh = w.dl[1], .dw = w.dl[2]};
    if (w.pb[1] || w.pb[2] || w.pe[1] || w.pe[2])
        padded_extent(&w, &j.g.ph, &j.g.pw);
    const int64_t units = x->shape[0] * q->M, nout = j.g.oh * j.g.ow;
    if (units == 0 || nout == 0)
        return BP_OK;
    return bpc_ranges(dev, "conv", units, units * nout * 9, prepared_planes, &j);
}

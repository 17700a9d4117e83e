/* Convolution and transposed convolution, direct, in double: the reference
 * for any groups, strides, dilations and pads (conv_transpose's may be
 * negative). One unit is one image's group: its input channels are loaded
 * once, then each output channel of the group is accumulated over the
 * group's channels and the kernel taps, every tap over the range of outputs
 * it reaches (so no per-element bounds test), and rounded once.
 *
 *   conv:            y[n, m, o] = bias[m] + sum_{c, k} w[m, c, k] x[n, c, o st + k dl - pb]
 *   conv_transpose:  y[n, m, j st + k dl - pb] += w[c, m, k] x[n, c, j] (+ bias[m]) */
#include <stdlib.h>
#include <string.h>

#include "kernels_nn.h"

/* acc[o] += wv * src[o st + off] for every o of the 3-D output that the tap
 * reaches; src is one 3-D input plane. */
typedef struct tap {
    const int64_t *in, *out, *st;
    int64_t off[3];
} tap;

static void accumulate(const tap *t, double wv, const double *src, double *acc)
{
    int64_t lo[3], hi[3];
    for (int j = 0; j < 3; j++)
        bpk_tap_range(t->in[j], t->out[j], t->st[j], t->off[j], &lo[j], &hi[j]);
    for (int64_t o0 = lo[0]; o0 < hi[0]; o0++) {
        const int64_t i0 = o0 * t->st[0] + t->off[0];
        for (int64_t o1 = lo[1]; o1 < hi[1]; o1++) {
            const int64_t i1 = o1 * t->st[1] + t->off[1];
            /* indices, not moved pointers: base may be negative */
            const int64_t base = (i0 * t->in[1] + i1) * t->in[2] + t->off[2];
            double *a = acc + (o0 * t->out[1] + o1) * t->out[2];
            const int64_t st2 = t->st[2];
            for (int64_t o2 = lo[2]; o2 < hi[2]; o2++)
                a[o2] += wv * src[base + o2 * st2];
        }
    }
}

/* The scratch of one call: a group's input planes, one output channel's
 * kernels, its accumulator. */
typedef struct scratch {
    double *xs, *ws, *acc;
} scratch;

static bp_status scratch_new(void *dev, const char *op, int64_t nx, int64_t nw, int64_t nacc,
                             scratch *s)
{
    s->xs = malloc((size_t)(nx > 0 ? nx : 1) * sizeof(double));
    s->ws = malloc((size_t)(nw > 0 ? nw : 1) * sizeof(double));
    s->acc = malloc((size_t)(nacc > 0 ? nacc : 1) * sizeof(double));
    if (s->xs && s->ws && s->acc)
        return BP_OK;
    free(s->xs);
    free(s->ws);
    free(s->acc);
    return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld doubles of scratch",
                    op, (long long)(nx + nw + nacc));
}

static void scratch_free(scratch *s)
{
    free(s->xs);
    free(s->ws);
    free(s->acc);
}

static double bias_of(const bp_view *bias, int64_t m)
{
    return bias ? bp_elem_load_f64(bias->dtype,
                                   bpk_base(bias) + m * bias->strides[0] *
                                                        (int64_t)bp_dtype_size(bias->dtype))
                : 0.0;
}

static void finish(const bp_view *y, int64_t n, int64_t m, double b, double *acc, int64_t nout)
{
    for (int64_t o = 0; o < nout; o++)
        acc[o] += b;
    bpk_plane_store(y, n, m, acc);
}

bp_status bpk_conv_units(void *dev, const bp_op_params *p, const bp_view *x, const bp_view *w,
                         const bp_view *bias, const bp_view *y, int64_t lo, int64_t hi)
{
    bpk_window g;
    bpk_window_of(p, x, y, NULL, &g);
    const int64_t G = p->i[15], cg = x->shape[1] / G, mg = y->shape[1] / G;
    const int64_t nin = bpk_window_numel(g.in), nout = bpk_window_numel(g.out);
    const int64_t nk = bpk_window_numel(g.k);
    if (hi <= lo || mg == 0 || nout == 0)
        return BP_OK;
    scratch s;
    BPK_TRY(scratch_new(dev, "conv", cg * nin, cg * nk, nout, &s));
    tap t = {g.in, g.out, g.st, {0, 0, 0}};
    for (int64_t u = lo; u < hi; u++) {
        const int64_t n = u / G, grp = u % G;
        for (int64_t c = 0; c < cg; c++)
            bpk_plane_load(x, n, grp * cg + c, s.xs + c * nin);
        for (int64_t mi = 0; mi < mg; mi++) {
            const int64_t m = grp * mg + mi;
            for (int64_t c = 0; c < cg; c++)
                bpk_plane_load(w, m, c, s.ws + c * nk);
            memset(s.acc, 0, (size_t)nout * sizeof(double));
            for (int64_t c = 0; c < cg; c++)
                for (int64_t k = 0; k < nk; k++) {
                    const int64_t k0 = k / (g.k[1] * g.k[2]), k1 = k / g.k[2] % g.k[1];
                    const int64_t k2 = k % g.k[2];
                    t.off[0] = k0 * g.dl[0] - g.pb[0];
                    t.off[1] = k1 * g.dl[1] - g.pb[1];
                    t.off[2] = k2 * g.dl[2] - g.pb[2];
                    accumulate(&t, s.ws[c * nk + k], s.xs + c * nin, s.acc);
                }
            finish(y, n, m, bias_of(bias, m), s.acc, nout);
        }
    }
    scratch_free(&s);
    return BP_OK;
}

/* conv_transpose scatters input j to output j st + k dl - pb: gathered per
 * output, the outputs a tap reaches are those o = j st + off with j inside
 * the input. Walked over the input (the tap's j range) it is accumulate()
 * with in and out exchanged, writing through the stride. */
static void scatter(const bpk_window *g, const int64_t *off, double wv, const double *src,
                    double *acc)
{
    int64_t lo[3], hi[3];
    for (int j = 0; j < 3; j++)
        bpk_tap_range(g->out[j], g->in[j], g->st[j], off[j], &lo[j], &hi[j]);
    for (int64_t j0 = lo[0]; j0 < hi[0]; j0++) {
        const int64_t o0 = j0 * g->st[0] + off[0];
        for (int64_t j1 = lo[1]; j1 < hi[1]; j1++) {
            const int64_t o1 = j1 * g->st[1] + off[1];
            const double *s = src + (j0 * g->in[1] + j1) * g->in[2];
            const int64_t base = (o0 * g->out[1] + o1) * g->out[2] + off[2];
            const int64_t st2 = g->st[2];
            for (int64_t j2 = lo[2]; j2 < hi[2]; j2++)
                acc[base + j2 * st2] += wv * s[j2];
        }
    }
}

bp_status bpk_conv_transpose_units(void *dev, const bp_op_params *p, const bp_view *x,
                                   const bp_view *w, const bp_view *bias, const bp_view *y,
                                   int64_t lo, int64_t hi)
{
    bpk_window g;
    bpk_window_of(p, x, y, NULL, &g);
    const int64_t G = p->i[15], cg = x->shape[1] / G, mg = w->shape[1];
    const int64_t nin = bpk_window_numel(g.in), nout = bpk_window_numel(g.out);
    const int64_t nk = bpk_window_numel(g.k);
    if (hi <= lo || mg == 0 || nout == 0)
        return BP_OK;
    scratch s;
    BPK_TRY(scratch_new(dev, "conv_transpose", cg * nin, cg * nk, nout, &s));
    for (int64_t u = lo; u < hi; u++) {
        const int64_t n = u / G, grp = u % G;
        for (int64_t c = 0; c < cg; c++)
            bpk_plane_load(x, n, grp * cg + c, s.xs + c * nin);
        for (int64_t mi = 0; mi < mg; mi++) {
            const int64_t m = grp * mg + mi;
            for (int64_t c = 0; c < cg; c++)
                bpk_plane_load(w, grp * cg + c, mi, s.ws + c * nk);
            memset(s.acc, 0, (size_t)nout * sizeof(double));
            for (int64_t c = 0; c < cg; c++)
                for (int64_t k = 0; k < nk; k++) {
                    const int64_t off[3] = {k / (g.k[1] * g.k[2]) * g.dl[0] - g.pb[0],
                                            k / g.k[2] % g.k[1] * g.dl[1] - g.pb[1],
                                            k % g.k[2] * g.dl[2] - g.pb[2]};
                    scatter(&g, off, s.ws[c * nk + k], s.xs + c * nin, s.acc);
                }
            finish(y, n, m, bias_of(bias, m), s.acc, nout);
        }
    }
    scratch_free(&s);
    return BP_OK;
}

/* f32/f64 convolution as im2col + gemm. For each image and group, the input
 * patches of a block of output positions are unfolded into a (C/g K) x
 * width matrix (row c K + k holds channel c seen through kernel tap k, 0
 * where the tap falls in the padding), built by the pool's threads, and
 *     y[n, group's channels, block] = W_group (M/g x C/g K) . col (+ bias)
 * is one cblas_sgemm / dgemm on OpenBLAS's threads, written in place into y.
 * A 1x1 kernel with stride 1 and no padding needs no unfolding: x is the
 * matrix. The block is the whole image unless the unfolded matrix would
 * pass BPC_CONV_COL elements. A kernel along one axis (stride 1 there,
 * the other axes untouched) over many channels unfolds nothing: one gemm
 * per tap over a shifted view of x, accumulated into y. Depthwise f32
 * convolutions (one input channel per group) take each output plane's taps
 * over whole lines, in double, in the reference's order (its bits; 6x the
 * reference on ShuffleNet's 3x3 layers); other groups too small for a gemm
 * to pay run the reference kernel on the pool. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "openblas.h"
#include "blas_cpu_nn.h"
#include "vmath.h"

/* The largest unfolded matrix, in elements (32 MiB of f32). */
#define BPC_CONV_COL ((int64_t)8 << 20)

bool bpc_conv_gemm_takes(const bp_op_params *p, const bp_view *x, const bp_view *w,
                         const bp_view *y)
{
    if ((x->dtype != BP_F32 && x->dtype != BP_F64) || !bpk_view_dense(x) || !bpk_view_dense(w) ||
        !bpk_view_dense(y))
        return false;
    int64_t ck = w->shape[1], nin = 1, nout = 1;
    for (int32_t k = 2; k < x->rank; k++) {
        ck *= w->shape[k];
        nin *= x->shape[k];
        nout *= y->shape[k];
    }
    const int64_t mg = y->shape[1] / p->i[15];
    return mg >= 4 && ck >= 4 && mg <= INT_MAX && ck <= INT_MAX && nin <= INT_MAX &&
           nout <= INT_MAX;
}

/* One im2col job: rows [lo, hi) of the block [o_lo, o_lo + width) of the
 * output positions, for image n's group grp. */
typedef struct unfold {
    const bpk_window *g;
    const char *xg;             /* x[n, grp * cg] */
    char *col;
    size_t es;
    int64_t nk, o_lo, width;
} unfold;

/* col[r, 0 .. width): channel r / nk through tap r % nk. */
static void unfold_row(const unfold *u, int64_t r)
{
    const bpk_window *g = u->g;
    const int64_t nin = bpk_window_numel(g->in), c = r / u->nk, k = r % u->nk;
    const int64_t kk[3] = {k / (g->k[1] * g->k[2]), k / g->k[2] % g->k[1], k % g->k[2]};
    const char *src = u->xg + (size_t)(c * nin) * u->es;
    char *dst = u->col + (size_t)(r * u->width) * u->es;
    int64_t off[3], lo2, hi2;
    for (int j = 0; j < 3; j++)
        off[j] = kk[j] * g->dl[j] - g->pb[j];
    { /* the o2 range whose tap lies inside x (the same for every line) */
        int64_t a = bpk_div_ceil(-off[2], g->st[2]), b = bpk_div_floor(g->in[2] - 1 - off[2], g->st[2]) + 1;
        lo2 = a > 0 ? a : 0;
        hi2 = b < g->out[2] ? b : g->out[2];
        if (hi2 < lo2)
            hi2 = lo2;
    }
    const int64_t o_hi = u->o_lo + u->width, line = g->out[2];
    for (int64_t o = u->o_lo; o < o_hi;) {
        const int64_t o0 = o / (g->out[1] * line), o1 = o / line % g->out[1], o2 = o % line;
        const int64_t end = o - o2 + line < o_hi ? o - o2 + line : o_hi; /* this line's part */
        const int64_t i0 = o0 * g->st[0] + off[0], i1 = o1 * g->st[1] + off[1];
        char *d = dst + (size_t)(o - u->o_lo) * u->es;
        const int64_t n = end - o;
        if (i0 < 0 || i0 >= g->in[0] || i1 < 0 || i1 >= g->in[1]) {
            memset(d, 0, (size_t)n * u->es);
        } else { /* zeros, the taps inside x, zeros */
            const char *s = src + (size_t)((i0 * g->in[1] + i1) * g->in[2]) * u->es;
            const int64_t a = lo2 > o2 ? (lo2 < o2 + n ? lo2 : o2 + n) : o2;
            const int64_t b = hi2 < o2 + n ? (hi2 > a ? hi2 : a) : o2 + n;
            memset(d, 0, (size_t)(a - o2) * u->es);
            const int64_t st2 = g->st[2];
            if (b > a && st2 == 1) {
                memcpy(d + (size_t)(a - o2) * u->es, s + (size_t)(a + off[2]) * u->es,
                       (size_t)(b - a) * u->es);
            } else if (u->es == sizeof(float)) { /* indices: s + off[2] may precede x */
                for (int64_t t = a; t < b; t++)
                    ((float *)d)[t - o2] = ((const float *)s)[t * st2 + off[2]];
            } else {
                for (int64_t t = a; t < b; t++)
                    ((double *)d)[t - o2] = ((const double *)s)[t * st2 + off[2]];
            }
            memset(d + (size_t)(b - o2) * u->es, 0, (size_t)(o2 + n - b) * u->es);
        }
        o = end;
    }
}

static bp_status unfold_range(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    for (int64_t r = lo; r < hi; r++)
        unfold_row(args, r);
    return BP_OK;
}

/* y block rows (mg of them, ldc apart) := bias, before a beta = 1 gemm. */
static void fill_bias(const bp_view *bias, int64_t m0, int64_t mg, char *yb, int64_t width,
                      int64_t ldc, size_t es)
{
    for (int64_t m = 0; m < mg; m++) {
        double b;
        bpk_block_load(bias, m0 + m, 1, &b);
        char *row = yb + (size_t)(m * ldc) * es;
        if (es == sizeof(float))
            for (int64_t i = 0; i < width; i++)
                ((float *)row)[i] = (float)b;
        else
            for (int64_t i = 0; i < width; i++)
                ((double *)row)[i] = b;
    }
}

static void gemm(bp_dtype dt, int64_t m, int64_t n, int64_t k, const char *a, const char *b,
                 int64_t ldb, bool beta1, char *c, int64_t ldc)
{
    if (dt == BP_F32)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f,
                    (const float *)a, (int)k, (const float *)b, (int)ldb, beta1 ? 1.0f : 0.0f,
                    (float *)c, (int)ldc);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0,
                    (const double *)a, (int)k, (const double *)b, (int)ldb, beta1 ? 1.0 : 0.0,
                    (double *)c, (int)ldc);
}

/* ---- a kernel along one axis: one gemm per tap, no unfolding ---------------- */

/* The axis a kernel runs along when it is the only one: every spatial axis
 * outside it of extent 1, every one inside it untouched (kernel 1, stride
 * 1, no padding), stride 1 along it. Then output position t (flattened)
 * reads input position t + (tap offset) x inner for every tap, so each tap
 * is one gemm over a shifted view of x, and nothing is unfolded. Only
 * where the unfolding costs more than the extra gemm calls: the group's
 * channels and the output long enough (magika's 5-tap convolution over 256
 * channels and 512 positions: im2col wrote 166 MB per batch of 64). -1:
 * none. */
static int line_axis(const bpk_window *g, int64_t cg, int64_t nout)
{
    int a = 0;
    while (a < 3 && g->k[a] == 1)
        a++;
    if (a == 3 || g->st[a] != 1 || cg < 64 || nout < 64)
        return -1;
    for (int j = 0; j < a; j++)
        if (g->in[j] != 1 || g->out[j] != 1)
            return -1;
    for (int j = a + 1; j < 3; j++)
        if (g->k[j] != 1 || g->st[j] != 1 || g->pb[j] != 0 || g->pe[j] != 0 ||
            g->in[j] != g->out[j])
            return -1;
    return a;
}

/* y = sum over taps k of W_k . x shifted by tap k (+ bias): W repacked tap
 * by tap into wk[k][m][c] (a gemm wants each tap's matrix dense), y filled
 * with the bias (or zeros) first, then one beta = 1 gemm per tap over the
 * output positions whose tap lies inside x (the padding adds nothing). */
static bp_status conv_taps(bpc_dev *dev, const bp_op_params *p, const bpk_window *g, int a,
                           const bp_view *x, const bp_view *w, const bp_view *bias,
                           const bp_view *y)
{
    const size_t es = bp_dtype_size(x->dtype);
    const int64_t G = p->i[15], cg = x->shape[1] / G, M = y->shape[1], mg = M / G;
    const int64_t nk = g->k[a], nin = bpk_window_numel(g->in), nout = bpk_window_numel(g->out);
    int64_t inner = 1;
    for (int j = a + 1; j < 3; j++)
        inner *= g->in[j];
    char *wk = malloc((size_t)(nk * M * cg) * es);
    if (!wk)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "conv: out of memory repacking the kernel");
    const char *w0 = bpk_base(w);
    for (int64_t k = 0; k < nk; k++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t c = 0; c < cg; c++)
                memcpy(wk + (size_t)((k * M + m) * cg + c) * es,
                       w0 + (size_t)((m * cg + c) * nk + k) * es, es);
    for (int64_t n = 0; n < x->shape[0]; n++)
        for (int64_t grp = 0; grp < G; grp++) {
            const char *xg = bpk_base(x) + (size_t)((n * x->shape[1] + grp * cg) * nin) * es;
            char *yg = bpk_base(y) + (size_t)((n * M + grp * mg) * nout) * es;
            if (bias)
                fill_bias(bias, grp * mg, mg, yg, nout, nout, es);
            else
                memset(yg, 0, (size_t)(mg * nout) * es);
            for (int64_t k = 0; k < nk; k++) {
                const int64_t off = k * g->dl[a] - g->pb[a];
                const int64_t lo = off < 0 ? -off : 0;
                const int64_t hi = g->in[a] - off < g->out[a] ? g->in[a] - off : g->out[a];
                if (hi <= lo)
                    continue;
                gemm(x->dtype, mg, (hi - lo) * inner, cg,
                     wk + (size_t)((k * M + grp * mg) * cg) * es,
                     xg + (size_t)((lo + off) * inner) * es, nin, true,
                     yg + (size_t)(lo * inner) * es, nout);
            }
        }
    free(wk);
    return BP_OK;
}

bp_status bpc_conv_gemm(bpc_dev *dev, const bp_op_params *p, const bp_view *x, const bp_view *w,
                        const bp_view *bias, const bp_view *y)
{
    bpk_window g;
    bpk_window_of(p, x, y, NULL, &g);
    const size_t es = bp_dtype_size(x->dtype);
    const int64_t G = p->i[15], cg = x->shape[1] / G, mg = y->shape[1] / G;
    const int64_t nk = bpk_window_numel(g.k), ck = cg * nk;
    const int64_t nin = bpk_window_numel(g.in), nout = bpk_window_numel(g.out);
    if (bpk_numel(y) == 0)
        return BP_OK;
    bpc_blas_threads(dev->threads);
    const int a = nk > 1 ? line_axis(&g, cg, nout) : -1;
    if (a >= 0)
        return conv_taps(dev, p, &g, a, x, w, bias, y);
    bool direct = nk == 1 && nin == nout;
    for (int j = 0; j < 3; j++)
        direct = direct && g.st[j] == 1 && g.pb[j] == 0 && g.pe[j] == 0;
    int64_t width = BPC_CONV_COL / ck;
    width = width < 1 ? 1 : width > nout ? nout : width;
    char *col = direct ? NULL : malloc((size_t)(ck * width) * es);
    if (!direct && !col)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "conv: out of memory for a %lld x %lld "
                        "im2col matrix", (long long)ck, (long long)width);
    unfold u = {.g = &g, .col = col, .es = es, .nk = nk, .width = width};
    for (int64_t n = 0; n < x->shape[0]; n++)
        for (int64_t grp = 0; grp < G; grp++) {
            const char *xg = bpk_base(x) + (size_t)((n * x->shape[1] + grp * cg) * nin) * es;
            const char *wg = bpk_base(w) + (size_t)(grp * mg * ck) * es;
            char *yg = bpk_base(y) + (size_t)((n * y->shape[1] + grp * mg) * nout) * es;
            for (int64_t o = 0; o < nout; o += width) {
                const int64_t wd = nout - o < width ? nout - o : width;
                const char *b = xg + (size_t)o * es;
                int64_t ldb = nin;
                if (!direct) {
                    u.xg = xg;
                    u.o_lo = o;
                    u.width = wd;
                    (void)bpc_ranges(dev, "conv", ck, ck * wd, unfold_range, &u); /* never fails */
                    b = col;
                    ldb = wd;
                }
                if (bias)
                    fill_bias(bias, grp * mg, mg, yg + (size_t)o * es, wd, nout, es);
                gemm(x->dtype, mg, wd, ck, wg, b, ldb, bias != NULL, yg + (size_t)o * es, nout);
            }
        }
    free(col);
    return BP_OK;
}

/* ---- depthwise f32 convolution (one input channel per group) --------------------- */

/* Grouped convolutions with one input channel per group (groups > 1). One
 * input channel and one group is an ordinary convolution, and goes to the
 * GEMM: its kernel may be long against its output (silero-vad's first
 * convolution: 258 filters of 256 taps over 3 outputs took 1.5 ms here,
 * a tap at a time, against some 30 us as one matrix product). */
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

static bp_status depthwise_planes(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    const depthwise_job *j = args;
    const int64_t nin = bpk_window_numel(j->g.in), nout = bpk_window_numel(j->g.out);
    const int64_t nk = bpk_window_numel(j->g.k);
    double *acc = malloc((size_t)nout * sizeof *acc);
    if (!acc)
        return bpk_fail(d, BP_ERR_OUT_OF_MEMORY, "conv: out of memory for one output plane");
    for (int64_t u = lo; u < hi; u++) {
        const int64_t n = u / j->M, m = u % j->M, grp = m / j->mg;
        for (int64_t i = 0; i < nout; i++)
            acc[i] = 0;
        depthwise_plane(j, j->x + (n * (j->M / j->mg) + grp) * nin, j->w + m * nk, acc);
        const double b = j->bias ? (double)*(const float *)(bpk_base(j->bias) +
                                                            m * j->bias->strides[0] * 4)
                                 : 0.0;
        float *yp = j->y + u * nout;
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

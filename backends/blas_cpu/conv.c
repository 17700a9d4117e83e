/* f32/f64 convolution as im2col + gemm, in tiles on the pool (one image,
 * group, block of output channels and block of output positions each).
 * A tile unfolds its input patches into a (C/g K) x width slab (row c K + k
 * holds channel c seen through kernel tap k, 0 where the tap falls in the
 * padding), and
 *     y[n, tile's channels, tile's positions] = W_tile . slab (+ bias)
 * is one single-threaded cblas_sgemm / dgemm, written in place into y.
 * A 1x1 kernel with stride 1 and no padding needs no unfolding: x is the
 * matrix. A kernel along one axis (stride 1 there,
 * the other axes untouched) over many channels unfolds nothing: one gemm
 * per tap over a shifted view of x, accumulated into y. (Depthwise f32
 * convolutions: conv_depthwise.c; other groups too small for a gemm to pay
 * run the reference kernel on the pool.) */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise_formulas.h"
#include "openblas.h"
#include "blas_cpu_nn.h"
#include "vmath.h"

bool bpc_conv_gemm_takes(const bp_op_params *p, const bp_view *x, const bp_view *w,
                         const bp_view *y)
{
    if ((x->dtype != BP_F32 && x->dtype != BP_F64) || !bpk_view_dense(x) || !bpk_view_dense(w) ||
        !bpk_view_dense(y))
        return false;
    bpc_conv_dims d;
    bpc_conv_dims_of(p, x, y, &d);
    return d.mg >= 4 && d.ck >= 4 && d.mg <= INT_MAX && d.ck <= INT_MAX && d.nin <= INT_MAX &&
           d.nout <= INT_MAX;
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

/* Whether every tap of g sees x as a whole shifted plane: one or two
 * spatial axes, stride 1 along both, an output line as long as an input
 * line (a 3x3 with pads 1, any dilation with matching pads). Then output
 * position o reads input position o + off1 * W + off2, a single run for
 * the whole block, and only the positions whose tap falls in the padding
 * are zeros. */
static bool plane_shift(const bpk_window *g)
{
    return g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->st[1] == 1 &&
           g->st[2] == 1 && g->out[2] == g->in[2];
}

/* One tap's row of the slab over output positions [o_lo, o_hi) when
 * plane_shift(g): rows of x the tap misses and the columns it finds in
 * the padding are zeros, the rest is one copy (the reference's values: a
 * line at a time took a memcpy call per output line, most of the unfold
 * at 54 x 54 and below). */
static void unfold_shifted(const bpk_window *g, int64_t off1, int64_t off2, const char *src,
                           char *dst, int64_t o_lo, int64_t o_hi, size_t es)
{
    const int64_t W = g->in[2], H = g->in[1], shift = off1 * W + off2;
    int64_t r0 = -off1 > 0 ? -off1 : 0, r1 = H - off1 < g->out[1] ? H - off1 : g->out[1];
    r1 = r1 > r0 ? r1 : r0;
    int64_t v_lo = r0 * W > o_lo ? r0 * W : o_lo, v_hi = r1 * W < o_hi ? r1 * W : o_hi;
    v_hi = v_hi > v_lo ? v_hi : v_lo;
    if (v_hi == v_lo)
        v_lo = v_hi = o_lo;
    /* the copy: within the valid rows and inside x (what it takes of a
     * neighbouring line at the edges is zeroed below) */
    int64_t a = -shift > v_lo ? -shift : v_lo, b = H * W - shift < v_hi ? H * W - shift : v_hi;
    a = a < v_hi ? a : v_hi;
    b = b > a ? b : a;
    memset(dst, 0, (size_t)(a - o_lo) * es);
    if (b > a) /* a tap that misses every row (a 3x3 over one row) copies nothing: its
                  a + shift may lie before x, and so may not be formed */
        memcpy(dst + (size_t)(a - o_lo) * es, src + (size_t)(a + shift) * es,
               (size_t)(b - a) * es);
    memset(dst + (size_t)(b - o_lo) * es, 0, (size_t)(o_hi - b) * es);
    if (off2 == 0 || v_hi == v_lo)
        return;
    /* the columns in the padding: [0, -off2) or [W - off2, W) of each line */
    const int64_t c_lo = off2 < 0 ? 0 : W - off2, c_hi = off2 < 0 ? -off2 : W;
    for (int64_t line = v_lo / W * W; line < v_hi; line += W) {
        int64_t z0 = line + (c_lo > 0 ? c_lo : 0), z1 = line + (c_hi < W ? c_hi : W);
        z0 = z0 > v_lo ? z0 : v_lo;
        z1 = z1 < v_hi ? z1 : v_hi;
        if (z1 > z0)
            memset(dst + (size_t)(z0 - o_lo) * es, 0, (size_t)(z1 - z0) * es);
    }
}

/* col[r, 0 .. width) for rows r in [lo, hi): channel r / nk through tap
 * r % nk. What is the same for every row (the block's first output
 * coordinates) is found once, and the taps are counted along: rows only a
 * few positions wide (silero-vad's convolutions: 4 positions) spent most of
 * their time on the divisions that found them. */
static void unfold_rows(const unfold *u, int64_t lo, int64_t hi)
{
    const bpk_window *g = u->g;
    const int64_t nin = bpk_window_numel(g->in), line = g->out[2], o_hi = u->o_lo + u->width;
    const int64_t s0 = u->o_lo / (g->out[1] * line), s1 = u->o_lo / line % g->out[1];
    const int64_t s2 = u->o_lo % line, st2 = g->st[2];
    int64_t c = lo / u->nk, k = lo % u->nk;
    int64_t kk[3] = {k / (g->k[1] * g->k[2]), k / g->k[2] % g->k[1], k % g->k[2]};
    const bool plane = plane_shift(g);
    for (int64_t r = lo; r < hi; r++) {
        const char *src = u->xg + (size_t)(c * nin) * u->es;
        char *dst = u->col + (size_t)(r * u->width) * u->es;
        int64_t off[3], lo2, hi2;
        for (int j = 0; j < 3; j++)
            off[j] = kk[j] * g->dl[j] - g->pb[j];
        if (plane) {
            unfold_shifted(g, off[1], off[2], src, dst, u->o_lo, o_hi, u->es);
            goto next_tap;
        }
        { /* the o2 range whose tap lies inside x (the same for every line) */
            int64_t a = st2 == 1 ? -off[2] : bpk_div_ceil(-off[2], st2);
            int64_t b = st2 == 1 ? g->in[2] - off[2] : bpk_div_floor(g->in[2] - 1 - off[2], st2) + 1;
            lo2 = a > 0 ? a : 0;
            hi2 = b < g->out[2] ? b : g->out[2];
            if (hi2 < lo2)
                hi2 = lo2;
        }
        /* the output line's coordinates, counted along (three divisions per
         * line were most of the unfold at 14 x 14 and 7 x 7: lines of 14 or 7) */
        int64_t o0 = s0, o1 = s1, o2 = s2;
        for (int64_t o = u->o_lo; o < o_hi;) {
            const int64_t end = o - o2 + line < o_hi ? o - o2 + line : o_hi; /* this line's part */
            const int64_t i0 = o0 * g->st[0] + off[0], i1 = o1 * g->st[1] + off[1];
            char *d = dst + (size_t)(o - u->o_lo) * u->es;
            const int64_t n = end - o;
            if (i0 < 0 || i0 >= g->in[0] || i1 < 0 || i1 >= g->in[1]) {
                memset(d, 0, (size_t)n * u->es);
            } else { /* zeros, the taps inside x, zeros */
                const char *sl = src + (size_t)((i0 * g->in[1] + i1) * g->in[2]) * u->es;
                const int64_t a = lo2 > o2 ? (lo2 < o2 + n ? lo2 : o2 + n) : o2;
                const int64_t b = hi2 < o2 + n ? (hi2 > a ? hi2 : a) : o2 + n;
                memset(d, 0, (size_t)(a - o2) * u->es);
                if (b > a && st2 == 1) {
                    memcpy(d + (size_t)(a - o2) * u->es, sl + (size_t)(a + off[2]) * u->es,
                           (size_t)(b - a) * u->es);
                } else if (u->es == sizeof(float)) { /* indices: sl + off[2] may precede x */
                    for (int64_t t = a; t < b; t++)
                        ((float *)d)[t - o2] = ((const float *)sl)[t * st2 + off[2]];
                } else {
                    for (int64_t t = a; t < b; t++)
                        ((double *)d)[t - o2] = ((const double *)sl)[t * st2 + off[2]];
                }
                memset(d + (size_t)(b - o2) * u->es, 0, (size_t)(o2 + n - b) * u->es);
            }
            o = end; /* the next line starts at its beginning */
            o2 = 0;
            if (++o1 == g->out[1]) {
                o1 = 0;
                o0++;
            }
        }
    next_tap:
        if (++kk[2] == g->k[2]) { /* the next tap, or the next channel's first */
            kk[2] = 0;
            if (++kk[1] == g->k[1]) {
                kk[1] = 0;
                if (++kk[0] == g->k[0]) {
                    kk[0] = 0;
                    c++;
                }
            }
        }
    }
}

/* col rows [lo, hi) on the pool */
static bp_status unfold_range(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    (void)d;
    unfold_rows(args, lo, hi);
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

/* Up to this many positions (a tile's last few, a tap's few in range:
 * convolutions with at most BPC_CONV_NARROW positions in all go to
 * conv_narrow.c), W times each position's column is a gemv: sgemm packs all
 * of W on every call, which cost more than the multiplications. Measured
 * on silero-vad's layers before conv_narrow.c took them: one gemv per
 * position took 0.86 of the time of one sgemm per tile. */
#define BPC_CONV_GEMV_MAX 4

static void gemm(bp_dtype dt, int64_t m, int64_t n, int64_t k, const char *a, const char *b,
                 int64_t ldb, bool beta1, char *c, int64_t ldc)
{
    if (n <= BPC_CONV_GEMV_MAX) { /* one gemv per output position */
        const size_t es = bp_dtype_size(dt);
        for (int64_t j = 0; j < n; j++)
            bpc_gemm_as_gemv(dt, CblasNoTrans, CblasNoTrans, m, 1, k, 1.0, a, k, b + j * es, ldb,
                             beta1 ? 1.0 : 0.0, c + j * es, ldc);
        return;
    }
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
int bpc_conv_line_axis(const bpk_window *g, int64_t cg, int64_t nout)
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

void bpc_conv_dims_of(const bp_op_params *p, const bp_view *x, const bp_view *y,
                      bpc_conv_dims *d)
{
    bpk_window_of(p, x, y, NULL, &d->g);
    d->G = p->i[15];
    d->cg = x->shape[1] / d->G;
    d->mg = y->shape[1] / d->G;
    d->nk = bpk_window_numel(d->g.k);
    d->ck = d->cg * d->nk;
    d->nin = bpk_window_numel(d->g.in);
    d->nout = bpk_window_numel(d->g.out);
}

/* ---- tiles on the pool --------------------------------------------------- */

/* One convolution's work as tiles: image n, group grp, a block of tm of the
 * group's output channels and a block of tn output positions. Each tile is
 * one thread's from start to end: it unfolds its own positions (a slab of
 * at most BPC_CONV_TILE elements) and runs its single-threaded gemm on
 * them. One team of threads does everything: with OpenBLAS's own threads
 * for the gemms and the pool's for the unfolding, the two took turns, and
 * each spun (sched_yield) while the other worked, some 20% of ShuffleNet's
 * samples on two cores. */
typedef struct conv_job {
    bpc_conv_dims dims;
    bp_dtype dt;
    size_t es;
    const bp_view *x, *w, *bias, *y;
    bool direct;                /* x is the matrix (1x1, stride 1, no padding) */
    int line;                   /* the kernel's one axis (taps), or -1 */
    const char *wk;             /* taps: the kernel repacked tap by tap */
    int64_t inner;              /* taps: elements per step along the line */
    int64_t tm, tn, ntm, ntn;   /* tile extents and tiles per (image, group) */
    const char *slab;           /* unfolded once for blocks of channels: unit's block ni */
    int64_t unit, ni;
    bool relu;                  /* each tile through relu once done (a plan's Relu after it) */
    const bp_view *res;         /* added to each tile once done, before the relu (a plan's
                                   residual add after it: dense, y's shape), or NULL */
} conv_job;

/* A done tile (m rows of n at ld apart) through bpf_relu, still in the
 * cache: what a separate Relu over y would write, without its two passes;
 * and before it a plan's residual add (res: the same tile of a value of
 * y's shape), each sum rounded as the add would round it. Cloned for AVX2
 * and AVX-512 (eight and sixteen lanes to the baseline's four). */
BPC_CLONES static void epilogue_tile(bp_dtype dt, char *y, const char *res, bool relu,
                                     int64_t m, int64_t n, int64_t ld)
{
    for (int64_t r = 0; r < m; r++) {
        if (dt == BP_F32) {
            float *restrict v = (float *)y + r * ld;
            const float *restrict a = res ? (const float *)res + r * ld : NULL;
            if (a)
                for (int64_t i = 0; i < n; i++)
                    v[i] = v[i] + a[i];
            if (relu)
                for (int64_t i = 0; i < n; i++)
                    v[i] = bpf_relu_f(v[i]);
        } else {
            double *restrict v = (double *)y + r * ld;
            const double *restrict a = res ? (const double *)res + r * ld : NULL;
            if (a)
                for (int64_t i = 0; i < n; i++)
                    v[i] = v[i] + a[i];
            if (relu)
                for (int64_t i = 0; i < n; i++)
                    v[i] = bpf_relu(v[i]);
        }
    }
}

/* The largest unfolded slab a tile writes, in elements (8 MiB of f32): a
 * bound on each thread's scratch, not a cache size. Slabs that fit the
 * cache (128 Ki elements) made every tile pack W again: measured on
 * ResNet-50 and SqueezeNet, 512 Ki elements ran some 5% faster than 128 Ki,
 * and 2 Mi another 3% (within noise). */
#define BPC_CONV_TILE ((int64_t)2048 << 10)

static int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

/* Tile extents. A tile's gemm packs its block of W and its block of the
 * slab itself: blocks of positions each pack W again, blocks of channels
 * each pack the slab again (and would unfold it again: bpc_conv_gemm
 * unfolds it once for them). So: positions in slabs of at most
 * BPC_CONV_TILE elements (but 128 positions at least), then, while there
 * are fewer tiles than two per thread, cut the longer side, W's rows or
 * the positions (not under 64 of them: OpenBLAS's kernels want width),
 * then the other. Measured on ResNet-50's layers: cutting 196 or 49
 * positions instead of 256 or 512 channels was 10-40% slower. Tiles
 * that an epilogue (a plan's Relu, or its residual add) could read back
 * from L2 (192 KiB of y: 192 positions of 256 channels) made ResNet-50's
 * 1x1 layer over 56 x 56 with its add and Relu 1.5x slower than one tile
 * of all of y on one thread: OpenBLAS's panels want width more than the
 * epilogue wants the cache. */
static void choose_tiles(conv_job *j, int team)
{
    const int64_t units = j->x->shape[0] * j->dims.G, want = team > 1 ? 2 * (int64_t)team : 1;
    int64_t ntn = 1, ntm = 1;
    if (!j->direct && j->line < 0) {
        int64_t cap = BPC_CONV_TILE / j->dims.ck;
        cap = cap < 128 ? 128 : cap;
        ntn = (j->dims.nout + cap - 1) / cap;
    }
    for (int pass = 0; pass < 2; pass++) {
        const int64_t have = units * ntn * ntm;
        if (have >= want)
            break;
        const int64_t times = (want + have - 1) / have;
        if ((j->dims.nout >= j->dims.mg) == (pass == 0)) { /* more blocks of positions */
            int64_t most = j->dims.nout / 64;
            ntn = ntn * times < most ? ntn * times : (most > ntn ? most : ntn);
        } else { /* blocks of channels, 16 at least */
            int64_t most = (j->dims.mg + 15) / 16;
            ntm = times < most ? times : most;
        }
    }
    j->tn = (j->dims.nout + ntn - 1) / ntn;
    if (j->tn < j->dims.nout)
        j->tn = round_up(j->tn, 16) < j->dims.nout ? round_up(j->tn, 16) : j->dims.nout;
    j->ntn = (j->dims.nout + j->tn - 1) / j->tn;
    j->tm = ntm > 1 ? round_up((j->dims.mg + ntm - 1) / ntm, 8) : j->dims.mg;
    j->tm = j->tm < j->dims.mg ? j->tm : j->dims.mg;
    j->ntm = (j->dims.mg + j->tm - 1) / j->tm;
}

/* y rows [m0, m0 + m) of one image's group, positions [o0, o0 + n):
 * sum over taps k of W_k . x shifted by tap k (+ bias), one beta = 1 gemm
 * per tap over the positions whose tap lies inside x (the padding adds
 * nothing). */
static void taps_tile(const conv_job *j, const char *xg, char *yg, const char *resg,
                      int64_t grp, int64_t m0,
                      int64_t m, int64_t o0, int64_t n)
{
    const bpk_window *g = &j->dims.g;
    const int a = j->line;
    const size_t es = j->es;
    const int64_t M = j->y->shape[1], grp_m = grp * j->dims.mg; /* the group's first channel */
    if (j->bias)
        fill_bias(j->bias, grp_m + m0, m, yg + (size_t)(m0 * j->dims.nout + o0) * es, n,
                  j->dims.nout, es);
    else
        for (int64_t r = 0; r < m; r++)
            memset(yg + (size_t)((m0 + r) * j->dims.nout + o0) * es, 0, (size_t)n * es);
    for (int64_t k = 0; k < j->dims.nk; k++) {
        const int64_t off = k * g->dl[a] - g->pb[a];
        int64_t lo = (off < 0 ? -off : 0) * j->inner;
        int64_t hi = (g->in[a] - off < g->out[a] ? g->in[a] - off : g->out[a]) * j->inner;
        lo = lo > o0 ? lo : o0;
        hi = hi < o0 + n ? hi : o0 + n;
        if (hi <= lo)
            continue;
        gemm(j->dt, m, hi - lo, j->dims.cg,
             j->wk + (size_t)((k * M + grp_m + m0) * j->dims.cg) * es,
             xg + (size_t)(lo + off * j->inner) * es, j->dims.nin, true,
             yg + (size_t)(m0 * j->dims.nout + lo) * es, j->dims.nout);
    }
    if (j->relu || j->res) {
        const size_t at = (size_t)(m0 * j->dims.nout + o0) * es;
        epilogue_tile(j->dt, yg + at, j->res ? resg + at : NULL, j->relu, m, n, j->dims.nout);
    }
}

static bp_status conv_tiles(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    const conv_job *j = args;
    const size_t es = j->es;
    const bool unfolds = !j->direct && j->line < 0 && !j->slab;
    /* slabs from the device's buffer cache: a fresh mapping per call (they
     * are megabytes) paid a page fault every 4 KiB */
    void *colv = NULL;
    if (unfolds) {
        bp_status st = bpc_alloc(d, (size_t)(j->dims.ck * j->tn) * es, &colv);
        if (st != BP_OK)
            return st;
    }
    char *col = colv;
    for (int64_t t = lo; t < hi; t++) {
        /* t: a tile of all of them, or of the shared slab's blocks of channels */
        const int64_t ni = j->slab ? j->ni : t % j->ntn;
        const int64_t mi = j->slab ? t : t / j->ntn % j->ntm;
        const int64_t unit = j->slab ? j->unit : t / (j->ntn * j->ntm);
        const int64_t n = unit / j->dims.G, grp = unit % j->dims.G;
        const int64_t o0 = ni * j->tn, wd = j->dims.nout - o0 < j->tn ? j->dims.nout - o0 : j->tn;
        const int64_t m0 = mi * j->tm, m = j->dims.mg - m0 < j->tm ? j->dims.mg - m0 : j->tm;
        const char *xg =
            bpk_base(j->x) + (size_t)((n * j->x->shape[1] + grp * j->dims.cg) * j->dims.nin) * es;
        const size_t yat = (size_t)((n * j->y->shape[1] + grp * j->dims.mg) * j->dims.nout) * es;
        char *yg = bpk_base(j->y) + yat;
        const char *resg = j->res ? bpk_base(j->res) + yat : NULL;
        if (j->line >= 0) {
            taps_tile(j, xg, yg, resg, grp, m0, m, o0, wd);
            continue;
        }
        const char *b = xg + (size_t)o0 * es;
        int64_t ldb = j->dims.nin;
        if (unfolds) {
            unfold u = {.g = &j->dims.g, .xg = xg, .col = col, .es = es, .nk = j->dims.nk,
                        .o_lo = o0, .width = wd};
            unfold_rows(&u, 0, j->dims.ck);
        }
        if (unfolds || j->slab) {
            b = j->slab ? j->slab : col;
            ldb = wd;
        }
        char *yt = yg + (size_t)(m0 * j->dims.nout + o0) * es;
        if (j->bias)
            fill_bias(j->bias, grp * j->dims.mg + m0, m, yt, wd, j->dims.nout, es);
        gemm(j->dt, m, wd, j->dims.ck,
             bpk_base(j->w) + (size_t)((grp * j->dims.mg + m0) * j->dims.ck) * es, b, ldb,
             j->bias != NULL, yt, j->dims.nout);
        if (j->relu || j->res)
            epilogue_tile(j->dt, yt, j->res ? resg + (yt - yg) : NULL, j->relu, m, wd,
                          j->dims.nout);
    }
    bpc_free(d, col);
    return BP_OK;
}

bp_status bpc_conv_gemm(bpc_dev *dev, const bp_op_params *p, const bp_view *x, const bp_view *w,
                        const bp_view *bias, const bp_view *res, const bp_view *y, bool relu)
{
    conv_job j = {.dt = x->dtype, .es = bp_dtype_size(x->dtype), .x = x, .w = w, .bias = bias,
                  .y = y, .line = -1, .relu = relu, .res = res};
    bpc_conv_dims_of(p, x, y, &j.dims);
    if (bpk_numel(y) == 0)
        return BP_OK;
    j.direct = j.dims.nk == 1 && j.dims.nin == j.dims.nout;
    for (int a = 0; a < 3; a++)
        j.direct = j.direct && j.dims.g.st[a] == 1 && j.dims.g.pb[a] == 0 && j.dims.g.pe[a] == 0;
    j.line = j.dims.nk > 1 ? bpc_conv_line_axis(&j.dims.g, j.dims.cg, j.dims.nout) : -1;
    char *wk = NULL;
    if (j.line >= 0) { /* W repacked tap by tap into wk[k][m][c]: each tap's matrix dense */
        const int64_t M = y->shape[1];
        j.inner = 1;
        for (int a = j.line + 1; a < 3; a++)
            j.inner *= j.dims.g.in[a];
        wk = malloc((size_t)(j.dims.nk * M * j.dims.cg) * j.es);
        if (!wk)
            return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "conv: out of memory repacking the kernel");
        const char *w0 = bpk_base(w);
        for (int64_t k = 0; k < j.dims.nk; k++)
            for (int64_t m = 0; m < M; m++)
                for (int64_t c = 0; c < j.dims.cg; c++)
                    memcpy(wk + (size_t)((k * M + m) * j.dims.cg + c) * j.es,
                           w0 + (size_t)((m * j.dims.cg + c) * j.dims.nk + k) * j.es, j.es);
        j.wk = wk;
    }
    /* work in the pool's units: a multiply-add costs about a quarter of
     * what an elementwise op's element does (a team of two from some 50 us) */
    const int64_t work = x->shape[0] * j.dims.G * j.dims.mg * j.dims.nout * j.dims.ck / 4;
    choose_tiles(&j, bpc_team(dev, work));
    bpc_blas_one_thread(); /* the pool's threads run one gemm each */
    const int64_t units = x->shape[0] * j.dims.G;
    if (j.direct || j.line >= 0 || j.ntm == 1) {
        bp_status st = bpc_ranges(dev, "conv", units * j.ntm * j.ntn, work, conv_tiles, &j);
        free(wk);
        return st;
    }
    /* Blocks of channels over one block of positions would each unfold the
     * same slab (at 7 x 7, unfolding costs as much as its gemm: short
     * lines): it is unfolded once, on the pool, then shared. */
    void *slabv = NULL;
    bp_status st = bpc_alloc(dev, (size_t)(j.dims.ck * j.tn) * j.es, &slabv);
    if (st != BP_OK) {
        free(wk);
        return st;
    }
    char *slab = slabv;
    for (j.unit = 0; j.unit < units && st == BP_OK; j.unit++)
        for (j.ni = 0; j.ni < j.ntn && st == BP_OK; j.ni++) {
            const int64_t n = j.unit / j.dims.G, grp = j.unit % j.dims.G, o0 = j.ni * j.tn;
            const char *xg =
                bpk_base(x) + (size_t)((n * x->shape[1] + grp * j.dims.cg) * j.dims.nin) * j.es;
            unfold u = {.g = &j.dims.g, .xg = xg, .col = slab, .es = j.es, .nk = j.dims.nk,
                        .o_lo = o0, .width = j.dims.nout - o0 < j.tn ? j.dims.nout - o0 : j.tn};
            /* never fails */
            (void)bpc_ranges(dev, "conv", j.dims.ck, j.dims.ck * u.width, unfold_range, &u);
            j.slab = slab;
            st = bpc_ranges(dev, "conv", j.ntm, work / (units * j.ntn), conv_tiles, &j);
            j.slab = NULL;
        }
    bpc_free(dev, slab);
    return st;
}

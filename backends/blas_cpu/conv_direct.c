/* f32 convolutions computed directly, with the weights a compiled graph
 * holds as constants reordered once (plugin.h's prepare, ABI 1.13): no
 * unfolded slab, and no packing of the weights per call.
 *
 * prepare reorders w (M, C, K...) into blocks of BPC_CONV_FILTERS filters,
 * each block within one group (G groups of mg filters over C channels
 * each), wp[group][block][c][tap][filter] (filters past the group's zero),
 * and works out each tap's offset in the padded input. A run copies x into
 * a padded buffer (when the window has padding), then each task, one
 * image's and group's run of filter blocks (BPC_CONV_BLOCKS of them) over
 * a chunk of output positions, runs the level's conv_block_f32 on runs of BPC_CONV_RUN
 * positions, channels in blocks of CHANNEL_BLOCK (their weights stay in the
 * cache while the chunk's runs go by), the partial sums in tiles on the
 * stack; the tiles go to y, bias added (and a plan's Relu after the
 * convolution, prepared with it: plugin.h's prepare_epilogue), at the end.
 *
 * Measured against the GEMM path (conv.c) on ResNet-50's and SqueezeNet's
 * layers (docs/performance.md): 1.2-1.4x on the first layers' wide kernels
 * and the 3x3 layers over 14 x 14 and 7 x 7, level on the wide 3x3 layers,
 * and 0.6-0.8x on 1x1 kernels with AVX2 (a Zen 3), where OpenBLAS reads x
 * in place and nothing is unfolded: those stay on the GEMM there. With
 * AVX-512 (a Zen 5: two blocks of filters at 12 positions, 24 accumulators)
 * the 1x1 kernels and those along one axis run direct too where OpenBLAS's
 * kernels are AVX2 or older (vmath.h's conv_direct_1x1; plugin.c
 * decides). */
#include <stdlib.h>
#include <string.h>

#include "blas_cpu_nn.h"
#include "vmath.h"

/* Channels per pass over a chunk's runs: 128 x 9 taps x 32 filters of
 * weights is 144 KiB, in L2 beside the chunk's inputs; the level may take
 * fewer over wide planes (WIDE_PLANE positions or more: vmath.h's
 * conv_wide_channel_block). */
#define CHANNEL_BLOCK 128
#define WIDE_PLANE 512
/* Output positions per task at most (a multiple of BPC_CONV_RUN): the
 * tiles, 2 x 240 x 16 floats, are 30 KiB of stack. */
#define CHUNK 240
/* The largest padded input a call makes, in elements (256 MiB of f32). */
#define PADDED_MAX ((int64_t)64 << 20)

typedef struct bpc_conv_prepared {
    bpc_prepared_kind kind;     /* BPC_PREPARED_DIRECT: first, for op.c */
    int64_t M, C, taps;         /* C: input channels per group */
    int64_t G, mg, blocks;      /* groups, filters per group, blocks per group */
    int64_t padded[3];          /* the padded input's spatial extents */
    int64_t *toff;              /* per tap: its offset in the padded input */
    float *wp;                  /* [G][blocks][C][taps][16] */
    bool relu;                  /* stores relu(y): the plan's Relu after it */
    bool residual;              /* adds a residual (an input after the bias) to y
                                   before the Relu: the plan's add after it */
} bpc_conv_prepared;

static void padded_extents(const bpk_window *g, int64_t *pe)
{
    for (int a = 0; a < 3; a++)
        pe[a] = g->in[a] + g->pb[a] + g->pe[a];
}

bool bpc_conv_direct_takes(const bpc_dev *d, const bp_op_params *p, const bp_view *x,
                           const bp_view *w, const bp_view *y)
{
    if (!d->vm->conv_block_f32 || x->dtype != BP_F32 || x->rank < 3 ||
        !bpk_view_dense(x) || !bpk_view_dense(w) || !bpk_view_dense(y))
        return false;
    bpc_conv_dims dm;
    bpc_conv_dims_of(p, x, y, &dm);
    int64_t pe[3];
    padded_extents(&dm.g, pe);
    /* the convolutions whose GEMM reads x in place (1x1 kernels, and the
     * kernels along one axis that conv.c runs as a gemm per tap) stay on
     * the GEMM unless the device says otherwise (above; magika's 5 taps
     * over 256 channels: 0.93x direct against AVX-512 kernels on
     * 2026-12-02's machine, 1.09x against them on a Zen 4, 1.7x against
     * Haswell ones); the few-position ones go to conv_narrow.c
     * first; groups of fewer than half a block of filters would leave most
     * lanes idle, and groups of fewer than 16 products per output ran
     * slower than their GEMMs (ShuffleNet's 1x1 over 4 groups of 6
     * channels: 0.68x direct, where its groups of 28 to 136 channels ran
     * 1.08-1.55x); one group of few products stays direct (1x1 over 3
     * channels took 6x as long off it, on the reference kernel); grouped
     * ones that read x in place only where the device says so too
     * (ShuffleNet's grouped 1x1s ran 0.80-0.87x direct on a Zen 4 against
     * AVX-512 kernels, where its ungrouped ones gained) */
    const bool in_place = dm.nk == 1 || bpc_conv_line_axis(&dm.g, dm.cg, dm.nout) >= 0;
    return (!in_place || d->conv_direct_in_place) && dm.nout > BPC_CONV_NARROW &&
           (dm.G == 1 || (dm.mg >= BPC_CONV_FILTERS / 2 && dm.ck >= 16)) &&
           (dm.G == 1 || !in_place || d->conv_direct_in_place_grouped) &&
           x->shape[0] * x->shape[1] * pe[0] * pe[1] * pe[2] <= PADDED_MAX;
}

bp_status bpc_conv_direct_prepare(bpc_dev *dev, const bp_op_params *p, const bp_view *x,
                                  const bp_view *w, const bp_view *y, bool residual, bool relu,
                                  void **prepared)
{
    bpc_conv_dims dm;
    bpc_conv_dims_of(p, x, y, &dm);
    const int64_t M = y->shape[1], C = dm.cg, T = dm.nk, G = dm.G;
    const int64_t blocks = (dm.mg + BPC_CONV_FILTERS - 1) / BPC_CONV_FILTERS; /* a group's */
    bpc_conv_prepared *q = calloc(1, sizeof *q);
    if (q) {
        q->toff = malloc((size_t)T * sizeof *q->toff);
        q->wp = calloc((size_t)(G * blocks * C * T * BPC_CONV_FILTERS), sizeof *q->wp);
    }
    if (!q || !q->toff || !q->wp) {
        if (q)
            free(q->toff), free(q->wp);
        free(q);
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY,
                        "conv: out of memory reordering the weights of (%lld, %lld) filters",
                        (long long)M, (long long)(C * T));
    }
    q->kind = BPC_PREPARED_DIRECT, q->M = M, q->C = C, q->taps = T;
    q->G = G, q->mg = dm.mg, q->blocks = blocks, q->relu = relu, q->residual = residual;
    padded_extents(&dm.g, q->padded);
    const bpk_window *g = &dm.g;
    for (int64_t k = 0; k < T; k++) { /* tap k = (k0, k1, k2) in row-major order */
        const int64_t k2 = k % g->k[2], k1 = k / g->k[2] % g->k[1], k0 = k / (g->k[2] * g->k[1]);
        q->toff[k] = ((k0 * g->dl[0]) * q->padded[1] + k1 * g->dl[1]) * q->padded[2] +
                     k2 * g->dl[2];
    }
    const float *w0 = (const float *)bpk_base(w);
    for (int64_t m = 0; m < M; m++) {
        /* filter m is filter mi of group m / mg: its block and lane */
        const int64_t mi = m % dm.mg, b = m / dm.mg * blocks + mi / BPC_CONV_FILTERS;
        for (int64_t c = 0; c < C; c++)
            for (int64_t k = 0; k < T; k++)
                q->wp[((b * C + c) * T + k) * BPC_CONV_FILTERS + mi % BPC_CONV_FILTERS] =
                    w0[(m * C + c) * T + k];
    }
    *prepared = q;
    return BP_OK;
}

void bpc_conv_direct_free(void *prepared)
{
    bpc_conv_prepared *q = prepared;
    if (!q)
        return;
    free(q->toff);
    free(q->wp);
    free(q);
}

typedef struct direct_job {
    const bpc_conv_prepared *q;
    const bpk_window *g;
    const bpc_vmath *vm;
    const float *xp;            /* the (padded) input, image after image */
    const bp_view *bias;
    const float *res;           /* the residual added to y (dense, y's shape), or NULL */
    float *y;
    int64_t plane, nout, pairs, chunk, chunks; /* pairs: tasks of blocks per group */
    int64_t cblock;             /* channels per pass over a chunk's runs */
    /* padding: x's planes into xp */
    const float *x;
    float *xpad;
} direct_job;

/* Planes [lo, hi) of x (image n's channel c is plane n C + c) into the
 * padded buffer, zeros around. */
static bp_status pad_planes(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    (void)d;
    const direct_job *j = args;
    const bpk_window *g = j->g;
    const int64_t *P = j->q->padded, nin = g->in[0] * g->in[1] * g->in[2];
    for (int64_t pl = lo; pl < hi; pl++) {
        float *dst = j->xpad + pl * j->plane;
        const float *src = j->x + pl * nin;
        memset(dst, 0, (size_t)j->plane * sizeof *dst);
        for (int64_t a = 0; a < g->in[0]; a++)
            for (int64_t b = 0; b < g->in[1]; b++)
                memcpy(dst + ((a + g->pb[0]) * P[1] + b + g->pb[1]) * P[2] + g->pb[2],
                       src + (a * g->in[1] + b) * g->in[2], (size_t)g->in[2] * sizeof *dst);
    }
    return BP_OK;
}

/* Tasks [lo, hi): task t is image n, group grp, its pair-th run of
 * BPC_CONV_BLOCKS blocks of the group's filters and chunk of positions
 * (t = ((n G + grp) pairs + pair) chunks + chunk). */
static bp_status conv_tasks(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    (void)d;
    const direct_job *j = args;
    const bpc_conv_prepared *q = j->q;
    const bpk_window *g = j->g;
    const int64_t *P = q->padded;
    float tile[BPC_CONV_BLOCKS][CHUNK * BPC_CONV_FILTERS];
    int64_t corner[CHUNK]; /* per position of the chunk: its window's corner in a padded plane */
    for (int64_t t = lo; t < hi; t++) {
        const int64_t ng = t / (j->pairs * j->chunks), n = ng / q->G, grp = ng % q->G;
        const int64_t blk = t / j->chunks % j->pairs * BPC_CONV_BLOCKS; /* in the group */
        const int nb = (int)(q->blocks - blk < BPC_CONV_BLOCKS ? q->blocks - blk
                                                               : BPC_CONV_BLOCKS);
        const int64_t wstride = q->C * q->taps * BPC_CONV_FILTERS;
        const int64_t p0 = t % j->chunks * j->chunk;
        const int64_t p1 = p0 + j->chunk < j->nout ? p0 + j->chunk : j->nout;
        const float *xn = j->xp + ng * q->C * j->plane; /* the group's channels */
        const float *wb = q->wp + (grp * q->blocks + blk) * wstride;
        /* output (o0, o1, o2), counted along (a division per position cost
         * more than the products of a few-channel layer) */
        int64_t o2 = p0 % g->out[2], o1 = p0 / g->out[2] % g->out[1],
                o0 = p0 / (g->out[2] * g->out[1]);
        for (int64_t o = p0; o < p1; o++) {
            corner[o - p0] = ((o0 * g->st[0]) * P[1] + o1 * g->st[1]) * P[2] + o2 * g->st[2];
            if (++o2 == g->out[2]) {
                o2 = 0;
                if (++o1 == g->out[1])
                    o1 = 0, o0++;
            }
        }
        for (int64_t c0 = 0; c0 < q->C; c0 += j->cblock) {
            const int64_t c1 = c0 + j->cblock < q->C ? c0 + j->cblock : q->C;
            for (int64_t r = p0; r < p1; r += BPC_CONV_RUN) {
                const int nj = (int)(p1 - r < BPC_CONV_RUN ? p1 - r : BPC_CONV_RUN);
                const float *xb[BPC_CONV_RUN];
                for (int i = 0; i < nj; i++)
                    xb[i] = xn + corner[r - p0 + i];
                j->vm->conv_block_f32(xb, nj, wb, wstride, nb, c0, c1, q->taps, q->toff,
                                      j->plane, tile[0] + (r - p0) * BPC_CONV_FILTERS,
                                      CHUNK * BPC_CONV_FILTERS, c0 == 0);
            }
        }
        for (int b = 0; b < nb; b++) {
            const int64_t f0 = (blk + b) * BPC_CONV_FILTERS, m0 = grp * q->mg + f0;
            const int nf = (int)(q->mg - f0 < BPC_CONV_FILTERS ? q->mg - f0 : BPC_CONV_FILTERS);
            float bias[BPC_CONV_FILTERS] = {0};
            if (j->bias) { /* the block's biases in one walk of the view */
                double v[BPC_CONV_FILTERS];
                bpk_block_load(j->bias, m0, nf, v);
                for (int f = 0; f < nf; f++)
                    bias[f] = (float)v[f];
            }
            const int64_t at = (n * q->M + m0) * j->nout + p0;
            j->vm->conv_store_f32(tile[b], p1 - p0, nf, bias, j->res ? j->res + at : NULL,
                                  q->relu, j->y + at, j->nout);
        }
    }
    return BP_OK;
}

bp_status bpc_conv_direct(bpc_dev *dev, const void *prepared, const bp_op_params *p,
                          const bp_view *x, const bp_view *bias, const bp_view *res,
                          const bp_view *y)
{
    const bpc_conv_prepared *q = prepared;
    bpc_conv_dims dm;
    bpc_conv_dims_of(p, x, y, &dm);
    const bpk_window *g = &dm.g;
    const int64_t N = x->shape[0];
    direct_job j = {.q = q, .g = g, .vm = dev->vm, .bias = bias, .y = (float *)bpk_base(y),
                    .res = q->residual && res ? (const float *)bpk_base(res) : NULL,
                    .plane = q->padded[0] * q->padded[1] * q->padded[2], .nout = dm.nout,
                    .x = (const float *)bpk_base(x)};
    bool pads = false;
    for (int a = 0; a < 3; a++)
        pads = pads || g->pb[a] || g->pe[a];
    void *padv = NULL;
    j.xp = j.x;
    if (pads) {
        BPK_TRY(bpc_alloc(dev, (size_t)(N * q->G * q->C * j.plane) * sizeof(float), &padv));
        j.xpad = padv;
        j.xp = j.xpad;
        const int64_t planes = N * q->G * q->C;
        (void)bpc_ranges(dev, "conv", planes, planes * j.plane, pad_planes, &j); /* never fails */
    }
    /* work in the pool's units, as conv.c counts it */
    const int64_t work = N * q->M * dm.nout * q->C * q->taps / 4;
    const int team = bpc_team(dev, work);
    /* chunks of positions: at most CHUNK, and at least two tasks a thread */
    int64_t chunk = dm.nout < CHUNK ? dm.nout : CHUNK;
    j.pairs = (q->blocks + BPC_CONV_BLOCKS - 1) / BPC_CONV_BLOCKS;
    while (N * q->G * j.pairs * ((dm.nout + chunk - 1) / chunk) < 2 * (int64_t)team &&
           chunk > 2 * BPC_CONV_RUN)
        chunk = (chunk / 2 + BPC_CONV_RUN - 1) / BPC_CONV_RUN * BPC_CONV_RUN;
    j.chunk = chunk;
    j.chunks = (dm.nout + chunk - 1) / chunk;
    j.cblock = dm.nout >= WIDE_PLANE && dev->vm->conv_wide_channel_block > 0
                   ? dev->vm->conv_wide_channel_block
                   : CHANNEL_BLOCK;
    bp_status st = bpc_ranges(dev, "conv", N * q->G * j.pairs * j.chunks, work, conv_tasks, &j);
    bpc_free(dev, padv);
    return st;
}

/* f32/f64 convolutions with a few output positions per image (up to
 * BPC_CONV_NARROW): silero-vad's, whose last layers see 4, 2 and 1
 * positions of up to 387 taps. Each image's positions are gathered as
 * vectors (cols[o] = x seen through position o's window: (C / groups) x
 * kernel values, 0 in the padding), and each output channel is its row of
 * w dotted with them (the level's dots kernel, vdots.c), bias included.
 * A gemv per position read all of w once per position, and sgemm packed
 * all of w on every call; the reference kernel, which took the layers with
 * fewer than 4 filters, loaded each element through a double. */
#include <stdlib.h>
#include <string.h>

#include "blas_cpu_nn.h"
#include "vmath.h"

/* Rows of w per task on the pool */
#define ROW_BLOCK 32
/* The most gathered elements a call holds (64 MiB of f32) */
#define BPC_CONV_NARROW_COLS ((int64_t)16 << 20)

bool bpc_conv_narrow_takes(const bp_op_params *p, const bp_view *x, const bp_view *w,
                           const bp_view *y)
{
    if ((x->dtype != BP_F32 && x->dtype != BP_F64) || x->rank < 3 || !bpk_view_dense(x) ||
        !bpk_view_dense(w) || !bpk_view_dense(y))
        return false;
    bpc_conv_dims d;
    bpc_conv_dims_of(p, x, y, &d);
    /* the gathered windows: at most BPC_CONV_NARROW_COLS elements */
    return d.nout >= 1 && d.nout <= BPC_CONV_NARROW &&
           x->shape[0] * d.nout * d.ck <= BPC_CONV_NARROW_COLS;
}

typedef struct narrow_job {
    bpc_conv_dims dims;
    size_t es;
    const bp_view *x, *w, *bias, *y;
    const bpc_vmath *vm;
    int64_t blocks;             /* of ROW_BLOCK rows per group */
    char *cols;                 /* every unit's gathered windows, unit after unit */
} narrow_job;

/* cols[o * ck + c * nk + tap] for one image's group (x at xg): x through
 * output position o's window, 0 where a tap falls in the padding. Along
 * the kernel's last axis when it is longer than the group's channels (one
 * channel seen through 256 taps), else tap by tap along the channels (2048
 * channels through a 1x1 kernel: a loop per element cost more than the
 * products). */
#define GATHER(NAME, T)                                                                    \
    static void NAME(const narrow_job *j, const T *xg, T *cols)                            \
    {                                                                                      \
        const bpk_window *g = &j->dims.g;                                                  \
        const int64_t cg = j->dims.cg, nk = j->dims.nk, nin = j->dims.nin;                 \
        const bool along_taps = g->k[2] >= cg;                                             \
        for (int64_t o = 0; o < j->dims.nout; o++) {                                       \
            const int64_t oc[3] = {o / (g->out[1] * g->out[2]), o / g->out[2] % g->out[1], \
                                   o % g->out[2]};                                         \
            T *dst = cols + o * j->dims.ck;                                                \
            for (int64_t c = 0; c < (along_taps ? cg : 1); c++) {                          \
                int64_t t = 0;                                                             \
                for (int64_t k0 = 0; k0 < g->k[0]; k0++) {                                 \
                    const int64_t i0 = oc[0] * g->st[0] + k0 * g->dl[0] - g->pb[0];        \
                    for (int64_t k1 = 0; k1 < g->k[1]; k1++) {                             \
                        const int64_t i1 = oc[1] * g->st[1] + k1 * g->dl[1] - g->pb[1];    \
                        const bool row = i0 >= 0 && i0 < g->in[0] && i1 >= 0 && i1 < g->in[1]; \
                        const int64_t at = (i0 * g->in[1] + i1) * g->in[2];                \
                        for (int64_t k2 = 0; k2 < g->k[2]; k2++, t++) {                    \
                            const int64_t i2 = oc[2] * g->st[2] + k2 * g->dl[2] - g->pb[2]; \
                            const bool in = row && i2 >= 0 && i2 < g->in[2];               \
                            if (along_taps)                                                \
                                dst[c * nk + t] = in ? xg[c * nin + at + i2] : 0;          \
                            else if (in)                                                   \
                                for (int64_t ch = 0; ch < cg; ch++)                        \
                                    dst[ch * nk + t] = xg[ch * nin + at + i2];             \
                            else                                                           \
                                for (int64_t ch = 0; ch < cg; ch++)                        \
                                    dst[ch * nk + t] = 0;                                  \
                        }                                                                  \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

GATHER(gather_f32, float)
GATHER(gather_f64, double)

/* units [lo, hi) (image n, group grp: unit n G + grp) gathered into their
 * part of j->cols */
static bp_status gather_units(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    (void)d;
    const narrow_job *j = args;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t n = u / j->dims.G, grp = u % j->dims.G;
        const char *xg = bpk_base(j->x) +
                         (size_t)((n * j->x->shape[1] + grp * j->dims.cg) * j->dims.nin) * j->es;
        char *cols = j->cols + (size_t)(u * j->dims.nout * j->dims.ck) * j->es;
        if (j->es == sizeof(float))
            gather_f32(j, (const float *)xg, (float *)cols);
        else
            gather_f64(j, (const double *)xg, (double *)cols);
    }
    return BP_OK;
}

/* tasks [lo, hi): one unit's block of ROW_BLOCK output channels each */
static bp_status dot_tasks(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    (void)d;
    const narrow_job *j = args;
    const size_t es = j->es;
    double bias[ROW_BLOCK];
    for (int64_t t = lo; t < hi; t++) {
        const int64_t unit = t / j->blocks, n = unit / j->dims.G, grp = unit % j->dims.G;
        const int64_t m0 = t % j->blocks * ROW_BLOCK;
        const int64_t m = j->dims.mg - m0 < ROW_BLOCK ? j->dims.mg - m0 : ROW_BLOCK;
        const int64_t row = grp * j->dims.mg + m0; /* the first output channel */
        if (j->bias)
            bpk_block_load(j->bias, row, m, bias);
        const char *w = bpk_base(j->w) + (size_t)(row * j->dims.ck) * es;
        const char *cols = j->cols + (size_t)(unit * j->dims.nout * j->dims.ck) * es;
        char *y = bpk_base(j->y) + (size_t)((n * j->y->shape[1] + row) * j->dims.nout) * es;
        if (es == sizeof(float))
            j->vm->dots_f32((const float *)w, m, (const float *)cols, j->dims.nout, j->dims.ck,
                            j->bias ? bias : NULL, (float *)y, j->dims.nout);
        else
            j->vm->dots_f64((const double *)w, m, (const double *)cols, j->dims.nout, j->dims.ck,
                            j->bias ? bias : NULL, (double *)y, j->dims.nout);
    }
    return BP_OK;
}

bp_status bpc_conv_narrow(bpc_dev *dev, const bp_op_params *p, const bp_view *x,
                          const bp_view *w, const bp_view *bias, const bp_view *y)
{
    narrow_job j = {.es = bp_dtype_size(x->dtype), .x = x, .w = w, .bias = bias, .y = y,
                    .vm = dev->vm};
    bpc_conv_dims_of(p, x, y, &j.dims);
    if (bpk_numel(y) == 0)
        return BP_OK;
    j.blocks = (j.dims.mg + ROW_BLOCK - 1) / ROW_BLOCK;
    /* in the pool's units: a multiply-add is about a quarter of an element */
    const int64_t units = x->shape[0] * j.dims.G,
                  work = units * j.dims.mg * j.dims.nout * j.dims.ck / 4;
    void *cols;
    bp_status st = bpc_alloc(dev, (size_t)(units * j.dims.nout * j.dims.ck) * j.es, &cols);
    if (st != BP_OK)
        return st;
    j.cols = cols;
    /* never fails */
    (void)bpc_ranges(dev, "conv", units, units * j.dims.nout * j.dims.ck, gather_units, &j);
    st = bpc_ranges(dev, "conv", units * j.blocks, work, dot_tasks, &j);
    bpc_free(dev, cols);
    return st;
}

/* The reference kernels of nn.h's ops (kernels.h's component). Each kernel
 * reads the views and bp_op_params exactly as opcodes.h's kind and row say;
 * floats are computed in double and
 * rounded once into the output's dtype (f16 and bf16 included); reductions
 * inside norms and losses accumulate in double.
 *
 * Kernels that other CPU plugins thread (blas_cpu) take a range [lo, hi) of
 * independent units (named per kernel below): the plugin entry runs them over
 * every unit, a threaded plugin over slices of units, and every unit is then
 * computed by this same code. */
#ifndef BPK_KERNELS_NN_H
#define BPK_KERNELS_NN_H

#include "kernels.h"

/* The op entry for the codes here; BP_ERR_UNSUPPORTED_OP for any other. */
bp_status bpk_nn_op(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                    const bp_view *const *in, int32_t n_out, const bp_view *const *out);

/* A window op's geometry over x's s = rank - 2 spatial axes, padded to three
 * at the front (missing axes: extent 1, kernel 1, stride 1, dilation 1, no
 * padding), so every kernel loops over three and the innermost loop runs
 * along x's last, contiguous axis. */
typedef struct bpk_window {
    int32_t s;
    int64_t in[3], out[3];          /* x's and y's spatial extents */
    int64_t k[3], st[3], dl[3];
    int64_t pb[3], pe[3];           /* padding before / after (conv_transpose: may be < 0) */
} bpk_window;
/* kernel: the kernel extents (NULL: p.i[0..s)). */
void bpk_window_of(const bp_op_params *p, const bp_view *x, const bp_view *y,
                   const int64_t *kernel, bpk_window *w);
static inline int64_t bpk_window_numel(const int64_t *e) { return e[0] * e[1] * e[2]; }

#define BPK_TRY(call)                                                                          \
    do {                                                                                       \
        bp_status bpk_st_ = (call);                                                            \
        if (bpk_st_ != BP_OK)                                                                  \
            return bpk_st_;                                                                    \
    } while (0)

/* Integer division rounding down / up (b > 0). */
static inline int64_t bpk_div_floor(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}
static inline int64_t bpk_div_ceil(int64_t a, int64_t b) { return -bpk_div_floor(-a, b); }

/* The outputs o in [*lo, *hi) of an axis of `out` whose tap at i = o st +
 * off (off = k dl - pb) falls inside [0, in): a tap's whole range, so the
 * loops over it need no bounds test (convolutions and pools). */
static inline void bpk_tap_range(int64_t in, int64_t out, int64_t st, int64_t off, int64_t *lo,
                                 int64_t *hi)
{
    const int64_t a = bpk_div_ceil(-off, st), b = bpk_div_floor(in - 1 - off, st) + 1;
    *lo = a > 0 ? a : 0;
    *hi = b < out ? b : out;
    if (*hi < *lo)
        *hi = *lo;
}

/* Elements [first, first + n) of v, row-major over its shape (any strides,
 * broadcast included), as doubles and back (each rounded once into v's
 * dtype), or exactly as int64. */
void bpk_block_load(const bp_view *v, int64_t first, int64_t n, double *dst);
void bpk_block_store(const bp_view *v, int64_t first, int64_t n, const double *src);
void bpk_block_load_i64(const bp_view *v, int64_t first, int64_t n, int64_t *dst);
void bpk_block_store_i64(const bp_view *v, int64_t first, int64_t n, const int64_t *src);
/* The plane v[a, b, ...] (its axes from 2 on, row-major) as doubles, and
 * back (each element rounded once into v's dtype). */
void bpk_plane_load(const bp_view *v, int64_t a, int64_t b, double *dst);
void bpk_plane_store(const bp_view *v, int64_t a, int64_t b, const double *src);
/* The same, exactly, for integer dtypes (and indices). */
void bpk_plane_load_i64(const bp_view *v, int64_t a, int64_t b, int64_t *dst);
void bpk_plane_store_i64(const bp_view *v, int64_t a, int64_t b, const int64_t *src);
/* Element k (row-major over v's shape) of v: its byte address. */
char *bpk_elem_at(const bp_view *v, int64_t k);

/* ---- nn_conv.c: units are (n, group) pairs, n * groups + g ---- */
bp_status bpk_conv_units(void *dev, const bp_op_params *p, const bp_view *x, const bp_view *w,
                         const bp_view *bias, const bp_view *y, int64_t lo, int64_t hi);
bp_status bpk_conv_transpose_units(void *dev, const bp_op_params *p, const bp_view *x,
                                   const bp_view *w, const bp_view *bias, const bp_view *y,
                                   int64_t lo, int64_t hi);

/* ---- nn_pool.c: units are (n, c) planes, n * C + c ---- */
/* indices may be NULL. */
bp_status bpk_max_pool_planes(void *dev, const bp_op_params *p, const bp_view *x,
                              const bp_view *y, const bp_view *indices, int64_t lo, int64_t hi);
bp_status bpk_average_pool_planes(void *dev, const bp_op_params *p, const bp_view *x,
                                  const bp_view *y, int64_t lo, int64_t hi);

/* ---- nn_lrn.c: units are n * S + s (S: the positions of one channel) ---- */
bp_status bpk_lrn_units(void *dev, const bp_op_params *p, const bp_view *x, const bp_view *y,
                        int64_t lo, int64_t hi);

/* ---- nn_norm.c ---- */
/* batch_norm, instance_norm: units are (n, c) planes. */
bp_status bpk_batch_norm_planes(void *dev, const bp_op_params *p, const bp_view *const *in,
                                const bp_view *y, int64_t lo, int64_t hi);
bp_status bpk_instance_norm_planes(void *dev, const bp_op_params *p, const bp_view *const *in,
                                   const bp_view *y, int64_t lo, int64_t hi);
/* layer_norm (rms: rms_norm): units are rows, the leading axes' row-major
 * order; mean, inv_std (layer_norm only) NULL when not wanted. */
bp_status bpk_trailing_norm_rows(void *dev, bool rms, const bp_op_params *p, const bp_view *x,
                                 const bp_view *scale, const bp_view *bias, const bp_view *y,
                                 const bp_view *mean, const bp_view *inv_std, int64_t lo,
                                 int64_t hi);

/* ---- nn_loss.c ---- */
/* The sample with class-axis row r of x (N, d..., C) ignored by ignore_index,
 * its label and weight; BP_ERR_INDEX (through bpk_fail, naming op) when the
 * label is not a class. */
typedef struct bpk_loss_args {
    bool ce;                        /* softmax cross-entropy, else nll */
    int64_t classes, rows;
    bool has_ignore;
    int64_t ignore;
} bpk_loss_args;
void bpk_loss_args_of(bp_op op, const bp_op_params *p, const bp_view *x, bpk_loss_args *a);
/* The first label of rows [lo, hi) that is neither a class nor ignore_index:
 * its row, else -1. */
int64_t bpk_loss_bad_label(const bpk_loss_args *a, const bp_view *labels, int64_t lo, int64_t hi,
                           int64_t *value);
/* Rows [lo, hi): each sample's loss (per[r - lo]) and weight (wsum[r - lo],
 * 0 for an ignored sample), and log_prob's rows when given. */
bp_status bpk_loss_rows(void *dev, const bpk_loss_args *a, const bp_view *x,
                        const bp_view *labels, const bp_view *weights, const bp_view *log_prob,
                        int64_t lo, int64_t hi, double *per, double *wsum);
/* The loss output from every sample's loss and weight (p.i[0]'s reduction). */
void bpk_loss_finish(const bp_op_params *p, const bp_view *loss, int64_t rows, const double *per,
                     const double *wsum);

/* ---- nn_resize.c: units are y's elements, row-major ---- */
bp_status bpk_resize_elems(void *dev, const bp_op_params *p, const bp_view *x, const bp_view *y,
                           int64_t lo, int64_t hi);

#endif

/* backplane: neural-network ops (plugin ABI 1.5): convolution, pooling,
 * normalisation, losses, dropout and resize. ONNX semantics (opset 17, as
 * ONNX 1.12 defines them) unless written otherwise; layouts are NCHW: x is
 * (N, C, spatial...) with 1 to 3 spatial axes. A backend whose plugin was
 * built before ABI 1.5 answers them with BP_ERR_UNSUPPORTED_OP. */
#ifndef BACKPLANE_NN_H
#define BACKPLANE_NN_H

#include <stdbool.h>
#include <stdint.h>

#include "export.h"
#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- windows: convolution and pooling ----------------------------------------------- */
typedef enum bp_auto_pad {
    BP_AUTO_PAD_NOTSET = 0,    /* the explicit pads */
    BP_AUTO_PAD_SAME_UPPER,    /* output extent ceil(in / stride), odd padding at the end */
    BP_AUTO_PAD_SAME_LOWER,    /* the same, odd padding at the start */
    BP_AUTO_PAD_VALID          /* no padding */
} bp_auto_pad;

/* The geometry of a window op. Zero members take ONNX's defaults (stride 1,
 * dilation 1, no padding, one group, the natural output shape), so
 *     bp_window w = BP_WINDOW_INIT;   w.strides[0] = w.strides[1] = 2;
 * is a stride-2 window. Arrays hold one entry per spatial axis. Members are
 * only ever appended: struct_size says which the caller knows. */
typedef struct bp_window {
    uint32_t struct_size;          /* sizeof(bp_window): BP_WINDOW_INIT sets it */
    int64_t kernel[3];             /* pools: the window's extents (required) */
    int64_t strides[3];
    int64_t dilations[3];
    int64_t pads[6];               /* ONNX's order: the start of each spatial axis, then
                                      the end of each (2-D: top, left, bottom, right) */
    bp_auto_pad auto_pad;          /* not NOTSET: pads must be zero */
    int64_t groups;                /* conv, conv_transpose */
    int64_t output_padding[3];     /* conv_transpose: added at the end of each axis */
    int64_t output_shape[3];       /* conv_transpose: the spatial extents wanted (all or none) */
    bool ceil_mode;                /* pools: the output extent rounds up */
    bool count_include_pad;        /* average_pool: the padding counts in the divisor */
    int32_t storage_order;         /* max_pool's indices: 0 row-major, 1 column-major */
} bp_window;
#define BP_WINDOW_INIT {.struct_size = sizeof(bp_window)}

/* Convolution (ONNX Conv): y[n, m] = bias[m] + sum over the m's group's
 * channels c and the kernel of w[m, c, k...] x[n, c, o stride + k dilation -
 * pad...]. x (N, C, D...), w (M, C / groups, K...), bias (M) or NULL; y (N,
 * M, O...) with O = floor((D + pads - dilation (K - 1) - 1) / stride) + 1.
 * Float dtypes, all of one. window NULL: the defaults. */
BP_API bp_status bp_conv(const bp_tensor *x, const bp_tensor *w, const bp_tensor *bias,
                         const bp_window *window, bp_tensor **out);
/* Transposed convolution (ONNX ConvTranspose, 1 to 3 spatial axes): the
 * gradient of bp_conv with respect to its input. w (C, M / groups, K...);
 * y (N, M, O...) with O = stride (D - 1) + output_padding + dilation (K - 1)
 * + 1 - pads, or window->output_shape: with auto_pad SAME_UPPER / SAME_LOWER
 * the padding then splits as ONNX says, else the natural output is cut or
 * extended at the end (ONNX's reference implementation, PyTorch's
 * output_size). */
BP_API bp_status bp_conv_transpose(const bp_tensor *x, const bp_tensor *w, const bp_tensor *bias,
                                   const bp_window *window, bp_tensor **out);
/* Max pooling (ONNX MaxPool): window->kernel required; padding never wins.
 * indices (NULL if not wanted) gets, per output, the i64 flat index into x
 * of the maximum (the first on ties; storage_order 1: column-major spatial
 * order, as ONNX). O = floor (or ceil with ceil_mode) ((D + pads - dilation
 * (K - 1) - 1) / stride) + 1; with ceil_mode a last window that would start
 * in the end padding is dropped (as onnxruntime and PyTorch). A dilated
 * window that holds only padding gives -inf (integers: the dtype's minimum)
 * and index -1. Numeric dtypes. */
BP_API bp_status bp_max_pool(const bp_tensor *x, const bp_window *window, bp_tensor **out,
                             bp_tensor **indices);
/* Average pooling (ONNX AveragePool): the mean of each window's elements
 * inside x (count_include_pad: inside x and its padding, a ceil_mode window
 * cut where the end padding ends). No dilations (ONNX 1.12 has none for
 * it). Float dtypes. */
BP_API bp_status bp_average_pool(const bp_tensor *x, const bp_window *window, bp_tensor **out);
/* The maximum / mean over every spatial axis: (N, C, D...) -> (N, C, 1...)
 * (ONNX GlobalMaxPool, GlobalAveragePool). Float dtypes. */
BP_API bp_status bp_global_max_pool(const bp_tensor *x, bp_tensor **out);
BP_API bp_status bp_global_average_pool(const bp_tensor *x, bp_tensor **out);
/* Local response normalisation across channels (ONNX LRN): x / (bias +
 * alpha / size * sum of x^2 over the channels c - floor((size - 1) / 2) ..
 * c + ceil((size - 1) / 2) that exist) ^ beta; size >= 1. ONNX's defaults:
 * alpha 1e-4, beta 0.75, bias 1. Float dtypes. */
BP_API bp_status bp_lrn(const bp_tensor *x, int64_t size, double alpha, double beta, double bias,
                        bp_tensor **out);

/* ---- normalisation ---------------------------------------------------------------------- */
/* Inference-form batch normalisation (ONNX BatchNormalization, training_mode
 * 0): scale (x - mean) / sqrt(var + epsilon) + bias per channel (axis 1).
 * scale, bias, mean, var: (C), x's dtype. x of rank >= 2. Float dtypes. */
BP_API bp_status bp_batch_norm(const bp_tensor *x, const bp_tensor *scale, const bp_tensor *bias,
                               const bp_tensor *mean, const bp_tensor *var, double epsilon,
                               bp_tensor **out);
/* Normalisation over each (n, c)'s spatial axes (ONNX InstanceNormalization):
 * scale and bias (C). x of rank >= 3. Float dtypes. */
BP_API bp_status bp_instance_norm(const bp_tensor *x, const bp_tensor *scale, const bp_tensor *bias,
                                  double epsilon, bp_tensor **out);
/* Layer normalisation over the axes from axis on (ONNX LayerNormalization;
 * axis -1: the last). scale (required) and bias (NULL: none) broadcast to
 * those axes' shape. mean and inv_std (each NULL if not wanted) get x's
 * shape with the normalised axes of extent 1, as ONNX's optional outputs:
 * the mean and 1 / sqrt(variance + epsilon), in f32 for f16 and bf16 x
 * (ONNX's stash_type 1), else in x's dtype. Float dtypes. */
BP_API bp_status bp_layer_norm(const bp_tensor *x, int32_t axis, const bp_tensor *scale,
                               const bp_tensor *bias, double epsilon, bp_tensor **out,
                               bp_tensor **mean, bp_tensor **inv_std);
/* Root-mean-square normalisation over the axes from axis on:
 * x / sqrt(mean(x^2) + epsilon) * scale (scale NULL: none; else broadcast to
 * those axes). Not in ONNX 1.12; as in LLaMA and torch.nn.RMSNorm. Floats. */
BP_API bp_status bp_rms_norm(const bp_tensor *x, int32_t axis, const bp_tensor *scale,
                             double epsilon, bp_tensor **out);

/* ---- losses ----------------------------------------------------------------------------- */
typedef enum bp_loss_reduction {
    BP_LOSS_NONE = 0,   /* one loss per sample: labels' shape */
    BP_LOSS_SUM = 1,    /* a scalar */
    BP_LOSS_MEAN = 2    /* a scalar: the sum / the weights' sum over counted samples (ONNX) */
} bp_loss_reduction;
/* Negative log-likelihood (ONNX NegativeLogLikelihoodLoss): per sample
 * -weights[t] log_prob[n, t, d...] with t = target[n, d...]; log_prob (N, C)
 * or (N, C, d...); target (N) or (N, d...), i32 or i64, in [0, C) except
 * ignore_index (NULL: none) whose samples count as 0 with weight 0. weights:
 * (C) or NULL (all 1). A target outside [0, C) is BP_ERR_INDEX. Floats. */
BP_API bp_status bp_nll_loss(const bp_tensor *log_prob, const bp_tensor *target,
                             const bp_tensor *weights, bp_loss_reduction reduction,
                             const int64_t *ignore_index, bp_tensor **out);
/* Softmax cross-entropy (ONNX SoftmaxCrossEntropyLoss): bp_nll_loss of
 * log_softmax(scores) along axis 1, computed in one stable pass. log_prob
 * (NULL if not wanted) gets that log_softmax, scores' shape. */
BP_API bp_status bp_softmax_cross_entropy_loss(const bp_tensor *scores, const bp_tensor *labels,
                                               const bp_tensor *weights,
                                               bp_loss_reduction reduction,
                                               const int64_t *ignore_index, bp_tensor **out,
                                               bp_tensor **log_prob);

/* ---- dropout ------------------------------------------------------------------------------ */
/* ONNX Dropout with a key. training false: out is a copy of x and mask (NULL
 * if not wanted) all true. training true: element i is kept when
 * bp_random_uniform's f32 value at stream position offset + i of seed (in
 * [0, 1): every backend draws the same mask) is >= ratio (as f32), and
 * divided by 1 - ratio; 0 <= ratio < 1. mask: bool, x's shape. Floats. */
BP_API bp_status bp_dropout(const bp_tensor *x, double ratio, bool training, uint64_t seed,
                            uint64_t offset, bp_tensor **out, bp_tensor **mask);

/* ---- resize ------------------------------------------------------------------------------- */
typedef enum bp_resize_mode {
    BP_RESIZE_NEAREST = 0,
    BP_RESIZE_LINEAR = 1,      /* multilinear over every resized axis */
    BP_RESIZE_CUBIC = 2        /* separable cubic convolution (cubic_coeff_a) */
} bp_resize_mode;
/* The coordinate in x of output index o on an axis of extent D; L = D scale
 * is ONNX's output length (a real number when scales are given, the size
 * when sizes are). */
typedef enum bp_resize_coordinates {
    BP_RESIZE_HALF_PIXEL = 0,          /* (o + 0.5) / scale - 0.5 (ONNX's default) */
    BP_RESIZE_ASYMMETRIC = 1,          /* o / scale */
    BP_RESIZE_ALIGN_CORNERS = 2,       /* o (D - 1) / (L - 1), 0 where L is 1 */
    BP_RESIZE_PYTORCH_HALF_PIXEL = 3,  /* half_pixel, 0 where L is 1 */
    BP_RESIZE_TF_HALF_PIXEL_FOR_NN = 4 /* (o + 0.5) / scale */
} bp_resize_coordinates;
typedef enum bp_resize_nearest {
    BP_NEAREST_ROUND_PREFER_FLOOR = 0, /* ONNX's default */
    BP_NEAREST_ROUND_PREFER_CEIL = 1,
    BP_NEAREST_FLOOR = 2,
    BP_NEAREST_CEIL = 3
} bp_resize_nearest;
typedef struct bp_resize_options {
    uint32_t struct_size;              /* sizeof(bp_resize_options) */
    bp_resize_mode mode;
    bp_resize_coordinates coordinates;
    bp_resize_nearest nearest;
    double cubic_coeff_a;              /* ONNX's default -0.75 */
    bool exclude_outside;              /* cubic: weights outside x are dropped, the rest renormalised */
} bp_resize_options;
#define BP_RESIZE_OPTIONS_INIT                                                              \
    {.struct_size = sizeof(bp_resize_options), .mode = BP_RESIZE_NEAREST,                   \
     .coordinates = BP_RESIZE_HALF_PIXEL, .nearest = BP_NEAREST_ROUND_PREFER_FLOOR,         \
     .cubic_coeff_a = -0.75, .exclude_outside = false}
/* Resize every axis of x (ONNX Resize): by scales (x's rank entries, > 0;
 * out extent floor(D scale)) or to sizes (x's rank entries, >= 1): exactly
 * one of them non-NULL. options NULL: BP_RESIZE_OPTIONS_INIT. ONNX's
 * tf_crop_and_resize (a region of interest) is not supported. Numeric
 * dtypes (linear and cubic: floats). */
BP_API bp_status bp_resize(const bp_tensor *x, const double *scales, const int64_t *sizes,
                           const bp_resize_options *options, bp_tensor **out);

#ifdef __cplusplus
}
#endif
#endif

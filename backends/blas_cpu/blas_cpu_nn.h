/* blas_cpu's neural-network ops (nn.h, ABI 1.4): private declarations.
 *
 * nn.c routes each op: f32/f64 convolutions to im2col + OpenBLAS gemm,
 * depthwise f32 ones to whole lines of taps (conv_depthwise.c), dense f32 layer_norm / rms_norm to one fused pass per row and
 * batch_norm / instance_norm to one per (n, c) plane (norm.c), f32
 * max_pool without indices and average_pool to whole lines of taps
 * (window_pool.c), f32 losses
 * to one fused stable pass per sample (loss.c); every other case runs the
 * binary backend's reference kernels (binary_nn.h) over ranges of their
 * independent units on the thread pool, so it gives the reference's bits. */
#ifndef BPC_BLAS_CPU_NN_H
#define BPC_BLAS_CPU_NN_H

#include "kernels_nn.h"
#include "blas_cpu.h"

/* The op entry for nn.h's ops (op.c's bpc_op passes them here, params
 * widened to this build's struct); BP_ERR_UNSUPPORTED_OP for any other. */
bp_status bpc_nn_op(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                    const bp_view *const *in, int32_t n_out, const bp_view *const *out);

/* fn(dev, args, lo, hi) over [0, n) in ranges on the pool (one range on the
 * calling thread when work, in BPC_GRAIN units, is small). The first failure
 * is returned, named with op. */
typedef bp_status (*bpc_range_fn)(bpc_dev *dev, const void *args, int64_t lo, int64_t hi);
bp_status bpc_ranges(bpc_dev *dev, const char *op, int64_t n, int64_t work, bpc_range_fn fn,
                     const void *args);

/* A convolution's extents (conv.c, conv_narrow.c): its window, G groups of
 * cg input and mg output channels, nk kernel taps and ck = cg nk of them
 * per output, nin input and nout output positions per channel. */
typedef struct bpc_conv_dims {
    bpk_window g;
    int64_t G, cg, mg, nk, ck, nin, nout;
} bpc_conv_dims;
void bpc_conv_dims_of(const bp_op_params *p, const bp_view *x, const bp_view *y,
                      bpc_conv_dims *d);

/* conv.c: the axis along which a convolution's kernel is one gemm per tap
 * over shifted views of x, unfolding nothing (a kernel along one axis,
 * stride 1 there, many channels and positions), or -1. */
int bpc_conv_line_axis(const bpk_window *g, int64_t cg, int64_t nout);
/* conv.c: f32/f64 convolution as im2col + gemm; false (nothing done) when
 * the case is not one it takes. */
bool bpc_conv_gemm_takes(const bp_op_params *p, const bp_view *x, const bp_view *w,
                         const bp_view *y);
bp_status bpc_conv_gemm(bpc_dev *dev, const bp_op_params *p, const bp_view *x, const bp_view *w,
                        const bp_view *bias, const bp_view *res, const bp_view *y, bool relu);
/* What a prepared node holds (plugin.h's prepare): each kind's struct has
 * it as its first member, for op.c's entries to tell them apart. */
typedef enum bpc_prepared_kind {
    BPC_PREPARED_DIRECT = 1, /* conv_direct.c's reordered weights */
    BPC_PREPARED_DEPTHWISE,  /* conv_depthwise.c's 3x3 weights */
    BPC_PREPARED_GEMM,       /* conv.c's, with the Relu after it (bpc_conv_gemm_relu) */
} bpc_prepared_kind;
/* What a convolution on the GEMM path keeps for a plan's Relu after it
 * (prepare_epilogue), or its add and Relu (prepare_epilogues):
 * bpc_conv_gemm runs with the residual and relu, which it applies to each
 * tile of y as the tile is done, still in the cache. */
typedef struct bpc_conv_gemm_relu {
    bpc_prepared_kind kind; /* BPC_PREPARED_GEMM */
    bool residual, relu;
} bpc_conv_gemm_relu;
/* conv_direct.c: f32 convolution of one group and more than one tap,
 * direct, with the weights reordered once by the plugin's prepare (a
 * compiled graph's constant). takes: whether the case is one it runs;
 * prepare: *prepared, the reordered weights (to bpc_conv_direct_free);
 * residual: it adds the run's res to y (a plan's add after it), relu: it
 * stores relu(y) (a plan's Relu after it, or after that add). */
bool bpc_conv_direct_takes(const bpc_dev *d, const bp_op_params *p, const bp_view *x,
                           const bp_view *w, const bp_view *y);
bp_status bpc_conv_direct_prepare(bpc_dev *dev, const bp_op_params *p, const bp_view *x,
                                  const bp_view *w, const bp_view *y, bool residual, bool relu,
                                  void **prepared);
bp_status bpc_conv_direct(bpc_dev *dev, const void *prepared, const bp_op_params *p,
                          const bp_view *x, const bp_view *bias, const bp_view *res,
                          const bp_view *y);
void bpc_conv_direct_free(void *prepared);
/* conv_narrow.c: f32/f64 convolution with at most BPC_CONV_NARROW output
 * positions per image, as dot products of w's rows with the gathered
 * windows. */
#define BPC_CONV_NARROW 8
bool bpc_conv_narrow_takes(const bp_op_params *p, const bp_view *x, const bp_view *w,
                           const bp_view *y);
bp_status bpc_conv_narrow(bpc_dev *dev, const bp_op_params *p, const bp_view *x,
                          const bp_view *w, const bp_view *bias, const bp_view *y);
/* conv_depthwise.c: depthwise f32 convolution (one input channel per
 * group), over dense planes, with the reference's bits. */
bool bpc_conv_depthwise_takes(const bp_op_params *p, const bp_view *x, const bp_view *w,
                              const bp_view *bias, const bp_view *y);
bp_status bpc_conv_depthwise(bpc_dev *dev, const bp_op_params *p, const bp_view *x,
                             const bp_view *w, const bp_view *bias, const bp_view *y);
/* conv_depthwise.c, prepared: a 2-D 3x3 depthwise convolution whose
 * weights (a compiled graph's constant) are all finite, where the level
 * has the f32 kernel (prepares); the weights copied (prepare); the run
 * (prepared), within the op's tolerance of the eager call. */
bool bpc_conv_depthwise_prepares(const bpc_dev *d, const bp_op_params *p, const bp_view *x,
                                 const bp_view *w, const bp_view *y);
bp_status bpc_conv_depthwise_prepare(bpc_dev *dev, const bp_view *w, void **prepared);
bp_status bpc_conv_depthwise_prepared(bpc_dev *dev, const void *prepared, const bp_op_params *p,
                                      const bp_view *x, const bp_view *bias, const bp_view *y);
void bpc_conv_depthwise_free(void *prepared);

/* window_pool.c: f32 max_pool (no indices output) and average_pool over
 * dense planes, with the reference's bits. */
bool bpc_max_pool_takes(const bp_view *x, const bp_view *y, const bp_view *indices);

/* A 3x3 window over a plane (a 2-D window: the leading axis of extent 1). */
static inline bool bpc_window_is_3x3(const bpk_window *g)
{
    return g->k[0] == 1 && g->in[0] == 1 && g->out[0] == 1 && g->k[1] == 3 && g->k[2] == 3;
}

/* A 2-D window's tap (kh, kw) of output (o1, o2): true, with its offset in
 * the plane, when it lies inside x (the 3x3 paths' outputs at the edges). */
static inline bool bpc_tap_inside(const bpk_window *g, int64_t o1, int64_t o2, int kh, int kw,
                                  int64_t *at)
{
    const int64_t r = o1 * g->st[1] + kh * g->dl[1] - g->pb[1];
    const int64_t c = o2 * g->st[2] + kw * g->dl[2] - g->pb[2];
    *at = r * g->in[2] + c;
    return r >= 0 && r < g->in[1] && c >= 0 && c < g->in[2];
}
bp_status bpc_max_pool(bpc_dev *dev, const bp_op_params *p, const bp_view *x, const bp_view *y);
bool bpc_average_pool_takes(const bp_view *x, const bp_view *y);
bp_status bpc_average_pool(bpc_dev *dev, const bp_op_params *p, const bp_view *x,
                           const bp_view *y);

/* norm.c: fused f32 layer_norm / rms_norm over dense rows. */
bool bpc_norm_fused_takes(const bp_view *x, const bp_view *y, int64_t L);
bp_status bpc_norm_fused(bpc_dev *dev, bool rms, const bp_op_params *p, const bp_view *x,
                         const bp_view *scale, const bp_view *bias, const bp_view *y,
                         const bp_view *mean, const bp_view *inv_std);

/* norm.c: fused f32 batch_norm / instance_norm over dense (n, c) planes. */
bool bpc_planes_fused_takes(const bp_view *x, const bp_view *y);
/* norm.c: f32 LRN over dense (n, c, positions), blocks of positions at a
 * time (within an ulp of the reference); for what bpc_norm_fused_takes
 * takes with rows of the positions. */
bp_status bpc_lrn(bpc_dev *dev, const bp_op_params *p, const bp_view *x, const bp_view *y);
bp_status bpc_planes_fused(bpc_dev *dev, bool instance, const bp_op_params *p,
                           const bp_view *const *in, const bp_view *y);

/* loss.c: fused f32 softmax cross-entropy over dense (N, C) scores. */
bool bpc_loss_fused_takes(bp_op op, const bp_view *x, const bp_view *log_prob);
bp_status bpc_loss_fused(bpc_dev *dev, bp_op op, const bp_op_params *p, const bp_view *x,
                         const bp_view *labels, const bp_view *weights, const bp_view *loss,
                         const bp_view *log_prob);

#endif

/* The oracle of nn.h's ops, by oracle.h's contract: the arguments of bp_NAME
 * in order, host arrays for tensors, `want` (and each further output, NULL
 * when not wanted) for the outputs. Written from ONNX's definitions (and
 * nn.h where it decides what ONNX leaves open), in double; the window
 * geometry (auto_pad, ceil_mode, conv_transpose's output_shape) is resolved
 * here again from the spec, never taken from the library.
 *
 * Norm-wise outputs also give, if terms is not NULL, *terms: per element of
 * want the magnitude of what made it (malloc'd), and *k: the terms per
 * element, for the NORM tolerance (c * k * eps * terms). */
#ifndef BP_CONFORM_ORACLE_NN_H
#define BP_CONFORM_ORACLE_NN_H

#include <stdbool.h>
#include <stdint.h>

#include <backplane/backplane.h>

/* ---- windows (nn_conv.c, nn_pool.c) ---------------------------------------------- */
/* bias may be NULL; window NULL: the defaults. */
bool cf_oracle_conv(const cf_array *x, const cf_array *w, const cf_array *bias,
                    const bp_window *window, cf_array *want, double **terms, int64_t *k);
bool cf_oracle_conv_transpose(const cf_array *x, const cf_array *w, const cf_array *bias,
                              const bp_window *window, cf_array *want, double **terms,
                              int64_t *k);
/* indices: NULL if not wanted, else i64 flat indices into x. */
bool cf_oracle_max_pool(const cf_array *x, const bp_window *window, cf_array *want,
                        cf_array *indices);
bool cf_oracle_average_pool(const cf_array *x, const bp_window *window, cf_array *want,
                            double **terms, int64_t *k);
bool cf_oracle_lrn(const cf_array *x, int64_t size, double alpha, double beta, double bias,
                   cf_array *want);

/* ---- normalisation (nn_norm.c) ------------------------------------------------------ */
bool cf_oracle_batch_norm(const cf_array *x, const cf_array *scale, const cf_array *bias,
                          const cf_array *mean, const cf_array *var, double epsilon,
                          cf_array *want, double **terms, int64_t *k);
bool cf_oracle_instance_norm(const cf_array *x, const cf_array *scale, const cf_array *bias,
                             double epsilon, cf_array *want, double **terms, int64_t *k);
/* mean, inv_std: NULL if not wanted (f32 for f16/bf16 x, else x's dtype). */
bool cf_oracle_layer_norm(const cf_array *x, int32_t axis, const cf_array *scale,
                          const cf_array *bias, double epsilon, cf_array *want, cf_array *mean,
                          cf_array *inv_std, double **terms, int64_t *k);
bool cf_oracle_rms_norm(const cf_array *x, int32_t axis, const cf_array *scale, double epsilon,
                        cf_array *want, double **terms, int64_t *k);

/* ---- losses (nn_loss.c) -------------------------------------------------------------- */
/* weights, ignore_index: NULL for none. terms and k describe `want`. */
bool cf_oracle_nll_loss(const cf_array *log_prob, const cf_array *target,
                        const cf_array *weights, bp_loss_reduction reduction,
                        const int64_t *ignore_index, cf_array *want, double **terms,
                        int64_t *k);
/* log_prob: NULL if not wanted (scores' shape). */
bool cf_oracle_softmax_cross_entropy_loss(const cf_array *scores, const cf_array *labels,
                                          const cf_array *weights, bp_loss_reduction reduction,
                                          const int64_t *ignore_index, cf_array *want,
                                          cf_array *log_prob, double **terms, int64_t *k);

/* ---- dropout (nn_dropout.c) ---------------------------------------------------------- */
/* mask: NULL if not wanted (bool). */
bool cf_oracle_dropout(const cf_array *x, double ratio, bool training, uint64_t seed,
                       uint64_t offset, cf_array *want, cf_array *mask);

/* ---- resize (nn_resize.c) ------------------------------------------------------------ */
/* Exactly one of scales and sizes; options NULL: BP_RESIZE_OPTIONS_INIT. terms and k: the
 * linear and cubic weighted sums (nearest is exact). */
bool cf_oracle_resize(const cf_array *x, const double *scales, const int64_t *sizes,
                      const bp_resize_options *options, cf_array *want, double **terms,
                      int64_t *k);

#endif

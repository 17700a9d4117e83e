/* blas_cpu's op entry of ABI 1.4 (op.c) and its fast kernels, each in a
 * file of its own: gemm.c (OpenBLAS with the transposes as flags), scan.c
 * (cumsum/cumprod, rows across threads, columns vectorised), topk.c
 * (partial selection), scatter.c (scatter-add). Everything else runs the
 * reference kernels (kernels.h's bpk_op), split across threads where the op
 * is elementwise or row-wise. */
#ifndef BPC_OP_H
#define BPC_OP_H

#include "blas_cpu.h"

/* One call of the op entry, as the kernels below receive it. */
typedef struct bpc_op_call {
    bp_op op;
    const bp_op_params *p;       /* widened to this build's struct (missing members 0) */
    int32_t n_in, n_out;
    const bp_view *const *in;    /* an absent optional input is NULL */
    const bp_view *const *out;
} bpc_op_call;

/* The entry (plugin.h's op). */
bp_status bpc_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                 const bp_view *const *in, int32_t n_out, const bp_view *const *out);

/* The prepared nodes' entries (plugin.h's prepare, prepare_epilogue,
 * prepared_op and prepared_free): f32 convolutions' weights reordered for
 * conv_direct.c, and depthwise 3x3 ones' kept for conv_depthwise.c's f32
 * kernel; a Relu after a convolution on either conv_direct.c or the GEMM
 * path (conv.c), or a residual add and its Relu (prepare_epilogues),
 * applied as the convolution stores its output. */
bp_status bpc_prepare(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out,
                      void **prepared);
bp_status bpc_prepare_epilogue(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                               const bp_view *const *in, int32_t n_out,
                               const bp_view *const *out, bp_op epilogue,
                               const bp_op_params *epilogue_params, void **prepared);
bp_status bpc_prepare_epilogues(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                                const bp_view *const *in, int32_t n_out,
                                const bp_view *const *out, int32_t n_steps,
                                const bp_epilogue_step *steps, const bp_view *const *operands,
                                void **prepared);
bp_status bpc_prepared_op(void *dev, void *prepared, bp_op op, const bp_op_params *params,
                          int32_t n_in, const bp_view *const *in, int32_t n_out,
                          const bp_view *const *out);
void bpc_prepared_free(void *dev, void *prepared);

bp_status bpc_gemm(bpc_dev *d, const bpc_op_call *call);
bp_status bpc_scan(bpc_dev *d, const bpc_op_call *call);
bp_status bpc_topk(bpc_dev *d, const bpc_op_call *call);
/* SCATTER_ELEMENTS with reduction ADD. */
bp_status bpc_scatter_add(bpc_dev *d, const bpc_op_call *call);

#endif

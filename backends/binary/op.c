/* The op entry of ABI 1.4: one table from op code to kernel, then issue
 * 16's nn ops (conv, pool, norm, loss and resize, appended to
 * BP_OP_LIST_1_4; binary_nn.h). The table and bpb_nn_supports are both the
 * dispatch and what supports() answers, so the two cannot disagree: a code
 * with a kernel in neither is declared unsupported and refused with
 * BP_ERR_UNSUPPORTED_OP by bpb_nn_op. */
#include <string.h>

#include "binary.h"
#include "binary_nn.h"

#define SLOT(NAME) [BP_OP_##NAME - BP_OP_FIRST_1_4]

static const bpb_op_fn KERNELS[BP_OP_COUNT - BP_OP_FIRST_1_4] = {
    SLOT(ACOS) = bpb_op_unary,          SLOT(ASIN) = bpb_op_unary,
    SLOT(ATAN) = bpb_op_unary,          SLOT(ACOSH) = bpb_op_unary,
    SLOT(ASINH) = bpb_op_unary,         SLOT(ATANH) = bpb_op_unary,
    SLOT(SINH) = bpb_op_unary,          SLOT(COSH) = bpb_op_unary,
    SLOT(LOG1P) = bpb_op_unary,         SLOT(EXPM1) = bpb_op_unary,
    SLOT(SOFTPLUS) = bpb_op_unary,      SLOT(SOFTSIGN) = bpb_op_unary,
    SLOT(SILU) = bpb_op_unary,          SLOT(SQUARE) = bpb_op_unary,
    SLOT(ELU) = bpb_op_unary,           SLOT(SELU) = bpb_op_unary,
    SLOT(LEAKY_RELU) = bpb_op_unary,    SLOT(THRESHOLDED_RELU) = bpb_op_unary,
    SLOT(HARD_SIGMOID) = bpb_op_unary,  SLOT(HARDSWISH) = bpb_op_unary,
    SLOT(SHRINK) = bpb_op_unary,        SLOT(BITWISE_NOT) = bpb_op_unary,
    SLOT(CLIP) = bpb_op_clip,
    SLOT(FMOD) = bpb_op_binary,         SLOT(PRELU) = bpb_op_binary,
    SLOT(BITWISE_AND) = bpb_op_binary,  SLOT(BITWISE_OR) = bpb_op_binary,
    SLOT(BITWISE_XOR) = bpb_op_binary,  SLOT(BITSHIFT_LEFT) = bpb_op_binary,
    SLOT(BITSHIFT_RIGHT) = bpb_op_binary,
    SLOT(REDUCE_L1) = bpb_op_reduce,    SLOT(REDUCE_L2) = bpb_op_reduce,
    SLOT(REDUCE_SUM_SQUARE) = bpb_op_reduce, SLOT(REDUCE_LOG_SUM) = bpb_op_reduce,
    SLOT(REDUCE_VAR) = bpb_op_reduce,   SLOT(REDUCE_STD) = bpb_op_reduce,
    SLOT(REDUCE_ANY) = bpb_op_reduce,   SLOT(REDUCE_ALL) = bpb_op_reduce,
    SLOT(ARGMAX_LAST) = bpb_op_reduce,  SLOT(ARGMIN_LAST) = bpb_op_reduce,
    SLOT(HARDMAX) = bpb_op_hardmax,
    SLOT(CUMSUM) = bpb_op_scan,         SLOT(CUMPROD) = bpb_op_scan,
    SLOT(SORT) = bpb_op_sort,           SLOT(TOPK) = bpb_op_sort,
    SLOT(TRILU) = bpb_op_trilu,         SLOT(ONE_HOT) = bpb_op_one_hot,
    SLOT(GATHER_ELEMENTS) = bpb_op_gather_more, SLOT(GATHER_ND) = bpb_op_gather_more,
    SLOT(SCATTER_ELEMENTS) = bpb_op_scatter, SLOT(SCATTER_ND) = bpb_op_scatter,
    SLOT(GEMM) = bpb_op_gemm,
};

static bpb_op_fn kernel_of(bp_op op)
{
    if ((int)op < (int)BP_OP_FIRST_1_4 || (int)op >= (int)BP_OP_COUNT)
        return NULL;
    return KERNELS[op - BP_OP_FIRST_1_4];
}

bool bpb_op_implemented(bp_op op) { return kernel_of(op) != NULL; }

bool bpb_supports(void *dev, bp_op op, bp_dtype dtype)
{
    (void)dev;
    if ((int)op < (int)BP_OP_FIRST_1_4)
        return true;
    /* the table's kernels take every dtype the core accepts for the op */
    return bpb_op_implemented(op) || bpb_nn_supports(op, dtype);
}

bp_status bpb_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                 const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    bp_op_params p; /* in this build's layout, whichever core sent it */
    bp_op_params_read(params, &p);
    bpb_op_fn fn = kernel_of(op);
    if (fn)
        return fn(dev, op, &p, n_in, in, n_out, out);
    /* issue 16's nn codes (nn.h); any other code is refused there */
    return bpb_nn_op(dev, op, &p, n_in, in, n_out, out);
}

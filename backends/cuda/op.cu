/* The op entry of ABI 1.4 and 1.5: every op of BP_OP_LIST_1_4 and _1_5 arrives
 * here with its views and bp_op_params. One switch routes each to the file
 * that computes it, after the checks every op shares: the arity the op's
 * comment in opcodes.h promises, a dtype the support table (support.c)
 * declares, and the entry's scope (errors.cu: lost devices, the caller's
 * context, the outputs' memory and ready events). An op the table lists as
 * not implemented yet (a NOT_YET row) is BP_ERR_UNSUPPORTED_OP with the
 * table's reason; so is an op code this build does not know (appended by a
 * later ABI). */
#include <string.h>

#include "op.h"

typedef bp_status (*bpcu_op_fn)(bpcu_device *, const bpcu_opcall *);

typedef struct route {
    bpcu_op_fn fn;
    int32_t n_in, n_out;
} route;

static bool route_of(bp_op op, route *r)
{
    switch (op) {
    case BP_OP_ACOS: case BP_OP_ASIN: case BP_OP_ATAN: case BP_OP_ACOSH: case BP_OP_ASINH:
    case BP_OP_ATANH: case BP_OP_SINH: case BP_OP_COSH: case BP_OP_LOG1P: case BP_OP_EXPM1:
    case BP_OP_SOFTPLUS: case BP_OP_SOFTSIGN: case BP_OP_SILU: case BP_OP_SQUARE:
    case BP_OP_ELU: case BP_OP_SELU: case BP_OP_LEAKY_RELU: case BP_OP_THRESHOLDED_RELU:
    case BP_OP_HARD_SIGMOID: case BP_OP_HARDSWISH: case BP_OP_SHRINK: case BP_OP_BITWISE_NOT:
        *r = route{bpcu_more_unary, 1, 1};
        return true;
    case BP_OP_CLIP:
        *r = route{bpcu_more_clip, 3, 1};
        return true;
    case BP_OP_FMOD: case BP_OP_PRELU: case BP_OP_BITWISE_AND: case BP_OP_BITWISE_OR:
    case BP_OP_BITWISE_XOR: case BP_OP_BITSHIFT_LEFT: case BP_OP_BITSHIFT_RIGHT:
        *r = route{bpcu_more_binary, 2, 1};
        return true;
    case BP_OP_REDUCE_L1: case BP_OP_REDUCE_L2: case BP_OP_REDUCE_SUM_SQUARE:
    case BP_OP_REDUCE_LOG_SUM: case BP_OP_REDUCE_VAR: case BP_OP_REDUCE_STD:
    case BP_OP_REDUCE_ANY: case BP_OP_REDUCE_ALL: case BP_OP_ARGMAX_LAST: case BP_OP_ARGMIN_LAST:
        *r = route{bpcu_more_reduce, 1, 1};
        return true;
    case BP_OP_HARDMAX:
        *r = route{bpcu_more_hardmax, 1, 1};
        return true;
    case BP_OP_CUMSUM: case BP_OP_CUMPROD:
        *r = route{bpcu_more_scan, 1, 1};
        return true;
    case BP_OP_SORT: case BP_OP_TOPK:
        *r = route{bpcu_more_sort, 1, 2};
        return true;
    case BP_OP_TRILU:
        *r = route{bpcu_more_trilu, 1, 1};
        return true;
    case BP_OP_ONE_HOT:
        *r = route{bpcu_more_one_hot, 2, 1};
        return true;
    case BP_OP_GATHER_ELEMENTS: case BP_OP_GATHER_ND:
        *r = route{bpcu_more_gather, 2, 1};
        return true;
    case BP_OP_SCATTER_ELEMENTS: case BP_OP_SCATTER_ND:
        *r = route{bpcu_more_scatter, 3, 1};
        return true;
    case BP_OP_GEMM:
        *r = route{bpcu_more_gemm, 3, 1};
        return true;
    case BP_OP_CONV:
        *r = route{bpcu_nn_conv, 3, 1};
        return true;
    case BP_OP_CONV_TRANSPOSE:
        *r = route{bpcu_nn_conv_transpose, 3, 1};
        return true;
    case BP_OP_MAX_POOL:
        *r = route{bpcu_nn_pool, 1, 2};
        return true;
    case BP_OP_AVERAGE_POOL:
        *r = route{bpcu_nn_pool, 1, 1};
        return true;
    case BP_OP_LRN:
        *r = route{bpcu_nn_lrn, 1, 1};
        return true;
    case BP_OP_BATCH_NORM:
        *r = route{bpcu_nn_norm, 5, 1};
        return true;
    case BP_OP_INSTANCE_NORM:
        *r = route{bpcu_nn_norm, 3, 1};
        return true;
    case BP_OP_LAYER_NORM:
        *r = route{bpcu_nn_norm, 3, 3};
        return true;
    case BP_OP_RMS_NORM:
        *r = route{bpcu_nn_norm, 2, 1};
        return true;
    case BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS:
        *r = route{bpcu_nn_loss, 3, 2};
        return true;
    case BP_OP_NLL_LOSS:
        *r = route{bpcu_nn_loss, 3, 1};
        return true;
    case BP_OP_RESIZE:
        *r = route{bpcu_nn_resize, 1, 1};
        return true;
    default:
        return false;
    }
}

/* Inputs that may be left out (NULL): clip's bounds, gemm's c, the
 * convolutions' bias, layer_norm's bias, rms_norm's scale, the losses'
 * weights (opcodes.h). */
static bool optional_input(bp_op op, int32_t k)
{
    switch (op) {
    case BP_OP_CLIP: return k >= 1;
    case BP_OP_GEMM: case BP_OP_CONV: case BP_OP_CONV_TRANSPOSE: case BP_OP_LAYER_NORM:
    case BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS: case BP_OP_NLL_LOSS:
        return k == 2;
    case BP_OP_RMS_NORM: return k == 1;
    default: return false;
    }
}

/* Outputs that may be left out (NULL): max_pool's indices, layer_norm's
 * mean and inv_std, softmax_cross_entropy_loss's log_prob. The first
 * output is always there. */
static bool optional_output(bp_op op, int32_t k)
{
    return k >= 1 && (op == BP_OP_MAX_POOL || op == BP_OP_LAYER_NORM ||
                      op == BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS);
}

bp_status bpcu_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                  const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    bpcu_device *d = (bpcu_device *)dev;
    route r;
    if (!route_of(op, &r)) {
        const char *why = bpcu_op_missing(op); /* a NOT_YET row */
        if (why)
            return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s is %s", bp_op_name(op), why);
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: op code %d (%s) is not implemented by "
                         "this build of the plugin", (int)op, bp_op_name(op));
    }
    bool ok = n_in == r.n_in && n_out == r.n_out && in && out;
    for (int32_t k = 0; ok && k < n_in; k++)
        ok = in[k] || optional_input(op, k);
    for (int32_t k = 0; ok && k < n_out; k++)
        ok = out[k] || optional_output(op, k);
    if (!ok)
        return bpcu_fail(d, BP_ERR_INVALID_ARGUMENT, "cuda: %s takes %d inputs and %d outputs "
                         "(opcodes.h), not %d and %d", bp_op_name(op), (int)r.n_in,
                         (int)r.n_out, (int)n_in, (int)n_out);
    if (!bpcu_op_supported(op, in[0]->dtype)) {
        const char *why = bpcu_op_missing(op);
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s is not implemented for %s%s%s",
                         bp_op_name(op), bp_dtype_name(in[0]->dtype), why ? ": " : "",
                         why ? why : "");
    }
    bpcu_opcall c;
    memset(&c, 0, sizeof c);
    c.op = op;
    bp_op_params_read(params, &c.p); /* in this build's layout, whichever core sent it */
    for (int32_t k = 0; k < n_in; k++)
        c.in[k] = in[k];
    for (int32_t k = 0; k < n_out; k++)
        c.out[k] = out[k];
    bpcu_scope scope(d, bp_op_name(op), c.out[0], {c.in[0], c.in[1], c.in[2], c.in[3], c.in[4]},
                     c.out[1], c.out[2]);
    if (scope.status != BP_OK)
        return scope.status;
    return r.fn(d, &c);
}

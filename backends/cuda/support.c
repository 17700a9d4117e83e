/* The cuda plugin's support table for the ops of ABI 1.4 (support.h). Every
 * op runs for every dtype the core accepts; a row whose `runs` is smaller
 * than its `accepts` must say why in `missing` (the test enforces it), so a
 * gap is a decision on record, never an accident. An op appended to
 * BP_OP_LIST_1_4 needs a row before the test passes: ROW once the plugin
 * computes it, NOT_YET until then: what the core accepts, nothing run, and
 * the reason (supports() says false for every dtype, and the op entry
 * answers BP_ERR_UNSUPPORTED_OP with that reason). */
#include "support.h"

#define ROW(NAME, accepts) {BP_OP_##NAME, accepts, accepts, NULL}
#define NOT_YET(NAME, accepts, why) {BP_OP_##NAME, accepts, 0, why}

static const bpcu_support table[] = {
    /* elementwise: elementwise_more.cu, clip.cu */
    ROW(ACOS, BPCU_FLOATS), ROW(ASIN, BPCU_FLOATS), ROW(ATAN, BPCU_FLOATS),
    ROW(ACOSH, BPCU_FLOATS), ROW(ASINH, BPCU_FLOATS), ROW(ATANH, BPCU_FLOATS),
    ROW(SINH, BPCU_FLOATS), ROW(COSH, BPCU_FLOATS), ROW(LOG1P, BPCU_FLOATS),
    ROW(EXPM1, BPCU_FLOATS), ROW(SOFTPLUS, BPCU_FLOATS), ROW(SOFTSIGN, BPCU_FLOATS),
    ROW(SILU, BPCU_FLOATS), ROW(SQUARE, BPCU_NUMERIC), ROW(ELU, BPCU_FLOATS),
    ROW(SELU, BPCU_FLOATS), ROW(LEAKY_RELU, BPCU_FLOATS), ROW(THRESHOLDED_RELU, BPCU_FLOATS),
    ROW(HARD_SIGMOID, BPCU_FLOATS), ROW(HARDSWISH, BPCU_FLOATS), ROW(SHRINK, BPCU_NUMERIC),
    ROW(BITWISE_NOT, BPCU_INTS), ROW(CLIP, BPCU_NUMERIC),
    ROW(FMOD, BPCU_NUMERIC), ROW(PRELU, BPCU_NUMERIC), ROW(BITWISE_AND, BPCU_INTS),
    ROW(BITWISE_OR, BPCU_INTS), ROW(BITWISE_XOR, BPCU_INTS), ROW(BITSHIFT_LEFT, BPCU_INTS),
    ROW(BITSHIFT_RIGHT, BPCU_INTS),
    /* reductions: reduce_more.cu */
    ROW(REDUCE_L1, BPCU_NUMERIC), ROW(REDUCE_L2, BPCU_FLOATS),
    ROW(REDUCE_SUM_SQUARE, BPCU_NUMERIC), ROW(REDUCE_LOG_SUM, BPCU_FLOATS),
    ROW(REDUCE_VAR, BPCU_FLOATS), ROW(REDUCE_STD, BPCU_FLOATS), ROW(REDUCE_ANY, BPCU_BOOLS),
    ROW(REDUCE_ALL, BPCU_BOOLS), ROW(ARGMAX_LAST, BPCU_NUMERIC), ROW(ARGMIN_LAST, BPCU_NUMERIC),
    /* along one axis: hardmax.cu, scan.cu, sort.cu */
    ROW(HARDMAX, BPCU_FLOATS), ROW(CUMSUM, BPCU_NUMERIC), ROW(CUMPROD, BPCU_NUMERIC),
    ROW(SORT, BPCU_NUMERIC), ROW(TOPK, BPCU_NUMERIC),
    /* indexing: trilu.cu, one_hot.cu (asked with the indices' dtype),
     * gather_more.cu, scatter.cu (x's dtype) */
    ROW(TRILU, BPCU_ALL), ROW(ONE_HOT, BPCU_NUMERIC), ROW(GATHER_ELEMENTS, BPCU_ALL),
    ROW(GATHER_ND, BPCU_ALL), ROW(SCATTER_ELEMENTS, BPCU_ALL), ROW(SCATTER_ND, BPCU_ALL),
    /* gemm.cu */
    ROW(GEMM, BPCU_NUMERIC),
    /* nn.h's ops (issue 16): conv.cu, conv_transpose.cu (im2col / col2im + cuBLAS),
     * pool.cu, lrn.cu, norm.cu, loss.cu, resize.cu (resize's linear and cubic
     * modes: floats, as the core accepts them) */
    ROW(CONV, BPCU_FLOATS), ROW(CONV_TRANSPOSE, BPCU_FLOATS),
    ROW(MAX_POOL, BPCU_NUMERIC), ROW(AVERAGE_POOL, BPCU_FLOATS),
    ROW(LRN, BPCU_FLOATS), ROW(BATCH_NORM, BPCU_FLOATS),
    ROW(INSTANCE_NORM, BPCU_FLOATS), ROW(LAYER_NORM, BPCU_FLOATS),
    ROW(RMS_NORM, BPCU_FLOATS),
    ROW(SOFTMAX_CROSS_ENTROPY_LOSS, BPCU_FLOATS),
    ROW(NLL_LOSS, BPCU_FLOATS),
    ROW(RESIZE, BPCU_NUMERIC),
};

const bpcu_support *bpcu_support_table(size_t *rows)
{
    *rows = sizeof table / sizeof table[0];
    return table;
}

static const bpcu_support *row_of(bp_op op)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].op == op)
            return &table[i];
    return NULL;
}

const char *bpcu_op_missing(bp_op op)
{
    const bpcu_support *r = row_of(op);
    return r ? r->missing : NULL;
}

bool bpcu_op_supported(bp_op op, bp_dtype dtype)
{
    if (!bp_dtype_valid((int)dtype))
        return false;
    const bpcu_support *r = row_of(op);
    return r && (r->runs & BPCU_DT(dtype)) != 0;
}

/* bpt_op_call: one call per op, by kind where the kind has a generic
 * function (bp_unary, bp_binary, bp_reduce), else by op. */
#include <criterion/criterion.h>

#include "op_calls.h"

static bp_tensor *zeros(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape)
{
    bp_tensor *t = NULL;
    bp_status st = bp_zeros(be, dt, rank, shape, &t);
    cr_assert_eq(st, BP_OK, "bp_zeros: %s", bp_last_error());
    return t;
}

/* The operands of op as its row lists them (in[k] for IN's name k). */
static void operands(bp_backend *be, bp_op op, bp_dtype dt, bp_tensor **in)
{
    static const int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s11[2] = {1, 1}, s13[2] = {1, 3};
    static const int64_t s2[1] = {2}, s3[1] = {3}, s123[3] = {1, 2, 3}, s221[3] = {2, 2, 1};
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: case BP_KIND_REDUCE: case BP_KIND_MOVEMENT: case BP_KIND_SOFTMAX:
    case BP_KIND_HARDMAX: case BP_KIND_SCAN: case BP_KIND_SORT: case BP_KIND_TRILU:
    case BP_KIND_CLIP:
        in[0] = zeros(be, dt, 2, s23);
        return;
    case BP_KIND_BINARY:
        in[0] = zeros(be, dt, 2, s23);
        in[1] = zeros(be, dt, 2, s23);
        return;
    case BP_KIND_WHERE:
        in[0] = zeros(be, BP_BOOL, 2, s23);
        in[1] = zeros(be, dt, 2, s23);
        in[2] = zeros(be, dt, 2, s23);
        return;
    case BP_KIND_MATMUL: case BP_KIND_GEMM:
        in[0] = zeros(be, dt, 2, s23);
        in[1] = zeros(be, dt, 2, s32);
        return;
    case BP_KIND_GATHER:
        in[0] = zeros(be, dt, 2, s23);
        in[1] = zeros(be, BP_I64, 1, s2);
        return;
    case BP_KIND_INDEX: case BP_KIND_SCATTER:
        in[0] = zeros(be, dt, 2, s23);
        in[1] = zeros(be, BP_I64, 2, op == BP_OP_GATHER_ND || op == BP_OP_SCATTER_ND ? s11 : s23);
        if (bp_op_kind_of(op) == BP_KIND_SCATTER)
            in[2] = zeros(be, dt, 2, op == BP_OP_SCATTER_ND ? s13 : s23);
        return;
    case BP_KIND_ONE_HOT:
        in[0] = zeros(be, dt, 2, s23);
        in[1] = zeros(be, BP_F32, 1, s2);
        return;
    case BP_KIND_CONV:
        in[0] = zeros(be, dt, 3, s123);
        in[1] = zeros(be, dt, 3, s221);
        return;
    case BP_KIND_POOL: case BP_KIND_LRN:
        in[0] = zeros(be, dt, 3, s123);
        return;
    case BP_KIND_NORM:
        if (op == BP_OP_LAYER_NORM || op == BP_OP_RMS_NORM) {
            in[0] = zeros(be, dt, 2, s23);
            in[1] = zeros(be, dt, 1, s3);
        } else {
            in[0] = zeros(be, dt, 3, s123); /* (N 1, C 2, L 3) */
            for (int k = 1; k < (op == BP_OP_BATCH_NORM ? 5 : 3); k++)
                in[k] = zeros(be, dt, 1, s2);
        }
        return;
    case BP_KIND_LOSS: /* scores (N 2, C 3) */
        in[0] = zeros(be, dt, 2, s23);
        in[1] = zeros(be, BP_I64, 1, s2);
        return;
    case BP_KIND_RESIZE:
        in[0] = zeros(be, dt, 2, s23);
        return;
    default: /* creation: no inputs */
        return;
    }
}

static bp_status movement(bp_op op, bp_dtype dt, bp_tensor *const *in, bp_tensor **o)
{
    static const int64_t zero[2] = {0, 0}, one[2] = {1, 1}, two3[3] = {2, 2, 3};
    switch (op) {
    case BP_OP_COPY: return bp_cast(in[0], dt, o);
    case BP_OP_CAST: return bp_cast(in[0], dt == BP_F32 ? BP_F64 : BP_F32, o);
    case BP_OP_TRANSPOSE: return bp_transpose(in[0], NULL, o);
    case BP_OP_SLICE: return bp_slice(in[0], zero, one, NULL, o);
    case BP_OP_CONCAT: return bp_concat(2, (const bp_tensor *const[]){in[0], in[0]}, 0, o);
    case BP_OP_BROADCAST_TO: return bp_broadcast_to(in[0], 3, two3, o);
    default: return bp_pad(in[0], one, zero, 0.0, o);
    }
}

static bp_status call(bp_backend *be, bp_op op, bp_dtype dt, bp_tensor *const *in, bp_tensor **o1,
                      bp_tensor **o2)
{
    static const int64_t s23[2] = {2, 3};
    static const double twice[2] = {1.0, 2.0};
    bp_window win = BP_WINDOW_INIT;
    win.kernel[0] = 1;
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: return bp_unary(op, in[0], o1);
    case BP_KIND_BINARY: return bp_binary(op, in[0], in[1], o1);
    case BP_KIND_REDUCE: return bp_reduce(op, in[0], 0, NULL, false, o1);
    case BP_KIND_WHERE: return bp_where(in[0], in[1], in[2], o1);
    case BP_KIND_MATMUL: return bp_matmul(in[0], in[1], o1);
    case BP_KIND_MOVEMENT: return movement(op, dt, in, o1);
    case BP_KIND_GATHER: return bp_gather(in[0], in[1], 0, o1);
    case BP_KIND_FILL: return bp_full(be, dt, 2, s23, 1.0, o1);
    case BP_KIND_ARANGE: return bp_arange(be, dt, 0, 4, 1, o1);
    default: break;
    }
    switch (op) {
    case BP_OP_RANDOM_UNIFORM: return bp_random_uniform(be, dt, 2, s23, 1, 0, 0.0, 1.0, o1);
    case BP_OP_RANDOM_NORMAL: return bp_random_normal(be, dt, 2, s23, 1, 0, 0.0, 1.0, o1);
    case BP_OP_SOFTMAX: return bp_softmax(in[0], 1, o1);
    case BP_OP_LOG_SOFTMAX: return bp_log_softmax(in[0], 1, o1);
    case BP_OP_CLIP: return bp_clip(in[0], in[1], in[2], o1);
    case BP_OP_HARDMAX: return bp_hardmax(in[0], 1, o1);
    case BP_OP_CUMSUM: return bp_cumsum(in[0], 1, false, false, o1);
    case BP_OP_CUMPROD: return bp_cumprod(in[0], 1, false, false, o1);
    case BP_OP_SORT: return bp_sort(in[0], 1, false, o1, o2);
    case BP_OP_TOPK: return bp_topk(in[0], 2, 1, true, true, o1, o2);
    case BP_OP_TRILU: return bp_trilu(in[0], true, 0, o1);
    case BP_OP_ONE_HOT: return bp_one_hot(in[0], 4, -1, in[1], o1);
    case BP_OP_GATHER_ELEMENTS: return bp_gather_elements(in[0], in[1], 0, o1);
    case BP_OP_GATHER_ND: return bp_gather_nd(in[0], in[1], 0, o1);
    case BP_OP_SCATTER_ELEMENTS:
        return bp_scatter_elements(in[0], in[1], in[2], 0, BP_SCATTER_NONE, o1);
    case BP_OP_SCATTER_ND: return bp_scatter_nd(in[0], in[1], in[2], BP_SCATTER_NONE, o1);
    case BP_OP_GEMM: return bp_gemm(in[0], in[1], in[2], 1.0, 0.0, false, false, o1);
    case BP_OP_CONV: return bp_conv(in[0], in[1], in[2], NULL, o1);
    case BP_OP_CONV_TRANSPOSE: return bp_conv_transpose(in[0], in[1], in[2], NULL, o1);
    case BP_OP_MAX_POOL: return bp_max_pool(in[0], &win, o1, o2);
    case BP_OP_AVERAGE_POOL: return bp_average_pool(in[0], &win, o1);
    case BP_OP_LRN: return bp_lrn(in[0], 1, 1e-4, 0.75, 1.0, o1);
    case BP_OP_BATCH_NORM: return bp_batch_norm(in[0], in[1], in[2], in[3], in[4], 1e-5, o1);
    case BP_OP_INSTANCE_NORM: return bp_instance_norm(in[0], in[1], in[2], 1e-5, o1);
    case BP_OP_LAYER_NORM: return bp_layer_norm(in[0], -1, in[1], in[2], 1e-5, o1, NULL, NULL);
    case BP_OP_RMS_NORM: return bp_rms_norm(in[0], -1, in[1], 1e-5, o1);
    case BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS:
        return bp_softmax_cross_entropy_loss(in[0], in[1], in[2], BP_LOSS_MEAN, NULL, o1, o2);
    case BP_OP_NLL_LOSS: return bp_nll_loss(in[0], in[1], in[2], BP_LOSS_MEAN, NULL, o1);
    case BP_OP_RESIZE: return bp_resize(in[0], twice, NULL, NULL, o1); /* nearest */
    default:
        cr_assert_fail("no call for %s in tests/support/op_calls.c: add it", bp_op_name(op));
        return BP_ERR_INVALID_ARGUMENT;
    }
}

bp_status bpt_op_call(bp_backend *be, bp_op op, bp_dtype dt, int32_t null_input)
{
    bp_tensor *in[5] = {NULL, NULL, NULL, NULL, NULL}, *o1 = NULL, *o2 = NULL;
    operands(be, op, dt, in);
    bp_tensor *held = NULL;
    if (null_input >= 0 && null_input < 5) {
        held = in[null_input];
        in[null_input] = NULL;
    }
    bp_status st = call(be, op, dt, in, &o1, &o2);
    bp_tensor_release(held);
    for (int k = 0; k < 5; k++)
        bp_tensor_release(in[k]);
    bp_tensor_release(o1);
    bp_tensor_release(o2);
    return st;
}

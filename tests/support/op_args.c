/* bpt_op_invoke: one call per op, by kind where the kind has a generic
 * function (bp_unary, bp_binary, bp_reduce), else by op. */
#include <string.h>

#include "op_args.h"

void bpt_op_args_default(bp_op op, bp_backend *be, bp_dtype dt, bpt_op_args *a)
{
    static const int64_t s23[2] = {2, 3}, zero[BP_MAX_RANK] = {0};
    static const int64_t one[BP_MAX_RANK] = {1, 1, 1, 1, 1, 1, 1, 1};
    static const int64_t two23[3] = {2, 2, 3};
    static const double twice[BP_MAX_RANK] = {1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
    static const bp_window win = {.struct_size = sizeof(bp_window), .kernel = {1}};
    memset(a, 0, sizeof *a);
    a->backend = be;
    a->dtype = op == BP_OP_CAST ? (dt == BP_F32 ? BP_F64 : BP_F32) : dt;
    a->rank = op == BP_OP_BROADCAST_TO ? 3 : 2;
    a->shape = op == BP_OP_BROADCAST_TO ? two23 : s23;
    a->axis = op == BP_OP_GATHER || op == BP_OP_CONCAT || bp_op_kind_of(op) == BP_KIND_INDEX ||
                      bp_op_kind_of(op) == BP_KIND_SCATTER
                  ? 0
                  : -1;
    a->k = op == BP_OP_ONE_HOT ? 4 : op == BP_OP_TOPK ? 2 : op == BP_OP_TRILU ? 0 : 1;
    a->flag0 = op == BP_OP_TOPK || op == BP_OP_TRILU;
    a->flag1 = op == BP_OP_TOPK;
    a->f0 = op == BP_OP_SELU ? 1.5 : op == BP_OP_LRN ? 1e-4 : 1.0;
    a->f1 = op == BP_OP_HARD_SIGMOID || op == BP_OP_SHRINK ? 0.5 : op == BP_OP_LRN ? 0.75 : 1.0;
    a->f2 = 1.0;
    if (op == BP_OP_RANDOM_UNIFORM || op == BP_OP_RANDOM_NORMAL) {
        a->f0 = 0.0;
        a->seed = 1;
    }
    if (op == BP_OP_GEMM)
        a->f1 = 0.0;
    if (bp_op_kind_of(op) == BP_KIND_NORM)
        a->f0 = 1e-5;
    if (op == BP_OP_ARANGE)
        a->f0 = 0, a->f1 = 4, a->f2 = 1;
    a->starts = zero;
    a->stops = one;
    a->before = one;
    a->after = zero;
    a->n_concat = 2;
    a->window = &win;
    a->reduction = bp_op_kind_of(op) == BP_KIND_LOSS ? BP_LOSS_MEAN : BP_SCATTER_NONE;
    a->scales = twice;
}

/* zeros of (rank, shape) into *t, unless an earlier one failed. */
static void zeros(bp_status *st, bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                  bp_tensor **t)
{
    if (*st == BP_OK)
        *st = bp_zeros(be, dt, rank, shape, t);
}

static void kind_operands(bp_status *st, bp_backend *be, bp_op op, bp_dtype dt, bp_tensor **in)
{
    static const int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s11[2] = {1, 1}, s13[2] = {1, 3};
    static const int64_t s2[1] = {2}, s3[1] = {3}, s123[3] = {1, 2, 3}, s221[3] = {2, 2, 1};
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: case BP_KIND_REDUCE: case BP_KIND_MOVEMENT: case BP_KIND_SOFTMAX:
    case BP_KIND_HARDMAX: case BP_KIND_SCAN: case BP_KIND_SORT: case BP_KIND_TRILU:
    case BP_KIND_CLIP:
        zeros(st, be, dt, 2, s23, &in[0]);
        return;
    case BP_KIND_BINARY:
        zeros(st, be, dt, 2, s23, &in[0]);
        zeros(st, be, dt, 2, s23, &in[1]);
        return;
    case BP_KIND_WHERE:
        zeros(st, be, BP_BOOL, 2, s23, &in[0]);
        zeros(st, be, dt, 2, s23, &in[1]);
        zeros(st, be, dt, 2, s23, &in[2]);
        return;
    case BP_KIND_MATMUL: case BP_KIND_GEMM:
        zeros(st, be, dt, 2, s23, &in[0]);
        zeros(st, be, dt, 2, s32, &in[1]);
        return;
    case BP_KIND_GATHER:
        zeros(st, be, dt, 2, s23, &in[0]);
        zeros(st, be, BP_I64, 1, s2, &in[1]);
        return;
    case BP_KIND_INDEX: case BP_KIND_SCATTER:
        zeros(st, be, dt, 2, s23, &in[0]);
        zeros(st, be, BP_I64, 2, op == BP_OP_GATHER_ND || op == BP_OP_SCATTER_ND ? s11 : s23,
              &in[1]);
        if (bp_op_kind_of(op) == BP_KIND_SCATTER)
            zeros(st, be, dt, 2, op == BP_OP_SCATTER_ND ? s13 : s23, &in[2]);
        return;
    case BP_KIND_ONE_HOT:
        zeros(st, be, dt, 2, s23, &in[0]);
        zeros(st, be, BP_F32, 1, s2, &in[1]);
        return;
    case BP_KIND_CONV:
        zeros(st, be, dt, 3, s123, &in[0]);
        zeros(st, be, dt, 3, s221, &in[1]);
        return;
    case BP_KIND_POOL: case BP_KIND_LRN:
        zeros(st, be, dt, 3, s123, &in[0]);
        return;
    case BP_KIND_NORM:
        if (op == BP_OP_LAYER_NORM || op == BP_OP_RMS_NORM) {
            zeros(st, be, dt, 2, s23, &in[0]);
            zeros(st, be, dt, 1, s3, &in[1]);
        } else {
            zeros(st, be, dt, 3, s123, &in[0]); /* (N 1, C 2, L 3) */
            for (int k = 1; k < (op == BP_OP_BATCH_NORM ? 5 : 3); k++)
                zeros(st, be, dt, 1, s2, &in[k]);
        }
        return;
    case BP_KIND_LOSS: /* scores (N 2, C 3) */
        zeros(st, be, dt, 2, s23, &in[0]);
        zeros(st, be, BP_I64, 1, s2, &in[1]);
        return;
    case BP_KIND_RESIZE:
        zeros(st, be, dt, 2, s23, &in[0]);
        return;
    default: /* creation: no inputs */
        return;
    }
}

bp_status bpt_op_operands(bp_backend *be, bp_op op, bp_dtype dt, bp_tensor **in)
{
    bp_status st = BP_OK;
    kind_operands(&st, be, op, dt, in);
    if (st != BP_OK)
        for (int k = 0; k < 5; k++) {
            bp_tensor_release(in[k]);
            in[k] = NULL;
        }
    return st;
}

static bp_status movement(bp_op op, bp_tensor *const *in, const bpt_op_args *a, bp_tensor **o)
{
    switch (op) {
    case BP_OP_COPY: return bp_cast(in[0], in[0] ? bp_tensor_dtype(in[0]) : a->dtype, o);
    case BP_OP_CAST: return bp_cast(in[0], a->dtype, o);
    case BP_OP_TRANSPOSE: return bp_transpose(in[0], a->perm, o);
    case BP_OP_SLICE: return bp_slice(in[0], a->starts, a->stops, a->steps, o);
    case BP_OP_CONCAT: {
        const bp_tensor *xs[8];
        int32_t n = a->n_concat < 1 ? 1 : a->n_concat > 8 ? 8 : a->n_concat;
        for (int32_t k = 0; k < n; k++)
            xs[k] = in[0];
        return bp_concat(a->n_concat < 1 ? a->n_concat : n, xs, a->axis, o);
    }
    case BP_OP_BROADCAST_TO: return bp_broadcast_to(in[0], a->rank, a->shape, o);
    default: return bp_pad(in[0], a->before, a->after, a->f0, o);
    }
}

static bool by_kind(bp_op op, bp_tensor *const *in, const bpt_op_args *a, bp_tensor **o1,
                    bp_status *st)
{
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: *st = bp_unary(op, in[0], o1); return true;
    case BP_KIND_BINARY: *st = bp_binary(op, in[0], in[1], o1); return true;
    case BP_KIND_REDUCE:
        *st = op == BP_OP_REDUCE_VAR ? bp_reduce_var(in[0], a->n_axes, a->axes, a->keepdims, a->f0, o1)
              : op == BP_OP_REDUCE_STD
                  ? bp_reduce_std(in[0], a->n_axes, a->axes, a->keepdims, a->f0, o1)
                  : bp_reduce(op, in[0], a->n_axes, a->axes, a->keepdims, o1);
        return true;
    case BP_KIND_WHERE: *st = bp_where(in[0], in[1], in[2], o1); return true;
    case BP_KIND_MATMUL: *st = bp_matmul(in[0], in[1], o1); return true;
    case BP_KIND_MOVEMENT: *st = movement(op, in, a, o1); return true;
    case BP_KIND_GATHER: *st = bp_gather(in[0], in[1], a->axis, o1); return true;
    case BP_KIND_FILL: *st = bp_full(a->backend, a->dtype, a->rank, a->shape, a->f0, o1); return true;
    case BP_KIND_ARANGE: *st = bp_arange(a->backend, a->dtype, a->f0, a->f1, a->f2, o1); return true;
    default: return false;
    }
}

bool bpt_op_invoke(bp_op op, bp_tensor *const *in, const bpt_op_args *a, bp_tensor **o1,
                   bp_tensor **o2, bp_status *st)
{
    if ((unsigned)op >= (unsigned)BP_OP_COUNT)
        return false;
    if (by_kind(op, in, a, o1, st))
        return true;
    const bp_loss_reduction lr = (bp_loss_reduction)a->reduction;
    const bp_scatter_reduction sr = (bp_scatter_reduction)a->reduction;
    switch (op) {
    case BP_OP_RANDOM_UNIFORM:
        *st = bp_random_uniform(a->backend, a->dtype, a->rank, a->shape, a->seed, a->offset, a->f0,
                                a->f1, o1);
        break;
    case BP_OP_RANDOM_NORMAL:
        *st = bp_random_normal(a->backend, a->dtype, a->rank, a->shape, a->seed, a->offset, a->f0,
                               a->f1, o1);
        break;
    case BP_OP_SOFTMAX: *st = bp_softmax(in[0], a->axis, o1); break;
    case BP_OP_LOG_SOFTMAX: *st = bp_log_softmax(in[0], a->axis, o1); break;
    case BP_OP_ELU: *st = bp_elu(in[0], a->f0, o1); break;
    case BP_OP_SELU: *st = bp_selu(in[0], a->f0, a->f1, o1); break;
    case BP_OP_LEAKY_RELU: *st = bp_leaky_relu(in[0], a->f0, o1); break;
    case BP_OP_THRESHOLDED_RELU: *st = bp_thresholded_relu(in[0], a->f0, o1); break;
    case BP_OP_HARD_SIGMOID: *st = bp_hard_sigmoid(in[0], a->f0, a->f1, o1); break;
    case BP_OP_SHRINK: *st = bp_shrink(in[0], a->f0, a->f1, o1); break;
    case BP_OP_CLIP: *st = bp_clip(in[0], in[1], in[2], o1); break;
    case BP_OP_HARDMAX: *st = bp_hardmax(in[0], a->axis, o1); break;
    case BP_OP_CUMSUM: *st = bp_cumsum(in[0], a->axis, a->flag0, a->flag1, o1); break;
    case BP_OP_CUMPROD: *st = bp_cumprod(in[0], a->axis, a->flag0, a->flag1, o1); break;
    case BP_OP_SORT: *st = bp_sort(in[0], a->axis, a->flag0, o1, o2); break;
    case BP_OP_TOPK: *st = bp_topk(in[0], a->k, a->axis, a->flag0, a->flag1, o1, o2); break;
    case BP_OP_TRILU: *st = bp_trilu(in[0], a->flag0, a->k, o1); break;
    case BP_OP_ONE_HOT: *st = bp_one_hot(in[0], a->k, a->axis, in[1], o1); break;
    case BP_OP_GATHER_ELEMENTS: *st = bp_gather_elements(in[0], in[1], a->axis, o1); break;
    case BP_OP_GATHER_ND: *st = bp_gather_nd(in[0], in[1], a->axis, o1); break;
    case BP_OP_SCATTER_ELEMENTS:
        *st = bp_scatter_elements(in[0], in[1], in[2], a->axis, sr, o1);
        break;
    case BP_OP_SCATTER_ND: *st = bp_scatter_nd(in[0], in[1], in[2], sr, o1); break;
    case BP_OP_GEMM:
        *st = bp_gemm(in[0], in[1], in[2], a->f0, a->f1, a->flag0, a->flag1, o1);
        break;
    case BP_OP_CONV: *st = bp_conv(in[0], in[1], in[2], a->window, o1); break;
    case BP_OP_CONV_TRANSPOSE: *st = bp_conv_transpose(in[0], in[1], in[2], a->window, o1); break;
    case BP_OP_MAX_POOL: *st = bp_max_pool(in[0], a->window, o1, o2); break;
    case BP_OP_AVERAGE_POOL: *st = bp_average_pool(in[0], a->window, o1); break;
    case BP_OP_LRN: *st = bp_lrn(in[0], a->k, a->f0, a->f1, a->f2, o1); break;
    case BP_OP_BATCH_NORM: *st = bp_batch_norm(in[0], in[1], in[2], in[3], in[4], a->f0, o1); break;
    case BP_OP_INSTANCE_NORM: *st = bp_instance_norm(in[0], in[1], in[2], a->f0, o1); break;
    case BP_OP_LAYER_NORM:
        *st = bp_layer_norm(in[0], a->axis, in[1], in[2], a->f0, o1, o2, NULL);
        break;
    case BP_OP_RMS_NORM: *st = bp_rms_norm(in[0], a->axis, in[1], a->f0, o1); break;
    case BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS:
        *st = bp_softmax_cross_entropy_loss(in[0], in[1], in[2], lr, a->ignore_index, o1, o2);
        break;
    case BP_OP_NLL_LOSS: *st = bp_nll_loss(in[0], in[1], in[2], lr, a->ignore_index, o1); break;
    case BP_OP_RESIZE: *st = bp_resize(in[0], a->scales, a->sizes, a->resize, o1); break;
    default: return false;
    }
    return true;
}

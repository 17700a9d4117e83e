/* The cuda plugin's support table for the ops of its op entry (ABI 1.4 and
 * 1.5; backends/cuda/support.c), checked without a GPU: one row per op of
 * opcodes.h's BP_OP_LIST_1_4 and BP_OP_LIST_1_5, what it runs within what the core accepts
 * (and a reason wherever it runs less), and `accepts` equal to the dtypes
 * the core's validation lets through, found by calling every op on the
 * binary backend: BP_ERR_DTYPE means refused, anything else (BP_OK, or
 * BP_ERR_UNSUPPORTED_OP from a backend without the op) means accepted. A
 * row for an op not implemented yet (support.c's NOT_YET) is held to the
 * same: it runs nothing, says why, and still records what the core accepts. */
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "support.h"

static const bp_op entry_ops[] = {
#define BPT_OP(NAME, name) BP_OP_##NAME,
    BP_OP_LIST_1_4(BPT_OP)
    BP_OP_LIST_1_5(BPT_OP)
#undef BPT_OP
};
#define N_ENTRY_OPS (sizeof entry_ops / sizeof entry_ops[0])

static const bpcu_support *row_of(bp_op op)
{
    size_t n = 0;
    const bpcu_support *t = bpcu_support_table(&n);
    for (size_t i = 0; i < n; i++)
        if (t[i].op == op)
            return &t[i];
    return NULL;
}

Test(cuda_support, every_op_of_the_op_entry_has_exactly_one_row)
{
    size_t n = 0;
    const bpcu_support *t = bpcu_support_table(&n);
    cr_assert_eq(n, N_ENTRY_OPS, "the table has %zu rows for %zu ops of BP_OP_LIST_1_4 and 1_5", n,
                 (size_t)N_ENTRY_OPS);
    for (size_t i = 0; i < N_ENTRY_OPS; i++) {
        size_t hits = 0;
        for (size_t j = 0; j < n; j++)
            hits += t[j].op == entry_ops[i];
        cr_expect_eq(hits, 1, "%s has %zu rows", bp_op_name(entry_ops[i]), hits);
        if (i < n) /* support.h: in opcodes.h's order */
            cr_expect_eq(t[i].op, entry_ops[i], "row %zu is %s, opcodes.h has %s there", i,
                         bp_op_name(t[i].op), bp_op_name(entry_ops[i]));
    }
}

Test(cuda_support, each_row_runs_what_the_core_accepts_or_says_why_not)
{
    for (size_t i = 0; i < N_ENTRY_OPS; i++) {
        const bpcu_support *r = row_of(entry_ops[i]);
        cr_assert_not_null(r, "%s", bp_op_name(entry_ops[i]));
        cr_expect_eq(r->runs & ~r->accepts, 0, "%s runs dtypes the core refuses",
                     bp_op_name(r->op));
        cr_expect(r->accepts != 0, "%s accepts no dtype", bp_op_name(r->op));
        if (r->runs != r->accepts)
            cr_expect(r->missing && *r->missing, "%s runs fewer dtypes than the core accepts "
                      "without saying why", bp_op_name(r->op));
        else
            cr_expect_null(r->missing, "%s gives a reason for a gap it does not have",
                           bp_op_name(r->op));
        cr_expect_eq(bpcu_op_missing(r->op), r->missing, "%s", bp_op_name(r->op));
    }
    cr_expect_null(bpcu_op_missing(BP_OP_COUNT));
    cr_expect_null(bpcu_op_missing(BP_OP_ADD));
}

/* nn.h's ops (issue 16) run on cuda for every dtype the core accepts:
 * the floats, and max_pool's and resize's (nearest) integers too. */
Test(cuda_support, nn_ops_run_every_dtype_the_core_accepts)
{
    const bp_op nn[] = {BP_OP_CONV, BP_OP_CONV_TRANSPOSE, BP_OP_MAX_POOL, BP_OP_AVERAGE_POOL,
                        BP_OP_LRN, BP_OP_BATCH_NORM, BP_OP_INSTANCE_NORM, BP_OP_LAYER_NORM,
                        BP_OP_RMS_NORM, BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, BP_OP_NLL_LOSS,
                        BP_OP_RESIZE};
    for (size_t i = 0; i < sizeof nn / sizeof nn[0]; i++) {
        const bpcu_support *r = row_of(nn[i]);
        cr_assert_not_null(r, "%s", bp_op_name(nn[i]));
        cr_expect_eq(r->runs, r->accepts, "%s", bp_op_name(nn[i]));
        cr_expect_null(bpcu_op_missing(nn[i]), "%s", bp_op_name(nn[i]));
        const bp_dtype fl[4] = {BP_F16, BP_BF16, BP_F32, BP_F64};
        for (int k = 0; k < 4; k++)
            cr_expect(bpcu_op_supported(nn[i], fl[k]), "%s / %s", bp_op_name(nn[i]),
                      bp_dtype_name(fl[k]));
        const bool ints = nn[i] == BP_OP_MAX_POOL || nn[i] == BP_OP_RESIZE;
        cr_expect_eq(bpcu_op_supported(nn[i], BP_I32), ints, "%s / i32", bp_op_name(nn[i]));
        cr_expect_not(bpcu_op_supported(nn[i], BP_BOOL), "%s / bool", bp_op_name(nn[i]));
    }
}

Test(cuda_support, supported_means_in_the_row_and_nothing_else)
{
    for (size_t i = 0; i < N_ENTRY_OPS; i++) {
        const bpcu_support *r = row_of(entry_ops[i]);
        cr_assert_not_null(r);
        for (int dt = 0; dt < BP_DTYPE_COUNT; dt++)
            cr_expect_eq(bpcu_op_supported(r->op, (bp_dtype)dt), (r->runs >> dt) & 1u,
                         "%s / %s", bp_op_name(r->op), bp_dtype_name((bp_dtype)dt));
        cr_expect_not(bpcu_op_supported(r->op, (bp_dtype)BP_DTYPE_COUNT));
        cr_expect_not(bpcu_op_supported(r->op, (bp_dtype)-1));
    }
    /* codes a later ABI appends, and the ops of 1.0 (their own entries) */
    cr_expect_not(bpcu_op_supported(BP_OP_COUNT, BP_F32));
    cr_expect_not(bpcu_op_supported((bp_op)(BP_OP_COUNT + 7), BP_F32));
    cr_expect_not(bpcu_op_supported(BP_OP_ADD, BP_F32));
}

/* ---- the core's side: what bp_<op> accepts for x of dtype dt ------------------------ */

static bp_tensor *zeros(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape)
{
    bp_tensor *t = NULL;
    BPT_OK(bp_zeros(be, dt, rank, shape, &t));
    return t;
}

/* Call op with valid shapes and every operand of dtype dt (indices i64,
 * one_hot's values f32); the status. */
static bp_status call(bp_backend *be, bp_op op, bp_dtype dt)
{
    const int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s11[2] = {1, 1}, s13[2] = {1, 3}, s2[1] = {2};
    const int64_t s123[3] = {1, 2, 3}, s221[3] = {2, 2, 1}, s3[1] = {3};
    const double twice[2] = {1.0, 2.0};
    bp_tensor *x = zeros(be, dt, 2, s23), *y = NULL, *o1 = NULL, *o2 = NULL;
    bp_tensor *idx = NULL, *aux = NULL, *xs = NULL;
    bp_window win = BP_WINDOW_INIT;
    win.kernel[0] = 1;
    bp_status st = BP_ERR_INVALID_ARGUMENT;
    switch (op) {
#define PLAIN(NAME, name) case BP_OP_##NAME: st = bp_##name(x, &o1); break;
        PLAIN(ACOS, acos) PLAIN(ASIN, asin) PLAIN(ATAN, atan) PLAIN(ACOSH, acosh)
        PLAIN(ASINH, asinh) PLAIN(ATANH, atanh) PLAIN(SINH, sinh) PLAIN(COSH, cosh)
        PLAIN(LOG1P, log1p) PLAIN(EXPM1, expm1) PLAIN(SOFTPLUS, softplus)
        PLAIN(SOFTSIGN, softsign) PLAIN(SILU, silu) PLAIN(SQUARE, square)
        PLAIN(HARDSWISH, hardswish) PLAIN(BITWISE_NOT, bitwise_not)
#undef PLAIN
    case BP_OP_ELU: st = bp_elu(x, 1.0, &o1); break;
    case BP_OP_SELU: st = bp_selu(x, 1.5, 1.0, &o1); break;
    case BP_OP_LEAKY_RELU: st = bp_leaky_relu(x, 0.01, &o1); break;
    case BP_OP_THRESHOLDED_RELU: st = bp_thresholded_relu(x, 1.0, &o1); break;
    case BP_OP_HARD_SIGMOID: st = bp_hard_sigmoid(x, 0.2, 0.5, &o1); break;
    case BP_OP_SHRINK: st = bp_shrink(x, 0.0, 0.5, &o1); break;
    case BP_OP_CLIP: st = bp_clip(x, NULL, NULL, &o1); break;
#define TWO(NAME, name) case BP_OP_##NAME: y = zeros(be, dt, 2, s23); st = bp_##name(x, y, &o1); break;
        TWO(FMOD, fmod) TWO(PRELU, prelu) TWO(BITWISE_AND, bitwise_and)
        TWO(BITWISE_OR, bitwise_or) TWO(BITWISE_XOR, bitwise_xor)
        TWO(BITSHIFT_LEFT, bitshift_left) TWO(BITSHIFT_RIGHT, bitshift_right)
#undef TWO
#define RED(NAME, name) case BP_OP_##NAME: st = bp_##name(x, 0, NULL, false, &o1); break;
        RED(REDUCE_L1, reduce_l1) RED(REDUCE_L2, reduce_l2)
        RED(REDUCE_SUM_SQUARE, reduce_sum_square) RED(REDUCE_LOG_SUM, reduce_log_sum)
        RED(REDUCE_ANY, reduce_any) RED(REDUCE_ALL, reduce_all)
        RED(ARGMAX_LAST, argmax_last) RED(ARGMIN_LAST, argmin_last)
#undef RED
    case BP_OP_REDUCE_VAR: st = bp_reduce_var(x, 0, NULL, false, 1.0, &o1); break;
    case BP_OP_REDUCE_STD: st = bp_reduce_std(x, 0, NULL, false, 1.0, &o1); break;
    case BP_OP_HARDMAX: st = bp_hardmax(x, 1, &o1); break;
    case BP_OP_CUMSUM: st = bp_cumsum(x, 1, false, false, &o1); break;
    case BP_OP_CUMPROD: st = bp_cumprod(x, 1, false, false, &o1); break;
    case BP_OP_SORT: st = bp_sort(x, 1, false, &o1, &o2); break;
    case BP_OP_TOPK: st = bp_topk(x, 2, 1, true, true, &o1, &o2); break;
    case BP_OP_TRILU: st = bp_trilu(x, true, 0, &o1); break;
    case BP_OP_ONE_HOT:
        aux = zeros(be, BP_F32, 1, s2);
        st = bp_one_hot(x, 4, -1, aux, &o1);
        break;
    case BP_OP_GATHER_ELEMENTS:
        idx = zeros(be, BP_I64, 2, s23);
        st = bp_gather_elements(x, idx, 0, &o1);
        break;
    case BP_OP_GATHER_ND:
        idx = zeros(be, BP_I64, 2, s11);
        st = bp_gather_nd(x, idx, 0, &o1);
        break;
    case BP_OP_SCATTER_ELEMENTS:
        idx = zeros(be, BP_I64, 2, s23);
        y = zeros(be, dt, 2, s23);
        st = bp_scatter_elements(x, idx, y, 0, BP_SCATTER_NONE, &o1);
        break;
    case BP_OP_SCATTER_ND:
        idx = zeros(be, BP_I64, 2, s11);
        y = zeros(be, dt, 2, s13);
        st = bp_scatter_nd(x, idx, y, BP_SCATTER_NONE, &o1);
        break;
    case BP_OP_GEMM:
        y = zeros(be, dt, 2, s32);
        st = bp_gemm(x, y, NULL, 1.0, 0.0, false, false, &o1);
        break;
    /* nn.h: xs (N 1, C 2, L 3); y a (2, 2, 1) kernel or a (C) or (3) parameter */
    case BP_OP_CONV:
    case BP_OP_CONV_TRANSPOSE:
        xs = zeros(be, dt, 3, s123);
        y = zeros(be, dt, 3, s221);
        st = op == BP_OP_CONV ? bp_conv(xs, y, NULL, NULL, &o1)
                              : bp_conv_transpose(xs, y, NULL, NULL, &o1);
        break;
    case BP_OP_MAX_POOL: xs = zeros(be, dt, 3, s123); st = bp_max_pool(xs, &win, &o1, &o2); break;
    case BP_OP_AVERAGE_POOL: xs = zeros(be, dt, 3, s123); st = bp_average_pool(xs, &win, &o1); break;
    case BP_OP_LRN: xs = zeros(be, dt, 3, s123); st = bp_lrn(xs, 1, 1e-4, 0.75, 1.0, &o1); break;
    case BP_OP_BATCH_NORM:
        xs = zeros(be, dt, 3, s123);
        y = zeros(be, dt, 1, s2);
        st = bp_batch_norm(xs, y, y, y, y, 1e-5, &o1);
        break;
    case BP_OP_INSTANCE_NORM:
        xs = zeros(be, dt, 3, s123);
        y = zeros(be, dt, 1, s2);
        st = bp_instance_norm(xs, y, y, 1e-5, &o1);
        break;
    case BP_OP_LAYER_NORM:
        y = zeros(be, dt, 1, s3);
        st = bp_layer_norm(x, -1, y, NULL, 1e-5, &o1, NULL, NULL);
        break;
    case BP_OP_RMS_NORM: st = bp_rms_norm(x, -1, NULL, 1e-5, &o1); break;
    case BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS: /* x: scores (N 2, C 3) */
        idx = zeros(be, BP_I64, 1, s2);
        st = bp_softmax_cross_entropy_loss(x, idx, NULL, BP_LOSS_MEAN, NULL, &o1, NULL);
        break;
    case BP_OP_NLL_LOSS:
        idx = zeros(be, BP_I64, 1, s2);
        st = bp_nll_loss(x, idx, NULL, BP_LOSS_MEAN, NULL, &o1);
        break;
    case BP_OP_RESIZE: st = bp_resize(x, twice, NULL, NULL, &o1); break; /* nearest */
    default:
        cr_assert_fail("no call for %s: add it to this test", bp_op_name(op));
    }
    bp_tensor_release(x);
    bp_tensor_release(y);
    bp_tensor_release(idx);
    bp_tensor_release(aux);
    bp_tensor_release(xs);
    bp_tensor_release(o1);
    bp_tensor_release(o2);
    return st;
}

Test(cuda_support, the_table_accepts_exactly_what_the_core_lets_through)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    for (size_t i = 0; i < N_ENTRY_OPS; i++) {
        const bpcu_support *r = row_of(entry_ops[i]);
        cr_assert_not_null(r);
        for (int dt = 0; dt < BP_DTYPE_COUNT; dt++) {
            bp_status st = call(be, r->op, (bp_dtype)dt);
            bool core = st != BP_ERR_DTYPE, table = (r->accepts >> dt) & 1u;
            cr_expect_eq(core, table, "%s / %s: the core says %s (%s), the table %s",
                         bp_op_name(r->op), bp_dtype_name((bp_dtype)dt), bp_status_string(st),
                         st == BP_OK ? "" : bp_last_error(), table ? "accepted" : "refused");
        }
    }
    bp_context_destroy(ctx);
}

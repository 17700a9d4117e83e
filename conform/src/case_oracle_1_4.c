/* A case of ABI 1.4 handed to the oracle: its parameters (cases_1_4.c) as
 * the oracle's arguments, one line per op or group. topk and sort fill
 * want2 (the indices). */
#include "internal.h"

static bool unary(const cf_case *c, const cf_array *x, cf_array *want)
{
    double p0 = c->pf[0], p1 = c->pf[1];
    switch ((bp_op)c->op) {
    case BP_OP_ELU: return cf_oracle_elu(x, p0, want);
    case BP_OP_SELU: return cf_oracle_selu(x, p0, p1, want);
    case BP_OP_LEAKY_RELU: return cf_oracle_leaky_relu(x, p0, want);
    case BP_OP_THRESHOLDED_RELU: return cf_oracle_thresholded_relu(x, p0, want);
    case BP_OP_HARD_SIGMOID: return cf_oracle_hard_sigmoid(x, p0, p1, want);
    case BP_OP_SHRINK: return cf_oracle_shrink(x, p0, p1, want);
    default: return cf_oracle_unary((bp_op)c->op, x, want);
    }
}

static bool reduce(const cf_case *c, const cf_array *x, cf_array *want, double **scale,
                   int64_t *k)
{
    int32_t n, axes[BP_MAX_RANK];
    bool keep;
    cf_reduce_axes(c, &n, axes, &keep);
    switch ((bp_op)c->op) {
    case BP_OP_REDUCE_L1: return cf_oracle_reduce_l1(x, n, axes, keep, want, scale, k);
    case BP_OP_REDUCE_L2: return cf_oracle_reduce_l2(x, n, axes, keep, want, scale, k);
    case BP_OP_REDUCE_SUM_SQUARE:
        return cf_oracle_reduce_sum_square(x, n, axes, keep, want, scale, k);
    case BP_OP_REDUCE_LOG_SUM: return cf_oracle_reduce_log_sum(x, n, axes, keep, want, scale, k);
    case BP_OP_REDUCE_VAR:
        return cf_oracle_reduce_var(x, n, axes, keep, c->pf[0], want, scale, k);
    case BP_OP_REDUCE_STD:
        return cf_oracle_reduce_std(x, n, axes, keep, c->pf[0], want, scale, k);
    case BP_OP_REDUCE_ANY: return cf_oracle_reduce_any(x, n, axes, keep, want, scale, k);
    case BP_OP_REDUCE_ALL: return cf_oracle_reduce_all(x, n, axes, keep, want, scale, k);
    case BP_OP_ARGMAX_LAST: return cf_oracle_argmax_last(x, n, axes, keep, want, scale, k);
    default: return cf_oracle_argmin_last(x, n, axes, keep, want, scale, k);
    }
}

bool cf_case_oracle_1_4(const cf_case *c, const cf_array *in, int n_in, cf_array *want,
                        cf_array *want2, double **scale, int64_t *k)
{
    const int64_t *p = c->pi;
    switch ((bp_op)c->op) {
    case BP_OP_CLIP: {
        const cf_array *lo = p[0] ? &in[1] : NULL, *hi = p[1] ? &in[1 + (p[0] != 0)] : NULL;
        return cf_oracle_clip(&in[0], lo, hi, want);
    }
    case BP_OP_FMOD: case BP_OP_PRELU: case BP_OP_BITWISE_AND: case BP_OP_BITWISE_OR:
    case BP_OP_BITWISE_XOR: case BP_OP_BITSHIFT_LEFT: case BP_OP_BITSHIFT_RIGHT:
        return cf_oracle_binary((bp_op)c->op, &in[0], &in[1], want);
    case BP_OP_REDUCE_L1: case BP_OP_REDUCE_L2: case BP_OP_REDUCE_SUM_SQUARE:
    case BP_OP_REDUCE_LOG_SUM: case BP_OP_REDUCE_VAR: case BP_OP_REDUCE_STD:
    case BP_OP_REDUCE_ANY: case BP_OP_REDUCE_ALL: case BP_OP_ARGMAX_LAST: case BP_OP_ARGMIN_LAST:
        return reduce(c, &in[0], want, scale, k);
    case BP_OP_HARDMAX: return cf_oracle_hardmax(&in[0], (int32_t)p[0], want);
    case BP_OP_CUMSUM:
        return cf_oracle_cumsum(&in[0], (int32_t)p[0], p[1], p[2], want, scale, k);
    case BP_OP_CUMPROD:
        return cf_oracle_cumprod(&in[0], (int32_t)p[0], p[1], p[2], want, scale, k);
    case BP_OP_SORT: return cf_oracle_sort(&in[0], (int32_t)p[0], p[1], want, want2);
    case BP_OP_TOPK: return cf_oracle_topk(&in[0], p[0], (int32_t)p[1], p[2], p[3], want, want2);
    case BP_OP_TRILU: return cf_oracle_trilu(&in[0], p[0], p[1], want);
    case BP_OP_ONE_HOT: return cf_oracle_one_hot(&in[0], p[0], (int32_t)p[1], &in[1], want);
    case BP_OP_GATHER_ELEMENTS:
        return cf_oracle_gather_elements(&in[0], &in[1], (int32_t)p[0], want);
    case BP_OP_GATHER_ND: return cf_oracle_gather_nd(&in[0], &in[1], (int32_t)p[0], want);
    case BP_OP_SCATTER_ELEMENTS:
        return cf_oracle_scatter_elements(&in[0], &in[1], &in[2], (int32_t)p[0],
                                          (bp_scatter_reduction)p[1], want, scale, k);
    case BP_OP_SCATTER_ND:
        return cf_oracle_scatter_nd(&in[0], &in[1], &in[2], (bp_scatter_reduction)p[1], want,
                                    scale, k);
    case BP_OP_GEMM:
        return cf_oracle_gemm(&in[0], &in[1], n_in > 2 ? &in[2] : NULL, c->pf[0], c->pf[1], p[0],
                              p[1], want, scale, k);
    default: return unary(c, &in[0], want);
    }
}

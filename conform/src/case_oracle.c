/* A case's expected output: its parameters (cases*.c) handed to the oracle
 * (oracle/oracle.h), by the op's kind (opcodes.h), as call.c hands them to
 * the op. A unary or binary op, with or without parameters, needs nothing
 * here. sort and topk fill want2 (the indices). */
#include "internal.h"

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
    case BP_OP_ARGMIN_LAST: return cf_oracle_argmin_last(x, n, axes, keep, want, scale, k);
    default: return cf_oracle_reduce((bp_op)c->op, x, n, axes, keep, want, scale, k);
    }
}

static bool movement(const cf_case *c, const cf_array *in, int n_in, cf_array *want)
{
    switch ((bp_op)c->op) {
    case BP_OP_TRANSPOSE: return cf_oracle_transpose(&in[0], cf_transpose_perm(c), want);
    case BP_OP_SLICE: {
        int64_t starts[BP_MAX_RANK], stops[BP_MAX_RANK], steps[BP_MAX_RANK];
        bool has_stops;
        cf_slice_params(c, starts, stops, steps, &has_stops);
        return cf_oracle_slice(&in[0], starts, has_stops ? stops : NULL, steps, want);
    }
    case BP_OP_CONCAT: {
        const cf_array *xs[CF_MAX_OPERANDS];
        for (int k = 0; k < n_in; k++)
            xs[k] = &in[k];
        return cf_oracle_concat(n_in, xs, cf_axis_param(c), want);
    }
    case BP_OP_BROADCAST_TO: {
        int32_t rank;
        int64_t shape[BP_MAX_RANK];
        cf_broadcast_target(c, &rank, shape);
        return cf_oracle_broadcast_to(&in[0], rank, shape, want);
    }
    case BP_OP_PAD: {
        int64_t before[BP_MAX_RANK], after[BP_MAX_RANK];
        double value;
        cf_pad_params(c, before, after, &value);
        return cf_oracle_pad(&in[0], before, after, value, want);
    }
    case BP_OP_COPY: return cf_oracle_cast(&in[0], in[0].dt, want);
    case BP_OP_CAST: return cf_oracle_cast(&in[0], c->dtype2, want);
    default: return false;
    }
}

static bool creation(const cf_case *c, cf_array *want)
{
    switch ((bp_op)c->op) {
    case BP_OP_FILL:
        if (c->variant >= 100) /* bp_eye: fills of a strided diagonal view */
            return cf_oracle_eye(c->dtype, c->shape[0][0], c->shape[0][1], want);
        return cf_oracle_full(c->dtype, c->rank[0], c->shape[0], cf_fill_value(c), want);
    case BP_OP_ARANGE: {
        double start, stop, step;
        cf_arange_params(c, &start, &stop, &step);
        return cf_oracle_arange(c->dtype, start, stop, step, want);
    }
    case BP_OP_RANDOM_UNIFORM:
        return cf_oracle_random_uniform(c->dtype, c->rank[0], c->shape[0], c->seed, 1000u,
                                        c->lo[0], c->hi[0], want);
    case BP_OP_RANDOM_NORMAL:
        return cf_oracle_random_normal(c->dtype, c->rank[0], c->shape[0], c->seed, 1000u,
                                       c->lo[0], c->hi[0], want);
    default: return false;
    }
}

/* The ops whose parameters sit in pi/pf. */
static bool parametrised(const cf_case *c, const cf_array *in, int n_in, cf_array *want,
                         cf_array *want2, double **scale, int64_t *k)
{
    const int64_t *p = c->pi;
    switch ((bp_op)c->op) {
    case BP_OP_CLIP: {
        const cf_array *lo = p[0] ? &in[1] : NULL, *hi = p[1] ? &in[1 + (p[0] != 0)] : NULL;
        return cf_oracle_clip(&in[0], lo, hi, want);
    }
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
    default: return false;
    }
}

bool cf_case_oracle(const cf_case *c, const cf_array *in, int n_in, cf_array *want,
                    cf_array *want2, double **scale, int64_t *k)
{
    *scale = NULL;
    *k = 1;
    if (cf_is_compose(c->op))
        return cf_oracle_compose(c, in, n_in, want, want2, scale, k);
    if (c->op < 0 || c->op >= BP_OP_COUNT)
        return false;
    bp_op op = (bp_op)c->op;
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: return cf_oracle_unary_params(op, &in[0], c->pf[0], c->pf[1], want);
    case BP_KIND_BINARY: return cf_oracle_binary(op, &in[0], &in[1], want);
    case BP_KIND_WHERE: return cf_oracle_where(&in[0], &in[1], &in[2], want);
    case BP_KIND_REDUCE: return reduce(c, &in[0], want, scale, k);
    case BP_KIND_MATMUL: return cf_oracle_matmul(&in[0], &in[1], want, scale, k);
    case BP_KIND_MOVEMENT: return movement(c, in, n_in, want);
    case BP_KIND_GATHER: return cf_oracle_gather(&in[0], &in[1], cf_axis_param(c), want);
    case BP_KIND_SOFTMAX:
        return op == BP_OP_SOFTMAX ? cf_oracle_softmax(&in[0], cf_axis_param(c), want, scale, k)
                                   : cf_oracle_log_softmax(&in[0], cf_axis_param(c), want, scale, k);
    case BP_KIND_FILL: case BP_KIND_ARANGE: case BP_KIND_RANDOM: return creation(c, want);
    default: return parametrised(c, in, n_in, want, want2, scale, k);
    }
}

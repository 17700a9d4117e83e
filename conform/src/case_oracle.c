/* A case's expected output: its parameters (cases.c) handed to the oracle
 * (oracle/oracle.h). One line per op or family; an op the oracle already
 * knows by family (a new unary or binary op) needs nothing here. */
#include "internal.h"

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
    case BP_OP_GATHER: return cf_oracle_gather(&in[0], &in[1], cf_axis_param(c), want);
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

bool cf_case_oracle(const cf_case *c, const cf_array *in, int n_in, cf_array *want,
                    cf_array *want2, double **scale, int64_t *k)
{
    *scale = NULL;
    *k = 1;
    if (cf_is_compose(c->op))
        return cf_oracle_compose(c, in, n_in, want, want2, scale, k);
    if (c->op >= BP_OP_COUNT)
        return false;
    bp_op op = (bp_op)c->op;
    if (bp_op_family_of(op) == BP_FAMILY_OP)
        return cf_case_oracle_1_4(c, in, n_in, want, want2, scale, k);
    switch (op) {
    case BP_OP_COPY: return cf_oracle_cast(&in[0], in[0].dt, want);
    case BP_OP_CAST: return cf_oracle_cast(&in[0], c->dtype2, want);
    case BP_OP_WHERE: return cf_oracle_where(&in[0], &in[1], &in[2], want);
    case BP_OP_MATMUL: return cf_oracle_matmul(&in[0], &in[1], want, scale, k);
    default: break;
    }
    switch (bp_op_family_of(op)) {
    case BP_FAMILY_UNARY: return cf_oracle_unary(op, &in[0], want);
    case BP_FAMILY_BINARY: return cf_oracle_binary(op, &in[0], &in[1], want);
    case BP_FAMILY_REDUCE: {
        int32_t n_axes, axes[BP_MAX_RANK];
        bool keepdims;
        cf_reduce_axes(c, &n_axes, axes, &keepdims);
        return cf_oracle_reduce(op, &in[0], n_axes, axes, keepdims, want, scale, k);
    }
    case BP_FAMILY_SOFTMAX:
        return op == BP_OP_SOFTMAX ? cf_oracle_softmax(&in[0], cf_axis_param(c), want, scale, k)
                                   : cf_oracle_log_softmax(&in[0], cf_axis_param(c), want, scale, k);
    case BP_FAMILY_CREATION: case BP_FAMILY_RANDOM: return creation(c, want);
    default: return movement(c, in, n_in, want);
    }
}

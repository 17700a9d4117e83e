/* The op call of a case of ABI 1.4 (parameters: cases_1_4.c), in the
 * worker. topk and sort give a second output (*out2: the indices). */
#include "internal.h"

/* The attributed unary ops and the plain ones, by code. */
static bp_status unary(bp_op op, const bp_tensor *x, double p0, double p1, bp_tensor **out)
{
    switch (op) {
    case BP_OP_ACOS: return bp_acos(x, out);
    case BP_OP_ASIN: return bp_asin(x, out);
    case BP_OP_ATAN: return bp_atan(x, out);
    case BP_OP_ACOSH: return bp_acosh(x, out);
    case BP_OP_ASINH: return bp_asinh(x, out);
    case BP_OP_ATANH: return bp_atanh(x, out);
    case BP_OP_SINH: return bp_sinh(x, out);
    case BP_OP_COSH: return bp_cosh(x, out);
    case BP_OP_LOG1P: return bp_log1p(x, out);
    case BP_OP_EXPM1: return bp_expm1(x, out);
    case BP_OP_SOFTPLUS: return bp_softplus(x, out);
    case BP_OP_SOFTSIGN: return bp_softsign(x, out);
    case BP_OP_SILU: return bp_silu(x, out);
    case BP_OP_HARDSWISH: return bp_hardswish(x, out);
    case BP_OP_SQUARE: return bp_square(x, out);
    case BP_OP_BITWISE_NOT: return bp_bitwise_not(x, out);
    case BP_OP_ELU: return bp_elu(x, p0, out);
    case BP_OP_SELU: return bp_selu(x, p0, p1, out);
    case BP_OP_LEAKY_RELU: return bp_leaky_relu(x, p0, out);
    case BP_OP_THRESHOLDED_RELU: return bp_thresholded_relu(x, p0, out);
    case BP_OP_HARD_SIGMOID: return bp_hard_sigmoid(x, p0, p1, out);
    case BP_OP_SHRINK: return bp_shrink(x, p0, p1, out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

static bp_status binary(bp_op op, const bp_tensor *a, const bp_tensor *b, bp_tensor **out)
{
    switch (op) {
    case BP_OP_FMOD: return bp_fmod(a, b, out);
    case BP_OP_PRELU: return bp_prelu(a, b, out);
    case BP_OP_BITWISE_AND: return bp_bitwise_and(a, b, out);
    case BP_OP_BITWISE_OR: return bp_bitwise_or(a, b, out);
    case BP_OP_BITWISE_XOR: return bp_bitwise_xor(a, b, out);
    case BP_OP_BITSHIFT_LEFT: return bp_bitshift_left(a, b, out);
    case BP_OP_BITSHIFT_RIGHT: return bp_bitshift_right(a, b, out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

static bp_status reduce(const cf_case *c, const bp_tensor *x, bp_tensor **out)
{
    int32_t n, axes[BP_MAX_RANK];
    bool keep;
    cf_reduce_axes(c, &n, axes, &keep);
    const int32_t *ax = n ? axes : NULL;
    switch ((bp_op)c->op) {
    case BP_OP_REDUCE_L1: return bp_reduce_l1(x, n, ax, keep, out);
    case BP_OP_REDUCE_L2: return bp_reduce_l2(x, n, ax, keep, out);
    case BP_OP_REDUCE_SUM_SQUARE: return bp_reduce_sum_square(x, n, ax, keep, out);
    case BP_OP_REDUCE_LOG_SUM: return bp_reduce_log_sum(x, n, ax, keep, out);
    case BP_OP_REDUCE_VAR: return bp_reduce_var(x, n, ax, keep, c->pf[0], out);
    case BP_OP_REDUCE_STD: return bp_reduce_std(x, n, ax, keep, c->pf[0], out);
    case BP_OP_REDUCE_ANY: return bp_reduce_any(x, n, ax, keep, out);
    case BP_OP_REDUCE_ALL: return bp_reduce_all(x, n, ax, keep, out);
    case BP_OP_ARGMAX_LAST: return bp_argmax_last(x, n, ax, keep, out);
    case BP_OP_ARGMIN_LAST: return bp_argmin_last(x, n, ax, keep, out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

bp_status cf_call_op_1_4(const cf_case *c, const cf_operand *ops, int n_in, bp_tensor **out,
                         bp_tensor **out2)
{
    const int64_t *p = c->pi;
    bp_op op = (bp_op)c->op;
    switch (op) {
    case BP_OP_CLIP: {
        const bp_tensor *lo = p[0] ? ops[1].t : NULL, *hi = p[1] ? ops[1 + (p[0] != 0)].t : NULL;
        return bp_clip(ops[0].t, lo, hi, out);
    }
    case BP_OP_HARDMAX: return bp_hardmax(ops[0].t, (int32_t)p[0], out);
    case BP_OP_CUMSUM: return bp_cumsum(ops[0].t, (int32_t)p[0], p[1], p[2], out);
    case BP_OP_CUMPROD: return bp_cumprod(ops[0].t, (int32_t)p[0], p[1], p[2], out);
    case BP_OP_SORT: return bp_sort(ops[0].t, (int32_t)p[0], p[1], out, out2);
    case BP_OP_TOPK: return bp_topk(ops[0].t, p[0], (int32_t)p[1], p[2], p[3], out, out2);
    case BP_OP_TRILU: return bp_trilu(ops[0].t, p[0], p[1], out);
    case BP_OP_ONE_HOT: return bp_one_hot(ops[0].t, p[0], (int32_t)p[1], ops[1].t, out);
    case BP_OP_GATHER_ELEMENTS: return bp_gather_elements(ops[0].t, ops[1].t, (int32_t)p[0], out);
    case BP_OP_GATHER_ND: return bp_gather_nd(ops[0].t, ops[1].t, (int32_t)p[0], out);
    case BP_OP_SCATTER_ELEMENTS:
        return bp_scatter_elements(ops[0].t, ops[1].t, ops[2].t, (int32_t)p[0],
                                   (bp_scatter_reduction)p[1], out);
    case BP_OP_SCATTER_ND:
        return bp_scatter_nd(ops[0].t, ops[1].t, ops[2].t, (bp_scatter_reduction)p[1], out);
    case BP_OP_GEMM:
        return bp_gemm(ops[0].t, ops[1].t, n_in > 2 ? ops[2].t : NULL, c->pf[0], c->pf[1], p[0],
                       p[1], out);
    case BP_OP_FMOD: case BP_OP_PRELU: case BP_OP_BITWISE_AND: case BP_OP_BITWISE_OR:
    case BP_OP_BITWISE_XOR: case BP_OP_BITSHIFT_LEFT: case BP_OP_BITSHIFT_RIGHT:
        return binary(op, ops[0].t, ops[1].t, out);
    case BP_OP_REDUCE_L1: case BP_OP_REDUCE_L2: case BP_OP_REDUCE_SUM_SQUARE:
    case BP_OP_REDUCE_LOG_SUM: case BP_OP_REDUCE_VAR: case BP_OP_REDUCE_STD:
    case BP_OP_REDUCE_ANY: case BP_OP_REDUCE_ALL: case BP_OP_ARGMAX_LAST: case BP_OP_ARGMIN_LAST:
        return reduce(c, ops[0].t, out);
    default: return unary(op, ops[0].t, c->pf[0], c->pf[1], out);
    }
}

/* ---- an unsorted topk, put in the oracle's order -------------------------------- */

/* Whether (va, ia) goes before (vb, ib) in topk's order: the better value
 * (NaN above every number), then the lower index. */
static bool before(const cf_array *v, int64_t a, int64_t b, const int64_t *ix, bool largest)
{
    int cmp;
    if (v->f) {
        double x = v->f[a], y = v->f[b];
        bool nx = x != x, ny = y != y;
        cmp = nx || ny ? (nx && ny ? 0 : nx ? 1 : -1) : x < y ? -1 : x > y;
    } else {
        cmp = v->i[a] < v->i[b] ? -1 : v->i[a] > v->i[b];
    }
    if (largest)
        cmp = -cmp;
    return cmp < 0 || (cmp == 0 && ix[a] < ix[b]);
}

static void swap_at(cf_array *v, cf_array *idx, int64_t a, int64_t b)
{
    if (v->f) {
        double t = v->f[a];
        v->f[a] = v->f[b], v->f[b] = t;
    } else {
        int64_t t = v->i[a];
        v->i[a] = v->i[b], v->i[b] = t;
    }
    int64_t t = idx->i[a];
    idx->i[a] = idx->i[b], idx->i[b] = t;
}

void cf_topk_canonical(const cf_case *c, cf_array *values, cf_array *indices)
{
    int32_t axis = (int32_t)c->pi[1];
    if (axis < 0)
        axis += values->rank;
    int64_t k = values->shape[axis], inner = 1;
    for (int32_t d = axis + 1; d < values->rank; d++)
        inner *= values->shape[d];
    int64_t outer = k && inner ? values->n / (k * inner) : 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) /* insertion sort of one row */
            for (int64_t a = 1; a < k; a++)
                for (int64_t b = a; b > 0; b--) {
                    int64_t pb = (o * k + b) * inner + in, pa = pb - inner;
                    if (!before(values, pb, pa, indices->i, c->pi[2]))
                        break;
                    swap_at(values, indices, pb, pa);
                }
}

/* The reductions of ABI 1.4 over the trailing p->i[0] axes of x (the core
 * moves them there): l1, l2, sum_square, log_sum, var, std, any, all, and
 * argmax/argmin with the last index on ties. Floats accumulate in double
 * (ops.h) and round once; integers wrap in 64 bits; var and std take two
 * passes (the mean, then the squared deviations). */
#include <math.h>

#include "binary.h"

typedef struct red {
    bp_op op;
    bp_dtype dt;
    size_t esz;
    double correction;
    bpb_iter rit; /* over the reduced axes; copied per output */
} red;

/* One pass over the reduced elements of the output whose terms start at x. */
#define FOR_TERMS(R, X, P)                                                               \
    for (bpb_iter it_ = (R)->rit; bpb_iter_next(&it_, pos_);)                            \
        for (int64_t i_ = 0; i_ < it_.inner; i_++)                                       \
            for (const char *P = (X) + (pos_[0] + i_ * it_.inner_stride[0]) * (int64_t)(R)->esz; \
                 P; P = NULL)

static void reduce_int(const red *r, const char *x, char *out)
{
    int64_t pos_[1];
    uint64_t acc = 0;
    FOR_TERMS(r, x, p) {
        int64_t v = bp_elem_load_i64(r->dt, p);
        if (r->op == BP_OP_REDUCE_L1)
            acc += v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        else /* SUM_SQUARE */
            acc += (uint64_t)v * (uint64_t)v;
    }
    bp_elem_store_i64(r->dt, out, bpb_wrap_int(r->dt, acc));
}

static double reduce_float(const red *r, const char *x)
{
    int64_t pos_[1], n = 0;
    double acc = 0;
    FOR_TERMS(r, x, p) {
        double v = bp_elem_load_f64(r->dt, p);
        switch (r->op) {
        case BP_OP_REDUCE_L1: acc += fabs(v); break;
        case BP_OP_REDUCE_L2: case BP_OP_REDUCE_SUM_SQUARE: acc += v * v; break;
        default: acc += v; break; /* LOG_SUM, and the mean of VAR/STD */
        }
        n++;
    }
    switch (r->op) {
    case BP_OP_REDUCE_L2: return sqrt(acc);
    case BP_OP_REDUCE_LOG_SUM: return log(acc);
    case BP_OP_REDUCE_VAR: case BP_OP_REDUCE_STD: break;
    default: return acc;
    }
    double mean = acc / (double)n, dev = 0;
    FOR_TERMS(r, x, p) {
        double d = bp_elem_load_f64(r->dt, p) - mean;
        dev += d * d;
    }
    double div = (double)n - r->correction;
    double var = div > 0 ? dev / div : NAN;
    return r->op == BP_OP_REDUCE_STD ? sqrt(var) : var;
}

static void reduce_bool(const red *r, const char *x, char *out)
{
    int64_t pos_[1];
    bool all = r->op == BP_OP_REDUCE_ALL, acc = all;
    FOR_TERMS(r, x, p) {
        bool v = *(const uint8_t *)p != 0;
        acc = all ? acc && v : acc || v;
    }
    *(uint8_t *)out = acc;
}

/* The last extreme; a NaN wins over any number, the last NaN over the others. */
static int64_t arg_last(const red *r, const char *x)
{
    int64_t pos_[1], at = -1, k = 0;
    bool max = r->op == BP_OP_ARGMAX_LAST, is_float = bp_dtype_is_float(r->dt);
    double bf = 0;
    int64_t bi = 0;
    FOR_TERMS(r, x, p) {
        if (is_float) {
            double v = bp_elem_load_f64(r->dt, p);
            bool take = at < 0 || v != v || (bf == bf && (max ? v >= bf : v <= bf));
            if (take)
                bf = v, at = k;
        } else {
            int64_t v = bp_elem_load_i64(r->dt, p);
            if (at < 0 || (max ? v >= bi : v <= bi))
                bi = v, at = k;
        }
        k++;
    }
    return at;
}

bp_status bpb_op_reduce(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                        const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)dev, (void)n_in, (void)n_out;
    const bp_view *x = in[0], *out = out_v[0];
    int32_t n_reduce = (int32_t)p->i[0], keep = x->rank - n_reduce;
    if (bpb_numel(out) == 0)
        return BP_OK;
    red r = {.op = op, .dt = x->dtype, .esz = bp_dtype_size(x->dtype), .correction = p->f[0]};
    bp_view rv = *x; /* the reduced axes alone */
    rv.rank = n_reduce;
    for (int32_t k = 0; k < n_reduce; k++)
        rv.shape[k] = x->shape[keep + k], rv.strides[k] = x->strides[keep + k];
    bpb_iter_init(&r.rit, 1, (const bp_view *[]){&rv});

    bp_view xo = *out; /* x's kept axes, walked alongside out */
    for (int32_t k = 0; k < keep; k++)
        xo.strides[k] = x->strides[k];
    size_t osz = bp_dtype_size(out->dtype);
    bpb_iter it;
    int64_t pos[2];
    bpb_iter_init(&it, 2, (const bp_view *[]){&xo, out});
    bool is_float = bp_dtype_is_float(x->dtype);
    while (bpb_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            const char *xs = bpb_base(x) + (pos[0] + i * it.inner_stride[0]) * (int64_t)r.esz;
            char *o = bpb_base(out) + (pos[1] + i * it.inner_stride[1]) * (int64_t)osz;
            if (op == BP_OP_ARGMAX_LAST || op == BP_OP_ARGMIN_LAST)
                *(int64_t *)o = arg_last(&r, xs);
            else if (op == BP_OP_REDUCE_ANY || op == BP_OP_REDUCE_ALL)
                reduce_bool(&r, xs, o);
            else if (is_float)
                bp_elem_store_f64(out->dtype, o, reduce_float(&r, xs));
            else
                reduce_int(&r, xs, o);
        }
    return BP_OK;
}

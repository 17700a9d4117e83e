/* Elementwise ops of ABI 1.4 that take more than the element: the unary ops
 * with ONNX attributes (elu, selu, leaky_relu, thresholded_relu,
 * hard_sigmoid, shrink), clip with tensor bounds, and the variadic max, min,
 * sum and mean. The plain ones (acos, fmod, bitwise_and...) are cases of the
 * element oracles in elementwise.c. */
#include <math.h>

#include "oracle.h"
#include "independent.h"

/* f(x; p0, p1) elementwise; integers (shrink) through double and the cast
 * rules (ops.h). */
static bool unary_params(bp_op op, const cf_array *x, double p0, double p1, cf_array *want)
{
    if (!cf_array_init(want, x->dt, x->rank, x->shape))
        return false;
    for (int64_t k = 0; k < x->n; k++)
        cf_set_f(want, k, cf_unary_pf(op, cf_get_f(x, k), p0, p1));
    return true;
}

bool cf_oracle_elu(const cf_array *x, double alpha, cf_array *want)
{
    return unary_params(BP_OP_ELU, x, alpha, 0, want);
}

bool cf_oracle_selu(const cf_array *x, double alpha, double gamma, cf_array *want)
{
    return unary_params(BP_OP_SELU, x, alpha, gamma, want);
}

bool cf_oracle_leaky_relu(const cf_array *x, double alpha, cf_array *want)
{
    return unary_params(BP_OP_LEAKY_RELU, x, alpha, 0, want);
}

bool cf_oracle_thresholded_relu(const cf_array *x, double alpha, cf_array *want)
{
    return unary_params(BP_OP_THRESHOLDED_RELU, x, alpha, 0, want);
}

bool cf_oracle_hard_sigmoid(const cf_array *x, double alpha, double beta, cf_array *want)
{
    return unary_params(BP_OP_HARD_SIGMOID, x, alpha, beta, want);
}

bool cf_oracle_shrink(const cf_array *x, double bias, double lambd, cf_array *want)
{
    return unary_params(BP_OP_SHRINK, x, bias, lambd, want);
}

/* ---- clip --------------------------------------------------------------------- */

bool cf_oracle_clip(const cf_array *x, const cf_array *lo, const cf_array *hi, cf_array *want)
{
    int64_t idx[BP_MAX_RANK];
    if (!cf_array_init(want, x->dt, x->rank, x->shape))
        return false;
    for (int64_t k = 0; k < x->n; k++) {
        cf_unravel(x->rank, x->shape, k, idx);
        int64_t il = lo ? cf_bcast_index(x->rank, idx, lo->rank, lo->shape) : 0;
        int64_t ih = hi ? cf_bcast_index(x->rank, idx, hi->rank, hi->shape) : 0;
        if (x->f) { /* NaN-propagating max then min (bp_maximum, bp_minimum) */
            double v = x->f[k];
            if (lo)
                v = cf_binary_f(BP_OP_MAXIMUM, v, lo->f[il]);
            if (hi)
                v = cf_binary_f(BP_OP_MINIMUM, v, hi->f[ih]);
            want->f[k] = v;
        } else {
            int64_t v = x->i[k];
            if (lo && v < lo->i[il])
                v = lo->i[il];
            if (hi && v > hi->i[ih])
                v = hi->i[ih];
            want->i[k] = v;
        }
    }
    return true;
}

/* ---- variadic ------------------------------------------------------------------ */

/* The fold of the binary op over xs, broadcast together, each step's result
 * held as the dtype holds it (the ops are bp_maximum / bp_add folds, so a
 * float sum rounds at every step); mean divides the sum by n, rounded. */
static bool fold(bp_op op, bool mean, int32_t n, const cf_array *const *xs, cf_array *want)
{
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK];
    int32_t rank = cf_broadcast_shape(n, xs, shape);
    bp_dtype dt = xs[0]->dt;
    if (!cf_array_init(want, dt, rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        cf_unravel(rank, shape, k, idx);
        int64_t j = cf_bcast_index(rank, idx, xs[0]->rank, xs[0]->shape);
        if (want->f) {
            double v = xs[0]->f[j];
            for (int32_t t = 1; t < n; t++) {
                j = cf_bcast_index(rank, idx, xs[t]->rank, xs[t]->shape);
                v = cf_round(dt, cf_binary_f(op, v, xs[t]->f[j]));
            }
            want->f[k] = mean ? v / (double)n : v;
        } else {
            int64_t v = xs[0]->i[j];
            for (int32_t t = 1; t < n; t++) {
                j = cf_bcast_index(rank, idx, xs[t]->rank, xs[t]->shape);
                v = cf_binary_i(op, dt, v, xs[t]->i[j]);
            }
            want->i[k] = v;
        }
    }
    return true;
}

bool cf_oracle_max_n(int32_t n, const cf_array *const *xs, cf_array *want)
{
    return fold(BP_OP_MAXIMUM, false, n, xs, want);
}

bool cf_oracle_min_n(int32_t n, const cf_array *const *xs, cf_array *want)
{
    return fold(BP_OP_MINIMUM, false, n, xs, want);
}

bool cf_oracle_sum_n(int32_t n, const cf_array *const *xs, cf_array *want)
{
    return fold(BP_OP_ADD, false, n, xs, want);
}

bool cf_oracle_mean_n(int32_t n, const cf_array *const *xs, cf_array *want)
{
    return fold(BP_OP_ADD, true, n, xs, want);
}

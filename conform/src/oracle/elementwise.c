/* Elementwise ops: the element oracles (one switch per kind: a new unary or
 * binary op is one case here) and the array oracles of the unary, binary,
 * where and cast families built on them. */
#include <math.h>

#include "oracle.h"
#include "independent.h"

/* ---- element oracles ------------------------------------------------------- */

/* The inverse and hyperbolic functions and the activations, in long double
 * (each formula as ops.h writes it, so its IEEE edges are the formula's:
 * softsign(inf) is inf / inf, NaN). */
static double unary_long(bp_op op, double x)
{
    switch (op) {
    case BP_OP_ACOS: return (double)acosl(x);
    case BP_OP_ASIN: return (double)asinl(x);
    case BP_OP_ATAN: return (double)atanl(x);
    case BP_OP_ACOSH: return (double)acoshl(x);
    case BP_OP_ASINH: return (double)asinhl(x);
    case BP_OP_ATANH: return (double)atanhl(x);
    case BP_OP_SINH: return (double)sinhl(x);
    case BP_OP_COSH: return (double)coshl(x);
    case BP_OP_LOG1P: return (double)log1pl(x);
    case BP_OP_EXPM1: return (double)expm1l(x);
    case BP_OP_SOFTPLUS: /* log(1 + e^x) = max(x, 0) + log(1 + e^-|x|) */
        return isnan(x) ? x : (double)(fmaxl(x, 0.0L) + log1pl(expl(-fabsl(x))));
    case BP_OP_SOFTSIGN: return (double)((long double)x / (1.0L + fabsl(x)));
    case BP_OP_SILU: return (double)((long double)x / (1.0L + expl(-(long double)x)));
    case BP_OP_MISH: { /* x tanh(log(1 + e^x)), softplus as above; -inf: -inf * 0 = NaN */
        long double sp = fmaxl(x, 0.0L) + log1pl(expl(-fabsl(x)));
        return isnan(x) ? x : (double)((long double)x * tanhl(sp));
    }
    case BP_OP_HARDSWISH: {
        long double t = (long double)x / 6.0L + 0.5L;
        return isnan(x) ? x : (double)((long double)x * (t < 0 ? 0.0L : t > 1 ? 1.0L : t));
    }
    case BP_OP_SQUARE: return (double)((long double)x * x);
    default: return NAN;
    }
}

double cf_unary_f(bp_op op, double x)
{
    switch (op) {
    case BP_OP_NEG: return -x;
    case BP_OP_ABS: return fabs(x);
    case BP_OP_SIGN: return isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    case BP_OP_EXP: return exp(x);
    case BP_OP_LOG: return log(x);
    case BP_OP_SQRT: return sqrt(x);
    case BP_OP_RSQRT: return 1.0 / sqrt(x);
    case BP_OP_RECIPROCAL: return 1.0 / x;
    case BP_OP_SIN: return sin(x);
    case BP_OP_COS: return cos(x);
    case BP_OP_TAN: return tan(x);
    case BP_OP_TANH: return tanh(x);
    case BP_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case BP_OP_RELU: return isnan(x) ? x : x > 0 ? x : 0.0;
    /* ONNX Gelu (approximate = "none"), x/2 (1 + erf(x / sqrt 2)), in the erfc
     * form that does not cancel for negative x */
    case BP_OP_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case BP_OP_ERF: return erf(x);
    case BP_OP_FLOOR: return floor(x);
    case BP_OP_CEIL: return ceil(x);
    case BP_OP_ROUND: return nearbyint(x); /* default rounding mode: half to even */
    case BP_OP_ISNAN: return isnan(x) ? 1 : 0;
    case BP_OP_ISINF: return isinf(x) ? 1 : 0;
    default: return unary_long(op, x);
    }
}

double cf_unary_pf(bp_op op, double x, double p0, double p1)
{
    long double v = x;
    switch (op) {
    case BP_OP_ELU: return x < 0 ? (double)(p0 * expm1l(v)) : x;
    case BP_OP_CELU: return x < 0 ? (double)(p0 * expm1l(v / p0)) : x;
    case BP_OP_SELU: return (double)(p1 * (x > 0 ? v : p0 * expm1l(v)));
    case BP_OP_LEAKY_RELU: return x < 0 ? (double)(p0 * v) : x;
    case BP_OP_THRESHOLDED_RELU: return x > p0 ? x : 0.0;
    case BP_OP_HARD_SIGMOID: {
        double t = (double)(p0 * v + p1);
        return isnan(t) ? t : t < 0 ? 0.0 : t > 1 ? 1.0 : t;
    }
    case BP_OP_SHRINK: /* bias p0, lambd p1 */
        return x < -p1 ? (double)(v + p0) : x > p1 ? (double)(v - p0) : 0.0;
    default: return cf_unary_f(op, x);
    }
}

/* -x in two's complement, wrapped to dt: neg(MIN) is MIN. */
static int64_t wrap_neg(bp_dtype dt, int64_t x)
{
    return cf_wrap(dt, (int64_t)(0u - (uint64_t)x));
}

int64_t cf_unary_i(bp_op op, bp_dtype dt, int64_t x)
{
    switch (op) {
    case BP_OP_NEG: return wrap_neg(dt, x);
    case BP_OP_ABS: return x < 0 ? wrap_neg(dt, x) : x;
    case BP_OP_SIGN: return (x > 0) - (x < 0);
    case BP_OP_RELU: return x > 0 ? x : 0;
    case BP_OP_LOGICAL_NOT: return !x;
    case BP_OP_SQUARE: return cf_wrap(dt, (int64_t)((uint64_t)x * (uint64_t)x));
    case BP_OP_BITWISE_NOT: return cf_wrap(dt, (int64_t)(0u - (uint64_t)x - 1u)); /* ~x: -x - 1 */
    default: return 0;
    }
}

double cf_binary_f(bp_op op, double a, double b)
{
    switch (op) {
    case BP_OP_ADD: return a + b;
    case BP_OP_SUB: return a - b;
    case BP_OP_MUL: return a * b;
    case BP_OP_DIV: return a / b;
    case BP_OP_POW: return pow(a, b);
    case BP_OP_MAXIMUM: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case BP_OP_MINIMUM: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    case BP_OP_MOD: { /* ONNX Mod, fmod = 0: the sign of the divisor */
        double r = fmod(a, b);
        if (r != 0 && (r < 0) != (b < 0))
            r += b;
        return r;
    }
    case BP_OP_EQ: return a == b;
    case BP_OP_NE: return a != b;
    case BP_OP_LT: return a < b;
    case BP_OP_LE: return a <= b;
    case BP_OP_GT: return a > b;
    case BP_OP_GE: return a >= b;
    case BP_OP_LOGICAL_AND: return (a != 0) && (b != 0);
    case BP_OP_LOGICAL_OR: return (a != 0) || (b != 0);
    case BP_OP_LOGICAL_XOR: return (a != 0) != (b != 0);
    case BP_OP_FMOD: return fmod(a, b); /* exact */
    case BP_OP_PRELU: return a < 0 ? a * b : a;
    default: return NAN;
    }
}

/* 2^b as an unsigned 64-bit value, b in [0, 64). */
static uint64_t pow2(int64_t b) { return (uint64_t)1 << b; }

/* a << b (a >> b when !left) on a dtype of `bits` bits (ops.h's bp_bitshift_*):
 * a left shift multiplies by 2^b and wraps, a right shift divides by 2^b
 * rounding toward -inf; counts outside [0, bits) shift everything out. */
static int64_t shift(bool left, bp_dtype dt, int64_t a, int64_t b)
{
    int64_t bits = (int64_t)cf_dtype_size(dt) * 8;
    if (b < 0 || b >= bits)
        return left ? 0 : a < 0 ? -1 : 0;
    if (left)
        return cf_wrap(dt, (int64_t)((uint64_t)a * pow2(b)));
    if (a >= 0)
        return (int64_t)((uint64_t)a / pow2(b));
    return -(int64_t)(((uint64_t)(-(a + 1))) / pow2(b)) - 1; /* floor(a / 2^b) */
}

/* a^b wrapping to dt; a negative exponent gives 0 unless |a| is 1. */
static int64_t ipow(bp_dtype dt, int64_t a, int64_t b)
{
    if (b < 0)
        return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    uint64_t r = 1, base = (uint64_t)a;
    uint64_t e = (uint64_t)b;
    while (e) {
        if (e & 1u)
            r *= base;
        base *= base;
        e >>= 1;
    }
    return cf_wrap(dt, (int64_t)r);
}

int64_t cf_binary_i(bp_op op, bp_dtype dt, int64_t a, int64_t b)
{
    switch (op) {
    case BP_OP_ADD: return cf_wrap(dt, (int64_t)((uint64_t)a + (uint64_t)b));
    case BP_OP_SUB: return cf_wrap(dt, (int64_t)((uint64_t)a - (uint64_t)b));
    case BP_OP_MUL: return cf_wrap(dt, (int64_t)((uint64_t)a * (uint64_t)b));
    case BP_OP_DIV: /* truncates; x / 0 is 0; MIN / -1 wraps to MIN */
        if (b == 0)
            return 0;
        if (b == -1)
            return wrap_neg(dt, a);
        return cf_wrap(dt, a / b);
    case BP_OP_MOD: { /* the sign of the divisor; x mod 0 and x mod -1 are 0 */
        if (b == 0 || b == -1)
            return 0;
        int64_t r = a % b;
        if (r != 0 && (r < 0) != (b < 0))
            r += b;
        return r;
    }
    case BP_OP_POW: return ipow(dt, a, b);
    case BP_OP_MAXIMUM: return a > b ? a : b;
    case BP_OP_MINIMUM: return a < b ? a : b;
    case BP_OP_EQ: return a == b;
    case BP_OP_NE: return a != b;
    case BP_OP_LT: return a < b;
    case BP_OP_LE: return a <= b;
    case BP_OP_GT: return a > b;
    case BP_OP_GE: return a >= b;
    case BP_OP_LOGICAL_AND: return (a != 0) && (b != 0);
    case BP_OP_LOGICAL_OR: return (a != 0) || (b != 0);
    case BP_OP_LOGICAL_XOR: return (a != 0) != (b != 0);
    case BP_OP_FMOD: /* truncating; x % 0 is 0; MIN % -1 is 0 */
        return b == 0 || b == -1 ? 0 : a - (a / b) * b;
    case BP_OP_PRELU: return a < 0 ? cf_wrap(dt, (int64_t)((uint64_t)a * (uint64_t)b)) : a;
    case BP_OP_BITWISE_AND: return cf_wrap(dt, (int64_t)((uint64_t)a & (uint64_t)b));
    case BP_OP_BITWISE_OR: return cf_wrap(dt, (int64_t)((uint64_t)a | (uint64_t)b));
    case BP_OP_BITWISE_XOR: return cf_wrap(dt, (int64_t)((uint64_t)a ^ (uint64_t)b));
    case BP_OP_BITSHIFT_LEFT: return shift(true, dt, a, b);
    case BP_OP_BITSHIFT_RIGHT: return shift(false, dt, a, b);
    default: return 0;
    }
}

bp_dtype cf_elementwise_dtype(bp_op op, bp_dtype dt)
{
    bool to_bool = op == BP_OP_ISNAN || op == BP_OP_ISINF || (op >= BP_OP_EQ && op <= BP_OP_GE);
    return to_bool ? BP_BOOL : dt;
}

/* ---- array oracles ---------------------------------------------------------- */

bool cf_oracle_unary(bp_op op, const cf_array *x, cf_array *want)
{
    if (!cf_array_init(want, cf_elementwise_dtype(op, x->dt), x->rank, x->shape))
        return false;
    for (int64_t k = 0; k < x->n; k++) {
        if (x->f)
            cf_set_f(want, k, cf_unary_f(op, x->f[k]));
        else
            want->i[k] = cf_unary_i(op, x->dt, x->i[k]);
    }
    return true;
}

bool cf_oracle_binary(bp_op op, const cf_array *a, const cf_array *b, cf_array *want)
{
    const cf_array *in[2] = {a, b};
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK];
    int32_t rank = cf_broadcast_shape(2, in, shape);
    if (!cf_array_init(want, cf_elementwise_dtype(op, a->dt), rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        cf_unravel(rank, shape, k, idx);
        int64_t ia = cf_bcast_index(rank, idx, a->rank, a->shape);
        int64_t ib = cf_bcast_index(rank, idx, b->rank, b->shape);
        if (a->f)
            cf_set_f(want, k, cf_binary_f(op, a->f[ia], b->f[ib]));
        else
            want->i[k] = cf_binary_i(op, a->dt, a->i[ia], b->i[ib]);
    }
    return true;
}

bool cf_oracle_where(const cf_array *cond, const cf_array *a, const cf_array *b, cf_array *want)
{
    const cf_array *in[3] = {cond, a, b};
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK];
    int32_t rank = cf_broadcast_shape(3, in, shape);
    if (!cf_array_init(want, a->dt, rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        cf_unravel(rank, shape, k, idx);
        const cf_array *src = cond->i[cf_bcast_index(rank, idx, cond->rank, cond->shape)] ? a : b;
        int64_t j = cf_bcast_index(rank, idx, src->rank, src->shape);
        if (want->f)
            want->f[k] = src->f[j];
        else
            want->i[k] = src->i[j];
    }
    return true;
}

bool cf_oracle_cast(const cf_array *x, bp_dtype dtype, cf_array *want)
{
    if (!cf_array_init(want, dtype, x->rank, x->shape))
        return false;
    for (int64_t k = 0; k < x->n; k++) {
        if (x->f)
            cf_set_f(want, k, x->f[k]); /* floats stay unrounded; ints by the cast rules */
        else
            cf_set_i(want, k, x->i[k]); /* ints to floats rounded once, from the integer */
    }
    return true;
}

/* ---- the ops with attributes, clip and the variadic ones ----
 * Elementwise ops of ABI 1.4 that take more than the element: the unary ops
 * with ONNX attributes (elu, selu, leaky_relu, thresholded_relu,
 * hard_sigmoid, shrink), clip with tensor bounds, and the variadic max, min,
 * sum and mean. The plain ones (acos, fmod, bitwise_and...) are cases of the
 * element oracles in elementwise.c. */

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

bool cf_oracle_unary_params(bp_op op, const cf_array *x, double p0, double p1, cf_array *want)
{
    double defaults[2];
    return bp_op_param_defaults(op, defaults) ? unary_params(op, x, p0, p1, want)
                                               : cf_oracle_unary(op, x, want);
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

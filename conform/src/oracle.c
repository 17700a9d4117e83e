/* backplane conform: the oracle. Expected outputs computed on the host in
 * double precision (long double for sums), or exactly in 64-bit integers,
 * from the inputs as the backend holds them, independently of any backend and
 * of the library's arithmetic. Float results stay unrounded: the comparison
 * rounds them (exact ops) or measures the distance in ulps (ULP ops). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool is_float(bp_dtype dt) { return dt == BP_F16 || dt == BP_BF16 || dt == BP_F32 || dt == BP_F64; }

static void unravel(int32_t rank, const int64_t *shape, int64_t flat, int64_t *idx)
{
    for (int32_t k = rank - 1; k >= 0; k--) {
        idx[k] = shape[k] ? flat % shape[k] : 0;
        flat = shape[k] ? flat / shape[k] : 0;
    }
}

/* Flat index into an operand (right-aligned, size-1 axes broadcast). */
static int64_t bcast_index(int32_t out_rank, const int64_t *idx, const cf_array *in)
{
    int64_t f = 0;
    for (int32_t k = 0; k < in->rank; k++) {
        int64_t i = idx[out_rank - in->rank + k];
        f = f * in->shape[k] + (in->shape[k] == 1 ? 0 : i);
    }
    return f;
}

static int32_t broadcast_shape(const cf_array *in, int n, int64_t *shape)
{
    int32_t rank = 0;
    for (int k = 0; k < n; k++)
        if (in[k].rank > rank)
            rank = in[k].rank;
    for (int32_t d = 0; d < rank; d++) {
        int64_t s = 1;
        for (int k = 0; k < n; k++) {
            int32_t j = d - (rank - in[k].rank);
            if (j >= 0 && in[k].shape[j] != 1)
                s = in[k].shape[j];
        }
        shape[d] = s;
    }
    return rank;
}

/* ---- elementwise ------------------------------------------------------------ */

static double f_unary(bp_op op, double x)
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
    case BP_OP_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case BP_OP_ERF: return erf(x);
    case BP_OP_FLOOR: return floor(x);
    case BP_OP_CEIL: return ceil(x);
    case BP_OP_ROUND: return nearbyint(x);
    case BP_OP_ISNAN: return isnan(x) ? 1 : 0;
    case BP_OP_ISINF: return isinf(x) ? 1 : 0;
    default: return NAN;
    }
}

static int64_t i_unary(bp_op op, bp_dtype dt, int64_t x)
{
    switch (op) {
    case BP_OP_NEG: return cf_wrap(dt, (int64_t)(0u - (uint64_t)x));
    case BP_OP_ABS: return x < 0 ? cf_wrap(dt, (int64_t)(0u - (uint64_t)x)) : x;
    case BP_OP_SIGN: return (x > 0) - (x < 0);
    case BP_OP_RELU: return x > 0 ? x : 0;
    case BP_OP_LOGICAL_NOT: return !x;
    default: return 0;
    }
}

static double f_binary(bp_op op, double a, double b)
{
    switch (op) {
    case BP_OP_ADD: return a + b;
    case BP_OP_SUB: return a - b;
    case BP_OP_MUL: return a * b;
    case BP_OP_DIV: return a / b;
    case BP_OP_POW: return pow(a, b);
    case BP_OP_MAXIMUM: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case BP_OP_MINIMUM: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    case BP_OP_MOD: {
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
    default: return NAN;
    }
}

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

static int64_t i_binary(bp_op op, bp_dtype dt, int64_t a, int64_t b)
{
    switch (op) {
    case BP_OP_ADD: return cf_wrap(dt, (int64_t)((uint64_t)a + (uint64_t)b));
    case BP_OP_SUB: return cf_wrap(dt, (int64_t)((uint64_t)a - (uint64_t)b));
    case BP_OP_MUL: return cf_wrap(dt, (int64_t)((uint64_t)a * (uint64_t)b));
    case BP_OP_DIV:
        if (b == 0)
            return 0;
        if (b == -1)
            return cf_wrap(dt, (int64_t)(0u - (uint64_t)a));
        return cf_wrap(dt, a / b);
    case BP_OP_MOD: {
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
    default: return 0;
    }
}

static bool oracle_unary(const cf_case *c, const cf_array *x, cf_array *want)
{
    bp_op op = (bp_op)c->op;
    bp_dtype odt = op == BP_OP_ISNAN || op == BP_OP_ISINF ? BP_BOOL : x->dt;
    if (!cf_array_init(want, odt, x->rank, x->shape))
        return false;
    for (int64_t k = 0; k < x->n; k++) {
        if (x->f)
            cf_set_f(want, k, f_unary(op, x->f[k]));
        else
            want->i[k] = i_unary(op, x->dt, x->i[k]);
    }
    return true;
}

static bool oracle_binary(const cf_case *c, const cf_array *in, cf_array *want)
{
    bp_op op = (bp_op)c->op;
    bool cmp = op >= BP_OP_EQ && op <= BP_OP_GE;
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK];
    int32_t rank = broadcast_shape(in, 2, shape);
    if (!cf_array_init(want, cmp ? BP_BOOL : in[0].dt, rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        unravel(rank, shape, k, idx);
        int64_t ia = bcast_index(rank, idx, &in[0]), ib = bcast_index(rank, idx, &in[1]);
        if (in[0].f)
            cf_set_f(want, k, f_binary(op, in[0].f[ia], in[1].f[ib]));
        else
            want->i[k] = i_binary(op, in[0].dt, in[0].i[ia], in[1].i[ib]);
    }
    return true;
}

static bool oracle_where(const cf_array *in, cf_array *want)
{
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK];
    int32_t rank = broadcast_shape(in, 3, shape);
    if (!cf_array_init(want, in[1].dt, rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        unravel(rank, shape, k, idx);
        bool cond = in[0].i[bcast_index(rank, idx, &in[0])] != 0;
        const cf_array *src = cond ? &in[1] : &in[2];
        int64_t j = bcast_index(rank, idx, src);
        if (want->f)
            want->f[k] = src->f[j];
        else
            want->i[k] = src->i[j];
    }
    return true;
}

/* ---- reductions ---------------------------------------------------------------- */

static bool oracle_reduce(const cf_case *c, const cf_array *x, cf_array *want, double **scale,
                          int64_t *kout)
{
    bp_op op = (bp_op)c->op;
    int32_t n_axes, axes[BP_MAX_RANK];
    bool keepdims, red[BP_MAX_RANK] = {false};
    cf_reduce_axes(c, &n_axes, axes, &keepdims);
    if (n_axes == 0)
        for (int32_t d = 0; d < x->rank; d++)
            red[d] = true;
    for (int32_t a = 0; a < n_axes; a++)
        red[axes[a] < 0 ? axes[a] + x->rank : axes[a]] = true;
    int64_t oshape[BP_MAX_RANK], kshape[BP_MAX_RANK], rshape[BP_MAX_RANK];
    int32_t orank = 0, krank = 0, rrank = 0;
    int32_t kdim[BP_MAX_RANK], rdim[BP_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) {
        if (red[d]) {
            rdim[rrank] = d;
            rshape[rrank++] = x->shape[d];
            if (keepdims)
                oshape[orank++] = 1;
        } else {
            kdim[krank] = d;
            kshape[krank++] = x->shape[d];
            oshape[orank++] = x->shape[d];
        }
    }
    bool arg = op == BP_OP_ARGMAX || op == BP_OP_ARGMIN;
    if (!cf_array_init(want, arg ? BP_I64 : x->dt, orank, oshape))
        return false;
    int64_t K = cf_numel(rrank, rshape);
    *kout = K;
    *scale = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof **scale);
    if (!*scale)
        return false;
    int64_t strides[BP_MAX_RANK];
    for (int32_t d = x->rank - 1, s = 1; d >= 0; d--) {
        strides[d] = s;
        s *= (int32_t)(x->shape[d] ? x->shape[d] : 1);
    }
    int64_t kidx[BP_MAX_RANK], ridx[BP_MAX_RANK];
    for (int64_t o = 0; o < want->n; o++) {
        unravel(krank, kshape, o, kidx);
        int64_t base = 0;
        for (int32_t j = 0; j < krank; j++)
            base += kidx[j] * strides[kdim[j]];
        /* in double, in order: floats accumulate in f64 (plugin.h), so an
         * intermediate overflow of f64 data is part of the result */
        double acc = op == BP_OP_PROD ? 1.0 : 0.0;
        long double mag = 0.0L;
        uint64_t iacc = op == BP_OP_PROD ? 1u : 0u;
        double best = 0, m = -INFINITY;
        int64_t ibest = 0, best_at = -1;
        bool any_nan = false;
        for (int64_t r = 0; r < K; r++) {
            unravel(rrank, rshape, r, ridx);
            int64_t at = base;
            for (int32_t j = 0; j < rrank; j++)
                at += ridx[j] * strides[rdim[j]];
            if (x->f) {
                double v = x->f[at];
                any_nan = any_nan || isnan(v);
                switch (op) {
                case BP_OP_SUM: case BP_OP_MEAN: acc += v; mag += fabsl((long double)v); break;
                case BP_OP_PROD: acc *= v; break;
                case BP_OP_LOGSUMEXP: if (v > m) m = v; break;
                case BP_OP_MAX: case BP_OP_ARGMAX:
                    if (best_at < 0 || (!isnan(best) && (isnan(v) || v > best))) {
                        best = v;
                        best_at = r;
                    }
                    break;
                case BP_OP_MIN: case BP_OP_ARGMIN:
                    if (best_at < 0 || (!isnan(best) && (isnan(v) || v < best))) {
                        best = v;
                        best_at = r;
                    }
                    break;
                default: break;
                }
            } else {
                int64_t v = x->i[at];
                switch (op) {
                case BP_OP_SUM: iacc += (uint64_t)v; break;
                case BP_OP_PROD: iacc *= (uint64_t)v; break;
                case BP_OP_MAX: case BP_OP_ARGMAX:
                    if (best_at < 0 || v > ibest) { ibest = v; best_at = r; }
                    break;
                case BP_OP_MIN: case BP_OP_ARGMIN:
                    if (best_at < 0 || v < ibest) { ibest = v; best_at = r; }
                    break;
                default: break;
                }
            }
        }
        if (op == BP_OP_LOGSUMEXP && x->f) {
            long double s = 0.0L;
            if (isinf(m) && m > 0) {
                acc = any_nan ? NAN : INFINITY;
            } else if (K == 0 || (isinf(m) && m < 0)) {
                acc = any_nan ? NAN : -INFINITY;
            } else {
                for (int64_t r = 0; r < K; r++) {
                    unravel(rrank, rshape, r, ridx);
                    int64_t at = base;
                    for (int32_t j = 0; j < rrank; j++)
                        at += ridx[j] * strides[rdim[j]];
                    s += expl((long double)x->f[at] - (long double)m);
                }
                acc = any_nan ? NAN : (double)((long double)m + logl(s));
            }
            (*scale)[o] = 1.0 + (isfinite(m) ? fabs(m) : 0.0);
        }
        switch (op) {
        case BP_OP_SUM:
            if (x->f) {
                want->f[o] = (double)acc;
                (*scale)[o] = (double)mag;
            } else {
                want->i[o] = cf_wrap(x->dt, (int64_t)iacc);
            }
            break;
        case BP_OP_MEAN:
            want->f[o] = K ? acc / (double)K : NAN;
            (*scale)[o] = K ? (double)(mag / (long double)K) : 0.0;
            break;
        case BP_OP_PROD:
            if (x->f) {
                want->f[o] = (double)acc;
                (*scale)[o] = fabs((double)acc);
            } else {
                want->i[o] = cf_wrap(x->dt, (int64_t)iacc);
            }
            break;
        case BP_OP_LOGSUMEXP: want->f[o] = (double)acc; break;
        case BP_OP_MAX: case BP_OP_MIN:
            if (x->f)
                want->f[o] = best;
            else
                want->i[o] = ibest;
            break;
        case BP_OP_ARGMAX: case BP_OP_ARGMIN: want->i[o] = best_at; break;
        default: break;
        }
    }
    return true;
}

static bool oracle_softmax(const cf_case *c, const cf_array *x, cf_array *want, double **scale,
                           int64_t *kout)
{
    bool log_form = c->op == BP_OP_LOG_SOFTMAX;
    int32_t axis = cf_axis_param(c);
    if (axis < 0)
        axis += x->rank;
    if (!cf_array_init(want, x->dt, x->rank, x->shape))
        return false;
    *scale = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof **scale);
    if (!*scale)
        return false;
    int64_t K = x->rank ? x->shape[axis] : 1, inner = 1;
    for (int32_t d = axis + 1; d < x->rank; d++)
        inner *= x->shape[d];
    *kout = K;
    int64_t outer = K && inner ? x->n / (K * inner) : 0;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * K * inner + in;
            double m = -INFINITY;
            bool nan = false;
            for (int64_t r = 0; r < K; r++) {
                double v = x->f[base + r * inner];
                nan = nan || isnan(v);
                if (v > m)
                    m = v;
            }
            long double s = 0.0L;
            for (int64_t r = 0; r < K; r++)
                s += expl((long double)x->f[base + r * inner] - (long double)m);
            double ls = (double)logl(s);
            for (int64_t r = 0; r < K; r++) {
                int64_t at = base + r * inner;
                double d = x->f[at] - m;
                double v;
                if (nan || isinf(m) )
                    v = NAN; /* a NaN, or +inf or all -inf in the row */
                else
                    v = log_form ? (double)((long double)d - (long double)ls)
                                 : (double)(expl((long double)d) / s);
                want->f[at] = v;
                double ad = isfinite(d) ? fabs(d) : 0.0;
                (*scale)[at] = log_form ? 1.0 + ad + fabs(ls) : (isfinite(v) ? fabs(v) : 0) * (1.0 + ad);
            }
        }
    }
    return true;
}

static bool oracle_matmul(const cf_array *in, cf_array *want, double **scale, int64_t *kout)
{
    cf_array a = in[0], b = in[1];
    bool drop_m = a.rank == 1, drop_n = b.rank == 1;
    if (drop_m) {
        a.rank = 2;
        a.shape[1] = a.shape[0];
        a.shape[0] = 1;
    }
    if (drop_n) {
        b.rank = 2;
        b.shape[1] = 1;
    }
    int64_t M = a.shape[a.rank - 2], K = a.shape[a.rank - 1], N = b.shape[b.rank - 1];
    *kout = K;
    /* batch dims broadcast */
    cf_array ab[2] = {a, b};
    ab[0].rank -= 2;
    ab[1].rank -= 2;
    int64_t bshape[BP_MAX_RANK], bidx[BP_MAX_RANK];
    int32_t brank = broadcast_shape(ab, 2, bshape);
    int64_t oshape[BP_MAX_RANK];
    int32_t orank = 0;
    for (int32_t d = 0; d < brank; d++)
        oshape[orank++] = bshape[d];
    if (!drop_m)
        oshape[orank++] = M;
    if (!drop_n)
        oshape[orank++] = N;
    if (!cf_array_init(want, a.dt, orank, oshape))
        return false;
    *scale = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof **scale);
    if (!*scale)
        return false;
    int64_t nb = cf_numel(brank, bshape);
    for (int64_t bi = 0; bi < nb; bi++) {
        unravel(brank, bshape, bi, bidx);
        int64_t ao = bcast_index(brank, bidx, &ab[0]) * M * K;
        int64_t bo = bcast_index(brank, bidx, &ab[1]) * K * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int64_t o = (bi * M + i) * N + j;
                if (a.f) {
                    double s = 0.0, mag = 0.0; /* double, in order, like the reductions */
                    for (int64_t k = 0; k < K; k++) {
                        double p = a.f[ao + i * K + k] * b.f[bo + k * N + j];
                        s += p;
                        mag += fabs(p);
                    }
                    want->f[o] = (double)s;
                    (*scale)[o] = (double)mag;
                } else {
                    uint64_t s = 0;
                    for (int64_t k = 0; k < K; k++)
                        s += (uint64_t)a.i[ao + i * K + k] * (uint64_t)b.i[bo + k * N + j];
                    want->i[o] = cf_wrap(a.dt, (int64_t)s);
                }
            }
    }
    return true;
}

/* ---- movement ----------------------------------------------------------------------- */

static void copy_elem(cf_array *dst, int64_t k, const cf_array *src, int64_t j)
{
    if (dst->f)
        dst->f[k] = src->f ? src->f[j] : (double)src->i[j];
    else
        dst->i[k] = src->i ? src->i[j] : cf_int_of_f64(dst->dt, src->f[j]);
}

static bool oracle_transpose(const cf_case *c, const cf_array *x, cf_array *want)
{
    const int32_t *perm = cf_transpose_perm(c);
    int32_t p[BP_MAX_RANK];
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK], src[BP_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++) {
        p[d] = perm ? perm[d] : x->rank - 1 - d;
        shape[d] = x->shape[p[d]];
    }
    if (!cf_array_init(want, x->dt, x->rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        unravel(x->rank, shape, k, idx);
        for (int32_t d = 0; d < x->rank; d++)
            src[p[d]] = idx[d];
        int64_t f = 0;
        for (int32_t d = 0; d < x->rank; d++)
            f = f * x->shape[d] + src[d];
        copy_elem(want, k, x, f);
    }
    return true;
}

/* ONNX Slice clamping for one axis. */
static int64_t slice_axis(int64_t dim, int64_t start, int64_t stop, int64_t step, bool has_stop,
                          int64_t *first)
{
    if (start < 0)
        start += dim;
    if (!has_stop)
        stop = step > 0 ? INT64_MAX : INT64_MIN;
    if (stop < 0 && stop != INT64_MIN)
        stop += dim;
    if (step > 0) {
        start = start < 0 ? 0 : start > dim ? dim : start;
        stop = stop < 0 ? 0 : stop > dim ? dim : stop;
        *first = start;
        return stop > start ? (stop - start + step - 1) / step : 0;
    }
    start = start < 0 ? -1 : start > dim - 1 ? dim - 1 : start;
    stop = stop < -1 ? -1 : stop > dim - 1 ? dim - 1 : stop;
    *first = start;
    return start > stop ? (start - stop + (-step) - 1) / (-step) : 0;
}

static bool oracle_slice(const cf_case *c, const cf_array *x, cf_array *want)
{
    int64_t starts[BP_MAX_RANK], stops[BP_MAX_RANK], steps[BP_MAX_RANK];
    bool has_stops;
    cf_slice_params(c, starts, stops, steps, &has_stops);
    int64_t shape[BP_MAX_RANK], first[BP_MAX_RANK], idx[BP_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        shape[d] = slice_axis(x->shape[d], starts[d], stops[d], steps[d], has_stops, &first[d]);
    if (!cf_array_init(want, x->dt, x->rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        unravel(x->rank, shape, k, idx);
        int64_t f = 0;
        for (int32_t d = 0; d < x->rank; d++)
            f = f * x->shape[d] + first[d] + idx[d] * steps[d];
        copy_elem(want, k, x, f);
    }
    return true;
}

static bool oracle_concat(const cf_case *c, const cf_array *in, int n_in, cf_array *want)
{
    int32_t axis = cf_axis_param(c);
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK];
    for (int32_t d = 0; d < in[0].rank; d++)
        shape[d] = in[0].shape[d];
    for (int k = 1; k < n_in; k++)
        shape[axis] += in[k].shape[axis];
    if (!cf_array_init(want, in[0].dt, in[0].rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        unravel(in[0].rank, shape, k, idx);
        int src = 0;
        while (idx[axis] >= in[src].shape[axis]) {
            idx[axis] -= in[src].shape[axis];
            src++;
        }
        int64_t f = 0;
        for (int32_t d = 0; d < in[src].rank; d++)
            f = f * in[src].shape[d] + idx[d];
        copy_elem(want, k, &in[src], f);
    }
    return true;
}

static bool oracle_broadcast(const cf_case *c, const cf_array *x, cf_array *want)
{
    int32_t rank;
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK];
    cf_broadcast_target(c, &rank, shape);
    if (!cf_array_init(want, x->dt, rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        unravel(rank, shape, k, idx);
        copy_elem(want, k, x, bcast_index(rank, idx, x));
    }
    return true;
}

static bool oracle_pad(const cf_case *c, const cf_array *x, cf_array *want)
{
    int64_t before[BP_MAX_RANK], after[BP_MAX_RANK], shape[BP_MAX_RANK], idx[BP_MAX_RANK];
    double value;
    cf_pad_params(c, before, after, &value);
    for (int32_t d = 0; d < x->rank; d++)
        shape[d] = before[d] + x->shape[d] + after[d];
    if (!cf_array_init(want, x->dt, x->rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        unravel(x->rank, shape, k, idx);
        bool inside = true;
        int64_t f = 0;
        for (int32_t d = 0; d < x->rank; d++) {
            int64_t i = idx[d] - before[d];
            inside = inside && i >= 0 && i < x->shape[d];
            f = f * x->shape[d] + i;
        }
        if (inside)
            copy_elem(want, k, x, f);
        else
            cf_set_f(want, k, want->f ? cf_round(x->dt, value) : value);
    }
    return true;
}

static bool oracle_cast(const cf_case *c, const cf_array *x, cf_array *want)
{
    bp_dtype to = c->op == BP_OP_COPY ? x->dt : c->dtype2;
    if (!cf_array_init(want, to, x->rank, x->shape))
        return false;
    for (int64_t k = 0; k < x->n; k++) {
        if (x->f)
            cf_set_f(want, k, x->f[k]); /* floats stay unrounded; ints by the cast rules */
        else if (want->f)
            want->f[k] = (double)x->i[k];
        else
            want->i[k] = cf_int_of_i64(to, x->i[k]);
    }
    return true;
}

static bool oracle_gather(const cf_case *c, const cf_array *in, cf_array *want)
{
    const cf_array *x = &in[0], *ind = &in[1];
    int32_t axis = cf_axis_param(c);
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK], src[BP_MAX_RANK], iidx[BP_MAX_RANK];
    int32_t rank = 0;
    for (int32_t d = 0; d < axis; d++)
        shape[rank++] = x->shape[d];
    for (int32_t d = 0; d < ind->rank; d++)
        shape[rank++] = ind->shape[d];
    for (int32_t d = axis + 1; d < x->rank; d++)
        shape[rank++] = x->shape[d];
    if (!cf_array_init(want, x->dt, rank, shape))
        return false;
    for (int64_t k = 0; k < want->n; k++) {
        unravel(rank, shape, k, idx);
        for (int32_t d = 0; d < axis; d++)
            src[d] = idx[d];
        for (int32_t d = 0; d < ind->rank; d++)
            iidx[d] = idx[axis + d];
        int64_t fi = 0;
        for (int32_t d = 0; d < ind->rank; d++)
            fi = fi * ind->shape[d] + iidx[d];
        int64_t j = ind->i[fi];
        src[axis] = j < 0 ? j + x->shape[axis] : j;
        for (int32_t d = axis + 1; d < x->rank; d++)
            src[d] = idx[d - 1 + ind->rank];
        int64_t f = 0;
        for (int32_t d = 0; d < x->rank; d++)
            f = f * x->shape[d] + src[d];
        copy_elem(want, k, x, f);
    }
    return true;
}

/* ---- creation ----------------------------------------------------------------------- */

static uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t *hi)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    return (uint32_t)p;
}

/* Philox4x32-10 from the text of philox.h (not its code). */
static void philox(uint64_t seed, uint64_t block, uint32_t w[4])
{
    uint32_t c[4] = {(uint32_t)block, (uint32_t)(block >> 32), 0, 0};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    for (int r = 0; r < 10; r++) {
        uint32_t hi0, hi1;
        uint32_t lo0 = mulhilo(0xD2511F53u, c[0], &hi0);
        uint32_t lo1 = mulhilo(0xCD9E8D57u, c[2], &hi1);
        uint32_t n[4] = {hi1 ^ c[1] ^ key[0], lo1, hi0 ^ c[3] ^ key[1], lo0};
        memcpy(c, n, sizeof c);
        key[0] += 0x9E3779B9u;
        key[1] += 0xBB67AE85u;
    }
    memcpy(w, c, sizeof c);
}

double cf_philox_uniform01(uint64_t seed, uint64_t pos);
double cf_philox_uniform01(uint64_t seed, uint64_t pos)
{
    uint32_t w[4];
    philox(seed, pos >> 2, w);
    return ldexp((double)(w[pos & 3u] >> 8), -24);
}

static double philox_normal01(uint64_t seed, uint64_t pos)
{
    uint32_t w[4];
    philox(seed, pos, w);
    double u1 = ldexp((double)(w[0] >> 8) + 1.0, -24), u2 = ldexp((double)(w[1] >> 8), -24);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

static bool oracle_creation(const cf_case *c, cf_array *want)
{
    bp_dtype dt = c->dtype;
    if (c->op == BP_OP_ARANGE) {
        double start, stop, step;
        cf_arange_params(c, &start, &stop, &step);
        double q = ceil((stop - start) / step);
        int64_t n = q > 0 ? (int64_t)q : 0;
        if (!cf_array_init(want, dt, 1, &n))
            return false;
        for (int64_t k = 0; k < n; k++)
            cf_set_f(want, k, start + (double)k * step);
        return true;
    }
    if (!cf_array_init(want, dt, c->rank[0], c->shape[0]))
        return false;
    if (c->op == BP_OP_FILL && c->variant >= 100) { /* eye */
        int64_t cols = c->shape[0][1];
        for (int64_t k = 0; k < want->n; k++)
            cf_set_f(want, k, k / cols == k % cols ? 1.0 : 0.0);
        return true;
    }
    for (int64_t k = 0; k < want->n; k++) {
        double v;
        if (c->op == BP_OP_FILL)
            v = cf_fill_value(c);
        else if (c->op == BP_OP_RANDOM_UNIFORM)
            v = c->lo[0] + (c->hi[0] - c->lo[0]) * cf_philox_uniform01(c->seed, 1000u + (uint64_t)k);
        else
            v = c->lo[0] + c->hi[0] * philox_normal01(c->seed, 1000u + (uint64_t)k);
        cf_set_f(want, k, v);
    }
    return true;
}

bool cf_oracle(const cf_case *c, const cf_array *in, int n_in, cf_array *want, double **scale,
               int64_t *k)
{
    *scale = NULL;
    *k = 1;
    if (c->op >= BP_OP_COUNT)
        return false;
    switch ((bp_op)c->op) {
    case BP_OP_TRANSPOSE: return oracle_transpose(c, &in[0], want);
    case BP_OP_SLICE: return oracle_slice(c, &in[0], want);
    case BP_OP_CONCAT: return oracle_concat(c, in, n_in, want);
    case BP_OP_BROADCAST_TO: return oracle_broadcast(c, &in[0], want);
    case BP_OP_PAD: return oracle_pad(c, &in[0], want);
    case BP_OP_COPY: case BP_OP_CAST: return oracle_cast(c, &in[0], want);
    case BP_OP_GATHER: return oracle_gather(c, in, want);
    case BP_OP_WHERE: return oracle_where(in, want);
    case BP_OP_MATMUL: return oracle_matmul(in, want, scale, k);
    default: break;
    }
    switch (bp_op_family_of((bp_op)c->op)) {
    case BP_FAMILY_UNARY: return oracle_unary(c, &in[0], want);
    case BP_FAMILY_BINARY: return oracle_binary(c, in, want);
    case BP_FAMILY_REDUCE: return oracle_reduce(c, &in[0], want, scale, k);
    case BP_FAMILY_SOFTMAX: return oracle_softmax(c, &in[0], want, scale, k);
    case BP_FAMILY_CREATION: case BP_FAMILY_RANDOM: return oracle_creation(c, want);
    default: return false;
    }
}

/* unused helper kept static-free for the exec module */
bool cf_is_float_dtype(bp_dtype dt);
bool cf_is_float_dtype(bp_dtype dt) { return is_float(dt); }

/* A case's inputs, made in the worker: special values in fixed layouts, or
 * random data, drawn with the library's keyed generator on the backend under
 * test where it can (floats), else on the host with the oracle's Philox. The
 * oracle then sees exactly the values the backend holds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- special values ------------------------------------------------------- */

static int float_specials(bp_dtype dt, double *v)
{
    double tiny = dt == BP_F16 ? ldexp(1.0, -24) : dt == BP_BF16 ? ldexp(1.0, -133)
                  : dt == BP_F32 ? ldexp(1.0, -149) : ldexp(1.0, -1074);
    double minn = dt == BP_F16 ? ldexp(1.0, -14) : dt == BP_F64 ? ldexp(1.0, -1022) : ldexp(1.0, -126);
    double maxf = dt == BP_F16 ? 65504.0 : dt == BP_BF16 ? ldexp(255.0, 120)
                  : dt == BP_F32 ? ldexp(16777215.0, 104) : 1.7976931348623157e308;
    double list[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1, -1, 0.5, -0.5, 1.5, 2.5,
                     -2.5, 3, 0.1, 1e-3, 100, -100, 7, tiny, -tiny, minn, -minn, maxf, -maxf,
                     3 * tiny};
    int n = (int)(sizeof list / sizeof list[0]);
    memcpy(v, list, sizeof list);
    return n;
}

static int int_specials(bp_dtype dt, int64_t *v)
{
    if (dt == BP_BOOL) {
        v[0] = 0;
        v[1] = 1;
        return 2;
    }
    static const int64_t mid[] = {-100, -7, -2, -1, 0, 1, 2, 3, 7, 100};
    return (int)cf_int_edges(dt, mid, sizeof mid / sizeof mid[0], v);
}

/* The k-th special value of a's dtype (cyclic), set into a[i]. */
static void set_special(cf_array *a, int64_t i, int64_t k)
{
    if (cf_is_float(a->dt)) {
        double v[32];
        int n = float_specials(a->dt, v);
        a->f[i] = v[k % n];
    } else {
        int64_t v[32];
        int n = int_specials(a->dt, v);
        a->i[i] = v[k % n];
    }
}

static int n_specials(bp_dtype dt)
{
    double f[32];
    int64_t i[32];
    return cf_is_float(dt) ? float_specials(dt, f) : int_specials(dt, i);
}

/* The kind whose special-value layout a case uses: its own, or the one it
 * resembles (the ops along an axis: a reduction's rows; gemm: matmul's;
 * prelu: one vector per operand, so x and its slope pair the specials
 * elementwise, as its slope broadcasts one way only). */
static bp_op_kind layout_kind(const cf_case *c)
{
    if (c->op >= BP_OP_COUNT)
        return BP_KIND_MOVEMENT;
    bp_op op = (bp_op)c->op;
    switch (bp_op_kind_of(op)) {
    case BP_KIND_BINARY: return op == BP_OP_PRELU ? BP_KIND_UNARY : BP_KIND_BINARY;
    case BP_KIND_HARDMAX: case BP_KIND_SCAN: case BP_KIND_SORT: return BP_KIND_REDUCE;
    case BP_KIND_GEMM: return BP_KIND_MATMUL;
    default: return bp_op_kind_of(op);
    }
}

/* The shapes of the special-value layouts, by kind (n: the number of
 * special values of the dtype): every pair for binary ops, rows of specials
 * for reductions, fixed rows for softmax, small matrices for matmul, one
 * vector otherwise. */
static void special_shapes(const cf_case *c, int n_in, int n, int32_t *ranks,
                           int64_t (*shapes)[BP_MAX_RANK])
{
    bp_op_kind kind = layout_kind(c);
    for (int k = 0; k < n_in; k++) {
        ranks[k] = 1;
        shapes[k][0] = n;
    }
    if (c->op >= BP_OP_COUNT)
        return;
    if (kind == BP_KIND_BINARY) {
        ranks[0] = ranks[1] = 2;
        shapes[0][0] = n; shapes[0][1] = 1;
        shapes[1][0] = 1; shapes[1][1] = n;
    } else if (kind == BP_KIND_REDUCE) {
        ranks[0] = 2;
        shapes[0][0] = n;
        shapes[0][1] = 5;
    } else if (kind == BP_KIND_SOFTMAX) {
        ranks[0] = 2;
        shapes[0][0] = 5;
        shapes[0][1] = 5;
    } else if (kind == BP_KIND_MATMUL) {
        ranks[0] = ranks[1] = 2;
        shapes[0][0] = 5; shapes[0][1] = 4;
        shapes[1][0] = 4; shapes[1][1] = 6;
    }
}

/* Fill the arrays (initialised to the layout) with special values. */
static void special_values(const cf_case *c, int n_in, int n, cf_array *a)
{
    bp_op_kind kind = layout_kind(c);
    if (kind == BP_KIND_REDUCE && c->op < BP_OP_COUNT) {
        /* row r: {special_r, 1, special_r, -2, 0}: ties and NaN/inf placement */
        for (int64_t row = 0; row < n; row++) {
            int64_t b = row * 5;
            set_special(&a[0], b, row);
            cf_set_f(&a[0], b + 1, 1);
            set_special(&a[0], b + 2, row);
            cf_set_i(&a[0], b + 3, -2);
            cf_set_f(&a[0], b + 4, 0);
        }
    } else if (kind == BP_KIND_SOFTMAX && c->op < BP_OP_COUNT) {
        static const double rows[5][5] = {
            {1, -INFINITY, 2, -INFINITY, 0.5}, {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY},
            {NAN, 1, 2, 3, 4}, {INFINITY, 1, 2, 3, 4}, {-0.0, 0.0, 1e-30, -1e-30, 1e-3},
        };
        for (int64_t k = 0; k < 25; k++)
            a[0].f[k] = rows[k / 5][k % 5];
    } else if (kind == BP_KIND_WHERE && c->op < BP_OP_COUNT) {
        for (int64_t k = 0; k < n; k++) {
            a[0].i[k] = (k % 3) != 1;
            set_special(&a[1], k, k);
            set_special(&a[2], k, n - 1 - k);
        }
    } else {
        for (int k = 0; k < n_in; k++)
            for (int64_t i = 0; i < a[k].n; i++)
                set_special(&a[k], i, i + (int64_t)k * 3);
    }
}

/* The special-value layout of c (see cases.c: CF_SPECIAL) into the inputs'
 * arrays. */
static bool special_layout(const cf_case *c, const bp_dtype *dts, cf_inputs *in)
{
    int n = n_specials(c->dtype);
    int32_t ranks[CF_MAX_OPERANDS];
    int64_t shapes[CF_MAX_OPERANDS][BP_MAX_RANK];
    special_shapes(c, in->n, n, ranks, shapes);
    for (int k = 0; k < in->n; k++)
        if (!cf_array_init(&in->ops[k].a, dts[k], ranks[k], shapes[k]))
            return false;
    cf_array a[CF_MAX_OPERANDS];
    for (int k = 0; k < in->n; k++)
        a[k] = in->ops[k].a; /* the same buffers */
    special_values(c, in->n, n, a);
    return true;
}

/* ---- random data ------------------------------------------------------------ */

static void fill_host_random(cf_array *a, uint64_t seed, double lo, double hi, bool integral)
{
    for (int64_t k = 0; k < a->n; k++) {
        double u = cf_philox_uniform01(seed, 1000u + (uint64_t)k);
        if (a->dt == BP_BOOL) {
            a->i[k] = u < 0.5;
        } else if (!cf_is_float(a->dt) || integral) {
            double v = floor(lo + u * (hi - lo + 1.0));
            if (v > hi)
                v = hi;
            cf_set_f(a, k, v);
            if (a->f)
                a->f[k] = cf_round(a->dt, a->f[k]);
        } else {
            a->f[k] = cf_round(a->dt, lo + u * (hi - lo));
        }
    }
}

/* Gather's indices: uniform in [-dim, dim) of the gathered axis. */
static bool gather_indices(const cf_case *c, bp_dtype dt, cf_array *ind)
{
    int64_t dim = c->shape[0][cf_axis_param(c)];
    if (!cf_array_init(ind, dt, c->rank[1], c->shape[1]))
        return false;
    for (int64_t k = 0; k < ind->n; k++) {
        double u = cf_philox_uniform01(c->seed, 77u + (uint64_t)k);
        ind->i[k] = (int64_t)floor(u * 2.0 * (double)dim) - dim;
    }
    return true;
}

/* The indices of gather_elements, scatter_elements (uniform in [-dim, dim)
 * of the axis) and gather_nd, scatter_nd (tuples: component j in range of
 * x's axis b + j after the batch axes), for operand 1 of shape c->shape[1]. */
static bool more_indices(const cf_case *c, bp_dtype dt, cf_array *ind)
{
    if (!cf_array_init(ind, dt, c->rank[1], c->shape[1]))
        return false;
    bool nd = c->op == BP_OP_GATHER_ND || c->op == BP_OP_SCATTER_ND;
    int32_t axis = (int32_t)c->pi[0], xr = c->rank[0];
    int32_t b = c->op == BP_OP_GATHER_ND ? (int32_t)c->pi[0] : 0;
    int64_t m = nd && ind->rank ? ind->shape[ind->rank - 1] : 1;
    if (axis < 0)
        axis += xr;
    for (int64_t k = 0; k < ind->n; k++) {
        int64_t dim = nd ? c->shape[0][b + k % m] : c->shape[0][axis];
        double u = cf_philox_uniform01(c->seed, 77u + (uint64_t)k);
        ind->i[k] = (int64_t)floor(u * 2.0 * (double)dim) - dim;
    }
    return true;
}

static bool has_index_operand(const cf_case *c)
{
    return c->op == BP_OP_GATHER || c->op == BP_OP_GATHER_ELEMENTS || c->op == BP_OP_GATHER_ND ||
           c->op == BP_OP_SCATTER_ELEMENTS || c->op == BP_OP_SCATTER_ND;
}

/* ---- tensors ------------------------------------------------------------------ */

/* The tensor of operand `which` (dtype dt): from op->a's values when they are
 * set, else from random data. Random floats come from bp_random_uniform on the
 * backend under test when it supports it; the values it holds are read
 * back into op->a. */
static bool make_operand(const cf_worker_env *env, const cf_case *c, cf_operand *op,
                         int which, bp_dtype dt, bool values_set, cf_result *r)
{
    if (!values_set && !cf_array_init(&op->a, dt, c->rank[which], c->shape[which])) {
        CF_MSG(r, "%s: out of host memory", c->name);
        return false;
    }
    int32_t rank = op->a.rank;
    const int64_t *shape = op->a.shape;
    uint64_t seed = c->seed * 7u + (uint64_t)which;
    bp_status st;
    size_t bytes = (size_t)op->a.n * bp_dtype_size(dt);
    void *raw = malloc(bytes ? bytes : 1);
    if (!raw) {
        CF_MSG(r, "%s: out of host memory", c->name);
        return false;
    }
    if (!values_set && cf_is_float(dt) && c->data == CF_RANDOM &&
        bp_backend_supports(env->be, BP_OP_RANDOM_UNIFORM, dt)) {
        st = bp_random_uniform(env->be, dt, rank, shape, seed, 1000u, c->lo[which], c->hi[which],
                               &op->t);
        if (st == BP_OK)
            st = bp_tensor_to_host(op->t, raw, bytes);
        if (st != BP_OK) {
            CF_MSG(r, "%s: could not draw the random input with bp_random_uniform(%s): %s: %s",
                   c->name, bp_dtype_name(dt), bp_status_string(st), bp_last_error());
            free(raw);
            return false;
        }
        cf_decode(&op->a, raw);
        free(raw);
        return true;
    }
    if (!values_set)
        fill_host_random(&op->a, seed, c->lo[which], c->hi[which], c->data == CF_RANGE);
    cf_encode(&op->a, raw);
    cf_decode(&op->a, raw); /* the oracle sees exactly the stored values */
    st = bp_tensor_from_host(env->be, dt, rank, shape, raw, &op->t);
    free(raw);
    if (st != BP_OK) {
        CF_MSG(r, "%s: bp_tensor_from_host(%s) failed: %s: %s", c->name, bp_dtype_name(dt),
               bp_status_string(st), bp_last_error());
        return false;
    }
    return true;
}

/* How many operands the op call takes, and their dtypes. */
static int operands(const cf_case *c, bp_dtype *dts)
{
    int n = c->n_in;
    bp_op_kind kind = c->op < BP_OP_COUNT ? bp_op_kind_of((bp_op)c->op) : BP_KIND_MOVEMENT;
    if (kind == BP_KIND_FILL || kind == BP_KIND_ARANGE || kind == BP_KIND_RANDOM)
        n = 0;
    if (c->op == BP_OP_BROADCAST_TO)
        n = 1; /* the second shape is the target */
    for (int k = 0; k < CF_MAX_OPERANDS; k++)
        dts[k] = c->dtype;
    if (c->op == BP_OP_WHERE)
        dts[0] = BP_BOOL;
    if (has_index_operand(c))
        dts[1] = c->dtype2;
    return n;
}

bool cf_make_inputs(const cf_worker_env *env, const cf_case *c, cf_inputs *in, cf_result *r)
{
    memset(in, 0, sizeof *in);
    bp_dtype dts[CF_MAX_OPERANDS];
    in->n = operands(c, dts);
    bool ok = true;
    if (c->data == CF_SPECIAL)
        ok = special_layout(c, dts, in);
    else if (c->op == BP_OP_GATHER)
        ok = gather_indices(c, dts[1], &in->ops[1].a);
    else if (has_index_operand(c))
        ok = more_indices(c, dts[1], &in->ops[1].a);
    for (int k = 0; ok && k < in->n; k++) {
        bool set = c->data == CF_SPECIAL || (has_index_operand(c) && k == 1);
        ok = make_operand(env, c, &in->ops[k], k, dts[k], set, r);
    }
    if (!ok) {
        cf_inputs_free(in);
        if (!r->message[0])
            CF_MSG(r, "%s: could not make the inputs", c->name);
    }
    return ok;
}

void cf_inputs_free(cf_inputs *in)
{
    for (int k = 0; k < CF_MAX_OPERANDS; k++) {
        bp_tensor_release(in->ops[k].t);
        cf_array_free(&in->ops[k].a);
        in->ops[k].t = NULL;
    }
}

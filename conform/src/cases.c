/* The one table of cases.
 *
 * Every op of BP_OP_LIST, every dtype it accepts (ops.h), shapes chosen to hit
 * the edges: rank 0, zero elements, size-1 and broadcast dimensions, lengths
 * that are not a multiple of any vector width (1, 7, 33, 1023) and sizes past
 * the threading thresholds of blas_cpu (2^16 elements for light ops, 2^12 for
 * transcendental ones); special values (NaN, +-Inf, -0, subnormals, integer
 * min/max) and random data from the library's keyed generator. The order is
 * fixed, so a case's index names it in every run. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nn_cases.h"

/* Sizes just past blas_cpu's threading grains (BPC_GRAIN_LIGHT / _HEAVY). */
#define BIG_LIGHT "65537"
#define BIG_HEAVY "4097"


/* The oracle's dtype sets (oracle/dtypes.c), and bool alone. */
#define ALL cf_all_dtypes
#define NUMERIC cf_numeric_dtypes
#define FLOATS cf_float_dtypes
static const bp_dtype BOOLS[] = {BP_BOOL};

/* "2,1,5;3,1" -> operands; "()" or "" is rank 0. */
static int parse_shapes(const char *spec, cf_case *c)
{
    int n = 0;
    const char *p = spec;
    while (n < CF_MAX_OPERANDS) {
        c->rank[n] = 0;
        while (*p && *p != ';') {
            if (*p == '(' || *p == ')' || *p == ',') {
                p++;
                continue;
            }
            char *end;
            long long v = strtoll(p, &end, 10);
            if (end == p)
                break;
            c->shape[n][c->rank[n]++] = v;
            p = end;
        }
        n++;
        if (*p != ';')
            break;
        p++;
    }
    return n;
}

static void label_shapes(cf_case *c)
{
    size_t used = 0;
    char *b = c->label;
    size_t cap = sizeof c->label;
    for (int k = 0; k < c->n_in && used < cap; k++) {
        used += (size_t)snprintf(b + used, cap - used, "%s(", k ? "," : "");
        for (int32_t d = 0; d < c->rank[k] && used < cap; d++)
            used += (size_t)snprintf(b + used, cap - used, d ? ",%lld" : "%lld",
                                     (long long)c->shape[k][d]);
        if (used < cap)
            used += (size_t)snprintf(b + used, cap - used, c->rank[k] == 1 ? ",)" : ")");
    }
}

cf_case *cf_case_add(cf_builder *b, int op, const char *name, bp_dtype dt, const char *shapes,
                    cf_data data, double lo, double hi, int variant)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        cf_case *v = realloc(b->v, cap * sizeof *v);
        if (!v) {
            b->oom = true;
            return NULL;
        }
        b->v = v;
        b->cap = cap;
    }
    cf_case *c = &b->v[b->n++];
    memset(c, 0, sizeof *c);
    c->op = op;
    c->name = name;
    c->dtype = dt;
    c->dtype2 = dt;
    c->n_in = parse_shapes(shapes, c);
    c->data = data;
    for (int k = 0; k < CF_MAX_OPERANDS; k++) {
        c->lo[k] = lo;
        c->hi[k] = hi;
    }
    c->variant = variant;
    c->seed = 0x5eed0000u + (uint64_t)b->n;
    if (data == CF_SPECIAL) /* the layout comes from the values (conform_exec.c) */
        snprintf(c->label, sizeof c->label, "specials");
    else
        label_shapes(c);
    return c;
}

void cf_case_suffix(cf_case *c, const char *s)
{
    size_t used = strlen(c->label);
    snprintf(c->label + used, sizeof c->label - used, "%s", s);
}

/* Integer ranges: the op's float range clipped to the dtype. */
void cf_int_range(bp_dtype dt, double *lo, double *hi)
{
    if (dt == BP_U8 && *lo < 0) {
        *lo = 0;
    }
    if (dt == BP_BOOL) {
        *lo = 0;
        *hi = 1;
    }
}

/* ---- unary ----------------------------------------------------------------- */

typedef struct unary_def {
    bp_op op;
    double lo, hi; /* random range for floats */
    bool heavy;    /* transcendental: blas_cpu threads above 2^12 */
    int set;       /* 0 floats, 1 numeric, 2 bool */
} unary_def;

static void unary_cases(cf_builder *b)
{
    static const unary_def defs[] = {
        {BP_OP_NEG, -100, 100, false, 1},       {BP_OP_ABS, -100, 100, false, 1},
        {BP_OP_SIGN, -100, 100, false, 1},      {BP_OP_EXP, -10, 10, true, 0},
        {BP_OP_LOG, 1e-3, 100, true, 0},        {BP_OP_SQRT, 0, 100, true, 0},
        {BP_OP_RSQRT, 1e-3, 100, true, 0},      {BP_OP_RECIPROCAL, -10, 10, true, 0},
        {BP_OP_SIN, -10, 10, true, 0},          {BP_OP_COS, -10, 10, true, 0},
        {BP_OP_TAN, -1.5, 1.5, true, 0},        {BP_OP_TANH, -5, 5, true, 0},
        {BP_OP_SIGMOID, -10, 10, true, 0},      {BP_OP_RELU, -100, 100, false, 1},
        {BP_OP_GELU, -5, 5, true, 0},           {BP_OP_ERF, -3, 3, true, 0},
        {BP_OP_FLOOR, -100, 100, false, 0},     {BP_OP_CEIL, -100, 100, false, 0},
        {BP_OP_ROUND, -100, 100, false, 0},     {BP_OP_ISNAN, -1, 1, false, 0},
        {BP_OP_ISINF, -1, 1, false, 0},         {BP_OP_LOGICAL_NOT, 0, 1, false, 2},
    };
    static const char *shapes[] = {"()", "0", "1", "7", "33", "3,1,5", "1023", "4,0"};
    for (size_t d = 0; d < sizeof defs / sizeof defs[0]; d++) {
        const unary_def *u = &defs[d];
        const bp_dtype *dts = u->set == 0 ? FLOATS : u->set == 1 ? NUMERIC : BOOLS;
        int ndt = u->set == 0 ? 4 : u->set == 1 ? 8 : 1;
        const char *name = bp_op_name(u->op);
        for (int t = 0; t < ndt; t++) {
            bp_dtype dt = dts[t];
            double lo = u->lo, hi = u->hi;
            if (!cf_is_float(dt))
                cf_int_range(dt, &lo, &hi);
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                cf_case_add(b, u->op, name, dt, shapes[s], CF_RANDOM, lo, hi, 0);
            cf_case_add(b, u->op, name, dt, u->heavy ? BIG_HEAVY : BIG_LIGHT, CF_RANDOM, lo, hi, 0);
            cf_case_add(b, u->op, name, dt, "0", CF_SPECIAL, 0, 0, 0); /* length set by the data */
        }
    }
}

/* ---- binary and where -------------------------------------------------------- */

static void binary_cases(cf_builder *b)
{
    static const bp_op numeric_ops[] = {BP_OP_ADD, BP_OP_SUB, BP_OP_MUL, BP_OP_DIV,
                                        BP_OP_POW, BP_OP_MAXIMUM, BP_OP_MINIMUM, BP_OP_MOD};
    static const bp_op cmp_ops[] = {BP_OP_EQ, BP_OP_NE, BP_OP_LT, BP_OP_LE, BP_OP_GT, BP_OP_GE};
    static const bp_op logic_ops[] = {BP_OP_LOGICAL_AND, BP_OP_LOGICAL_OR, BP_OP_LOGICAL_XOR};
    static const char *shapes[] = {"();()", "0;0", "7;7", "33;()", "2,1,5;3,1",
                                   "1023;1023", "4,0;1,1", "1;1023"};
    for (int g = 0; g < 3; g++) {
        const bp_op *ops = g == 0 ? numeric_ops : g == 1 ? cmp_ops : logic_ops;
        int nops = g == 0 ? 8 : g == 1 ? 6 : 3;
        const bp_dtype *dts = g == 0 ? NUMERIC : g == 1 ? ALL : BOOLS;
        int ndt = g == 0 ? 8 : g == 1 ? 9 : 1;
        for (int o = 0; o < nops; o++) {
            bp_op op = ops[o];
            bool heavy = op == BP_OP_POW;
            for (int t = 0; t < ndt; t++) {
                bp_dtype dt = dts[t];
                double lo = -100, hi = 100, lo2 = -100, hi2 = 100;
                cf_data data = CF_RANDOM;
                if (op == BP_OP_POW) {
                    lo = cf_is_float(dt) ? 0.1 : -4;
                    hi = cf_is_float(dt) ? 10 : 4;
                    lo2 = cf_is_float(dt) ? -3 : -3;
                    hi2 = cf_is_float(dt) ? 3 : 12;
                } else if (op == BP_OP_DIV || op == BP_OP_MOD) {
                    lo2 = -12;
                    hi2 = 12;
                } else if (g == 1) {
                    data = CF_RANGE; /* integer values in a small range: many ties */
                    lo = lo2 = -3;
                    hi = hi2 = 3;
                }
                if (!cf_is_float(dt)) {
                    cf_int_range(dt, &lo, &hi);
                    cf_int_range(dt, &lo2, &hi2);
                    if (g == 1)
                        data = CF_RANDOM;
                }
                const char *name = bp_op_name(op);
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                    cf_case *c = cf_case_add(b, op, name, dt, shapes[s], data, lo, hi, 0);
                    if (c) {
                        c->lo[1] = lo2;
                        c->hi[1] = hi2;
                    }
                }
                const char *big[] = {heavy ? BIG_HEAVY ";" BIG_HEAVY : BIG_LIGHT ";" BIG_LIGHT,
                                     heavy ? "17,257;257" : "257,256;256"};
                for (int s = 0; s < 2; s++) {
                    cf_case *c = cf_case_add(b, op, name, dt, big[s], data, lo, hi, 0);
                    if (c) {
                        c->lo[1] = lo2;
                        c->hi[1] = hi2;
                    }
                }
                cf_case_add(b, op, name, dt, "0,1;1,0", CF_SPECIAL, 0, 0, 0); /* every pair */
            }
        }
    }
    static const char *wshapes[] = {"7;7;7", "2,1;1,3;2,3", "();33;()", "0;0;1", "4,0;1;1",
                                    BIG_LIGHT ";" BIG_LIGHT ";" BIG_LIGHT};
    for (int t = 0; t < 9; t++) {
        for (size_t s = 0; s < sizeof wshapes / sizeof wshapes[0]; s++) {
            cf_case *c = cf_case_add(b, BP_OP_WHERE, "where", ALL[t], wshapes[s], CF_RANDOM, -100, 100, 0);
            if (c) {
                c->dtype2 = BP_BOOL;
                c->lo[0] = 0;
                c->hi[0] = 1;
                if (!cf_is_float(ALL[t]))
                    for (int k = 1; k < 3; k++)
                        cf_int_range(ALL[t], &c->lo[k], &c->hi[k]);
            }
        }
        cf_case *c = cf_case_add(b, BP_OP_WHERE, "where", ALL[t], "0;0;0", CF_SPECIAL, 0, 0, 0);
        if (c)
            c->dtype2 = BP_BOOL;
    }
}

/* ---- reductions, softmax, matmul ---------------------------------------------- */

/* variant: 0 every axis; 1 the last axis; 2 axis 0 keepdims; 3 axes {0, 2};
 * 4 axis -2 keepdims. */
void cf_reduce_axes(const cf_case *c, int32_t *n_axes, int32_t *axes, bool *keepdims)
{
    *keepdims = false;
    *n_axes = 0;
    switch (c->variant) {
    case 1: *n_axes = 1; axes[0] = -1; break;
    case 2: *n_axes = 1; axes[0] = 0; *keepdims = true; break;
    case 3: *n_axes = 2; axes[0] = 0; axes[1] = 2; break;
    case 4: *n_axes = 1; axes[0] = -2; *keepdims = true; break;
    default: break;
    }
}

static void reduce_cases(cf_builder *b)
{
    static const bp_op ops[] = {BP_OP_SUM, BP_OP_PROD, BP_OP_MEAN, BP_OP_MAX,
                                BP_OP_MIN, BP_OP_ARGMAX, BP_OP_ARGMIN, BP_OP_LOGSUMEXP};
    static const struct { const char *shape; int variant; bool empty; } shapes[] = {
        {"()", 0, false},     {"0", 0, true},       {"1", 0, false},      {"7", 0, false},
        {"1023", 0, false},   {"3,0", 1, true},     {"0,3", 1, false},    {"4,33", 1, false},
        {"4,33", 2, false},   {"2,3,5", 3, false},  {"1,7,1", 0, false},  {"3,5,7", 4, false},
    };
    static const char *vname[] = {" axes=all", " axis=-1", " axis=0 keepdims", " axes=0,2",
                                  " axis=-2 keepdims"};
    for (int o = 0; o < 8; o++) {
        bp_op op = ops[o];
        bool float_only = op == BP_OP_MEAN || op == BP_OP_LOGSUMEXP;
        bool no_empty = op == BP_OP_MAX || op == BP_OP_MIN || op == BP_OP_ARGMAX ||
                        op == BP_OP_ARGMIN;
        bool heavy = op == BP_OP_LOGSUMEXP;
        const bp_dtype *dts = float_only ? FLOATS : NUMERIC;
        int ndt = float_only ? 4 : 8;
        for (int t = 0; t < ndt; t++) {
            bp_dtype dt = dts[t];
            double lo = -10, hi = 10;
            if (op == BP_OP_PROD) {
                lo = cf_is_float(dt) ? 0.9 : 1;
                hi = cf_is_float(dt) ? 1.1 : 4;
            } else if (!cf_is_float(dt)) {
                lo = -100;
                hi = 100;
                if (dt == BP_I64 || dt == BP_I32) { /* sums that wrap */
                    lo = (double)cf_int_min(dt) / 2;
                    hi = (double)cf_int_max(dt) / 2;
                }
            }
            if (!cf_is_float(dt))
                cf_int_range(dt, &lo, &hi);
            const char *name = bp_op_name(op);
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                if (no_empty && shapes[s].empty)
                    continue;
                cf_case *c = cf_case_add(b, op, name, dt, shapes[s].shape, CF_RANDOM, lo, hi,
                                 shapes[s].variant);
                if (c)
                    cf_case_suffix(c, vname[shapes[s].variant]);
            }
            cf_case *c;
            c = cf_case_add(b, op, name, dt, heavy ? BIG_HEAVY : BIG_LIGHT, CF_RANDOM, lo, hi, 0);
            c = cf_case_add(b, op, name, dt, heavy ? "17,257" : "300,257", CF_RANDOM, lo, hi, 1);
            if (c)
                cf_case_suffix(c, vname[1]);
            c = cf_case_add(b, op, name, dt, heavy ? "257,17" : "257,300", CF_RANDOM, lo, hi, 2);
            if (c)
                cf_case_suffix(c, vname[2]);
            c = cf_case_add(b, op, name, dt, "0,0", CF_SPECIAL, 0, 0, 1); /* rows of specials */
            if (c)
                cf_case_suffix(c, vname[1]);
        }
    }
}

int32_t cf_axis_param(const cf_case *c)
{
    return (int32_t)c->variant;
}

static void softmax_cases(cf_builder *b)
{
    static const struct { const char *shape; int axis; } shapes[] = {
        {"7", -1}, {"1", 0}, {"3,33", -1}, {"33,3", 0}, {"2,0", -1}, {"0,5", -1},
        {"2,3,4", 1}, {"16," BIG_HEAVY, -1}, {"64,129", -1},
    };
    for (int o = 0; o < 2; o++) {
        bp_op op = o == 0 ? BP_OP_SOFTMAX : BP_OP_LOG_SOFTMAX;
        for (int t = 0; t < 4; t++) {
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                cf_case *c = cf_case_add(b, op, bp_op_name(op), FLOATS[t], shapes[s].shape, CF_RANDOM,
                                 -10, 10, shapes[s].axis);
                if (c) {
                    char a[24];
                    snprintf(a, sizeof a, " axis=%d", shapes[s].axis);
                    cf_case_suffix(c, a);
                }
            }
            cf_case_add(b, op, bp_op_name(op), FLOATS[t], "0,0", CF_SPECIAL, 0, 0, -1);
        }
    }
}

static void matmul_cases(cf_builder *b)
{
    static const char *shapes[] = {"1,1;1,1",   "2,3;3,4",   "7,33;33,5", "33;33,7",
                                   "5,33;33",   "33;33",     "0,3;3,4",   "2,0;0,3",
                                   "2,1,3,4;5,4,6", "1,7;7,1", "64,257;257,65", "3,1,1;1,1,3"};
    for (int t = 0; t < 8; t++) {
        bp_dtype dt = NUMERIC[t];
        double lo = cf_is_float(dt) ? -1 : -100, hi = cf_is_float(dt) ? 1 : 100;
        cf_int_range(dt, &lo, &hi);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            cf_case_add(b, BP_OP_MATMUL, "matmul", dt, shapes[s], CF_RANDOM, lo, hi, 0);
        cf_case_add(b, BP_OP_MATMUL, "matmul", dt, "0;0", CF_SPECIAL, 0, 0, 0);
    }
}

/* ---- movement, gather, cast ----------------------------------------------------- */

const int32_t *cf_transpose_perm(const cf_case *c)
{
    static const int32_t p120[] = {1, 2, 0}, p201[] = {2, 0, 1}, p0213[] = {0, 2, 1, 3};
    switch (c->variant) {
    case 1: return p120;
    case 2: return p201;
    case 3: return p0213;
    default: return NULL;
    }
}

void cf_slice_params(const cf_case *c, int64_t *starts, int64_t *stops, int64_t *steps,
                     bool *has_stops)
{
    *has_stops = true;
    for (int k = 0; k < BP_MAX_RANK; k++) {
        starts[k] = 0;
        stops[k] = INT64_MAX;
        steps[k] = 1;
    }
    switch (c->variant) {
    case 0: starts[0] = 2; stops[0] = 30; steps[0] = 3; break;
    case 1: starts[0] = -1; stops[0] = INT64_MIN; steps[0] = -2; break;
    case 2:
        starts[0] = 1; stops[0] = 3;
        starts[1] = 0; stops[1] = 5; steps[1] = 2;
        starts[2] = -3; stops[2] = INT64_MAX;
        break;
    case 3: starts[0] = 5; stops[0] = 2; break;          /* empty */
    case 4: starts[0] = 1; stops[0] = -1; break;
    case 5: starts[0] = -100; stops[0] = 100; break;     /* clamped */
    case 6: starts[0] = 3; *has_stops = false; steps[0] = -1; break; /* to the front */
    default: break;
    }
}

void cf_pad_params(const cf_case *c, int64_t *before, int64_t *after, double *value)
{
    for (int k = 0; k < BP_MAX_RANK; k++)
        before[k] = after[k] = 0;
    switch (c->variant) {
    case 0: before[0] = 2; after[0] = 3; *value = 1.5; break;
    case 1: before[0] = 1; after[1] = 2; *value = -INFINITY; break;
    case 2: before[0] = 1; after[0] = 1; *value = NAN; break;
    case 3: *value = 0; break;
    default: before[0] = 1; after[0] = 1; before[1] = 1; after[1] = 1; *value = 300; break;
    }
}

void cf_broadcast_target(const cf_case *c, int32_t *rank, int64_t *shape)
{
    *rank = c->rank[1];
    for (int32_t k = 0; k < c->rank[1]; k++)
        shape[k] = c->shape[1][k];
}

static void movement_cases(cf_builder *b)
{
    static const struct { const char *shape; int variant; } tr[] = {
        {"()", 0}, {"0,3", 0}, {"7", 0}, {"3,5", 0}, {"2,3,4", 1}, {"1,33,1", 2},
        {"2,3,4,5", 3}, {"257,256", 0},
    };
    static const struct { const char *shape; int variant; const char *what; } sl[] = {
        {"33", 0, " [2:30:3]"},   {"33", 1, " [-1::-2]"},    {"4,5,6", 2, " [1:3,0:5:2,-3:]"},
        {"7", 3, " [5:2] empty"}, {BIG_LIGHT, 4, " [1:-1]"}, {"7", 5, " [-100:100]"},
        {"7", 6, " [3::-1]"},
    };
    static const struct { const char *shape; int axis; } cc[] = {
        {"3;4", 0}, {"2,3;2,5", 1}, {"0,3;2,3", 0}, {"2,3,4;2,1,4", 1}, {"2;0", 0},
        {"32768;32769", 0},
    };
    static const char *bc[] = {"();3,4", "3,1;2,3,5", "1;0", "7;7", "1,256;257,256"};
    static const struct { const char *shape; int variant; } pd[] = {
        {"7", 0}, {"2,3", 1}, {"0", 2}, {"()", 3}, {"256,256", 4},
    };
    static const char *cp[] = {"()", "0", "7", "1023", "3,1,5", BIG_LIGHT};
    for (int t = 0; t < 9; t++) {
        bp_dtype dt = ALL[t];
        double lo = -100, hi = 100;
        cf_int_range(dt, &lo, &hi);
        for (size_t s = 0; s < sizeof tr / sizeof tr[0]; s++)
            cf_case_add(b, BP_OP_TRANSPOSE, "transpose", dt, tr[s].shape, CF_RANDOM, lo, hi, tr[s].variant);
        for (size_t s = 0; s < sizeof sl / sizeof sl[0]; s++) {
            cf_case *c = cf_case_add(b, BP_OP_SLICE, "slice", dt, sl[s].shape, CF_RANDOM, lo, hi,
                             sl[s].variant);
            if (c)
                cf_case_suffix(c, sl[s].what);
        }
        for (size_t s = 0; s < sizeof cc / sizeof cc[0]; s++) {
            cf_case *c = cf_case_add(b, BP_OP_CONCAT, "concat", dt, cc[s].shape, CF_RANDOM, lo, hi,
                             cc[s].axis);
            if (c)
                cf_case_suffix(c, cc[s].axis ? " axis=1" : " axis=0");
        }
        for (size_t s = 0; s < sizeof bc / sizeof bc[0]; s++)
            cf_case_add(b, BP_OP_BROADCAST_TO, "broadcast_to", dt, bc[s], CF_RANDOM, lo, hi, 0);
        for (size_t s = 0; s < sizeof pd / sizeof pd[0]; s++)
            cf_case_add(b, BP_OP_PAD, "pad", dt, pd[s].shape, CF_RANDOM, lo, hi, pd[s].variant);
        for (size_t s = 0; s < sizeof cp / sizeof cp[0]; s++)
            cf_case_add(b, BP_OP_COPY, "copy", dt, cp[s], CF_RANDOM, lo, hi, 0);
        cf_case_add(b, BP_OP_COPY, "copy", dt, "0", CF_SPECIAL, 0, 0, 0);
        /* cast: every source x every target; the matrix row is the source */
        for (int u = 0; u < 9; u++) {
            if (u == t)
                continue;
            static const char *cs[] = {"33", BIG_LIGHT};
            for (int s = 0; s < 3; s++) {
                cf_case *c = s < 2 ? cf_case_add(b, BP_OP_CAST, "cast", dt, cs[s], CF_RANDOM,
                                         cf_is_float(dt) ? -300 : lo, cf_is_float(dt) ? 300 : hi, 0)
                                   : cf_case_add(b, BP_OP_CAST, "cast", dt, "0", CF_SPECIAL, 0, 0, 0);
                if (c) {
                    c->dtype2 = ALL[u];
                    char to[16];
                    snprintf(to, sizeof to, " -> %s", bp_dtype_name(ALL[u]));
                    cf_case_suffix(c, to);
                }
            }
        }
        /* gather: x then indices (i32 / i64 in dtype2); variant = axis */
        static const struct { const char *shape; int axis; } ga[] = {
            {"7;5", 0}, {"3,4,5;2,3", 1}, {"4,5;()", 0}, {"4,5;0", 1}, {"300,257;300", 0},
        };
        for (int it = 0; it < 2; it++) {
            for (size_t s = 0; s < sizeof ga / sizeof ga[0]; s++) {
                cf_case *c = cf_case_add(b, BP_OP_GATHER, "gather", dt, ga[s].shape, CF_RANDOM, lo, hi,
                                 ga[s].axis);
                if (c) {
                    c->dtype2 = it == 0 ? BP_I32 : BP_I64;
                    char what[32];
                    snprintf(what, sizeof what, " axis=%d idx=%s", ga[s].axis,
                             it == 0 ? "i32" : "i64");
                    cf_case_suffix(c, what);
                }
            }
        }
    }
}

/* ---- creation -------------------------------------------------------------------- */

double cf_fill_value(const cf_case *c)
{
    static const double values[] = {0, 1, -3.7, 1e10, -1e10, NAN, -INFINITY, 0.5, 300, -0.0};
    return values[c->variant % (int)(sizeof values / sizeof values[0])];
}

void cf_arange_params(const cf_case *c, double *start, double *stop, double *step)
{
    static const double p[][3] = {
        {0, 7, 1}, {2.5, -3, -0.5}, {0, 0, 1}, {-100, 100, 0.37}, {0, 65537, 1}, {0, 300, 1},
        {5, 1, 1},
    };
    int v = c->variant % (int)(sizeof p / sizeof p[0]);
    *start = p[v][0];
    *stop = p[v][1];
    *step = p[v][2];
}

static void creation_cases(cf_builder *b)
{
    static const char *fs[] = {"()", "0", "7", "3,1,5", BIG_LIGHT};
    for (int t = 0; t < 9; t++) {
        bp_dtype dt = ALL[t];
        for (int v = 0; v < 10; v++) {
            cf_case *c = cf_case_add(b, BP_OP_FILL, "fill", dt, fs[v % 5], CF_RANDOM, 0, 0, v);
            if (c) {
                char what[40];
                snprintf(what, sizeof what, " full=%g", cf_fill_value(c));
                cf_case_suffix(c, what);
            }
        }
        /* bp_eye is made of fills (a strided diagonal view): variant 100+ */
        static const char *ey[] = {"3,5", "0,4", "1,1", "5,3", "300,300"};
        for (int s = 0; s < 5; s++) {
            cf_case *c = cf_case_add(b, BP_OP_FILL, "fill", dt, ey[s], CF_RANDOM, 0, 0, 100 + s);
            if (c)
                cf_case_suffix(c, " eye");
        }
    }
    for (int t = 0; t < 8; t++) {
        bp_dtype dt = NUMERIC[t];
        for (int v = 0; v < 7; v++) {
            cf_case *c = cf_case_add(b, BP_OP_ARANGE, "arange", dt, "()", CF_RANDOM, 0, 0, v);
            if (c) {
                double s0, s1, s2;
                cf_arange_params(c, &s0, &s1, &s2);
                snprintf(c->label, sizeof c->label, "arange(%g,%g,%g)", s0, s1, s2);
            }
        }
    }
    static const char *rs[] = {"()", "0", "7", "1023", "3,1,5", BIG_LIGHT};
    for (int o = 0; o < 2; o++) {
        bp_op op = o == 0 ? BP_OP_RANDOM_UNIFORM : BP_OP_RANDOM_NORMAL;
        for (int t = 0; t < 4; t++)
            for (int s = 0; s < 6; s++) {
                cf_case *c = cf_case_add(b, op, bp_op_name(op), FLOATS[t], rs[s], CF_RANDOM,
                                 o == 0 ? -2 : 1, o == 0 ? 5 : 3, s);
                if (c)
                    cf_case_suffix(c, o == 0 ? " low=-2 high=5" : " mean=1 std=3");
            }
    }
}

/* ---- the plugin contract ----------------------------------------------------------- */

static void contract_cases(cf_builder *b)
{
    cf_case *c = cf_case_add(b, CF_OP_CONTRACT_ABI, "contract.abi", (bp_dtype)-1, "()", CF_RANDOM, 0, 0, 0);
    if (c)
        snprintf(c->label, sizeof c->label, "descriptor");
    static const char *rt[] = {"()", "0", "7", "1023", "2,0,3"};
    for (int t = 0; t < 9; t++) {
        for (int s = 0; s < 5; s++)
            cf_case_add(b, CF_OP_CONTRACT_ROUNDTRIP, "contract.roundtrip", ALL[t], rt[s], CF_RANDOM, -100,
                100, 0);
        cf_case_add(b, CF_OP_CONTRACT_ROUNDTRIP, "contract.roundtrip", ALL[t], "0", CF_SPECIAL, 0, 0, 0);
    }
}

size_t cf_cases_build(cf_case **out)
{
    cf_builder b = {0};
    contract_cases(&b);
    unary_cases(&b);
    binary_cases(&b);
    reduce_cases(&b);
    matmul_cases(&b);
    softmax_cases(&b);
    movement_cases(&b);
    creation_cases(&b);
    cf_cases_1_4(&b);
    cf_cases_compose(&b);
    if (!cf_nn_cases_append(&b.v, &b.n, &b.cap)) /* nn.h's ops: cases_nn.c */
        b.oom = true;
    if (b.oom) {
        free(b.v);
        *out = NULL;
        return 0;
    }
    *out = b.v;
    return b.n;
}

bool cf_case_selected(const cf_case *c, const char *const *patterns, size_t n_patterns)
{
    if (n_patterns == 0)
        return true;
    for (size_t i = 0; i < n_patterns; i++)
        if (fnmatch(patterns[i], c->name, 0) == 0)
            return true;
    return false;
}

/* The cases of the elementwise ops: unary (with their parameters), binary,
 * where and clip.
 *   unary ops with parameters  pf[0], pf[1]: alpha, beta / gamma / bias, lambd
 *   clip                       pi[0] lo given, pi[1] hi given (operands x[, lo][, hi])
 *   where                      dtype2: the condition's (bool) */
#include <stdio.h>

#include "internal.h"

/* ---- unary ------------------------------------------------------------------ */

typedef struct unary_def {
    bp_op op;
    double lo, hi; /* random range (clipped to an integer dtype) */
    double p0, p1; /* parameters */
} unary_def;

static void unary_cases(cf_builder *b)
{
    static const unary_def defs[] = {
        {BP_OP_NEG, -100, 100, 0, 0},        {BP_OP_ABS, -100, 100, 0, 0},
        {BP_OP_SIGN, -100, 100, 0, 0},       {BP_OP_EXP, -10, 10, 0, 0},
        {BP_OP_LOG, 1e-3, 100, 0, 0},        {BP_OP_SQRT, 0, 100, 0, 0},
        {BP_OP_RSQRT, 1e-3, 100, 0, 0},      {BP_OP_RECIPROCAL, -10, 10, 0, 0},
        {BP_OP_SIN, -10, 10, 0, 0},          {BP_OP_COS, -10, 10, 0, 0},
        {BP_OP_TAN, -1.5, 1.5, 0, 0},        {BP_OP_TANH, -5, 5, 0, 0},
        {BP_OP_SIGMOID, -10, 10, 0, 0},      {BP_OP_RELU, -100, 100, 0, 0},
        {BP_OP_GELU, -5, 5, 0, 0},           {BP_OP_ERF, -3, 3, 0, 0},
        {BP_OP_FLOOR, -100, 100, 0, 0},      {BP_OP_CEIL, -100, 100, 0, 0},
        {BP_OP_ROUND, -100, 100, 0, 0},      {BP_OP_ISNAN, -1, 1, 0, 0},
        {BP_OP_ISINF, -1, 1, 0, 0},          {BP_OP_LOGICAL_NOT, 0, 1, 0, 0},
        {BP_OP_ACOS, -1, 1, 0, 0},           {BP_OP_ASIN, -1, 1, 0, 0},
        {BP_OP_ATAN, -20, 20, 0, 0},         {BP_OP_ACOSH, 1, 50, 0, 0},
        {BP_OP_ASINH, -50, 50, 0, 0},        {BP_OP_ATANH, -0.999, 0.999, 0, 0},
        {BP_OP_SINH, -10, 10, 0, 0},         {BP_OP_COSH, -10, 10, 0, 0},
        {BP_OP_LOG1P, -0.99, 50, 0, 0},      {BP_OP_EXPM1, -10, 10, 0, 0},
        {BP_OP_SOFTPLUS, -20, 20, 0, 0},     {BP_OP_SOFTSIGN, -20, 20, 0, 0},
        {BP_OP_SILU, -10, 10, 0, 0},         {BP_OP_HARDSWISH, -5, 5, 0, 0},
        {BP_OP_SQUARE, -100, 100, 0, 0},     {BP_OP_BITWISE_NOT, -100, 100, 0, 0},
        {BP_OP_ELU, -5, 5, 1.0, 0},
        {BP_OP_CELU, -5, 5, 2.0, 0},
        {BP_OP_SELU, -5, 5, 1.67326319217681884765625, 1.05070102214813232421875},
        {BP_OP_LEAKY_RELU, -10, 10, 0.01, 0},
        {BP_OP_THRESHOLDED_RELU, -3, 3, 1.0, 0},
        {BP_OP_HARD_SIGMOID, -5, 5, 0.2, 0.5},
        {BP_OP_SHRINK, -3, 3, 0.5, 1.0},
    };
    static const char *shapes[] = {"()", "0", "1", "7", "33", "3,1,5", "1023", "4,0"};
    for (size_t d = 0; d < sizeof defs / sizeof defs[0]; d++) {
        const unary_def *u = &defs[d];
        int ndt;
        const bp_dtype *dts = cf_op_dtypes(u->op, &ndt);
        char what[48] = "";
        if (u->p0 != 0 || u->p1 != 0)
            snprintf(what, sizeof what, " p=%g,%g", u->p0, u->p1);
        for (int t = 0; t < ndt; t++) {
            cf_case *c;
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                if ((c = cf_add_op(b, u->op, dts[t], shapes[s], CF_RANDOM, u->lo, u->hi, what)))
                    c->pf[0] = u->p0, c->pf[1] = u->p1;
            if ((c = cf_add_op(b, u->op, dts[t], cf_big_shape(u->op), CF_RANDOM, u->lo, u->hi,
                               what)))
                c->pf[0] = u->p0, c->pf[1] = u->p1;
            /* the length comes from the dtype's special values */
            if ((c = cf_add_op(b, u->op, dts[t], "0", CF_SPECIAL, 0, 0, what)))
                c->pf[0] = u->p0, c->pf[1] = u->p1;
        }
    }
}

/* ---- binary ------------------------------------------------------------------ */

typedef struct binary_def {
    bp_op op;
    double lo, hi, lo2, hi2; /* random ranges of a and b (clipped to an integer dtype) */
    bool ties;               /* floats: integer values, so many compare equal */
    bool one_way;            /* b broadcasts to a, never the other way (prelu's rule) */
} binary_def;

static void add_binary(cf_builder *b, const binary_def *d, bp_dtype dt, const char *shape,
                       cf_data data, double lo, double hi, double lo2, double hi2)
{
    cf_case *c = cf_add_op(b, d->op, dt, shape, data, lo, hi, NULL);
    if (c) {
        c->lo[1] = lo2, c->hi[1] = hi2;
        cf_int_range(dt, &c->lo[1], &c->hi[1]);
    }
}

static void binary_cases(cf_builder *b)
{
    static const binary_def defs[] = {
        {BP_OP_ADD, -100, 100, -100, 100, false, false},
        {BP_OP_SUB, -100, 100, -100, 100, false, false},
        {BP_OP_MUL, -100, 100, -100, 100, false, false},
        {BP_OP_DIV, -100, 100, -12, 12, false, false},
        {BP_OP_POW, 0.1, 10, -3, 3, false, false}, /* integers: below */
        {BP_OP_MAXIMUM, -100, 100, -100, 100, false, false},
        {BP_OP_MINIMUM, -100, 100, -100, 100, false, false},
        {BP_OP_MOD, -100, 100, -12, 12, false, false},
        {BP_OP_EQ, -3, 3, -3, 3, true, false},        {BP_OP_NE, -3, 3, -3, 3, true, false},
        {BP_OP_LT, -3, 3, -3, 3, true, false},        {BP_OP_LE, -3, 3, -3, 3, true, false},
        {BP_OP_GT, -3, 3, -3, 3, true, false},        {BP_OP_GE, -3, 3, -3, 3, true, false},
        {BP_OP_LOGICAL_AND, 0, 1, 0, 1, false, false},
        {BP_OP_LOGICAL_OR, 0, 1, 0, 1, false, false},
        {BP_OP_LOGICAL_XOR, 0, 1, 0, 1, false, false},
        {BP_OP_FMOD, -100, 100, -12, 12, false, true},
        {BP_OP_PRELU, -100, 100, -2, 2, false, true},
        {BP_OP_BITWISE_AND, -100, 100, -100, 100, false, true},
        {BP_OP_BITWISE_OR, -100, 100, -100, 100, false, true},
        {BP_OP_BITWISE_XOR, -100, 100, -100, 100, false, true},
        {BP_OP_BITSHIFT_LEFT, -100, 100, -2, 66, false, true},
        {BP_OP_BITSHIFT_RIGHT, -100, 100, -2, 66, false, true},
    };
    static const char *both_ways[] = {"();()", "0;0", "7;7", "33;()", "2,1,5;3,1",
                                      "1023;1023", "4,0;1,1", "1;1023"};
    static const char *one_way[] = {"();()", "0;0", "7;7", "33;()", "2,3,5;3,1", "1023;1023",
                                    "4,0;1,1", CF_BIG_LIGHT ";" CF_BIG_LIGHT, "257,256;256"};
    for (size_t k = 0; k < sizeof defs / sizeof defs[0]; k++) {
        const binary_def *d = &defs[k];
        int ndt;
        const bp_dtype *dts = cf_op_dtypes(d->op, &ndt);
        bool heavy = bp_op_info_of(d->op)->cost == BP_COST_HEAVY;
        for (int t = 0; t < ndt; t++) {
            bp_dtype dt = dts[t];
            double lo = d->lo, hi = d->hi, lo2 = d->lo2, hi2 = d->hi2;
            if (d->op == BP_OP_POW && !cf_is_float(dt)) /* negative exponents, overflow */
                lo = -4, hi = 4, lo2 = -3, hi2 = 12;
            cf_data data = d->ties && cf_is_float(dt) ? CF_RANGE : CF_RANDOM;
            if (d->one_way) {
                for (size_t s = 0; s < sizeof one_way / sizeof one_way[0]; s++)
                    add_binary(b, d, dt, one_way[s], data, lo, hi, lo2, hi2);
            } else {
                for (size_t s = 0; s < sizeof both_ways / sizeof both_ways[0]; s++)
                    add_binary(b, d, dt, both_ways[s], data, lo, hi, lo2, hi2);
                add_binary(b, d, dt, heavy ? CF_BIG_HEAVY ";" CF_BIG_HEAVY
                                           : CF_BIG_LIGHT ";" CF_BIG_LIGHT,
                           data, lo, hi, lo2, hi2);
                add_binary(b, d, dt, heavy ? "17,257;257" : "257,256;256", data, lo, hi, lo2,
                           hi2);
            }
            cf_add_op(b, d->op, dt, "0,1;1,0", CF_SPECIAL, 0, 0, NULL); /* every pair */
        }
    }
}

static void where_cases(cf_builder *b)
{
    const bp_dtype *ALL = cf_all_dtypes;
    static const char *wshapes[] = {"7;7;7", "2,1;1,3;2,3", "();33;()", "0;0;1", "4,0;1;1",
                                    CF_BIG_LIGHT ";" CF_BIG_LIGHT ";" CF_BIG_LIGHT};
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

static void clip_cases(cf_builder *b)
{
    /* x, then the bounds that are given: pi[0] lo, pi[1] hi */
    static const struct { const char *shapes; int lo, hi; const char *what; } defs[] = {
        {"7;7;7", 1, 1, " lo,hi"},       {"3,4;4;3,1", 1, 1, " lo,hi broadcast"},
        {"33;()", 1, 0, " lo"},          {"33;()", 0, 1, " hi"},
        {"7", 0, 0, " no bounds"},       {"0;0;()", 1, 1, " lo,hi"},
        {CF_BIG_LIGHT ";();()", 1, 1, " lo,hi"},
    };
    for (int t = 0; t < 8; t++) {
        bp_dtype dt = cf_numeric_dtypes[t];
        for (size_t s = 0; s < sizeof defs / sizeof defs[0]; s++) {
            cf_case *c = cf_add_op(b, BP_OP_CLIP, dt, defs[s].shapes, CF_RANDOM, -100, 100,
                               defs[s].what);
            if (!c)
                continue;
            c->pi[0] = defs[s].lo;
            c->pi[1] = defs[s].hi;
            int k = 1;
            if (defs[s].lo) { /* lo below hi mostly, above it sometimes */
                c->lo[k] = -50, c->hi[k] = 10;
                cf_int_range(dt, &c->lo[k], &c->hi[k]);
                k++;
            }
            if (defs[s].hi) {
                c->lo[k] = 0, c->hi[k] = 50;
                cf_int_range(dt, &c->lo[k], &c->hi[k]);
            }
        }
        cf_case *c = cf_add_op(b, BP_OP_CLIP, dt, "0;0;0", CF_SPECIAL, 0, 0, " lo,hi");
        if (c)
            c->pi[0] = c->pi[1] = 1;
    }
}

void cf_cases_elementwise(cf_builder *b)
{
    unary_cases(b);
    binary_cases(b);
    where_cases(b);
    clip_cases(b);
}

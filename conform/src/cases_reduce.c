/* The cases of the reductions: sum .. logsumexp over the axes the variant
 * names (cf_reduce_axes), and the statistics (l1, l2, sum_square, log_sum,
 * var, std, any, all, the last arg-extremes) over the same axes; pf[0]: var's
 * and std's correction. */
#include <stdio.h>

#include "internal.h"

static const char *const vname[] = {" axes=all", " axis=-1", " axis=0 keepdims", " axes=0,2",
                                    " axis=-2 keepdims"};

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
    for (int o = 0; o < 8; o++) {
        bp_op op = ops[o];
        bool no_empty = op == BP_OP_MAX || op == BP_OP_MIN || op == BP_OP_ARGMAX ||
                        op == BP_OP_ARGMIN;
        bool heavy = bp_op_info_of(op)->cost == BP_COST_HEAVY;
        int ndt;
        const bp_dtype *dts = cf_op_dtypes(op, &ndt);
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
            c = cf_case_add(b, op, name, dt, heavy ? CF_BIG_HEAVY : CF_BIG_LIGHT, CF_RANDOM, lo, hi, 0);
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

static void stat_cases(cf_builder *b)
{
    static const struct { bp_op op; double correction; } defs[] = {
        {BP_OP_REDUCE_L1, 0},          {BP_OP_REDUCE_L2, 0},
        {BP_OP_REDUCE_SUM_SQUARE, 0},  {BP_OP_REDUCE_LOG_SUM, 0},
        {BP_OP_REDUCE_VAR, 0},         {BP_OP_REDUCE_VAR, 1},
        {BP_OP_REDUCE_STD, 0},         {BP_OP_REDUCE_STD, 1},
        {BP_OP_REDUCE_ANY, 0},         {BP_OP_REDUCE_ALL, 0},
        {BP_OP_ARGMAX_LAST, 0},        {BP_OP_ARGMIN_LAST, 0},
    };
    static const struct { const char *shape; int variant; bool empty; } shapes[] = {
        {"()", 0, false},   {"0", 0, true},      {"7", 0, false},      {"1023", 0, false},
        {"3,0", 1, true},   {"0,3", 1, false},   {"4,33", 1, false},   {"4,33", 2, false},
        {"2,3,5", 3, false}, {"3,5,7", 4, false}, {"300,257", 1, false}, {"257,300", 2, false},
        {CF_BIG_LIGHT, 0, false},
    };
    for (size_t d = 0; d < sizeof defs / sizeof defs[0]; d++) {
        bp_op op = defs[d].op;
        bool arg = op == BP_OP_ARGMAX_LAST || op == BP_OP_ARGMIN_LAST;
        int ndt;
        const bp_dtype *dts = cf_op_dtypes(op, &ndt);
        for (int t = 0; t < ndt; t++) {
            bp_dtype dt = dts[t];
            /* log_sum: positive sums mostly; integer sums that wrap */
            double lo = op == BP_OP_REDUCE_LOG_SUM ? -1 : -10, hi = 10;
            if (!cf_is_float(dt) && dt != BP_BOOL)
                lo = -100, hi = 100;
            if ((dt == BP_I32 || dt == BP_I64) && op != BP_OP_REDUCE_SUM_SQUARE && !arg)
                lo = (double)cf_int_min(dt) / 2, hi = (double)cf_int_max(dt) / 2;
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                if (arg && shapes[s].empty)
                    continue;
                char what[48];
                snprintf(what, sizeof what, "%s%s", vname[shapes[s].variant],
                         defs[d].correction ? " correction=1" : "");
                cf_case *c = cf_add_op(b, op, dt, shapes[s].shape, CF_RANDOM, lo, hi, what);
                if (c) {
                    c->variant = shapes[s].variant;
                    c->pf[0] = defs[d].correction;
                }
            }
            cf_case *c = cf_add_op(b, op, dt, "0,0", CF_SPECIAL, 0, 0, vname[1]);
            if (c) {
                c->variant = 1;
                c->pf[0] = defs[d].correction;
            }
        }
    }
}

void cf_cases_reduce(cf_builder *b)
{
    reduce_cases(b);
    stat_cases(b);
}

/* The cases of the ops along one axis: softmax and log_softmax (the axis is
 * the variant: cf_axis_param), cumsum and cumprod (pi[0] axis, pi[1]
 * exclusive, pi[2] reverse), sort (pi[0] axis, pi[1] descending), hardmax
 * (pi[0] axis) and topk (pi[0] k, pi[1] axis, pi[2] largest, pi[3] sorted). */
#include <stdio.h>

#include "internal.h"

int32_t cf_axis_param(const cf_case *c)
{
    return (int32_t)c->variant;
}

static void softmax_cases(cf_builder *b)
{
    static const struct { const char *shape; int axis; } shapes[] = {
        {"7", -1}, {"1", 0}, {"3,33", -1}, {"33,3", 0}, {"2,0", -1}, {"0,5", -1},
        {"2,3,4", 1}, {"16," CF_BIG_HEAVY, -1}, {"64,129", -1},
    };
    for (int o = 0; o < 2; o++) {
        bp_op op = o == 0 ? BP_OP_SOFTMAX : BP_OP_LOG_SOFTMAX;
        for (int t = 0; t < CF_COUNT(cf_float_dtypes); t++) {
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                cf_case *c = cf_case_add(b, op, bp_op_name(op), cf_float_dtypes[t], shapes[s].shape, CF_RANDOM,
                                 -10, 10, shapes[s].axis);
                if (c) {
                    char a[24];
                    snprintf(a, sizeof a, " axis=%d", shapes[s].axis);
                    cf_case_suffix(c, a);
                }
            }
            cf_case_add(b, op, bp_op_name(op), cf_float_dtypes[t], "0,0", CF_SPECIAL, 0, 0, -1);
        }
    }
}

static void scan_sort_cases(cf_builder *b)
{
    static const struct { const char *shape; int axis; } shapes[] = {
        {"7", -1}, {"1", 0}, {"3,33", -1}, {"33,3", 0}, {"2,0", -1}, {"0,5", -1},
        {"2,3,4", 1}, {"16," CF_BIG_HEAVY, -1}, {"257,300", 0}, {"64,129", -1},
    };
    for (int t = 0; t < CF_COUNT(cf_numeric_dtypes); t++) {
        bp_dtype dt = cf_numeric_dtypes[t];
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            for (int mode = 0; mode < 4; mode++) { /* exclusive, reverse */
                for (int o = 0; o < 2; o++) {
                    bp_op op = o ? BP_OP_CUMPROD : BP_OP_CUMSUM;
                    double lo = o ? 0.9 : -10, hi = o ? 1.1 : 10;
                    if (!cf_is_float(dt))
                        lo = o ? -3 : -100, hi = o ? 3 : 100;
                    char what[64];
                    snprintf(what, sizeof what, " axis=%d%s%s", shapes[s].axis,
                             mode & 1 ? " exclusive" : "", mode & 2 ? " reverse" : "");
                    cf_case *c = cf_add_op(b, op, dt, shapes[s].shape, CF_RANDOM, lo, hi, what);
                    if (c)
                        c->pi[0] = shapes[s].axis, c->pi[1] = mode & 1, c->pi[2] = mode >> 1;
                }
            }
            char what[32];
            snprintf(what, sizeof what, " axis=%d", shapes[s].axis);
            for (int desc = 0; desc < 2; desc++) {
                cf_case *c = cf_add_op(b, BP_OP_SORT, dt, shapes[s].shape, CF_RANDOM, -5, 5, what);
                if (c) {
                    c->data = CF_RANGE; /* integers in a small range: ties */
                    c->pi[0] = shapes[s].axis, c->pi[1] = desc;
                    cf_case_suffix(c, desc ? " descending" : "");
                }
            }
            if (cf_is_float(dt)) {
                cf_case *c = cf_add_op(b, BP_OP_HARDMAX, dt, shapes[s].shape, CF_RANGE, -3, 3, what);
                if (c)
                    c->pi[0] = shapes[s].axis;
            }
        }
        for (int o = 0; o < 2; o++) { /* rows of specials */
            cf_case *c = cf_add_op(b, o ? BP_OP_CUMPROD : BP_OP_CUMSUM, dt, "0,0", CF_SPECIAL, 0, 0,
                               " axis=-1");
            if (c)
                c->pi[0] = -1;
            if ((c = cf_add_op(b, BP_OP_SORT, dt, "0,0", CF_SPECIAL, 0, 0, o ? " descending" : "")))
                c->pi[0] = -1, c->pi[1] = o;
        }
        if (cf_is_float(dt)) {
            cf_case *c = cf_add_op(b, BP_OP_HARDMAX, dt, "0,0", CF_SPECIAL, 0, 0, " axis=-1");
            if (c)
                c->pi[0] = -1;
        }
    }
}

static void topk_cases(cf_builder *b)
{
    static const struct { const char *shape; int64_t k; int axis; } shapes[] = {
        {"7", 3, 0},       {"7", 0, -1},       {"7", 7, 0},        {"1", 1, 0},
        {"3,33", 5, -1},   {"33,3", 2, 0},     {"2,0", 0, -1},     {"0,5", 2, -1},
        {"2,3,4", 3, 1},   {"64,1500", 8, -1}, {"1," CF_BIG_LIGHT, 20, -1},
    };
    for (int t = 0; t < CF_COUNT(cf_numeric_dtypes); t++) {
        bp_dtype dt = cf_numeric_dtypes[t];
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int mode = 0; mode < 4; mode++) {
                bool largest = !(mode & 1), sorted = !(mode & 2);
                char what[64];
                snprintf(what, sizeof what, " k=%lld axis=%d%s%s", (long long)shapes[s].k,
                         shapes[s].axis, largest ? " largest" : " smallest",
                         sorted ? "" : " unsorted");
                cf_case *c = cf_add_op(b, BP_OP_TOPK, dt, shapes[s].shape, CF_RANGE, -20, 20, what);
                if (c)
                    c->pi[0] = shapes[s].k, c->pi[1] = shapes[s].axis, c->pi[2] = largest,
                    c->pi[3] = sorted;
            }
        for (int largest = 0; largest < 2; largest++) {
            cf_case *c = cf_add_op(b, BP_OP_TOPK, dt, "0,0", CF_SPECIAL, 0, 0,
                               largest ? " k=3 largest" : " k=3 smallest");
            if (c)
                c->pi[0] = 3, c->pi[1] = -1, c->pi[2] = largest, c->pi[3] = 1;
        }
    }
}

void cf_cases_axis(cf_builder *b)
{
    softmax_cases(b);
    scan_sort_cases(b);
    topk_cases(b);
}

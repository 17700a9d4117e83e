/* The cases of matmul and gemm (pi[0] trans_a, pi[1] trans_b, pf[0] alpha,
 * pf[1] beta; operands a, b[, c]). */
#include <stdio.h>

#include "internal.h"

static void matmul_cases(cf_builder *b)
{
    static const char *shapes[] = {"1,1;1,1",   "2,3;3,4",   "7,33;33,5", "33;33,7",
                                   "5,33;33",   "33;33",     "0,3;3,4",   "2,0;0,3",
                                   "2,1,3,4;5,4,6", "1,7;7,1", "64,257;257,65", "3,1,1;1,1,3"};
    for (int t = 0; t < CF_COUNT(cf_numeric_dtypes); t++) {
        bp_dtype dt = cf_numeric_dtypes[t];
        double lo = cf_is_float(dt) ? -1 : -100, hi = cf_is_float(dt) ? 1 : 100;
        cf_int_range(dt, &lo, &hi);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            cf_case_add(b, BP_OP_MATMUL, "matmul", dt, shapes[s], CF_RANDOM, lo, hi, 0);
        cf_case_add(b, BP_OP_MATMUL, "matmul", dt, "0;0", CF_SPECIAL, 0, 0, 0);
    }
}

static void gemm_cases(cf_builder *b)
{
    static const struct { const char *shape; int ta, tb; double alpha, beta; } defs[] = {
        {"2,3;3,4;2,4", 0, 0, 1, 1},      {"3,2;3,4;4", 1, 0, 1, 1},
        {"2,3;4,3;()", 0, 1, 0.5, -2},    {"3,2;4,3;2,1", 1, 1, 2, 0.25},
        {"7,33;5,33", 0, 1, 1, 0},        {"33,7;33,5;7,5", 1, 0, -1, 1},
        {"0,3;3,4;4", 0, 0, 1, 1},        {"2,0;0,3;2,3", 0, 0, 1, 1},
        {"64,257;65,257;65", 0, 1, 1, 1}, {"257,64;257,65;64,65", 1, 0, 0.5, 0.5},
        {"4,5;5,6;4,6", 0, 0, 0, 3},      {"4,5;5,6;4,6", 0, 0, 2, 0},
    };
    for (int t = 0; t < CF_COUNT(cf_numeric_dtypes); t++) {
        bp_dtype dt = cf_numeric_dtypes[t];
        double lo = cf_is_float(dt) ? -1 : -100, hi = cf_is_float(dt) ? 1 : 100;
        for (size_t s = 0; s < sizeof defs / sizeof defs[0]; s++) {
            char what[64];
            snprintf(what, sizeof what, " trans=%d%d alpha=%g beta=%g", defs[s].ta, defs[s].tb,
                     defs[s].alpha, defs[s].beta);
            cf_case *c = cf_add_op(b, BP_OP_GEMM, dt, defs[s].shape, CF_RANDOM, lo, hi, what);
            if (c)
                c->pi[0] = defs[s].ta, c->pi[1] = defs[s].tb, c->pf[0] = defs[s].alpha,
                c->pf[1] = defs[s].beta;
        }
        cf_case *c = cf_add_op(b, BP_OP_GEMM, dt, "0;0", CF_SPECIAL, 0, 0, " alpha=1");
        if (c)
            c->pf[0] = 1;
    }
}

void cf_cases_linalg(cf_builder *b)
{
    matmul_cases(b);
    gemm_cases(b);
}

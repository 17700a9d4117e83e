/* The cases of the ops that make a tensor: fill (the variant picks the
 * value; 100 and up: bp_eye, made of fills of a strided diagonal view),
 * arange (the variant picks start, stop, step) and the random draws (lo, hi:
 * low and high, or mean and standard deviation). */
#include <math.h>
#include <stdio.h>

#include "internal.h"

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

void cf_cases_creation(cf_builder *b)
{
    static const char *fs[] = {"()", "0", "7", "3,1,5", CF_BIG_LIGHT};
    for (int t = 0; t < CF_COUNT(cf_all_dtypes); t++) {
        bp_dtype dt = cf_all_dtypes[t];
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
    for (int t = 0; t < CF_COUNT(cf_numeric_dtypes); t++) {
        bp_dtype dt = cf_numeric_dtypes[t];
        for (int v = 0; v < 7; v++) {
            cf_case *c = cf_case_add(b, BP_OP_ARANGE, "arange", dt, "()", CF_RANDOM, 0, 0, v);
            if (c) {
                double s0, s1, s2;
                cf_arange_params(c, &s0, &s1, &s2);
                snprintf(c->label, sizeof c->label, "arange(%g,%g,%g)", s0, s1, s2);
            }
        }
    }
    static const char *rs[] = {"()", "0", "7", "1023", "3,1,5", CF_BIG_LIGHT};
    for (int o = 0; o < 2; o++) {
        bp_op op = o == 0 ? BP_OP_RANDOM_UNIFORM : BP_OP_RANDOM_NORMAL;
        for (int t = 0; t < CF_COUNT(cf_float_dtypes); t++)
            for (int s = 0; s < 6; s++) {
                cf_case *c = cf_case_add(b, op, bp_op_name(op), cf_float_dtypes[t], rs[s], CF_RANDOM,
                                 o == 0 ? -2 : 1, o == 0 ? 5 : 3, s);
                if (c)
                    cf_case_suffix(c, o == 0 ? " low=-2 high=5" : " mean=1 std=3");
            }
    }
}


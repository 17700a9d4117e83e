/* The cases of the elementwise ops: unary (with their parameters), binary,
 * where and clip.
 *   unary ops with parameters  pf[0], pf[1]: alpha, beta / gamma / bias, lambd
 *   clip                       pi[0] lo given, pi[1] hi given (operands x[, lo][, hi])
 *   where                      dtype2: the condition's (bool) */
#include <stdio.h>

#include "internal.h"

/* ---- unary ------------------------------------------------------------------ */

/* An input's random range from its op's schema (opcodes.h's BP_OP_SCHEMA);
 * false if the schema gives none. */
static bool schema_range(bp_op op, int input, bp_dtype dt, double *lo, double *hi,
                         bool *integral)
{
    char name[32];
    return *bp_op_arg_name(bp_op_info_of(op)->in, input, name, sizeof name) &&
           bp_op_domain(op, name, dt, lo, hi, integral) == BP_OK;
}

/* A unary op's parameters to test with: the schema's domains give them
 * (celu's alpha = 2), else the defaults. */
static void unary_params(bp_op op, double p[2])
{
    int n = bp_op_param_defaults(op, p);
    for (int k = 0; k < n; k++) {
        char name[32];
        double lo, hi;
        bool integral;
        if (bp_op_domain(op, bp_op_param_name(op, k, name, sizeof name), BP_F64, &lo, &hi,
                         &integral) == BP_OK)
            p[k] = lo;
    }
}

/* Every op of the UNARY kind, x drawn from its schema's domain. */
static void unary_cases(cf_builder *b)
{
    static const char *shapes[] = {"()", "0", "1", "7", "33", "3,1,5", "1023", "4,0"};
    for (int o = 0; o < BP_OP_COUNT; o++) {
        bp_op op = (bp_op)o;
        double lo, hi, p[2];
        bool integral;
        if (bp_op_kind_of(op) != BP_KIND_UNARY || !schema_range(op, 0, BP_F64, &lo, &hi,
                                                               &integral))
            continue;
        unary_params(op, p);
        int ndt;
        const bp_dtype *dts = cf_op_dtypes(op, &ndt);
        char what[48] = "";
        if (p[0] != 0 || p[1] != 0)
            snprintf(what, sizeof what, " p=%g,%g", p[0], p[1]);
        for (int t = 0; t < ndt; t++) {
            cf_case *c;
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                if ((c = cf_add_op(b, op, dts[t], shapes[s], CF_RANDOM, lo, hi, what)))
                    c->pf[0] = p[0], c->pf[1] = p[1];
            if ((c = cf_add_op(b, op, dts[t], cf_big_shape(op), CF_RANDOM, lo, hi, what)))
                c->pf[0] = p[0], c->pf[1] = p[1];
            /* the length comes from the dtype's special values */
            if ((c = cf_add_op(b, op, dts[t], "0", CF_SPECIAL, 0, 0, what)))
                c->pf[0] = p[0], c->pf[1] = p[1];
        }
    }
}

/* ---- binary ------------------------------------------------------------------ */

static void add_binary(cf_builder *b, bp_op op, bp_dtype dt, const char *shape, cf_data data,
                       double lo, double hi, double lo2, double hi2)
{
    cf_case *c = cf_add_op(b, op, dt, shape, data, lo, hi, NULL);
    if (c) {
        c->lo[1] = lo2, c->hi[1] = hi2;
        cf_int_range(dt, &c->lo[1], &c->hi[1]);
    }
}

/* Every op of the BINARY kind, a and b drawn from its schema's domains
 * (integral ones, as the comparisons', give floats many ties). The ops of
 * ABI 1.4 take the one-way shapes, b broadcast to a, never the other way:
 * prelu's rule, and the shapes they arrived with. */
static void binary_cases(cf_builder *b)
{
    static const char *both_ways[] = {"();()", "0;0", "7;7", "33;()", "2,1,5;3,1",
                                      "1023;1023", "4,0;1,1", "1;1023"};
    static const char *one_way[] = {"();()", "0;0", "7;7", "33;()", "2,3,5;3,1", "1023;1023",
                                    "4,0;1,1", CF_BIG_LIGHT ";" CF_BIG_LIGHT, "257,256;256"};
    for (int o = 0; o < BP_OP_COUNT; o++) {
        bp_op op = (bp_op)o;
        if (bp_op_kind_of(op) != BP_KIND_BINARY)
            continue;
        int ndt;
        const bp_dtype *dts = cf_op_dtypes(op, &ndt);
        bool heavy = bp_op_info_of(op)->cost == BP_COST_HEAVY, one = bp_op_since(op) != 0;
        for (int t = 0; t < ndt; t++) {
            bp_dtype dt = dts[t];
            double lo, hi, lo2, hi2;
            bool ties, ties2;
            if (!schema_range(op, 0, dt, &lo, &hi, &ties) ||
                !schema_range(op, 1, dt, &lo2, &hi2, &ties2))
                continue;
            cf_data data = ties && cf_is_float(dt) ? CF_RANGE : CF_RANDOM;
            if (one) {
                for (size_t s = 0; s < sizeof one_way / sizeof one_way[0]; s++)
                    add_binary(b, op, dt, one_way[s], data, lo, hi, lo2, hi2);
            } else {
                for (size_t s = 0; s < sizeof both_ways / sizeof both_ways[0]; s++)
                    add_binary(b, op, dt, both_ways[s], data, lo, hi, lo2, hi2);
                add_binary(b, op, dt, heavy ? CF_BIG_HEAVY ";" CF_BIG_HEAVY
                                            : CF_BIG_LIGHT ";" CF_BIG_LIGHT,
                           data, lo, hi, lo2, hi2);
                add_binary(b, op, dt, heavy ? "17,257;257" : "257,256;256", data, lo, hi, lo2,
                           hi2);
            }
            cf_add_op(b, op, dt, "0,1;1,0", CF_SPECIAL, 0, 0, NULL); /* every pair */
        }
    }
}

static void where_cases(cf_builder *b)
{
    const bp_dtype *ALL = cf_all_dtypes;
    static const char *wshapes[] = {"7;7;7", "2,1;1,3;2,3", "();33;()", "0;0;1", "4,0;1;1",
                                    CF_BIG_LIGHT ";" CF_BIG_LIGHT ";" CF_BIG_LIGHT};
    for (int t = 0; t < CF_COUNT(cf_all_dtypes); t++) {
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
    for (int t = 0; t < CF_COUNT(cf_numeric_dtypes); t++) {
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

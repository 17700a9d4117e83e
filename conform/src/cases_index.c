/* The cases of the indexing ops: gather (x then indices, i32 or i64 in
 * dtype2; the variant is the axis), trilu (pi[0] upper, pi[1] k), one_hot
 * (pi[0] depth, pi[1] axis; operands indices, values), gather_elements
 * (pi[0] axis), gather_nd (pi[0] batch_dims), scatter_elements (pi[0] axis,
 * pi[1] reduction) and scatter_nd (pi[1] reduction). Index tensors are drawn
 * in range by inputs.c; one_hot's indices also outside it. */
#include <stdio.h>

#include "internal.h"

static void gather_cases(cf_builder *b)
{
    for (int t = 0; t < CF_COUNT(cf_all_dtypes); t++) {
        bp_dtype dt = cf_all_dtypes[t];
        double lo = -100, hi = 100;
        cf_int_range(dt, &lo, &hi);
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

static void position_cases(cf_builder *b)
{
    static const struct { const char *shape; int upper; int64_t k; } tr[] = {
        {"3,4", 1, 0}, {"3,4", 0, 0}, {"2,5,3", 1, 1}, {"2,5,3", 0, -2}, {"0,3", 1, 0},
        {"4,4", 0, 9}, {"257,256", 1, -3},
    };
    static const struct { const char *shape; int64_t depth; int axis; } oh[] = {
        {"7;2", 5, -1}, {"2,3;2", 4, 0}, {"();2", 3, 0}, {"0,2;2", 3, 1}, {"300;2", 257, -1},
    };
    static const struct { const char *shape; int axis; } ge[] = {
        {"3,4;2,4", 0}, {"3,4;3,7", 1}, {"2,3,4;2,3,9", -1}, {"5;0", 0}, {"300,257;300,257", 0},
    };
    static const struct { const char *shape; int b; } gn[] = {
        {"3,4;2,2", 0}, {"3,4;5,1", 0}, {"2,3,4;2,2", 1}, {"2,3,4;2,3,3", 0}, {"4,5;0,2", 0},
        {"300,257;500,1", 0},
    };
    static const struct { const char *shape; int axis; } se[] = {
        {"3,4;2,4;2,4", 0}, {"3,4;3,7;3,7", 1}, {"4;9;9", 0}, {"5;0;0", 0},
        {"300,64;2000,64;2000,64", 0},
    };
    static const char *sn[] = {"3,4;2,1;2,4", "3,4;5,2;5", "4;6,1;6", "2,3,4;2,2;2,4",
                               "300,64;2000,1;2000,64"};
    static const char *rname[] = {" none", " add", " mul", " max", " min"};
    for (int t = 0; t < CF_COUNT(cf_all_dtypes); t++) {
        bp_dtype dt = cf_all_dtypes[t];
        for (size_t s = 0; s < sizeof tr / sizeof tr[0]; s++) {
            char what[32];
            snprintf(what, sizeof what, tr[s].upper ? " upper k=%lld" : " lower k=%lld",
                     (long long)tr[s].k);
            cf_case *c = cf_add_op(b, BP_OP_TRILU, dt, tr[s].shape, CF_RANDOM, -100, 100, what);
            if (c)
                c->pi[0] = tr[s].upper, c->pi[1] = tr[s].k;
        }
        for (int w = 0; w < 2; w++) { /* index dtype i32, i64 */
            bp_dtype idt = w ? BP_I64 : BP_I32;
            for (size_t s = 0; s < sizeof ge / sizeof ge[0]; s++) {
                char what[40];
                snprintf(what, sizeof what, " axis=%d idx=%s", ge[s].axis, bp_dtype_name(idt));
                cf_case *c = cf_add_op(b, BP_OP_GATHER_ELEMENTS, dt, ge[s].shape, CF_RANDOM, -100, 100,
                                   what);
                if (c)
                    c->dtype2 = idt, c->pi[0] = ge[s].axis;
            }
            for (size_t s = 0; s < sizeof gn / sizeof gn[0]; s++) {
                char what[40];
                snprintf(what, sizeof what, " batch_dims=%d idx=%s", gn[s].b, bp_dtype_name(idt));
                cf_case *c = cf_add_op(b, BP_OP_GATHER_ND, dt, gn[s].shape, CF_RANDOM, -100, 100, what);
                if (c)
                    c->dtype2 = idt, c->pi[0] = gn[s].b;
            }
        }
        for (int red = 0; red < 5; red++) {
            if (dt == BP_BOOL && red)
                continue;
            /* MUL in a range that keeps products from overflowing small types too soon */
            double lo = red == 2 ? -2 : -100, hi = red == 2 ? 2 : 100;
            for (size_t s = 0; s < sizeof se / sizeof se[0]; s++) {
                char what[48];
                snprintf(what, sizeof what, " axis=%d%s", se[s].axis, rname[red]);
                cf_case *c = cf_add_op(b, BP_OP_SCATTER_ELEMENTS, dt, se[s].shape, CF_RANDOM, lo, hi,
                                   what);
                if (c)
                    c->dtype2 = s % 2 ? BP_I32 : BP_I64, c->pi[0] = se[s].axis, c->pi[1] = red;
            }
            for (size_t s = 0; s < sizeof sn / sizeof sn[0]; s++) {
                cf_case *c = cf_add_op(b, BP_OP_SCATTER_ND, dt, sn[s], CF_RANDOM, lo, hi, rname[red]);
                if (c)
                    c->dtype2 = s % 2 ? BP_I64 : BP_I32, c->pi[1] = red;
            }
        }
        if (dt == BP_BOOL)
            continue;
        for (size_t s = 0; s < sizeof oh / sizeof oh[0]; s++) {
            char what[40];
            snprintf(what, sizeof what, " depth=%lld axis=%d", (long long)oh[s].depth, oh[s].axis);
            cf_case *c = cf_add_op(b, BP_OP_ONE_HOT, dt, oh[s].shape, CF_RANDOM, -100, 100, what);
            if (!c)
                continue;
            c->pi[0] = oh[s].depth, c->pi[1] = oh[s].axis;
            /* indices: in range and out of it on both sides */
            c->lo[0] = -(double)oh[s].depth - 2, c->hi[0] = (double)oh[s].depth + 2;
            cf_int_range(dt, &c->lo[0], &c->hi[0]);
        }
    }
}

void cf_cases_index(cf_builder *b)
{
    gather_cases(b);
    position_cases(b);
}

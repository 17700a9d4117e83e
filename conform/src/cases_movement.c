/* The cases of the movement ops: transpose (the variant picks the
 * permutation), slice, concat (variant: the axis), broadcast_to (the second
 * shape is the target), pad, copy and cast (dtype2: the target; the
 * matrix's row is the source). */
#include <math.h>
#include <stdio.h>

#include "internal.h"

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

void cf_cases_movement(cf_builder *b)
{
    static const struct { const char *shape; int variant; } tr[] = {
        {"()", 0}, {"0,3", 0}, {"7", 0}, {"3,5", 0}, {"2,3,4", 1}, {"1,33,1", 2},
        {"2,3,4,5", 3}, {"257,256", 0},
    };
    static const struct { const char *shape; int variant; const char *what; } sl[] = {
        {"33", 0, " [2:30:3]"},   {"33", 1, " [-1::-2]"},    {"4,5,6", 2, " [1:3,0:5:2,-3:]"},
        {"7", 3, " [5:2] empty"}, {CF_BIG_LIGHT, 4, " [1:-1]"}, {"7", 5, " [-100:100]"},
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
    static const char *cp[] = {"()", "0", "7", "1023", "3,1,5", CF_BIG_LIGHT};
    for (int t = 0; t < CF_COUNT(cf_all_dtypes); t++) {
        bp_dtype dt = cf_all_dtypes[t];
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
        for (int u = 0; u < CF_COUNT(cf_all_dtypes); u++) {
            if (u == t)
                continue;
            static const char *cs[] = {"33", CF_BIG_LIGHT};
            for (int s = 0; s < 3; s++) {
                cf_case *c = s < 2 ? cf_case_add(b, BP_OP_CAST, "cast", dt, cs[s], CF_RANDOM,
                                         cf_is_float(dt) ? -300 : lo, cf_is_float(dt) ? 300 : hi, 0)
                                   : cf_case_add(b, BP_OP_CAST, "cast", dt, "0", CF_SPECIAL, 0, 0, 0);
                if (c) {
                    c->dtype2 = cf_all_dtypes[u];
                    char to[16];
                    snprintf(to, sizeof to, " -> %s", bp_dtype_name(cf_all_dtypes[u]));
                    cf_case_suffix(c, to);
                }
            }
        }
    }
}


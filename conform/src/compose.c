/* The ops of ABI 1.4 that the core composes from others (split, tile,
 * depth_to_space, space_to_depth, max_n, min_n, sum_n, mean_n, einsum):
 * no op code of their own, so their cases carry pseudo codes (CF_OP_SPLIT
 * ..., internal.h), and this file holds all that conform knows of them:
 * the cases, the call, the oracle, and the backend ops each is made of.
 * They are no plugin op, so supports() is not asked about them: a backend
 * that lacks a part refuses them (UNSUPPORTED), and a failure names the
 * parts, where the wrong value comes from.
 *
 * Parameters: split pi[0] axis, pi[1] the first part's extent (0: two equal
 * parts; the second part is the rest); tile variant: a row of REPS;
 * depth_to_space pi[0] blocksize, pi[1] crd; space_to_depth pi[0]
 * blocksize; the variadic ops take every operand; einsum variant: a row
 * of EQUATIONS. */
#include <string.h>

#include "internal.h"

static const int64_t REPS[][3] = {{1, 1, 1}, {2, 1, 3}, {3, 2, 1}, {0, 2, 1}, {1, 300, 1}};

static const char *const EQUATIONS[] = {
    "ij,jk->ik", "ij,kj->ik", "bij,bjk->bik", "i,j->ij", "i,i->", "ij->ji", "ij->i",
    "abc,cd->da", "ij,jk", "ij->",
};

/* ---- the cases ---------------------------------------------------------------------- */

void cf_cases_compose(cf_builder *b)
{
    static const struct { const char *shape; int axis; int64_t first; } sp[] = {
        {"4,6", 0, 0}, {"4,6", 1, 0}, {"4,6", -1, 1}, {"5", 0, 5}, {"0,4", 1, 3},
        {"300,257", 0, 100},
    };
    static const struct { const char *shape; int variant; } ti[] = {
        {"2,1,3", 0}, {"2,1,3", 1}, {"2,1,3", 2}, {"2,1,3", 3}, {"1,1,257", 4},
    };
    static const char *vs[] = {"7", "3,4;4", "3,4;1,4;3,1", "();5;5", "0;1", "65537;65537"};
    static const struct { const char *shape; int eq; } es[] = {
        {"3,4;4,5", 0}, {"3,4;5,4", 1}, {"2,3,4;2,4,5", 2}, {"4;3", 3}, {"7;7", 4},
        {"3,4", 5}, {"3,4", 6}, {"2,3,4;4,2", 7}, {"3,4;4,2", 8}, {"3,4", 9},
        {"64,129;129,65", 0},
    };
    for (int t = 0; t < CF_COUNT(cf_all_dtypes); t++) {
        bp_dtype dt = cf_all_dtypes[t];
        double lo = -100, hi = 100;
        cf_int_range(dt, &lo, &hi);
        for (size_t s = 0; s < sizeof sp / sizeof sp[0]; s++) {
            cf_case *c = cf_case_add(b, CF_OP_SPLIT, "split", dt, sp[s].shape, CF_RANDOM, lo, hi,
                                     0);
            if (c) {
                c->pi[0] = sp[s].axis, c->pi[1] = sp[s].first;
                char what[40];
                snprintf(what, sizeof what, " axis=%d first=%lld", sp[s].axis,
                         (long long)sp[s].first);
                cf_case_suffix(c, what);
            }
        }
        for (size_t s = 0; s < sizeof ti / sizeof ti[0]; s++) {
            cf_case *c = cf_case_add(b, CF_OP_TILE, "tile", dt, ti[s].shape, CF_RANDOM, lo, hi,
                                     ti[s].variant);
            if (c) {
                const int64_t *r = REPS[ti[s].variant];
                char what[48];
                snprintf(what, sizeof what, " reps=%lld,%lld,%lld", (long long)r[0],
                         (long long)r[1], (long long)r[2]);
                cf_case_suffix(c, what);
            }
        }
        for (int crd = 0; crd < 3; crd++) { /* DCR, CRD, and space_to_depth */
            cf_case *c = cf_case_add(b, crd < 2 ? CF_OP_DEPTH_TO_SPACE : CF_OP_SPACE_TO_DEPTH,
                                     crd < 2 ? "depth_to_space" : "space_to_depth", dt,
                                     crd < 2 ? "2,8,2,3" : "2,3,4,6", CF_RANDOM, lo, hi, 0);
            if (c)
                c->pi[0] = 2, c->pi[1] = crd == 1, cf_case_suffix(c, crd == 1 ? " crd" : "");
            c = cf_case_add(b, crd < 2 ? CF_OP_DEPTH_TO_SPACE : CF_OP_SPACE_TO_DEPTH,
                            crd < 2 ? "depth_to_space" : "space_to_depth", dt,
                            crd < 2 ? "1,18,0,5" : "1,2,9,6", CF_RANDOM, lo, hi, 0);
            if (c)
                c->pi[0] = 3, c->pi[1] = crd == 1, cf_case_suffix(c, crd == 1 ? " crd" : "");
        }
        if (dt == BP_BOOL)
            continue;
        static const struct { int op; const char *name; } va[] = {
            {CF_OP_MAX_N, "max_n"}, {CF_OP_MIN_N, "min_n"}, {CF_OP_SUM_N, "sum_n"},
            {CF_OP_MEAN_N, "mean_n"},
        };
        for (int v = 0; v < 4; v++) {
            if (va[v].op == CF_OP_MEAN_N && !cf_is_float(dt))
                continue;
            for (size_t s = 0; s < sizeof vs / sizeof vs[0]; s++)
                cf_case_add(b, va[v].op, va[v].name, dt, vs[s], CF_RANDOM, lo, hi, 0);
            cf_case_add(b, va[v].op, va[v].name, dt, "0;0", CF_SPECIAL, 0, 0, 0);
        }
        for (size_t s = 0; s < sizeof es / sizeof es[0]; s++) {
            double el = cf_is_float(dt) ? -1 : -9, eh = cf_is_float(dt) ? 1 : 9;
            cf_int_range(dt, &el, &eh);
            cf_case *c = cf_case_add(b, CF_OP_EINSUM, "einsum", dt, es[s].shape, CF_RANDOM, el,
                                     eh, es[s].eq);
            if (c) {
                char what[40];
                snprintf(what, sizeof what, " \"%s\"", EQUATIONS[es[s].eq]);
                cf_case_suffix(c, what);
            }
        }
    }
}

/* ---- the call, the oracle, what it needs ------------------------------------------------- */

/* The two parts' extents of a split case. */
static void split_sizes(const cf_case *c, int64_t *sizes)
{
    int32_t axis = (int32_t)c->pi[0];
    if (axis < 0)
        axis += c->rank[0];
    int64_t extent = c->shape[0][axis];
    sizes[0] = c->pi[1] ? c->pi[1] : extent / 2;
    sizes[1] = extent - sizes[0];
}

bp_status cf_call_compose(const cf_case *c, const cf_operand *ops, int n_in, bp_tensor **out,
                          bp_tensor **out2)
{
    const bp_tensor *xs[CF_MAX_OPERANDS];
    for (int k = 0; k < n_in; k++)
        xs[k] = ops[k].t;
    switch (c->op) {
    case CF_OP_SPLIT: {
        int64_t sizes[2];
        split_sizes(c, sizes);
        bp_tensor *parts[2] = {NULL, NULL};
        bp_status st = bp_split(xs[0], (int32_t)c->pi[0], 2, c->pi[1] ? sizes : NULL, parts);
        *out = parts[0];
        *out2 = parts[1];
        return st;
    }
    case CF_OP_TILE: return bp_tile(xs[0], REPS[c->variant], out);
    case CF_OP_DEPTH_TO_SPACE: return bp_depth_to_space(xs[0], c->pi[0], c->pi[1], out);
    case CF_OP_SPACE_TO_DEPTH: return bp_space_to_depth(xs[0], c->pi[0], out);
    case CF_OP_MAX_N: return bp_max_n(n_in, xs, out);
    case CF_OP_MIN_N: return bp_min_n(n_in, xs, out);
    case CF_OP_SUM_N: return bp_sum_n(n_in, xs, out);
    case CF_OP_MEAN_N: return bp_mean_n(n_in, xs, out);
    case CF_OP_EINSUM: return bp_einsum(EQUATIONS[c->variant], n_in, xs, out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

bool cf_oracle_compose(const cf_case *c, const cf_array *in, int n_in, cf_array *want,
                       cf_array *want2, double **scale, int64_t *k)
{
    const cf_array *xs[CF_MAX_OPERANDS];
    for (int j = 0; j < n_in; j++)
        xs[j] = &in[j];
    switch (c->op) {
    case CF_OP_SPLIT: {
        int64_t sizes[2];
        split_sizes(c, sizes);
        cf_array parts[2];
        bool ok = cf_oracle_split(&in[0], (int32_t)c->pi[0], 2, sizes, parts);
        *want = parts[0];
        *want2 = parts[1];
        return ok;
    }
    case CF_OP_TILE: return cf_oracle_tile(&in[0], REPS[c->variant], want);
    case CF_OP_DEPTH_TO_SPACE: return cf_oracle_depth_to_space(&in[0], c->pi[0], c->pi[1], want);
    case CF_OP_SPACE_TO_DEPTH: return cf_oracle_space_to_depth(&in[0], c->pi[0], want);
    case CF_OP_MAX_N: return cf_oracle_max_n(n_in, xs, want);
    case CF_OP_MIN_N: return cf_oracle_min_n(n_in, xs, want);
    case CF_OP_SUM_N: return cf_oracle_sum_n(n_in, xs, want);
    case CF_OP_MEAN_N: return cf_oracle_mean_n(n_in, xs, want);
    case CF_OP_EINSUM: return cf_oracle_einsum(EQUATIONS[c->variant], n_in, xs, want, scale, k);
    default: return false;
    }
}

const char *cf_compose_parts(const cf_case *c)
{
    switch (c->op) {
    case CF_OP_SPLIT: return "slice";
    case CF_OP_TILE: return "broadcast_to";
    case CF_OP_DEPTH_TO_SPACE: case CF_OP_SPACE_TO_DEPTH: return "transpose";
    case CF_OP_MAX_N: return "broadcast_to, maximum";
    case CF_OP_MIN_N: return "broadcast_to, minimum";
    case CF_OP_SUM_N: return "broadcast_to, add";
    case CF_OP_MEAN_N: return "broadcast_to, add, fill, div";
    case CF_OP_EINSUM: return "sum, transpose, matmul";
    default: return "?";
    }
}

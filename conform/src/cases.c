/* The one table of cases: how a case is built, and the table assembled from
 * each concept's cases (cases_elementwise.c, cases_reduce.c, cases_axis.c,
 * cases_linalg.c, cases_movement.c, cases_index.c, cases_creation.c,
 * compose.c, cases_nn.c) and the plugin contract's rows.
 *
 * Every op of opcodes.h's table, every dtype its row accepts, shapes chosen
 * to hit the edges: rank 0, zero elements, size-1 and broadcast dimensions,
 * lengths that are not a multiple of any vector width (1, 7, 33, 1023) and
 * sizes past the threading thresholds of blas_cpu (CF_BIG_LIGHT,
 * CF_BIG_HEAVY, by the row's cost class); special values (NaN, +-Inf, -0,
 * subnormals, integer min/max) and random data from the library's keyed
 * generator. The order is fixed, so a case's index names it in every run.
 *
 * The parameters of an op that takes any are the case's variant, pi[] and
 * pf[] (internal.h), read by the op call (call.c) and the oracle
 * (case_oracle.c) alike; each concept's file says what they mean there. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nn_cases.h"

static const bp_dtype BOOLS[] = {BP_BOOL};

const bp_dtype *cf_op_dtypes(bp_op op, int *n)
{
    switch (bp_op_info_of(op)->dtypes) {
    case BP_DTYPES_FLOAT: *n = 4; return cf_float_dtypes;
    case BP_DTYPES_INTEGER: *n = CF_COUNT(cf_int_dtypes); return cf_int_dtypes;
    case BP_DTYPES_BOOL: *n = 1; return BOOLS;
    case BP_DTYPES_NUMERIC: *n = CF_COUNT(cf_numeric_dtypes); return cf_numeric_dtypes;
    default: *n = CF_COUNT(cf_all_dtypes); return cf_all_dtypes;
    }
}

const char *cf_big_shape(bp_op op)
{
    return bp_op_info_of(op)->cost == BP_COST_HEAVY ? CF_BIG_HEAVY : CF_BIG_LIGHT;
}

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
    if (data == CF_SPECIAL) /* the layout comes from the values (inputs.c) */
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

cf_case *cf_add_op(cf_builder *b, bp_op op, bp_dtype dt, const char *shapes, cf_data data,
                   double lo, double hi, const char *what)
{
    if (!cf_is_float(dt))
        cf_int_range(dt, &lo, &hi);
    cf_case *c = cf_case_add(b, op, bp_op_name(op), dt, shapes, data, lo, hi, 0);
    if (c && what)
        cf_case_suffix(c, what);
    return c;
}

/* ---- the plugin contract ----------------------------------------------------------- */

static void contract_cases(cf_builder *b)
{
    cf_case *c = cf_case_add(b, CF_OP_CONTRACT_ABI, "contract.abi", (bp_dtype)-1, "()", CF_RANDOM, 0, 0, 0);
    if (c)
        snprintf(c->label, sizeof c->label, "descriptor");
    static const char *rt[] = {"()", "0", "7", "1023", "2,0,3"};
    for (int t = 0; t < CF_COUNT(cf_all_dtypes); t++) {
        for (int s = 0; s < 5; s++)
            cf_case_add(b, CF_OP_CONTRACT_ROUNDTRIP, "contract.roundtrip", cf_all_dtypes[t], rt[s], CF_RANDOM, -100,
                100, 0);
        cf_case_add(b, CF_OP_CONTRACT_ROUNDTRIP, "contract.roundtrip", cf_all_dtypes[t], "0", CF_SPECIAL, 0, 0, 0);
    }
}

size_t cf_cases_build(cf_case **out)
{
    cf_builder b = {0};
    contract_cases(&b);
    cf_cases_elementwise(&b);
    cf_cases_reduce(&b);
    cf_cases_linalg(&b);
    cf_cases_axis(&b);
    cf_cases_movement(&b);
    cf_cases_index(&b);
    cf_cases_creation(&b);
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

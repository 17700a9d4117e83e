/* The cases of the ops of ABI 1.4 (opcodes.h's BP_OP_LIST_1_4): every op,
 * every dtype it accepts (ops.h), edge shapes (rank 0, zero elements, size-1
 * and broadcast axes, lengths past the threading thresholds), special values
 * and random data, as cases.c does for the ops of 1.0.
 *
 * Their parameters are the case's pi[] / pf[] (internal.h), read by the op
 * call (exec_1_4.c) and the oracle (case_oracle_1_4.c) alike:
 *   attributed unary ops  pf[0], pf[1]: alpha, beta / gamma / bias, lambd
 *   clip                  pi[0] lo given, pi[1] hi given (operands x[, lo][, hi])
 *   reductions            variant: the axes (cf_reduce_axes); pf[0] correction
 *   hardmax               pi[0] axis
 *   cumsum, cumprod       pi[0] axis, pi[1] exclusive, pi[2] reverse
 *   sort                  pi[0] axis, pi[1] descending
 *   topk                  pi[0] k, pi[1] axis, pi[2] largest, pi[3] sorted
 *   trilu                 pi[0] upper, pi[1] k
 *   one_hot               pi[0] depth, pi[1] axis (operands indices, values)
 *   gather_elements       pi[0] axis;   gather_nd  pi[0] batch_dims
 *   scatter_elements      pi[0] axis, pi[1] reduction;   scatter_nd  pi[1] reduction
 *   gemm                  pi[0] trans_a, pi[1] trans_b, pf[0] alpha, pf[1] beta
 *                         (operands a, b[, c])
 * Index tensors (gathers, scatters: dtype2, i32 or i64) are drawn in range
 * by inputs.c; one_hot's indices also outside it. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define BIG_LIGHT "65537"
#define BIG_HEAVY "4097"
#define ALL cf_all_dtypes
#define NUMERIC cf_numeric_dtypes
#define FLOATS cf_float_dtypes
#define INTS cf_int_dtypes

static const bp_dtype BOOLS[] = {BP_BOOL};

/* dts / ndt by a set name: 'f' floats, 'n' numeric, 'i' integers, 'b' bool,
 * 'a' every dtype. */
static const bp_dtype *dtype_set(char set, int *ndt)
{
    switch (set) {
    case 'f': *ndt = 4; return FLOATS;
    case 'i': *ndt = 4; return INTS;
    case 'b': *ndt = 1; return BOOLS;
    case 'a': *ndt = 9; return ALL;
    default: *ndt = 8; return NUMERIC;
    }
}

static cf_case *add_p(cf_builder *b, bp_op op, bp_dtype dt, const char *shapes, cf_data data,
                      double lo, double hi, const char *what)
{
    if (!cf_is_float(dt))
        cf_int_range(dt, &lo, &hi);
    cf_case *c = cf_case_add(b, op, bp_op_name(op), dt, shapes, data, lo, hi, 0);
    if (c && what)
        cf_case_suffix(c, what);
    return c;
}

/* ---- elementwise ------------------------------------------------------------------ */

typedef struct unary_def {
    bp_op op;
    double lo, hi; /* random range */
    bool heavy;    /* transcendental: blas_cpu threads above 2^12 */
    char set;
    double p0, p1; /* attributes */
} unary_def;

static void unary_cases(cf_builder *b)
{
    static const unary_def defs[] = {
        {BP_OP_ACOS, -1, 1, true, 'f', 0, 0},          {BP_OP_ASIN, -1, 1, true, 'f', 0, 0},
        {BP_OP_ATAN, -20, 20, true, 'f', 0, 0},        {BP_OP_ACOSH, 1, 50, true, 'f', 0, 0},
        {BP_OP_ASINH, -50, 50, true, 'f', 0, 0},       {BP_OP_ATANH, -0.999, 0.999, true, 'f', 0, 0},
        {BP_OP_SINH, -10, 10, true, 'f', 0, 0},        {BP_OP_COSH, -10, 10, true, 'f', 0, 0},
        {BP_OP_LOG1P, -0.99, 50, true, 'f', 0, 0},     {BP_OP_EXPM1, -10, 10, true, 'f', 0, 0},
        {BP_OP_SOFTPLUS, -20, 20, true, 'f', 0, 0},    {BP_OP_SOFTSIGN, -20, 20, false, 'f', 0, 0},
        {BP_OP_SILU, -10, 10, true, 'f', 0, 0},        {BP_OP_HARDSWISH, -5, 5, false, 'f', 0, 0},
        {BP_OP_SQUARE, -100, 100, false, 'n', 0, 0},   {BP_OP_BITWISE_NOT, -100, 100, false, 'i', 0, 0},
        {BP_OP_ELU, -5, 5, true, 'f', 1.0, 0},
        {BP_OP_SELU, -5, 5, true, 'f', 1.67326319217681884765625, 1.05070102214813232421875},
        {BP_OP_LEAKY_RELU, -10, 10, false, 'f', 0.01, 0},
        {BP_OP_THRESHOLDED_RELU, -3, 3, false, 'f', 1.0, 0},
        {BP_OP_HARD_SIGMOID, -5, 5, false, 'f', 0.2, 0.5},
        {BP_OP_SHRINK, -3, 3, false, 'n', 0.5, 1.0},
    };
    static const char *shapes[] = {"()", "0", "1", "7", "33", "3,1,5", "1023", "4,0"};
    for (size_t d = 0; d < sizeof defs / sizeof defs[0]; d++) {
        const unary_def *u = &defs[d];
        int ndt;
        const bp_dtype *dts = dtype_set(u->set, &ndt);
        char what[48] = "";
        if (u->p0 != 0 || u->p1 != 0)
            snprintf(what, sizeof what, " p=%g,%g", u->p0, u->p1);
        for (int t = 0; t < ndt; t++) {
            cf_case *c;
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                if ((c = add_p(b, u->op, dts[t], shapes[s], CF_RANDOM, u->lo, u->hi, what)))
                    c->pf[0] = u->p0, c->pf[1] = u->p1;
            if ((c = add_p(b, u->op, dts[t], u->heavy ? BIG_HEAVY : BIG_LIGHT, CF_RANDOM, u->lo,
                           u->hi, what)))
                c->pf[0] = u->p0, c->pf[1] = u->p1;
            if ((c = add_p(b, u->op, dts[t], "0", CF_SPECIAL, 0, 0, what)))
                c->pf[0] = u->p0, c->pf[1] = u->p1;
        }
    }
}

static void clip_cases(cf_builder *b)
{
    /* x, then the bounds that are given: pi[0] lo, pi[1] hi */
    static const struct { const char *shapes; int lo, hi; const char *what; } defs[] = {
        {"7;7;7", 1, 1, " lo,hi"},       {"3,4;4;3,1", 1, 1, " lo,hi broadcast"},
        {"33;()", 1, 0, " lo"},          {"33;()", 0, 1, " hi"},
        {"7", 0, 0, " no bounds"},       {"0;0;()", 1, 1, " lo,hi"},
        {BIG_LIGHT ";();()", 1, 1, " lo,hi"},
    };
    for (int t = 0; t < 8; t++) {
        bp_dtype dt = NUMERIC[t];
        for (size_t s = 0; s < sizeof defs / sizeof defs[0]; s++) {
            cf_case *c = add_p(b, BP_OP_CLIP, dt, defs[s].shapes, CF_RANDOM, -100, 100,
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
        cf_case *c = add_p(b, BP_OP_CLIP, dt, "0;0;0", CF_SPECIAL, 0, 0, " lo,hi");
        if (c)
            c->pi[0] = c->pi[1] = 1;
    }
}

static void binary_cases(cf_builder *b)
{
    static const struct { bp_op op; char set; double lo2, hi2; } defs[] = {
        {BP_OP_FMOD, 'n', -12, 12},          {BP_OP_PRELU, 'n', -2, 2},
        {BP_OP_BITWISE_AND, 'i', -100, 100}, {BP_OP_BITWISE_OR, 'i', -100, 100},
        {BP_OP_BITWISE_XOR, 'i', -100, 100}, {BP_OP_BITSHIFT_LEFT, 'i', -2, 66},
        {BP_OP_BITSHIFT_RIGHT, 'i', -2, 66},
    };
    /* the second operand broadcasts to the first (prelu's one-way rule) */
    static const char *shapes[] = {"();()", "0;0", "7;7", "33;()", "2,3,5;3,1", "1023;1023",
                                   "4,0;1,1", BIG_LIGHT ";" BIG_LIGHT, "257,256;256"};
    for (size_t d = 0; d < sizeof defs / sizeof defs[0]; d++) {
        int ndt;
        const bp_dtype *dts = dtype_set(defs[d].set, &ndt);
        for (int t = 0; t < ndt; t++) {
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                cf_case *c = add_p(b, defs[d].op, dts[t], shapes[s], CF_RANDOM, -100, 100, NULL);
                if (c) {
                    c->lo[1] = defs[d].lo2, c->hi[1] = defs[d].hi2;
                    cf_int_range(dts[t], &c->lo[1], &c->hi[1]);
                }
            }
            add_p(b, defs[d].op, dts[t], "0,1;1,0", CF_SPECIAL, 0, 0, NULL); /* every pair */
        }
    }
}

/* ---- reductions, along an axis ------------------------------------------------------------ */

static void reduce_cases(cf_builder *b)
{
    static const struct { bp_op op; char set; double correction; } defs[] = {
        {BP_OP_REDUCE_L1, 'n', 0},          {BP_OP_REDUCE_L2, 'f', 0},
        {BP_OP_REDUCE_SUM_SQUARE, 'n', 0},  {BP_OP_REDUCE_LOG_SUM, 'f', 0},
        {BP_OP_REDUCE_VAR, 'f', 0},         {BP_OP_REDUCE_VAR, 'f', 1},
        {BP_OP_REDUCE_STD, 'f', 0},         {BP_OP_REDUCE_STD, 'f', 1},
        {BP_OP_REDUCE_ANY, 'b', 0},         {BP_OP_REDUCE_ALL, 'b', 0},
        {BP_OP_ARGMAX_LAST, 'n', 0},        {BP_OP_ARGMIN_LAST, 'n', 0},
    };
    static const struct { const char *shape; int variant; bool empty; } shapes[] = {
        {"()", 0, false},   {"0", 0, true},      {"7", 0, false},      {"1023", 0, false},
        {"3,0", 1, true},   {"0,3", 1, false},   {"4,33", 1, false},   {"4,33", 2, false},
        {"2,3,5", 3, false}, {"3,5,7", 4, false}, {"300,257", 1, false}, {"257,300", 2, false},
        {BIG_LIGHT, 0, false},
    };
    static const char *vname[] = {" axes=all", " axis=-1", " axis=0 keepdims", " axes=0,2",
                                  " axis=-2 keepdims"};
    for (size_t d = 0; d < sizeof defs / sizeof defs[0]; d++) {
        bp_op op = defs[d].op;
        bool arg = op == BP_OP_ARGMAX_LAST || op == BP_OP_ARGMIN_LAST;
        int ndt;
        const bp_dtype *dts = dtype_set(defs[d].set, &ndt);
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
                cf_case *c = add_p(b, op, dt, shapes[s].shape, CF_RANDOM, lo, hi, what);
                if (c) {
                    c->variant = shapes[s].variant;
                    c->pf[0] = defs[d].correction;
                }
            }
            cf_case *c = add_p(b, op, dt, "0,0", CF_SPECIAL, 0, 0, vname[1]);
            if (c) {
                c->variant = 1;
                c->pf[0] = defs[d].correction;
            }
        }
    }
}

static void axis_cases(cf_builder *b)
{
    static const struct { const char *shape; int axis; } shapes[] = {
        {"7", -1}, {"1", 0}, {"3,33", -1}, {"33,3", 0}, {"2,0", -1}, {"0,5", -1},
        {"2,3,4", 1}, {"16," BIG_HEAVY, -1}, {"257,300", 0}, {"64,129", -1},
    };
    for (int t = 0; t < 8; t++) {
        bp_dtype dt = NUMERIC[t];
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
                    cf_case *c = add_p(b, op, dt, shapes[s].shape, CF_RANDOM, lo, hi, what);
                    if (c)
                        c->pi[0] = shapes[s].axis, c->pi[1] = mode & 1, c->pi[2] = mode >> 1;
                }
            }
            char what[32];
            snprintf(what, sizeof what, " axis=%d", shapes[s].axis);
            for (int desc = 0; desc < 2; desc++) {
                cf_case *c = add_p(b, BP_OP_SORT, dt, shapes[s].shape, CF_RANDOM, -5, 5, what);
                if (c) {
                    c->data = CF_RANGE; /* integers in a small range: ties */
                    c->pi[0] = shapes[s].axis, c->pi[1] = desc;
                    cf_case_suffix(c, desc ? " descending" : "");
                }
            }
            if (cf_is_float(dt)) {
                cf_case *c = add_p(b, BP_OP_HARDMAX, dt, shapes[s].shape, CF_RANGE, -3, 3, what);
                if (c)
                    c->pi[0] = shapes[s].axis;
            }
        }
        for (int o = 0; o < 2; o++) { /* rows of specials */
            cf_case *c = add_p(b, o ? BP_OP_CUMPROD : BP_OP_CUMSUM, dt, "0,0", CF_SPECIAL, 0, 0,
                               " axis=-1");
            if (c)
                c->pi[0] = -1;
            if ((c = add_p(b, BP_OP_SORT, dt, "0,0", CF_SPECIAL, 0, 0, o ? " descending" : "")))
                c->pi[0] = -1, c->pi[1] = o;
        }
        if (cf_is_float(dt)) {
            cf_case *c = add_p(b, BP_OP_HARDMAX, dt, "0,0", CF_SPECIAL, 0, 0, " axis=-1");
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
        {"2,3,4", 3, 1},   {"64,1500", 8, -1}, {"1," BIG_LIGHT, 20, -1},
    };
    for (int t = 0; t < 8; t++) {
        bp_dtype dt = NUMERIC[t];
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int mode = 0; mode < 4; mode++) {
                bool largest = !(mode & 1), sorted = !(mode & 2);
                char what[64];
                snprintf(what, sizeof what, " k=%lld axis=%d%s%s", (long long)shapes[s].k,
                         shapes[s].axis, largest ? " largest" : " smallest",
                         sorted ? "" : " unsorted");
                cf_case *c = add_p(b, BP_OP_TOPK, dt, shapes[s].shape, CF_RANGE, -20, 20, what);
                if (c)
                    c->pi[0] = shapes[s].k, c->pi[1] = shapes[s].axis, c->pi[2] = largest,
                    c->pi[3] = sorted;
            }
        for (int largest = 0; largest < 2; largest++) {
            cf_case *c = add_p(b, BP_OP_TOPK, dt, "0,0", CF_SPECIAL, 0, 0,
                               largest ? " k=3 largest" : " k=3 smallest");
            if (c)
                c->pi[0] = 3, c->pi[1] = -1, c->pi[2] = largest, c->pi[3] = 1;
        }
    }
}

/* ---- indexing ------------------------------------------------------------------------------- */

static void index_cases(cf_builder *b)
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
    for (int t = 0; t < 9; t++) {
        bp_dtype dt = ALL[t];
        for (size_t s = 0; s < sizeof tr / sizeof tr[0]; s++) {
            char what[32];
            snprintf(what, sizeof what, tr[s].upper ? " upper k=%lld" : " lower k=%lld",
                     (long long)tr[s].k);
            cf_case *c = add_p(b, BP_OP_TRILU, dt, tr[s].shape, CF_RANDOM, -100, 100, what);
            if (c)
                c->pi[0] = tr[s].upper, c->pi[1] = tr[s].k;
        }
        for (int w = 0; w < 2; w++) { /* index dtype i32, i64 */
            bp_dtype idt = w ? BP_I64 : BP_I32;
            for (size_t s = 0; s < sizeof ge / sizeof ge[0]; s++) {
                char what[40];
                snprintf(what, sizeof what, " axis=%d idx=%s", ge[s].axis, bp_dtype_name(idt));
                cf_case *c = add_p(b, BP_OP_GATHER_ELEMENTS, dt, ge[s].shape, CF_RANDOM, -100, 100,
                                   what);
                if (c)
                    c->dtype2 = idt, c->pi[0] = ge[s].axis;
            }
            for (size_t s = 0; s < sizeof gn / sizeof gn[0]; s++) {
                char what[40];
                snprintf(what, sizeof what, " batch_dims=%d idx=%s", gn[s].b, bp_dtype_name(idt));
                cf_case *c = add_p(b, BP_OP_GATHER_ND, dt, gn[s].shape, CF_RANDOM, -100, 100, what);
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
                cf_case *c = add_p(b, BP_OP_SCATTER_ELEMENTS, dt, se[s].shape, CF_RANDOM, lo, hi,
                                   what);
                if (c)
                    c->dtype2 = s % 2 ? BP_I32 : BP_I64, c->pi[0] = se[s].axis, c->pi[1] = red;
            }
            for (size_t s = 0; s < sizeof sn / sizeof sn[0]; s++) {
                cf_case *c = add_p(b, BP_OP_SCATTER_ND, dt, sn[s], CF_RANDOM, lo, hi, rname[red]);
                if (c)
                    c->dtype2 = s % 2 ? BP_I64 : BP_I32, c->pi[1] = red;
            }
        }
        if (dt == BP_BOOL)
            continue;
        for (size_t s = 0; s < sizeof oh / sizeof oh[0]; s++) {
            char what[40];
            snprintf(what, sizeof what, " depth=%lld axis=%d", (long long)oh[s].depth, oh[s].axis);
            cf_case *c = add_p(b, BP_OP_ONE_HOT, dt, oh[s].shape, CF_RANDOM, -100, 100, what);
            if (!c)
                continue;
            c->pi[0] = oh[s].depth, c->pi[1] = oh[s].axis;
            /* indices: in range and out of it on both sides */
            c->lo[0] = -(double)oh[s].depth - 2, c->hi[0] = (double)oh[s].depth + 2;
            cf_int_range(dt, &c->lo[0], &c->hi[0]);
        }
    }
}

/* ---- gemm ------------------------------------------------------------------------------- */

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
    for (int t = 0; t < 8; t++) {
        bp_dtype dt = NUMERIC[t];
        double lo = cf_is_float(dt) ? -1 : -100, hi = cf_is_float(dt) ? 1 : 100;
        for (size_t s = 0; s < sizeof defs / sizeof defs[0]; s++) {
            char what[64];
            snprintf(what, sizeof what, " trans=%d%d alpha=%g beta=%g", defs[s].ta, defs[s].tb,
                     defs[s].alpha, defs[s].beta);
            cf_case *c = add_p(b, BP_OP_GEMM, dt, defs[s].shape, CF_RANDOM, lo, hi, what);
            if (c)
                c->pi[0] = defs[s].ta, c->pi[1] = defs[s].tb, c->pf[0] = defs[s].alpha,
                c->pf[1] = defs[s].beta;
        }
        cf_case *c = add_p(b, BP_OP_GEMM, dt, "0;0", CF_SPECIAL, 0, 0, " alpha=1");
        if (c)
            c->pf[0] = 1;
    }
}

void cf_cases_1_4(cf_builder *b)
{
    unary_cases(b);
    clip_cases(b);
    binary_cases(b);
    reduce_cases(b);
    axis_cases(b);
    topk_cases(b);
    index_cases(b);
    gemm_cases(b);
}

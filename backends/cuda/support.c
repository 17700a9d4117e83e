/* The cuda plugin's support: the op table's dtypes, less the gaps below.
 * A gap is a row here: the op, the dtypes it does run, and why the others
 * are missing (supports() then says false for them, and the op entry
 * answers BP_ERR_UNSUPPORTED_OP with the reason). None today: every op runs
 * every dtype the core accepts. */
#include "support.h"

static const bpcu_gap gaps[] = {
    {BP_OP_COUNT, 0, NULL}, /* the end: not a gap */
};

const bpcu_gap *bpcu_gaps(size_t *n)
{
    *n = sizeof gaps / sizeof gaps[0] - 1;
    return gaps;
}

uint32_t bpcu_row_dtypes(bp_op op)
{
    const bp_op_info *r = bp_op_info_of(op);
    if (!r)
        return 0;
    uint32_t m = 0;
    for (int dt = 0; dt < BP_DTYPE_COUNT; dt++) {
        if (dt >= BP_I16)
            break; /* the dtypes of ABI 1.10 and later: not on cuda (BPCU_ABI_MINOR, config.h) */
        bool in;
        switch (r->dtypes) {
        case BP_DTYPES_NUMERIC: in = dt != BP_BOOL; break;
        case BP_DTYPES_FLOAT: in = bp_dtype_is_float((bp_dtype)dt); break;
        case BP_DTYPES_BOOL: in = dt == BP_BOOL; break;
        case BP_DTYPES_INTEGER: in = bp_dtype_is_int((bp_dtype)dt); break;
        default: in = true; break;
        }
        if (in)
            m |= BPCU_DT(dt);
    }
    return m;
}

static const bpcu_gap *gap_of(bp_op op)
{
    for (const bpcu_gap *g = gaps; g->op != BP_OP_COUNT; g++)
        if (g->op == op)
            return g;
    return NULL;
}

const char *bpcu_op_missing(bp_op op)
{
    const bpcu_gap *g = gap_of(op);
    return g ? g->why : NULL;
}

bool bpcu_op_supported(bp_op op, bp_dtype dtype)
{
    if (!bp_dtype_valid((int)dtype))
        return false;
    const bpcu_gap *g = gap_of(op);
    uint32_t runs = g ? g->runs : bpcu_row_dtypes(op);
    return (runs & BPCU_DT(dtype)) != 0;
}

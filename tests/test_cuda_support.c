/* The cuda plugin's support (backends/cuda/support.c), checked without a
 * GPU: it runs what the op table's rows accept, less its gaps, each of which
 * runs a subset of its row and says why. (That the rows themselves are what
 * the core accepts is tests/test_op_table.c.) */
#include "bpt.h"
#include "support.h"

Test(cuda_support, each_gap_runs_a_subset_of_its_row_and_says_why)
{
    size_t n = 0;
    const bpcu_gap *g = bpcu_gaps(&n);
    for (size_t i = 0; i < n; i++) {
        cr_expect_lt((int)g[i].op, (int)BP_OP_COUNT, "gap %zu", i);
        cr_expect_eq(g[i].runs & ~bpcu_row_dtypes(g[i].op), 0, "%s runs dtypes its row refuses",
                     bp_op_name(g[i].op));
        cr_expect_neq(g[i].runs, bpcu_row_dtypes(g[i].op), "%s is listed as a gap but runs "
                      "everything", bp_op_name(g[i].op));
        cr_expect(g[i].why && *g[i].why, "%s runs fewer dtypes without saying why",
                  bp_op_name(g[i].op));
        for (size_t j = 0; j < i; j++)
            cr_expect_neq(g[j].op, g[i].op, "%s has two gaps", bp_op_name(g[i].op));
    }
}

Test(cuda_support, supported_means_in_the_row_and_not_left_out_by_a_gap)
{
    size_t n = 0;
    const bpcu_gap *g = bpcu_gaps(&n);
    for (int op = 0; op < BP_OP_COUNT; op++) {
        uint32_t runs = bpcu_row_dtypes((bp_op)op);
        const char *why = NULL;
        for (size_t i = 0; i < n; i++)
            if (g[i].op == (bp_op)op)
                runs = g[i].runs, why = g[i].why;
        cr_expect_eq(bpcu_op_missing((bp_op)op), why, "%s", bp_op_name((bp_op)op));
        cr_expect_neq(bpcu_row_dtypes((bp_op)op), 0, "%s accepts no dtype", bp_op_name((bp_op)op));
        for (int dt = 0; dt < BP_DTYPE_COUNT; dt++)
            cr_expect_eq(bpcu_op_supported((bp_op)op, (bp_dtype)dt), (runs >> dt) & 1u,
                         "%s / %s", bp_op_name((bp_op)op), bp_dtype_name((bp_dtype)dt));
        cr_expect_not(bpcu_op_supported((bp_op)op, (bp_dtype)BP_DTYPE_COUNT));
        cr_expect_not(bpcu_op_supported((bp_op)op, (bp_dtype)-1));
    }
    /* codes a later ABI appends */
    cr_expect_not(bpcu_op_supported(BP_OP_COUNT, BP_F32));
    cr_expect_not(bpcu_op_supported((bp_op)(BP_OP_COUNT + 7), BP_F32));
    cr_expect_null(bpcu_op_missing(BP_OP_COUNT));
}

/* nn.h's ops run on cuda for every dtype the core accepts: the floats, and
 * max_pool's and resize's (nearest) integers too. */
Test(cuda_support, nn_ops_run_every_dtype_the_core_accepts)
{
    for (int op = BP_OP_FIRST_1_5; op < BP_OP_COUNT; op++) {
        if (bp_op_since((bp_op)op) != 5) /* nn.h's ops are the rows of 1.5 */
            continue;
        cr_expect_null(bpcu_op_missing((bp_op)op), "%s", bp_op_name((bp_op)op));
        const bp_dtype fl[4] = {BP_F16, BP_BF16, BP_F32, BP_F64};
        for (int k = 0; k < 4; k++)
            cr_expect(bpcu_op_supported((bp_op)op, fl[k]), "%s / %s", bp_op_name((bp_op)op),
                      bp_dtype_name(fl[k]));
        const bool ints = op == BP_OP_MAX_POOL || op == BP_OP_RESIZE;
        cr_expect_eq(bpcu_op_supported((bp_op)op, BP_I32), ints, "%s / i32",
                     bp_op_name((bp_op)op));
        cr_expect_not(bpcu_op_supported((bp_op)op, BP_BOOL), "%s / bool", bp_op_name((bp_op)op));
    }
}

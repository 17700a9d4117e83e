/* The integer dtypes of plugin ABI 1.10 (i16, u16, u32): arithmetic that
 * wraps as the C type does, comparisons and maximum/minimum in the type's
 * own order (a u32 above 2^31 is large, not negative), casts that saturate,
 * and a plugin built before 1.10 that is never handed one (the core refuses
 * with the fix; conform counts those cases unsupported). The op-by-op
 * coverage is conform's: every op of the table runs them against the
 * oracle on binary and blas_cpu. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

static bp_tensor *of_i64(bp_backend *be, bp_dtype dt, int64_t n, const int64_t *v)
{
    return bpt_tensor_i64(be, dt, 1, (int64_t[]){n}, v);
}

static void expect_i64(const char *what, const bp_tensor *t, int64_t n, const int64_t *want)
{
    int64_t *got = bpt_read_i64(t);
    for (int64_t i = 0; i < n; i++)
        cr_expect_eq(got[i], want[i], "%s [%lld]: %lld, wanted %lld", what, (long long)i,
                     (long long)got[i], (long long)want[i]);
    free(got);
}

Test(int_dtypes, arithmetic_wraps_and_comparisons_order_as_the_c_type)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        if (!bp_backend_supports(be, BP_OP_ADD, BP_U32))
            continue; /* devsim predates them: the test below */
        char what[96];
        /* u32: 4294967295 + 1 wraps to 0; 3000000000 is the larger */
        bp_tensor *a = of_i64(be, BP_U32, 3, (int64_t[]){4294967295, 3000000000, 7});
        bp_tensor *b = of_i64(be, BP_U32, 3, (int64_t[]){1, 5, 2});
        bp_tensor *s = NULL, *mx = NULL, *gt = NULL, *q = NULL, *r = NULL;
        BPT_OK(bp_add(a, b, &s));
        BPT_OK(bp_maximum(a, b, &mx));
        BPT_OK(bp_gt(a, b, &gt));
        BPT_OK(bp_div(a, b, &q));
        BPT_OK(bp_mod(a, b, &r));
        snprintf(what, sizeof what, "u32 on %s", bp_backend_name(be));
        expect_i64(what, s, 3, (int64_t[]){0, 3000000005, 9});
        expect_i64(what, mx, 3, (int64_t[]){4294967295, 3000000000, 7});
        expect_i64(what, gt, 3, (int64_t[]){1, 1, 1});
        expect_i64(what, q, 3, (int64_t[]){4294967295, 600000000, 3});
        expect_i64(what, r, 3, (int64_t[]){0, 0, 1});
        bp_tensor *all[] = {a, b, s, mx, gt, q, r};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);

        /* i16: -32768 / -1 wraps to -32768; Mod takes the divisor's sign */
        a = of_i64(be, BP_I16, 3, (int64_t[]){-32768, 32767, -7});
        b = of_i64(be, BP_I16, 3, (int64_t[]){-1, 1, 3});
        BPT_OK(bp_div(a, b, &q));
        BPT_OK(bp_add(a, b, &s));
        BPT_OK(bp_mod(a, b, &r));
        snprintf(what, sizeof what, "i16 on %s", bp_backend_name(be));
        expect_i64(what, q, 3, (int64_t[]){-32768, 32767, -2});
        expect_i64(what, s, 3, (int64_t[]){32767, -32768, -4});
        expect_i64(what, r, 3, (int64_t[]){0, 0, 2});
        bp_tensor *all16[] = {a, b, s, q, r};
        for (size_t k = 0; k < sizeof all16 / sizeof all16[0]; k++)
            bp_tensor_release(all16[k]);

        /* u16: 65535 * 2 wraps to 65534; shifts keep 16 bits; the sum of
         * a reduction wraps too */
        a = of_i64(be, BP_U16, 3, (int64_t[]){65535, 256, 40000});
        b = of_i64(be, BP_U16, 3, (int64_t[]){2, 8, 1});
        bp_tensor *m = NULL, *sh = NULL, *sum = NULL;
        BPT_OK(bp_mul(a, b, &m));
        BPT_OK(bp_bitshift_left(a, b, &sh));
        BPT_OK(bp_sum(a, 0, NULL, false, &sum));
        snprintf(what, sizeof what, "u16 on %s", bp_backend_name(be));
        expect_i64(what, m, 3, (int64_t[]){65534, 2048, 40000});
        expect_i64(what, sh, 3, (int64_t[]){65532, 0, 14464});
        expect_i64(what, sum, 1, (int64_t[]){(65535 + 256 + 40000) % 65536});
        bp_tensor *allu[] = {a, b, m, sh, sum};
        for (size_t k = 0; k < sizeof allu / sizeof allu[0]; k++)
            bp_tensor_release(allu[k]);
    }
    bp_context_destroy(ctx);
}

Test(int_dtypes, casts_into_them_saturate_and_out_of_them_are_exact)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    bp_tensor *x = bpt_vec(be, BP_F64, 5, (const double[]){-1e10, -3.7, 40000.9, 1e10, NAN});
    const struct { bp_dtype dt; int64_t want[5]; } rows[] = {
        {BP_I16, {-32768, -3, 32767, 32767, 0}},
        {BP_U16, {0, 0, 40000, 65535, 0}},
        {BP_U32, {0, 0, 40000, 4294967295, 0}},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        bp_tensor *y = NULL, *back = NULL;
        BPT_OK(bp_cast(x, rows[k].dt, &y));
        expect_i64(bp_dtype_name(rows[k].dt), y, 5, rows[k].want);
        BPT_OK(bp_cast(y, BP_I64, &back));
        expect_i64("back to i64", back, 5, rows[k].want);
        bp_tensor_release(y);
        bp_tensor_release(back);
    }
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

Test(int_dtypes, a_plugin_built_before_abi_1_10_is_never_handed_one)
{
    bp_context *ctx = bpt_context();
    bp_backend *sim = NULL;
    BPT_OK(bp_backend_get(ctx, BPT_DEVSIM_PATH, &sim)); /* built for ABI 1.5 */
    const bp_dtype new_ones[] = {BP_I16, BP_U16, BP_U32};
    for (size_t k = 0; k < 3; k++) {
        cr_expect_not(bp_backend_supports(sim, BP_OP_ADD, new_ones[k]));
        cr_expect_not(bp_backend_supports(sim, BP_OP_COPY, new_ones[k]));
        bp_tensor *t = (bp_tensor *)(uintptr_t)0x10;
        /* an op: unsupported for the dtype; a tensor of it: not a dtype it holds */
        BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_zeros(sim, new_ones[k], 1, (int64_t[]){3}, &t));
        cr_expect_null(t);
        const char *msg = bp_last_error();
        cr_expect(strstr(msg, "devsim") && strstr(msg, bp_dtype_name(new_ones[k])) &&
                      strstr(msg, "ABI 1.10") && strstr(msg, "bp_cast"),
                  "%s", msg);
        t = (bp_tensor *)(uintptr_t)0x10;
        BPT_FAILS(BP_ERR_DTYPE, bp_tensor_from_host(sim, new_ones[k], 1, (int64_t[]){1},
                                                    (uint32_t[]){7}, &t));
        cr_expect_null(t);
    }
    /* a cast into one on such a plugin is refused as an op it lacks */
    bp_tensor *x = NULL, *y = (bp_tensor *)(uintptr_t)0x10;
    BPT_OK(bp_zeros(sim, BP_I32, 1, (int64_t[]){3}, &x));
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_cast(x, BP_U16, &y));
    cr_expect_null(y);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

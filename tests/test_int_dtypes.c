/* The integer dtypes of plugin ABI 1.10 (i16, u16, u32) and 1.11 (u64):
 * arithmetic that wraps as the C type does, comparisons, maximum/minimum,
 * reductions, sorting and clipping in the type's own order (a u32 above
 * 2^31 and a u64 above 2^63 are large, not negative), casts that saturate,
 * and a plugin built before the dtype arrived that is never handed one (the
 * core refuses with the fix; conform counts those cases unsupported). The
 * op-by-op coverage is conform's: every op of the table runs them against
 * the oracle on binary and blas_cpu (the oracle's u64 values lie below
 * 2^63, so the upper half is tested here). */
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

#define U63 ((uint64_t)1 << 63)

static bp_tensor *of_u64(bp_backend *be, int64_t n, const uint64_t *v)
{
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_U64, 1, (int64_t[]){n}, v, &t));
    return t;
}

static void expect_u64(const char *what, const bp_tensor *t, int64_t n, const uint64_t *want)
{
    uint64_t got[8] = {0};
    cr_assert(n <= 8);
    BPT_OK(bp_tensor_to_host(t, got, (size_t)n * sizeof got[0]));
    for (int64_t i = 0; i < n; i++)
        cr_expect_eq(got[i], want[i], "%s [%lld]: %llu, wanted %llu", what, (long long)i,
                     (unsigned long long)got[i], (unsigned long long)want[i]);
}

Test(int_dtypes, u64_above_2_63_wraps_compares_and_shifts_as_unsigned)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        if (!bp_backend_supports(be, BP_OP_ADD, BP_U64))
            continue; /* devsim predates it: the test below */
        char what[96];
        snprintf(what, sizeof what, "u64 on %s", bp_backend_name(be));
        bp_tensor *a = of_u64(be, 4, (uint64_t[]){UINT64_MAX, U63 + 5, 7, U63});
        bp_tensor *b = of_u64(be, 4, (uint64_t[]){1, 5, 2, 3});
        bp_tensor *r[9] = {NULL};
        BPT_OK(bp_add(a, b, &r[0]));
        BPT_OK(bp_maximum(a, b, &r[1]));
        BPT_OK(bp_gt(a, b, &r[2]));
        BPT_OK(bp_div(a, b, &r[3]));
        BPT_OK(bp_mod(a, b, &r[4]));
        BPT_OK(bp_fmod(a, b, &r[5]));
        BPT_OK(bp_bitshift_right(a, b, &r[6]));
        BPT_OK(bp_sub(b, a, &r[7]));
        BPT_OK(bp_minimum(a, b, &r[8]));
        expect_u64(what, r[0], 4, (uint64_t[]){0, U63 + 10, 9, U63 + 3});
        expect_u64(what, r[1], 4, (uint64_t[]){UINT64_MAX, U63 + 5, 7, U63});
        expect_i64(what, r[2], 4, (int64_t[]){1, 1, 1, 1});
        expect_u64(what, r[3], 4, (uint64_t[]){UINT64_MAX, (U63 + 5) / 5, 3, U63 / 3});
        expect_u64(what, r[4], 4, (uint64_t[]){0, (U63 + 5) % 5, 1, U63 % 3});
        expect_u64(what, r[5], 4, (uint64_t[]){0, (U63 + 5) % 5, 1, U63 % 3});
        expect_u64(what, r[6], 4, (uint64_t[]){U63 - 1, (U63 + 5) >> 5, 1, U63 >> 3});
        expect_u64(what, r[7], 4, (uint64_t[]){2, U63, (uint64_t)-5, U63 + 3});
        expect_u64(what, r[8], 4, (uint64_t[]){1, 5, 2, 3});
        for (int k = 0; k < 9; k++)
            bp_tensor_release(r[k]);
        bp_tensor_release(a);
        bp_tensor_release(b);
    }
    bp_context_destroy(ctx);
}

Test(int_dtypes, u64_reductions_sorting_and_clipping_order_above_2_63)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        if (!bp_backend_supports(be, BP_OP_ADD, BP_U64))
            continue;
        char what[96];
        snprintf(what, sizeof what, "u64 on %s", bp_backend_name(be));
        bp_tensor *x = of_u64(be, 4, (uint64_t[]){3, U63 + 1, 1, U63});
        bp_tensor *mx = NULL, *mn = NULL, *am = NULL, *sum = NULL, *sv = NULL, *si = NULL;
        bp_tensor *tv = NULL, *ti = NULL, *cl = NULL, *lo = NULL;
        BPT_OK(bp_max(x, 0, NULL, false, &mx));
        BPT_OK(bp_min(x, 0, NULL, false, &mn));
        BPT_OK(bp_argmax(x, 0, NULL, false, &am));
        BPT_OK(bp_sum(x, 0, NULL, false, &sum));
        BPT_OK(bp_sort(x, 0, true, &sv, &si));
        BPT_OK(bp_topk(x, 2, 0, true, true, &tv, &ti));
        lo = of_u64(be, 1, (uint64_t[]){U63});
        BPT_OK(bp_clip(x, lo, NULL, &cl));
        expect_u64(what, mx, 1, (uint64_t[]){U63 + 1});
        expect_u64(what, mn, 1, (uint64_t[]){1});
        expect_i64(what, am, 1, (int64_t[]){1});
        expect_u64(what, sum, 1, (uint64_t[]){5}); /* 2^64 + 5 wraps */
        expect_u64(what, sv, 4, (uint64_t[]){U63 + 1, U63, 3, 1});
        expect_i64(what, si, 4, (int64_t[]){1, 3, 0, 2});
        expect_u64(what, tv, 2, (uint64_t[]){U63 + 1, U63});
        expect_u64(what, cl, 4, (uint64_t[]){U63, U63 + 1, U63, U63});
        bp_tensor *all[] = {x, mx, mn, am, sum, sv, si, tv, ti, cl, lo};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            bp_tensor_release(all[k]);
    }
    bp_context_destroy(ctx);
}

Test(int_dtypes, u64_casts_saturate_by_value_and_print_unsigned)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    bp_tensor *x = of_u64(be, 3, (uint64_t[]){UINT64_MAX, U63 + 4096, 5});
    /* to narrower integers: the maximum; to i64: INT64_MAX; values below
     * 2^63 unchanged */
    const struct { bp_dtype dt; int64_t want[3]; } rows[] = {
        {BP_I64, {INT64_MAX, INT64_MAX, 5}}, {BP_I8, {127, 127, 5}}, {BP_U8, {255, 255, 5}},
        {BP_U32, {4294967295, 4294967295, 5}}, {BP_BOOL, {1, 1, 1}}};
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        bp_tensor *y = NULL;
        BPT_OK(bp_cast(x, rows[k].dt, &y));
        expect_i64(bp_dtype_name(rows[k].dt), y, 3, rows[k].want);
        bp_tensor_release(y);
    }
    /* to floats: the value, rounded once (2^63 + 4096 is exact in f64) */
    bp_tensor *f = NULL, *h = NULL, *g = NULL;
    BPT_OK(bp_cast(x, BP_F64, &f));
    double fd[3];
    BPT_OK(bp_tensor_to_host(f, fd, sizeof fd));
    cr_expect(fd[0] == 18446744073709551616.0 && fd[1] == 9223372036854779904.0 && fd[2] == 5.0,
              "%.17g %.17g %.17g", fd[0], fd[1], fd[2]);
    BPT_OK(bp_cast(x, BP_F32, &g));
    float ff[3];
    BPT_OK(bp_tensor_to_host(g, ff, sizeof ff));
    cr_expect(ff[0] == 18446744073709551616.0f && ff[1] == 9223372036854775808.0f,
              "%.9g %.9g", (double)ff[0], (double)ff[1]);
    BPT_OK(bp_cast(x, BP_BF16, &h));
    uint16_t hb[3];
    BPT_OK(bp_tensor_to_host(h, hb, sizeof hb));
    cr_expect(hb[0] == bp_f32_to_bf16(18446744073709551616.0f) &&
                  hb[1] == bp_f32_to_bf16(9223372036854775808.0f) && hb[2] == bp_f32_to_bf16(5.0f),
              "%04x %04x %04x", hb[0], hb[1], hb[2]);
    bp_tensor_release(f);
    bp_tensor_release(g);
    bp_tensor_release(h);
    /* from floats and signed integers: saturating to [0, UINT64_MAX] */
    bp_tensor *d = NULL, *u = NULL, *i = NULL, *ui = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F64, 1, (int64_t[]){4},
                               (double[]){1e30, -3.0, 9223372036854779904.0, 0.0 / 0.0}, &d));
    BPT_OK(bp_cast(d, BP_U64, &u));
    expect_u64("f64 -> u64", u, 4, (uint64_t[]){UINT64_MAX, 0, U63 + 4096, 0});
    i = bpt_tensor_i64(be, BP_I64, 1, (int64_t[]){2}, (int64_t[]){-5, INT64_MAX});
    BPT_OK(bp_cast(i, BP_U64, &ui));
    expect_u64("i64 -> u64", ui, 2, (uint64_t[]){0, (uint64_t)INT64_MAX});
    bp_tensor_release(d);
    bp_tensor_release(u);
    bp_tensor_release(i);
    bp_tensor_release(ui);
    /* one element: bp_item_i64 saturates; the text is the unsigned value */
    int64_t item = 0;
    bp_tensor *first = of_u64(be, 1, (uint64_t[]){UINT64_MAX});
    BPT_OK(bp_item_i64(first, &item));
    cr_expect_eq(item, INT64_MAX);
    char text[96];
    BPT_OK(bp_tensor_format(x, text, sizeof text, NULL));
    cr_expect(strstr(text, "18446744073709551615") && strstr(text, "9223372036854779904"), "%s",
              text);
    bp_tensor_release(first);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

Test(int_dtypes, a_plugin_built_before_the_dtype_is_never_handed_one)
{
    bp_context *ctx = bpt_context();
    bp_backend *sim = NULL;
    BPT_OK(bp_backend_get(ctx, BPT_DEVSIM_PATH, &sim)); /* built for ABI 1.5 */
    const bp_dtype new_ones[] = {BP_I16, BP_U16, BP_U32, BP_U64};
    for (size_t k = 0; k < 4; k++) {
        cr_expect_not(bp_backend_supports(sim, BP_OP_ADD, new_ones[k]));
        cr_expect_not(bp_backend_supports(sim, BP_OP_COPY, new_ones[k]));
        bp_tensor *t = (bp_tensor *)(uintptr_t)0x10;
        /* an op: unsupported for the dtype; a tensor of it: not a dtype it holds */
        BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_zeros(sim, new_ones[k], 1, (int64_t[]){3}, &t));
        cr_expect_null(t);
        const char *msg = bp_last_error();
        cr_expect(strstr(msg, "devsim") && strstr(msg, bp_dtype_name(new_ones[k])) &&
                      strstr(msg, new_ones[k] == BP_U64 ? "ABI 1.11" : "ABI 1.10") &&
                      strstr(msg, "bp_cast"),
                  "%s", msg);
        t = (bp_tensor *)(uintptr_t)0x10;
        BPT_FAILS(BP_ERR_DTYPE, bp_tensor_from_host(sim, new_ones[k], 1, (int64_t[]){1},
                                                    (uint64_t[]){7}, &t));
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

/* Dropout with a key (nn.h bp_dropout, composed in the core from
 * bp_random_uniform, bp_ge, bp_div and bp_where) on every backend against
 * the oracle (cf_oracle_dropout, on the oracle's own Philox). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpt.h"
#include "expect_nn.h"

/* The division by 1 - ratio goes through 1 - ratio rounded to the dtype
 * (bp_full): up to about an ulp of the result beyond its own rounding. */
static bpt_tol scaled_tol(bp_dtype dt)
{
    if (dt == BP_F64)
        return (bpt_tol){4e-16, 0, 0};
    if (dt == BP_F32)
        return (bpt_tol){3e-7, 0, 0};
    return (bpt_tol){0, 0, 2};
}

Test(nn_dropout, dropout_mask_is_the_same_on_every_backend)
{
    int64_t xs[3] = {3, 17, 11};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < CF_COUNT(cf_float_dtypes); d++) {
            bp_dtype dt = cf_float_dtypes[d];
            cf_array xa = bpt_random_array(dt, 3, xs, 141, -10, 10), want, mask;
            cr_assert(cf_oracle_dropout(&xa, 0.3, true, 1234, 77, &want, &mask));
            bp_tensor *x = bpt_tensor_of(be, &xa), *y = NULL, *m = NULL;
            BPT_OK(bp_dropout(x, 0.3, true, 1234, 77, &y, &m));
            bpt_expect_array("dropout mask", m, &mask, bpt_exact());
            bpt_expect_array("dropout", y, &want, scaled_tol(dt));
            bp_tensor_release(x);
            bp_tensor_release(y);
            bp_tensor_release(m);
            cf_array_free(&xa);
            cf_array_free(&want);
            cf_array_free(&mask);
        }
    }
    bp_context_destroy(ctx);
}

Test(nn_dropout, dropout_in_inference_is_a_copy)
{
    int64_t xs[2] = {4, 9};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        cf_array xa = bpt_random_array(BP_F32, 2, xs, 151, -10, 10);
        int64_t ones[36];
        for (int i = 0; i < 36; i++)
            ones[i] = 1;
        bp_tensor *x = bpt_tensor_of(be, &xa), *y = NULL, *m = NULL;
        BPT_OK(bp_dropout(x, 0.5, false, 1, 0, &y, &m));
        cr_assert_neq(y, x, "inference dropout returned its input handle, not a copy");
        bpt_expect_array("inference dropout", y, &xa, bpt_exact());
        bpt_expect_i64("inference mask", m, BP_BOOL, 2, xs, ones);
        bp_tensor_release(x);
        bp_tensor_release(y);
        bp_tensor_release(m);
        cf_array_free(&xa);
    }
    bp_context_destroy(ctx);
}

Test(nn_dropout, dropout_with_ratio_zero_keeps_everything)
{
    int64_t n = 1000;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        cf_array xa = bpt_random_array(BP_F64, 1, &n, 161, -10, 10);
        bp_tensor *x = bpt_tensor_of(be, &xa), *y = NULL;
        BPT_OK(bp_dropout(x, 0.0, true, 9, 0, &y, NULL));
        bpt_expect_array("ratio 0", y, &xa, bpt_exact());
        bp_tensor_release(x);
        bp_tensor_release(y);
        cf_array_free(&xa);
    }
    bp_context_destroy(ctx);
}

/* The key is (seed, offset): an offset moves along the same stream. */
Test(nn_dropout, dropout_offset_moves_along_the_stream)
{
    int64_t n = 600, m = 500;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F32, 1, &n, NULL), *x2 = bpt_tensor(be, BP_F32, 1, &m, NULL);
        bp_tensor *y = NULL, *y2 = NULL, *a = NULL, *b = NULL;
        BPT_OK(bp_dropout(x, 0.5, true, 42, 0, &y, &a));
        BPT_OK(bp_dropout(x2, 0.5, true, 42, 100, &y2, &b));
        int64_t *va = bpt_read_i64(a), *vb = bpt_read_i64(b);
        for (int64_t i = 0; i < m; i++)
            cr_assert_eq(vb[i], va[i + 100], "%s: element %lld", bp_backend_name(be), (long long)i);
        free(va);
        free(vb);
        bp_tensor *all[6] = {x, x2, y, y2, a, b};
        for (int i = 0; i < 6; i++)
            bp_tensor_release(all[i]);
    }
    bp_context_destroy(ctx);
}

Test(nn_dropout, dropout_keeps_about_one_minus_ratio_of_the_elements)
{
    int64_t n = 40000;
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F32, 1, &n, NULL), *y = NULL, *m = NULL;
        BPT_OK(bp_dropout(x, 0.3, true, 5, 0, &y, &m));
        int64_t *v = bpt_read_i64(m), kept = 0;
        for (int64_t i = 0; i < n; i++)
            kept += v[i];
        free(v);
        /* binomial: sd = sqrt(n 0.21) ~ 92; 5 sd */
        cr_assert(llabs(kept - 28000) < 460, "%s: %lld of %lld kept", bp_backend_name(be),
                  (long long)kept, (long long)n);
        bp_tensor_release(x);
        bp_tensor_release(y);
        bp_tensor_release(m);
    }
    bp_context_destroy(ctx);
}

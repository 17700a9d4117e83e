/* The classification losses (nn.h bp_nll_loss,
 * bp_softmax_cross_entropy_loss) on every backend and float dtype against
 * the oracle: every reduction, class weights, ignore_index, label dtypes,
 * (N, C) and (N, C, d...) scores, the log_prob output; and the behaviours
 * behind them (ignored samples leave the mean, stability, log_prob is
 * log_softmax over axis 1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bpt.h"
#include "expect_nn.h"

typedef struct loss_case {
    int32_t rank;
    int64_t x[4];
    bool weights;
    bool ignore;
    bp_dtype label_dt;
} loss_case;

static bp_status call(bool ce, const bp_tensor *x, const bp_tensor *l, const bp_tensor *w,
                      bp_loss_reduction r, const int64_t *ig, bp_tensor **out, bp_tensor **lp)
{
    return ce ? bp_softmax_cross_entropy_loss(x, l, w, r, ig, out, lp)
              : bp_nll_loss(x, l, w, r, ig, out);
}

static void check(bool ce, const loss_case *c)
{
    bp_op op = ce ? BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS : BP_OP_NLL_LOSS;
    int64_t ls[3] = {c->x[0]}, C = c->x[1], ig = 1;
    for (int32_t k = 2; k < c->rank; k++)
        ls[k - 1] = c->x[k];
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < CF_COUNT(cf_float_dtypes); d++) {
            bp_dtype dt = cf_float_dtypes[d];
            if (!bpt_supports(be, op, dt))
                continue;
            cf_array xa = bpt_random_array(dt, c->rank, c->x, 111 + d, ce ? -6 : -5, ce ? 6 : 0);
            cf_array la = bpt_random_labels(c->label_dt, c->rank - 1, ls, 112, C);
            cf_array wa = bpt_random_array(dt, 1, &C, 113, 0.1, 2);
            bp_tensor *x = bpt_tensor_of(be, &xa), *l = bpt_tensor_of(be, &la);
            bp_tensor *w = c->weights ? bpt_tensor_of(be, &wa) : NULL;
            for (int r = BP_LOSS_NONE; r <= BP_LOSS_MEAN; r++) {
                cf_array want, lpw;
                double *terms;
                int64_t k;
                const int64_t *ignore = c->ignore ? &ig : NULL;
                bool ok = ce ? cf_oracle_softmax_cross_entropy_loss(
                                   &xa, &la, c->weights ? &wa : NULL, (bp_loss_reduction)r,
                                   ignore, &want, &lpw, &terms, &k)
                             : cf_oracle_nll_loss(&xa, &la, c->weights ? &wa : NULL,
                                                  (bp_loss_reduction)r, ignore, &want, &terms, &k);
                cr_assert(ok);
                bp_tensor *y = NULL, *lp = NULL;
                BPT_OK(call(ce, x, l, w, (bp_loss_reduction)r, ignore, &y, ce ? &lp : NULL));
                char what[96];
                snprintf(what, sizeof what, "%s reduction %d%s%s", bp_op_name(op), r,
                         c->weights ? " weights" : "", c->ignore ? " ignore_index" : "");
                bpt_expect_norm(what, y, &want, terms, k, 4);
                if (ce) {
                    double *lt;
                    int64_t lk;
                    cf_array ls_want;
                    cr_assert(cf_oracle_log_softmax(&xa, 1, &ls_want, &lt, &lk));
                    bpt_expect_norm("log_prob", lp, &lpw, lt, lk, 4);
                    cf_array_free(&ls_want);
                    free(lt);
                    cf_array_free(&lpw);
                }
                bp_tensor_release(y);
                bp_tensor_release(lp);
                cf_array_free(&want);
                free(terms);
            }
            bp_tensor_release(x);
            bp_tensor_release(l);
            bp_tensor_release(w);
            cf_array_free(&xa);
            cf_array_free(&la);
            cf_array_free(&wa);
        }
    }
    bp_context_destroy(ctx);
}

Test(nn_loss, nll_loss_matches_the_oracle_for_every_reduction)
{
    check(false, &(loss_case){2, {6, 4}, false, false, BP_I64});
    check(false, &(loss_case){2, {6, 4}, true, true, BP_I32});
    check(false, &(loss_case){4, {2, 3, 2, 3}, true, false, BP_I64});
    check(false, &(loss_case){3, {3, 5, 4}, false, true, BP_I32});
}

Test(nn_loss, softmax_cross_entropy_loss_matches_the_oracle_for_every_reduction)
{
    check(true, &(loss_case){2, {6, 4}, false, false, BP_I64});
    check(true, &(loss_case){2, {7, 5}, true, true, BP_I32});
    check(true, &(loss_case){4, {2, 3, 2, 3}, true, false, BP_I64});
    check(true, &(loss_case){3, {3, 5, 4}, false, true, BP_I32});
}

Test(nn_loss, cross_entropy_rows_long_enough_for_the_fused_path)
{
    check(true, &(loss_case){2, {300, 257}, true, true, BP_I64});
    check(true, &(loss_case){2, {64, 1000}, false, false, BP_I32});
}

/* ignore_index: the mean over the other samples, as if the ignored ones
 * were not there at all. */
Test(nn_loss, cross_entropy_ignore_index_drops_samples_from_the_mean)
{
    double xv[12] = {1, 2, 3, 0.5, -1, 4, 2, 2, 2, 7, -3, 0};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F64, 2, (int64_t[]){4, 3}, xv);
        bp_tensor *x2 = bpt_tensor(be, BP_F64, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 2, 2, 2});
        bp_tensor *l = bpt_tensor_i64(be, BP_I64, 1, (int64_t[]){4}, (int64_t[]){2, -100, 0, -100});
        bp_tensor *l2 = bpt_tensor_i64(be, BP_I64, 1, (int64_t[]){2}, (int64_t[]){2, 0});
        bp_tensor *w = bpt_vec(be, BP_F64, 3, (double[]){0.5, 1, 3});
        bp_tensor *a = NULL, *b = NULL;
        int64_t ig = -100;
        BPT_OK(bp_softmax_cross_entropy_loss(x, l, w, BP_LOSS_MEAN, &ig, &a, NULL));
        BPT_OK(bp_softmax_cross_entropy_loss(x2, l2, w, BP_LOSS_MEAN, NULL, &b, NULL));
        double *va = bpt_read(a), *vb = bpt_read(b);
        cr_assert(fabs(va[0] - vb[0]) <= 1e-15 * fabs(vb[0]), "%s: %.17g with ignored samples, "
                  "%.17g without them", bp_backend_name(be), va[0], vb[0]);
        free(va);
        free(vb);
        bp_tensor *all[7] = {x, x2, l, l2, w, a, b};
        for (int i = 0; i < 7; i++)
            bp_tensor_release(all[i]);
    }
    bp_context_destroy(ctx);
}

Test(nn_loss, nll_loss_mean_over_only_ignored_samples_is_nan)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_tensor(be, BP_F32, 2, (int64_t[]){2, 2}, (double[]){-1, -2, -3, -4});
        bp_tensor *l = bpt_tensor_i64(be, BP_I32, 1, (int64_t[]){2}, (int64_t[]){5, 5});
        bp_tensor *y = NULL, *s = NULL;
        int64_t ig = 5;
        BPT_OK(bp_nll_loss(x, l, NULL, BP_LOSS_MEAN, &ig, &y));
        bpt_expect("mean of nothing", y, BP_F32, 0, NULL, (double[]){NAN}, bpt_exact());
        BPT_OK(bp_nll_loss(x, l, NULL, BP_LOSS_SUM, &ig, &s));
        bpt_expect("sum of nothing", s, BP_F32, 0, NULL, (double[]){0}, bpt_exact());
        bp_tensor_release(x);
        bp_tensor_release(l);
        bp_tensor_release(y);
        bp_tensor_release(s);
    }
    bp_context_destroy(ctx);
}

Test(nn_loss, cross_entropy_is_stable_for_scores_far_beyond_exp_range)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    double xv[6] = {1e4, 1e4 - 1, 1e4 - 3, -2e4, -2e4 + 2, -2e4 + 1};
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < CF_COUNT(cf_float_dtypes); d++) {
            bp_dtype dt = cf_float_dtypes[d];
            if (dt == BP_F16) /* 2e4 is beyond f16's range */
                continue;
            cf_array xa = bpt_array(dt, 2, (int64_t[]){2, 3}, xv), want, lpw;
            cf_array la = bpt_array_i64(BP_I64, 1, (int64_t[]){2}, (int64_t[]){1, 0});
            double *terms;
            int64_t k;
            cr_assert(cf_oracle_softmax_cross_entropy_loss(&xa, &la, NULL, BP_LOSS_NONE, NULL,
                                                           &want, &lpw, &terms, &k));
            bp_tensor *x = bpt_tensor_of(be, &xa), *l = bpt_tensor_of(be, &la), *y = NULL;
            BPT_OK(bp_softmax_cross_entropy_loss(x, l, NULL, BP_LOSS_NONE, NULL, &y, NULL));
            double *v = bpt_read(y);
            cr_assert(isfinite(v[0]) && isfinite(v[1]), "%s [%s]: %g %g", bp_backend_name(be),
                      bp_dtype_name(dt), v[0], v[1]);
            free(v);
            bpt_expect_norm("huge scores", y, &want, terms, k, 4);
            bp_tensor_release(x);
            bp_tensor_release(l);
            bp_tensor_release(y);
            cf_array_free(&xa);
            cf_array_free(&la);
            cf_array_free(&want);
            cf_array_free(&lpw);
            free(terms);
        }
    }
    bp_context_destroy(ctx);
}

Test(nn_loss, cross_entropy_log_prob_is_log_softmax_along_axis_1)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    int64_t xs[3] = {2, 5, 3};
    BPT_FOR_EACH_BACKEND(ctx, be) {
        cf_array xa = bpt_random_array(BP_F64, 3, xs, 121, -4, 4);
        cf_array la = bpt_random_labels(BP_I64, 2, (int64_t[]){2, 3}, 122, 5);
        bp_tensor *x = bpt_tensor_of(be, &xa), *l = bpt_tensor_of(be, &la);
        bp_tensor *y = NULL, *lp = NULL, *ls = NULL;
        BPT_OK(bp_softmax_cross_entropy_loss(x, l, NULL, BP_LOSS_SUM, NULL, &y, &lp));
        BPT_OK(bp_log_softmax(x, 1, &ls));
        double *a = bpt_read(lp), *b = bpt_read(ls);
        for (int64_t i = 0; i < xa.n; i++)
            cr_assert(fabs(a[i] - b[i]) <= 1e-14 * (1 + fabs(b[i])), "%s: element %lld: %.17g "
                      "against log_softmax's %.17g", bp_backend_name(be), (long long)i, a[i], b[i]);
        free(a);
        free(b);
        bp_tensor_release(x);
        bp_tensor_release(l);
        bp_tensor_release(y);
        bp_tensor_release(lp);
        bp_tensor_release(ls);
        cf_array_free(&xa);
        cf_array_free(&la);
    }
    bp_context_destroy(ctx);
}

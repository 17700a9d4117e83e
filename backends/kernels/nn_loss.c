/* The classification losses, one sample (one row of the scores, the class
 * axis last) at a time, in double:
 *   nll_loss:                    loss = -weights[t] x[t]
 *   softmax_cross_entropy_loss:  log_prob = x - max - log(sum exp(x - max)),
 *                                loss = -weights[t] log_prob[t]
 * t the sample's label; a sample whose label is ignore_index has loss 0 and
 * weight 0. Reductions: none (each sample's loss), sum, mean (the sum over
 * the weights' sum: NaN when every sample is ignored, as ONNX's reference). */
#include <math.h>
#include <stdlib.h>

#include "kernels_nn.h"

void bpk_loss_args_of(bp_op op, const bp_op_params *p, const bp_view *x, bpk_loss_args *a)
{
    a->ce = op == BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
    a->classes = x->shape[x->rank - 1];
    a->rows = 1;
    for (int32_t d = 0; d < x->rank - 1; d++)
        a->rows *= x->shape[d];
    a->has_ignore = p->i[1] != 0;
    a->ignore = p->i[2];
}

static int64_t label_of(const bp_view *labels, int64_t r)
{
    int64_t t;
    bpk_block_load_i64(labels, r, 1, &t);
    return t;
}

int64_t bpk_loss_bad_label(const bpk_loss_args *a, const bp_view *labels, int64_t lo, int64_t hi,
                           int64_t *value)
{
    for (int64_t r = lo; r < hi; r++) {
        int64_t t = label_of(labels, r);
        if ((t < 0 || t >= a->classes) && !(a->has_ignore && t == a->ignore)) {
            *value = t;
            return r;
        }
    }
    return -1;
}

/* row := log_softmax(row), stable. */
static void log_softmax(double *row, int64_t n)
{
    double mx = -INFINITY, s = 0;
    for (int64_t i = 0; i < n; i++)
        mx = row[i] > mx || isnan(row[i]) ? row[i] : mx;
    for (int64_t i = 0; i < n; i++)
        s += exp(row[i] - mx);
    double lse = mx + log(s); /* NaN when a score is NaN or +inf, or all are -inf */
    for (int64_t i = 0; i < n; i++)
        row[i] -= lse;
}

bp_status bpk_loss_rows(void *dev, const bpk_loss_args *a, const bp_view *x,
                        const bp_view *labels, const bp_view *weights, const bp_view *log_prob,
                        int64_t lo, int64_t hi, double *per, double *wsum)
{
    const char *op = a->ce ? "softmax_cross_entropy_loss" : "nll_loss";
    int64_t bad_value, bad = bpk_loss_bad_label(a, labels, lo, hi, &bad_value);
    if (bad >= 0)
        return bpk_fail(dev, BP_ERR_INDEX,
                        "%s: label %lld (flat position %lld) is not a class: labels must lie in "
                        "[0, %lld)%s", op, (long long)bad_value, (long long)bad,
                        (long long)a->classes, a->has_ignore ? " or equal ignore_index" : "");
    const int64_t C = a->classes;
    double *row = malloc((size_t)(C > 0 ? C : 1) * sizeof *row);
    if (!row)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld classes", op,
                        (long long)C);
    for (int64_t r = lo; r < hi; r++) {
        const int64_t t = label_of(labels, r);
        const bool ignored = a->has_ignore && t == a->ignore;
        bool need_row = log_prob || (a->ce && !ignored);
        if (need_row) {
            bpk_block_load(x, r * C, C, row);
            if (a->ce)
                log_softmax(row, C);
            if (log_prob)
                bpk_block_store(log_prob, r * C, C, row);
        }
        double w = 0, l = 0;
        if (!ignored) {
            w = weights ? bp_elem_load_f64(weights->dtype, bpk_elem_at(weights, t)) : 1.0;
            double v;
            if (need_row)
                v = row[t];
            else
                bpk_block_load(x, r * C + t, 1, &v);
            l = -w * v;
        }
        per[r - lo] = l;
        wsum[r - lo] = w;
    }
    free(row);
    return BP_OK;
}

void bpk_loss_finish(const bp_op_params *p, const bp_view *loss, int64_t rows, const double *per,
                     const double *wsum)
{
    if (p->i[0] == 0) { /* none: loss has the labels' shape */
        bpk_block_store(loss, 0, rows, per);
        return;
    }
    double s = 0, w = 0;
    for (int64_t r = 0; r < rows; r++) {
        s += per[r];
        w += wsum[r];
    }
    double v = p->i[0] == 1 ? s : s / w;
    bpk_block_store(loss, 0, 1, &v);
}

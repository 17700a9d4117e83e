/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss from ONNX's
 * definitions, scores (N, C, d...) with the class axis 1:
 *   log_prob[n, :, d] = x - max - log(sum exp(x - max)) (long double; a row
 *     with a NaN, a +inf or nothing but -inf is NaN throughout)
 *   loss[n, d] = -weights[t] log_prob[n, t, d], t = labels[n, d]; 0 with
 *     weight 0 where t is ignore_index
 *   none: loss; sum: the sum; mean: the sum / the weights' sum (NaN when it
 *     is 0, as ONNX's reference divides).
 * terms: |weights[t]| (|x_t| + |max| + |log sum|) per sample (summed over
 * the samples for sum and mean, divided by the weights' sum for mean); k:
 * the classes plus the samples summed. */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"
#include "independent.h"

typedef struct loss_job {
    const cf_array *x, *labels, *weights;
    const int64_t *ignore;
    int64_t N, C, D; /* D: the positions d... of one sample's image */
} loss_job;

static double xv(const loss_job *j, int64_t n, int64_t c, int64_t d)
{
    return j->x->f[(n * j->C + c) * j->D + d];
}

/* One sample's row: log_prob into lp (may be NULL), the loss's log_prob at
 * t and its magnitude. */
static void ce_row(const loss_job *j, int64_t n, int64_t d, cf_array *lp, int64_t t, double *at,
                   double *mag)
{
    double m = -INFINITY;
    bool nan = false;
    for (int64_t c = 0; c < j->C; c++) {
        double v = xv(j, n, c, d);
        nan = nan || isnan(v);
        m = v > m ? v : m;
    }
    long double s = 0;
    for (int64_t c = 0; c < j->C; c++)
        s += expl((long double)xv(j, n, c, d) - (long double)m);
    long double ls = logl(s);
    bool dead = nan || isinf(m);
    for (int64_t c = 0; c < j->C; c++) {
        double v = dead ? NAN : (double)((long double)xv(j, n, c, d) - (long double)m - ls);
        if (lp)
            lp->f[(n * j->C + c) * j->D + d] = v;
        if (c == t) {
            *at = v;
            *mag = fabs(xv(j, n, c, d)) + (isfinite(m) ? fabs(m) : 0) + fabs((double)ls);
        }
    }
}

static bool run(bool ce, const loss_job *j, bp_loss_reduction red, cf_array *want, cf_array *lp,
                double **terms, int64_t *k)
{
    if (terms)
        *terms = NULL;
    if (k)
        *k = (ce ? j->C : 1) + (red == BP_LOSS_NONE ? 0 : j->N * j->D);
    bool ok = red == BP_LOSS_NONE
                  ? cf_array_init(want, j->x->dt, j->labels->rank, j->labels->shape)
                  : cf_array_init(want, j->x->dt, 0, NULL);
    if (!ok || (lp && !cf_array_init(lp, j->x->dt, j->x->rank, j->x->shape)))
        return false;
    double *mag = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof *mag);
    if (!mag)
        return false;
    long double sum = 0, wsum = 0;
    double msum = 0;
    for (int64_t n = 0; n < j->N; n++)
        for (int64_t d = 0; d < j->D; d++) {
            const int64_t s = n * j->D + d, t = j->labels->i[s];
            const bool ignored = j->ignore && t == *j->ignore;
            double at = 0, m = 0;
            if (ce && (lp || !ignored))
                ce_row(j, n, d, lp, ignored ? -1 : t, &at, &m);
            else if (!ignored) {
                at = xv(j, n, t, d);
                m = fabs(at);
            }
            double w = ignored ? 0.0 : j->weights ? j->weights->f[t] : 1.0;
            double l = ignored ? 0.0 : -w * at;
            if (red == BP_LOSS_NONE) {
                want->f[s] = l;
                mag[s] = fabs(w) * m;
            }
            sum += (long double)l;
            wsum += (long double)w;
            msum += fabs(w) * m;
        }
    if (red != BP_LOSS_NONE) {
        want->f[0] = (double)(red == BP_LOSS_SUM ? sum : sum / wsum);
        mag[0] = red == BP_LOSS_SUM ? msum : msum / fabs((double)wsum);
    }
    if (terms)
        *terms = mag;
    else
        free(mag);
    return true;
}

static void job_of(const cf_array *x, const cf_array *labels, const cf_array *weights,
                   const int64_t *ignore, loss_job *j)
{
    j->x = x;
    j->labels = labels;
    j->weights = weights;
    j->ignore = ignore;
    j->N = x->shape[0];
    j->C = x->shape[1];
    j->D = cf_numel(x->rank - 2, x->shape + 2);
}

bool cf_oracle_nll_loss(const cf_array *log_prob, const cf_array *target,
                        const cf_array *weights, bp_loss_reduction reduction,
                        const int64_t *ignore_index, cf_array *want, double **terms, int64_t *k)
{
    loss_job j;
    job_of(log_prob, target, weights, ignore_index, &j);
    return run(false, &j, reduction, want, NULL, terms, k);
}

bool cf_oracle_softmax_cross_entropy_loss(const cf_array *scores, const cf_array *labels,
                                          const cf_array *weights, bp_loss_reduction reduction,
                                          const int64_t *ignore_index, cf_array *want,
                                          cf_array *log_prob, double **terms, int64_t *k)
{
    loss_job j;
    job_of(scores, labels, weights, ignore_index, &j);
    return run(true, &j, reduction, want, log_prob, terms, k);
}

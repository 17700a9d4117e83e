/* Fused f32 softmax cross-entropy over dense (N, C) scores, threaded over
 * samples. One pass reads a row once: its max (eight lanes, NaN-aware), then
 * sum exp(x - max) in double over bpc_expf_core's f32 exponentials, then
 *     loss = -weight[t] (x[t] - max - log(sum))    in double,
 *     log_prob[i] = (x[i] - max) - log(sum)         in f32, when asked.
 * Arguments below BPC_EXPF_LO are clamped there: each such term adds at most
 * e^-86.5 (~3e-38) to a sum that is at least 1. A row whose max is not
 * finite (a NaN, a +inf, or all -inf) is NaN throughout, as in the
 * reference. The per-sample losses are then reduced as the reference does
 * (bpk_loss_finish). */
#include <math.h>
#include <stdlib.h>

#include "blas_cpu_nn.h"
#include "vmath.h"

bool bpc_loss_fused_takes(bp_op op, const bp_view *x, const bp_view *log_prob)
{
    if (op != BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS || x->dtype != BP_F32 || x->rank != 2)
        return false;
    const int64_t C = x->shape[1];
    bool rows_dense = (x->strides[1] == 1 || C == 1) && (x->strides[0] == C || x->shape[0] == 1);
    if (log_prob)
        rows_dense = rows_dense && (log_prob->strides[1] == 1 || C == 1) &&
                     (log_prob->strides[0] == C || log_prob->shape[0] == 1);
    return rows_dense && C >= 1;
}

/* The max of a row and whether it is finite (no NaN, not +-inf): vmath.h's
 * loop, in this file's clones. */
BPC_CLONES static bool row_max(const float *restrict x, int64_t n, float *out)
{
    return bpc_row_max_f32(x, n, out);
}

/* sum exp(x - m) in double over f32 exponentials, eight lanes. */
BPC_CLONES static double exp_sum(const float *restrict x, int64_t n, float m)
{
    double part[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) {
            float v = x[i + j] - m;
            v = v < BPC_EXPF_LO ? BPC_EXPF_LO : v;
            part[j] += (double)bpc_expf_core(v);
        }
    for (; i < n; i++) {
        float v = x[i] - m;
        v = v < BPC_EXPF_LO ? BPC_EXPF_LO : v;
        part[i & 7] += (double)bpc_expf_core(v);
    }
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

BPC_CLONES static void shift(const float *restrict x, float *restrict o, int64_t n, float m,
                             float ls)
{
    for (int64_t i = 0; i < n; i++)
        o[i] = (x[i] - m) - ls;
}

typedef struct loss_job {
    const bpk_loss_args *a;
    const float *x;
    float *lp;
    const bp_view *labels, *weights;
    double *per, *wsum;
} loss_job;

static bp_status rows(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    const loss_job *j = args;
    const int64_t C = j->a->classes;
    for (int64_t r = lo; r < hi; r++) {
        const float *x = j->x + r * C;
        int64_t t;
        bpk_block_load_i64(j->labels, r, 1, &t);
        const bool ignored = j->a->has_ignore && t == j->a->ignore;
        float m;
        bool finite = row_max(x, C, &m);
        double ls = finite ? log(exp_sum(x, C, m)) : NAN;
        if (j->lp)
            shift(x, j->lp + r * C, C, finite ? m : NAN, (float)ls);
        double w = 0, l = 0;
        if (!ignored) {
            if (j->weights)
                bpk_block_load(j->weights, t, 1, &w);
            else
                w = 1.0;
            l = -w * ((double)x[t] - (double)m - ls);
        }
        j->per[r] = l;
        j->wsum[r] = w;
    }
    (void)d;
    return BP_OK;
}

bp_status bpc_loss_fused(bpc_dev *dev, bp_op op, const bp_op_params *p, const bp_view *x,
                         const bp_view *labels, const bp_view *weights, const bp_view *loss,
                         const bp_view *log_prob)
{
    bpk_loss_args a;
    bpk_loss_args_of(op, p, x, &a);
    int64_t value, bad = bpk_loss_bad_label(&a, labels, 0, a.rows, &value);
    if (bad >= 0) /* the core checked them: only a broken caller gets here */
        return bpk_fail(dev, BP_ERR_INDEX, "%s: label %lld (flat position %lld) is not a class",
                        bp_op_name(op), (long long)value, (long long)bad);
    const int64_t n = a.rows > 0 ? a.rows : 1;
    double *per = malloc((size_t)n * 2 * sizeof *per);
    if (!per)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld samples",
                        bp_op_name(op), (long long)a.rows);
    loss_job j = {&a, (const float *)bpk_base(x), log_prob ? (float *)bpk_base(log_prob) : NULL,
                  labels, weights, per, per + n};
    bp_status st = a.rows > 0 ? bpc_ranges(dev, bp_op_name(op), a.rows,
                                           a.rows * a.classes * BPC_HEAVY / 2, rows, &j)
                              : BP_OK;
    if (st == BP_OK)
        bpk_loss_finish(p, loss, a.rows, per, per + n);
    free(per);
    return st;
}

/* SOFTMAX / LOG_SOFTMAX over the last axis, computed in double as in the
 * binary backend, rows split across threads. Each row is loaded once into a
 * per-thread double buffer: max, then the sum of exp(x - max) (kept in the
 * buffer for SOFTMAX), then the scaled store. f16/bf16/f32 rows use the
 * vectorised exp (vmath.h, ~1e-14 relative, far below their precision);
 * f64 rows keep libm's exp so f64 results stay as accurate as the reference.
 * A row of all -inf gives NaN everywhere, as NumPy. */
#include <math.h>
#include <stdlib.h>

#include "blas_cpu.h"
#include "vmath.h"

static void load_row(bp_dtype dt, const char *p, int64_t stride, int64_t n, double *out)
{
    switch (dt) {
    case BP_F16:
        for (int64_t i = 0; i < n; i++)
            out[i] = bp_f16_to_f32(((const uint16_t *)p)[i * stride]);
        break;
    case BP_BF16:
        for (int64_t i = 0; i < n; i++)
            out[i] = bp_bf16_to_f32(((const uint16_t *)p)[i * stride]);
        break;
    case BP_F32:
        if (stride == 1)
            for (int64_t i = 0; i < n; i++)
                out[i] = ((const float *)p)[i];
        else
            for (int64_t i = 0; i < n; i++)
                out[i] = ((const float *)p)[i * stride];
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            out[i] = ((const double *)p)[i * stride];
        break;
    }
}

/* out[i] = (buf[i] - sub) * mul + add: LOG_SOFTMAX subtracts the max first,
 * since x + (-max - log(sum)) would cancel catastrophically for large x */
static void store_row(bp_dtype dt, char *p, int64_t stride, int64_t n, const double *buf,
                      double sub, double mul, double add)
{
    switch (dt) {
    case BP_F16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)p)[i * stride] = bp_f64_to_f16((buf[i] - sub) * mul + add);
        break;
    case BP_BF16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)p)[i * stride] = bp_f64_to_bf16((buf[i] - sub) * mul + add);
        break;
    case BP_F32:
        if (stride == 1)
            for (int64_t i = 0; i < n; i++)
                ((float *)p)[i] = (float)((buf[i] - sub) * mul + add);
        else
            for (int64_t i = 0; i < n; i++)
                ((float *)p)[i * stride] = (float)((buf[i] - sub) * mul + add);
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            ((double *)p)[i * stride] = (buf[i] - sub) * mul + add;
        break;
    }
}

static void softmax_row(bp_op op, bool fast, double *buf, int64_t n, double *sub, double *mul,
                        double *add)
{
    double m = -INFINITY;
    bool nan = false;
    for (int64_t i = 0; i < n; i++)
        m = buf[i] > m ? buf[i] : m, nan |= buf[i] != buf[i];
    if (nan)
        m = NAN; /* poison the whole row, as the naive formula would */
    double s = 0;
    if (op == BP_OP_SOFTMAX) {
        if (fast && m == m && m != -INFINITY && m != INFINITY)
            s = bpc_vexp_shift_sum(buf, n, m);
        else
            for (int64_t i = 0; i < n; i++)
                s += buf[i] = exp(buf[i] - m);
        *sub = 0.0, *mul = 1.0 / s, *add = 0.0;
    } else {
        for (int64_t i = 0; i < n; i++)
            s += exp(buf[i] - m);
        *sub = m, *mul = 1.0, *add = -log(s);
    }
}

typedef struct sm_job {
    bp_op op;
    const bp_view *x, *out;
    bp_view rows[2];     /* the leading axes of x and out */
    int64_t n, sx, so;   /* row length and strides along it */
    _Atomic bool oom;    /* a thread could not get its row buffer */
} sm_job;

static void softmax_rows(void *p, int64_t lo, int64_t hi)
{
    const sm_job *j = p;
    sm_job *jm = p;
    /* one buffer per slice, i.e. per thread (not indexed by thread number:
     * an entry called inside the caller's own parallel region runs inline) */
    double *buf = malloc((size_t)j->n * sizeof *buf);
    if (!buf) {
        jm->oom = true;
        return;
    }
    size_t xsz = bp_dtype_size(j->x->dtype), osz = bp_dtype_size(j->out->dtype);
    bool fast = j->x->dtype != BP_F64;
    bpc_cursor it;
    int64_t pos[2], len;
    bpc_cursor_init(&it, 2, (const bp_view *[]){&j->rows[0], &j->rows[1]}, lo, hi);
    while (bpc_cursor_next(&it, pos, &len))
        for (int64_t i = 0; i < len; i++) {
            double sub, mul, add;
            load_row(j->x->dtype,
                     bpc_base(j->x) + (pos[0] + i * it.it.inner_stride[0]) * (int64_t)xsz, j->sx,
                     j->n, buf);
            softmax_row(j->op, fast, buf, j->n, &sub, &mul, &add);
            store_row(j->out->dtype,
                      bpc_base(j->out) + (pos[1] + i * it.it.inner_stride[1]) * (int64_t)osz,
                      j->so, j->n, buf, sub, mul, add);
        }
    free(buf);
}

bp_status bpc_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    const bpc_dev *d = dev;
    if (bpc_numel(x) == 0)
        return BP_OK;
    int32_t r = x->rank;
    sm_job j = {.op = op, .x = x, .out = out};
    j.n = r > 0 ? x->shape[r - 1] : 1;
    j.sx = r > 0 ? x->strides[r - 1] : 0;
    j.so = r > 0 ? out->strides[r - 1] : 0;
    j.rows[0] = *x, j.rows[1] = *out;
    for (int v = 0; v < 2; v++)
        j.rows[v].rank = r > 0 ? r - 1 : 0;
    int64_t nrows = bpc_numel(&j.rows[0]);
    int64_t grain = BPC_GRAIN_HEAVY / j.n;
    if (grain < 1)
        grain = 1;
    j.oom = false;
    bpc_parallel(d, nrows, grain, softmax_rows, &j);
    if (j.oom)
        return bpc_fail(dev, BP_ERR_OUT_OF_MEMORY, "softmax: no memory for a row of %lld",
                        (long long)j.n);
    return BP_OK;
}

/* GEMM (ONNX Gemm): out = alpha a b + beta c, a (M, K) and b (K, N) as
 * views (a transpose is only strides: the matmul kernel packs any strides,
 * so nothing is copied), c broadcast to (M, N) or absent.
 *
 * As BLAS does (and cuBLAS, and PyTorch's addmm): with beta == 0 (or no c)
 * c is not read, so its NaN and infinities do not propagate; with alpha == 0
 * a and b are not read. The product is bpk_matmul's (f16/bf16 accumulate in
 * f32 and are not rounded to 16 bits before the scaling: they are packed to
 * f32 here first); alpha p + beta c is then formed in double and rounded
 * once. Integers: the product wraps to the dtype as matmul's does; integral
 * alpha and beta scale it in wrapping integer arithmetic, others in double
 * with the cast rules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

static bool integral(double v) { return v == trunc(v) && fabs(v) < 9.2e18; }

/* A dense row-major f32 copy of a 2-D view (f16/bf16 widened exactly). */
static void widen(const bp_view *v, float *dst, bp_view *dv)
{
    int64_t r = v->shape[0], c = v->shape[1];
    size_t es = bp_dtype_size(v->dtype);
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++)
            dst[i * c + j] = (float)bp_elem_load_f64(
                v->dtype, bpk_base(v) + (i * v->strides[0] + j * v->strides[1]) * (int64_t)es);
    *dv = *v;
    dv->buffer = dst;
    dv->offset = 0;
    dv->dtype = BP_F32;
    dv->strides[0] = c;
    dv->strides[1] = 1;
}

/* out = alpha p + beta c per element, p read from prod (dtype pd, dense
 * M x N, or none when alpha is 0), c from cv (or none). */
static void combine(const bp_view *out, const void *prod, bp_dtype pd, const bp_view *cv,
                    double alpha, double beta)
{
    bp_dtype dt = out->dtype;
    int64_t m = out->shape[0], n = out->shape[1];
    size_t es = bp_dtype_size(dt), ps = bp_dtype_size(pd);
    bool ints = !bp_dtype_is_float(dt) && integral(alpha) && integral(beta);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            char *o = bpk_base(out) + (i * out->strides[0] + j * out->strides[1]) * (int64_t)es;
            const char *pp = prod ? (const char *)prod + (i * n + j) * (int64_t)ps : NULL;
            const char *cp =
                cv ? bpk_base(cv) + (i * cv->strides[0] + j * cv->strides[1]) * (int64_t)es : NULL;
            if (ints) {
                uint64_t acc = pp ? (uint64_t)(int64_t)alpha * (uint64_t)bp_elem_load_i64(pd, pp) : 0;
                if (cp)
                    acc += (uint64_t)(int64_t)beta * (uint64_t)bp_elem_load_i64(dt, cp);
                bp_elem_store_i64(dt, o, bpk_wrap_int(dt, acc));
            } else {
                double acc = pp ? alpha * bp_elem_load_f64(pd, pp) : 0.0;
                if (cp)
                    acc += beta * bp_elem_load_f64(dt, cp);
                bp_elem_store_f64(dt, o, acc);
            }
        }
}

bp_status bpk_op_gemm(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)op, (void)n_in, (void)n_out;
    const bp_view *a = in[0], *b = in[1], *out = out_v[0];
    const double alpha = p->f[0], beta = p->f[1];
    const bp_view *c = in[2] && beta != 0 ? in[2] : NULL;
    int64_t m = out->shape[0], n = out->shape[1], k = a->shape[1];
    if (m == 0 || n == 0)
        return BP_OK;
    bp_dtype dt = out->dtype;
    bool half = dt == BP_F16 || dt == BP_BF16;
    if (alpha == 0) {
        combine(out, NULL, dt, c, alpha, beta);
        return BP_OK;
    }
    if (!half) { /* the product into out, then scaled in place */
        bp_status st = bpk_matmul(dev, a, b, out);
        if (st != BP_OK)
            return st;
        if (alpha == 1 && !c)
            return BP_OK;
        /* out is dense (the core's fresh output): read p from it as we go */
        combine(out, bpk_base(out), dt, c, alpha, beta);
        return BP_OK;
    }
    size_t cells = (size_t)(m * k + k * n + m * n);
    float *scratch = malloc((cells ? cells : 1) * sizeof *scratch);
    if (!scratch)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY,
                        "gemm: no memory for %zu f32 scratch elements (M=%lld N=%lld K=%lld)",
                        cells, (long long)m, (long long)n, (long long)k);
    bp_view wa, wb, wp = *out;
    widen(a, scratch, &wa);
    widen(b, scratch + m * k, &wb);
    wp.buffer = scratch + m * k + k * n;
    wp.offset = 0;
    wp.dtype = BP_F32;
    wp.strides[0] = n;
    wp.strides[1] = 1;
    bp_status st = bpk_matmul(dev, &wa, &wb, &wp);
    if (st == BP_OK)
        combine(out, wp.buffer, BP_F32, c, alpha, beta);
    free(scratch);
    return st;
}

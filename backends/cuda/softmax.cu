/* SOFTMAX / LOG_SOFTMAX over the last axis, as the binary backend's
 * (backends/binary/softmax.c): in double, the max first (a NaN poisons the
 * row), then the sum of exp(x - max), then the scaled store. One thread per
 * row. */
#include <math.h>
#include <string.h>

#include "bpcu.h"
#include "elem.h"

typedef struct bpcu_sm_args {
    int64_t rows, n, sx, so;
    int32_t lead;                  /* leading (row) axes */
    int64_t shape[BP_MAX_RANK], xstr[BP_MAX_RANK], ostr[BP_MAX_RANK];
} bpcu_sm_args;

template <class S>
__global__ void bpcu_k_softmax(bpcu_sm_args a, bool log_, const S *x, S *out)
{
    typedef bpcu_ft<S> F;
    BPCU_FOR(r, a.rows) {
        int64_t xo = 0, oo = 0, q = r;
        for (int32_t k = a.lead - 1; k >= 0; k--) {
            int64_t c = q % a.shape[k];
            q /= a.shape[k];
            xo += c * a.xstr[k];
            oo += c * a.ostr[k];
        }
        const S *px = x + xo;
        S *po = out + oo;
        double m = -INFINITY, s = 0;
        bool nan = false;
        for (int64_t i = 0; i < a.n; i++) {
            double e = (double)F::ld(px[i * a.sx]);
            m = e > m ? e : m;
            nan |= e != e;
        }
        if (nan)
            m = NAN; /* poison the row, as the naive formula would */
        for (int64_t i = 0; i < a.n; i++)
            s += exp((double)F::ld(px[i * a.sx]) - m);
        if (log_) {
            double add = -log(s);
            for (int64_t i = 0; i < a.n; i++)
                po[i * a.so] = F::std_(((double)F::ld(px[i * a.sx]) - m) * 1.0 + add);
        } else {
            double mul = 1.0 / s;
            for (int64_t i = 0; i < a.n; i++)
                po[i * a.so] = F::std_((exp((double)F::ld(px[i * a.sx]) - m) - 0.0) * mul + 0.0);
        }
    }
}

bp_status bpcu_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    cudaError_t e = cudaSuccess;
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_scope in(d, bp_op_name(op));
    if (in.status != BP_OK)
        return in.status;
    if (bpcu_numel(x) == 0)
        return BP_OK;
    bpcu_sm_args a;
    memset(&a, 0, sizeof a);
    int32_t r = x->rank;
    a.n = r > 0 ? x->shape[r - 1] : 1;
    a.sx = r > 0 ? x->strides[r - 1] : 0;
    a.so = r > 0 ? out->strides[r - 1] : 0;
    a.lead = r > 0 ? r - 1 : 0;
    a.rows = 1;
    for (int32_t k = 0; k < a.lead; k++) {
        a.shape[k] = x->shape[k], a.xstr[k] = x->strides[k], a.ostr[k] = out->strides[k];
        a.rows *= x->shape[k];
    }
    unsigned nb = bpcu_blocks(a.rows);
    bool log_ = op == BP_OP_LOG_SOFTMAX;
    BPCU_DISPATCH_FLOAT(x->dtype, (e = bpcu_launch(d->stream, nb, BPCU_THREADS, 0, bpcu_k_softmax<T>,
                                      a, log_, (const T *)bpcu_ptr(x), (T *)bpcu_ptr(out))));
    if (!bp_dtype_is_float(x->dtype))
        return bpcu_fail(d, BP_ERR_UNSUPPORTED_OP, "cuda: %s not implemented for %s",
                         bp_op_name(op), bp_dtype_name(x->dtype));
    return bpcu_launched(d, e, "softmax kernel");
}

/* Rows of a float dtype widened to double, for the kernels that compute a
 * whole row at once (reductions, softmax). */
#include "kernels.h"

void bpk_load_row_f64(bp_dtype dt, const char *p, int64_t stride, int64_t n, double *out)
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
        for (int64_t i = 0; i < n; i++)
            out[i] = ((const float *)p)[i * stride];
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            out[i] = ((const double *)p)[i * stride];
        break;
    }
}

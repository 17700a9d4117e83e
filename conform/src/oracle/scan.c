/* cumsum and cumprod along one axis (ONNX CumSum): floats accumulated in
 * double, in order (ops.h: the plugins do the same), integers exactly,
 * wrapping. *scale: per element the magnitude of its terms (sum |x| so far
 * for cumsum, |result| for cumprod); *k: the axis' extent. */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"
#include "independent.h"

static bool scan(bool prod, const cf_array *x, int32_t axis, bool exclusive, bool reverse,
                 cf_array *want, double **scale, int64_t *k)
{
    if (axis < 0)
        axis += x->rank;
    int64_t n = x->shape[axis], inner = 1;
    for (int32_t d = axis + 1; d < x->rank; d++)
        inner *= x->shape[d];
    if (scale)
        *scale = NULL;
    if (k)
        *k = n;
    if (!cf_array_init(want, x->dt, x->rank, x->shape))
        return false;
    double *sc = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof *sc);
    if (!sc)
        return false;
    int64_t outer = n && inner ? x->n / (n * inner) : 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double f = prod ? 1 : 0, mag = 0;
            uint64_t u = prod ? 1 : 0;
            for (int64_t s = 0; s < n; s++) {
                int64_t j = reverse ? n - 1 - s : s;
                int64_t at = (o * n + j) * inner + in;
                if (exclusive) { /* the running value before this element */
                    if (want->f)
                        want->f[at] = f;
                    else
                        want->i[at] = cf_wrap(x->dt, (int64_t)u);
                    sc[at] = prod ? fabs(f) : mag;
                }
                if (x->f) {
                    f = prod ? f * x->f[at] : f + x->f[at];
                    mag += fabs(x->f[at]);
                } else {
                    u = prod ? u * (uint64_t)x->i[at] : u + (uint64_t)x->i[at];
                }
                if (!exclusive) {
                    if (want->f)
                        want->f[at] = f;
                    else
                        want->i[at] = cf_wrap(x->dt, (int64_t)u);
                    sc[at] = prod ? fabs(f) : mag;
                }
            }
        }
    if (scale)
        *scale = sc;
    else
        free(sc);
    return true;
}

bool cf_oracle_cumsum(const cf_array *x, int32_t axis, bool exclusive, bool reverse,
                      cf_array *want, double **scale, int64_t *k)
{
    return scan(false, x, axis, exclusive, reverse, want, scale, k);
}

bool cf_oracle_cumprod(const cf_array *x, int32_t axis, bool exclusive, bool reverse,
                       cf_array *want, double **scale, int64_t *k)
{
    return scan(true, x, axis, exclusive, reverse, want, scale, k);
}

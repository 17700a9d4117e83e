/* The multiversioned hot loops (see vmath.h). */
#include "vmath.h"

BPC_CLONES void bpc_vexp_f32(const float *restrict x, float *restrict o, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        o[i] = (float)bpc_exp_d((double)x[i]);
}

BPC_CLONES double bpc_vexp_shift_sum(double *restrict buf, int64_t n, double m)
{
    for (int64_t i = 0; i < n; i++)
        buf[i] = bpc_exp_d(buf[i] - m);
    return bpc_vsum_f64(buf, n);
}

/* Eight interleaved partial sums: vectorisable without reassociation flags
 * (each lane keeps its own order), and a little more accurate than one. */
#define SUM_BODY(p, n)                                                           \
    double part[8] = {0};                                                        \
    int64_t i = 0;                                                               \
    for (; i + 8 <= n; i += 8)                                                   \
        for (int j = 0; j < 8; j++)                                              \
            part[j] += (double)p[i + j];                                         \
    for (; i < n; i++)                                                           \
        part[i & 7] += (double)p[i];                                             \
    return ((part[0] + part[1]) + (part[2] + part[3])) +                         \
           ((part[4] + part[5]) + (part[6] + part[7]))

BPC_CLONES double bpc_vsum_f32(const float *restrict p, int64_t n) { SUM_BODY(p, n); }
BPC_CLONES double bpc_vsum_f64(const double *restrict p, int64_t n) { SUM_BODY(p, n); }

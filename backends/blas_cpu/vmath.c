/* The multiversioned hot loops (see vmath.h).
 *
 * Accuracy of bpc_expf, measured over every float in [BPC_EXPF_LO,
 * BPC_EXPF_HI] against the reference (float)exp((double)x): see the record
 * in docs/performance.md. */
#include <math.h>
#include <stdbool.h>

#include "vmath.h"

#define CHUNK 1024

/* A chunk runs branch-free over every lane (out-of-range inputs clamped), and
 * only a chunk holding an out-of-range input is then patched element by
 * element with the reference formula. */
BPC_CLONES void bpc_vexp_f32(const float *restrict x, float *restrict o, int64_t n)
{
    for (int64_t c = 0; c < n; c += CHUNK) {
        int64_t len = n - c < CHUNK ? n - c : CHUNK;
        const float *xc = x + c;
        float *oc = o + c;
        int ok = 1;
        for (int64_t i = 0; i < len; i++) {
            float v = xc[i];
            ok &= bpc_expf_in_range(v);
            v = v < BPC_EXPF_LO ? BPC_EXPF_LO : v;
            v = v > BPC_EXPF_HI ? BPC_EXPF_HI : v;
            oc[i] = bpc_expf_core(v);
        }
        if (!ok)
            for (int64_t i = 0; i < len; i++)
                if (!bpc_expf_in_range(xc[i]))
                    oc[i] = (float)exp((double)xc[i]);
    }
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

/* max over a row, NaN-aware: false if the max is not finite */
static inline bool row_max(const float *restrict x, int64_t n, float *m_out)
{
    float m[8];
    int nan = 0;
    for (int j = 0; j < 8; j++)
        m[j] = -INFINITY;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) {
            float v = x[i + j];
            nan |= v != v;
            m[j] = v > m[j] ? v : m[j];
        }
    for (; i < n; i++) {
        nan |= x[i] != x[i];
        m[0] = x[i] > m[0] ? x[i] : m[0];
    }
    float r = m[0];
    for (int j = 1; j < 8; j++)
        r = m[j] > r ? m[j] : r;
    *m_out = r;
    return !nan && r > -INFINITY && r < INFINITY;
}

BPC_CLONES bool bpc_softmax_row_f32(const float *restrict x, float *restrict o, int64_t n)
{
    float m;
    if (!row_max(x, n, &m))
        return false;
    double part[8] = {0};
    for (int64_t c = 0; c < n; c += CHUNK) {
        int64_t len = n - c < CHUNK ? n - c : CHUNK;
        const float *xc = x + c;
        float *oc = o + c;
        int ok = 1;
        for (int64_t i = 0; i < len; i++) {
            float v = xc[i] - m; /* <= 0 */
            ok &= v >= BPC_EXPF_LO;
            v = v < BPC_EXPF_LO ? BPC_EXPF_LO : v;
            oc[i] = bpc_expf_core(v);
        }
        if (!ok)
            for (int64_t i = 0; i < len; i++)
                if (!(xc[i] - m >= BPC_EXPF_LO))
                    oc[i] = (float)exp((double)(xc[i] - m));
        int64_t i = 0;
        for (; i + 8 <= len; i += 8)
            for (int j = 0; j < 8; j++)
                part[j] += (double)oc[i + j];
        for (; i < len; i++)
            part[i & 7] += (double)oc[i];
    }
    double s = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    float inv = (float)(1.0 / s);
    for (int64_t i = 0; i < n; i++)
        o[i] *= inv;
    return true;
}

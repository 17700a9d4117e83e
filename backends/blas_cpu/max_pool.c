/* f32 max_pool without the indices output, over dense (n, c) planes,
 * threaded over planes. The reference (binary nn_pool.c) walks each output's
 * window tap by tap, decoding every tap's position with divisions and
 * converting through double; here each output line of y starts at -inf and
 * every tap of the window is applied to the whole line at once, over the
 * range of outputs whose tap lies inside x (conv's tap ranges), so the inner
 * loop is a plain strided max. Taps reach each output in the reference's
 * kernel order and the comparison is its own (a larger value, or a first
 * NaN, replaces the best; ties keep the first), so the bits are the
 * reference's: the max of floats is exact. */
#include <math.h>

#include "blas_cpu_nn.h"
#include "vmath.h"

static bool dense(const bp_view *v)
{
    int64_t expect = 1;
    for (int32_t k = v->rank - 1; k >= 0; k--) {
        if (v->shape[k] != 1 && v->strides[k] != expect)
            return false;
        expect *= v->shape[k];
    }
    return true;
}

bool bpc_max_pool_takes(const bp_view *x, const bp_view *y, const bp_view *indices)
{
    return x->dtype == BP_F32 && !indices && dense(x) && dense(y);
}

/* y[o] = max(y[o], x[o st + off]) for o in [lo, hi). */
BPC_CLONES static void tap_line(float *restrict y, const float *restrict x, int64_t lo,
                                int64_t hi, int64_t st, int64_t off)
{
    for (int64_t o = lo; o < hi; o++) {
        const float v = x[o * st + off], b = y[o];
        y[o] = (v > b || (v != v && b == b)) ? v : b;
    }
}

/* The outputs o in [*lo, *hi) whose tap at o st + off falls in [0, in). */
static void tap_range(int64_t in, int64_t out, int64_t st, int64_t off, int64_t *lo, int64_t *hi)
{
    const int64_t a = bpk_div_ceil(-off, st), b = bpk_div_floor(in - 1 - off, st) + 1;
    *lo = a > 0 ? a : 0;
    *hi = b < out ? b : out;
    if (*hi < *lo)
        *hi = *lo;
}

typedef struct max_job {
    bpk_window g;
    const float *x;
    float *y;
} max_job;

static bp_status planes(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    (void)d;
    const max_job *j = args;
    const bpk_window *g = &j->g;
    const int64_t nin = bpk_window_numel(g->in), nout = bpk_window_numel(g->out);
    int64_t lo2[64], hi2[64]; /* the line's range per k2; a kernel wider than 64: computed */
    const bool table = g->k[2] <= 64;
    for (int64_t k2 = 0; table && k2 < g->k[2]; k2++)
        tap_range(g->in[2], g->out[2], g->st[2], k2 * g->dl[2] - g->pb[2], &lo2[k2], &hi2[k2]);
    for (int64_t u = lo; u < hi; u++) {
        const float *xp = j->x + u * nin;
        float *yp = j->y + u * nout;
        for (int64_t i = 0; i < nout; i++)
            yp[i] = -INFINITY;
        for (int64_t o0 = 0; o0 < g->out[0]; o0++)
            for (int64_t k0 = 0; k0 < g->k[0]; k0++) {
                const int64_t i0 = o0 * g->st[0] + k0 * g->dl[0] - g->pb[0];
                if (i0 < 0 || i0 >= g->in[0])
                    continue;
                for (int64_t o1 = 0; o1 < g->out[1]; o1++) {
                    float *yl = yp + (o0 * g->out[1] + o1) * g->out[2];
                    for (int64_t k1 = 0; k1 < g->k[1]; k1++) {
                        const int64_t i1 = o1 * g->st[1] + k1 * g->dl[1] - g->pb[1];
                        if (i1 < 0 || i1 >= g->in[1])
                            continue;
                        const float *xl = xp + (i0 * g->in[1] + i1) * g->in[2];
                        for (int64_t k2 = 0; k2 < g->k[2]; k2++) {
                            const int64_t off = k2 * g->dl[2] - g->pb[2];
                            int64_t a, b;
                            if (table)
                                a = lo2[k2], b = hi2[k2];
                            else
                                tap_range(g->in[2], g->out[2], g->st[2], off, &a, &b);
                            tap_line(yl, xl, a, b, g->st[2], off);
                        }
                    }
                }
            }
    }
    return BP_OK;
}

bp_status bpc_max_pool(bpc_dev *dev, const bp_op_params *p, const bp_view *x, const bp_view *y)
{
    max_job j = {.x = (const float *)bpk_base(x), .y = (float *)bpk_base(y)};
    bpk_window_of(p, x, y, NULL, &j.g);
    const int64_t n = x->shape[0] * x->shape[1];
    const int64_t nout = bpk_window_numel(j.g.out), nk = bpk_window_numel(j.g.k);
    if (n == 0 || nout == 0)
        return BP_OK;
    return bpc_ranges(dev, "max_pool", n, n * nout * (nk > 0 ? nk : 1), planes, &j);
}

/* Fused f32 norms. layer_norm and rms_norm over dense rows, threaded over rows.
 * One row is read from memory once: its sum (and, layer_norm, the sum of
 * squared deviations from the mean) accumulate in double in eight lanes
 * while the row stays in L1/L2, then y = (x - mean) (inv_std scale) + bias
 * is written in f32. scale and bias are the same for every row (they
 * broadcast to the normalised axes only), so they are loaded once per call.
 * Against the reference (every step in double, rounded once): the
 * statistics agree to ~1e-16 relative; y differs by the f32 roundings of
 * x - mean, of inv_std scale and of the product and sum (a few ulp of
 * |x inv_std scale| + |mean inv_std scale| + |bias|).
 *
 * batch_norm and instance_norm the same way over dense (n, c) planes,
 * threaded over planes: the channel's factor r scale (instance_norm: r from
 * the plane's own mean and variance, accumulated as above) and bias in
 * double, y = (x - mean) (r scale) + bias per element in double and rounded
 * once, so y is within an ulp of the reference's. */
#include <math.h>
#include <stdlib.h>

#include "blas_cpu_nn.h"
#include "vmath.h"

bool bpc_norm_fused_takes(const bp_view *x, const bp_view *y, int64_t L)
{
    if (x->dtype != BP_F32 || L < 8)
        return false;
    int64_t expect = 1; /* x and y dense and row-major */
    for (int32_t k = x->rank - 1; k >= 0; k--) {
        if (x->shape[k] != 1 && (x->strides[k] != expect || y->strides[k] != expect))
            return false;
        expect *= x->shape[k];
    }
    return true;
}

/* sum (x - m)^2 in double, eight lanes. */
BPC_CLONES static double sq_dev(const float *restrict x, int64_t n, double m)
{
    double part[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) {
            double d = (double)x[i + j] - m;
            part[j] += d * d;
        }
    for (; i < n; i++) {
        double d = (double)x[i] - m;
        part[i & 7] += d * d;
    }
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

/* sum x^2 in double, eight lanes. */
BPC_CLONES static double sq_sum(const float *restrict x, int64_t n)
{
    return sq_dev(x, n, 0.0);
}

/* y = (x - m) f[i] + b[i] (b NULL: none). */
BPC_CLONES static void apply(const float *restrict x, float *restrict y, int64_t n, float m,
                             const float *restrict f, const float *restrict b)
{
    if (b)
        for (int64_t i = 0; i < n; i++)
            y[i] = (x[i] - m) * f[i] + b[i];
    else
        for (int64_t i = 0; i < n; i++)
            y[i] = (x[i] - m) * f[i];
}

typedef struct norm_job {
    bool rms;
    double eps;
    int64_t L;
    const float *x;
    float *y;
    const float *scale, *bias; /* one row each; scale NULL: ones */
    const bp_view *mean, *inv_std;
} norm_job;

static bp_status rows(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    const norm_job *j = args;
    const int64_t L = j->L;
    float *f = malloc((size_t)L * sizeof *f);
    if (!f)
        return bpk_fail(d, BP_ERR_OUT_OF_MEMORY, "%s: out of memory for a row",
                        j->rms ? "rms_norm" : "layer_norm");
    for (int64_t r = lo; r < hi; r++) {
        const float *x = j->x + r * L;
        double m = 0, q;
        if (j->rms) {
            q = sq_sum(x, L);
        } else {
            m = d->vm->sum_f32(x, L) / (double)L;
            q = sq_dev(x, L, m);
        }
        const double inv = 1.0 / sqrt(q / (double)L + j->eps);
        const float fi = (float)inv;
        for (int64_t i = 0; i < L; i++)
            f[i] = j->scale ? fi * j->scale[i] : fi;
        apply(x, j->y + r * L, L, (float)m, f, j->bias);
        if (j->mean)
            bpk_block_store(j->mean, r, 1, &m);
        if (j->inv_std)
            bpk_block_store(j->inv_std, r, 1, &inv);
    }
    free(f);
    return BP_OK;
}

/* Row 0 of a broadcast operand as L contiguous floats. */
static float *one_row(const bp_view *v, int64_t L)
{
    double *d = malloc((size_t)L * sizeof *d);
    float *f = d ? malloc((size_t)L * sizeof *f) : NULL;
    if (f) {
        bpk_block_load(v, 0, L, d);
        for (int64_t i = 0; i < L; i++)
            f[i] = (float)d[i];
    }
    free(d);
    return f;
}

bp_status bpc_norm_fused(bpc_dev *dev, bool rms, const bp_op_params *p, const bp_view *x,
                         const bp_view *scale, const bp_view *bias, const bp_view *y,
                         const bp_view *mean, const bp_view *inv_std)
{
    int64_t len = 1;
    for (int32_t k = x->rank - (int32_t)p->i[0]; k < x->rank; k++)
        len *= x->shape[k];
    const int64_t n = bpk_numel(x) / len;
    norm_job j = {.rms = rms, .eps = p->f[0], .L = len, .x = (const float *)bpk_base(x),
                  .y = (float *)bpk_base(y), .mean = mean, .inv_std = inv_std};
    float *s = scale ? one_row(scale, len) : NULL, *b = bias ? one_row(bias, len) : NULL;
    bp_status st = BP_OK;
    if ((scale && !s) || (bias && !b))
        st = bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "%s: out of memory for scale and bias",
                      rms ? "rms_norm" : "layer_norm");
    j.scale = s;
    j.bias = b;
    if (st == BP_OK && n > 0)
        st = bpc_ranges(dev, rms ? "rms_norm" : "layer_norm", n, n * len * 4, rows, &j);
    free(s);
    free(b);
    return st;
}

/* ---- batch_norm and instance_norm: one (n, c) plane at a time ------------------- */

/* y = ((x - m) rs + b) in double, rounded once to f32: the reference's
 * formula with r s taken as one factor (so its special values: r = inf
 * still gives NaN where x = m). */
BPC_CLONES static void apply_plane(const float *restrict x, float *restrict y, int64_t n, double m,
                                   double rs, double b)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)(((double)x[i] - m) * rs + b);
}

typedef struct plane_job {
    bool instance;
    double eps;
    int64_t C, S;                        /* channels, elements per plane */
    const float *x;
    float *y;
    const double *scale, *bias, *mean, *var; /* C each; mean and var: batch_norm only */
} plane_job;

static bp_status planes(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    const plane_job *j = args;
    const int64_t S = j->S;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t c = u % j->C;
        const float *x = j->x + u * S;
        double m, r;
        if (j->instance) {
            m = d->vm->sum_f32(x, S) / (double)S;
            r = 1.0 / sqrt(sq_dev(x, S, m) / (double)S + j->eps);
        } else {
            m = j->mean[c];
            r = 1.0 / sqrt(j->var[c] + j->eps);
        }
        apply_plane(x, j->y + u * S, S, m, r * j->scale[c], j->bias[c]);
    }
    return BP_OK;
}

bool bpc_planes_fused_takes(const bp_view *x, const bp_view *y)
{
    if (x->rank < 3)
        return false;
    int64_t S = 1;
    for (int32_t k = 2; k < x->rank; k++)
        S *= x->shape[k];
    return bpc_norm_fused_takes(x, y, S);
}

bp_status bpc_planes_fused(bpc_dev *dev, bool instance, const bp_op_params *p,
                           const bp_view *const *in, const bp_view *y)
{
    const bp_view *x = in[0];
    const int64_t C = x->shape[1], n = x->shape[0] * C;
    const int nparams = instance ? 2 : 4;
    plane_job j = {.instance = instance, .eps = p->f[0], .C = C, .S = bpk_numel(x) / (n ? n : 1),
                   .x = (const float *)bpk_base(x), .y = (float *)bpk_base(y)};
    if (n == 0 || j.S == 0)
        return BP_OK;
    double *buf = malloc((size_t)(nparams * C) * sizeof *buf);
    if (!buf)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "%s: out of memory for the channels' "
                        "parameters", instance ? "instance_norm" : "batch_norm");
    for (int k = 0; k < nparams; k++)
        bpk_block_load(in[1 + k], 0, C, buf + k * C);
    j.scale = buf;
    j.bias = buf + C;
    if (!instance) {
        j.mean = buf + 2 * C;
        j.var = buf + 3 * C;
    }
    bp_status st = bpc_ranges(dev, instance ? "instance_norm" : "batch_norm", n,
                              n * j.S * (instance ? 4 : 2), planes, &j);
    free(buf);
    return st;
}

/* ---- lrn ------------------------------------------------------------------------ */

/* f32 LRN over dense (n, c, positions...), threaded over blocks of
 * LRN_BLOCK positions of one image: for each channel, its window's squares
 * are summed across the block's positions at once (vector lanes, in double,
 * the window's channels in the reference's order), and the divisor
 * (bias + alpha / size * sum)^beta is exp(beta log(base)) by vmath's double
 * cores (< 1 ulp of double each) where base is a positive normal double and
 * |beta log(base)| <= 700, else libm's pow as in the reference. The
 * reference (nn_lrn.c) walks one position's channels at a time, a stride
 * of the whole plane apart, with a libm pow per element: 24% of Inception
 * v1's time. Against it: the same sums, the divisor within a few ulp of
 * double, so y is the reference's float except where the exact quotient
 * lies that close to a rounding boundary (one ulp then). */
#define LRN_BLOCK 256

typedef struct lrn_job {
    const float *x;
    float *y;
    int64_t C, S, blocks, before, after;
    double alpha_size, beta, bias;
} lrn_job;

BPC_CLONES static bp_status lrn_blocks(bpc_dev *d, const void *args, int64_t lo, int64_t hi)
{
    (void)d;
    const lrn_job *j = args;
    double acc[LRN_BLOCK], div[LRN_BLOCK];
    double slow[LRN_BLOCK]; /* 1: a base libm's pow must take */
    for (int64_t u = lo; u < hi; u++) {
        const int64_t n = u / j->blocks, s0 = (u % j->blocks) * LRN_BLOCK;
        const int64_t len = j->S - s0 < LRN_BLOCK ? j->S - s0 : LRN_BLOCK;
        const float *xn = j->x + n * j->C * j->S + s0;
        float *yn = j->y + n * j->C * j->S + s0;
        for (int64_t c = 0; c < j->C; c++) {
            const int64_t a = c - j->before > 0 ? c - j->before : 0;
            const int64_t b = c + j->after < j->C ? c + j->after : j->C - 1;
            for (int64_t i = 0; i < len; i++)
                acc[i] = 0;
            for (int64_t k = a; k <= b; k++) {
                const float *xk = xn + k * j->S;
                for (int64_t i = 0; i < len; i++)
                    acc[i] += (double)xk[i] * (double)xk[i];
            }
            double n_slow = 0; /* kept in double lanes: the loop vectorises */
            for (int64_t i = 0; i < len; i++) {
                const double base = j->bias + j->alpha_size * acc[i];
                const bool normal = base >= 0x1p-1022 && base <= 0x1p1023;
                const double t = j->beta * bpc_log_core(normal ? base : 1.0);
                const bool fast = normal && t >= -700.0 && t <= 700.0;
                div[i] = bpc_exp_core(fast ? t : 0.0);
                acc[i] = base;
                slow[i] = fast ? 0.0 : 1.0;
                n_slow += slow[i];
            }
            if (n_slow > 0)
                for (int64_t i = 0; i < len; i++)
                    if (slow[i] != 0.0)
                        div[i] = pow(acc[i], j->beta);
            const float *xc = xn + c * j->S;
            float *yc = yn + c * j->S;
            for (int64_t i = 0; i < len; i++)
                yc[i] = (float)((double)xc[i] / div[i]);
        }
    }
    return BP_OK;
}

bp_status bpc_lrn(bpc_dev *dev, const bp_op_params *p, const bp_view *x, const bp_view *y)
{
    const int64_t size = p->i[0];
    lrn_job j = {.x = (const float *)bpk_base(x), .y = (float *)bpk_base(y), .C = x->shape[1],
                 .S = 1, .before = (size - 1) / 2, .after = size - 1 - (size - 1) / 2,
                 .alpha_size = p->f[0] / (double)size, .beta = p->f[1], .bias = p->f[2]};
    for (int32_t k = 2; k < x->rank; k++)
        j.S *= x->shape[k];
    if (x->shape[0] == 0 || j.C == 0 || j.S == 0)
        return BP_OK;
    j.blocks = (j.S + LRN_BLOCK - 1) / LRN_BLOCK;
    const int64_t window = size < j.C ? size : j.C;
    return bpc_ranges(dev, "lrn", x->shape[0] * j.blocks,
                      x->shape[0] * j.C * j.S * (window + BPC_HEAVY), lrn_blocks, &j);
}

/* Max and average pooling, one (n, c) plane at a time: each output's window
 * is walked tap by tap (kernel order, row-major), skipping the taps that fall
 * in the padding.
 *   max_pool: the first maximum wins ties, a NaN wins over any number (as
 *     bp_max); its flat index into x is n C D + c D + the tap's spatial
 *     index (row-major, or column-major with storage_order 1). A window with
 *     no tap inside x gives -inf (integers: the dtype's minimum), index -1.
 *     Integers are compared exactly in int64.
 *   average_pool: the sum in double over the taps inside x, divided by their
 *     count, or with count_include_pad by the taps inside x and its padding
 *     (a ceil_mode window that runs past the end padding counts only up to
 *     it). */
#include <math.h>
#include <stdlib.h>

#include "kernels_nn.h"

/* Tap k of output o on every axis: its spatial position in i[], whether it
 * lies inside x (and inside x and its padding, *padded). */
static bool tap_at(const bpk_window *g, const int64_t *o, int64_t k, int64_t *i, bool *padded)
{
    const int64_t kk[3] = {k / (g->k[1] * g->k[2]), k / g->k[2] % g->k[1], k % g->k[2]};
    bool in = true, pad = true;
    for (int j = 0; j < 3; j++) {
        i[j] = o[j] * g->st[j] + kk[j] * g->dl[j] - g->pb[j];
        in = in && i[j] >= 0 && i[j] < g->in[j];
        pad = pad && i[j] >= -g->pb[j] && i[j] < g->in[j] + g->pe[j];
    }
    *padded = pad;
    return in;
}

static int64_t spatial_index(const bpk_window *g, const int64_t *i, bool column_major)
{
    if (column_major)
        return (i[2] * g->in[1] + i[1]) * g->in[0] + i[0];
    return (i[0] * g->in[1] + i[1]) * g->in[2] + i[2];
}

typedef struct pool_buf {
    double *xf, *yf;
    int64_t *xi, *yi, *idx;
    bp_dtype dt; /* x's: integers compare in its order (bpk_int_order) */
} pool_buf;

static void pool_buf_free(pool_buf *b)
{
    free(b->xf);
    free(b->yf);
    free(b->xi);
    free(b->yi);
    free(b->idx);
}

static bp_status pool_buf_new(void *dev, const char *op, bool ints, bool idx, int64_t nin,
                              int64_t nout, pool_buf *b)
{
    size_t in = (size_t)(nin > 0 ? nin : 1), out = (size_t)(nout > 0 ? nout : 1);
    *b = (pool_buf){.xf = NULL, .dt = BP_BOOL};
    bool ok = true;
    if (ints) {
        ok = (b->xi = malloc(in * sizeof(int64_t))) && (b->yi = malloc(out * sizeof(int64_t)));
    } else {
        ok = (b->xf = malloc(in * sizeof(double))) && (b->yf = malloc(out * sizeof(double)));
    }
    if (ok && idx)
        ok = (b->idx = malloc(out * sizeof(int64_t))) != NULL;
    if (ok)
        return BP_OK;
    pool_buf_free(b);
    return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "%s: out of memory for one plane", op);
}

static int64_t int_min(bp_dtype dt)
{
    switch (dt) {
    case BP_U8: case BP_U16: case BP_U32: case BP_U64: return 0;
    case BP_I8: return INT8_MIN;
    case BP_I16: return INT16_MIN;
    case BP_I32: return INT32_MIN;
    default: return INT64_MIN;
    }
}

/* Whether plane element a beats the best so far, b (-1: none yet). */
static bool beats(const pool_buf *pb, int64_t a, int64_t b)
{
    if (b < 0)
        return true;
    if (pb->xi)
        return bpk_int_order(pb->dt, pb->xi[a]) > bpk_int_order(pb->dt, pb->xi[b]);
    double va = pb->xf[a], vb = pb->xf[b];
    return va > vb || (isnan(va) && !isnan(vb));
}

static void max_plane(const bpk_window *g, bp_dtype dt, bool column_major, pool_buf *b,
                      int64_t plane_base)
{
    const int64_t nout = bpk_window_numel(g->out), nk = bpk_window_numel(g->k);
    for (int64_t oi = 0; oi < nout; oi++) {
        const int64_t o[3] = {oi / (g->out[1] * g->out[2]), oi / g->out[2] % g->out[1],
                              oi % g->out[2]};
        int64_t best = -1, best_i[3] = {0, 0, 0};
        for (int64_t k = 0; k < nk; k++) {
            int64_t i[3];
            bool padded;
            if (!tap_at(g, o, k, i, &padded))
                continue;
            int64_t at = (i[0] * g->in[1] + i[1]) * g->in[2] + i[2];
            if (beats(b, at, best)) {
                best = at;
                best_i[0] = i[0], best_i[1] = i[1], best_i[2] = i[2];
            }
        }
        if (b->xi)
            b->yi[oi] = best >= 0 ? b->xi[best] : int_min(dt);
        else
            b->yf[oi] = best >= 0 ? b->xf[best] : -INFINITY;
        if (b->idx)
            b->idx[oi] = best >= 0 ? plane_base + spatial_index(g, best_i, column_major) : -1;
    }
}

bp_status bpk_max_pool_planes(void *dev, const bp_op_params *p, const bp_view *x,
                              const bp_view *y, const bp_view *indices, int64_t lo, int64_t hi)
{
    bpk_window g;
    bpk_window_of(p, x, y, NULL, &g);
    const int64_t C = x->shape[1], nin = bpk_window_numel(g.in);
    const int64_t nout = bpk_window_numel(g.out);
    bool ints = !(x->dtype == BP_F16 || x->dtype == BP_BF16 || x->dtype == BP_F32 ||
                  x->dtype == BP_F64);
    if (hi <= lo || nout == 0)
        return BP_OK;
    pool_buf b;
    BPK_TRY(pool_buf_new(dev, "max_pool", ints, indices != NULL, nin, nout, &b));
    b.dt = x->dtype;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t n = u / C, c = u % C;
        if (ints)
            bpk_plane_load_i64(x, n, c, b.xi);
        else
            bpk_plane_load(x, n, c, b.xf);
        max_plane(&g, x->dtype, p->i[15] == 1, &b, u * nin);
        if (ints)
            bpk_plane_store_i64(y, n, c, b.yi);
        else
            bpk_plane_store(y, n, c, b.yf);
        if (indices)
            bpk_plane_store_i64(indices, n, c, b.idx);
    }
    pool_buf_free(&b);
    return BP_OK;
}

bp_status bpk_average_pool_planes(void *dev, const bp_op_params *p, const bp_view *x,
                                  const bp_view *y, int64_t lo, int64_t hi)
{
    bpk_window g;
    bpk_window_of(p, x, y, NULL, &g);
    const int64_t C = x->shape[1], nin = bpk_window_numel(g.in);
    const int64_t nout = bpk_window_numel(g.out), nk = bpk_window_numel(g.k);
    const bool include_pad = p->i[15] != 0;
    if (hi <= lo || nout == 0)
        return BP_OK;
    pool_buf b;
    BPK_TRY(pool_buf_new(dev, "average_pool", false, false, nin, nout, &b));
    for (int64_t u = lo; u < hi; u++) {
        const int64_t n = u / C, c = u % C;
        bpk_plane_load(x, n, c, b.xf);
        for (int64_t oi = 0; oi < nout; oi++) {
            const int64_t o[3] = {oi / (g.out[1] * g.out[2]), oi / g.out[2] % g.out[1],
                                  oi % g.out[2]};
            double sum = 0;
            int64_t inside = 0, padded_count = 0;
            for (int64_t k = 0; k < nk; k++) {
                int64_t i[3];
                bool padded;
                if (tap_at(&g, o, k, i, &padded)) {
                    sum += b.xf[(i[0] * g.in[1] + i[1]) * g.in[2] + i[2]];
                    inside++;
                }
                padded_count += padded;
            }
            b.yf[oi] = sum / (double)(include_pad ? padded_count : inside);
        }
        bpk_plane_store(y, n, c, b.yf);
    }
    pool_buf_free(&b);
    return BP_OK;
}

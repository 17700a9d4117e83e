/* SCATTER_ELEMENTS and SCATTER_ND (ONNX ScatterElements, ScatterND): a copy
 * of x with the updates combined in at their indices by p->i[1], a
 * bp_scatter_reduction. The updates are applied in row-major order of the
 * indices, so with NONE the last of duplicate indices wins. ADD and MUL on
 * floats accumulate in double per element and round once at the end (as the
 * reductions do); MAX and MIN propagate NaN (bp_maximum's rule); integers
 * wrap. The core has checked the indices (devsim checks them itself). */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

typedef struct sink {
    bp_dtype dt;
    size_t es;
    int red;        /* bp_scatter_reduction */
    char *out;      /* out's element 0; out is dense, so offsets are flat indices */
    double *acc;    /* floats with ADD/MUL: the running values in double */
} sink;

/* Combine the update at u into out's element o. */
static void apply(const sink *s, int64_t o, const char *u)
{
    char *dst = s->out + o * (int64_t)s->es;
    if (s->red == BP_SCATTER_NONE) {
        memcpy(dst, u, s->es);
        return;
    }
    if (s->acc) {
        double v = bp_elem_load_f64(s->dt, u);
        s->acc[o] = s->red == BP_SCATTER_ADD ? s->acc[o] + v : s->acc[o] * v;
        return;
    }
    if (bp_dtype_is_float(s->dt)) { /* MAX, MIN */
        double c = bp_elem_load_f64(s->dt, dst), v = bp_elem_load_f64(s->dt, u);
        bool take = c == c && (v != v || (s->red == BP_SCATTER_MAX ? v > c : v < c));
        if (take)
            memcpy(dst, u, s->es);
        return;
    }
    int64_t c = bp_elem_load_i64(s->dt, dst), v = bp_elem_load_i64(s->dt, u);
    switch (s->red) {
    case BP_SCATTER_ADD: c = bpk_wrap_int(s->dt, (uint64_t)c + (uint64_t)v); break;
    case BP_SCATTER_MUL: c = bpk_wrap_int(s->dt, (uint64_t)c * (uint64_t)v); break;
    case BP_SCATTER_MAX: c = bpk_int_order(s->dt, v) > bpk_int_order(s->dt, c) ? v : c; break;
    default: c = bpk_int_order(s->dt, v) < bpk_int_order(s->dt, c) ? v : c; break;
    }
    bp_elem_store_i64(s->dt, dst, c);
}

/* Advance a row-major position over shape; false past the end. */
static bool next_pos(int32_t rank, const int64_t *shape, int64_t *idx)
{
    for (int32_t k = rank - 1; k >= 0; k--) {
        if (++idx[k] < shape[k])
            return true;
        idx[k] = 0;
    }
    return false;
}

static void scatter_elements(const sink *s, const bp_view *x, const bp_view *ind,
                             const bp_view *upd, const bp_view *out, int32_t axis)
{
    int64_t idx[BP_MAX_RANK] = {0}, tgt[BP_MAX_RANK];
    if (bpk_numel(ind) == 0)
        return;
    do {
        const char *ip = bpk_base(ind) + bpk_offset_of(ind, idx) * (int64_t)bp_dtype_size(ind->dtype);
        int64_t v = ind->dtype == BP_I32 ? *(const int32_t *)ip : *(const int64_t *)ip;
        if (v < 0)
            v += x->shape[axis];
        memcpy(tgt, idx, sizeof tgt);
        tgt[axis] = v;
        apply(s, bpk_offset_of(out, tgt), bpk_base(upd) + bpk_offset_of(upd, idx) * (int64_t)s->es);
    } while (next_pos(ind->rank, ind->shape, idx));
}

static void scatter_nd(const sink *s, const bp_view *x, const bp_view *ind, const bp_view *upd,
                       const bp_view *out)
{
    int32_t q = ind->rank - 1, m = (int32_t)ind->shape[q], nt = x->rank - m;
    int64_t lead = 1, slice = 1;
    for (int32_t k = 0; k < q; k++)
        lead *= ind->shape[k];
    for (int32_t k = m; k < x->rank; k++)
        slice *= x->shape[k];
    if (lead == 0 || slice == 0)
        return;
    int64_t pos[BP_MAX_RANK] = {0}, tgt[BP_MAX_RANK], uidx[BP_MAX_RANK];
    size_t is = bp_dtype_size(ind->dtype);
    do {
        int64_t at = 0;
        for (int32_t k = 0; k < q; k++)
            at += pos[k] * ind->strides[k];
        for (int32_t j = 0; j < m; j++) {
            const char *ip = bpk_base(ind) + (at + j * ind->strides[q]) * (int64_t)is;
            int64_t v = ind->dtype == BP_I32 ? *(const int32_t *)ip : *(const int64_t *)ip;
            tgt[j] = v < 0 ? v + x->shape[j] : v;
        }
        for (int32_t k = 0; k < q; k++)
            uidx[k] = pos[k];
        int64_t sl[BP_MAX_RANK] = {0};
        do {
            for (int32_t k = 0; k < nt; k++)
                tgt[m + k] = uidx[q + k] = sl[k];
            apply(s, bpk_offset_of(out, tgt),
                  bpk_base(upd) + bpk_offset_of(upd, uidx) * (int64_t)s->es);
        } while (next_pos(nt, x->shape + m, sl));
    } while (next_pos(q, ind->shape, pos));
}

/* out = x, element by element (out is dense; x any strides). */
static void copy_x(const bp_view *x, const bp_view *out, size_t es)
{
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){out, x});
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++)
            memcpy(bpk_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)es,
                   bpk_base(x) + (pos[1] + i * it.inner_stride[1]) * (int64_t)es, es);
}

bp_status bpk_op_scatter(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                         const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)n_in, (void)n_out;
    const bp_view *x = in[0], *ind = in[1], *upd = in[2], *out = out_v[0];
    int64_t n = bpk_numel(out);
    if (n == 0)
        return BP_OK;
    sink s = {.dt = x->dtype, .es = bp_dtype_size(x->dtype), .red = (int)p->i[1],
              .out = bpk_base(out)};
    copy_x(x, out, s.es);
    bool accumulate = bp_dtype_is_float(s.dt) &&
                      (s.red == BP_SCATTER_ADD || s.red == BP_SCATTER_MUL);
    if (accumulate) {
        s.acc = malloc((size_t)n * sizeof *s.acc);
        if (!s.acc)
            return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY,
                            "%s: no memory for %lld accumulators", bp_op_name(op), (long long)n);
        for (int64_t i = 0; i < n; i++)
            s.acc[i] = bp_elem_load_f64(s.dt, s.out + i * (int64_t)s.es);
    }
    if (op == BP_OP_SCATTER_ELEMENTS)
        scatter_elements(&s, x, ind, upd, out, (int32_t)p->i[0]);
    else
        scatter_nd(&s, x, ind, upd, out);
    if (accumulate) {
        for (int64_t i = 0; i < n; i++)
            bp_elem_store_f64(s.dt, s.out + i * (int64_t)s.es, s.acc[i]);
        free(s.acc);
    }
    return BP_OK;
}

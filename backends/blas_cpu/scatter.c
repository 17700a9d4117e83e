/* SCATTER_ELEMENTS with reduction ADD (gather's gradient), threaded.
 *
 * Updates that differ off the scatter axis land in different lines of out,
 * so with the axis moved last in every view, the leading axes of indices
 * can be cut across threads: each line's updates are added by one thread,
 * in order. Floats other than f64 accumulate in a double copy of out and
 * are rounded once at the end, f64 and integers (wrapping) in out itself:
 * the reference's arithmetic (backends/binary/op_scatter.c), so the same
 * bits, with its per-element index arithmetic replaced by strided rows. */
#include <stdlib.h>
#include <string.h>

#include "op.h"

typedef struct add_job {
    bp_dtype dt;       /* of x, updates, out */
    int64_t dim;       /* x's extent along the axis */
    const bp_view *acc; /* where the sums go: out itself, or the double copy */
} add_job;

static inline int64_t wrap_to(bp_dtype dt, uint64_t u)
{
    int bits = (int)bp_dtype_size(dt) * 8;
    if (dt == BP_U8)
        return (int64_t)(u & 0xffu);
    uint64_t sign = (uint64_t)1 << (bits - 1);
    u &= bits == 64 ? ~(uint64_t)0 : (sign << 1) - 1;
    return (u & sign) ? (int64_t)(u - sign) - (int64_t)(sign - 1) - 1 : (int64_t)u;
}

/* One line: n updates into the line of acc at ap, the indices at ip. */
#define ADD_LINE_FN(NAME, IT, UT, AT, ADD)                                                   \
    static void NAME(const IT *ip, int64_t si, const UT *up, int64_t su, AT *ap, int64_t sa,  \
                     int64_t n, int64_t dim)                                                 \
    {                                                                                        \
        for (int64_t t = 0; t < n; t++) {                                                    \
            int64_t v = ip[t * si];                                                          \
            v += v < 0 ? dim : 0;                                                            \
            ap[v * sa] = ADD(ap[v * sa], up[t * su]);                                        \
        }                                                                                    \
    }
#define PLUS(a, b) ((a) + (b))
#define WRAP_PLUS(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
ADD_LINE_FN(line_f32_i32, int32_t, float, double, PLUS)
ADD_LINE_FN(line_f32_i64, int64_t, float, double, PLUS)
ADD_LINE_FN(line_f64_i32, int32_t, double, double, PLUS)
ADD_LINE_FN(line_f64_i64, int64_t, double, double, PLUS)
ADD_LINE_FN(line_i64_i32, int32_t, int64_t, int64_t, WRAP_PLUS)
ADD_LINE_FN(line_i64_i64, int64_t, int64_t, int64_t, WRAP_PLUS)
#define WRAP32_PLUS(a, b) ((int32_t)wrap_to(BP_I32, (uint64_t)(int64_t)(a) + (uint64_t)(int64_t)(b)))
ADD_LINE_FN(line_i32_i32, int32_t, int32_t, int32_t, WRAP32_PLUS)
ADD_LINE_FN(line_i32_i64, int64_t, int32_t, int32_t, WRAP32_PLUS)

/* The other dtypes, element by element through the cast helpers: f16/bf16
 * into the double copy, small integers wrapping in out. */
static void line_any(const add_job *j, const bp_view *ind, const char *ip, int64_t si,
                     const char *up, int64_t su, char *ap, int64_t sa, int64_t n)
{
    size_t es = bp_dtype_size(j->dt), is = bp_dtype_size(ind->dtype);
    bool wide = j->acc->dtype == BP_F64;
    for (int64_t t = 0; t < n; t++) {
        int64_t v = bp_elem_load_i64(ind->dtype, ip + t * si * (int64_t)is);
        v += v < 0 ? j->dim : 0;
        const char *u = up + t * su * (int64_t)es;
        if (wide) {
            ((double *)ap)[v * sa] += bp_elem_load_f64(j->dt, u);
        } else {
            char *a = ap + v * sa * (int64_t)es;
            uint64_t sum = (uint64_t)bp_elem_load_i64(j->dt, a) + (uint64_t)bp_elem_load_i64(j->dt, u);
            bp_elem_store_i64(j->dt, a, wrap_to(j->dt, sum));
        }
    }
}

/* One slab: views with the axis last (indices, updates, acc). */
static bp_status add_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo, int64_t hi)
{
    (void)d, (void)lo, (void)hi;
    const add_job *j = args;
    const bp_view *ind = &v[0], *upd = &v[1], *acc = &v[2];
    int32_t last = ind->rank - 1;
    int64_t n = ind->shape[last], si = ind->strides[last], su = upd->strides[last],
            sa = acc->strides[last];
    bool i32 = ind->dtype == BP_I32;
    size_t is = bp_dtype_size(ind->dtype), es = bp_dtype_size(j->dt),
           as = bp_dtype_size(acc->dtype);
    bpb_rows r;
    bpb_rows_init(&r, 3, (const bp_view *[]){ind, upd, acc});
    while (bpb_rows_next(&r)) {
        const char *ip = bpb_base(ind) + r.at[0] * (int64_t)is;
        const char *up = bpb_base(upd) + r.at[1] * (int64_t)es;
        char *ap = bpb_base(acc) + r.at[2] * (int64_t)as;
        switch (j->dt) {
        case BP_F32:
            if (i32)
                line_f32_i32((const int32_t *)ip, si, (const float *)up, su, (double *)ap, sa, n, j->dim);
            else
                line_f32_i64((const int64_t *)ip, si, (const float *)up, su, (double *)ap, sa, n, j->dim);
            break;
        case BP_F64:
            if (i32)
                line_f64_i32((const int32_t *)ip, si, (const double *)up, su, (double *)ap, sa, n, j->dim);
            else
                line_f64_i64((const int64_t *)ip, si, (const double *)up, su, (double *)ap, sa, n, j->dim);
            break;
        case BP_I64:
            if (i32)
                line_i64_i32((const int32_t *)ip, si, (const int64_t *)up, su, (int64_t *)ap, sa, n, j->dim);
            else
                line_i64_i64((const int64_t *)ip, si, (const int64_t *)up, su, (int64_t *)ap, sa, n, j->dim);
            break;
        case BP_I32:
            if (i32)
                line_i32_i32((const int32_t *)ip, si, (const int32_t *)up, su, (int32_t *)ap, sa, n, j->dim);
            else
                line_i32_i64((const int64_t *)ip, si, (const int32_t *)up, su, (int32_t *)ap, sa, n, j->dim);
            break;
        default: line_any(j, ind, ip, si, up, su, ap, sa, n); break;
        }
    }
    return BP_OK;
}

/* ---- the double copy: in and out, in chunks across the pool ---------------- */

typedef enum conv_mode { WIDEN, NARROW, COPY } conv_mode;

typedef struct conv_job {
    bp_dtype dt;
    conv_mode mode;
    const char *src; /* WIDEN, COPY: x; NARROW: the double copy */
    char *dst;       /* WIDEN: the double copy; NARROW, COPY: out */
    int64_t n, chunks;
} conv_job;

static void conv_item(void *ctx, int64_t t)
{
    conv_job *c = ctx;
    int64_t lo = c->n * t / c->chunks, hi = c->n * (t + 1) / c->chunks;
    size_t es = bp_dtype_size(c->dt);
    const double *ds = (const double *)c->src;
    double *dd = (double *)c->dst;
    switch (c->mode) {
    case WIDEN:
        if (c->dt == BP_F32)
            for (int64_t i = lo; i < hi; i++)
                dd[i] = ((const float *)c->src)[i];
        else
            for (int64_t i = lo; i < hi; i++)
                dd[i] = bp_elem_load_f64(c->dt, c->src + i * (int64_t)es);
        break;
    case NARROW:
        if (c->dt == BP_F32)
            for (int64_t i = lo; i < hi; i++)
                ((float *)c->dst)[i] = (float)ds[i];
        else
            for (int64_t i = lo; i < hi; i++)
                bp_elem_store_f64(c->dt, c->dst + i * (int64_t)es, ds[i]);
        break;
    case COPY:
        memcpy(c->dst + lo * (int64_t)es, c->src + lo * (int64_t)es, (size_t)(hi - lo) * es);
        break;
    }
}

static void convert(bpc_dev *d, bp_dtype dt, conv_mode mode, const void *src, void *dst,
                    int64_t n)
{
    conv_job c = {.dt = dt, .mode = mode, .src = src, .dst = dst, .n = n};
    int team = bpc_team(d, n);
    c.chunks = bpc_slabs(team, n, n);
    bpc_pool_run(d->pool, team, c.chunks, conv_item, &c);
}

/* v with axis `axis` moved last. */
static bp_view axis_last(const bp_view *v, int32_t axis)
{
    bp_view w = *v;
    for (int32_t k = axis; k < v->rank - 1; k++) {
        w.shape[k] = v->shape[k + 1];
        w.strides[k] = v->strides[k + 1];
    }
    w.shape[v->rank - 1] = v->shape[axis];
    w.strides[v->rank - 1] = v->strides[axis];
    return w;
}

bp_status bpc_scatter_add(bpc_dev *d, const bpc_op_call *call)
{
    const bp_view *x = call->in[0], *ind = call->in[1], *upd = call->in[2], *out = call->out[0];
    int32_t axis = (int32_t)call->p->i[0];
    int64_t n = bpb_numel(out);
    if (n == 0)
        return BP_OK;
    bp_dtype dt = out->dtype;
    /* x and out are the core's dense views (so flat indices match) */
    bool widen = bp_dtype_is_float(dt) && dt != BP_F64;
    double *copy = NULL;
    bp_view acc = *out;
    if (widen) {
        copy = malloc((size_t)n * sizeof *copy);
        if (!copy)
            return bpb_fail(d, BP_ERR_OUT_OF_MEMORY,
                            "scatter_elements: no memory for %lld accumulators", (long long)n);
        convert(d, dt, WIDEN, bpb_base(x), copy, n);
        acc.buffer = copy;
        acc.offset = 0;
        acc.dtype = BP_F64;
    } else {
        convert(d, dt, COPY, bpb_base(x), bpb_base(out), n);
    }
    bp_view vi = axis_last(ind, axis), vu = axis_last(upd, axis), va = axis_last(&acc, axis);
    add_job j = {.dt = dt, .dim = x->shape[axis], .acc = &va};
    bp_status st = bpb_numel(ind) == 0 ? BP_OK
                   : bpc_split(d, 3, (const bp_view *[]){&vi, &vu, &va}, ind->rank - 1, NULL,
                               false, bpb_numel(ind) * 4, add_slab, &j);
    if (widen) {
        if (st == BP_OK)
            convert(d, dt, NARROW, copy, bpb_base(out), n);
        free(copy);
    }
    return st;
}

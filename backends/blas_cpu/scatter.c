/* SCATTER_ELEMENTS with reduction ADD (gather's gradient), threaded.
 *
 * Updates that differ off the scatter axis land in different lines of out,
 * so cutting indices (and updates) along any other axis gives each thread
 * targets of its own; within its part a thread walks the indices in
 * row-major order, so duplicates are added in the reference's order and
 * memory is read as it lies (for the usual x (V, D) and indices (B, D)
 * along axis 0: each row of indices and updates is one contiguous run, cut
 * into column ranges across threads). Each update is one typed load of the
 * index, one of the update and an add at x's row: target = the update's
 * position with its axis coordinate replaced, found through a view of the
 * sums with stride 0 along the axis.
 *
 * Floats other than f64 accumulate in a double copy of x and are rounded
 * once at the end, f64 and integers (wrapping) in out itself: the
 * reference's arithmetic (backends/kernels/scatter.c), so the same bits. */
#include <stdlib.h>
#include <string.h>

#include "op.h"

/* ---- the updates ------------------------------------------------------------------- */

typedef struct add_job {
    bp_dtype dt;            /* of x, updates, out */
    int32_t axis, cut;      /* the scatter axis; the axis cut across threads */
    int64_t dim, step;      /* x's extent along the axis; the sums' stride there */
    bp_view ind, upd, acc;  /* acc: the sums with indices' shape, stride 0 on the axis */
    int64_t parts;
} add_job;

/* n updates of a run: indices at ip (stride si), updates at up (su), sums
 * at ap (sa, the run's own stride in the sums). */
#define ADD_RUN_FN(NAME, IT, UT, AT, ADD)                                                    \
    static void NAME(const add_job *j, const IT *ip, int64_t si, const UT *up, int64_t su,   \
                     AT *ap, int64_t sa, int64_t n)                                          \
    {                                                                                        \
        for (int64_t t = 0; t < n; t++) {                                                    \
            int64_t v = ip[t * si];                                                          \
            v += v < 0 ? j->dim : 0;                                                         \
            AT *dst = ap + t * sa + v * j->step;                                             \
            *dst = ADD(*dst, up[t * su]);                                                    \
        }                                                                                    \
    }
#define PLUS(a, b) ((a) + (b))
#define WRAP64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define WRAP32(a, b) ((int32_t)bpk_wrap_int(BP_I32, (uint64_t)(int64_t)(a) + (uint64_t)(int64_t)(b)))
ADD_RUN_FN(run_f32_i32, int32_t, float, double, PLUS)
ADD_RUN_FN(run_f32_i64, int64_t, float, double, PLUS)
ADD_RUN_FN(run_f64_i32, int32_t, double, double, PLUS)
ADD_RUN_FN(run_f64_i64, int64_t, double, double, PLUS)
ADD_RUN_FN(run_i64_i32, int32_t, int64_t, int64_t, WRAP64)
ADD_RUN_FN(run_i64_i64, int64_t, int64_t, int64_t, WRAP64)
ADD_RUN_FN(run_i32_i32, int32_t, int32_t, int32_t, WRAP32)
ADD_RUN_FN(run_i32_i64, int64_t, int32_t, int32_t, WRAP32)

/* The other dtypes, through the cast helpers: f16/bf16 into the double copy,
 * small integers wrapping in out. */
static void run_any(const add_job *j, const char *ip, int64_t si, const char *up, int64_t su,
                    char *ap, int64_t sa, int64_t n)
{
    size_t es = bp_dtype_size(j->dt), is = bp_dtype_size(j->ind.dtype);
    bool wide = j->acc.dtype == BP_F64;
    size_t as = wide ? sizeof(double) : es;
    for (int64_t t = 0; t < n; t++) {
        int64_t v = bp_elem_load_i64(j->ind.dtype, ip + t * si * (int64_t)is);
        v += v < 0 ? j->dim : 0;
        const char *u = up + t * su * (int64_t)es;
        char *a = ap + (t * sa + v * j->step) * (int64_t)as;
        if (wide) {
            *(double *)a += bp_elem_load_f64(j->dt, u);
        } else {
            uint64_t sum = (uint64_t)bp_elem_load_i64(j->dt, a) + (uint64_t)bp_elem_load_i64(j->dt, u);
            bp_elem_store_i64(j->dt, a, bpk_wrap_int(j->dt, sum));
        }
    }
}

static void add_run(const add_job *j, const char *ip, int64_t si, const char *up, int64_t su,
                    char *ap, int64_t sa, int64_t n)
{
    bool i32 = j->ind.dtype == BP_I32;
    switch (j->dt) {
#define CALL(F32, F64, UT, AT)                                                                 \
    if (i32)                                                                                   \
        F32(j, (const int32_t *)ip, si, (const UT *)up, su, (AT *)ap, sa, n);                  \
    else                                                                                       \
        F64(j, (const int64_t *)ip, si, (const UT *)up, su, (AT *)ap, sa, n);                  \
    return
    case BP_F32: CALL(run_f32_i32, run_f32_i64, float, double);
    case BP_F64: CALL(run_f64_i32, run_f64_i64, double, double);
    case BP_I64: CALL(run_i64_i32, run_i64_i64, int64_t, int64_t);
    case BP_I32: CALL(run_i32_i32, run_i32_i64, int32_t, int32_t);
#undef CALL
    default: run_any(j, ip, si, up, su, ap, sa, n); return;
    }
}

/* Part t of the cut axis: its updates in row-major order. */
static void add_part(void *ctx, int64_t t)
{
    const add_job *j = ctx;
    bp_view v[3] = {j->ind, j->upd, j->acc};
    int64_t extent = j->ind.shape[j->cut];
    int64_t lo = extent * t / j->parts, hi = extent * (t + 1) / j->parts;
    for (int k = 0; k < 3; k++) {
        v[k].offset += lo * v[k].strides[j->cut] * (int64_t)bp_dtype_size(v[k].dtype);
        v[k].shape[j->cut] = hi - lo;
    }
    size_t es[3] = {bp_dtype_size(v[0].dtype), bp_dtype_size(v[1].dtype),
                    bp_dtype_size(v[2].dtype)};
    bpk_iter it;
    int64_t pos[3];
    bpk_iter_init(&it, 3, (const bp_view *[]){&v[0], &v[1], &v[2]});
    while (bpk_iter_next(&it, pos))
        add_run(j, bpk_base(&v[0]) + pos[0] * (int64_t)es[0], it.inner_stride[0],
                bpk_base(&v[1]) + pos[1] * (int64_t)es[1], it.inner_stride[1],
                bpk_base(&v[2]) + pos[2] * (int64_t)es[2], it.inner_stride[2], it.inner);
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

/* The axis to cut: the longest one that is not the scatter axis (-1: none). */
static int32_t cut_axis(const bp_view *ind, int32_t axis)
{
    int32_t best = -1;
    for (int32_t k = 0; k < ind->rank; k++)
        if (k != axis && (best < 0 || ind->shape[k] > ind->shape[best]))
            best = k;
    return best;
}

bp_status bpc_scatter_add(bpc_dev *d, const bpc_op_call *call)
{
    const bp_view *x = call->in[0], *ind = call->in[1], *upd = call->in[2], *out = call->out[0];
    int32_t axis = (int32_t)call->p->i[0];
    int64_t n = bpk_numel(out);
    if (n == 0)
        return BP_OK;
    bp_dtype dt = out->dtype;
    /* x and out are the core's dense views: flat positions match */
    bool widen = bp_dtype_is_float(dt) && dt != BP_F64;
    double *copy = NULL;
    if (widen) {
        copy = malloc((size_t)n * sizeof *copy);
        if (!copy)
            return bpk_fail(d, BP_ERR_OUT_OF_MEMORY,
                            "scatter_elements: no memory for %lld accumulators", (long long)n);
        convert(d, dt, WIDEN, bpk_base(x), copy, n);
    } else {
        convert(d, dt, COPY, bpk_base(x), bpk_base(out), n);
    }
    add_job j = {.dt = dt, .axis = axis, .cut = cut_axis(ind, axis), .dim = x->shape[axis],
                 .step = out->strides[axis], .ind = *ind, .upd = *upd, .acc = *ind};
    /* the sums, walked with the indices' shape: out's strides (the copy is
     * dense like out), none along the axis, where the index decides */
    j.acc.buffer = widen ? (void *)copy : out->buffer;
    j.acc.offset = widen ? 0 : out->offset;
    j.acc.dtype = widen ? BP_F64 : dt;
    for (int32_t k = 0; k < ind->rank; k++)
        j.acc.strides[k] = k == axis ? 0 : out->strides[k];
    int64_t updates = bpk_numel(ind);
    int team = j.cut >= 0 ? bpc_team(d, updates * 2) : 1;
    if (j.cut < 0) /* rank 1: one part */
        j.cut = 0;
    /* Cutting the innermost axis (x (V, D) along axis 0: the columns) makes
     * each part a strided walk over every row: one contiguous run per thread
     * keeps those runs as long as they can be (measured: 8 parts of 8 columns
     * were slower on 2 threads than one part on 1). An outer axis is cut into
     * a few parts per thread, so that a descheduled thread holds up little. */
    bool inner = j.cut == ind->rank - 1;
    j.parts = team > 1 ? (inner ? 1 : 4) * (int64_t)team : 1;
    if (inner && ind->shape[j.cut] / j.parts < 16) /* runs too short to share */
        j.parts = 1, team = 1;
    if (j.parts > ind->shape[j.cut])
        j.parts = ind->shape[j.cut] > 0 ? ind->shape[j.cut] : 1;
    if (updates > 0)
        bpc_pool_run(d->pool, team, j.parts, add_part, &j);
    if (widen) {
        convert(d, dt, NARROW, copy, bpk_base(out), n);
        free(copy);
    }
    return BP_OK;
}

/* CUMSUM and CUMPROD: rows are independent, so the leading axes are cut
 * across threads (each row is scanned whole by one thread, in order, so the
 * sums are the reference's, bit for bit). Within a slab, when the scan runs
 * down columns (the core moved a leading axis last: the scanned axis is
 * strided and the rows lie side by side in memory), a block of up to
 * BLOCK rows advances together, each step reading and writing one
 * contiguous run, instead of one strided row at a time; f32/f64 only, with
 * one double accumulator per row as in the reference. Other slabs run the
 * reference kernel (typed per-row loops). */
#include "op.h"

#define BLOCK 512

typedef struct cols {
    bool prod, exclusive, reverse;
    int64_t n, sx, so; /* the scanned axis: extent, strides of x and out */
} cols;

#define COLUMN_RUN(T)                                                                        \
    do {                                                                                     \
        const T *xs = (const T *)xp;                                                         \
        T *os = (T *)op;                                                                     \
        for (int64_t j = 0; j < w; j++)                                                      \
            acc[j] = c->prod ? 1.0 : 0.0;                                                    \
        for (int64_t s = 0; s < c->n; s++) {                                                 \
            int64_t i = c->reverse ? c->n - 1 - s : s;                                       \
            const T *xr = xs + i * c->sx;                                                    \
            T *orow = os + i * c->so;                                                        \
            if (c->exclusive)                                                                \
                for (int64_t j = 0; j < w; j++)                                              \
                    orow[j] = (T)acc[j];                                                     \
            if (c->prod)                                                                     \
                for (int64_t j = 0; j < w; j++)                                              \
                    acc[j] *= (double)xr[j];                                                 \
            else                                                                             \
                for (int64_t j = 0; j < w; j++)                                              \
                    acc[j] += (double)xr[j];                                                 \
            if (!c->exclusive)                                                               \
                for (int64_t j = 0; j < w; j++)                                              \
                    orow[j] = (T)acc[j];                                                     \
        }                                                                                    \
    } while (0)

/* w adjacent rows starting at element xp / op (unit stride between rows). */
static void column_run(const cols *c, bp_dtype dt, const char *xp, char *op, int64_t w,
                       double *acc)
{
    if (dt == BP_F32)
        COLUMN_RUN(float);
    else
        COLUMN_RUN(double);
}

/* The rows of a slab whose leading axes end in a unit-stride run (in x and
 * out alike): false when they do not, and the slab goes to the reference. */
static bool by_columns(const bp_view *x, const bp_view *out, const cols *c)
{
    if ((x->dtype != BP_F32 && x->dtype != BP_F64) || x->rank < 2 || c->sx == 1)
        return false;
    bp_view lead[2] = {*x, *out};
    lead[0].rank = lead[1].rank = x->rank - 1;
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){&lead[0], &lead[1]});
    if (it.inner_stride[0] != 1 || it.inner_stride[1] != 1 || it.inner < 8)
        return false;
    size_t es = bp_dtype_size(x->dtype);
    double acc[BLOCK];
    while (bpk_iter_next(&it, pos))
        for (int64_t j = 0; j < it.inner; j += BLOCK)
            column_run(c, x->dtype, bpk_base(x) + (pos[0] + j) * (int64_t)es,
                       bpk_base(out) + (pos[1] + j) * (int64_t)es,
                       it.inner - j < BLOCK ? it.inner - j : BLOCK, acc);
    return true;
}

static bp_status scan_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo,
                           int64_t hi)
{
    (void)lo, (void)hi;
    const bpc_op_call *call = args;
    const bp_view *out = &v[0], *x = &v[1];
    int32_t last = x->rank - 1;
    cols c = {.prod = call->op == BP_OP_CUMPROD, .exclusive = call->p->i[0] != 0,
              .reverse = call->p->i[1] != 0, .n = x->shape[last], .sx = x->strides[last],
              .so = out->strides[last]};
    if (bpk_numel(out) == 0 || by_columns(x, out, &c))
        return BP_OK;
    return bpk_op(d, call->op, call->p, 1, (const bp_view *[]){x}, 1, (const bp_view *[]){out});
}

bp_status bpc_scan(bpc_dev *d, const bpc_op_call *call)
{
    const bp_view *x = call->in[0], *out = call->out[0];
    return bpc_split(d, 2, (const bp_view *[]){out, x}, x->rank - 1, NULL, false,
                     bpk_numel(x) * 2, scan_slab, call);
}

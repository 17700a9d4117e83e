/* CUMSUM and CUMPROD (ONNX CumSum) along the last axis of x: p->i[0]
 * exclusive (each output leaves its own element out: the first is 0 or 1),
 * p->i[1] reverse (the scan runs from the end). Floats accumulate in double
 * and each output is rounded once (ops.h); integers wrap in 64 bits. f32 and
 * f64 have typed loops; the other dtypes go through the cast helpers. */
#include "kernels.h"

/* One row: n elements, x's stride sx, out's so (elements); step +1 or -1
 * walks it forward or backward from `first`. */
#define SCAN_ROW(T, ACC_T, ONE, COMBINE)                                                  \
    do {                                                                                  \
        const T *xr = (const T *)xs;                                                      \
        T *orow = (T *)os;                                                                \
        ACC_T acc = ONE;                                                                  \
        for (int64_t k = 0, i = first; k < n; k++, i += step) {                           \
            ACC_T v = (ACC_T)xr[i * sx];                                                  \
            if (exclusive) {                                                              \
                orow[i * so] = (T)acc;                                                    \
                acc = COMBINE(acc, v);                                                    \
            } else {                                                                      \
                acc = COMBINE(acc, v);                                                    \
                orow[i * so] = (T)acc;                                                    \
            }                                                                             \
        }                                                                                 \
    } while (0)

#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))

typedef struct scan {
    bp_dtype dt;
    bool prod, exclusive;
    int64_t n, sx, so, first, step;
} scan;

static void scan_row(const scan *s, const char *xs, char *os)
{
    const int64_t n = s->n, sx = s->sx, so = s->so, first = s->first, step = s->step;
    const bool exclusive = s->exclusive;
    switch (s->dt) {
    case BP_F32:
        if (s->prod)
            SCAN_ROW(float, double, 1.0, MUL);
        else
            SCAN_ROW(float, double, 0.0, ADD);
        return;
    case BP_F64:
        if (s->prod)
            SCAN_ROW(double, double, 1.0, MUL);
        else
            SCAN_ROW(double, double, 0.0, ADD);
        return;
    default: break;
    }
    size_t es = bp_dtype_size(s->dt);
    if (bp_dtype_is_float(s->dt)) { /* f16, bf16 */
        double acc = s->prod ? 1.0 : 0.0;
        for (int64_t k = 0, i = first; k < n; k++, i += step) {
            double v = bp_elem_load_f64(s->dt, xs + i * sx * (int64_t)es);
            char *o = os + i * so * (int64_t)es;
            if (exclusive)
                bp_elem_store_f64(s->dt, o, acc);
            acc = s->prod ? acc * v : acc + v;
            if (!exclusive)
                bp_elem_store_f64(s->dt, o, acc);
        }
        return;
    }
    uint64_t acc = s->prod ? 1u : 0u;
    for (int64_t k = 0, i = first; k < n; k++, i += step) {
        uint64_t v = (uint64_t)bp_elem_load_i64(s->dt, xs + i * sx * (int64_t)es);
        char *o = os + i * so * (int64_t)es;
        if (exclusive)
            bp_elem_store_i64(s->dt, o, bpk_wrap_int(s->dt, acc));
        acc = s->prod ? acc * v : acc + v;
        if (!exclusive)
            bp_elem_store_i64(s->dt, o, bpk_wrap_int(s->dt, acc));
    }
}

bp_status bpk_op_scan(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)dev, (void)n_in, (void)n_out;
    const bp_view *x = in[0], *out = out_v[0];
    int32_t last = x->rank - 1;
    bool reverse = p->i[1] != 0;
    scan s = {.dt = x->dtype, .prod = op == BP_OP_CUMPROD, .exclusive = p->i[0] != 0,
              .n = x->shape[last], .sx = x->strides[last], .so = out->strides[last],
              .first = reverse ? x->shape[last] - 1 : 0, .step = reverse ? -1 : 1};
    size_t es = bp_dtype_size(x->dtype);
    bpk_rows r;
    bpk_rows_init(&r, 2, (const bp_view *[]){x, out});
    while (bpk_rows_next(&r))
        scan_row(&s, bpk_base(x) + r.at[0] * (int64_t)es, bpk_base(out) + r.at[1] * (int64_t)es);
    return BP_OK;
}

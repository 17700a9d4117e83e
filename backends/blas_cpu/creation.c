/* fill, arange and the counter-based random draws (philox.h), each over a
 * slice of the output per thread. A random element's stream position is
 * offset + its row-major index, so slices draw exactly what a serial loop
 * would. */
#include <string.h>

#include "blas_cpu.h"

typedef struct fill_ctx {
    const bp_view *out;
    uint64_t bits;      /* the element, as raw bits of its size */
} fill_ctx;

#define FILL_LOOP(T)                                                                    \
    do {                                                                                \
        T v_ = (T)c->bits, *ob_ = (T *)bpc_base(c->out);                                \
        while (bpc_cursor_next(&cur, pos, &n)) {                                        \
            T *o_ = ob_ + pos[0];                                                       \
            if (s == 1)                                                                 \
                for (int64_t i_ = 0; i_ < n; i_++)                                      \
                    o_[i_] = v_;                                                        \
            else                                                                        \
                for (int64_t i_ = 0; i_ < n; i_++)                                      \
                    o_[i_ * s] = v_;                                                    \
        }                                                                               \
    } while (0)

static void fill_run(void *p, int64_t lo, int64_t hi)
{
    const fill_ctx *c = p;
    bpc_cursor cur;
    int64_t pos[1], n;
    bpc_cursor_init(&cur, 1, (const bp_view *[]){c->out}, lo, hi);
    int64_t s = cur.it.inner_stride[0];
    switch (bp_dtype_size(c->out->dtype)) {
    case 1: FILL_LOOP(uint8_t); break;
    case 2: FILL_LOOP(uint16_t); break;
    case 4: FILL_LOOP(uint32_t); break;
    default: FILL_LOOP(uint64_t); break;
    }
}

bp_status bpc_fill(void *dev, const bp_view *out, const void *value)
{
    fill_ctx c = {out, 0};
    switch (bp_dtype_size(out->dtype)) {
    case 1: {
        uint8_t v;
        memcpy(&v, value, 1);
        c.bits = out->dtype == BP_BOOL ? (v != 0) : v; /* bool is normalised to 0/1 */
        break;
    }
    case 2: { uint16_t v; memcpy(&v, value, 2); c.bits = v; break; }
    case 4: { uint32_t v; memcpy(&v, value, 4); c.bits = v; break; }
    case 8: memcpy(&c.bits, value, 8); break;
    default:
        return bpc_fail(dev, BP_ERR_UNSUPPORTED_OP, "blas_cpu: fill not implemented for %s",
                        bp_dtype_name(out->dtype));
    }
    bpc_parallel(dev, bpc_numel(out), 4 * BPC_GRAIN_LIGHT, fill_run, &c);
    return BP_OK;
}

typedef struct arange_ctx {
    const bp_view *out;
    double start, step;
} arange_ctx;

static void arange_run(void *p, int64_t lo, int64_t hi)
{
    const arange_ctx *c = p;
    const bp_view *out = c->out;
    int64_t es = (int64_t)bp_dtype_size(out->dtype);
    int64_t stride = out->rank > 0 ? out->strides[0] * es : 0;
    char *o = bpc_base(out);
    for (int64_t i = lo; i < hi; i++) {
        double v = c->start + (double)i * c->step;
        if (out->dtype == BP_F32) {
            float f = (float)v;
            memcpy(o + i * stride, &f, sizeof f);
        } else if (out->dtype == BP_F64) {
            memcpy(o + i * stride, &v, sizeof v);
        } else {
            bpc_store_f64(out->dtype, o + i * stride, v);
        }
    }
}

bp_status bpc_arange(void *dev, double start, double step, const bp_view *out)
{
    arange_ctx c = {out, start, step};
    bpc_parallel(dev, out->rank > 0 ? out->shape[0] : 1, BPC_GRAIN_LIGHT, arange_run, &c);
    return BP_OK;
}

typedef struct random_ctx {
    const bp_view *out;
    bool normal;
    uint64_t seed, offset;
    double p0, p1;
} random_ctx;

static void random_run(void *p, int64_t lo, int64_t hi)
{
    const random_ctx *c = p;
    int64_t es = (int64_t)bp_dtype_size(c->out->dtype);
    char *ob = bpc_base(c->out);
    uint64_t pos_s = c->offset + (uint64_t)lo, block = UINT64_MAX;
    uint32_t w[4] = {0, 0, 0, 0};
    bpc_cursor cur;
    int64_t pos[1], n;
    bpc_cursor_init(&cur, 1, (const bp_view *[]){c->out}, lo, hi);
    while (bpc_cursor_next(&cur, pos, &n)) {
        char *o = ob + pos[0] * es;
        int64_t s = cur.it.inner_stride[0] * es;
        for (int64_t i = 0; i < n; i++, pos_s++) {
            double v;
            if (c->normal) {
                v = c->p0 + c->p1 * bp_philox_normal01(c->seed, pos_s);
            } else {
                /* bp_philox_uniform01, reusing each block for its 4 words */
                if (pos_s / 4u != block) {
                    block = pos_s / 4u;
                    bp_philox4x32_10(c->seed, block, w);
                }
                v = c->p0 + (c->p1 - c->p0) * ((double)(w[pos_s % 4u] >> 8) * (1.0 / 16777216.0));
            }
            bpc_store_f64(c->out->dtype, o + i * s, v);
        }
    }
}

bp_status bpc_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                     const bp_view *out)
{
    bool normal = op == BP_OP_RANDOM_NORMAL;
    if (!normal && op != BP_OP_RANDOM_UNIFORM)
        return bpc_fail(dev, BP_ERR_UNSUPPORTED_OP, "blas_cpu: %s is not a random op",
                        bp_op_name(op));
    random_ctx c = {out, normal, seed, offset, p0, p1};
    bpc_parallel(dev, bpc_numel(out), BPC_GRAIN_HEAVY, random_run, &c);
    return BP_OK;
}

/* fill, arange and the counter-based random draws (philox.h); the value of
 * each element is creation_rules.h's, shared with the cuda kernels. */
#include <string.h>

#include "creation_rules.h"
#include "kernels.h"

#define FILL_LOOP(T, VAL)                                                               \
    do {                                                                                \
        T *ob_ = (T *)bpk_base(out);                                                    \
        while (bpk_iter_next(&it, pos)) {                                               \
            T *o_ = ob_ + pos[0];                                                       \
            int64_t s_ = it.inner_stride[0];                                            \
            if (s_ == 1)                                                                \
                for (int64_t i_ = 0; i_ < it.inner; i_++)                               \
                    o_[i_] = (VAL);                                                     \
            else                                                                        \
                for (int64_t i_ = 0; i_ < it.inner; i_++)                               \
                    o_[i_ * s_] = (VAL);                                                \
        }                                                                               \
    } while (0)

bp_status bpk_fill(void *dev, const bp_view *out, const void *value)
{
    bpk_iter it;
    int64_t pos[1];
    bpk_iter_init(&it, 1, (const bp_view *[]){out});
    const uint64_t v = bpk_fill_bits(out->dtype, value);
    switch (bp_dtype_size(out->dtype)) {
    case 1: FILL_LOOP(uint8_t, (uint8_t)v); break;
    case 2: FILL_LOOP(uint16_t, (uint16_t)v); break;
    case 4: FILL_LOOP(uint32_t, (uint32_t)v); break;
    case 8: FILL_LOOP(uint64_t, v); break;
    default:
        return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP, "binary: fill not implemented for %s",
                        bp_dtype_name(out->dtype));
    }
    return BP_OK;
}

bp_status bpk_arange(void *dev, double start, double step, const bp_view *out)
{
    int64_t n = out->rank > 0 ? out->shape[0] : 1;
    int64_t es = (int64_t)bp_dtype_size(out->dtype);
    int64_t stride = out->rank > 0 ? out->strides[0] * es : 0;
    char *o = bpk_base(out);
    switch (out->dtype) { /* the common dtypes without a per-element switch */
    case BP_F32:
        for (int64_t i = 0; i < n; i++) {
            float v = (float)bpk_arange_at(start, step, i);
            memcpy(o + i * stride, &v, sizeof v);
        }
        break;
    case BP_F64:
        for (int64_t i = 0; i < n; i++) {
            double v = bpk_arange_at(start, step, i);
            memcpy(o + i * stride, &v, sizeof v);
        }
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            bp_elem_store_f64(out->dtype, o + i * stride, bpk_arange_at(start, step, i));
        break;
    }
    return BP_OK;
}

bp_status bpk_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                     const bp_view *out)
{
    bool normal = op == BP_OP_RANDOM_NORMAL;
    if (!normal && op != BP_OP_RANDOM_UNIFORM)
        return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP, "binary: %s is not a random op",
                        bp_op_name(op));
    int64_t es = (int64_t)bp_dtype_size(out->dtype);
    char *ob = bpk_base(out);
    /* element i in row-major order draws stream position offset + i; the
     * iterator visits elements in that order */
    uint64_t p = offset, block = UINT64_MAX;
    uint32_t w[4] = {0, 0, 0, 0};
    bpk_iter it;
    int64_t pos[1];
    bpk_iter_init(&it, 1, (const bp_view *[]){out});
    while (bpk_iter_next(&it, pos)) {
        char *o = ob + pos[0] * es;
        int64_t s = it.inner_stride[0] * es;
        for (int64_t i = 0; i < it.inner; i++, p++) {
            double v;
            if (normal) {
                v = bpk_normal_at(p0, p1, bp_philox_normal01(seed, p));
            } else {
                /* bp_philox_uniform01, reusing each block for its 4 words */
                if (p / 4u != block) { /* p / 4 never reaches UINT64_MAX */
                    block = p / 4u;
                    bp_philox4x32_10(seed, block, w);
                }
                v = bpk_uniform_at(p0, p1, bp_philox_word_uniform01(w[p % 4u]));
            }
            bp_elem_store_f64(out->dtype, o + i * s, v);
        }
    }
    return BP_OK;
}

/* Computes neg for f32 correctly, then writes one element past its output. */
#include "toy.h"

static bp_status overrun_unary(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    (void)dev;
    if (op != BP_OP_NEG || x->dtype != BP_F32)
        return BP_ERR_UNSUPPORTED_OP;
    int64_t n = 1;
    for (int32_t k = 0; k < out->rank; k++)
        n *= out->shape[k];
    const float *src = (const float *)((const char *)x->buffer + x->offset);
    float *dst = (float *)((char *)out->buffer + out->offset);
    for (int64_t i = 0; i < n; i++) /* dense views: the tests only pass those */
        dst[i] = -src[i];
    dst[n] = 0.0f; /* the deliberate bug */
    return BP_OK;
}

static const bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("overrun"), .unary = overrun_unary};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void) { return &desc; }

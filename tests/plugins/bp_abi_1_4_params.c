/* A plugin built against ABI 1.4, when bp_op_params held six integers and six
 * reals: its op entry reads the parameters through a frozen copy of that
 * layout, as a plugin compiled with the 1.4 header does. It runs elu, shrink
 * and hard_sigmoid on dense f32 (the reals they read: f[0], f[1]) and refuses
 * parameters whose struct_size is not 1.4's, so a core that handed it the
 * wider struct of 1.5 would compute with alpha = 0 or fail. */
#include <math.h>
#include <stdint.h>

#include "toy.h"

typedef struct params_as_built { /* plugin.h of ABI 1.4, frozen */
    uint32_t struct_size;
    int64_t i[6];
    double f[6];
} params_as_built;

static bool dense_f32(const bp_view *v)
{
    int64_t step = 1;
    for (int32_t k = v->rank - 1; k >= 0; k--) {
        if (v->shape[k] != 1 && v->strides[k] != step)
            return false;
        step *= v->shape[k];
    }
    return v->dtype == BP_F32;
}

static int64_t numel(const bp_view *v)
{
    int64_t n = 1;
    for (int32_t k = 0; k < v->rank; k++)
        n *= v->shape[k];
    return n;
}

static bool handled(bp_op op)
{
    return op == BP_OP_ELU || op == BP_OP_SHRINK || op == BP_OP_HARD_SIGMOID;
}

static bool supports(void *dev, bp_op op, bp_dtype dtype)
{
    (void)dev;
    return handled(op) && dtype == BP_F32;
}

static bp_status op_entry(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                          const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    (void)dev;
    const params_as_built *p = (const params_as_built *)(const void *)params;
    if (p->struct_size != sizeof *p) {
        toy_host->set_error(toy_host->host, "bp_op_params of %u bytes; this plugin reads %zu",
                            (unsigned)p->struct_size, sizeof *p);
        return BP_ERR_INVALID_ARGUMENT;
    }
    if (!handled(op) || n_in != 1 || n_out != 1 || !dense_f32(in[0]) || !dense_f32(out[0]))
        return BP_ERR_UNSUPPORTED_OP;
    const float *x = (const float *)(const void *)((const char *)in[0]->buffer + in[0]->offset);
    float *y = (float *)(void *)((char *)out[0]->buffer + out[0]->offset);
    double a = p->f[0], b = p->f[1];
    for (int64_t k = 0; k < numel(out[0]); k++) {
        double v = x[k];
        switch (op) {
        case BP_OP_ELU: v = v < 0 ? a * (exp(v) - 1) : v; break;
        case BP_OP_SHRINK: v = v < -b ? v + a : v > b ? v - a : 0; break;
        default: v = fmax(0, fmin(1, a * v + b)); break; /* hard_sigmoid */
        }
        y[k] = (float)v;
    }
    return BP_OK;
}

static bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("abi_1_4_params"),
                         .config_key_size = sizeof(bp_config_key), .supports = supports,
                         .op = op_entry};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void)
{
    desc.abi_minor = 4;
    return &desc;
}

/* A descriptor that has room for the op entry (and fills it) but says it was
 * built for ABI 1.3: the core goes by the version and never calls it. */
#include <stdlib.h>

#include "toy.h"

static bp_status never_called(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                              const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    (void)dev, (void)op, (void)params, (void)n_in, (void)in, (void)n_out, (void)out;
    abort();
}

static bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("abi_1_3_claims_op"),
                         .config_key_size = sizeof(bp_config_key), .op = never_called};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void)
{
    desc.abi_minor = 3;
    return &desc;
}

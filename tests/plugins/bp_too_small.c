/* Claims ABI 1.0 but its descriptor stops after `read`: too small. */
#include "toy.h"

static bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("too_small")};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void)
{
    desc.struct_size = (uint32_t)offsetof(bp_plugin, host_ptr);
    return &desc;
}

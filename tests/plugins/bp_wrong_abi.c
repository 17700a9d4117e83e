/* Built for an ABI major this core does not speak (99.0). */
#include "toy.h"

static bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("wrong_abi")};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void)
{
    desc.abi_major = 99;
    return &desc;
}

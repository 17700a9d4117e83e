/* A plugin built against ABI 1.0: its descriptor ends at `random` and its
 * key array has the 1.0 element size. It must load and work unchanged. */
#include "toy.h"

static const bp_config_key keys[] = {{"speed", "how fast", "3"}, {NULL, NULL, NULL}};

static bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("abi_1_0"), .config_keys = keys};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void)
{
    desc.struct_size = (uint32_t)(offsetof(bp_plugin, random) + sizeof desc.random);
    desc.abi_minor = 0;
    return &desc;
}

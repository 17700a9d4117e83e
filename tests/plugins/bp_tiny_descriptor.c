/* A descriptor of 11 bytes: too small even to hold its ABI version fields,
 * which the loader must then not read. */
#include "toy.h"

static bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("tiny_descriptor")};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void)
{
    desc.struct_size = 11;
    return &desc;
}

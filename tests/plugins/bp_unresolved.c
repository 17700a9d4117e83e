/* Needs a symbol nothing provides, so dlopen itself fails. */
#include "toy.h"

extern int bpt_symbol_that_nothing_defines;
static bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("unresolved")};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void)
{
    desc.struct_size += (uint32_t)bpt_symbol_that_nothing_defines;
    return &desc;
}

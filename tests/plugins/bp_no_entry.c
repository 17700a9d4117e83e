/* Exports something, but not bp_plugin_entry. */
#include "toy.h"

static const bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("no_entry")};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry_typo(void);
const bp_plugin *bp_plugin_entry_typo(void) { return &desc; }

/* Opens fine, then returns values that are not bp_status codes from its
 * buffer and op entries: the core must turn them into BP_ERR_BACKEND. */
#include "toy.h"

static bp_status bad_alloc(void *dev, size_t bytes, void **buffer)
{
    (void)dev; (void)bytes;
    *buffer = NULL;
    return (bp_status)-7;
}

static const bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("bad_status"), .alloc = bad_alloc};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void) { return &desc; }

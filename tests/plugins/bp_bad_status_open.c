/* open() returns 1234, which is not a bp_status, and says nothing. */
#include "toy.h"

static bp_status bad_open(const bp_host_api *host, void **state)
{
    (void)host; (void)state;
    return (bp_status)1234;
}

static const bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("bad_status_open"), .open = bad_open};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void) { return &desc; }

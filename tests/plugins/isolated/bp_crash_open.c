/* Crashes inside open(). Kept in its own directory: any program that scans
 * it and opens every plugin (backplane info) must survive this one. */
#include <signal.h>

#include "../toy.h"

static bp_status crash_open(const bp_host_api *host, void **state)
{
    (void)host; (void)state;
    raise(SIGSEGV);
    return BP_OK;
}

static const bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("crash_open"), .open = crash_open};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void) { return &desc; }

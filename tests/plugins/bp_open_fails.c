/* Loads fine; open() fails with a reason of two lines (what, then the
 * remedy), as a GPU plugin on a machine without a GPU does. */
#include "toy.h"

static bp_status fail_open(const bp_host_api *host, void **state)
{
    (void)state;
    host->set_error(host->host, "no widget device found (checked /dev/widget0)\n"
                                "remedy: plug in a widget, or choose another backend");
    return BP_ERR_UNSUPPORTED_DEVICE;
}

static const bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("open_fails"), .open = fail_open};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void) { return &desc; }

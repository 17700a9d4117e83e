/* Holds data fine, but every read of it fails: a tensor the host cannot
 * read back (a lost device, say), for the paths that must clean up then. */
#include "toy.h"

static bp_status fail_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    (void)dev; (void)buffer; (void)offset; (void)dst; (void)bytes;
    toy_host->set_error(toy_host->host, "read_fails: the device is gone");
    return BP_ERR_BACKEND;
}

static const bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("read_fails"), .read = fail_read};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void) { return &desc; }

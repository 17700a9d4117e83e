/* Loads and opens fine, declares one config key, and crashes inside its
 * unary op: the crash must happen there, not at load. */
#include <signal.h>

#include "toy.h"

static const bp_config_key keys[] = {
    {"answer", "an integer the plugin insists on", "42"},
    {NULL, NULL, NULL},
};

static bp_status crashy_open(const bp_host_api *host, void **state)
{
    const char *v = host->config_get(host->host, "answer");
    if (v && strcmp(v, "42") != 0)
        return host->config_error(host->host, "answer", "must be 42");
    return toy_open(host, state);
}

static bp_status crashy_unary(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    (void)dev; (void)op; (void)x; (void)out;
    raise(SIGSEGV);
    return BP_OK;
}

static const bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("crashy"), .config_keys = keys,
                               .open = crashy_open, .unary = crashy_unary};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void) { return &desc; }

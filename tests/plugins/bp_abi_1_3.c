/* A plugin built against ABI 1.3: its descriptor ends before `op`. The
 * memory after it holds an op entry that would abort the process, so a core
 * that read past struct_size, or handed a 1.3 plugin an op of ABI 1.4,
 * would crash the test that uses it. */
#include <stddef.h>
#include <stdlib.h>

#include "toy.h"

static bp_status never_called(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                              const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    (void)dev, (void)op, (void)params, (void)n_in, (void)in, (void)n_out, (void)out;
    abort();
}

static bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("abi_1_3"), .config_key_size = sizeof(bp_config_key),
                         .op = never_called};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void)
{
    desc.struct_size = (uint32_t)offsetof(bp_plugin, op);
    desc.abi_minor = 3;
    return &desc;
}

/* The deliberately wrong plugins of tests/conform_plugins: each is the
 * template plugin (plugins/template/template.c, included here whole) with
 * one bug, so `backplane conform --plugin` must flag exactly that op and
 * still pass the template's other cases. */
#ifndef BPW_WRONG_H
#define BPW_WRONG_H

/* The template's own entry point is renamed: each wrong plugin exports its own. */
#define bp_plugin_entry bpw_template_entry
#include "template.c"
#undef bp_plugin_entry

/* The template's op entry's signature, for a wrong plugin's own. */
#define BPW_OP_ARGS                                                                 \
    void *dev, bp_op op, const bp_op_params *p, int32_t n_in, const bp_view *const *in, \
        int32_t n_out, const bp_view *const *out
#define BPW_OP_PASS dev, op, p, n_in, in, n_out, out

/* The template's descriptor; a wrong plugin overrides name and one entry
 * (designated initializers: the later one wins, hence -Wno-override-init). */
#define BPW_TEMPLATE_FIELDS(NAME, WHAT)                                             \
    .struct_size = sizeof(bp_plugin), .abi_major = BP_ABI_MAJOR,                    \
    .abi_minor = BP_ABI_MINOR, .name = NAME, .version = "0.0.1",                    \
    .description = "deliberately wrong test plugin: " WHAT,                         \
    .config_keys = tpl_keys, .open = tpl_open, .close = tpl_close,                  \
    .device_count = tpl_device_count, .device_info = tpl_device_info,               \
    .device_open = tpl_device_open, .device_close = tpl_device_close,               \
    .alloc = tpl_alloc, .free = tpl_free, .write = tpl_write, .read = tpl_read,     \
    .host_ptr = tpl_host_ptr, .supports = tpl_supports, .op = tpl_op

#define BPW_EXPORT_DESCRIPTOR(desc)                                                 \
    BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);                        \
    BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void) { return &(desc); }

static inline int64_t bpw_numel(const bp_view *v)
{
    int64_t n = 1;
    for (int32_t k = 0; k < v->rank; k++)
        n *= v->shape[k];
    return n;
}

#endif

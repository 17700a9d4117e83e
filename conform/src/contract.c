/* The plugin-contract rows run in the worker: contract.abi (the descriptor
 * of the plugin file: ABI version, name, the required entries) and
 * contract.roundtrip (bytes written to a buffer read back unchanged, and no
 * byte past them written). The parent adds contract.supports and
 * contract.stdout from all the cases (run.c). */
#include <dlfcn.h>
#include <string.h>
#include <stdlib.h>

#include "internal.h"

void cf_contract_abi(const cf_worker_env *env, const cf_case *c, cf_result *r)
{
    r->status = CF_FAIL;
    if (!env->plugin_path) {
        CF_MSG(r, "%s: the plugin file of this backend was not found among the context's plugins",
               c->name);
        return;
    }
    void *h = dlopen(env->plugin_path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        CF_MSG(r, "%s: dlopen(%s): %s", c->name, env->plugin_path, dlerror());
        return;
    }
    void *sym = dlsym(h, BP_PLUGIN_ENTRY_SYMBOL);
    bp_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    const bp_plugin *d = entry ? entry() : NULL;
    /* the 1.0 layout ends with the random entry */
    size_t v10 = offsetof(bp_plugin, random) + sizeof(void *);
    if (!entry)
        CF_MSG(r, "%s: %s does not export %s", c->name, env->plugin_path, BP_PLUGIN_ENTRY_SYMBOL);
    else if (!d)
        CF_MSG(r, "%s: %s() returned NULL", c->name, BP_PLUGIN_ENTRY_SYMBOL);
    else if (d->struct_size < v10)
        CF_MSG(r, "%s: struct_size %u is smaller than the ABI 1.0 descriptor (%zu bytes)", c->name,
               d->struct_size, v10);
    else if (d->abi_major != BP_ABI_MAJOR)
        CF_MSG(r, "%s: abi_major %u, this core speaks %d", c->name, d->abi_major, BP_ABI_MAJOR);
    else if (!d->name || !d->name[0] || strspn(d->name, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
                                            strlen(d->name))
        CF_MSG(r, "%s: name '%s' is not [a-z0-9_]+", c->name, d->name ? d->name : "(null)");
    else if (!d->version || !d->version[0])
        CF_MSG(r, "%s: version is not set", c->name);
    else if (!d->description)
        CF_MSG(r, "%s: description is NULL", c->name);
    else if (!d->open || !d->close || !d->device_count || !d->device_info || !d->device_open ||
             !d->device_close || !d->alloc || !d->free || !d->write || !d->read)
        CF_MSG(r, "%s: a required lifecycle or buffer entry is NULL", c->name);
    else {
        r->status = CF_PASS;
        CF_MSG(r, "name %s, version %s, ABI %u.%u, struct_size %u", d->name, d->version,
               d->abi_major, d->abi_minor, d->struct_size);
    }
    dlclose(h);
}

void cf_contract_roundtrip(const cf_case *c, const cf_operand *op, cf_result *r)
{
    size_t bytes = (size_t)op->a.n * bp_dtype_size(c->dtype);
    void *want = malloc(bytes ? bytes : 1), *got = malloc(bytes + 64);
    if (!want || !got) {
        free(want);
        free(got);
        r->status = CF_FAIL;
        CF_MSG(r, "%s: out of host memory", c->name);
        return;
    }
    cf_encode(&op->a, want);
    memset(got, 0xA5, bytes + 64);
    bp_status st = bp_tensor_to_host(op->t, got, bytes + 64);
    r->status = CF_FAIL;
    if (st != BP_OK)
        CF_MSG(r, "%s [%s]: bp_tensor_to_host failed: %s: %s", c->name, bp_dtype_name(c->dtype),
               bp_status_string(st), bp_last_error());
    else if (memcmp(want, got, bytes) != 0) {
        size_t at = 0;
        while (at < bytes && ((char *)want)[at] == ((char *)got)[at])
            at++;
        CF_MSG(r, "%s [%s] %s: byte %zu differs after write and read back", c->name,
               bp_dtype_name(c->dtype), c->label, at);
    } else {
        bool tail_ok = true;
        for (size_t i = bytes; i < bytes + 64; i++)
            tail_ok = tail_ok && ((unsigned char *)got)[i] == 0xA5;
        if (!tail_ok)
            CF_MSG(r, "%s [%s]: read wrote past the tensor's bytes into the host buffer", c->name,
                   bp_dtype_name(c->dtype));
        else
            r->status = CF_PASS;
    }
    free(want);
    free(got);
}

/* Built as if against a newer plugin.h whose bp_config_key has grown by a
 * member: its key array must be walked with its own element size. */
#include "toy.h"

typedef struct newer_key {
    const char *name, *help, *default_value;
    const char *since;  /* a member this library does not know */
} newer_key;

static const newer_key keys[] = {
    {"alpha", "first key", "1", "2.0"},
    {"beta", "second key", NULL, "2.1"},
    {NULL, NULL, NULL, NULL},
};

static const bp_plugin desc = {TOY_DESCRIPTOR_FIELDS("big_keys"),
                               .config_keys = (const bp_config_key *)(const void *)keys,
                               .config_key_size = sizeof(newer_key)};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
const bp_plugin *bp_plugin_entry(void) { return &desc; }

/* A plugin opened the way the core opens it, without the core: dlopen, its
 * entry, open() with a host API, device 0. For tests that call its entries
 * directly (an op code the core would never send, a layout an older core
 * sends, the buffers behind the entries). Fails the test on any error. */
#ifndef BPT_DIRECT_PLUGIN_H
#define BPT_DIRECT_PLUGIN_H

#include <stdint.h>

#include <backplane/plugin.h>

typedef struct bpt_direct {
    void *so;
    const bp_plugin *p;
    void *state, *dev;
} bpt_direct;

/* Open path's plugin and its device 0; the host API says it is a core of
 * ABI 1.host_abi_minor. */
void bpt_direct_open(bpt_direct *d, const char *path, uint32_t host_abi_minor);
/* Close the device, the plugin and the library. */
void bpt_direct_close(bpt_direct *d);
/* The detail the plugin last set through the host API's set_error ("" if none
 * since bpt_direct_clear_error). */
const char *bpt_direct_error(void);
void bpt_direct_clear_error(void);

#endif

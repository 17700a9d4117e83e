/* Opening a plugin: after loading it, check its [backend.NAME] keys against
 * the ones it declares, call open() and ask how many devices it exposes.
 * Happens once per record; the outcome (or the reason) stays on it. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* More devices than this is a plugin defect, not a machine. */
#define BP__MAX_DEVICES 4096

bp_status bp__plugin_open(bp__plugin *p)
{
    BP__TRY(bp__plugin_load(p));
    if (p->open_tried)
        return p->opened ? BP_OK
                         : bp__error(p->status, "backend '%s' (%s) could not be opened: %s",
                                     p->name, p->path, p->message);
    p->open_tried = true;
    /* its [backend.NAME] keys must be ones it declares: a typo is an error
     * here, where the plugin would have read it */
    bp_status cst = bp__config_check_backend(&p->ctx->config, p->name, p->keys);
    if (cst != BP_OK) {
        p->status = cst;
        bp__record_set(p, &p->message, bp__aprintf("%s", bp_last_error()));
        return bp__error(cst, "backend '%s' (%s) could not be opened: %s", p->name, p->path,
                         p->message);
    }
    bp__call_begin();
    void *state = NULL;
    bp_status st = bp__plugin_entry_status("open", p->vt->open(&p->host, &state));
    if (st == BP_OK) {
        int32_t n = p->vt->device_count(state);
        if (n >= 0 && n <= BP__MAX_DEVICES) {
            p->state = state;
            p->opened = true;
            p->device_count = n;
            return BP_OK;
        }
        p->vt->close(state);
        st = BP_ERR_PLUGIN;
        bp__plugin_detail_setf("its device_count entry reports %ld devices, outside 0..%d: a "
                               "defect in the plugin",
                               (long)n, BP__MAX_DEVICES);
    }
    const char *detail = bp__plugin_detail();
    if (st == BP_ERR_CONFIG && !*detail)
        detail = bp_last_error(); /* from config_error */
    bp__record_set(p, &p->message,
                       bp__aprintf("%s", *detail ? detail : "open() failed without a reason"));
    p->status = st;
    return bp__error(st, "backend '%s' (%s) could not be opened: %s", p->name, p->path,
                     p->message);
}

/* Calling into a plugin: the one place that turns what an entry returned
 * into the caller's status and message. Every failure names the backend, the
 * entry and what was being done; a value that is not a bp_status (a plugin
 * defect) never reaches the caller: it becomes BP_ERR_BACKEND naming the raw
 * value and the plugin's file. */
#include <stdio.h>

#include "internal.h"

bool bp__status_known(int v)
{
    switch (v) {
#define BP__STATUS_CASE(name, value, msg) case value:
        BP_STATUS_LIST(BP__STATUS_CASE)
#undef BP__STATUS_CASE
        return true;
    }
    return false;
}

bp_status bp__call_end(const bp_backend *b, const char *what, const char *entry, bp_status st)
{
    if (st == BP_OK)
        return BP_OK;
    int raw = (int)st;
    if (!bp__status_known(raw))
        return bp__error(BP_ERR_BACKEND,
                         "backend %s: its %s entry returned %d during %s, which is not a "
                         "bp_status: a defect in the plugin %s (reported as BP_ERR_BACKEND)",
                         b->name, entry, raw, what, b->plugin->path);
    const char *detail = bp__plugin_detail();
    return bp__error(st, "backend %s failed in %s: %s", b->name, what,
                     *detail ? detail : bp_status_message(st));
}

bp_status bp__plugin_entry_status(const char *entry, bp_status st)
{
    if (st == BP_OK || bp__status_known((int)st))
        return st;
    bp__plugin_detail_setf("its %s entry returned %d, which is not a bp_status: a defect in "
                           "the plugin (reported as BP_ERR_BACKEND)",
                           entry, (int)st);
    return BP_ERR_BACKEND;
}

/* fuzz_api: tensor slots, storages and backends as the harness tracks them. */
#include <string.h>

#include "fa_state.h"
#include "fz_oracle.h"

int fa_slot_pick(fa_state *s) { return (int)fz_pick(&s->in, FA_SLOTS); }

bp_tensor *fa_tensor(fa_state *s, int slot) { return s->slot[slot].t; }

void fa_slot_clear(fa_state *s, int slot)
{
    bp_tensor_release(s->slot[slot].t);
    memset(&s->slot[slot], 0, sizeof s->slot[slot]);
}

int fa_storage_new(fa_state *s)
{
    if (s->storages >= FA_STORAGES - 1)
        return FA_STORAGES - 1; /* shared overflow id */
    return s->storages++;
}

void fa_expect_input(fa_state *s, fa_expect *e, int slot)
{
    const fa_slot *sl = &s->slot[slot];
    if (!sl->t) {
        fa_invalid(e, "an input tensor is NULL");
        return;
    }
    bool gone = sl->gone;
    if (gone == bp_tensor_is_valid(sl->t))
        fz_fail("bp_tensor_is_valid says %s for a tensor whose data was %sgiven away",
                gone ? "true" : "false", gone ? "" : "not ");
    if (gone)
        fa_invalid(e, "an input was given away by bp_backend_transfer");
    if (sl->odd)
        fa_unsure(e);
}

void fa_expect_same_backend(fa_state *s, fa_expect *e, int a, int b)
{
    if (s->slot[a].t && s->slot[b].t && s->slot[a].be_id != s->slot[b].be_id)
        fa_invalid(e, "inputs on different backends");
}

void fa_expect_backend_of(fa_state *s, fa_expect *e, int slot)
{
    if (!s->slot[slot].t)
        return;
    e->backend = bp_tensor_backend(s->slot[slot].t);
    e->be_id = s->slot[slot].be_id;
    e->ctx_id = s->slot[slot].ctx_id;
}

int fa_backend_pick(fa_state *s) { return (int)fz_pick(&s->in, FA_BACKENDS); }

void fa_backend_store(fa_state *s, int c, bp_backend *b)
{
    const char *plugin = bp_backend_plugin_name(b);
    int i = 2 * c + (strcmp(plugin, "blas_cpu") == 0);
    if (strcmp(plugin, "binary") != 0 && strcmp(plugin, "blas_cpu") != 0)
        fz_fail("backend %s is neither binary nor blas_cpu", bp_backend_name(b));
    if (s->be[i] && s->be[i] != b)
        fz_fail("context %d gave two backend objects for %s", c, bp_backend_name(b));
    if (!s->be[i]) {
        s->be[i] = b;
        s->be_id[i] = ++s->be_ids;
    }
}

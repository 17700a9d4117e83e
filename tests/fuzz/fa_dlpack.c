/* fuzz_api: DLPack both ways. A tensor exported and taken back (onto its
 * own backend or another, again and again), harness memory lent twice, each
 * capsule's deleter counted: it must run exactly once, when the last tensor
 * using its memory goes (never while one does: ASan sees a use after it),
 * and after every tensor is released the backends hold no bytes. */
#include <stdlib.h>
#include <string.h>

#include "fa_state.h"
#include "fz_oracle.h"

static void lend_delete(DLManagedTensor *self)
{
    fa_lend *l = self->manager_ctx;
    if (++l->deleted > 1)
        fz_fail("a DLPack deleter ran %d times", l->deleted);
    if (l->inner)
        l->inner->deleter(l->inner);
    if (l->block && --l->block->refs == 0)
        free(l->block);
}

static fa_lend *lend_new(fa_state *s)
{
    if (s->n_lends >= FA_LENDS)
        return NULL;
    fa_lend *l = &s->lend[s->n_lends++];
    memset(l, 0, sizeof *l);
    l->m.manager_ctx = l;
    l->m.deleter = lend_delete;
    return l;
}

int fa_lend_holds(const fa_state *s, const bp_tensor *t)
{
    int n = 0;
    for (int i = 0; i < s->n_lends; i++)
        n += t && s->lend[i].of == t && s->lend[i].deleted == 0;
    return n;
}

/* Export slot x's tensor, wrapped in a counted lend. */
static void export_slot(fa_state *s)
{
    int x = fa_slot_pick(s);
    bp_tensor *t = fa_tensor(s, x);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    struct DLManagedTensor *m = (struct DLManagedTensor *)(uintptr_t)0x10;
    fz_mark();
    bp_status st = bp_tensor_to_dlpack(t, &m);
    fz_status("bp_tensor_to_dlpack", st);
    if (e.verdict == FA_INVALID && st == BP_OK)
        fz_fail("bp_tensor_to_dlpack succeeded, but the contract says it must fail (%s)", e.why);
    if (st != BP_OK) {
        if (m)
            fz_fail("bp_tensor_to_dlpack failed but left *out set");
        return;
    }
    fa_lend *l = lend_new(s);
    if (!l) { /* no room: give it back at once */
        m->deleter(m);
        return;
    }
    l->inner = m;
    l->of = t;
    l->m.dl_tensor = m->dl_tensor;
}

/* Harness memory (64 floats) lent as a DLPack tensor of up to 64 elements;
 * the same block may back several lends, as NumPy lends one array twice. */
static void lend_memory(fa_state *s)
{
    fa_block *b = NULL;
    for (int i = 0; i < s->n_lends && !b && fz_bool(&s->in); i++)
        if (s->lend[i].block && s->lend[i].deleted == 0) /* it holds the block */
            b = s->lend[i].block;
    fa_lend *l = lend_new(s);
    if (!l)
        return;
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b)
            fz_fail("out of memory");
        for (int k = 0; k < 64; k++)
            b->data[k] = (float)k;
    }
    b->refs++;
    l->block = b;
    l->shape[0] = 1 + fz_pick(&s->in, 64);
    DLTensor *d = &l->m.dl_tensor;
    d->data = b->data;
    d->device = (DLDevice){kDLCPU, 0};
    d->ndim = 1;
    d->dtype = (DLDataType){kDLFloat, 32, 1};
    d->shape = l->shape;
}

/* Take a pending lend onto a backend. */
static void import_lend(fa_state *s)
{
    if (s->n_lends == 0)
        return;
    fa_lend *l = &s->lend[fz_pick(&s->in, (unsigned)s->n_lends)];
    int be = fa_backend_pick(s), dst = fa_slot_pick(s);
    if (l->taken || l->deleted)
        return; /* the library owns it, or it is gone: using it again would be the caller's bug */
    fa_expect e = fa_expect_valid();
    if (!s->be[be])
        fa_invalid(&e, "the backend is NULL");
    e.backend = s->be[be];
    e.be_id = s->be_id[be];
    e.ctx_id = s->ctx_id[be / 2];
    const DLTensor *d = &l->m.dl_tensor;
    bp_dtype dt = l->of ? bp_tensor_dtype(l->of) : BP_F32;
    fa_predict(&e, dt, d->ndim, d->shape);
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_tensor_from_dlpack(s->be[be], &l->m, &out);
    l->taken = st == BP_OK;
    fa_finish(s, "bp_tensor_from_dlpack", st, out, &e, dst, -1);
}

void fa_act_dlpack(fa_state *s)
{
    switch (fz_pick(&s->in, 4)) {
    case 0: export_slot(s); break;
    case 1: lend_memory(s); break;
    default: import_lend(s); break;
    }
}

void fa_lends_end(fa_state *s)
{
    for (int i = 0; i < s->n_lends; i++) {
        fa_lend *l = &s->lend[i];
        if (!l->taken && l->deleted == 0)
            l->m.deleter(&l->m); /* pending: the harness still owns it */
    }
    for (int i = 0; i < s->n_lends; i++)
        if (s->lend[i].deleted != 1)
            fz_fail("lend %d (%s) was deleted %d times after every tensor was released, want "
                    "once", i, s->lend[i].inner ? "an export" : "harness memory",
                    s->lend[i].deleted);
}

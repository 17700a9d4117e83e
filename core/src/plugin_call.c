/* Calling into a plugin: the one place that turns what an entry returned
 * into the caller's status and message. Every failure names the backend, the
 * entry and what was being done; a value that is not a bp_status (a plugin
 * defect) never reaches the caller: it becomes BP_ERR_BACKEND naming the raw
 * value and the plugin's file. And the one path every op takes into a plugin
 * (bp__op_run): the op entry, with the parameter layout the plugin was built
 * for, or, for a plugin built before ABI 1.6, the typed entries of the ops
 * of 1.0 (plugin_compat.c). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* 1.4's layout, frozen: the reals at byte 56 (on the LP64 targets built). */
_Static_assert(sizeof(void *) != 8 || (offsetof(bp_op_params_1_4, f) == 56 &&
                                       sizeof(bp_op_params_1_4) == 104),
               "bp_op_params_1_4 must keep ABI 1.4's layout");

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

/* ---- the one op path ------------------------------------------------------ */

/* Each op's arity, parsed once from its row of the op table. */
static bp__op_sig op_sigs[BP_OP_COUNT];
static pthread_once_t op_sigs_once = PTHREAD_ONCE_INIT;

static void op_sigs_parse(void)
{
    for (int op = 0; op < BP_OP_COUNT; op++) {
        const bp_op_info *r = bp_op_info_of((bp_op)op);
        uint32_t oi, oo;
        op_sigs[op].n_in = bp_op_arity(r->in, &oi);
        op_sigs[op].n_out = bp_op_arity(r->out, &oo);
        op_sigs[op].optional_in = oi;
        op_sigs[op].optional_out = oo;
    }
}

const bp__op_sig *bp__op_sig_of(bp_op op)
{
    pthread_once(&op_sigs_once, op_sigs_parse);
    return &op_sigs[op];
}

bool bp__op_has_entry(const bp_backend *b, bp_op op)
{
    if (b->vt->abi_minor >= 6 || bp_op_since(op) >= 4)
        return BP__HAS(b->vt, op);
    return bp__compat_has_entry(b, op);
}

static bool view_empty(const bp_view *v)
{
    if (!v)
        return true;
    for (int32_t k = 0; k < v->rank; k++)
        if (v->shape[k] == 0)
            return true;
    return false;
}

static bp_status op_run(bp_backend *be, bp_op op, const bp_op_params *p, const bp_view *const *in,
                        const bp_view *const *out, const bp__index_rule *rule)
{
    const bp__op_sig *sig = bp__op_sig_of(op);
    const char *what = bp_op_name(op);
    /* Nothing to read and nothing to write: no call (a kernel looping over
     * the rows of a (2^57, 0) view would take years to do nothing). A graph
     * still records it: the plan's buffers are given to the values that
     * nodes write, and the ops reading this one's value need one (the plan
     * then skips it here, on the real backend). */
    bool empty = !be->graph;
    for (int32_t k = 0; empty && k < sig->n_in; k++)
        empty = view_empty(in[k]);
    for (int32_t k = 0; empty && k < sig->n_out; k++)
        empty = view_empty(out[k]);
    if (empty)
        return BP_OK;
    if (rule) { /* a graph's recording backend: its op entry, the node keeping the rule */
        bp__count_op(be);
        bp__call_begin();
        return bp__call_end(be, what, "op",
                            bp__graph_record_op(be, op, p, sig->n_in, in, sig->n_out, out, rule));
    }
    if (be->vt->abi_minor >= 6 || (be->vt->abi_minor == 5 && bp_op_since(op) >= 4))
        return BP__OP_CALL(be, what, op, op, p, sig->n_in, in, sig->n_out, out);
    if (bp_op_since(op) >= 4) {
        /* A plugin built for 1.4 reads 1.4's layout (plugin.h): six of each,
         * all an op of 1.4 has (a 1.5 op never reaches it: bp__require_op). */
        bp_op_params_1_4 old = {.struct_size = sizeof old};
        memcpy(old.i, p->i, sizeof old.i);
        memcpy(old.f, p->f, sizeof old.f);
        return BP__OP_CALL(be, what, op, op, (const bp_op_params *)(const void *)&old, sig->n_in,
                           in, sig->n_out, out);
    }
    return bp__compat_run(be, op, p, in, out);
}

bp_status bp__op_run(bp_backend *be, bp_op op, const bp_op_params *p, const bp_view *const *in,
                     const bp_view *const *out)
{
    return op_run(be, op, p, in, out, NULL);
}

bp_status bp__op_run_checked(bp_backend *be, bp_op op, const bp_op_params *p,
                             const bp_view *const *in, const bp_view *const *out,
                             const bp__index_rule *rule)
{
    return op_run(be, op, p, in, out, be->graph && rule && rule->input >= 0 ? rule : NULL);
}

bp_status bp__op_run_prepared(bp_backend *be, void *prepared, bp_op op, const bp_op_params *p,
                              const bp_view *const *in, const bp_view *const *out)
{
    const bp__op_sig *sig = bp__op_sig_of(op);
    return BP__OP_CALL(be, bp_op_name(op), prepared_op, prepared, op, p, sig->n_in, in,
                       sig->n_out, out);
}

bp_status bp__op_run_prepared_chain(bp_backend *be, void *prepared, bp_op op,
                                    const bp_op_params *p, int32_t n_operands,
                                    const bp_view *const *in, const bp_view *const *out)
{
    const bp__op_sig *sig = bp__op_sig_of(op);
    return BP__OP_CALL(be, bp_op_name(op), prepared_op, prepared, op, p,
                       sig->n_in + n_operands, in, sig->n_out, out);
}

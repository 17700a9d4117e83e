/* add is one ulp off (every element) for f32 when there are more than 3
 * elements; every other op and dtype is the template's. */
#include "wrong.h"

static bp_status wrong_op(BPW_OP_ARGS)
{
    bp_status st = tpl_op(BPW_OP_PASS);
    const bp_view *o = out[0];
    if (st != BP_OK || op != BP_OP_ADD || o->dtype != BP_F32 || bpw_numel(o) <= 3)
        return st;
    float *f = (float *)tpl_base(o);
    tpl_walk w;
    for (tpl_walk_init(&w, 1, (const bp_view *[]){o}); w.left; tpl_walk_next(&w))
        f[w.at[0]] = nextafterf(f[w.at[0]], INFINITY); /* the deliberate bug */
    return BP_OK;
}

static const bp_plugin desc = {BPW_TEMPLATE_FIELDS("wrong_value", "add f32 off by one ulp"),
                               .op = wrong_op};
BPW_EXPORT_DESCRIPTOR(desc)

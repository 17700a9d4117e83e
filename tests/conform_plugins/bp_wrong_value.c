/* add is one ulp off (every element) for f32 when there are more than 3
 * elements; every other op and dtype is the template's. */
#include "wrong.h"

static bp_status wrong_binary(void *dev, bp_op op, const bp_view *a, const bp_view *b,
                              const bp_view *out)
{
    bp_status st = tpl_binary(dev, op, a, b, out);
    if (st != BP_OK || op != BP_OP_ADD || out->dtype != BP_F32 || bpw_numel(out) <= 3)
        return st;
    float *o = (float *)tpl_base(out);
    tpl_walk w;
    for (tpl_walk_init(&w, 1, (const bp_view *[]){out}); w.left; tpl_walk_next(&w))
        o[w.at[0]] = nextafterf(o[w.at[0]], INFINITY); /* the deliberate bug */
    return BP_OK;
}

static const bp_plugin desc = {BPW_TEMPLATE_FIELDS("wrong_value", "add f32 off by one ulp"),
                               .binary = wrong_binary};
BPW_EXPORT_DESCRIPTOR(desc)

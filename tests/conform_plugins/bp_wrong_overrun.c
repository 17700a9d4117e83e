/* sub computes the right values, then writes one element past the end of
 * its (dense) output; the guard bytes around every output must catch it. */
#include "wrong.h"

static bp_status wrong_op(BPW_OP_ARGS)
{
    bp_status st = tpl_op(BPW_OP_PASS);
    if (st != BP_OK || op != BP_OP_SUB)
        return st;
    size_t es = bp_dtype_size(out[0]->dtype);
    memset(tpl_base(out[0]) + bpw_numel(out[0]) * (int64_t)es, 0x5a, es); /* the deliberate bug */
    return BP_OK;
}

static const bp_plugin desc = {BPW_TEMPLATE_FIELDS("wrong_overrun", "sub writes past its output"),
                               .op = wrong_op};
BPW_EXPORT_DESCRIPTOR(desc)

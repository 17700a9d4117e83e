/* sub computes the right values, then writes one element past the end of
 * its (dense) output; the guard bytes around every output must catch it. */
#include "wrong.h"

static bp_status wrong_binary(void *dev, bp_op op, const bp_view *a, const bp_view *b,
                              const bp_view *out)
{
    bp_status st = tpl_binary(dev, op, a, b, out);
    if (st != BP_OK || op != BP_OP_SUB)
        return st;
    size_t es = bp_dtype_size(out->dtype);
    memset(tpl_base(out) + bpw_numel(out) * (int64_t)es, 0x5a, es); /* the deliberate bug */
    return BP_OK;
}

static const bp_plugin desc = {BPW_TEMPLATE_FIELDS("wrong_overrun", "sub writes past its output"),
                               .binary = wrong_binary};
BPW_EXPORT_DESCRIPTOR(desc)

/* supports() claims pow for f32 and f64, but the binary entry (the
 * template's) refuses it with BP_ERR_UNSUPPORTED_OP: a claimed op that is
 * refused is FAIL, not UNSUPPORTED. */
#include "wrong.h"

static bool wrong_supports(void *dev, bp_op op, bp_dtype dtype)
{
    if (op == BP_OP_POW) /* the deliberate lie */
        return dtype == BP_F32 || dtype == BP_F64;
    return tpl_supports(dev, op, dtype);
}

static const bp_plugin desc = {BPW_TEMPLATE_FIELDS("wrong_supports", "supports() claims pow"),
                               .supports = wrong_supports};
BPW_EXPORT_DESCRIPTOR(desc)

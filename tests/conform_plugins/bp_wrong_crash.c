/* exp crashes (SIGSEGV) on every call; the suite must report CRASH for exp
 * and go on with the other ops. */
#include <signal.h>

#include "wrong.h"

static bp_status wrong_unary(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    if (op == BP_OP_EXP)
        raise(SIGSEGV); /* the deliberate bug */
    return tpl_unary(dev, op, x, out);
}

static const bp_plugin desc = {BPW_TEMPLATE_FIELDS("wrong_crash", "exp crashes"),
                               .unary = wrong_unary};
BPW_EXPORT_DESCRIPTOR(desc)

/* exp crashes (SIGSEGV) on every call; the suite must report CRASH for exp
 * and go on with the other ops. */
#include <signal.h>

#include "wrong.h"

static bp_status wrong_op(BPW_OP_ARGS)
{
    if (op == BP_OP_EXP)
        raise(SIGSEGV); /* the deliberate bug */
    return tpl_op(BPW_OP_PASS);
}

static const bp_plugin desc = {BPW_TEMPLATE_FIELDS("wrong_crash", "exp crashes"),
                               .op = wrong_op};
BPW_EXPORT_DESCRIPTOR(desc)

/* Plugins built before ABI 1.6 take the ops of ABI 1.0 through typed
 * entries, one per family (plugin.h: unary, binary, where, reduce, matmul,
 * copy, gather, softmax, fill, arange, random). The core hands every op to
 * bp__op_run with its views and bp_op_params, as a plugin of 1.6 receives
 * it; this file turns such a call into the typed entry's, reading each
 * kind's parameters where opcodes.h puts them. Nothing else in the core
 * knows the typed entries. */
#include <string.h>

#include "internal.h"

bool bp__compat_has_entry(const bp_backend *b, bp_op op)
{
    const bp_plugin *vt = b->vt;
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: return BP__HAS(vt, unary);
    case BP_KIND_BINARY: return BP__HAS(vt, binary);
    case BP_KIND_WHERE: return BP__HAS(vt, where);
    case BP_KIND_REDUCE: return BP__HAS(vt, reduce);
    case BP_KIND_MATMUL: return BP__HAS(vt, matmul);
    case BP_KIND_MOVEMENT: return BP__HAS(vt, copy);
    case BP_KIND_GATHER: return BP__HAS(vt, gather);
    case BP_KIND_SOFTMAX: return BP__HAS(vt, softmax);
    case BP_KIND_FILL: return BP__HAS(vt, fill);
    case BP_KIND_ARANGE: return BP__HAS(vt, arange);
    case BP_KIND_RANDOM: return BP__HAS(vt, random);
    default: return false; /* not an op of 1.0 */
    }
}

bp_status bp__compat_run(bp_backend *be, bp_op op, const bp_op_params *p, const bp_view *const *in,
                         const bp_view *const *out)
{
    const char *what = bp_op_name(op);
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: return BP__OP_CALL(be, what, unary, op, in[0], out[0]);
    case BP_KIND_BINARY: return BP__OP_CALL(be, what, binary, op, in[0], in[1], out[0]);
    case BP_KIND_WHERE: return BP__OP_CALL(be, what, where, in[0], in[1], in[2], out[0]);
    case BP_KIND_REDUCE: return BP__OP_CALL(be, what, reduce, op, in[0], (int32_t)p->i[0], out[0]);
    case BP_KIND_MATMUL: return BP__OP_CALL(be, what, matmul, in[0], in[1], out[0]);
    case BP_KIND_MOVEMENT: return BP__OP_CALL(be, what, copy, op, in[0], out[0]);
    case BP_KIND_GATHER: return BP__OP_CALL(be, what, gather, in[0], in[1], (int32_t)p->i[0], out[0]);
    case BP_KIND_SOFTMAX: return BP__OP_CALL(be, what, softmax, op, in[0], out[0]);
    case BP_KIND_FILL: return BP__OP_CALL(be, what, fill, out[0], (const void *)&p->i[0]);
    case BP_KIND_ARANGE: return BP__OP_CALL(be, what, arange, p->f[0], p->f[1], out[0]);
    case BP_KIND_RANDOM:
        return BP__OP_CALL(be, what, random, op, (uint64_t)p->i[0], (uint64_t)p->i[1], p->f[0],
                           p->f[1], out[0]);
    default:
        return bp__error(BP_ERR_BACKEND, "%s: not an op of ABI 1.0 (a defect in the core)", what);
    }
}

/* Gradient rules of MATMUL and GEMM: the products with the other operand
 * transposed. A broadcast batch axis is a stride-0 axis of the operand's
 * view; the reverse pass (grad.c) sums it back. */
#include "grad_rule.h"


bp_status bp__vjp_matmul(bp__vjp *c)
{
    if (c->want[0]) /* g b^T */
        c->gx[0] = bp__e_matmul(c, G, bp__e_mT(c, IN(1)));
    if (c->want[1]) /* a^T g */
        c->gx[1] = bp__e_matmul(c, bp__e_mT(c, IN(0)), G);
    return c->st;
}

/* y = alpha a b + beta c, a and b as views (a transpose is strides). */
bp_status bp__vjp_gemm(bp__vjp *c)
{
    double alpha = c->n->params->f[0], beta = c->n->params->f[1];
    const bp_tensor *ga = alpha == 1.0 ? G : bp__e_bin(c, BP_OP_MUL, G, bp__e_const(c, G, alpha));
    if (c->want[0])
        c->gx[0] = bp__e_matmul(c, ga, bp__e_mT(c, IN(1)));
    if (c->want[1])
        c->gx[1] = bp__e_matmul(c, bp__e_mT(c, IN(0)), ga);
    if (c->want[2] && c->n->ref[2] != BP__GREF_NONE)
        c->gx[2] = beta == 1.0 ? G : bp__e_bin(c, BP_OP_MUL, G, bp__e_const(c, G, beta));
    return c->st;
}

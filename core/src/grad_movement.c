/* Gradient rule of the MOVEMENT kind: transpose, slice, concat,
 * broadcast_to, pad and copy move elements without changing them, so the
 * input's view receives the output's gradient as it is; the reverse pass
 * (grad.c) puts it back where the view reads from (a transpose's strides, a
 * slice's offset, a broadcast's repeats summed). cast converts it back. */
#include "grad_rule.h"

bp_status bp__vjp_movement(bp__vjp *c)
{
    bp_dtype in = c->n->view[0].dtype;
    c->gx[0] = c->gy[0]->dtype == in ? c->gy[0] : bp__e_cast(c, c->gy[0], in);
    return c->st;
}

/* trilu keeps a triangle: the gradient is the same triangle of the output's. */
bp_status bp__vjp_trilu(bp__vjp *c)
{
    bp_tensor *t = NULL;
    bp_status st = bp_trilu(c->gy[0], c->n->params->i[0] != 0, c->n->params->i[1], &t);
    c->gx[0] = bp__e_keep(c, st, t);
    return c->st;
}

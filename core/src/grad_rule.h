/* Shorthand for the gradient rules (grad_<kind>.c, not grad.c): each is an
 * expression builder of grad_internal.h on the rule's context `c`, so a
 * rule reads as its formula. */
#ifndef BP_GRAD_RULE_H
#define BP_GRAD_RULE_H

#include "grad_internal.h"

#define G (c->gy[0])                                   /* the output's gradient */
#define IN(k) bp__vjp_in(c, k)                         /* the forward input k */
#define OUT bp__vjp_out(c, 0)                          /* the forward output */
#define K(v) bp__e_const(c, G, (v))                    /* a constant of G's dtype */
#define UN(OP, x) bp__e_un(c, BP_OP_##OP, (x))
#define BIN(OP, a, b) bp__e_bin(c, BP_OP_##OP, (a), (b))
#define ADD(a, b) BIN(ADD, a, b)
#define SUB(a, b) BIN(SUB, a, b)
#define MUL(a, b) BIN(MUL, a, b)
#define DIV(a, b) BIN(DIV, a, b)
#define WHERE(p, a, b) bp__e_where(c, (p), (a), (b))
#define KEEP(st, t) bp__e_keep(c, (st), (t))           /* a tensor made by a public call */
#define RESHAPE(x, rank, shape) bp__e_reshape(c, (x), (rank), (shape))

#endif

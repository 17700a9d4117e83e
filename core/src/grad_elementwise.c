/* Gradient rules of the elementwise kinds: UNARY, BINARY, WHERE, CLIP.
 * Each is d(out)/d(in) times the output's gradient, written with the public
 * ops (so it records, compiles and runs on every backend). Broadcast
 * operands need nothing here: their views repeat elements with stride 0,
 * and the reverse pass (grad.c) sums those. At a kink (relu at 0) the rule
 * takes the side PyTorch takes. */
#include "grad_rule.h"

#define F0 (c->n->params->f[0])
#define F1 (c->n->params->f[1])

/* d y / d x of y = f(x), without the output gradient; NULL where the rule
 * is better written whole (below). */
static const bp_tensor *unary_slope(bp__vjp *c, const bp_tensor *x)
{
    switch (c->n->op) {
    case BP_OP_ABS: return UN(SIGN, x);
    case BP_OP_EXP: return OUT;
    case BP_OP_LOG: return UN(RECIPROCAL, x);
    case BP_OP_SQRT: return DIV(K(0.5), OUT);
    case BP_OP_RSQRT: return MUL(K(-0.5), MUL(OUT, MUL(OUT, OUT)));
    case BP_OP_RECIPROCAL: return UN(NEG, MUL(OUT, OUT));
    case BP_OP_SIN: return UN(COS, x);
    case BP_OP_COS: return UN(NEG, UN(SIN, x));
    case BP_OP_TAN: return ADD(K(1), MUL(OUT, OUT));
    case BP_OP_TANH: return SUB(K(1), MUL(OUT, OUT));
    case BP_OP_SIGMOID: return MUL(OUT, SUB(K(1), OUT));
    case BP_OP_GELU: /* Phi(x) + x phi(x) */
        return ADD(MUL(K(0.5), ADD(K(1), UN(ERF, MUL(x, K(0.70710678118654752440))))),
                   MUL(x, MUL(K(0.39894228040143267794), UN(EXP, MUL(K(-0.5), MUL(x, x))))));
    case BP_OP_ERF: return MUL(K(1.12837916709551257390), UN(EXP, UN(NEG, MUL(x, x))));
    case BP_OP_ACOS: return UN(NEG, UN(RSQRT, SUB(K(1), MUL(x, x))));
    case BP_OP_ASIN: return UN(RSQRT, SUB(K(1), MUL(x, x)));
    case BP_OP_ATAN: return UN(RECIPROCAL, ADD(K(1), MUL(x, x)));
    case BP_OP_ACOSH: return UN(RSQRT, SUB(MUL(x, x), K(1)));
    case BP_OP_ASINH: return UN(RSQRT, ADD(MUL(x, x), K(1)));
    case BP_OP_ATANH: return UN(RECIPROCAL, SUB(K(1), MUL(x, x)));
    case BP_OP_SINH: return UN(COSH, x);
    case BP_OP_COSH: return UN(SINH, x);
    case BP_OP_LOG1P: return UN(RECIPROCAL, ADD(K(1), x));
    case BP_OP_EXPM1: return ADD(OUT, K(1));
    case BP_OP_SOFTPLUS: return UN(SIGMOID, x);
    case BP_OP_SOFTSIGN: {
        const bp_tensor *d = ADD(K(1), UN(ABS, x));
        return UN(RECIPROCAL, MUL(d, d));
    }
    case BP_OP_SILU: { /* s (1 + x (1 - s)) */
        const bp_tensor *s = UN(SIGMOID, x);
        return MUL(s, ADD(K(1), MUL(x, SUB(K(1), s))));
    }
    case BP_OP_SQUARE: return MUL(K(2), x);
    case BP_OP_MISH: { /* tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2) */
        const bp_tensor *t = UN(TANH, UN(SOFTPLUS, x));
        return ADD(t, MUL(MUL(x, UN(SIGMOID, x)), SUB(K(1), MUL(t, t))));
    }
    case BP_OP_RELU: return WHERE(BIN(GT, x, K(0)), K(1), K(0));
    case BP_OP_ELU: return WHERE(BIN(LT, x, K(0)), ADD(OUT, K(F0)), K(1));
    case BP_OP_CELU: return WHERE(BIN(LT, x, K(0)), UN(EXP, DIV(x, K(F0))), K(1));
    case BP_OP_SELU: return WHERE(BIN(GT, x, K(0)), K(F1), ADD(OUT, K(F0 * F1)));
    case BP_OP_LEAKY_RELU: return WHERE(BIN(LT, x, K(0)), K(F0), K(1));
    case BP_OP_THRESHOLDED_RELU: return WHERE(BIN(GT, x, K(F0)), K(1), K(0));
    case BP_OP_HARD_SIGMOID: {
        const bp_tensor *h = ADD(MUL(K(F0), x), K(F1));
        return WHERE(BIN(LOGICAL_AND, BIN(GT, h, K(0)), BIN(LT, h, K(1))), K(F0), K(0));
    }
    case BP_OP_HARDSWISH: { /* h = x/6 + 1/2: 0 below 0, 1 above 1, x/3 + 1/2 between */
        const bp_tensor *h = ADD(DIV(x, K(6)), K(0.5));
        return WHERE(BIN(LT, h, K(0)), K(0),
                     WHERE(BIN(GT, h, K(1)), K(1), ADD(DIV(x, K(3)), K(0.5))));
    }
    case BP_OP_SHRINK:
        return WHERE(BIN(LOGICAL_OR, BIN(LT, x, K(-F1)), BIN(GT, x, K(F1))), K(1), K(0));
    default:
        c->st = bp__error(BP_ERR_BACKEND, "bp_graph_grad: no unary rule for %s (a defect in "
                          "the gradient column)", bp_op_name(c->n->op));
        return NULL;
    }
}

bp_status bp__vjp_unary(bp__vjp *c)
{
    if (c->n->op == BP_OP_NEG)
        c->gx[0] = UN(NEG, G);
    else
        c->gx[0] = MUL(G, unary_slope(c, IN(0)));
    return c->st;
}

/* The gradient of a or b where a wins a max/min (ties: half each, as
 * PyTorch's maximum). */
static void select_rule(bp__vjp *c, bp_op wins)
{
    const bp_tensor *a = IN(0), *b = IN(1);
    const bp_tensor *half = MUL(G, K(0.5)), *zero = K(0);
    const bp_tensor *tie = BIN(EQ, a, b);
    if (c->want[0])
        c->gx[0] = WHERE(bp__e_bin(c, wins, a, b), G, WHERE(tie, half, zero));
    if (c->want[1])
        c->gx[1] = WHERE(bp__e_bin(c, wins, b, a), G, WHERE(tie, half, zero));
}

bp_status bp__vjp_binary(bp__vjp *c)
{
    switch (c->n->op) {
    case BP_OP_ADD:
        c->gx[0] = G, c->gx[1] = G;
        break;
    case BP_OP_SUB:
        c->gx[0] = G;
        if (c->want[1])
            c->gx[1] = UN(NEG, G);
        break;
    case BP_OP_MUL:
        if (c->want[0])
            c->gx[0] = MUL(G, IN(1));
        if (c->want[1])
            c->gx[1] = MUL(G, IN(0));
        break;
    case BP_OP_DIV: /* a / b: g / b and -g y / b */
        if (c->want[0])
            c->gx[0] = DIV(G, IN(1));
        if (c->want[1])
            c->gx[1] = UN(NEG, DIV(MUL(G, OUT), IN(1)));
        break;
    case BP_OP_POW: /* a^b: g b a^(b-1); g y log a (0 where a <= 0, as PyTorch at a = 0) */
        if (c->want[0])
            c->gx[0] = MUL(G, MUL(IN(1), BIN(POW, IN(0), SUB(IN(1), K(1)))));
        if (c->want[1]) {
            const bp_tensor *pos = BIN(GT, IN(0), K(0));
            c->gx[1] = WHERE(pos, MUL(MUL(G, OUT), UN(LOG, WHERE(pos, IN(0), K(1)))), K(0));
        }
        break;
    case BP_OP_MAXIMUM:
        select_rule(c, BP_OP_GT);
        break;
    case BP_OP_MINIMUM:
        select_rule(c, BP_OP_LT);
        break;
    case BP_OP_MOD:  /* a - b floor(a / b): -g floor(a / b) = -g (a - y) / b */
    case BP_OP_FMOD: /* a - b trunc(a / b) */
        c->gx[0] = G;
        if (c->want[1])
            c->gx[1] = UN(NEG, MUL(G, DIV(SUB(IN(0), OUT), IN(1))));
        break;
    case BP_OP_PRELU: { /* x < 0 ? x slope : x */
        const bp_tensor *neg = BIN(LT, IN(0), K(0));
        if (c->want[0])
            c->gx[0] = WHERE(neg, MUL(G, IN(1)), G);
        if (c->want[1])
            c->gx[1] = WHERE(neg, MUL(G, IN(0)), K(0));
        break;
    }
    default:
        return bp__error(BP_ERR_BACKEND, "bp_graph_grad: no binary rule for %s (a defect in "
                         "the gradient column)", bp_op_name(c->n->op));
    }
    return c->st;
}

bp_status bp__vjp_where(bp__vjp *c)
{
    const bp_tensor *cond = IN(0), *zero = K(0);
    if (c->want[1])
        c->gx[1] = WHERE(cond, G, zero);
    if (c->want[2])
        c->gx[2] = WHERE(cond, zero, G);
    return c->st;
}

/* y = min(max(x, lo), hi): x where lo <= x <= hi; lo where x < lo (and lo
 * <= hi); hi where x > hi, or where hi < lo (then y is hi). */
bp_status bp__vjp_clip(bp__vjp *c)
{
    const bp_tensor *x = IN(0), *zero = K(0);
    const bp_tensor *lo = c->n->ref[1] != BP__GREF_NONE ? IN(1) : NULL;
    const bp_tensor *hi = c->n->ref[2] != BP__GREF_NONE ? IN(2) : NULL;
    const bp_tensor *above = hi ? BIN(GT, x, hi) : NULL;
    const bp_tensor *below = lo ? BIN(LT, x, lo) : NULL;
    const bp_tensor *lo_wins = below, *hi_wins = above;
    if (lo && hi) {
        const bp_tensor *crossed = BIN(LT, hi, lo);
        hi_wins = BIN(LOGICAL_OR, above, crossed);
        lo_wins = BIN(LOGICAL_AND, below, UN(LOGICAL_NOT, crossed));
    }
    const bp_tensor *gx = G;
    if (lo_wins)
        gx = WHERE(lo_wins, zero, gx);
    if (hi_wins)
        gx = WHERE(hi_wins, zero, gx);
    if (c->want[0])
        c->gx[0] = gx;
    if (c->want[1] && lo)
        c->gx[1] = WHERE(lo_wins, G, zero);
    if (c->want[2] && hi)
        c->gx[2] = WHERE(hi_wins, G, zero);
    return c->st;
}

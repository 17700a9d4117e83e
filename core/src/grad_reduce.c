/* Gradient rules of the kinds that work along axes: REDUCE (the reduced
 * axes are the view's last i0), SOFTMAX and SCAN (along the view's last
 * axis). The output's gradient is broadcast back over the reduced axes. */
#include "grad_rule.h"


/* prod's gradient without dividing by x (exact where x has zeros): the
 * product of the others, as exclusive products from both ends of the
 * reduced axes flattened into one. */
static const bp_tensor *prod_of_others(bp__vjp *c, const bp_tensor *x, int32_t n_red)
{
    int64_t shape[BP_MAX_RANK], reduced = 1;
    int32_t kept = x->rank - n_red;
    for (int32_t k = 0; k < kept; k++)
        shape[k] = x->shape[k];
    for (int32_t k = kept; k < x->rank; k++)
        reduced *= x->shape[k];
    shape[kept] = reduced;
    const bp_tensor *flat = RESHAPE(x, kept + 1, shape);
    const bp_tensor *others = MUL(bp__e_cumprod_last(c, flat, true, false),
                                  bp__e_cumprod_last(c, flat, true, true));
    return others ? RESHAPE(others, x->rank, x->shape) : NULL;
}

bp_status bp__vjp_reduce(bp__vjp *c)
{
    const bp__gnode *n = c->n;
    const bp_view *vx = &n->view[0];
    int32_t n_red = (int32_t)n->params->i[0], rank = vx->rank;
    double count = 1;
    for (int32_t k = rank - n_red; k < rank; k++)
        count *= (double)vx->shape[k];
    const bp_tensor *x = IN(0);
    const bp_tensor *g = bp__e_expand(c, G, rank, vx->shape);
    const bp_tensor *y = NULL;
    if (n->op != BP_OP_SUM && n->op != BP_OP_MEAN && n->op != BP_OP_REDUCE_L1 &&
        n->op != BP_OP_REDUCE_SUM_SQUARE && n->op != BP_OP_PROD)
        y = bp__e_expand(c, OUT, rank, vx->shape);
    switch (n->op) {
    case BP_OP_SUM: c->gx[0] = g; break;
    case BP_OP_MEAN: c->gx[0] = DIV(g, K(count)); break;
    case BP_OP_PROD: c->gx[0] = MUL(g, prod_of_others(c, x, n_red)); break;
    case BP_OP_MAX:
    case BP_OP_MIN: { /* shared evenly among ties, as PyTorch's amax */
        const bp_tensor *hit = bp__e_cast(c, BIN(EQ, x, y), x ? x->dtype : BP_F32);
        const bp_tensor *ties = bp__e_reduce_last(c, BP_OP_SUM, hit, n_red);
        c->gx[0] = DIV(MUL(g, hit), ties);
        break;
    }
    case BP_OP_LOGSUMEXP: c->gx[0] = MUL(g, UN(EXP, SUB(x, y))); break;
    case BP_OP_REDUCE_L1: c->gx[0] = MUL(g, UN(SIGN, x)); break;
    case BP_OP_REDUCE_L2: { /* x / y; 0 where y is 0 */
        const bp_tensor *zero = BIN(EQ, y, K(0));
        c->gx[0] = MUL(g, WHERE(zero, K(0), DIV(x, WHERE(zero, K(1), y))));
        break;
    }
    case BP_OP_REDUCE_SUM_SQUARE: c->gx[0] = MUL(g, MUL(K(2), x)); break;
    case BP_OP_REDUCE_LOG_SUM: c->gx[0] = MUL(g, UN(EXP, UN(NEG, y))); break;
    case BP_OP_REDUCE_VAR:
    case BP_OP_REDUCE_STD: {
        const bp_tensor *centred = SUB(x, bp__e_reduce_last(c, BP_OP_MEAN, x, n_red));
        double dof = count - n->params->f[0];
        if (n->op == BP_OP_REDUCE_VAR)
            c->gx[0] = MUL(g, MUL(K(2.0 / dof), centred));
        else
            c->gx[0] = MUL(g, DIV(centred, MUL(K(dof), y)));
        break;
    }
    default:
        return bp__error(BP_ERR_BACKEND, "bp_graph_grad: no reduce rule for %s (a defect in "
                         "the gradient column)", bp_op_name(n->op));
    }
    return c->st;
}

bp_status bp__vjp_softmax(bp__vjp *c)
{
    const bp_tensor *y = OUT;
    if (c->n->op == BP_OP_SOFTMAX) /* y (g - sum(g y)) */
        c->gx[0] = MUL(y, SUB(G, bp__e_reduce_last(c, BP_OP_SUM, MUL(G, y), 1)));
    else /* g - e^y sum(g) */
        c->gx[0] = SUB(G, MUL(UN(EXP, y), bp__e_reduce_last(c, BP_OP_SUM, G, 1)));
    return c->st;
}

/* cumsum: each input reaches the outputs after it (before it, reversed):
 * the gradient is the cumulative sum the other way, as exclusive as the
 * op. */
/* cumprod along the last axis (n long), exact where x has zeros (no
 * division): gx[k] = sum over the outputs i that hold x[k] of G[i] times
 * the product of the other factors of output i. X'[k, j] = x[j] but 1 at
 * j = k; the same cumprod of each row k gives P[k, i], output i's product
 * without x[k], and a triangle keeps the outputs i that hold x[k]: i >= k
 * (inclusive) or i > k (exclusive), the other way reversed. Costs n^2 per
 * row: the scans this is for are short. */
static const bp_tensor *cumprod_grad(bp__vjp *c, bool exclusive, bool reverse)
{
    const bp_tensor *x = IN(0);
    if (c->st != BP_OK)
        return NULL;
    int32_t r = x->rank;
    int64_t n = x->shape[r - 1], row[BP_MAX_RANK + 1];
    for (int32_t k = 0; k < r - 1; k++)
        row[k] = x->shape[k];
    row[r - 1] = 1, row[r] = n; /* (..., 1, n) */
    bp_tensor *eye = NULL, *ones = NULL, *tri = NULL;
    bp_status st = bp_eye(c->rec, BP_BOOL, n, n, &eye);
    const bp_tensor *diag = bp__e_keep(c, st, eye);
    st = c->st == BP_OK ? bp_ones(c->rec, x->dtype, 2, (const int64_t[]){n, n}, &ones) : c->st;
    const bp_tensor *all = bp__e_keep(c, st, ones);
    /* row k, column i: forward keeps i >= k (upper), reverse i <= k (lower) */
    st = c->st == BP_OK ? bp_trilu(all, !reverse, reverse ? -(int64_t)exclusive : exclusive, &tri)
                        : c->st;
    const bp_tensor *keep_i = bp__e_keep(c, st, tri);
    const bp_tensor *xk = WHERE(diag, K(1), RESHAPE(x, r + 1, row));
    const bp_tensor *p = bp__e_cumprod_last(c, xk, exclusive, reverse); /* (..., n, n) */
    const bp_tensor *sum = bp__e_reduce_last(c, BP_OP_SUM,
                                             MUL(MUL(p, keep_i), RESHAPE(G, r + 1, row)), 1);
    return RESHAPE(sum, r, x->shape);
}

bp_status bp__vjp_scan(bp__vjp *c)
{
    bool exclusive = c->n->params->i[0] != 0, reverse = c->n->params->i[1] != 0;
    switch (c->n->op) {
    case BP_OP_CUMSUM:
        c->gx[0] = bp__e_cumsum_last(c, G, exclusive, !reverse);
        return c->st;
    case BP_OP_CUMPROD:
        c->gx[0] = cumprod_grad(c, exclusive, reverse);
        return c->st;
    default:
        return bp__error(BP_ERR_BACKEND, "bp_graph_grad: no scan rule for %s (a defect in "
                         "the gradient column)", bp_op_name(c->n->op));
    }
}

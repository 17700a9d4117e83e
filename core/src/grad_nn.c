/* Gradient rules of the nn kinds: NORM (layer_norm, rms_norm) and CONV
 * (conv). The statistics are recomputed from x (the forward pass may not
 * have kept them); a scale or bias broadcast to x gets its gradient in x's
 * shape and the reverse pass sums it back (grad.c). conv's gradients are
 * convolutions again: the input's a transposed convolution by the same
 * weights, the weights' a convolution of the input by the output's
 * gradient with batch and channels swapped (stride and dilation trade
 * places), per group. */
#include <math.h>

#include "grad_rule.h"

#define MEAN_LAST(x, n) bp__e_reduce_last(c, BP_OP_MEAN, (x), (n))

static bp_status stats_unsupported(bp__vjp *c)
{
    return bp__error(BP_ERR_UNSUPPORTED_OP,
                     "bp_graph_grad: the gradient reaches %s's mean or inv_std output, which "
                     "has no gradient rule yet; differentiate through its first output only "
                     "(compute the statistics with bp_mean and bp_rsqrt where you need their "
                     "gradient)",
                     bp_op_name(c->n->op));
}

/* t (C) as (1, C, 1...) of rank r, to broadcast along x's channels. */
static const bp_tensor *per_channel(bp__vjp *c, const bp_tensor *t, int32_t r)
{
    if (c->st != BP_OK || !t)
        return NULL;
    int64_t shape[BP_MAX_RANK];
    for (int32_t k = 0; k < r; k++)
        shape[k] = k == 1 ? t->shape[0] : 1;
    return RESHAPE(t, r, shape);
}

static const bp_tensor *bias_grad(bp__vjp *c, const bp_tensor *g);

/* batch_norm (inference form): y = scale (x - mean) rs + bias with rs =
 * 1 / sqrt(var + eps) per channel, so every gradient is elementwise, the
 * per-channel ones summed over the other axes. instance_norm: layer_norm's
 * rule over each (n, c)'s spatial axes, scale and bias per channel. */
static bp_status channel_norm(bp__vjp *c)
{
    const bp__gnode *n = c->n;
    int32_t r = n->view[0].rank;
    double eps = n->params->f[0];
    const bp_tensor *x = IN(0), *scale = per_channel(c, IN(1), r);
    if (n->op == BP_OP_BATCH_NORM) {
        const bp_tensor *mean = per_channel(c, IN(3), r), *var = per_channel(c, IN(4), r);
        const bp_tensor *rs = UN(RSQRT, ADD(var, K(eps))), *xc = SUB(x, mean);
        const bp_tensor *gsr = MUL(MUL(G, scale), rs); /* dy/dx */
        if (c->want[0])
            c->gx[0] = gsr;
        if (c->want[1])
            c->gx[1] = bias_grad(c, MUL(MUL(G, xc), rs));
        if (c->want[2])
            c->gx[2] = bias_grad(c, G);
        if (c->want[3])
            c->gx[3] = bias_grad(c, UN(NEG, gsr));
        if (c->want[4]) /* d rs / d var = -rs^3 / 2 */
            c->gx[4] = bias_grad(c, MUL(MUL(gsr, xc), MUL(MUL(rs, rs), K(-0.5))));
        return c->st;
    }
    int32_t sp = r - 2;
    const bp_tensor *xc = SUB(x, MEAN_LAST(x, sp));
    const bp_tensor *rstd = UN(RSQRT, ADD(MEAN_LAST(MUL(xc, xc), sp), K(eps)));
    const bp_tensor *xhat = MUL(xc, rstd), *gs = MUL(G, scale);
    if (c->want[0])
        c->gx[0] = MUL(rstd, SUB(SUB(gs, MEAN_LAST(gs, sp)),
                                 MUL(xhat, MEAN_LAST(MUL(gs, xhat), sp))));
    if (c->want[1])
        c->gx[1] = bias_grad(c, MUL(G, xhat));
    if (c->want[2])
        c->gx[2] = bias_grad(c, G);
    return c->st;
}

bp_status bp__vjp_norm(bp__vjp *c)
{
    if (c->n->op == BP_OP_BATCH_NORM || c->n->op == BP_OP_INSTANCE_NORM)
        return channel_norm(c);
    const bp__gnode *n = c->n;
    int32_t r = (int32_t)n->params->i[0];
    double eps = n->params->f[0];
    const bp_tensor *x = IN(0);
    const bp_tensor *scale = n->ref[1] != BP__GREF_NONE ? IN(1) : NULL;
    const bp_tensor *gs = scale ? MUL(G, scale) : G;
    switch (n->op) {
    case BP_OP_LAYER_NORM: {
        if (c->gy[1] || c->gy[2])
            return stats_unsupported(c);
        /* xhat = (x - mean) rstd; dx = rstd (gs - mean(gs) - xhat mean(gs xhat)) */
        const bp_tensor *xc = SUB(x, MEAN_LAST(x, r));
        const bp_tensor *rstd = UN(RSQRT, ADD(MEAN_LAST(MUL(xc, xc), r), K(eps)));
        const bp_tensor *xhat = MUL(xc, rstd);
        if (c->want[0])
            c->gx[0] = MUL(rstd, SUB(SUB(gs, MEAN_LAST(gs, r)),
                                     MUL(xhat, MEAN_LAST(MUL(gs, xhat), r))));
        if (c->want[1] && scale)
            c->gx[1] = MUL(G, xhat);
        if (c->want[2] && n->ref[2] != BP__GREF_NONE)
            c->gx[2] = G;
        break;
    }
    case BP_OP_RMS_NORM: {
        /* y = x rr scale, rr = 1 / sqrt(mean(x^2) + eps):
         * dx = rr (gs - x rr^2 mean(gs x)) */
        const bp_tensor *rr = UN(RSQRT, ADD(MEAN_LAST(MUL(x, x), r), K(eps)));
        if (c->want[0])
            c->gx[0] = MUL(rr, SUB(gs, MUL(MUL(x, MUL(rr, rr)), MEAN_LAST(MUL(gs, x), r))));
        if (c->want[1] && scale)
            c->gx[1] = MUL(G, MUL(x, rr));
        break;
    }
    default:
        return bp__error(BP_ERR_BACKEND, "bp_graph_grad: no norm rule for %s (a defect in "
                         "the gradient column)", bp_op_name(n->op));
    }
    return c->st;
}

/* The node's window (its params, opcodes.h's layout) as a bp_window. */
static bp_window window_of(const bp__gnode *n, int32_t s)
{
    bp_window w = BP_WINDOW_INIT;
    for (int32_t j = 0; j < s; j++) {
        w.kernel[j] = n->params->i[j];
        w.strides[j] = n->params->i[3 + j];
        w.dilations[j] = n->params->i[6 + j];
        w.pads[j] = n->params->i[9 + j];
        w.pads[s + j] = n->params->i[12 + j];
    }
    w.groups = n->params->i[15] > 0 ? n->params->i[15] : 1;
    return w;
}

/* x[:, from:from+len] (axis 1) */
static const bp_tensor *channels(bp__vjp *c, const bp_tensor *x, int64_t from, int64_t len)
{
    if (c->st != BP_OK || !x)
        return NULL;
    int64_t starts[BP_MAX_RANK] = {0}, stops[BP_MAX_RANK];
    for (int32_t k = 0; k < x->rank; k++)
        stops[k] = x->shape[k];
    starts[1] = from;
    stops[1] = from + len;
    bp_tensor *t = NULL;
    bp_status st = bp_slice(x, starts, stops, NULL, &t);
    return KEEP(st, t);
}

static const bp_tensor *swap01(bp__vjp *c, const bp_tensor *x)
{
    if (c->st != BP_OK || !x)
        return NULL;
    int32_t perm[BP_MAX_RANK];
    for (int32_t k = 0; k < x->rank; k++)
        perm[k] = k;
    perm[0] = 1, perm[1] = 0;
    bp_tensor *t = NULL;
    bp_status st = bp_transpose(x, perm, &t);
    return KEEP(st, t);
}

/* dL/dw for one group: x (N, Cg, D...), g (N, Mg, O...) -> (Mg, Cg, K...). */
static const bp_tensor *weight_grad(bp__vjp *c, const bp_tensor *x, const bp_tensor *g,
                                    const bp_window *fw, const int64_t *kernel, int32_t s)
{
    bp_window w = BP_WINDOW_INIT;
    for (int32_t j = 0; j < s; j++) {
        w.strides[j] = fw->dilations[j];
        w.dilations[j] = fw->strides[j];
        w.pads[j] = fw->pads[j];
        w.pads[s + j] = fw->pads[s + j];
    }
    const bp_tensor *xt = swap01(c, x), *gt = swap01(c, g); /* (Cg, N, D), (Mg, N, O) */
    if (c->st != BP_OK)
        return NULL;
    bp_tensor *full = NULL, *cut = NULL;
    bp_status st = bp_conv(xt, gt, NULL, &w, &full); /* (Cg, Mg, K' >= K) */
    if (st == BP_OK) {
        int64_t starts[BP_MAX_RANK] = {0}, stops[BP_MAX_RANK];
        for (int32_t k = 0; k < full->rank; k++)
            stops[k] = k < 2 ? full->shape[k] : kernel[k - 2];
        st = bp_slice(full, starts, stops, NULL, &cut);
    }
    bp_tensor_release(full);
    return swap01(c, KEEP(st, cut));
}

/* dL/dw of a convolution of u by w in groups (u's and gz's channels split
 * evenly among them): each group's weight_grad, joined along axis 0. */
static const bp_tensor *grouped_weight_grad(bp__vjp *c, const bp_tensor *u, const bp_tensor *gz,
                                            const bp_window *fw, const int64_t *kernel,
                                            int32_t s)
{
    int64_t groups = fw->groups;
    if (c->st != BP_OK || !u || !gz)
        return NULL;
    if (groups == 1)
        return weight_grad(c, u, gz, fw, kernel, s);
    if (groups > 64) {
        c->st = bp__error(BP_ERR_UNSUPPORTED_OP, "bp_graph_grad: %s's weight gradient with "
                          "more than 64 groups is not supported yet", bp_op_name(c->n->op));
        return NULL;
    }
    int64_t cu = u->shape[1] / groups, cz = gz->shape[1] / groups;
    const bp_tensor *parts[64];
    for (int64_t j = 0; j < groups; j++)
        parts[j] = weight_grad(c, channels(c, u, j * cu, cu), channels(c, gz, j * cz, cz), fw,
                               kernel, s);
    if (c->st != BP_OK)
        return NULL;
    bp_tensor *t = NULL;
    bp_status st = bp_concat((int32_t)groups, parts, 0, &t);
    return KEEP(st, t);
}

/* The bias's gradient: g summed over every axis but the channels. */
static const bp_tensor *bias_grad(bp__vjp *c, const bp_tensor *g)
{
    if (c->st != BP_OK || !g)
        return NULL;
    int32_t axes[BP_MAX_RANK], na = 0;
    for (int32_t k = 0; k < g->rank; k++)
        if (k != 1)
            axes[na++] = k;
    bp_tensor *t = NULL;
    bp_status st = bp_sum(g, na, axes, false, &t);
    return KEEP(st, t);
}

/* conv_transpose: the adjoint of a convolution by the same weights, so
 * d/dx is that convolution of the output's gradient, and d/dw the conv
 * weight gradient with the roles of input and output swapped. The output
 * is the natural one (stride (D - 1) + output_padding + dilation (K - 1)
 * + 1) less its pads; a negative pad (an output extended past the natural
 * one) holds positions no input reaches, so the gradient there is cut off
 * first, and the convolution's extra trailing positions (output_padding)
 * are cut from d/dx. */
static bp_status vjp_conv_transpose(bp__vjp *c, int32_t s, const bp_window *fw,
                                    const int64_t *kernel)
{
    const bp__gnode *n = c->n;
    const bp_view *vx = &n->view[0];
    bp_window cw = *fw;
    int64_t starts[BP_MAX_RANK] = {0}, stops[BP_MAX_RANK];
    for (int32_t k = 0; k < G->rank; k++)
        stops[k] = G->shape[k];
    for (int32_t j = 0; j < s; j++) {
        cw.kernel[j] = 0;
        if (fw->pads[j] < 0)
            starts[2 + j] = -fw->pads[j], cw.pads[j] = 0;
        if (fw->pads[s + j] < 0)
            stops[2 + j] += fw->pads[s + j], cw.pads[s + j] = 0;
    }
    bp_tensor *t = NULL;
    bp_status st = c->st == BP_OK ? bp_slice(G, starts, stops, NULL, &t) : c->st;
    const bp_tensor *g = KEEP(st, t);
    if (c->want[0] && c->st == BP_OK) {
        bp_tensor *full = NULL, *cut = NULL;
        st = bp_conv(g, IN(1), NULL, &cw, &full);
        for (int32_t k = 0; k < vx->rank; k++)
            starts[k] = 0, stops[k] = vx->shape[k];
        if (st == BP_OK)
            st = bp_slice(full, starts, stops, NULL, &cut);
        bp_tensor_release(full);
        c->gx[0] = KEEP(st, cut);
    }
    if (c->want[1])
        c->gx[1] = grouped_weight_grad(c, g, IN(0), &cw, kernel, s);
    if (c->want[2] && n->ref[2] != BP__GREF_NONE)
        c->gx[2] = bias_grad(c, G);
    return c->st;
}

bp_status bp__vjp_conv(bp__vjp *c)
{
    const bp__gnode *n = c->n;
    const bp_view *vx = &n->view[0], *vw = &n->view[1];
    int32_t s = vx->rank - 2;
    bp_window fw = window_of(n, s);
    int64_t kernel[3];
    for (int32_t j = 0; j < s; j++)
        kernel[j] = vw->shape[2 + j];
    if (n->op == BP_OP_CONV_TRANSPOSE)
        return vjp_conv_transpose(c, s, &fw, kernel);
    if (n->op != BP_OP_CONV)
        return bp__error(BP_ERR_BACKEND, "bp_graph_grad: no conv rule for %s (a defect in "
                         "the gradient column)", bp_op_name(n->op));
    if (c->want[0]) { /* a transposed convolution, cut or padded to x's extents */
        bp_window tw = fw;
        for (int32_t j = 0; j < s; j++) {
            tw.kernel[j] = 0;
            int64_t o = c->n->view[n->n_in].shape[2 + j];
            int64_t natural = (o - 1) * fw.strides[j] - fw.pads[j] - fw.pads[s + j] +
                              fw.dilations[j] * (kernel[j] - 1) + 1;
            tw.output_padding[j] = vx->shape[2 + j] - natural;
        }
        bp_tensor *t = NULL;
        bp_status st = c->st == BP_OK ? bp_conv_transpose(G, IN(1), NULL, &tw, &t) : c->st;
        c->gx[0] = KEEP(st, t);
    }
    if (c->want[1])
        c->gx[1] = grouped_weight_grad(c, IN(0), G, &fw, kernel, s);
    if (c->want[2] && n->ref[2] != BP__GREF_NONE)
        c->gx[2] = bias_grad(c, G);
    return c->st;
}

/* t with a trailing axis of extent 1. */
static const bp_tensor *trailing1(bp__vjp *c, const bp_tensor *t)
{
    if (c->st != BP_OK || !t)
        return NULL;
    int64_t shape[BP_MAX_RANK];
    for (int32_t k = 0; k < t->rank; k++)
        shape[k] = t->shape[k];
    shape[t->rank] = 1;
    return RESHAPE(t, t->rank + 1, shape);
}

/* softmax_cross_entropy_loss (d/d scores: w (softmax - onehot)) and nll_loss
 * (d/d log_prob: -w onehot), each sample's by the reduction's factor: none
 * its own output gradient, sum the scalar's, mean the scalar's over the
 * weights' sum. A sample whose label is ignore_index weighs 0. The class
 * weights carry no gradient (as in PyTorch). */
bp_status bp__vjp_loss(bp__vjp *c)
{
    const bp__gnode *n = c->n;
    if (n->n_out > 1 && c->gy[1])
        return bp__error(BP_ERR_UNSUPPORTED_OP,
                         "bp_graph_grad: the gradient reaches %s's log_prob output, which has no "
                         "gradient rule yet; differentiate through the loss output only (or "
                         "compute log_prob with bp_log_softmax)",
                         bp_op_name(n->op));
    const bp_tensor *x = IN(0), *labels = IN(1);
    const bp_tensor *weights = n->ref[2] != BP__GREF_NONE ? IN(2) : NULL;
    if (c->st != BP_OK)
        return c->st;
    int64_t classes = n->view[0].shape[n->view[0].rank - 1];
    bp_tensor *t = NULL;
    bp_status st = bp_arange(c->rec, x->dtype, 0, 2, 1, &t); /* (off, on) */
    const bp_tensor *values = KEEP(st, t);
    t = NULL;
    st = c->st == BP_OK ? bp_one_hot(labels, classes, -1, values, &t) : c->st;
    const bp_tensor *oh = KEEP(st, t); /* (N, d..., C) */
    /* each sample's weight, (N, d..., 1) */
    const bp_tensor *w = bp__e_reduce_last(c, BP_OP_SUM, weights ? MUL(oh, weights) : oh, 1);
    if (n->params->i[1] && c->st == BP_OK) { /* ignore_index: weight 0 */
        bp_tensor *ig = NULL;
        st = bp_full_i64(c->rec, labels->dtype, 0, NULL, n->params->i[2], &ig);
        const bp_tensor *ignore = KEEP(st, ig);
        w = MUL(w, trailing1(c, bp__e_cast(c, BIN(NE, labels, ignore), x->dtype)));
    }
    const bp_tensor *coef = G; /* the reduction's factor */
    if (n->params->i[0] == BP_LOSS_NONE)
        coef = trailing1(c, G);
    else if (n->params->i[0] == BP_LOSS_MEAN && w)
        coef = BIN(DIV, G, bp__e_reduce_last(c, BP_OP_SUM, w, w->rank));
    const bp_tensor *per;
    if (n->op == BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS) {
        bp_tensor *p = NULL;
        st = c->st == BP_OK ? bp_softmax(x, -1, &p) : c->st;
        per = MUL(w, SUB(KEEP(st, p), oh));
    } else {
        per = UN(NEG, MUL(w, oh));
    }
    c->gx[0] = MUL(per, coef);
    return c->st;
}

/* The pool's window from the node, its ceil_mode found again from the
 * output's extents (the node does not keep it). */
static bp_window pool_window(const bp__gnode *n)
{
    const bp_view *vx = &n->view[0], *vy = &n->view[n->n_in];
    int32_t s = vx->rank - 2;
    bp_window w = window_of(n, s);
    w.groups = 0;
    for (int32_t j = 0; j < s; j++) {
        int64_t span = vx->shape[2 + j] + w.pads[j] + w.pads[s + j] -
                       w.dilations[j] * (w.kernel[j] - 1) - 1;
        if (span / w.strides[j] + 1 != vy->shape[2 + j])
            w.ceil_mode = true;
    }
    return w;
}

/* max_pool: each output's gradient added where its maximum was (the first
 * one in a tie, as the indices say), by a scatter-add into zeros. The
 * indices are the node's own where it made them, else a max_pool again. */
bp_status bp__vjp_max_pool(bp__vjp *c)
{
    if (c->n->n_out > 1 && c->gy[1])
        return bp__error(BP_ERR_UNSUPPORTED_OP, "bp_graph_grad: the gradient reaches "
                         "max_pool's indices, which are integers and have none");
    const bp_tensor *x = IN(0);
    if (c->st != BP_OK)
        return c->st;
    bp_window w = pool_window(c->n);
    bp_tensor *y = NULL, *idx = NULL, *zeros = NULL, *flat_i = NULL, *flat_g = NULL;
    bp_tensor *sc = NULL, *gx = NULL;
    int64_t numel = x->numel, outs = G->numel;
    /* the indices the node made, where it made them row-major; else again */
    bool made = c->n->n_out > 1 && c->n->ref[c->n->n_in + 1] != BP__GREF_NONE &&
                c->n->params->i[15] == 0;
    const bp_tensor *had = made ? bp__vjp_out(c, 1) : NULL;
    bp_status st = c->st;
    if (st == BP_OK && had)
        st = bp_reshape(had, had->rank, had->shape, &idx);
    else if (st == BP_OK)
        st = bp_max_pool(x, &w, &y, &idx);
    if (st == BP_OK)
        st = bp_zeros(c->rec, x->dtype, 1, &numel, &zeros);
    if (st == BP_OK)
        st = bp_reshape(idx, 1, &outs, &flat_i);
    if (st == BP_OK)
        st = bp_reshape(G, 1, &outs, &flat_g);
    if (st == BP_OK)
        st = bp_scatter_elements(zeros, flat_i, flat_g, 0, BP_SCATTER_ADD, &sc);
    if (st == BP_OK)
        st = bp_reshape(sc, x->rank, x->shape, &gx);
    bp_tensor *rel[] = {y, idx, zeros, flat_i, flat_g, sc};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        bp_tensor_release(rel[k]);
    c->gx[0] = KEEP(st, gx);
    return c->st;
}

/* average_pool: each output's gradient spread evenly over its window (a
 * transposed convolution by ones, one group per channel), divided by the
 * window's count: its extent, or without count_include_pad the elements
 * inside x (the same convolution of ones by ones). */
bp_status bp__vjp_average_pool(bp__vjp *c)
{
    const bp__gnode *n = c->n;
    const bp_view *vx = &n->view[0];
    int32_t s = vx->rank - 2;
    bp_window w = pool_window(n);
    if (w.ceil_mode)
        return bp__error(BP_ERR_UNSUPPORTED_OP, "bp_graph_grad: average_pool's gradient with "
                         "ceil_mode is not supported yet");
    int64_t ch = vx->shape[1], ones_shape[5] = {ch, 1, 1, 1, 1}, unit[5] = {1, 1, 1, 1, 1};
    double size = 1;
    for (int32_t j = 0; j < s; j++) {
        ones_shape[2 + j] = w.kernel[j];
        size *= (double)w.kernel[j];
    }
    bp_tensor *kern = NULL;
    bp_status st = bp_ones(c->rec, G->dtype, 2 + s, ones_shape, &kern);
    const bp_tensor *k = KEEP(st, kern);
    const bp_tensor *g = BIN(DIV, G, K(size));
    if (!n->params->i[15] && c->st == BP_OK) { /* divide by the count inside x instead */
        bp_window cw = BP_WINDOW_INIT;
        for (int32_t j = 0; j < 2 * s; j++)
            cw.pads[j] = w.pads[j];
        for (int32_t j = 0; j < s; j++) {
            cw.strides[j] = w.strides[j];
            cw.dilations[j] = w.dilations[j];
            unit[2 + j] = vx->shape[2 + j];
        }
        bp_tensor *one = NULL, *k1 = NULL, *cnt = NULL;
        st = bp_ones(c->rec, G->dtype, 2 + s, unit, &one);
        const bp_tensor *o = KEEP(st, one);
        for (int32_t j = 0; j < s; j++)
            unit[2 + j] = w.kernel[j];
        st = c->st == BP_OK ? bp_ones(c->rec, G->dtype, 2 + s, unit, &k1) : c->st;
        const bp_tensor *kk = KEEP(st, k1);
        st = c->st == BP_OK ? bp_conv(o, kk, NULL, &cw, &cnt) : c->st;
        g = BIN(DIV, G, KEEP(st, cnt));
    }
    bp_window tw = BP_WINDOW_INIT;
    for (int32_t j = 0; j < 2 * s; j++)
        tw.pads[j] = w.pads[j];
    for (int32_t j = 0; j < s; j++) {
        tw.strides[j] = w.strides[j];
        tw.dilations[j] = w.dilations[j];
        int64_t o = n->view[n->n_in].shape[2 + j];
        tw.output_padding[j] = vx->shape[2 + j] - ((o - 1) * w.strides[j] - w.pads[j] -
                                                   w.pads[s + j] +
                                                   w.dilations[j] * (w.kernel[j] - 1) + 1);
    }
    tw.groups = ch;
    bp_tensor *t = NULL;
    st = c->st == BP_OK ? bp_conv_transpose(g, k, NULL, &tw, &t) : c->st;
    c->gx[0] = KEEP(st, t);
    return c->st;
}

/* x's per-channel window sums: t (N, C, rest...) as (N, 1, C, R) convolved
 * with ones over before + 1 + after channels, zero padded, back in t's
 * shape. */
static const bp_tensor *channel_window_sum(bp__vjp *c, const bp_tensor *t, int64_t before,
                                           int64_t after)
{
    if (c->st != BP_OK || !t)
        return NULL;
    int64_t rest = 1;
    for (int32_t k = 2; k < t->rank; k++)
        rest *= t->shape[k];
    int64_t s4[4] = {t->shape[0], 1, t->shape[1], rest}, k4[4] = {1, 1, before + 1 + after, 1};
    bp_window w = BP_WINDOW_INIT;
    w.pads[0] = before, w.pads[2] = after;
    bp_tensor *r = NULL, *ones = NULL, *sum = NULL, *out = NULL;
    bp_status st = bp_reshape(t, 4, s4, &r);
    if (st == BP_OK)
        st = bp_ones(c->rec, t->dtype, 4, k4, &ones);
    if (st == BP_OK)
        st = bp_conv(r, ones, NULL, &w, &sum);
    if (st == BP_OK)
        st = bp_reshape(sum, t->rank, t->shape, &out);
    bp_tensor_release(r);
    bp_tensor_release(ones);
    bp_tensor_release(sum);
    return KEEP(st, out);
}

/* lrn: y = x d^-beta with d = bias + alpha / size S, S each channel's
 * window sum of x^2 (channels c - lo .. c + hi). dx = G d^-beta - 2 beta
 * alpha / size x T, T the mirrored window sum (c - hi .. c + lo) of
 * G x d^(-beta - 1). */
bp_status bp__vjp_lrn(bp__vjp *c)
{
    const bp__gnode *n = c->n;
    int64_t size = n->params->i[0], ch = n->view[0].shape[1];
    double alpha = n->params->f[0], beta = n->params->f[1], bias = n->params->f[2];
    int64_t lo = (size - 1) / 2, hi = size / 2; /* floor and ceil of (size - 1) / 2 */
    lo = lo < ch - 1 ? lo : ch - 1;
    hi = hi < ch - 1 ? hi : ch - 1;
    const bp_tensor *x = IN(0);
    const bp_tensor *d = ADD(K(bias), MUL(K(alpha / (double)size),
                                          channel_window_sum(c, MUL(x, x), lo, hi)));
    const bp_tensor *u = MUL(MUL(G, x), BIN(POW, d, K(-beta - 1)));
    c->gx[0] = SUB(MUL(G, BIN(POW, d, K(-beta))),
                   MUL(MUL(K(2 * beta * alpha / (double)size), x),
                       channel_window_sum(c, u, hi, lo)));
    return c->st;
}

/* x with its axis a moved last (back: the inverse move). */
static const bp_tensor *axis_last(bp__vjp *c, const bp_tensor *x, int32_t a, bool back)
{
    if (c->st != BP_OK || !x)
        return NULL;
    int32_t perm[BP_MAX_RANK], r = x->rank;
    for (int32_t k = 0, j = 0; k < r; k++)
        if (back)
            perm[k] = k < a ? k : k == a ? r - 1 : k - 1;
        else if (k != a)
            perm[j++] = k;
    if (!back)
        perm[r - 1] = a;
    bp_tensor *t = NULL;
    bp_status st = bp_transpose(x, perm, &t);
    return KEEP(st, t);
}

/* resize: every mode is separable and linear in x, one matrix R (L x D)
 * per axis: x's gradient is G contracted with each R over its axis. R's
 * transpose is the same resize of an identity (D, D) along its axis 1. An
 * axis whose extent and scale stay is the identity and skipped. */
bp_status bp__vjp_resize(bp__vjp *c)
{
    const bp__gnode *n = c->n;
    const bp_view *vx = &n->view[0], *vy = &n->view[1];
    bp_resize_options o = BP_RESIZE_OPTIONS_INIT;
    o.mode = (bp_resize_mode)n->params->i[0];
    o.coordinates = (bp_resize_coordinates)n->params->i[1];
    o.nearest = (bp_resize_nearest)n->params->i[2];
    o.exclude_outside = n->params->i[3] != 0;
    o.cubic_coeff_a = n->params->f[0];
    const bp_tensor *g = G;
    for (int32_t a = 0; a < vx->rank && c->st == BP_OK; a++) {
        int64_t d = vx->shape[a], l = vy->shape[a];
        double s = n->params->f[8 + a];
        if (d == l && s == 1.0)
            continue;
        bp_tensor *eye = NULL, *rt = NULL;
        bp_status st = bp_eye(c->rec, vy->dtype, d, d, &eye);
        /* the node's scale where it gives l (scales given), else the extents
         * (sizes given: their scale is l / d) */
        if (st == BP_OK && floor((double)d * s) == (double)l)
            st = bp_resize(eye, (const double[]){1.0, s}, NULL, &o, &rt);
        else if (st == BP_OK)
            st = bp_resize(eye, NULL, (const int64_t[]){d, l}, &o, &rt);
        bp_tensor_release(eye);
        const bp_tensor *r = bp__e_mT(c, KEEP(st, rt)); /* (l, d) */
        g = axis_last(c, bp__e_matmul(c, axis_last(c, g, a, false), r), a, true);
    }
    c->gx[0] = g;
    return c->st;
}

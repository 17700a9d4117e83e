/* backplane demo --model cnn: a small convolutional network on synthetic
 * images, every gradient written with the library's ops.
 *
 * Data: each class has a template image, uniform noise from bp_random_uniform
 * smoothed by a 3x3 average pool; an image is its class's template plus
 * bp_random_normal noise of the same strength, so a single pixel says little
 * and the network has to look at the pattern.
 * Model (N images of 1 x S x S):
 *
 *   z = conv(x, Wc) + bc    (F filters, 3x3, pad 1)      a = relu(z)
 *   p, idx = max_pool(a)    (2x2, stride 2)
 *   y, rstd = layer_norm(p) over (F, S/2, S/2), scale 1
 *   logits = flatten(y) Wl + bl          loss = softmax_cross_entropy(logits)
 *
 * Backward, by hand:
 *   dlogits = (softmax(logits) - onehot) / N
 *   dWl = flat^T dlogits (gemm, trans_a)   dbl = sum_0 dlogits
 *   dy = dlogits Wl^T (gemm, trans_b)
 *   dp = rstd (dy - mean(dy) - y mean(dy y))        (layer_norm's gradient)
 *   da = scatter_elements(0, idx, dp, add)          (max_pool's gradient)
 *   dz = where(z > 0, da, 0)
 *   dWc[f, 0] = conv(x^T, dz^T) with pad 1: the images become the channels,
 *   the gradient the kernel (conv's weight gradient is a convolution)
 *   dbc = sum over (N, S, S) of dz
 *
 * It needs the nn ops of ABI 1.5 (conv, max_pool, layer_norm, the loss) and
 * scatter_elements and gemm of 1.4: a backend without them says so at the
 * first call. */
#include "demo.h"

#include <math.h>
#include <stdlib.h>

enum {
    N_IMAGES = 256,
    SIDE = 12,             /* images are SIDE x SIDE */
    HALF = SIDE / 2,       /* after the pool */
    N_FILTERS = 8,
    N_CLASSES = 4,
    N_FLAT = N_FILTERS * HALF * HALF,
};
#define TEMPLATE_GAIN 3.0

#define OFF_TEMPLATES ((uint64_t)0)
#define OFF_NOISE ((uint64_t)1 << 32)
#define OFF_WC ((uint64_t)2 << 32)
#define OFF_WL ((uint64_t)3 << 32)

typedef struct cnn {
    bp_tensor *x, *xt, *labels, *onehot; /* (N,1,S,S), (1,N,S,S), (N) i64, (N,C) */
    bp_tensor *wc, *bc, *wl, *bl;        /* (F,1,3,3), (F), (FLAT,C), (C) */
    bp_tensor *ln_scale;                 /* (F,H,H) ones */
    bp_tensor *lr, *inv_n, *zero;        /* scalars */
    bp_tensor *zeros_a;                  /* (N*F*S*S) zeros: max_pool's gradient starts here */
    /* from the step's scratch: what backward reads */
    bp_tensor *z, *idx, *y, *rstd, *flat;
} cnn;

static const int32_t SWAP01[4] = {1, 0, 2, 3};

static bp_status make_labels(cnn *m, bp_backend *be)
{
    int64_t *host = malloc(N_IMAGES * sizeof *host);
    if (!host) {
        demo_failed_call = "malloc";
        return BP_ERR_OUT_OF_MEMORY;
    }
    for (int64_t i = 0; i < N_IMAGES; i++)
        host[i] = i % N_CLASSES;
    bp_status st = bp_tensor_from_host(be, BP_I64, 1, (const int64_t[]){N_IMAGES}, host,
                                       &m->labels);
    free(host);
    if (st != BP_OK)
        demo_failed_call = "bp_tensor_from_host(labels)";
    return st;
}

static bp_status make_data(cnn *m, bp_backend *be, uint64_t seed, demo_scratch *sc)
{
    DEMO_TRY(make_labels(m, be));
    bp_tensor *raw, *smooth, *gain, *templates, *per_image, *noise, *classes, *label_col, *hit;
    DEMO_OP(raw, bp_random_uniform(be, BP_F32, 4, (const int64_t[]){N_CLASSES, 1, SIDE, SIDE},
                                   seed, OFF_TEMPLATES, -1.0, 1.0, &raw));
    bp_window blur = BP_WINDOW_INIT;
    blur.kernel[0] = blur.kernel[1] = 3;
    blur.pads[0] = blur.pads[1] = blur.pads[2] = blur.pads[3] = 1;
    DEMO_OP(smooth, bp_average_pool(raw, &blur, &smooth));
    DEMO_OP(gain, bp_full(be, BP_F32, 0, NULL, TEMPLATE_GAIN, &gain));
    DEMO_OP(templates, bp_mul(smooth, gain, &templates));
    DEMO_OP(per_image, bp_gather(templates, m->labels, 0, &per_image)); /* (N,1,S,S) */
    DEMO_OP(noise, bp_random_normal(be, BP_F32, 4, (const int64_t[]){N_IMAGES, 1, SIDE, SIDE},
                                    seed, OFF_NOISE, 0.0, 1.0, &noise));
    DEMO_TRY(bp_add(per_image, noise, &m->x));
    DEMO_TRY(bp_transpose(m->x, SWAP01, &m->xt));
    DEMO_OP(classes, bp_arange(be, BP_I64, 0, N_CLASSES, 1, &classes));
    DEMO_OP(label_col, bp_reshape(m->labels, 2, (const int64_t[]){N_IMAGES, 1}, &label_col));
    DEMO_OP(hit, bp_eq(label_col, classes, &hit));
    DEMO_TRY(bp_cast(hit, BP_F32, &m->onehot));
    return BP_OK;
}

static bp_status setup(void *self, bp_backend *be, uint64_t seed, double lr, demo_scratch *sc)
{
    cnn *m = self;
    DEMO_TRY(make_data(m, be, seed, sc));
    DEMO_TRY(bp_random_normal(be, BP_F32, 4, (const int64_t[]){N_FILTERS, 1, 3, 3}, seed, OFF_WC,
                              0.0, sqrt(2.0 / 9.0), &m->wc));
    DEMO_TRY(bp_zeros(be, BP_F32, 1, (const int64_t[]){N_FILTERS}, &m->bc));
    DEMO_TRY(bp_random_normal(be, BP_F32, 2, (const int64_t[]){N_FLAT, N_CLASSES}, seed, OFF_WL,
                              0.0, sqrt(1.0 / N_FLAT), &m->wl));
    DEMO_TRY(bp_zeros(be, BP_F32, 1, (const int64_t[]){N_CLASSES}, &m->bl));
    DEMO_TRY(bp_ones(be, BP_F32, 3, (const int64_t[]){N_FILTERS, HALF, HALF}, &m->ln_scale));
    DEMO_TRY(bp_full(be, BP_F32, 0, NULL, lr, &m->lr));
    DEMO_TRY(bp_full(be, BP_F32, 0, NULL, 1.0 / N_IMAGES, &m->inv_n));
    DEMO_TRY(bp_full(be, BP_F32, 0, NULL, 0.0, &m->zero));
    DEMO_TRY(bp_zeros(be, BP_F32, 1,
                      (const int64_t[]){(int64_t)N_IMAGES * N_FILTERS * SIDE * SIDE},
                      &m->zeros_a));
    return BP_OK;
}

static void describe(const void *self, FILE *f)
{
    (void)self;
    fprintf(f, "data: %d-class synthetic images, %d of 1 x %d x %d (smoothed templates + noise)\n",
            N_CLASSES, N_IMAGES, SIDE, SIDE);
    fprintf(f, "model: CNN conv %d x 3x3 (ReLU) -> max_pool 2x2 -> layer_norm -> linear %d -> %d, "
               "softmax cross-entropy, full-batch SGD, f32\n",
            N_FILTERS, N_FLAT, N_CLASSES);
}

static bp_status forward(void *self, demo_scratch *sc, bp_tensor **logits_out)
{
    cnn *m = self;
    bp_window same = BP_WINDOW_INIT;
    same.pads[0] = same.pads[1] = same.pads[2] = same.pads[3] = 1;
    bp_window pool = BP_WINDOW_INIT;
    pool.kernel[0] = pool.kernel[1] = 2;
    pool.strides[0] = pool.strides[1] = 2;
    bp_tensor *z, *a, *p, *idx, *y, *rstd, *flat, *fw, *logits;
    DEMO_OP(z, bp_conv(m->x, m->wc, m->bc, &same, &z));
    DEMO_OP(a, bp_relu(z, &a));
    DEMO_TRY(bp_max_pool(a, &pool, &p, &idx));
    DEMO_TRY(demo_keep(sc, p));
    DEMO_TRY(demo_keep(sc, idx));
    DEMO_TRY(bp_layer_norm(p, 1, m->ln_scale, NULL, 1e-5, &y, NULL, &rstd));
    DEMO_TRY(demo_keep(sc, y));
    DEMO_TRY(demo_keep(sc, rstd));
    DEMO_OP(flat, bp_reshape(y, 2, (const int64_t[]){N_IMAGES, N_FLAT}, &flat));
    DEMO_OP(fw, bp_matmul(flat, m->wl, &fw));
    DEMO_OP(logits, bp_add(fw, m->bl, &logits));
    m->z = z;
    m->idx = idx;
    m->y = y;
    m->rstd = rstd;
    m->flat = flat;
    *logits_out = logits;
    return BP_OK;
}

static bp_status metrics(void *self, const bp_tensor *logits, demo_scratch *sc, double *loss,
                         double *accuracy)
{
    cnn *m = self;
    bp_tensor *mean_loss, *pred, *right, *right_f, *acc;
    const int32_t class_axis[1] = {1};
    DEMO_TRY(bp_softmax_cross_entropy_loss(logits, m->labels, NULL, BP_LOSS_MEAN, NULL,
                                           &mean_loss, NULL));
    DEMO_TRY(demo_keep(sc, mean_loss));
    DEMO_OP(pred, bp_argmax(logits, 1, class_axis, false, &pred));
    DEMO_OP(right, bp_eq(pred, m->labels, &right));
    DEMO_OP(right_f, bp_cast(right, BP_F32, &right_f));
    DEMO_OP(acc, bp_mean(right_f, 0, NULL, false, &acc));
    DEMO_TRY(bp_item_f64(mean_loss, loss));
    DEMO_TRY(bp_item_f64(acc, accuracy));
    return BP_OK;
}

/* layer_norm's gradient (scale 1): rstd (dy - mean(dy) - y mean(dy y)). */
static bp_status layer_norm_backward(const cnn *m, const bp_tensor *dy, demo_scratch *sc,
                                     bp_tensor **dp)
{
    const int32_t axes[3] = {1, 2, 3};
    bp_tensor *m1, *dyy, *m2, *centred, *ym2, *t;
    DEMO_OP(m1, bp_mean(dy, 3, axes, true, &m1));
    DEMO_OP(dyy, bp_mul(dy, m->y, &dyy));
    DEMO_OP(m2, bp_mean(dyy, 3, axes, true, &m2));
    DEMO_OP(centred, bp_sub(dy, m1, &centred));
    DEMO_OP(ym2, bp_mul(m->y, m2, &ym2));
    DEMO_OP(t, bp_sub(centred, ym2, &t));
    DEMO_OP(*dp, bp_mul(t, m->rstd, dp));
    return BP_OK;
}

/* max_pool's gradient: each output's gradient added at its maximum's place. */
static bp_status pool_backward(const cnn *m, const bp_tensor *dp, demo_scratch *sc,
                               bp_tensor **da)
{
    const int64_t pooled = (int64_t)N_IMAGES * N_FILTERS * HALF * HALF;
    bp_tensor *idx_flat, *dp_flat, *da_flat;
    DEMO_OP(idx_flat, bp_reshape(m->idx, 1, &pooled, &idx_flat));
    DEMO_OP(dp_flat, bp_reshape(dp, 1, &pooled, &dp_flat));
    DEMO_OP(da_flat, bp_scatter_elements(m->zeros_a, idx_flat, dp_flat, 0, BP_SCATTER_ADD,
                                         &da_flat));
    DEMO_OP(*da, bp_reshape(da_flat, 4, (const int64_t[]){N_IMAGES, N_FILTERS, SIDE, SIDE}, da));
    return BP_OK;
}

/* conv's weight gradient, as a convolution of the images by the gradient. */
static bp_status conv_weight_backward(const cnn *m, const bp_tensor *dz, demo_scratch *sc,
                                      bp_tensor **dwc)
{
    bp_window same = BP_WINDOW_INIT;
    same.pads[0] = same.pads[1] = same.pads[2] = same.pads[3] = 1;
    bp_tensor *dzt, *g;
    DEMO_OP(dzt, bp_transpose(dz, SWAP01, &dzt));            /* (F, N, S, S) */
    DEMO_OP(g, bp_conv(m->xt, dzt, NULL, &same, &g));        /* (1, F, 3, 3) */
    DEMO_OP(*dwc, bp_transpose(g, SWAP01, dwc));             /* (F, 1, 3, 3) */
    return BP_OK;
}

static bp_status backward_update(void *self, const bp_tensor *logits, demo_scratch *sc)
{
    cnn *m = self;
    const int32_t batch_axis[1] = {0}, bias_axes[3] = {0, 2, 3};
    bp_tensor *probs, *diff, *dlogits, *dwl, *dbl, *dflat, *dy, *dp, *da, *active, *dz, *dwc,
        *dbc;
    DEMO_OP(probs, bp_softmax(logits, 1, &probs));
    DEMO_OP(diff, bp_sub(probs, m->onehot, &diff));
    DEMO_OP(dlogits, bp_mul(diff, m->inv_n, &dlogits));
    DEMO_OP(dwl, bp_gemm(m->flat, dlogits, NULL, 1.0, 0.0, true, false, &dwl));
    DEMO_OP(dbl, bp_sum(dlogits, 1, batch_axis, false, &dbl));
    DEMO_OP(dflat, bp_gemm(dlogits, m->wl, NULL, 1.0, 0.0, false, true, &dflat));
    DEMO_OP(dy, bp_reshape(dflat, 4, (const int64_t[]){N_IMAGES, N_FILTERS, HALF, HALF}, &dy));
    DEMO_TRY(layer_norm_backward(m, dy, sc, &dp));
    DEMO_TRY(pool_backward(m, dp, sc, &da));
    DEMO_OP(active, bp_gt(m->z, m->zero, &active));
    DEMO_OP(dz, bp_where(active, da, m->zero, &dz));
    DEMO_TRY(conv_weight_backward(m, dz, sc, &dwc));
    DEMO_OP(dbc, bp_sum(dz, 3, bias_axes, false, &dbc));
    DEMO_TRY(demo_sgd(&m->wc, dwc, m->lr, sc));
    DEMO_TRY(demo_sgd(&m->bc, dbc, m->lr, sc));
    DEMO_TRY(demo_sgd(&m->wl, dwl, m->lr, sc));
    DEMO_TRY(demo_sgd(&m->bl, dbl, m->lr, sc));
    return BP_OK;
}

static void release(void *self)
{
    cnn *m = self;
    bp_tensor *all[] = {m->x,  m->xt, m->labels,   m->onehot, m->wc,    m->bc,  m->wl,
                        m->bl, m->ln_scale, m->lr, m->inv_n,  m->zero, m->zeros_a};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bp_tensor_release(all[i]);
}

const demo_model demo_cnn = {
    .name = "cnn",
    .default_steps = 60,
    .default_lr = 0.5,
    .setup = setup,
    .describe = describe,
    .forward = forward,
    .metrics = metrics,
    .backward_update = backward_update,
    .release = release,
    .n_classes = N_CLASSES,
    .state_size = sizeof(cnn),
};

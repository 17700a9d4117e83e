/* backplane demo --model cnn: a small convolutional network on synthetic
 * images, trained with the gradients bp_graph_grad gives.
 *
 * Data: each class has a template image, uniform noise from bp_random_uniform
 * smoothed by a 3x3 average pool; an image is its class's template plus
 * bp_random_normal noise of the same strength, so a single pixel says little
 * and the network has to look at the pattern.
 * Model (N images of 1 x S x S):
 *
 *   z = conv(x, Wc) + bc    (F filters, 3x3, pad 1)      a = relu(z)
 *   p = max_pool(a)         (2x2, stride 2)
 *   y = layer_norm(p) over (F, S/2, S/2), scale 1
 *   logits = flatten(y) Wl + bl          loss = softmax_cross_entropy(logits)
 *
 * setup records the loss on a graph whose inputs are the parameters, asks
 * bp_graph_grad for their gradients (conv's, max_pool's and layer_norm's
 * rules among them: docs/gradients.md) and compiles the whole; each step
 * runs that plan for the logits and the four gradients.
 *
 * It needs the nn ops of ABI 1.5 (conv, max_pool, layer_norm, the loss) and
 * scatter_elements and conv_transpose for the gradients: a backend without
 * them says so at the first call. */
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
    bp_tensor *x, *labels;               /* (N,1,S,S), (N) i64 */
    bp_tensor *wc, *bc, *wl, *bl;        /* (F,1,3,3), (F), (FLAT,C), (C) */
    bp_tensor *ln_scale;                 /* (F,H,H) ones */
    bp_tensor *lr;                       /* a scalar */
    bp_graph_exec *step;                 /* params -> logits, dwc, dbc, dwl, dbl */
    bp_tensor *grad[4];                  /* this step's, borrowed from the scratch */
} cnn;

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
    bp_tensor *raw, *smooth, *gain, *templates, *per_image, *noise;
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
    return BP_OK;
}

/* logits of the parameters p (wc, bc, wl, bl): eagerly, or recorded when
 * they are symbolic (x and the layer norm's scale are then captured). */
static bp_status logits_of(const cnn *m, bp_tensor *const *p, demo_scratch *sc,
                           bp_tensor **logits)
{
    bp_window same = BP_WINDOW_INIT;
    same.pads[0] = same.pads[1] = same.pads[2] = same.pads[3] = 1;
    bp_window pool = BP_WINDOW_INIT;
    pool.kernel[0] = pool.kernel[1] = 2;
    pool.strides[0] = pool.strides[1] = 2;
    bp_tensor *z, *a, *pooled, *idx, *y, *flat, *fw;
    DEMO_OP(z, bp_conv(m->x, p[0], p[1], &same, &z));
    DEMO_OP(a, bp_relu(z, &a));
    /* the indices too: max_pool's gradient then reuses them */
    DEMO_TRY(bp_max_pool(a, &pool, &pooled, &idx));
    DEMO_TRY(demo_keep(sc, pooled));
    DEMO_TRY(demo_keep(sc, idx));
    DEMO_OP(y, bp_layer_norm(pooled, 1, m->ln_scale, NULL, 1e-5, &y, NULL, NULL));
    DEMO_OP(flat, bp_reshape(y, 2, (const int64_t[]){N_IMAGES, N_FLAT}, &flat));
    DEMO_OP(fw, bp_matmul(flat, p[2], &fw));
    DEMO_OP(*logits, bp_add(fw, p[3], logits));
    return BP_OK;
}

/* The loss of the parameters p, the mean softmax cross-entropy: the
 * training step demo_compile_step records. */
static bp_status loss_of(const void *self, bp_tensor *const *p, demo_scratch *sc,
                         bp_tensor **logits, bp_tensor **loss)
{
    const cnn *m = self;
    DEMO_TRY(logits_of(m, p, sc, logits));
    DEMO_OP(*loss, bp_softmax_cross_entropy_loss(*logits, m->labels, NULL, BP_LOSS_MEAN, NULL,
                                                 loss, NULL));
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
    return demo_compile_step(m, be, loss_of, 4,
                             (bp_tensor *const[]){m->wc, m->bc, m->wl, m->bl}, sc, &m->step);
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

/* One run of the step's plan: the logits, and the gradients kept for
 * backward_update. */
static bp_status forward(void *self, demo_scratch *sc, bp_tensor **logits_out)
{
    cnn *m = self;
    return demo_run_step(m->step, 4, (bp_tensor *const[]){m->wc, m->bc, m->wl, m->bl}, sc,
                         logits_out, m->grad);
}

static bp_status metrics(void *self, const bp_tensor *logits, demo_scratch *sc, double *loss,
                         double *accuracy)
{
    cnn *m = self;
    bp_tensor *mean_loss, *acc;
    DEMO_OP(mean_loss, bp_softmax_cross_entropy_loss(logits, m->labels, NULL, BP_LOSS_MEAN, NULL,
                                                     &mean_loss, NULL));
    DEMO_TRY(demo_accuracy(logits, m->labels, sc, &acc));
    DEMO_TRY(bp_item_f64(mean_loss, loss));
    DEMO_TRY(bp_item_f64(acc, accuracy));
    return BP_OK;
}

/* SGD with the gradients the step's plan gave. */
static bp_status backward_update(void *self, const bp_tensor *logits, demo_scratch *sc)
{
    cnn *m = self;
    (void)logits;
    bp_tensor **params[4] = {&m->wc, &m->bc, &m->wl, &m->bl};
    for (int k = 0; k < 4; k++)
        DEMO_TRY(demo_sgd(params[k], m->grad[k], m->lr, sc));
    return BP_OK;
}

static void release(void *self)
{
    cnn *m = self;
    bp_tensor *all[] = {m->x, m->labels, m->wc, m->bc, m->wl, m->bl, m->ln_scale, m->lr};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bp_tensor_release(all[i]);
    bp_graph_exec_release(m->step);
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

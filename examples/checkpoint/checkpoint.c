/* checkpoint: train a small MLP for a few steps on one backend, save it to a
 * safetensors file, load it onto another backend and go on training there.
 * A checkpoint holds values, not device handles: it moves between backends
 * (and processes) freely, and loading it into a model of the wrong shape
 * says which tensor does not fit.
 *
 *   checkpoint [FILE.safetensors] [BACKEND_A] [BACKEND_B]
 *              (defaults: mlp.safetensors, the default backend, binary) */
#include <stdio.h>
#include <stdlib.h>

#include <backplane/backplane.h>

enum { N = 256, IN = 4, HIDDEN = 16, CLASSES = 3, STEPS = 40 };
#define LR 0.5

/* Stop at the first failure with the library's message. */
#define CHECK(call)                                                            \
    do {                                                                       \
        if ((call) != BP_OK) {                                                 \
            fprintf(stderr, "checkpoint: %s: %s\n", #call, bp_last_error());   \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

typedef struct model {
    bp_tensor *w1, *b1, *w2, *b2;
} model;

static const char *const NAMES[4] = {"w1", "b1", "w2", "b2"};

static bp_tensor **param(model *m, int i)
{
    bp_tensor **p[4] = {&m->w1, &m->b1, &m->w2, &m->b2};
    return p[i];
}

/* Three Gaussian blobs: class c is centred on 3 along axis c. */
static void make_data(bp_backend *be, bp_tensor **x, bp_tensor **onehot)
{
    float *centre = calloc((size_t)N * IN, sizeof *centre), *hot = calloc((size_t)N * CLASSES, sizeof *hot);
    for (int i = 0; i < N; i++) {
        centre[i * IN + i % CLASSES] = 3.0f;
        hot[i * CLASSES + i % CLASSES] = 1.0f;
    }
    bp_tensor *c = NULL, *noise = NULL;
    CHECK(bp_tensor_from_host(be, BP_F32, 2, (int64_t[]){N, IN}, centre, &c));
    CHECK(bp_random_normal(be, BP_F32, 2, (int64_t[]){N, IN}, 1, 0, 0.0, 1.0, &noise));
    CHECK(bp_add(c, noise, x));
    CHECK(bp_tensor_from_host(be, BP_F32, 2, (int64_t[]){N, CLASSES}, hot, onehot));
    bp_tensor_release(c);
    bp_tensor_release(noise);
    free(centre);
    free(hot);
}

static void init_model(bp_backend *be, model *m)
{
    CHECK(bp_random_normal(be, BP_F32, 2, (int64_t[]){IN, HIDDEN}, 2, 0, 0.0, 0.5, &m->w1));
    CHECK(bp_zeros(be, BP_F32, 1, (int64_t[]){HIDDEN}, &m->b1));
    CHECK(bp_random_normal(be, BP_F32, 2, (int64_t[]){HIDDEN, CLASSES}, 3, 0, 0.0, 0.5, &m->w2));
    CHECK(bp_zeros(be, BP_F32, 1, (int64_t[]){CLASSES}, &m->b2));
}

/* p <- p - LR * g, releasing the old p and g. */
static void sgd(bp_tensor **p, bp_tensor *g, bp_tensor *lr)
{
    bp_tensor *step = NULL, *next = NULL;
    CHECK(bp_mul(g, lr, &step));
    CHECK(bp_sub(*p, step, &next));
    bp_tensor_release(*p);
    bp_tensor_release(step);
    bp_tensor_release(g);
    *p = next;
}

/* One full-batch step of softmax cross-entropy; returns the loss before it. */
static double train_step(bp_backend *be, model *m, bp_tensor *x, bp_tensor *onehot)
{
    bp_tensor *t[24] = {NULL};
    int n = 0;
#define T (t[n++])
    CHECK(bp_matmul(x, m->w1, &T));                       /* 0 x w1 */
    CHECK(bp_add(t[0], m->b1, &T));                       /* 1 z1 */
    CHECK(bp_relu(t[1], &T));                             /* 2 h */
    CHECK(bp_matmul(t[2], m->w2, &T));                    /* 3 h w2 */
    CHECK(bp_add(t[3], m->b2, &T));                       /* 4 logits */
    CHECK(bp_log_softmax(t[4], 1, &T));                   /* 5 log p */
    CHECK(bp_mul(t[5], onehot, &T));                      /* 6 */
    CHECK(bp_mean(t[6], 0, NULL, false, &T));             /* 7 mean of picked log p / CLASSES */
    double loss;
    CHECK(bp_item_f64(t[7], &loss));
    CHECK(bp_exp(t[5], &T));                              /* 8 p */
    CHECK(bp_sub(t[8], onehot, &T));                      /* 9 dlogits * N */
    bp_tensor *lr = NULL, *zero = NULL, *dw2 = NULL, *db2 = NULL, *dw1 = NULL, *db1 = NULL;
    CHECK(bp_full(be, BP_F32, 0, NULL, LR / N, &lr));
    CHECK(bp_zeros(be, BP_F32, 0, NULL, &zero));
    CHECK(bp_transpose(t[2], NULL, &T));                  /* 10 h^T */
    CHECK(bp_matmul(t[10], t[9], &dw2));
    CHECK(bp_sum(t[9], 1, (int32_t[]){0}, false, &db2));
    CHECK(bp_transpose(m->w2, NULL, &T));                 /* 11 w2^T */
    CHECK(bp_matmul(t[9], t[11], &T));                    /* 12 dh */
    CHECK(bp_gt(t[1], zero, &T));                         /* 13 active */
    CHECK(bp_where(t[13], t[12], zero, &T));              /* 14 dz1 */
    CHECK(bp_transpose(x, NULL, &T));                     /* 15 x^T */
    CHECK(bp_matmul(t[15], t[14], &dw1));
    CHECK(bp_sum(t[14], 1, (int32_t[]){0}, false, &db1));
#undef T
    sgd(&m->w1, dw1, lr);
    sgd(&m->b1, db1, lr);
    sgd(&m->w2, dw2, lr);
    sgd(&m->b2, db2, lr);
    for (int i = 0; i < n; i++)
        bp_tensor_release(t[i]);
    bp_tensor_release(lr);
    bp_tensor_release(zero);
    return -loss * CLASSES;
}

static double train(bp_backend *be, model *m, int steps, const char *when)
{
    bp_tensor *x = NULL, *onehot = NULL;
    make_data(be, &x, &onehot);
    double loss = 0;
    for (int s = 0; s < steps; s++) {
        loss = train_step(be, m, x, onehot);
        if (s == 0 || s == steps - 1)
            printf("%s, step %2d on %s: loss %.4f\n", when, s, bp_backend_name(be), loss);
    }
    bp_tensor_release(x);
    bp_tensor_release(onehot);
    return loss;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "mlp.safetensors";
    bp_context *ctx = NULL;
    bp_backend *a = NULL, *b = NULL;
    CHECK(bp_context_create(NULL, &ctx));
    if (argc > 2)
        CHECK(bp_backend_get(ctx, argv[2], &a));
    else
        CHECK(bp_backend_default(ctx, &a));
    CHECK(bp_backend_get(ctx, argc > 3 ? argv[3] : "binary", &b));

    model m;
    init_model(a, &m);
    double first = train(a, &m, STEPS, "before saving");
    const bp_tensor *params[4] = {m.w1, m.b1, m.w2, m.b2};
    CHECK(bp_save_safetensors(path, 4, NAMES, params,
                              (const char *const[]){"model", "mlp 4-16-3", "steps", "40", NULL}));
    for (int i = 0; i < 4; i++)
        bp_tensor_release(*param(&m, i));
    printf("saved %s\n", path);

    /* a fresh model of the same architecture, filled from the file */
    static const int64_t shapes[4][2] = {{IN, HIDDEN}, {HIDDEN, 0}, {HIDDEN, CLASSES}, {CLASSES, 0}};
    bp_safetensors *f = NULL;
    CHECK(bp_safetensors_open(path, &f));
    model restored;
    for (int i = 0; i < 4; i++)
        CHECK(bp_safetensors_load_expect(f, NAMES[i], b, BP_F32, i % 2 ? 1 : 2, shapes[i],
                                         param(&restored, i)));
    bp_tensor *wrong = NULL; /* a model of another width: refused, naming the tensor */
    if (bp_safetensors_load_expect(f, "w1", b, BP_F32, 2, (int64_t[]){IN, 32}, &wrong) == BP_OK) {
        fprintf(stderr, "checkpoint: a mismatched shape was accepted\n");
        return 1;
    }
    printf("loading into a wider model is refused: %s\n", bp_last_error());
    bp_safetensors_close(f);

    double last = train(b, &restored, STEPS, "after loading");
    for (int i = 0; i < 4; i++)
        bp_tensor_release(*param(&restored, i));
    bp_context_destroy(ctx);
    if (!(last < first)) {
        fprintf(stderr, "checkpoint: the loss did not go down (%g -> %g)\n", first, last);
        return 1;
    }
    printf("the loss went on falling after the move: %.4f -> %.4f\n", first, last);
    return 0;
}

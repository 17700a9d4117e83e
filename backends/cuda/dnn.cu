/* CONV and CONV_TRANSPOSE through cuDNN (dnn.h): the convolutions' fast
 * path, with conv.cu's and conv_transpose.cu's im2col + cuBLAS path for
 * whatever it does not take.
 *
 * Staying cheap: libcudnn.so.9 is opened at the first convolution of the
 * process (never at plugin load; bpcu_device.so does not link it), and a
 * device's cuDNN handle is made at its first convolution. Without cuDNN
 * (or with an unusable one) the plugin says so once, at info level, and
 * every convolution takes the im2col path; `[backend.cuda] cudnn = off`
 * chooses that path outright.
 *
 * What cuDNN takes: f32, f16 and bf16 (f64 stays on cuBLAS's DGEMM), 1 to
 * 3 spatial axes (1-D as 2-D with a unit axis), x and y dense (the core
 * hands them so), symmetric non-negative padding (cuDNN's only kind),
 * extents below 2^31 and tensors below 2^31 elements; conv_transpose when
 * its output is the input of the forward convolution whose output is x
 * (output_padding below the stride), computed as cuDNN's backward data.
 *
 * The choice per shape: cuDNN's own ranking (the v7 heuristics, what
 * PyTorch uses unless told to benchmark), the first algorithm that
 * succeeds within the workspace limit and, for f32 without `tf32 = true`,
 * computes in FMA (no TF32); for conv_transpose the first deterministic
 * one if any fits. The descriptors and the choice are cached per shape
 * (dtype, geometry, groups); a shape cuDNN refuses is remembered and goes
 * to im2col. The workspace comes from the plugin's pool, stream-ordered.
 * f16 and bf16 run on tensor cores with an f32 accumulator (cuDNN's
 * "pseudo half" configuration: the data in 16 bits, the compute type f32).
 *
 * Arithmetic: y = conv(x, w) + bias with one rounding: y is first filled
 * with the bias (broadcast over N and space), then cuDNN computes alpha
 * conv + beta y with alpha = beta = 1 in f32 and rounds once into y. The
 * products are summed in cuDNN's order (any algorithm: GEMM, Winograd,
 * FFT), within conform's norm tolerance of K eps sum |w x|. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnn.h"
#include "nn_common.h"

#define BPDNN_COUNT(name) +1
static_assert(sizeof(bpdnn_api) == (0 BPDNN_SYMBOLS(BPDNN_COUNT)) * sizeof(void *),
              "dnn.h: bpdnn_api and BPDNN_SYMBOLS disagree");

/* ---- the library: once per process ------------------------------------------------------ */

static std::mutex lib_mu;
static int lib_state;              /* 0: not tried; 1: loaded; -1: none (lib_why) */
static bpdnn_api lib_api;
static char lib_why[512];

/* Open libcudnn.so.9 and find every symbol; false with lib_why set. It
 * stays loaded for the process's life, as the CUDA libraries do. */
static bool lib_load(void)
{
    void *lib = dlopen(BPDNN_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(lib_why, sizeof lib_why, "cuDNN not found (%s)", dlerror());
        return false;
    }
    static const char *const names[] = {
#define BPDNN_NAME(name) #name,
        BPDNN_SYMBOLS(BPDNN_NAME)
#undef BPDNN_NAME
    };
    char *slots = (char *)&lib_api;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        void *p = dlsym(lib, names[k]);
        if (!p) {
            snprintf(lib_why, sizeof lib_why, "%s has no %s (not cuDNN %d?)", BPDNN_LIBRARY,
                     names[k], BPDNN_MAJOR);
            dlclose(lib);
            return false;
        }
        memcpy(slots + k * sizeof p, &p, sizeof p);
    }
    const size_t v = lib_api.get_version(), rt = lib_api.get_cudart_version();
    if (v / 10000 != BPDNN_MAJOR || (int)(rt / 1000) != CUDART_VERSION / 1000) {
        snprintf(lib_why, sizeof lib_why, "%s is cuDNN %zu.%zu.%zu for CUDA %zu.%zu; this plugin "
                 "needs cuDNN %d for CUDA %d", BPDNN_LIBRARY, v / 10000, v / 100 % 100, v % 100,
                 rt / 1000, rt / 10 % 100, BPDNN_MAJOR, CUDART_VERSION / 1000);
        dlclose(lib);
        return false;
    }
    return true;
}

/* The library, opened at the first call; NULL without one (said once). */
static const bpdnn_api *lib_get(const bp_host_api *host)
{
    std::lock_guard<std::mutex> lock(lib_mu);
    if (lib_state == 0) {
        lib_state = lib_load() ? 1 : -1;
        if (lib_state < 0) {
            host->log(host->host, BP_LOG_INFO, "%s: convolutions use the built-in im2col + "
                      "cuBLAS path (slower; install cuDNN %d for CUDA %d to use it)", lib_why,
                      BPDNN_MAJOR, CUDART_VERSION / 1000);
        } else {
            const size_t v = lib_api.get_version();
            host->log(host->host, BP_LOG_INFO, "convolutions through cuDNN %zu.%zu.%zu (%s)",
                      v / 10000, v / 100 % 100, v % 100, BPDNN_LIBRARY);
        }
    }
    return lib_state > 0 ? &lib_api : NULL;
}

/* ---- a device's handle and cache ----------------------------------------------------------- */

#define BPDNN_CACHE 64 /* shapes remembered per device (least recently used replaced) */

typedef struct bpdnn_key {
    int32_t transpose, dtype, nd, tf32, groups;
    int32_t align16;               /* x, w and y start on 16 bytes (the plan's alignment) */
    int32_t x[5], w[5], y[5];      /* conv: x, w, y; conv_transpose: dy (x), w, dx (y) */
    int32_t pad[3], stride[3], dil[3];
} bpdnn_key;

/* One execution plan and what it was made from (kept for its life). */
typedef struct bpdnn_plan {
    bpdnn_desc plan;
    size_t ws;                     /* workspace bytes */
    bpdnn_desc keep[4];            /* op, graph, heuristics, the chosen config */
} bpdnn_plan;

typedef struct bpdnn_entry {
    bpdnn_key key;
    bool used;                     /* holds a shape */
    bool ok;                       /* false: cuDNN takes no algorithm for it (im2col) */
    bpdnn_tensor xd, yd;
    bpdnn_filter wd;
    bpdnn_conv cd;
    int algo;
    size_t ws;                     /* workspace bytes */
    uint64_t tick;                 /* last use */
    /* the backend API's execution plans (f16 / bf16 forward convolutions),
     * one per beta: [0] y = conv(x, w), [1] y = conv(x, w) + y over the
     * bias written into y first; a plan NULL: none (the legacy call above).
     * The tensors and the convolution they were made from are shared and
     * kept for their life. */
    bpdnn_desc keep[4];            /* x, w, y, conv */
    bpdnn_plan plan[2];
    bool plan_tried[2];
} bpdnn_entry;

struct bpdnn_state {
    const bpdnn_api *api;
    bpdnn_handle h;                /* NULL: cudnnCreate failed (failed_why): im2col */
    uint64_t tick;
    bpdnn_entry e[BPDNN_CACHE];
};

static void entry_clear(const bpdnn_api *api, bpdnn_entry *e)
{
    for (int b = 0; b < 2; b++) {
        bpdnn_plan *p = &e->plan[b];
        if (p->plan)
            api->b_destroy(p->plan);
        for (size_t j = 0; j < sizeof p->keep / sizeof p->keep[0]; j++)
            if (p->keep[j])
                api->b_destroy(p->keep[j]);
    }
    for (size_t j = 0; j < sizeof e->keep / sizeof e->keep[0]; j++)
        if (e->keep[j])
            api->b_destroy(e->keep[j]);
    if (e->xd)
        api->destroy_tensor(e->xd);
    if (e->yd)
        api->destroy_tensor(e->yd);
    if (e->wd)
        api->destroy_filter(e->wd);
    if (e->cd)
        api->destroy_conv(e->cd);
    memset(e, 0, sizeof *e);
}

void bpcu_dnn_close(bpcu_device *d)
{
    bpdnn_state *s = d->dnn;
    if (!s)
        return;
    for (int k = 0; k < BPDNN_CACHE; k++)
        entry_clear(s->api, &s->e[k]);
    if (s->h)
        s->api->destroy(s->h);
    free(s);
    d->dnn = NULL;
}

/* d's state, made at the first call (under d->dnn_mu); NULL: no cuDNN. */
static bpdnn_state *state_get(bpcu_device *d)
{
    if (d->dnn)
        return d->dnn->h ? d->dnn : NULL;
    const bpdnn_api *api = lib_get(d->host);
    if (!api)
        return NULL;
    bpdnn_state *s = (bpdnn_state *)calloc(1, sizeof *s);
    if (!s)
        return NULL; /* no memory for the cache: im2col, which needs none */
    s->api = api;
    bpdnn_status r = api->create(&s->h);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->set_stream(s->h, d->stream);
    if (r != BPDNN_STATUS_SUCCESS) {
        d->host->log(d->host->host, BP_LOG_WARN, "device %d: cuDNN's handle: %s; "
                     "convolutions use the built-in im2col + cuBLAS path", d->ordinal,
                     api->error_string(r));
        if (s->h)
            api->destroy(s->h);
        s->h = NULL;
    }
    d->dnn = s; /* kept even when failed, so that cudnnCreate is tried once */
    return s->h ? s : NULL;
}

/* ---- the geometry cuDNN takes ---------------------------------------------------------------- */

static bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* The key of c's convolution, or false if cuDNN does not take it. */
static bool key_of(const bpcu_device *d, const bpcu_opcall *c, bpdnn_key *k)
{
    const bp_view *x = c->in[0], *w = c->in[1], *y = c->out[0];
    const bp_dtype dt = x->dtype;
    memset(k, 0, sizeof *k);
    if ((dt != BP_F32 && dt != BP_F16 && dt != BP_BF16) || w->dtype != dt || y->dtype != dt ||
        !bpcu_conv_dense(x) || !bpcu_conv_dense(y) || bpcu_numel(x) > INT_MAX ||
        bpcu_numel(y) > INT_MAX || bpcu_numel(w) > INT_MAX || !fits_int(c->p.i[15]))
        return false;
    const bpcu_win g = bpcu_win_of(&c->p, x, y);
    const int s = x->rank - 2;
    const int nd = s == 3 ? 3 : 2;   /* 1-D as 2-D: the padded axis is a unit one */
    k->transpose = c->op == BP_OP_CONV_TRANSPOSE;
    k->dtype = (int32_t)dt;
    k->nd = nd;
    k->tf32 = d->tf32;
    k->groups = (int32_t)c->p.i[15];
    k->align16 = (((uintptr_t)bpcu_ptr(x) | (uintptr_t)bpcu_ptr(w) | (uintptr_t)bpcu_ptr(y)) & 15) == 0;
    k->x[0] = (int32_t)x->shape[0], k->x[1] = (int32_t)x->shape[1];
    k->y[0] = (int32_t)y->shape[0], k->y[1] = (int32_t)y->shape[1];
    k->w[0] = (int32_t)w->shape[0], k->w[1] = (int32_t)w->shape[1];
    if (!fits_int(x->shape[1]) || !fits_int(y->shape[1]) || !fits_int(w->shape[0]) ||
        !fits_int(w->shape[1]))
        return false;
    for (int j = 0; j < nd; j++) {
        const int a = 3 - nd + j; /* the window's axis (padded to three at the front) */
        const int64_t in = g.in[a], out = g.out[a], kk = g.k[a], st = g.st[a], dl = g.dl[a];
        const int64_t p = g.pb[a];
        if (p != g.pe[a] || !fits_int(p) || !fits_int(in) || !fits_int(out) || !fits_int(kk) ||
            !fits_int(st) || !fits_int(dl) || st < 1 || dl < 1 || kk < 1)
            return false;
        /* the forward convolution's output extent from its input's (cuDNN's rule) */
        const int64_t fin = k->transpose ? out : in, fout = k->transpose ? in : out;
        const int64_t span = (kk - 1) * dl + 1;
        if (fin + 2 * p < span || (fin + 2 * p - span) / st + 1 != fout)
            return false;
        k->x[2 + j] = (int32_t)in, k->y[2 + j] = (int32_t)out, k->w[2 + j] = (int32_t)kk;
        k->pad[j] = (int32_t)p, k->stride[j] = (int32_t)st, k->dil[j] = (int32_t)dl;
    }
    return true;
}

static int data_type(int32_t dt)
{
    return dt == BP_F16 ? BPDNN_DATA_HALF : dt == BP_BF16 ? BPDNN_DATA_BFLOAT16 : BPDNN_DATA_FLOAT;
}

/* The row-major (NCHW, NCDHW) strides of n dims, in elements. */
static void dense_strides(int n, const int32_t *dims, int64_t *sv)
{
    int64_t stride = 1;
    for (int j = n - 1; j >= 0; j--) {
        sv[j] = stride;
        stride *= dims[j] > 0 ? dims[j] : 1;
    }
}

/* A dense NCHW (NCDHW) tensor descriptor of dims */
static bpdnn_status tensor_set(const bpdnn_api *api, bpdnn_tensor t, int dt, int n,
                               const int32_t *dims)
{
    int dv[5], sv[5];
    int64_t s64[5];
    dense_strides(n, dims, s64);
    for (int j = 0; j < n; j++)
        dv[j] = dims[j], sv[j] = (int)s64[j];
    return api->set_tensor(t, dt, n, dv, sv);
}

/* The most workspace an algorithm may ask for: a share of the pool's cap. */
static size_t ws_limit(const bpcu_device *d)
{
    const uint64_t lo = (uint64_t)256 << 20, hi = (uint64_t)2 << 30, cap = d->cap / 8;
    return (size_t)(cap < lo ? lo : cap > hi ? hi : cap);
}

/* Whether perf p is one to take: it runs, fits, and keeps f32 off TF32
 * unless the config allows it. */
static bool perf_ok(const bpcu_device *d, const bpdnn_key &k, const bpdnn_perf &p)
{
    if (p.status != BPDNN_STATUS_SUCCESS || p.memory > ws_limit(d))
        return false;
    return !(k.dtype == BP_F32 && !k.tf32 && p.math_type != BPDNN_FMA_MATH);
}

/* Descriptors and the algorithm for key k in e (e->ok false when cuDNN has
 * none for it); the cuDNN status of a failure that is not a refusal. */
static bpdnn_status entry_make(bpcu_device *d, bpdnn_state *s, const bpdnn_key &k, bpdnn_entry *e)
{
    const bpdnn_api *api = s->api;
    memset(e, 0, sizeof *e);
    e->key = k;
    e->used = true;
    const int dt = data_type(k.dtype), n = k.nd + 2;
    bpdnn_status r = api->create_tensor(&e->xd);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->create_tensor(&e->yd);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->create_filter(&e->wd);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->create_conv(&e->cd);
    if (r != BPDNN_STATUS_SUCCESS)
        return r;
    int wd[5];
    for (int j = 0; j < n; j++)
        wd[j] = k.w[j];
    const int math = k.dtype == BP_F32 ? (k.tf32 ? BPDNN_DEFAULT_MATH : BPDNN_FMA_MATH)
                                       : BPDNN_TENSOR_OP_MATH;
    /* a refusal of the shape (bad parameters, not supported) sends it to im2col */
    r = tensor_set(api, e->xd, dt, n, k.x);
    if (r == BPDNN_STATUS_SUCCESS)
        r = tensor_set(api, e->yd, dt, n, k.y);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->set_filter(e->wd, dt, BPDNN_TENSOR_NCHW, n, wd);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->set_conv(e->cd, k.nd, k.pad, k.stride, k.dil, BPDNN_CROSS_CORRELATION,
                          BPDNN_DATA_FLOAT);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->set_conv_groups(e->cd, k.groups);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->set_conv_math(e->cd, math);
    bpdnn_perf perf[16];
    int got = 0;
    memset(perf, 0, sizeof perf);
    if (r == BPDNN_STATUS_SUCCESS)
        r = k.transpose ? api->bwd_algos(s->h, e->wd, e->xd, e->cd, e->yd, 16, &got, perf)
                        : api->fwd_algos(s->h, e->xd, e->wd, e->cd, e->yd, 16, &got, perf);
    if (r != BPDNN_STATUS_SUCCESS)
        return BPDNN_STATUS_SUCCESS; /* e->ok stays false */
    int pick = -1;
    for (int j = 0; j < got && j < 16 && pick < 0; j++)
        if (perf_ok(d, k, perf[j]) && (!k.transpose || perf[j].determinism == BPDNN_DETERMINISTIC))
            pick = j;
    for (int j = 0; j < got && j < 16 && pick < 0; j++)
        if (perf_ok(d, k, perf[j]))
            pick = j;
    if (pick < 0)
        return BPDNN_STATUS_SUCCESS;
    e->algo = perf[pick].algo;
    r = api->set_conv_math(e->cd, perf[pick].math_type);
    if (r == BPDNN_STATUS_SUCCESS)
        r = k.transpose ? api->bwd_workspace(s->h, e->wd, e->xd, e->cd, e->yd, e->algo, &e->ws)
                        : api->fwd_workspace(s->h, e->xd, e->wd, e->cd, e->yd, e->algo, &e->ws);
    e->ok = r == BPDNN_STATUS_SUCCESS && e->ws <= ws_limit(d);
    return BPDNN_STATUS_SUCCESS;
}

/* ---- the backend API's plan ----------------------------------------------------------------- */

/* A dense NCHW (NCDHW) tensor of the backend API, with its uid. */
static bpdnn_desc plan_tensor(const bpdnn_api *api, int dt, int n, const int32_t *dims,
                              int64_t uid, int64_t align)
{
    bpdnn_desc t = NULL;
    int64_t dv[5], sv[5];
    dense_strides(n, dims, sv);
    for (int j = 0; j < n; j++)
        dv[j] = dims[j];
    if (api->b_create(BPDNN_B_TENSOR, &t) != BPDNN_STATUS_SUCCESS)
        return NULL;
    bool ok = api->b_set(t, BPDNN_A_TENSOR_DATA_TYPE, BPDNN_T_DATA_TYPE, 1, &dt) == 0 &&
              api->b_set(t, BPDNN_A_TENSOR_DIMS, BPDNN_T_INT64, n, dv) == 0 &&
              api->b_set(t, BPDNN_A_TENSOR_STRIDES, BPDNN_T_INT64, n, sv) == 0 &&
              api->b_set(t, BPDNN_A_TENSOR_UID, BPDNN_T_INT64, 1, &uid) == 0 &&
              api->b_set(t, BPDNN_A_TENSOR_ALIGNMENT, BPDNN_T_INT64, 1, &align) == 0 &&
              api->b_finalize(t) == 0;
    if (!ok) {
        api->b_destroy(t);
        return NULL;
    }
    return t;
}

/* Whether the engine of configuration cfg computes as the legacy call
 * does: an f32 accumulator (no reduced-precision reduction), the same bits
 * every run (no non-deterministic split), and no kernel compiled at run
 * time (NVRTC at the first call, and a library more). */
static bool plan_engine_ok(const bpdnn_api *api, bpdnn_desc cfg)
{
    bpdnn_desc eng = NULL;
    if (api->b_create(BPDNN_B_ENGINE, &eng) != BPDNN_STATUS_SUCCESS)
        return false;
    int64_t n = 0, nb = 0;
    int notes[BPDNN_NOTE_TYPE_COUNT], behaviour[BPDNN_BEHAVIOR_TYPE_COUNT];
    bool ok = api->b_get(cfg, BPDNN_A_CFG_ENGINE, BPDNN_T_DESCRIPTOR, 1, &n, &eng) == 0 &&
              api->b_get(eng, BPDNN_A_ENGINE_NUMERICAL_NOTE, BPDNN_T_NUMERICAL_NOTE,
                         BPDNN_NOTE_TYPE_COUNT, &n, notes) == 0 &&
              api->b_get(eng, BPDNN_A_ENGINE_BEHAVIOR_NOTE, BPDNN_T_BEHAVIOR_NOTE,
                         BPDNN_BEHAVIOR_TYPE_COUNT, &nb, behaviour) == 0;
    for (int64_t j = 0; ok && j < n && j < BPDNN_NOTE_TYPE_COUNT; j++)
        ok = notes[j] != BPDNN_NOTE_REDUCED_PRECISION_REDUCTION &&
             notes[j] != BPDNN_NOTE_NONDETERMINISTIC;
    for (int64_t j = 0; ok && j < nb && j < BPDNN_BEHAVIOR_TYPE_COUNT; j++)
        ok = behaviour[j] != BPDNN_BEHAVIOR_RUNTIME_COMPILATION;
    api->b_destroy(eng);
    return ok;
}

/* The tensors and the convolution of e's key for its plans, in e->keep;
 * false when the backend API refuses one. */
static bool plan_operands(const bpdnn_api *api, bpdnn_entry *e)
{
    const bpdnn_key &k = e->key;
    const int dt = data_type(k.dtype), n = k.nd + 2;
    const int64_t align = k.align16 ? 16 : 2;
    bpdnn_desc *keep = e->keep;
    if (keep[3])
        return true; /* made for the other plan */
    if (keep[0] || keep[1] || keep[2])
        return false; /* refused before */
    keep[0] = plan_tensor(api, dt, n, k.x, 1, align);
    keep[1] = plan_tensor(api, dt, n, k.w, 2, align);
    keep[2] = plan_tensor(api, dt, n, k.y, 3, align);
    if (!keep[0] || !keep[1] || !keep[2])
        return false;
    const int64_t nd = k.nd;
    int64_t pad[3], st[3], dl[3];
    for (int j = 0; j < k.nd; j++)
        pad[j] = k.pad[j], st[j] = k.stride[j], dl[j] = k.dil[j];
    const int comp = BPDNN_DATA_FLOAT, mode = BPDNN_CROSS_CORRELATION;
    bpdnn_desc conv = NULL;
    if (api->b_create(BPDNN_B_CONVOLUTION, &conv) != 0)
        return false;
    if (api->b_set(conv, BPDNN_A_CONV_COMP_TYPE, BPDNN_T_DATA_TYPE, 1, &comp) != 0 ||
        api->b_set(conv, BPDNN_A_CONV_MODE, BPDNN_T_CONV_MODE, 1, &mode) != 0 ||
        api->b_set(conv, BPDNN_A_CONV_SPATIAL_DIMS, BPDNN_T_INT64, 1, &nd) != 0 ||
        api->b_set(conv, BPDNN_A_CONV_DILATIONS, BPDNN_T_INT64, nd, dl) != 0 ||
        api->b_set(conv, BPDNN_A_CONV_FILTER_STRIDES, BPDNN_T_INT64, nd, st) != 0 ||
        api->b_set(conv, BPDNN_A_CONV_PRE_PADDINGS, BPDNN_T_INT64, nd, pad) != 0 ||
        api->b_set(conv, BPDNN_A_CONV_POST_PADDINGS, BPDNN_T_INT64, nd, pad) != 0 ||
        api->b_finalize(conv) != 0) {
        api->b_destroy(conv);
        return false;
    }
    keep[3] = conv; /* set last: its presence says the four are made */
    return true;
}

/* The execution plan for e's key (an f16 or bf16 forward convolution) with
 * beta 0 or 1, in e->plan[beta]; its plan stays NULL when the backend API
 * takes no engine for it, and the legacy call is used. PyTorch runs its
 * convolutions this way by default; the legacy call (cudnnConvolutionForward)
 * builds what it runs at every call: on an H200 it spent some 50 us of host
 * time per call on ResNet-50's f16 layers, twice the kernels' time. Beta 1
 * adds the convolution to the bias written into y, in f32, rounded once
 * (the legacy call's arithmetic). The heuristics are cuDNN's instant mode
 * (as PyTorch's default), taken in their order: the first engine that
 * plan_engine_ok accepts, that finalizes, and whose workspace fits. */
/* Says at debug level (BP_LOG_LEVEL=debug) what became of e's plan with
 * beta: made (its workspace), or where the backend API stopped (why). */
static void plan_note(bpcu_device *d, const bpdnn_entry *e, int beta, const char *why)
{
    const bpdnn_key &k = e->key;
    const bpdnn_plan *p = &e->plan[beta];
    char dims[160];
    snprintf(dims, sizeof dims, "%s x (%d,%d,%d,%d) w (%d,%d,%d,%d) stride %d groups %d",
             bp_dtype_name((bp_dtype)k.dtype), k.x[0], k.x[1], k.x[2], k.x[3], k.w[0], k.w[1],
             k.w[2], k.w[3], k.stride[0], k.groups);
    if (p->plan)
        d->host->log(d->host->host, BP_LOG_DEBUG, "conv %s: cuDNN execution plan (beta %d) "
                     "made, workspace %zu bytes", dims, beta, p->ws);
    else
        d->host->log(d->host->host, BP_LOG_DEBUG, "conv %s: no cuDNN execution plan "
                     "(beta %d): %s; the legacy call runs it", dims, beta, why);
}

static void plan_make(bpcu_device *d, bpdnn_state *s, bpdnn_entry *e, int beta)
{
    const bpdnn_api *api = s->api;
    bpdnn_plan *p = &e->plan[beta];
    e->plan_tried[beta] = true;
    if (!plan_operands(api, e))
        return plan_note(d, e, beta, "the tensors or the convolution were refused");
    bpdnn_desc *keep = p->keep;
    const float alpha = 1.0f, fbeta = (float)beta;
    if (api->b_create(BPDNN_B_OP_CONV_FORWARD, &keep[0]) != 0 ||
        api->b_set(keep[0], BPDNN_A_FWD_X, BPDNN_T_DESCRIPTOR, 1, &e->keep[0]) != 0 ||
        api->b_set(keep[0], BPDNN_A_FWD_W, BPDNN_T_DESCRIPTOR, 1, &e->keep[1]) != 0 ||
        api->b_set(keep[0], BPDNN_A_FWD_Y, BPDNN_T_DESCRIPTOR, 1, &e->keep[2]) != 0 ||
        api->b_set(keep[0], BPDNN_A_FWD_CONV, BPDNN_T_DESCRIPTOR, 1, &e->keep[3]) != 0 ||
        api->b_set(keep[0], BPDNN_A_FWD_ALPHA, BPDNN_T_FLOAT, 1, &alpha) != 0 ||
        api->b_set(keep[0], BPDNN_A_FWD_BETA, BPDNN_T_FLOAT, 1, &fbeta) != 0 ||
        api->b_finalize(keep[0]) != 0)
        return plan_note(d, e, beta, "the convolution operation was refused");
    if (api->b_create(BPDNN_B_OPERATION_GRAPH, &keep[1]) != 0 ||
        api->b_set(keep[1], BPDNN_A_GRAPH_OPS, BPDNN_T_DESCRIPTOR, 1, &keep[0]) != 0 ||
        api->b_set(keep[1], BPDNN_A_GRAPH_HANDLE, BPDNN_T_HANDLE, 1, &s->h) != 0 ||
        api->b_finalize(keep[1]) != 0)
        return plan_note(d, e, beta, "the operation graph was refused");
    const int heur_mode = BPDNN_HEUR_INSTANT;
    if (api->b_create(BPDNN_B_ENGINEHEUR, &keep[2]) != 0 ||
        api->b_set(keep[2], BPDNN_A_HEUR_GRAPH, BPDNN_T_DESCRIPTOR, 1, &keep[1]) != 0 ||
        api->b_set(keep[2], BPDNN_A_HEUR_MODE, BPDNN_T_HEUR_MODE, 1, &heur_mode) != 0 ||
        api->b_finalize(keep[2]) != 0)
        return plan_note(d, e, beta, "the heuristics were refused");
    int64_t count = 0;
    if (api->b_get(keep[2], BPDNN_A_HEUR_RESULTS, BPDNN_T_DESCRIPTOR, 0, &count, NULL) != 0 ||
        count < 1)
        return plan_note(d, e, beta, "the heuristics offered no engine");
    constexpr int64_t MOST = 8; /* the heuristics' first configurations tried */
    bpdnn_desc cfg[MOST] = {NULL};
    const int64_t want = count < MOST ? count : MOST;
    int64_t made = 0;
    while (made < want && api->b_create(BPDNN_B_ENGINECFG, &cfg[made]) == 0)
        made++;
    int64_t got = 0;
    if (made == want &&
        api->b_get(keep[2], BPDNN_A_HEUR_RESULTS, BPDNN_T_DESCRIPTOR, want, &got, cfg) == 0) {
        for (int64_t j = 0; j < got && j < want && !p->plan; j++) {
            if (!plan_engine_ok(api, cfg[j]))
                continue;
            bpdnn_desc plan = NULL;
            int64_t ws = 0, nws = 0;
            if (api->b_create(BPDNN_B_EXECUTION_PLAN, &plan) != 0)
                break;
            if (api->b_set(plan, BPDNN_A_PLAN_HANDLE, BPDNN_T_HANDLE, 1, &s->h) == 0 &&
                api->b_set(plan, BPDNN_A_PLAN_CFG, BPDNN_T_DESCRIPTOR, 1, &cfg[j]) == 0 &&
                api->b_finalize(plan) == 0 &&
                api->b_get(plan, BPDNN_A_PLAN_WORKSPACE, BPDNN_T_INT64, 1, &nws, &ws) == 0 &&
                ws >= 0 && (uint64_t)ws <= (uint64_t)ws_limit(d)) {
                p->plan = plan;
                p->ws = (size_t)ws;
                keep[3] = cfg[j]; /* the plan's configuration lives as long as it */
                cfg[j] = NULL;
            } else {
                api->b_destroy(plan);
            }
        }
    }
    for (int64_t j = 0; j < made; j++)
        if (cfg[j])
            api->b_destroy(cfg[j]);
    plan_note(d, e, beta, "none of the heuristics' first engines computes as the legacy call "
              "(f32 accumulation, deterministic, precompiled) and finalizes within the workspace "
              "limit");
}

/* Whether a shape takes the plan: an f16 or bf16 forward convolution whose
 * channels per group are a multiple of 8 (whole tensor-core fragments).
 * That is where the plan was measured on an H200: ResNet-50's 3x3 layers
 * (64 to 512 channels, strides 1 and 2) at PyTorch's speed, 0.053 ms
 * against the legacy call's 0.063, 0.034 against 0.078; the pointwise
 * layers below 1024 positions (those above go to cuBLAS, conv.cu): a
 * (32, 512, 7, 7) x (2048, 512, 1, 1) f16 layer 0.029 ms against the
 * legacy call's 0.059 to 0.099 (PyTorch 0.030 to 0.040). The 7x7 stem over
 * 3 channels ran slower through the plan (0.311 ms against 0.187) and
 * keeps the legacy call. */
static bool plan_wanted(const bpdnn_key &k)
{
    return !k.transpose && (k.dtype == BP_F16 || k.dtype == BP_BF16) && k.w[1] % 8 == 0;
}

/* Runs plan p: y = conv(x, w) (+ y) with the workspace ws; the cuDNN status. */
static bpdnn_status plan_run(const bpdnn_api *api, bpdnn_state *s, const bpdnn_plan *p,
                             const void *x, const void *w, void *y, void *ws)
{
    bpdnn_desc pack = NULL;
    bpdnn_status r = api->b_create(BPDNN_B_VARIANT_PACK, &pack);
    if (r != BPDNN_STATUS_SUCCESS)
        return r;
    const int64_t uids[3] = {1, 2, 3};
    void *ptrs[3] = {(void *)x, (void *)w, y};
    r = api->b_set(pack, BPDNN_A_PACK_UIDS, BPDNN_T_INT64, 3, uids);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->b_set(pack, BPDNN_A_PACK_POINTERS, BPDNN_T_VOID_PTR, 3, ptrs);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->b_set(pack, BPDNN_A_PACK_WORKSPACE, BPDNN_T_VOID_PTR, 1, &ws);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->b_finalize(pack);
    if (r == BPDNN_STATUS_SUCCESS)
        r = api->b_execute(s->h, p->plan, pack);
    api->b_destroy(pack);
    return r;
}

/* The entry for k: cached, or made in the least recently used slot.
 * NULL with *r set when cuDNN failed for another reason than the shape. */
static bpdnn_entry *entry_get(bpcu_device *d, bpdnn_state *s, const bpdnn_key &k, bpdnn_status *r)
{
    *r = BPDNN_STATUS_SUCCESS;
    bpdnn_entry *lru = &s->e[0];
    for (int j = 0; j < BPDNN_CACHE; j++) {
        bpdnn_entry *e = &s->e[j];
        if (e->used && memcmp(&e->key, &k, sizeof k) == 0) {
            e->tick = ++s->tick;
            return e;
        }
        if (!e->used || (lru->used && e->tick < lru->tick))
            lru = e;
    }
    entry_clear(s->api, lru);
    *r = entry_make(d, s, k, lru);
    lru->tick = ++s->tick;
    if (*r != BPDNN_STATUS_SUCCESS) {
        entry_clear(s->api, lru);
        return NULL;
    }
    if (lru->ok && plan_wanted(k))
        plan_make(d, s, lru, 0);
    return lru;
}

/* ---- the entry ---------------------------------------------------------------------------------- */

bool bpcu_dnn_conv(bpcu_device *d, const bpcu_opcall *c, bp_status *st)
{
    bpdnn_key k;
    /* cuDNN may read (and so clear) the thread's CUDA error slot: with the
     * caller's error pending there, the built-in path leaves it alone */
    if (!d->cudnn || !key_of(d, c, &k) || cudaPeekAtLastError() != cudaSuccess)
        return false;
    std::lock_guard<std::mutex> lock(d->dnn_mu);
    bpdnn_state *s = state_get(d);
    if (!s)
        return false;
    const bpdnn_api *api = s->api;
    bpdnn_status r;
    bpdnn_entry *e = entry_get(d, s, k, &r);
    const char *opname = bp_op_name(c->op);
    if (!e) {
        *st = bpcu_fail(d, BP_ERR_BACKEND, "cuda: %s: cuDNN's descriptors: %s; remedy: set "
                        "[backend.cuda] cudnn = off to use the built-in path", opname,
                        api->error_string(r));
        return true;
    }
    if (!e->ok)
        return false;
    const bp_view *x = c->in[0], *w = c->in[1], *bias = c->in[2], *y = c->out[0];
    bpcu_buf wb = bpcu_buf();
    bp_view wdv;
    const char *wp = NULL;
    void *ws = NULL;
    *st = bpcu_conv_operand(d, w, &wb, &wdv, &wp); /* dense already, as the core hands it */
    /* the backend API's plan: beta 0 without a bias, beta 1 over the bias
     * written into y (that plan made at the shape's first call with one) */
    const int pb = bias ? 1 : 0;
    if (*st == BP_OK && e->plan[0].plan && !e->plan_tried[pb])
        plan_make(d, s, e, pb);
    bpdnn_plan *p = &e->plan[pb];
    if (*st == BP_OK && p->plan) {
        if (p->ws > 0)
            *st = bpcu_scratch(d, p->ws, &ws);
        if (*st == BP_OK && bias) {
            cudaError_t ce = bpcu_conv_bias_fill(d, y, bias);
            if (ce != cudaSuccess)
                *st = bpcu_cuda_fail(d, ce, "%s bias kernel", opname);
        }
        if (*st == BP_OK) {
            r = plan_run(api, s, p, bpcu_ptr(x), wp, bpcu_ptr(y), ws);
            if (r != BPDNN_STATUS_NOT_SUPPORTED) {
                if (r != BPDNN_STATUS_SUCCESS)
                    *st = bpcu_fail(d, BP_ERR_BACKEND, "cuda: %s: cudnnBackendExecute: %s; "
                                    "remedy: set [backend.cuda] cudnn = off to use the built-in "
                                    "path", opname, api->error_string(r));
                bpcu_scratch_free(d, ws);
                bpcu_scratch_free(d, wb.ptr);
                return true;
            }
            /* refused at the call: the legacy call from now on for this shape and beta
             * (it writes y whole again: the bias below, then beta 1) */
            api->b_destroy(p->plan);
            p->plan = NULL;
        }
        bpcu_scratch_free(d, ws);
        ws = NULL;
    }
    if (*st == BP_OK && e->ws > 0)
        *st = bpcu_scratch(d, e->ws, &ws);
    if (*st == BP_OK && bias) {
        cudaError_t ce = bpcu_conv_bias_fill(d, y, bias);
        if (ce != cudaSuccess)
            *st = bpcu_cuda_fail(d, ce, "%s bias kernel", opname);
    }
    if (*st == BP_OK) {
        const float one = 1.0f, beta = bias ? 1.0f : 0.0f;
        r = k.transpose ? api->bwd(s->h, &one, e->wd, wp, e->xd, bpcu_ptr(x), e->cd, e->algo, ws,
                                   e->ws, &beta, e->yd, bpcu_ptr(y))
                        : api->fwd(s->h, &one, e->xd, bpcu_ptr(x), e->wd, wp, e->cd, e->algo, ws,
                                   e->ws, &beta, e->yd, bpcu_ptr(y));
        if (r == BPDNN_STATUS_NOT_SUPPORTED) {
            /* refused at the call: im2col writes every element of y (the
             * bias filled in it included), now and for this shape later */
            e->ok = false;
            bpcu_scratch_free(d, ws);
            bpcu_scratch_free(d, wb.ptr);
            return false;
        }
        if (r != BPDNN_STATUS_SUCCESS)
            *st = bpcu_fail(d, BP_ERR_BACKEND, "cuda: %s: %s: %s; remedy: set [backend.cuda] "
                            "cudnn = off to use the built-in path", opname,
                            k.transpose ? "cudnnConvolutionBackwardData"
                                        : "cudnnConvolutionForward",
                            api->error_string(r));
    }
    bpcu_scratch_free(d, ws);
    bpcu_scratch_free(d, wb.ptr);
    return true;
}

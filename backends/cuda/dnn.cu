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
            host->log(host->host, BP_LOG_INFO, "cuda: %s: convolutions use the built-in im2col + "
                      "cuBLAS path (slower; install cuDNN %d for CUDA %d to use it)", lib_why,
                      BPDNN_MAJOR, CUDART_VERSION / 1000);
        } else {
            const size_t v = lib_api.get_version();
            host->log(host->host, BP_LOG_INFO, "cuda: convolutions through cuDNN %zu.%zu.%zu (%s)",
                      v / 10000, v / 100 % 100, v % 100, BPDNN_LIBRARY);
        }
    }
    return lib_state > 0 ? &lib_api : NULL;
}

/* ---- a device's handle and cache ----------------------------------------------------------- */

#define BPDNN_CACHE 64 /* shapes remembered per device (least recently used replaced) */

typedef struct bpdnn_key {
    int32_t transpose, dtype, nd, tf32, groups;
    int32_t x[5], w[5], y[5];      /* conv: x, w, y; conv_transpose: dy (x), w, dx (y) */
    int32_t pad[3], stride[3], dil[3];
} bpdnn_key;

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
} bpdnn_entry;

struct bpdnn_state {
    const bpdnn_api *api;
    bpdnn_handle h;                /* NULL: cudnnCreate failed (failed_why): im2col */
    uint64_t tick;
    bpdnn_entry e[BPDNN_CACHE];
};

static void entry_clear(const bpdnn_api *api, bpdnn_entry *e)
{
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
        d->host->log(d->host->host, BP_LOG_WARN, "cuda: device %d: cuDNN's handle: %s; "
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

/* A dense NCHW (NCDHW) tensor descriptor of dims */
static bpdnn_status tensor_set(const bpdnn_api *api, bpdnn_tensor t, int dt, int n,
                               const int32_t *dims)
{
    int dv[5], sv[5];
    int64_t stride = 1;
    for (int j = n - 1; j >= 0; j--) {
        dv[j] = dims[j];
        sv[j] = (int)stride;
        stride *= dims[j] > 0 ? dims[j] : 1;
    }
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
    return lru;
}

/* ---- the bias, written into y before cuDNN adds the convolution ------------------------------ */

/* y[n, m, ...] = bias[m]: blocks of y walk the (n, m) planes, x's threads
 * the plane; the bias element read once per plane */
template <class S>
__global__ void bpcu_k_bias_fill(S *y, bpcu_nv bias, int64_t M, int64_t planes, int64_t inner)
{
    for (int64_t u = blockIdx.y; u < planes; u += gridDim.y) {
        const int64_t m = u % M;
        const S v = bpcu_ft<S>::std_(bpcu_nv_ld(bias, m * bias.strides[0])); /* exact: same dtype */
        S *py = y + u * inner;
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < inner;
             i += (int64_t)gridDim.x * blockDim.x)
            py[i] = v;
    }
}

static cudaError_t bias_fill(bpcu_device *d, const bp_view *y, const bp_view *bias)
{
    const int64_t M = y->shape[1], planes = y->shape[0] * M;
    const int64_t inner = planes > 0 ? bpcu_numel(y) / planes : 0;
    if (inner == 0)
        return cudaSuccess;
    int64_t bx = (inner + 255) / 256, by = planes;
    bx = bx > 64 ? 64 : bx;
    by = by > 65535 ? 65535 : by;
    const bpcu_nv b = bpcu_nv_of(bias);
    const dim3 grid((unsigned)bx, (unsigned)by);
    cudaError_t e = cudaSuccess;
    switch (y->dtype) {
    case BP_F32: e = bpcu_launch(d->stream, grid, 256, 0, bpcu_k_bias_fill<float>, (float *)bpcu_ptr(y), b, M, planes, inner); break;
    case BP_F16: e = bpcu_launch(d->stream, grid, 256, 0, bpcu_k_bias_fill<bpcu_h16>, (bpcu_h16 *)bpcu_ptr(y), b, M, planes, inner); break;
    default: e = bpcu_launch(d->stream, grid, 256, 0, bpcu_k_bias_fill<bpcu_b16>, (bpcu_b16 *)bpcu_ptr(y), b, M, planes, inner); break;
    }
    return e;
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
    if (*st == BP_OK && e->ws > 0)
        *st = bpcu_scratch(d, e->ws, &ws);
    if (*st == BP_OK && bias) {
        cudaError_t ce = bias_fill(d, y, bias);
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

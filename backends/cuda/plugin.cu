/* The cuda backend's descriptor, lifecycle, device check and buffers.
 *
 * open() reads [backend.cuda], asks the runtime for the driver, the runtime
 * and the devices, decides for each device with the pure compute-capability
 * check (cc_check.h) against the architectures this build recorded, then
 * proves the decision with a probe kernel. Refused devices are logged with
 * the reason and the remedy; if none remain, open fails with all of them.
 * Each exposed device gets a stream, a stream-ordered memory pool capped by
 * memory_fraction, a cuBLAS handle and two pinned staging buffers. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "bpcu.h"

#define BPCU_MAX_DEVICES 64

typedef struct bpcu_devrec {
    int ordinal;
    char name[128];
    int major, minor;
    uint64_t total;
    bpcu_decision dec;
} bpcu_devrec;

typedef struct bpcu_state {
    const bp_host_api *host;
    int driver, runtime;
    double memory_fraction;
    bool tf32;
    int count;                     /* exposed devices */
    bpcu_devrec dev[BPCU_MAX_DEVICES];
} bpcu_state;

static const bp_config_key cuda_keys[] = {
    {"devices", "CUDA device numbers to expose, e.g. \"0, 2\", or \"all\"", "all"},
    {"memory_fraction", "cap on each device's memory pool, a fraction of its memory in (0, 1]",
     "0.9"},
    {"tf32", "let f32 matmul use TF32 tensor cores (faster, ~10-bit mantissa)", "false"},
    {"allow_ptx_jit", "run devices that only this build's PTX fits, JIT-compiled by the driver",
     "true"},
    {"allow_cc", "compute capabilities to try even when no image fits, e.g. \"12.0, 8.6\"", ""},
    {"deny_cc", "compute capabilities never to use, e.g. \"7.5\"", ""},
    {NULL, NULL, NULL},
};

/* ---- shared helpers (bpcu.h) ------------------------------------------------ */

bp_status bpcu_fail(bpcu_device *d, bp_status code, const char *fmt, ...)
{
    const bp_host_api *host = d ? d->host : NULL;
    if (host && host->set_error) {
        char msg[768];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        host->set_error(host->host, "%s", msg);
    }
    return code;
}

bp_status bpcu_check_launch(bpcu_device *d, const char *what)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        return BP_OK;
    return bpcu_fail(d, e == cudaErrorMemoryAllocation ? BP_ERR_OUT_OF_MEMORY : BP_ERR_BACKEND,
                     "cuda: %s on device %d: %s (%s)", what, d->ordinal, cudaGetErrorString(e),
                     cudaGetErrorName(e));
}

bp_status bpcu_enter(bpcu_device *d)
{
    /* Drop a stale, non-sticky error that an earlier unrelated runtime call of
     * this thread left behind, so that bpcu_check_launch after this entry's
     * launches reports only their errors (a sticky error of earlier queued
     * work cannot be cleared and still surfaces at the next call). */
    (void)cudaGetLastError();
    cudaError_t e = cudaSetDevice(d->ordinal);
    if (e != cudaSuccess)
        return bpcu_fail(d, BP_ERR_BACKEND, "cuda: cannot select device %d: %s", d->ordinal,
                         cudaGetErrorString(e));
    return BP_OK;
}

bp_status bpcu_scratch(bpcu_device *d, size_t bytes, void **p)
{
    *p = NULL;
    cudaError_t e = cudaMallocFromPoolAsync(p, bytes ? bytes : 1, d->pool, d->stream);
    if (e != cudaSuccess)
        return bpcu_fail(d, BP_ERR_OUT_OF_MEMORY, "cuda: no device memory for %zu bytes of "
                         "scratch on device %d: %s", bytes, d->ordinal, cudaGetErrorString(e));
    return BP_OK;
}

void bpcu_scratch_free(bpcu_device *d, void *p)
{
    if (p)
        cudaFreeAsync(p, d->stream);
}

bpcu_ix bpcu_collapse(int nv, const bp_view *const *views)
{
    bpcu_ix ix;
    memset(&ix, 0, sizeof ix);
    const bp_view *v0 = views[0];
    ix.n = 1;
    for (int32_t k = 0; k < v0->rank; k++) {
        ix.n *= v0->shape[k];
        if (v0->shape[k] == 1)
            continue;
        int32_t r = ix.rank;
        bool merge = r > 0;
        for (int j = 0; merge && j < nv; j++)
            merge = ix.strides[j][r - 1] == views[j]->strides[k] * v0->shape[k];
        if (merge) {
            ix.shape[r - 1] *= v0->shape[k];
            for (int j = 0; j < nv; j++)
                ix.strides[j][r - 1] = views[j]->strides[k];
            continue;
        }
        ix.shape[r] = v0->shape[k];
        for (int j = 0; j < nv; j++)
            ix.strides[j][r] = views[j]->strides[k];
        ix.rank++;
    }
    if (ix.rank == 0) { /* one element */
        ix.rank = 1;
        ix.shape[0] = 1;
    }
    ix.dense = ix.rank == 1;
    for (int j = 0; j < nv; j++)
        ix.dense = ix.dense && (ix.strides[j][0] == 1 || ix.shape[0] == 1);
    return ix;
}

/* ---- config ----------------------------------------------------------------- */

static bool parse_bool(const char *s, bool *out)
{
    static const char *t[] = {"true", "yes", "on", "1"}, *f[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, t[i]) == 0)
            return *out = true, true;
        if (strcmp(s, f[i]) == 0)
            return *out = false, true;
    }
    return false;
}

typedef struct bpcu_config {
    bool all_devices;
    int ndev;
    int devices[BPCU_MAX_DEVICES];
    double memory_fraction;
    bool tf32, jit;
    bpcu_cc_list allow, deny;
} bpcu_config;

static bp_status read_config(const bp_host_api *h, bpcu_config *c)
{
    memset(c, 0, sizeof *c);
    c->all_devices = true;
    c->memory_fraction = 0.9;
    c->jit = true;
    const char *v;
    if ((v = h->config_get(h->host, "devices")) && strcmp(v, "all") != 0) {
        c->all_devices = false;
        const char *p = v;
        while (*p) {
            while (*p == ',' || *p == ' ' || *p == '\t')
                p++;
            if (!*p)
                break;
            char *end;
            long n = strtol(p, &end, 10);
            if (end == p || n < 0 || n >= BPCU_MAX_DEVICES || c->ndev == BPCU_MAX_DEVICES ||
                (*end && *end != ',' && *end != ' ' && *end != '\t'))
                return h->config_error(h->host, "devices",
                                       "'%s' is not \"all\" or a list of CUDA device numbers "
                                       "such as \"0, 1\"", v);
            c->devices[c->ndev++] = (int)n;
            p = end;
        }
        if (c->ndev == 0)
            return h->config_error(h->host, "devices", "empty list: name devices or use \"all\"");
    }
    if ((v = h->config_get(h->host, "memory_fraction"))) {
        char *end;
        double f = strtod(v, &end);
        if (end == v || *end || !(f > 0.0 && f <= 1.0))
            return h->config_error(h->host, "memory_fraction",
                                   "'%s' is not a fraction in (0, 1], e.g. 0.9", v);
        c->memory_fraction = f;
    }
    if ((v = h->config_get(h->host, "tf32")) && !parse_bool(v, &c->tf32))
        return h->config_error(h->host, "tf32", "'%s' is not true or false", v);
    if ((v = h->config_get(h->host, "allow_ptx_jit")) && !parse_bool(v, &c->jit))
        return h->config_error(h->host, "allow_ptx_jit", "'%s' is not true or false", v);
    char err[256];
    if ((v = h->config_get(h->host, "allow_cc")) && !bpcu_parse_cc_list(v, &c->allow, err, sizeof err))
        return h->config_error(h->host, "allow_cc", "%s", err);
    if ((v = h->config_get(h->host, "deny_cc")) && !bpcu_parse_cc_list(v, &c->deny, err, sizeof err))
        return h->config_error(h->host, "deny_cc", "%s", err);
    return BP_OK;
}

/* ---- the probe -------------------------------------------------------------------- */

__global__ void bpcu_k_probe(int *p) { *p = 0x62706375; /* "bpcu" */ }

/* Launch the probe on ordinal; "" on success, else why into buf. Returns
 * the CUDA error (cudaSuccess also when the kernel wrote a wrong value). */
static cudaError_t probe(int ordinal, const bpcu_decision *dec, char *buf, size_t size)
{
    buf[0] = '\0';
    int *p = NULL, v = 0;
    cudaError_t e = cudaSetDevice(ordinal);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&p, sizeof *p);
    if (e == cudaSuccess) {
        bpcu_k_probe<<<1, 1>>>(p);
        e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e == cudaSuccess)
            e = cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost);
        cudaFree(p);
    }
    if (e == cudaErrorNoKernelImageForDevice) {
        snprintf(buf, size,
                 "the probe kernel found no kernel image for this device "
                 "(cudaErrorNoKernelImageForDevice) although the check decided %s (%s): %s",
                 bpcu_verdict_name(dec->verdict), dec->image[0] ? dec->image : "no image",
                 dec->verdict == BPCU_FORCED ? "the forced device cannot run this build"
                                             : "a build defect, please report it");
    } else if (e != cudaSuccess) {
        snprintf(buf, size, "the probe kernel failed: %s (%s)", cudaGetErrorString(e),
                 cudaGetErrorName(e));
    } else if (v != 0x62706375) {
        snprintf(buf, size, "the probe kernel ran but wrote a wrong value (0x%x)", (unsigned)v);
    }
    cudaGetLastError(); /* clear a non-sticky error before the next device */
    return e;
}

/* The remedy for a device whose probe failed with e. */
static void probe_remedy(cudaError_t e, int xy, char *buf, size_t size)
{
    if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidKernelImage ||
        e == cudaErrorInvalidPtx || e == cudaErrorUnsupportedPtxVersion ||
        e == cudaErrorJitCompilerNotFound || e == cudaSuccess)
        snprintf(buf, size, "rebuild with CMAKE_CUDA_ARCHITECTURES including %d-real (or update "
                 "the driver if only PTX fits), or choose another backend", xy);
    else
        snprintf(buf, size, "check the device with nvidia-smi (busy in exclusive-process mode, "
                 "out of memory, or in an error state), or choose another backend");
}

/* ---- lifecycle ------------------------------------------------------------------ */

/* Copy a C string, cut to fit. */
static void copy_str(char *dst, size_t size, const char *src)
{
    size_t i = 0;
    for (; i + 1 < size && src[i]; i++)
        dst[i] = src[i];
    dst[i] = '\0';
}

static void append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

static bp_status cuda_open(const bp_host_api *host, void **state)
{
    bpcu_config cfg;
    bp_status st = read_config(host, &cfg);
    if (st != BP_OK)
        return st;
    char err[256], vd[16], vr[16];
    bpcu_arch_list sass, ptx;
    if (!bpcu_parse_arch_list(bpcu_build_sass(), &sass, err, sizeof err) ||
        !bpcu_parse_arch_list(bpcu_build_ptx(), &ptx, err, sizeof err)) {
        host->set_error(host->host, "cuda: this build's architecture lists are corrupt: %s", err);
        return BP_ERR_PLUGIN;
    }

    int driver = 0, runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess)
        driver = 0;
    cudaRuntimeGetVersion(&runtime);
    if (driver == 0) {
        host->set_error(host->host,
                        "no CUDA driver found (libcuda.so.1 is missing or unusable); remedy: "
                        "install the NVIDIA driver (CUDA >= %s), or choose another backend",
                        bpcu_format_version(runtime, vr, sizeof vr));
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
        host->set_error(host->host, "no CUDA device (driver CUDA %s)",
                        bpcu_format_version(driver, vd, sizeof vd));
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    if (e != cudaSuccess) {
        host->set_error(host->host,
                        "cannot list CUDA devices: %s (%s); driver CUDA %s, runtime CUDA %s%s",
                        cudaGetErrorString(e), cudaGetErrorName(e),
                        bpcu_format_version(driver, vd, sizeof vd),
                        bpcu_format_version(runtime, vr, sizeof vr),
                        e == cudaErrorInsufficientDriver
                            ? "; remedy: update the NVIDIA driver, or choose another backend" : "");
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    if (n > BPCU_MAX_DEVICES)
        n = BPCU_MAX_DEVICES;
    for (int i = 0; i < cfg.ndev; i++)
        if (cfg.devices[i] >= n)
            host->log(host->host, BP_LOG_WARN, "devices lists device %d, but this machine has %d "
                      "CUDA device%s (0..%d): ignored", cfg.devices[i], n, n == 1 ? "" : "s", n - 1);
    /* The PTX in this build was made by the toolkit recorded at build time:
     * that is the runtime version the decision compares the driver with. */
    int toolkit = bpcu_build_runtime_version() > 0 ? bpcu_build_runtime_version() : runtime;

    bpcu_state *s = (bpcu_state *)calloc(1, sizeof *s);
    if (!s) {
        host->set_error(host->host, "cuda: out of memory opening the backend");
        return BP_ERR_OUT_OF_MEMORY;
    }
    s->host = host;
    s->driver = driver;
    s->runtime = runtime;
    s->memory_fraction = cfg.memory_fraction;
    s->tf32 = cfg.tf32;
    char refused[2048] = "";
    int nrefused = 0, nwanted = 0;
    for (int ord = 0; ord < n; ord++) {
        bool wanted = cfg.all_devices;
        for (int i = 0; i < cfg.ndev; i++)
            wanted = wanted || cfg.devices[i] == ord;
        if (!wanted)
            continue;
        nwanted++;
        bpcu_devrec *r = &s->dev[s->count];
        memset(r, 0, sizeof *r);
        r->ordinal = ord;
        cudaDeviceProp p;
        e = cudaGetDeviceProperties(&p, ord);
        if (e != cudaSuccess) {
            append(refused, sizeof refused, "\n  device %d: cannot read its properties: %s", ord,
                   cudaGetErrorString(e));
            nrefused++;
            continue;
        }
        copy_str(r->name, sizeof r->name, p.name);
        r->major = p.major, r->minor = p.minor;
        r->total = (uint64_t)p.totalGlobalMem;
        bpcu_cc_input in = {p.major, p.minor, driver, toolkit, &sass, &ptx, cfg.jit,
                            &cfg.allow, &cfg.deny};
        bpcu_cc_decide(&in, &r->dec);
        if (!bpcu_verdict_runs(r->dec.verdict)) {
            host->log(host->host, BP_LOG_WARN, "device %d (%s, compute capability %d.%d) refused: "
                      "%s; remedy: %s", ord, r->name, p.major, p.minor, r->dec.reason,
                      r->dec.remedy);
            append(refused, sizeof refused, "\n  device %d (%s, %d.%d): %s; remedy: %s", ord,
                   r->name, p.major, p.minor, r->dec.reason, r->dec.remedy);
            nrefused++;
            continue;
        }
        if (r->dec.verdict != BPCU_NATIVE)
            host->log(host->host, BP_LOG_WARN, "device %d (%s, %d.%d): %s: %s; remedy: %s", ord,
                      r->name, p.major, p.minor, bpcu_verdict_name(r->dec.verdict), r->dec.reason,
                      r->dec.remedy);
        char why[512], remedy[256];
        cudaError_t pe = probe(ord, &r->dec, why, sizeof why);
        if (why[0]) {
            probe_remedy(pe, p.major * 10 + p.minor, remedy, sizeof remedy);
            host->log(host->host, BP_LOG_WARN, "device %d (%s, %d.%d) refused: %s; remedy: %s",
                      ord, r->name, p.major, p.minor, why, remedy);
            append(refused, sizeof refused, "\n  device %d (%s, %d.%d): %s; remedy: %s", ord,
                   r->name, p.major, p.minor, why, remedy);
            nrefused++;
            continue;
        }
        host->log(host->host, BP_LOG_INFO, "device %d (%s, %d.%d): %s, %s", ord, r->name, p.major,
                  p.minor, bpcu_verdict_name(r->dec.verdict), r->dec.reason);
        s->count++;
    }
    if (nwanted == 0) {
        host->set_error(host->host, "no CUDA device: [backend.cuda] devices = %s names none of "
                        "this machine's %d CUDA device%s (0..%d); remedy: list existing device "
                        "numbers or \"all\", or choose another backend",
                        host->config_get(host->host, "devices"), n, n == 1 ? "" : "s", n - 1);
        free(s);
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    if (s->count == 0) {
        char rl[128], pl[128];
        bpcu_arch_list *ls[2] = {&sass, &ptx};
        bpcu_format_arch_list(ls[0], rl, sizeof rl);
        bpcu_format_arch_list(ls[1], pl, sizeof pl);
        host->set_error(host->host,
                        "no usable CUDA device (%d refused; this build: real code %s, PTX %s, "
                        "CUDA %s; driver CUDA %s):%s", nrefused, rl, pl,
                        bpcu_format_version(runtime, vr, sizeof vr),
                        bpcu_format_version(driver, vd, sizeof vd), refused);
        free(s);
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    *state = s;
    return BP_OK;
}

static void cuda_close(void *state) { free(state); }

static int32_t cuda_device_count(void *state) { return ((bpcu_state *)state)->count; }

static bp_status cuda_device_info(void *state, int32_t index, bp_device_info *info)
{
    bpcu_state *s = (bpcu_state *)state;
    if (index < 0 || index >= s->count) {
        s->host->set_error(s->host->host, "cuda: no device %d (%d exposed)", (int)index, s->count);
        return BP_ERR_INVALID_ARGUMENT;
    }
    const bpcu_devrec *r = &s->dev[index];
    char vd[16], vr[16];
    size_t free_b = 0, total_b = r->total;
    if (cudaSetDevice(r->ordinal) == cudaSuccess)
        cudaMemGetInfo(&free_b, &total_b);
    cudaGetLastError();
    copy_str(info->name, sizeof info->name, r->name);
    snprintf(info->detail, sizeof info->detail,
             "CUDA device %d, compute capability %d.%d, %s (%s), driver CUDA %s, runtime CUDA %s, "
             "%.1f GiB (%.1f GiB free), pool cap %.0f%%, tf32 %s; build: real code %s, PTX %s",
             r->ordinal, r->major, r->minor, bpcu_verdict_name(r->dec.verdict),
             r->dec.image[0] ? r->dec.image : "forced", bpcu_format_version(s->driver, vd, sizeof vd),
             bpcu_format_version(s->runtime, vr, sizeof vr), (double)total_b / 1073741824.0,
             (double)free_b / 1073741824.0, s->memory_fraction * 100.0, s->tf32 ? "on" : "off",
             bpcu_build_sass(), bpcu_build_ptx());
    info->host_addressable = false;
    return BP_OK;
}

static void device_destroy(bpcu_device *d)
{
    cudaSetDevice(d->ordinal);
    if (d->stream)
        cudaStreamSynchronize(d->stream);
    if (d->blas)
        cublasDestroy(d->blas);
    for (int k = 0; k < 2; k++) {
        if (d->stage_done[k])
            cudaEventDestroy(d->stage_done[k]);
        if (d->stage[k])
            cudaFreeHost(d->stage[k]);
    }
    if (d->pool)
        cudaMemPoolDestroy(d->pool);
    if (d->stream)
        cudaStreamDestroy(d->stream);
    cudaGetLastError();
    d->~bpcu_device();
    free(d);
}

static bp_status cuda_device_open(void *state, int32_t index, void **dev)
{
    bpcu_state *s = (bpcu_state *)state;
    if (index < 0 || index >= s->count) {
        s->host->set_error(s->host->host, "cuda: no device %d (%d exposed)", (int)index, s->count);
        return BP_ERR_INVALID_ARGUMENT;
    }
    const bpcu_devrec *r = &s->dev[index];
    void *mem = calloc(1, sizeof(bpcu_device));
    if (!mem) {
        s->host->set_error(s->host->host, "cuda: out of memory opening device %d", (int)index);
        return BP_ERR_OUT_OF_MEMORY;
    }
    bpcu_device *d = new (mem) bpcu_device();
    d->host = s->host;
    d->ordinal = r->ordinal;
    d->tf32 = s->tf32;
    d->used.store(0);
    d->cap = (uint64_t)floor((double)r->total * s->memory_fraction);
    const char *what = "cudaSetDevice";
    cudaError_t e = cudaSetDevice(d->ordinal);
    if (e == cudaSuccess)
        what = "cudaStreamCreate", e = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) {
        cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = d->ordinal;
        what = "cudaMemPoolCreate", e = cudaMemPoolCreate(&d->pool, &props);
    }
    if (e == cudaSuccess) {
        /* keep freed memory cached in the pool up to the cap */
        uint64_t threshold = d->cap;
        what = "cudaMemPoolSetAttribute", e = cudaMemPoolSetAttribute(
            d->pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    }
    for (int k = 0; k < 2 && e == cudaSuccess; k++) {
        what = "cudaMallocHost", e = cudaMallocHost(&d->stage[k], BPCU_STAGE_BYTES);
        if (e == cudaSuccess)
            what = "cudaEventCreate",
            e = cudaEventCreateWithFlags(&d->stage_done[k], cudaEventDisableTiming);
    }
    if (e != cudaSuccess) {
        s->host->set_error(s->host->host, "cuda: opening device %d: %s: %s", d->ordinal, what,
                           cudaGetErrorString(e));
        device_destroy(d);
        return e == cudaErrorMemoryAllocation ? BP_ERR_OUT_OF_MEMORY : BP_ERR_BACKEND;
    }
    cublasStatus_t bs = cublasCreate(&d->blas);
    if (bs == CUBLAS_STATUS_SUCCESS)
        bs = cublasSetStream(d->blas, d->stream);
    if (bs == CUBLAS_STATUS_SUCCESS)
        /* f16/bf16 outputs: split-K partial sums must stay in the f32
         * accumulator (by default cuBLAS may reduce them in the 16-bit output
         * type, rounding more than once) */
        bs = cublasSetMathMode(d->blas, (cublasMath_t)((d->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                : CUBLAS_DEFAULT_MATH) |
                                                       CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
    if (bs != CUBLAS_STATUS_SUCCESS) {
        s->host->set_error(s->host->host, "cuda: cuBLAS on device %d: %s", d->ordinal,
                           cublasGetStatusString(bs));
        device_destroy(d);
        return BP_ERR_BACKEND;
    }
    *dev = d;
    return BP_OK;
}

static void cuda_device_close(void *dev) { device_destroy((bpcu_device *)dev); }

/* ---- buffers ------------------------------------------------------------------------ */

static bp_status cuda_alloc(void *dev, size_t bytes, void **buffer)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    uint64_t before = d->used.fetch_add(bytes);
    if (before + bytes > d->cap || before + bytes < before) {
        d->used.fetch_sub(bytes);
        return bpcu_fail(d, BP_ERR_OUT_OF_MEMORY,
                         "cuda: allocating %zu bytes on device %d would pass the pool cap of "
                         "%llu bytes (memory_fraction; %llu in use)", bytes, d->ordinal,
                         (unsigned long long)d->cap, (unsigned long long)before);
    }
    bpcu_buf *b = (bpcu_buf *)calloc(1, sizeof *b);
    if (!b) {
        d->used.fetch_sub(bytes);
        return bpcu_fail(d, BP_ERR_OUT_OF_MEMORY, "cuda: out of host memory for a buffer handle");
    }
    b->bytes = bytes;
    if (bytes) {
        cudaError_t e = cudaMallocFromPoolAsync(&b->ptr, bytes, d->pool, d->stream);
        if (e != cudaSuccess) {
            free(b);
            d->used.fetch_sub(bytes);
            cudaGetLastError();
            return bpcu_fail(d, e == cudaErrorMemoryAllocation ? BP_ERR_OUT_OF_MEMORY
                                                                : BP_ERR_BACKEND,
                             "cuda: cannot allocate %zu bytes on device %d: %s", bytes,
                             d->ordinal, cudaGetErrorString(e));
        }
    }
    *buffer = b;
    return BP_OK;
}

static void cuda_free(void *dev, void *buffer)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_buf *b = (bpcu_buf *)buffer;
    if (!b)
        return;
    if (b->ptr && bpcu_enter(d) == BP_OK)
        cudaFreeAsync(b->ptr, d->stream); /* after the queued work that uses it */
    d->used.fetch_sub(b->bytes);
    free(b);
}

/* Host -> device through the two pinned staging buffers: chunk k waits only
 * for the previous copy out of its own staging buffer, so copying into one
 * overlaps the DMA from the other. Returns once the last chunk is queued
 * (src is no longer needed). */
static bp_status cuda_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes)
{
    bpcu_device *d = (bpcu_device *)dev;
    bpcu_buf *b = (bpcu_buf *)buffer;
    if (!bytes)
        return BP_OK;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    std::lock_guard<std::mutex> lock(d->stage_mu);
    for (size_t done = 0, k = 0; done < bytes; done += BPCU_STAGE_BYTES, k ^= 1) {
        size_t len = bytes - done < BPCU_STAGE_BYTES ? bytes - done : BPCU_STAGE_BYTES;
        cudaError_t e = cudaEventSynchronize(d->stage_done[k]);
        if (e == cudaSuccess) {
            memcpy(d->stage[k], (const char *)src + done, len);
            e = cudaMemcpyAsync((char *)b->ptr + offset + done, d->stage[k], len,
                                cudaMemcpyHostToDevice, d->stream);
        }
        if (e == cudaSuccess)
            e = cudaEventRecord(d->stage_done[k], d->stream);
        if (e != cudaSuccess)
            return bpcu_fail(d, BP_ERR_BACKEND, "cuda: writing %zu bytes to device %d: %s (an "
                             "error of earlier queued work surfaces here)", bytes, d->ordinal,
                             cudaGetErrorString(e));
    }
    return BP_OK;
}

/* Device -> host: waits for the queued work on the stream, so an error of an
 * earlier asynchronous op is reported here. */
static bp_status cuda_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    bpcu_device *d = (bpcu_device *)dev;
    const bpcu_buf *b = (const bpcu_buf *)buffer;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    if (!bytes) {
        cudaError_t e = cudaStreamSynchronize(d->stream);
        if (e != cudaSuccess)
            return bpcu_fail(d, BP_ERR_BACKEND, "cuda: device %d: %s (from earlier queued work)",
                             d->ordinal, cudaGetErrorString(e));
        return BP_OK;
    }
    std::lock_guard<std::mutex> lock(d->stage_mu);
    size_t nchunks = (bytes + BPCU_STAGE_BYTES - 1) / BPCU_STAGE_BYTES;
    for (size_t c = 0; c <= nchunks; c++) {
        cudaError_t e = cudaSuccess;
        if (c < nchunks) { /* queue chunk c */
            size_t off = c * BPCU_STAGE_BYTES, k = c & 1;
            size_t len = bytes - off < BPCU_STAGE_BYTES ? bytes - off : BPCU_STAGE_BYTES;
            e = cudaMemcpyAsync(d->stage[k], (const char *)b->ptr + offset + off, len,
                                cudaMemcpyDeviceToHost, d->stream);
            if (e == cudaSuccess)
                e = cudaEventRecord(d->stage_done[k], d->stream);
        }
        if (e == cudaSuccess && c > 0) { /* drain chunk c - 1 */
            size_t off = (c - 1) * BPCU_STAGE_BYTES, k = (c - 1) & 1;
            size_t len = bytes - off < BPCU_STAGE_BYTES ? bytes - off : BPCU_STAGE_BYTES;
            e = cudaEventSynchronize(d->stage_done[k]);
            if (e == cudaSuccess)
                memcpy((char *)dst + off, d->stage[k], len);
        }
        if (e != cudaSuccess)
            return bpcu_fail(d, BP_ERR_BACKEND, "cuda: reading %zu bytes from device %d: %s "
                             "(an error of earlier queued work surfaces here)", bytes, d->ordinal,
                             cudaGetErrorString(e));
    }
    return BP_OK;
}

static bp_status cuda_synchronize(void *dev)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    cudaError_t e = cudaStreamSynchronize(d->stream);
    if (e != cudaSuccess)
        return bpcu_fail(d, BP_ERR_BACKEND, "cuda: device %d: %s (from earlier queued work)",
                         d->ordinal, cudaGetErrorString(e));
    return BP_OK;
}

static bp_status cuda_memory_info(void *dev, bp_memory_info *info)
{
    bpcu_device *d = (bpcu_device *)dev;
    bp_status st = bpcu_enter(d);
    if (st != BP_OK)
        return st;
    info->used = d->used.load();
    uint64_t reserved = 0;
    if (cudaMemPoolGetAttribute(d->pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess)
        reserved = 0;
    info->reserved = reserved;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        free_b = total_b = 0;
    info->device_free = free_b;
    info->device_total = total_b;
    cudaGetLastError();
    return BP_OK;
}

static bool cuda_supports(void *dev, bp_op op, bp_dtype dtype)
{
    if ((int)op < 0 || op >= BP_OP_COUNT || !bp_dtype_valid((int)dtype))
        return false;
    if (op == BP_OP_MATMUL)
        return dtype != BP_BOOL;
    return true; /* every other op, for every dtype the core lets through */
}

/* ---- descriptor -------------------------------------------------------------------- */

static bp_plugin make_descriptor(void)
{
    bp_plugin p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof(bp_plugin);
    p.abi_major = BP_ABI_MAJOR;
    p.abi_minor = BP_ABI_MINOR;
    p.name = "cuda";
    p.version = "0.1.0";
    p.description = "NVIDIA GPUs: CUDA runtime, cuBLAS and own kernels; checks each device's "
                    "compute capability against this build at load";
    p.config_keys = cuda_keys;
    p.open = cuda_open;
    p.close = cuda_close;
    p.device_count = cuda_device_count;
    p.device_info = cuda_device_info;
    p.device_open = cuda_device_open;
    p.device_close = cuda_device_close;
    p.alloc = cuda_alloc;
    p.free = cuda_free;
    p.write = cuda_write;
    p.read = cuda_read;
    p.host_ptr = NULL;
    p.synchronize = cuda_synchronize;
    p.memory_info = cuda_memory_info;
    p.supports = cuda_supports;
    p.unary = bpcu_unary;
    p.binary = bpcu_binary;
    p.where = bpcu_where;
    p.reduce = bpcu_reduce;
    p.matmul = bpcu_matmul;
    p.copy = bpcu_copy;
    p.gather = bpcu_gather;
    p.softmax = bpcu_softmax;
    p.fill = bpcu_fill;
    p.arange = bpcu_arange;
    p.random = bpcu_random;
    return p;
}

static const bp_plugin cuda_plugin = make_descriptor();

extern "C" BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
extern "C" BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void) { return &cuda_plugin; }

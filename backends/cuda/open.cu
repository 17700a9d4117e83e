/* open/close: read [backend.cuda], ask the runtime for the driver, the
 * runtime and the devices, decide for each device with the pure
 * compute-capability check (cc_check.h) against the architectures this build
 * recorded, then prove the decision with the probe kernel. Refused devices
 * are logged with the reason and the remedy; if none remain, open fails with
 * all of them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "open.h"

/* What open() works with while it walks the devices. */
typedef struct open_walk {
    const bp_host_api *host;
    bpcu_config cfg;
    bpcu_arch_list sass, ptx;      /* this build's images */
    int driver, runtime, toolkit;
    int n;                         /* CUDA devices on this machine */
    char refused[2048];            /* "\n  device N (...): why; remedy: ..." each */
    int nrefused, nwanted;
} open_walk;

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

/* This build's architecture lists, as recorded at configure time. */
static bp_status read_build_lists(open_walk *w)
{
    char err[256];
    if (!bpcu_parse_arch_list(bpcu_build_sass(), &w->sass, err, sizeof err) ||
        !bpcu_parse_arch_list(bpcu_build_ptx(), &w->ptx, err, sizeof err)) {
        w->host->set_error(w->host->host, "cuda: this build's architecture lists are corrupt: %s",
                           err);
        return BP_ERR_PLUGIN;
    }
    return BP_OK;
}

/* The driver and runtime versions and the number of devices; a machine
 * without a driver or a device is BP_ERR_UNSUPPORTED_DEVICE, said plainly. */
static bp_status find_devices(open_walk *w)
{
    const bp_host_api *host = w->host;
    char vd[16], vr[16];
    if (cudaDriverGetVersion(&w->driver) != cudaSuccess)
        w->driver = 0;
    cudaRuntimeGetVersion(&w->runtime);
    if (w->driver == 0) {
        host->set_error(host->host,
                        "no CUDA driver found (libcuda.so.1 is missing or unusable); remedy: "
                        "install the NVIDIA driver (CUDA >= %s), or choose another backend",
                        bpcu_format_version(w->runtime, vr, sizeof vr));
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    cudaError_t e = cudaGetDeviceCount(&w->n);
    if (e == cudaErrorNoDevice || (e == cudaSuccess && w->n == 0)) {
        host->set_error(host->host, "no CUDA device (driver CUDA %s)",
                        bpcu_format_version(w->driver, vd, sizeof vd));
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    if (e != cudaSuccess) {
        host->set_error(host->host,
                        "cannot list CUDA devices: %s (%s); driver CUDA %s, runtime CUDA %s%s",
                        cudaGetErrorString(e), cudaGetErrorName(e),
                        bpcu_format_version(w->driver, vd, sizeof vd),
                        bpcu_format_version(w->runtime, vr, sizeof vr),
                        e == cudaErrorInsufficientDriver
                            ? "; remedy: update the NVIDIA driver, or choose another backend" : "");
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    if (w->n > BPCU_MAX_DEVICES)
        w->n = BPCU_MAX_DEVICES;
    for (int i = 0; i < w->cfg.ndev; i++)
        if (w->cfg.devices[i] >= w->n)
            host->log(host->host, BP_LOG_WARN, "devices lists device %d, but this machine has %d "
                      "CUDA device%s (0..%d): ignored", w->cfg.devices[i], w->n,
                      w->n == 1 ? "" : "s", w->n - 1);
    /* The PTX in this build was made by the toolkit recorded at build time:
     * that is the runtime version the decision compares the driver with. */
    w->toolkit = bpcu_build_runtime_version() > 0 ? bpcu_build_runtime_version() : w->runtime;
    return BP_OK;
}

static bool wanted(const bpcu_config *cfg, int ord)
{
    bool yes = cfg->all_devices;
    for (int i = 0; i < cfg->ndev; i++)
        yes = yes || cfg->devices[i] == ord;
    return yes;
}

static void refuse(open_walk *w, const bpcu_devrec *r, const char *why, const char *remedy)
{
    w->host->log(w->host->host, BP_LOG_WARN, "device %d (%s, compute capability %d.%d) refused: "
                 "%s; remedy: %s", r->ordinal, r->name, r->major, r->minor, why, remedy);
    append(w->refused, sizeof w->refused, "\n  device %d (%s, %d.%d): %s; remedy: %s", r->ordinal,
           r->name, r->major, r->minor, why, remedy);
    w->nrefused++;
}

/* Decide for device ord into *r and prove it: true when it may be exposed. */
static bool admit(open_walk *w, int ord, bpcu_devrec *r)
{
    const bp_host_api *host = w->host;
    memset(r, 0, sizeof *r);
    r->ordinal = ord;
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, ord);
    if (e != cudaSuccess) {
        append(w->refused, sizeof w->refused, "\n  device %d: cannot read its properties: %s", ord,
               cudaGetErrorString(e));
        w->nrefused++;
        return false;
    }
    copy_str(r->name, sizeof r->name, p.name);
    r->major = p.major, r->minor = p.minor;
    r->total = (uint64_t)p.totalGlobalMem;
    bpcu_cc_input in = {p.major, p.minor, w->driver, w->toolkit, &w->sass, &w->ptx, w->cfg.jit,
                        &w->cfg.allow, &w->cfg.deny};
    bpcu_cc_decide(&in, &r->dec);
    if (!bpcu_verdict_runs(r->dec.verdict)) {
        refuse(w, r, r->dec.reason, r->dec.remedy);
        return false;
    }
    if (r->dec.verdict != BPCU_NATIVE)
        host->log(host->host, BP_LOG_WARN, "device %d (%s, %d.%d): %s: %s; remedy: %s", ord,
                  r->name, p.major, p.minor, bpcu_verdict_name(r->dec.verdict), r->dec.reason,
                  r->dec.remedy);
    char why[512], remedy[256];
    cudaError_t pe = bpcu_probe(ord, &r->dec, why, sizeof why);
    if (why[0]) {
        bpcu_probe_remedy(pe, p.major * 10 + p.minor, remedy, sizeof remedy);
        refuse(w, r, why, remedy);
        return false;
    }
    host->log(host->host, BP_LOG_INFO, "device %d (%s, %d.%d): %s, %s", ord, r->name, p.major,
              p.minor, bpcu_verdict_name(r->dec.verdict), r->dec.reason);
    return true;
}

/* Nothing to expose: say why, naming every device and this build. */
static bp_status none_usable(const open_walk *w)
{
    const bp_host_api *host = w->host;
    if (w->nwanted == 0) {
        host->set_error(host->host, "no CUDA device: [backend.cuda] devices = %s names none of "
                        "this machine's %d CUDA device%s (0..%d); remedy: list existing device "
                        "numbers or \"all\", or choose another backend",
                        host->config_get(host->host, "devices"), w->n, w->n == 1 ? "" : "s",
                        w->n - 1);
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    char rl[128], pl[128], vd[16], vr[16];
    bpcu_format_arch_list(&w->sass, rl, sizeof rl);
    bpcu_format_arch_list(&w->ptx, pl, sizeof pl);
    host->set_error(host->host,
                    "no usable CUDA device (%d refused; this build: real code %s, PTX %s, "
                    "CUDA %s; driver CUDA %s):%s", w->nrefused, rl, pl,
                    bpcu_format_version(w->runtime, vr, sizeof vr),
                    bpcu_format_version(w->driver, vd, sizeof vd), w->refused);
    return BP_ERR_UNSUPPORTED_DEVICE;
}

bp_status bpcu_open(const bp_host_api *host, void **state)
{
    bpcu_ctx_guard caller;
    open_walk *w = (open_walk *)calloc(1, sizeof *w);
    bpcu_state *s = (bpcu_state *)calloc(1, sizeof *s);
    bp_status st = w && s ? BP_OK : BP_ERR_OUT_OF_MEMORY;
    if (st != BP_OK)
        host->set_error(host->host, "cuda: out of memory opening the backend");
    else
        w->host = host;
    if (st == BP_OK)
        st = bpcu_read_config(host, &w->cfg);
    if (st == BP_OK)
        st = read_build_lists(w);
    if (st == BP_OK)
        st = find_devices(w);
    if (st == BP_OK) {
        s->host = host;
        s->driver = w->driver;
        s->runtime = w->runtime;
        s->memory_fraction = w->cfg.memory_fraction;
        s->tf32 = w->cfg.tf32;
        s->pool_keep = (uint64_t)w->cfg.pool_keep_mb << 20;
        s->staging_threads = w->cfg.staging_threads;
        s->cudnn = w->cfg.cudnn;
        for (int ord = 0; ord < w->n; ord++) {
            if (!wanted(&w->cfg, ord))
                continue;
            w->nwanted++;
            if (admit(w, ord, &s->dev[s->count]))
                s->count++;
        }
        if (s->count == 0)
            st = none_usable(w);
    }
    free(w);
    if (st != BP_OK) {
        free(s);
        return st;
    }
    *state = s;
    return BP_OK;
}

void bpcu_close(void *state) { free(state); }

int32_t bpcu_device_count(void *state) { return ((bpcu_state *)state)->count; }

bp_status bpcu_device_info(void *state, int32_t index, bp_device_info *info)
{
    bpcu_state *s = (bpcu_state *)state;
    if (index < 0 || index >= s->count) {
        s->host->set_error(s->host->host, "cuda: no device %d (%d exposed)", (int)index, s->count);
        return BP_ERR_INVALID_ARGUMENT;
    }
    const bpcu_devrec *r = &s->dev[index];
    char vd[16], vr[16];
    size_t free_b = 0, total_b = r->total;
    {
        bpcu_ctx_guard caller;
        if (cudaSetDevice(r->ordinal) != cudaSuccess ||
            cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
            free_b = 0, total_b = r->total;
    }
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

/* bp_cuda.so: the cuda plugin's front, plain C, linked against nothing of
 * CUDA. It is what the core loads, so a machine without an NVIDIA driver
 * pays only for this file (docs/cuda.md, "Staying cheap on machines without
 * the device"): open() reads [backend.cuda] (so a bad value is reported
 * everywhere), dlopens the driver's libcuda.so.1, asks it for devices, and
 * only then loads the implementation, bpcu_device.so beside this file, which
 * links the CUDA runtime and cuBLAS. Every other entry forwards to it.
 *
 * The implementation stays loaded while any open() state lives; its
 * descriptor is set before open() returns BP_OK, and the core calls no other
 * entry before that, so the forwarders read it without a lock. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <backplane/plugin.h>

#include "cc_check.h"
#include "config.h"

#define IMPL_FILE "bpcu_device.so"
#define IMPL_ENTRY "bpcu_device_entry"
#define CUDA_ERROR_NO_DEVICE 100 /* cuda.h's CUresult */

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void *driver_lib, *impl_lib; /* held while opens > 0 */
static const bp_plugin *impl;
static int opens;

/* ---- loading ---------------------------------------------------------------- */

static void *sym(void *lib, const char *name)
{
    return lib ? dlsym(lib, name) : NULL;
}

/* Is there a driver, and a device? Sets the detail and returns
 * BP_ERR_UNSUPPORTED_DEVICE when not. Anything else the driver says (too
 * old, a broken install) is left to the implementation, which reports it
 * in the runtime's words. Called under mu. */
static bp_status find_device(const bp_host_api *host)
{
    char vr[16], vd[16];
    void *lib = driver_lib ? driver_lib : dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    int (*init)(unsigned) = NULL, (*count)(int *) = NULL, (*version)(int *) = NULL;
    void *p;
    if ((p = sym(lib, "cuInit")))
        memcpy(&init, &p, sizeof p);
    if ((p = sym(lib, "cuDeviceGetCount")))
        memcpy(&count, &p, sizeof p);
    if ((p = sym(lib, "cuDriverGetVersion")))
        memcpy(&version, &p, sizeof p);
    int driver = 0, n = 0;
    if (!init || !count || !version || version(&driver) != 0 || driver <= 0) {
        if (lib && lib != driver_lib)
            dlclose(lib);
        host->set_error(host->host,
                        "no CUDA driver found (libcuda.so.1 is missing or unusable); remedy: "
                        "install the NVIDIA driver (CUDA >= %s), or choose another backend",
                        bpcu_format_version(bpcu_build_runtime_version(), vr, sizeof vr));
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    driver_lib = lib;
    int r = init(0);
    if (r == CUDA_ERROR_NO_DEVICE || (r == 0 && count(&n) == 0 && n == 0)) {
        host->set_error(host->host, "no CUDA device (driver CUDA %s)",
                        bpcu_format_version(driver, vd, sizeof vd));
        return BP_ERR_UNSUPPORTED_DEVICE;
    }
    return BP_OK;
}

/* bpcu_device.so from the folder this file was loaded from. Under mu. */
static bp_status load_impl(const bp_host_api *host)
{
    if (impl_lib)
        return BP_OK;
    char path[4096] = IMPL_FILE;
    Dl_info info;
    void *self;
    const bp_plugin *(*self_entry)(void) = bp_plugin_entry;
    memcpy(&self, &self_entry, sizeof self);
    if (dladdr(self, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        if (slash && (size_t)(slash - info.dli_fname) + sizeof IMPL_FILE + 1 < sizeof path)
            snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                     IMPL_FILE);
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        host->set_error(host->host, "cannot load the cuda implementation %s: %s; remedy: keep "
                        IMPL_FILE " beside bp_cuda.so (reinstall backplane) and make the CUDA "
                        "runtime and cuBLAS libraries of this build's toolkit findable (its lib "
                        "folder in LD_LIBRARY_PATH or ld.so.conf), or choose another backend",
                        path, dlerror());
        return BP_ERR_PLUGIN;
    }
    const bp_plugin *(*entry)(void) = NULL;
    void *p = dlsym(lib, IMPL_ENTRY);
    if (p)
        memcpy(&entry, &p, sizeof p);
    const bp_plugin *d = entry ? entry() : NULL;
    if (!d || d->struct_size < sizeof(bp_plugin) || d->abi_major != BP_ABI_MAJOR ||
        strcmp(d->name, "cuda") != 0 || !d->open) {
        dlclose(lib);
        host->set_error(host->host, "%s is not the cuda implementation this bp_cuda.so was built "
                        "with (no %s, or another ABI); remedy: reinstall backplane", path,
                        IMPL_ENTRY);
        return BP_ERR_PLUGIN;
    }
    impl_lib = lib;
    impl = d;
    return BP_OK;
}

/* After the last close (or a failed first open): unload. Under mu. */
static void unload_if_unused(void)
{
    if (opens > 0)
        return;
    if (impl_lib)
        dlclose(impl_lib);
    if (driver_lib)
        dlclose(driver_lib);
    impl_lib = driver_lib = NULL;
    impl = NULL;
}

/* ---- lifecycle ---------------------------------------------------------------- */

static bp_status front_open(const bp_host_api *host, void **state)
{
    bpcu_config cfg;
    bp_status st = bpcu_read_config(host, &cfg);
    if (st != BP_OK)
        return st;
    pthread_mutex_lock(&mu);
    st = find_device(host);
    if (st == BP_OK)
        st = load_impl(host);
    if (st == BP_OK)
        st = impl->open(host, state);
    if (st == BP_OK)
        opens++;
    else
        unload_if_unused();
    pthread_mutex_unlock(&mu);
    return st;
}

static void front_close(void *state)
{
    pthread_mutex_lock(&mu);
    impl->close(state);
    opens--;
    unload_if_unused();
    pthread_mutex_unlock(&mu);
}

/* ---- the rest: forwarded -------------------------------------------------------- */

static int32_t f_device_count(void *s) { return impl->device_count(s); }
static bp_status f_device_info(void *s, int32_t i, bp_device_info *info)
{
    return impl->device_info(s, i, info);
}
static bp_status f_device_open(void *s, int32_t i, void **dev) { return impl->device_open(s, i, dev); }
static void f_device_close(void *dev) { impl->device_close(dev); }
static bp_status f_alloc(void *dev, size_t n, void **b) { return impl->alloc(dev, n, b); }
static void f_free(void *dev, void *b) { impl->free(dev, b); }
static bp_status f_write(void *dev, void *b, size_t off, const void *src, size_t n)
{
    return impl->write(dev, b, off, src, n);
}
static bp_status f_read(void *dev, const void *b, size_t off, void *dst, size_t n)
{
    return impl->read(dev, b, off, dst, n);
}
static bp_status f_synchronize(void *dev) { return impl->synchronize(dev); }
static bp_status f_memory_info(void *dev, bp_memory_info *m) { return impl->memory_info(dev, m); }
static bool f_supports(void *dev, bp_op op, bp_dtype dt) { return impl->supports(dev, op, dt); }
static bp_status f_deferred_error(void *dev) { return impl->deferred_error(dev); }
static bp_status f_wrap(void *dev, int32_t kind, void *memory, size_t bytes,
                        void (*release)(void *), void *release_ctx, void **b)
{
    return impl->wrap(dev, kind, memory, bytes, release, release_ctx, b);
}
static bp_status f_buffer_address(void *dev, void *b, int32_t *kind, int32_t *device_id,
                                  void **address)
{
    return impl->buffer_address(dev, b, kind, device_id, address);
}
static bp_status f_op(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return impl->op(dev, op, p, n_in, in, n_out, out);
}

static const bp_plugin front = {
    .struct_size = sizeof(bp_plugin),
    .abi_major = BP_ABI_MAJOR,
    .abi_minor = BPCU_ABI_MINOR,
    .name = "cuda",
    .version = "0.1.0",
    .description = "NVIDIA GPUs: CUDA runtime, cuBLAS and own kernels; checks each device's "
                   "compute capability against this build at load",
    .config_keys = bpcu_config_keys,
    .open = front_open,
    .close = front_close,
    .device_count = f_device_count,
    .device_info = f_device_info,
    .device_open = f_device_open,
    .device_close = f_device_close,
    .alloc = f_alloc,
    .free = f_free,
    .write = f_write,
    .read = f_read,
    .host_ptr = NULL, /* device memory is not host-addressable */
    .synchronize = f_synchronize,
    .memory_info = f_memory_info,
    .supports = f_supports,
    /* the typed entries of ABI 1.0 stay NULL: every op comes through op */
    .deferred_error = f_deferred_error,
    .wrap = f_wrap,
    .buffer_address = f_buffer_address,
    .op = f_op,
};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void) { return &front; }

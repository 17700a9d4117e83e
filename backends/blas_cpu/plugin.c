/* The blas_cpu backend's descriptor, lifecycle, configuration and buffers.
 * One device: the host. Buffers are plain host memory (host_addressable), so
 * bp_backend_copy to or from the binary backend is one memcpy. */
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE */

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "openblas.h"
#include "blas_cpu.h"
#include "op.h"
#include "openblas_check.h"
#include "vmath.h"

#define BPC_MAX_THREADS 1024
#define BPC_DEFAULT_CACHE_MB 1024

typedef struct bpc_state {
    const bp_host_api *host;
    int threads;
    uint64_t cache_limit;
    const bpc_vmath *vm;        /* the vector kernels' instruction level */
    bool vm_set;                /* chosen by the simd key, not by the CPU */
    char kernels[224];          /* OpenBLAS's kernels against this CPU (openblas_check.h) */
    bpc_isa gemm_isa;           /* the instruction set of those kernels */
    bpc_cpu_features cpu;       /* what the CPU runs */
    int in_place;               /* the conv_in_place key: IN_PLACE_* */
} bpc_state;

enum { IN_PLACE_AUTO, IN_PLACE_DIRECT, IN_PLACE_OPENBLAS };

static const bp_config_key bpc_keys[] = {
    {"threads",
     "threads of the kernel pool (1..1024), which also run the matrix products in blocks "
     "(OpenBLAS on one thread); a pool thread watches 50 us for the next job before it sleeps",
     "all cores"},
    {"cache_mb", "MiB of freed buffers kept for reuse (0 turns the cache off)", "1024"},
    {"simd", "instruction level of the vector math kernels: auto, avx512, avx2 or baseline",
     "auto (the widest this CPU runs)"},
    {"conv_in_place",
     "where the convolutions whose product reads x in place run (1x1 kernels, kernels along "
     "one axis): auto, direct (the avx512 level's block) or openblas",
     "auto (direct with the avx512 level against OpenBLAS kernels narrower than AVX-512, or on "
     "a CPU that runs 512-bit fmas as two halves (AMD Zen 4); else openblas)"},
    {NULL, NULL, NULL},
};

/* A whole decimal number in [lo, hi], nothing else on the line. */
static bool parse_int(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* The core dlcloses this plugin at bp_context_destroy. Pin OpenBLAS, whose
 * per-load start-up of buffers and threads would otherwise repeat for every
 * context (and whose idle threads would be left inside unmapped code), for
 * the life of the process, as soon as the plugin is loaded (a context may
 * load the plugin without ever opening it). The kernel pool's own threads
 * are joined at device_close, before any unload. */
static void pin_library(void *symbol)
{
    Dl_info info;
    if (dladdr(symbol, &info) && info.dli_fname) {
        void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        if (h)
            dlclose(h); /* the NODELETE flag stays */
    }
}

__attribute__((constructor)) static void pin_runtimes(void) { pin_library((void *)openblas_get_config); }

/* OpenBLAS runs on one thread: every gemm is cut into blocks for the
 * pool's threads (gemm.c, conv.c), so one team does all the work. With
 * OpenBLAS's threads for the gemms as well, the two teams took turns, and
 * each spun while the other worked (OpenBLAS's for some 0.1 s after every
 * threaded call). Its thread count is process-wide; it is set at the first
 * BLAS call, not at open (opening the backend, in a loop or never to
 * multiply a matrix, calls nothing). */
static pthread_mutex_t blas_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool blas_one_thread; /* set by this plugin already */

void bpc_blas_one_thread(void)
{
    if (atomic_load_explicit(&blas_one_thread, memory_order_relaxed))
        return;
    pthread_mutex_lock(&blas_threads_lock);
    if (!atomic_load(&blas_one_thread)) {
        openblas_set_num_threads(1);
        atomic_store(&blas_one_thread, true);
    }
    pthread_mutex_unlock(&blas_threads_lock);
}

/* Cores this process may run on. */
static long available_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* ---- OpenBLAS's kernels against this CPU (openblas_check.h) ------------- */

/* The CPU's brand string ("AMD EPYC 7B13"), or "" where cpuid has none. */
static void cpu_name(char *buf, size_t cap)
{
    buf[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
    unsigned r[12], max = __get_cpuid_max(0x80000000u, NULL);
    if (max < 0x80000004u || cap < 2)
        return;
    for (unsigned i = 0; i < 3; i++)
        __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
    char brand[49];
    memcpy(brand, r, 48);
    brand[48] = '\0';
    const char *s = brand;
    while (*s == ' ')
        s++;
    snprintf(buf, cap, "%s", s);
    for (size_t n = strlen(buf); n > 0 && buf[n - 1] == ' '; n--)
        buf[n - 1] = '\0';
#endif
}

/* Compares the kernels OpenBLAS chose with this CPU: one warning through
 * the host's log when they are older (never when the user chose them with
 * OPENBLAS_CORETYPE), and the summary for the device's detail. Returns
 * the kernels' instruction set. */
static bpc_isa check_kernels(const bp_host_api *host, bpc_cpu_features *cpu, char *summary,
                             size_t cap)
{
    bpc_cpu_features f;
    bpc_cpu_probe(&f);
    *cpu = f;
    const char *core = openblas_get_corename();
    const char *user = getenv("OPENBLAS_CORETYPE");
    bpc_kernels_decision d = bpc_kernels_decide(core, &f, user);
    bpc_kernels_summary(summary, cap, &d, core, user);
    if (d.verdict != BPC_KERNELS_OLDER)
        return d.kernels;
    char name[64], line[768];
    cpu_name(name, sizeof name);
    bpc_kernels_warning(line, sizeof line, &d, core, name);
    host->log(host->host, BP_LOG_WARN, "%s", line);
    return d.kernels;
}

/* ---- lifecycle ---------------------------------------------------------- */

static bp_status bpc_open(const bp_host_api *host, void **state)
{
    long threads = available_cores(), cache_mb = BPC_DEFAULT_CACHE_MB;
    const char *v = host->config_get(host->host, "threads");
    if (v && !parse_int(v, 1, BPC_MAX_THREADS, &threads))
        return host->config_error(host->host, "threads", "expected a whole number from 1 to %d",
                                  BPC_MAX_THREADS);
    v = host->config_get(host->host, "cache_mb");
    if (v && !parse_int(v, 0, 1L << 30, &cache_mb))
        return host->config_error(host->host, "cache_mb",
                                  "expected a whole number of MiB, 0 or more");
    char why[256];
    v = host->config_get(host->host, "simd");
    const bpc_vmath *vm = bpc_vmath_pick(v, why, sizeof why);
    if (!vm)
        return host->config_error(host->host, "simd", "%s", why);
    int in_place = IN_PLACE_AUTO;
    const char *ip = host->config_get(host->host, "conv_in_place");
    if (ip && !strcmp(ip, "direct"))
        in_place = IN_PLACE_DIRECT;
    else if (ip && !strcmp(ip, "openblas"))
        in_place = IN_PLACE_OPENBLAS;
    else if (ip && strcmp(ip, "auto") != 0)
        return host->config_error(host->host, "conv_in_place",
                                  "expected auto, direct or openblas");
    if (in_place == IN_PLACE_DIRECT && !vm->conv_direct_1x1)
        return host->config_error(host->host, "conv_in_place",
                                  "direct needs the avx512 vector level, and this one is %s "
                                  "(set simd = avx512 on a CPU with AVX-512, or conv_in_place = "
                                  "auto)", vm->level);
    bpc_state *st = calloc(1, sizeof *st);
    if (!st) {
        host->set_error(host->host, "blas_cpu: out of memory opening the backend");
        return BP_ERR_OUT_OF_MEMORY;
    }
    st->in_place = in_place;
    st->host = host;
    st->threads = threads < 1 ? 1 : (int)threads;
    st->cache_limit = (uint64_t)cache_mb << 20;
    st->vm = vm;
    st->vm_set = v && strcmp(v, "auto") != 0;
    st->gemm_isa = check_kernels(host, &st->cpu, st->kernels, sizeof st->kernels);
    host->log(host->host, BP_LOG_DEBUG, "blas_cpu: vector math kernels for %s (%s), %s", vm->level,
              vm->isa, st->vm_set ? "set by the simd key" : "the widest this CPU runs");
    *state = st;
    return BP_OK;
}

static void bpc_close(void *state) { free(state); }

/* The convolutions whose GEMM reads x in place, unfolding nothing (1x1
 * kernels, kernels along one axis), run direct where the vector level's
 * block beats OpenBLAS's kernels on them (the conv_in_place key; auto:
 * openblas_check.h's rule): a 512-bit block against 256-bit or narrower
 * kernels (vmath.h's conv_direct_1x1; magika's 5 taps along one axis over
 * 256 channels 1.7x on a Zen whose OpenBLAS runs Haswell kernels), or on a
 * Zen 4, whose 512-bit fmas run as two halves, against AVX-512 kernels
 * too (ResNet-50 1.02-1.04x on one thread, 1.12x on two; magika 1.09x).
 * On a Sapphire Rapids Xeon against its AVX-512 kernels the block measured
 * 0.85x. */
static bool conv_in_place_direct(const bpc_state *st)
{
    if (st->in_place != IN_PLACE_AUTO)
        return st->in_place == IN_PLACE_DIRECT;
    return bpc_in_place_direct_auto(st->vm->conv_direct_1x1, st->gemm_isa, &st->cpu);
}

/* Those of more than one group too (ShuffleNet's grouped 1x1s: not on a
 * Zen 4 against AVX-512 kernels, where they ran 0.80-0.87x direct). */
static bool conv_in_place_grouped_direct(const bpc_state *st)
{
    if (st->in_place != IN_PLACE_AUTO)
        return st->in_place == IN_PLACE_DIRECT;
    return bpc_in_place_grouped_direct_auto(st->vm->conv_direct_1x1, st->gemm_isa);
}

static int32_t bpc_device_count(void *state) { return 1; }

static bp_status bpc_device_info(void *state, int32_t index, bp_device_info *info)
{
    const bpc_state *st = state;
    if (index != 0) {
        st->host->set_error(st->host->host, "blas_cpu: no device %d (only device 0)", (int)index);
        return BP_ERR_INVALID_ARGUMENT;
    }
    snprintf(info->name, sizeof info->name, "host CPU (OpenBLAS, %d thread%s)", st->threads,
             st->threads == 1 ? "" : "s");
    const char *cfg = openblas_get_config();
    /* where the in-place convolutions run first: the detail may be cut at
     * its end, and tools read this part */
    const char *where = !conv_in_place_direct(st)          ? "OpenBLAS"
                        : conv_in_place_grouped_direct(st) ? "direct"
                                                           : "direct (grouped ones: OpenBLAS)";
    const int n = snprintf(info->detail, sizeof info->detail,
                           "1x1 and one-axis convolutions: %s%s; %s (%s); %s; %d threads (the "
                           "kernel pool; OpenBLAS on one thread); buffer cache up to %llu MiB; "
                           "vector math: %s (%s, %s)",
                           where, st->in_place != IN_PLACE_AUTO ? " (set by the conv_in_place key)" : "",
                           cfg ? cfg : "OpenBLAS (unknown build)", BPC_OPENBLAS_FROM, st->kernels,
                           st->threads, (unsigned long long)(st->cache_limit >> 20),
                           st->vm->level, st->vm->isa,
                           st->vm_set ? "set by the simd key" : "the widest this CPU runs");
    if (n >= (int)sizeof info->detail) /* cut at the end: the CPU's part stays whole */
        info->detail[sizeof info->detail - 1] = '\0';
    info->host_addressable = true;
    return BP_OK;
}

static bp_status bpc_device_open(void *state, int32_t index, void **dev)
{
    const bpc_state *st = state;
    if (index != 0) {
        st->host->set_error(st->host->host, "blas_cpu: no device %d (only device 0)", (int)index);
        return BP_ERR_INVALID_ARGUMENT;
    }
    bpc_dev *d = calloc(1, sizeof *d);
    if (!d) {
        st->host->set_error(st->host->host, "blas_cpu: out of memory opening the device");
        return BP_ERR_OUT_OF_MEMORY;
    }
    d->base.host = st->host;
    d->threads = st->threads;
    d->vm = st->vm;
    d->conv_direct_in_place = conv_in_place_direct(st);
    d->conv_direct_in_place_grouped = conv_in_place_grouped_direct(st);
    d->used = 0;
    if (bpc_pool_create(d->threads - 1, &d->pool) != BP_OK) {
        free(d);
        st->host->set_error(st->host->host, "blas_cpu: out of memory opening the device");
        return BP_ERR_OUT_OF_MEMORY;
    }
    bpc_cache_init(&d->cache, st->cache_limit);
    bpk_wraps_init(&d->wraps);
    *dev = d;
    return BP_OK;
}

static bp_status bpc_wrap(void *dev, int32_t kind, void *memory, size_t bytes,
                         void (*release)(void *), void *release_ctx, void **buffer)
{
    return bpk_wrap(dev, &((bpc_dev *)dev)->wraps, kind, memory, bytes, release, release_ctx,
                    buffer);
}

static void bpc_device_close(void *dev)
{
    bpc_dev *d = dev;
    bpk_wraps_destroy(&d->wraps);
    bpc_pool_destroy(d->pool);
    bpc_half_tables_free(d);
    bpc_cache_drain(&d->cache);
    pthread_mutex_destroy(&d->cache.lock);
    free(d);
}

/* ---- buffers ------------------------------------------------------------ */

static bp_status bpc_memory_info(void *dev, bp_memory_info *info)
{
    bpc_dev *d = dev;
    info->used = d->used;
    pthread_mutex_lock(&d->cache.lock);
    info->reserved = d->cache.cached;
    pthread_mutex_unlock(&d->cache.lock);
    bpk_system_memory(info);
    return BP_OK;
}

/* ---- descriptor --------------------------------------------------------- */

static const bp_plugin bpc_plugin = {
    .struct_size = sizeof(bp_plugin),
    .abi_major = BP_ABI_MAJOR,
    .abi_minor = BP_ABI_MINOR,
    .name = "blas_cpu",
    .version = "0.1.0",
    .description = "host CPU: OpenBLAS matmul, multithreaded vectorised kernels, cached buffers",
    .config_keys = bpc_keys,
    .config_key_size = sizeof(bp_config_key),
    .open = bpc_open,
    .close = bpc_close,
    .device_count = bpc_device_count,
    .device_info = bpc_device_info,
    .device_open = bpc_device_open,
    .device_close = bpc_device_close,
    .alloc = bpc_alloc,
    .free = bpc_free,
    .write = bpk_write, /* host memory: the binary backend's */
    .read = bpk_read,
    .host_ptr = bpk_host_ptr,
    .synchronize = bpk_synchronize,
    .memory_info = bpc_memory_info,
    .supports = bpk_supports, /* the reference kernels': every op of the table */
    .wrap = bpc_wrap,
    .op = bpc_op, /* every op, by kind (op.c); the typed entries are left NULL */
    .fused_takes = bpc_fused_takes, /* a graph's elementwise chains in blocks (fused.c) */
    .fused_run = bpc_fused_run,
    .prepare = bpc_prepare, /* a graph's convolutions with constant weights (conv_direct.c) */
    .prepared_op = bpc_prepared_op,
    .prepared_free = bpc_prepared_free,
    .prepare_epilogue = bpc_prepare_epilogue, /* a Relu after such a convolution */
    .prepare_epilogues = bpc_prepare_epilogues, /* a residual add, and its Relu, after one */
};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void) { return &bpc_plugin; }

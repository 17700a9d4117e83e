/* What opening the cuda plugin costs on a machine without the device:
 * dlopen PLUGIN, call the descriptor's open() with a minimal host table,
 * report the status and the detail. Run it under /usr/bin/time -v for the
 * wall time and the peak RSS (docs/cuda.md, "Staying cheap on machines
 * without the device"):
 *
 *   cc -O2 -I core/include bench/gpu/open_cost.c -o /tmp/open_cost -ldl
 *   /usr/bin/time -v /tmp/open_cost build/lib/backplane/bp_cuda.so
 *
 * Prints one line: the status, the microseconds dlopen + open took (measured
 * inside the process) and open()'s error detail. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <backplane/plugin.h>

static char detail[1024];

static void h_log(void *host, bp_log_level level, const char *fmt, ...) { (void)host, (void)level, (void)fmt; }
static const char *h_config_get(void *host, const char *key) { (void)host, (void)key; return NULL; }
static bp_status h_config_error(void *host, const char *key, const char *fmt, ...)
{
    (void)host, (void)key, (void)fmt;
    return BP_ERR_CONFIG;
}
static void h_set_error(void *host, const char *fmt, ...)
{
    (void)host;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: open_cost PLUGIN.so\n");
        return 2;
    }
    double t0 = now_us();
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    bp_plugin_entry_fn entry;
    void *sym = dlsym(lib, BP_PLUGIN_ENTRY_SYMBOL);
    memcpy(&entry, &sym, sizeof entry);
    const bp_plugin *p = entry ? entry() : NULL;
    if (!p || !p->open) {
        fprintf(stderr, "%s: no usable descriptor\n", argv[1]);
        return 1;
    }
    bp_host_api host = {sizeof host, BP_ABI_MAJOR, BP_ABI_MINOR, NULL, h_log, h_config_get,
                        h_config_error, h_set_error};
    void *state = NULL;
    bp_status st = p->open(&host, &state);
    double t1 = now_us();
    printf("open: status %d in %.0f us (dlopen + open); %s\n", (int)st, t1 - t0,
           st == BP_OK ? "opened" : detail);
    if (st == BP_OK && p->close)
        p->close(state);
    return 0;
}

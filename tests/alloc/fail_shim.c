/* An LD_PRELOAD library that makes the k-th allocation by backplane fail.
 *
 * It defines the allocation functions backplane and its plugins call
 * (malloc, calloc, realloc, aligned_alloc, posix_memalign, memalign, strdup,
 * strndup, vasprintf, getline, fopen, opendir, mmap) and forwards each to the
 * next definition (libasan's in a sanitized build, else libc's). A call
 * counts only when its immediate caller lies in libbackplane.so* or a
 * bp_*.so plugin: allocations by libc's own start-up, OpenBLAS, the loader
 * or the test program are never failed. The k-th counted call returns what
 * the real function returns when memory is exhausted (NULL, -1, ENOMEM...).
 *
 * Environment: BP_ALLOC_FAIL_AT=k fails call k (1-based); unset or 0 only
 * counts. At exit the count is printed to stderr as
 * "alloc-shim: N allocation(s) by backplane". The failing call prints its
 * number, function and size, and a stack trace when a sanitizer runtime is
 * there to print one. BP_ALLOC_SITES=FILE (when counting) writes one line
 * "k key" per counted call, key naming its path: the call site and the
 * BP_ALLOC_DEPTH - 1 (default 3) frames above it. Calls with one key take
 * the same error path, so failing the first of each covers every path.
 * At backplane's first counted call the shim removes LD_PRELOAD and its
 * variables from the environment: processes the program starts after that
 * (MPI's singleton daemon) are not swept.
 *
 * dlsym may itself allocate before the real functions are known: those
 * requests are served from a static arena that free() ignores. This file
 * is built without sanitizers (it runs before they are initialised). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void __sanitizer_print_stack_trace(void) __attribute__((weak));

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static void *(*real_aligned_alloc)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static char *(*real_strdup)(const char *);
static char *(*real_strndup)(const char *, size_t);
static int (*real_vasprintf)(char **, const char *, va_list);
static ssize_t (*real_getline)(char **, size_t *, FILE *);
static FILE *(*real_fopen)(const char *, const char *);
static DIR *(*real_opendir)(const char *);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);

static long fail_at = -1;       /* -1: not armed yet; 0: count only */
static atomic_long counted;
static atomic_bool resolving;
static int sites_fd = -1;       /* BP_ALLOC_SITES, when counting */
static int sites_depth = 4;      /* frames in a key: the call site and 3 above */
static _Thread_local bool in_site; /* backtrace() allocates too: not counted */

/* ---- bootstrap arena --------------------------------------------------- */

static _Alignas(64) unsigned char arena[64 * 1024];
static atomic_size_t arena_used;

static void *arena_alloc(size_t n)
{
    size_t at = atomic_fetch_add(&arena_used, (n + 63) & ~(size_t)63);
    if (at + n > sizeof arena)
        return NULL;
    return arena + at;
}

static bool in_arena(const void *p)
{
    return (const unsigned char *)p >= arena && (const unsigned char *)p < arena + sizeof arena;
}

#define RESOLVE(name) (real_##name = (__typeof__(real_##name))dlsym(RTLD_NEXT, #name))

static void resolve(void)
{
    if (real_free || atomic_exchange(&resolving, true))
        return;
    RESOLVE(malloc); RESOLVE(calloc); RESOLVE(realloc); RESOLVE(aligned_alloc);
    RESOLVE(posix_memalign); RESOLVE(memalign); RESOLVE(strdup); RESOLVE(strndup);
    RESOLVE(vasprintf); RESOLVE(getline); RESOLVE(fopen); RESOLVE(opendir); RESOLVE(mmap);
    RESOLVE(free);
}

/* The environment is readable once libc is initialised, which is before
 * this constructor runs and before backplane is called. */
__attribute__((constructor)) static void arm(void)
{
    resolve();
    const char *v = getenv("BP_ALLOC_FAIL_AT");
    fail_at = v && *v ? strtol(v, NULL, 10) : 0;
    const char *sites = getenv("BP_ALLOC_SITES"), *depth = getenv("BP_ALLOC_DEPTH");
    if (depth && *depth)
        sites_depth = 1 + (int)strtol(depth, NULL, 10);
    if (sites_depth < 2 || sites_depth > 16)
        sites_depth = 4;
    if (fail_at == 0 && sites && *sites) {
        FILE *f = real_fopen(sites, "w");
        if (f) {
            sites_fd = dup(fileno(f));
            fclose(f);
        }
    }
}

/* ---- deciding -------------------------------------------------------------- */

static bool is_backplane(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    return strncmp(base, "libbackplane.so", 15) == 0 ||
           (n > 6 && strncmp(base, "bp_", 3) == 0 && strcmp(base + n - 3, ".so") == 0);
}

/* "k key" for counted call k: a hash of the call site (the first frame in
 * backplane's code) and the sites_depth - 1 frames above it. */
static void write_site(long k)
{
    void *frames[32];
    in_site = true;
    int n = backtrace(frames, 32);
    in_site = false;
    int first = 0;
    Dl_info info;
    while (first < n && !(dladdr(frames[first], &info) && info.dli_fname &&
                          is_backplane(info.dli_fname)))
        first++;
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the return addresses */
    for (int i = first; i < n && i < first + sites_depth; i++) {
        uintptr_t a = (uintptr_t)frames[i];
        for (int b = 0; b < 8; b++) {
            h ^= (a >> (8 * b)) & 0xff;
            h *= 1099511628211ull;
        }
    }
    char line[64];
    int len = snprintf(line, sizeof line, "%ld %016llx\n", k, (unsigned long long)h);
    if (len > 0)
        (void)!write(sites_fd, line, (size_t)len);
}

/* Whether this call (made from `caller`) is the one to fail. */
static bool should_fail(void *caller, const char *fn, size_t size)
{
    if (fail_at < 0 || in_site)
        return false; /* not armed yet, or backtrace()'s own */
    Dl_info info;
    if (!dladdr(caller, &info) || !info.dli_fname || !is_backplane(info.dli_fname))
        return false;
    long k = atomic_fetch_add(&counted, 1) + 1;
    if (k == 1) {
        /* This process uses backplane: it is the one swept. A process it
         * starts (MPI's singleton daemon, from bp_comm_create) would
         * otherwise preload the shim again, truncate the sites file under
         * this one and print a count of its own. (Not in the constructor:
         * a wrapper such as timeout(1) must pass the shim on.) */
        unsetenv("LD_PRELOAD");
        unsetenv("BP_ALLOC_SITES");
        unsetenv("BP_ALLOC_FAIL_AT");
    }
    if (sites_fd >= 0)
        write_site(k);
    if (k != fail_at)
        return false;
    char line[512];
    int n = snprintf(line, sizeof line,
                     "alloc-shim: failing allocation #%ld: %s(%zu) called from %s+0x%lx\n", k, fn,
                     size, info.dli_fname,
                     (unsigned long)((uintptr_t)caller - (uintptr_t)info.dli_fbase));
    if (n > 0)
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    if (__sanitizer_print_stack_trace)
        __sanitizer_print_stack_trace();
    errno = ENOMEM;
    return true;
}

#define CALLER __builtin_return_address(0)

__attribute__((destructor)) static void report(void)
{
    char line[128];
    int n = snprintf(line, sizeof line, "alloc-shim: %ld allocation(s) by backplane\n",
                     atomic_load(&counted));
    if (n > 0)
        (void)!write(2, line, (size_t)n);
}

/* ---- the functions ---------------------------------------------------------- */

void *malloc(size_t n)
{
    resolve();
    if (!real_malloc)
        return arena_alloc(n);
    return should_fail(CALLER, "malloc", n) ? NULL : real_malloc(n);
}

void *calloc(size_t m, size_t n)
{
    resolve();
    if (!real_calloc)
        return arena_alloc(m * n); /* arena memory is zero */
    return should_fail(CALLER, "calloc", m * n) ? NULL : real_calloc(m, n);
}

void *realloc(void *p, size_t n)
{
    resolve();
    if (in_arena(p) || !real_realloc) {
        void *q = real_malloc ? real_malloc(n) : arena_alloc(n);
        size_t left = p ? (size_t)(arena + sizeof arena - (unsigned char *)p) : 0;
        if (q && p)
            memcpy(q, p, n < left ? n : left);
        return q;
    }
    return should_fail(CALLER, "realloc", n) ? NULL : real_realloc(p, n);
}

void free(void *p)
{
    resolve();
    if (!p || in_arena(p))
        return;
    if (real_free)
        real_free(p);
}

void *aligned_alloc(size_t a, size_t n)
{
    resolve();
    return should_fail(CALLER, "aligned_alloc", n) ? NULL : real_aligned_alloc(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
    resolve();
    return should_fail(CALLER, "posix_memalign", n) ? ENOMEM : real_posix_memalign(out, a, n);
}

void *memalign(size_t a, size_t n)
{
    resolve();
    return should_fail(CALLER, "memalign", n) ? NULL : real_memalign(a, n);
}

char *strdup(const char *s)
{
    resolve();
    return should_fail(CALLER, "strdup", strlen(s) + 1) ? NULL : real_strdup(s);
}

char *strndup(const char *s, size_t n)
{
    resolve();
    return should_fail(CALLER, "strndup", n) ? NULL : real_strndup(s, n);
}

int vasprintf(char **out, const char *fmt, va_list ap)
{
    resolve();
    return should_fail(CALLER, "vasprintf", 0) ? -1 : real_vasprintf(out, fmt, ap);
}

int asprintf(char **out, const char *fmt, ...)
{
    resolve();
    if (should_fail(CALLER, "asprintf", 0))
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int n = real_vasprintf(out, fmt, ap);
    va_end(ap);
    return n;
}

ssize_t getline(char **line, size_t *cap, FILE *f)
{
    resolve();
    return should_fail(CALLER, "getline", 0) ? -1 : real_getline(line, cap, f);
}

FILE *fopen(const char *path, const char *mode)
{
    resolve();
    return should_fail(CALLER, "fopen", 0) ? NULL : real_fopen(path, mode);
}

DIR *opendir(const char *path)
{
    resolve();
    return should_fail(CALLER, "opendir", 0) ? NULL : real_opendir(path);
}

void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
    resolve();
    return should_fail(CALLER, "mmap", n) ? MAP_FAILED : real_mmap(addr, n, prot, flags, fd, off);
}

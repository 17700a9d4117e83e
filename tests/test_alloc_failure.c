/* The core under failing reallocations: this program interposes realloc
 * (the library's calls resolve to the executable's definition first) and
 * fails the k-th call made from libbackplane, for every k a scenario
 * reaches. The sweep over every allocation function and every plugin is
 * tests/alloc/; these are the regressions it must never see again. */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"

static void *(*real_realloc)(void *, size_t);
static void *lib_base;         /* libbackplane's load address */
static atomic_long fail_at;    /* 0: never fail */
static atomic_long calls;      /* reallocs from libbackplane since armed */

/* Default visibility: the build hides symbols unless told otherwise. */
__attribute__((visibility("default"))) void *realloc(void *p, size_t n);
void *realloc(void *p, size_t n)
{
    if (!real_realloc)
        real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    long k = atomic_load(&fail_at);
    if (k > 0) {
        Dl_info info;
        if (dladdr(__builtin_return_address(0), &info) && info.dli_fbase == lib_base &&
            atomic_fetch_add(&calls, 1) + 1 == k) {
            errno = ENOMEM;
            return NULL;
        }
    }
    return real_realloc(p, n);
}

static void find_library(void)
{
    Dl_info info;
    cr_assert(dladdr((void *)bp_context_create, &info));
    lib_base = info.dli_fbase;
}

Test(alloc_failure, context_create_survives_every_failed_realloc_in_the_plugin_scan)
{
    find_library();
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1); /* a directory of many bp_*.so */
    setenv("BP_LOG_LEVEL", "off", 1);
    for (long k = 1;; k++) {
        atomic_store(&calls, 0);
        atomic_store(&fail_at, k);
        bp_context *ctx = NULL;
        bp_status st = bp_context_create(NULL, &ctx);
        atomic_store(&fail_at, 0);
        long reached = atomic_load(&calls);
        if (st == BP_OK) {
            cr_assert_not_null(ctx);
            bp_context_destroy(ctx);
        } else {
            cr_assert_eq(st, BP_ERR_OUT_OF_MEMORY, "k = %ld: %s: %s", k, bp_status_string(st),
                         bp_last_error());
            cr_assert_null(ctx);
            cr_assert(bp_last_error()[0], "k = %ld: no message", k);
        }
        if (reached < k)
            break; /* the k-th realloc never came: every site has been failed once */
        cr_assert(k < 10000, "runaway");
    }
}

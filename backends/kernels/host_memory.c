/* The buffer entries every host-memory plugin has in common: a buffer is its
 * own host address, copies in and out are memcpy, every op is synchronous.
 * In the kernel library so that blas_cpu's descriptor uses these very ones. */
#define _DEFAULT_SOURCE /* sysconf's _SC_PHYS_PAGES, MAP_ANONYMOUS, madvise */

#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "kernels.h"

bp_status bpk_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes)
{
    if (bytes)
        memcpy((char *)buffer + offset, src, bytes);
    return BP_OK;
}

bp_status bpk_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    if (bytes)
        memcpy(dst, (const char *)buffer + offset, bytes);
    return BP_OK;
}

void *bpk_host_ptr(void *dev, void *buffer) { return buffer; }

bp_status bpk_synchronize(void *dev) { return BP_OK; }

void bpk_system_memory(bp_memory_info *info)
{
    info->device_free = 0;
    info->device_total = 0;
#if defined(_SC_PHYS_PAGES) && defined(_SC_AVPHYS_PAGES) && defined(_SC_PAGESIZE)
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && avail >= 0 && page > 0) {
        info->device_total = (uint64_t)pages * (uint64_t)page;
        info->device_free = (uint64_t)avail * (uint64_t)page;
    }
#endif
}

/* Big blocks as their own huge-page mappings: glibc maps anything this big
 * with plain 4 KiB pages and unmaps it on free, so an op making a 64 MiB
 * output spent as long in 16384 first-touch faults as in its loop. Where
 * transparent huge pages are in "madvise" mode (Debian's default) the advice
 * is the only way to get them (NumPy does the same for its big arrays): 32
 * faults and 32 TLB entries instead. Freed blocks go straight back to the
 * system (a use after free faults), so without a cache every block pays its
 * huge-page faults: worth it only where glibc would map it anyway (kernels.h). */
#define BPK_HUGE ((size_t)2 << 20)

void *bpk_block_get(size_t total, size_t huge_min, size_t *map_len)
{
    *map_len = 0;
#if defined(MAP_ANONYMOUS)
    if (total >= huge_min && total <= SIZE_MAX - 2 * BPK_HUGE) {
        size_t len = (total + BPK_HUGE - 1) & ~(BPK_HUGE - 1);
        char *p = mmap(NULL, len + BPK_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        /* keep the 2 MiB-aligned len bytes, give back the rest */
        char *a = (char *)(((uintptr_t)p + BPK_HUGE - 1) & ~(uintptr_t)(BPK_HUGE - 1));
        if (a > p)
            munmap(p, (size_t)(a - p));
        if (a + len < p + len + BPK_HUGE)
            munmap(a + len, (size_t)(p + len + BPK_HUGE - (a + len)));
#ifdef MADV_HUGEPAGE
        madvise(a, len, MADV_HUGEPAGE); /* advice only: a refusal changes nothing */
#endif
        *map_len = len;
        return a;
    }
#endif
    return aligned_alloc(64, total);
}

void bpk_block_put(void *block, size_t map_len)
{
#if defined(MAP_ANONYMOUS)
    if (map_len) {
        munmap(block, map_len);
        return;
    }
#endif
    free(block);
}

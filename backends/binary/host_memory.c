/* The buffer entries every host-memory plugin has in common: a buffer is its
 * own host address, copies in and out are memcpy, every op is synchronous.
 * In the kernel library so that blas_cpu's descriptor uses these very ones. */
#define _DEFAULT_SOURCE /* sysconf's _SC_PHYS_PAGES, when the libc has it */

#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "binary.h"

bp_status bpb_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes)
{
    if (bytes)
        memcpy((char *)buffer + offset, src, bytes);
    return BP_OK;
}

bp_status bpb_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    if (bytes)
        memcpy(dst, (const char *)buffer + offset, bytes);
    return BP_OK;
}

void *bpb_host_ptr(void *dev, void *buffer) { return buffer; }

bp_status bpb_synchronize(void *dev) { return BP_OK; }

void bpb_system_memory(bp_memory_info *info)
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

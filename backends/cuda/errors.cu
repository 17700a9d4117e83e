/* Error reporting, and what every entry does first (bpcu_enter). */
#include <stdarg.h>
#include <stdio.h>

#include "bpcu.h"

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

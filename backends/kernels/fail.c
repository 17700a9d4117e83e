/* bpk_fail: error detail through the host. Part of the kernel library (not
 * plugin.c) because every kernel reports through it, also when another plugin
 * links the kernels (blas_cpu): any device handle whose first member is a
 * bpk_dev works. */
#include <stdarg.h>
#include <stdio.h>

#include "kernels.h"

bp_status bpk_fail(void *dev, bp_status code, const char *fmt, ...)
{
    const bp_host_api *host = dev ? ((bpk_dev *)dev)->host : NULL;
    if (host && host->set_error) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        host->set_error(host->host, "%s", msg);
    }
    return code;
}

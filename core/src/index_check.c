/* Checking index tensors (gather, gather_elements, gather_nd, scatter_*)
 * before a backend sees them. Host-addressable backends are read in place
 * (they run synchronously anyway). A device backend with deferred_error
 * checks the indices itself, on the device, and reports a bad one at the
 * next wait: reading them here would synchronise it on every call. Any other
 * device backend is read (and so waited for), which the stats count and the
 * debug log names. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

bp_status bp__check_index_bounds(const char *fn, const bp_tensor *indices, int32_t m,
                                 const int64_t *dims, const char *const *what)
{
    bp_backend *be = bp__backend_of(indices);
    if (indices->numel == 0 || (!be->host_addressable && BP__HAS(be->vt, deferred_error)))
        return BP_OK;
    void *host = NULL;
    const unsigned char *at;
    if (be->host_addressable) {
        at = (const unsigned char *)be->vt->host_ptr(be->dev, indices->storage->buffer) +
             indices->offset;
    } else {
        host = malloc(indices->nbytes);
        if (host == NULL)
            return bp__error(BP_ERR_OUT_OF_MEMORY,
                             "%s: cannot allocate %zu bytes of host memory to check the indices",
                             fn, indices->nbytes);
        bp_status st = bp__device_read(be, fn, indices->storage->buffer, (size_t)indices->offset,
                                       host, indices->nbytes);
        if (st != BP_OK) {
            free(host);
            return st;
        }
        at = host;
    }
    size_t esize = bp_dtype_size(indices->dtype);
    bp_status st = BP_OK;
    for (int64_t i = 0; i < indices->numel && st == BP_OK; i++) {
        int64_t v = bp_elem_load_i64(indices->dtype, at + (size_t)i * esize);
        int64_t dim = dims[i % m];
        if (v < -dim || v >= dim)
            st = bp__error(BP_ERR_INDEX,
                           "%s: indices[%lld] (flat position) is %lld, out of range for %s of "
                           "extent %lld; indices must lie in [%lld, %lld)",
                           fn, (long long)i, (long long)v, what[i % m], (long long)dim,
                           (long long)-dim, (long long)dim);
    }
    free(host);
    return st;
}

/* Host data for tensors, read from the input: small integers, the values
 * that break conversions, or raw bits (fuzz_api, fuzz_comm, fuzz_graph). */
#ifndef FZ_DATA_H
#define FZ_DATA_H

#include <stdint.h>

#include "fz_bytes.h"

/* The most bytes fz_host_data fills. */
#define FZ_DATA_CAP ((int64_t)1 << 20)

/* numel elements of dtype in a static buffer (valid until the next call),
 * or NULL now and then. For a count the buffer cannot hold (or negative),
 * the buffer unfilled: such a call must be refused before it is read. One
 * byte picks the mode (0xff: NULL), 16 more make the pattern. */
void *fz_host_data(fz_in *in, int dtype, int64_t numel);

/* The same into dst (numel elements of a valid dtype), never NULL. */
void fz_fill(fz_in *in, int dtype, int64_t numel, void *dst);

#endif

/* Decoding fuzzer input: every byte string decodes (reads past the end give
 * zeros), so libFuzzer's mutations always reach the library. */
#ifndef FZ_BYTES_H
#define FZ_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fz_in {
    const uint8_t *p;
    size_t n;
} fz_in;

uint8_t fz_u8(fz_in *in);
uint32_t fz_u32(fz_in *in);
uint64_t fz_u64(fz_in *in);
bool fz_bool(fz_in *in);
/* 0 .. n-1 (n > 0). */
unsigned fz_pick(fz_in *in, unsigned n);
bool fz_done(const fz_in *in);

/* An extent or index: small values most of the time, and the edges that
 * break arithmetic (0, -1, 2^31, 2^62, INT64_MAX, INT64_MIN...) otherwise. */
int64_t fz_extent(fz_in *in);
/* An axis or count as int32: mostly -9..9, sometimes INT32_MIN/MAX. */
int32_t fz_axis(fz_in *in);
/* A double: small integers, fractions, +-0, NaN, +-inf, huge, tiny, 2^53+1,
 * or 8 raw bytes. */
double fz_double(fz_in *in);
/* A dtype value: mostly valid, sometimes out of the enum (-1, 9, 1000). */
int fz_dtype(fz_in *in);
/* A rank: mostly 0..4, sometimes up to 8, sometimes out of range. */
int32_t fz_rank(fz_in *in);
/* rank extents (fz_extent) into buf (8 entries, the rest 1); NULL now and
 * then. */
const int64_t *fz_shape(fz_in *in, int32_t rank, int64_t *buf);

#endif

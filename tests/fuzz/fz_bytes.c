/* The byte reader behind every harness (fz_bytes.h). */
#include "fz_bytes.h"

#include <backplane/dtype.h>

#include <math.h>
#include <string.h>

uint8_t fz_u8(fz_in *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

uint32_t fz_u32(fz_in *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)fz_u8(in) << (8 * i);
    return v;
}

uint64_t fz_u64(fz_in *in)
{
    uint64_t lo = fz_u32(in);
    return lo | (uint64_t)fz_u32(in) << 32;
}

bool fz_bool(fz_in *in) { return fz_u8(in) & 1; }

unsigned fz_pick(fz_in *in, unsigned n) { return fz_u8(in) % n; }

bool fz_done(const fz_in *in) { return in->n == 0; }

int64_t fz_extent(fz_in *in)
{
    static const int64_t edges[] = {
        0, -1, -2, INT64_MIN, INT64_MAX, INT64_MAX - 1, (int64_t)1 << 31,
        ((int64_t)1 << 31) - 1, (int64_t)1 << 32, (int64_t)1 << 62, ((int64_t)1 << 62) + 1,
        (int64_t)1 << 61, (int64_t)1 << 40, 1000, 65536, 255, 256, 1023, 1025, -65536,
        (int64_t)3 << 60, INT64_MIN + 1, ((int64_t)1 << 63 >> 1) - 1, 4096,
    };
    uint8_t b = fz_u8(in);
    if (b < 200)
        return b % 9;              /* 0..8: the everyday shapes */
    if (b < 224)
        return edges[b - 200];
    if (b < 240)
        return (int64_t)(b - 224) + 9; /* 9..24 */
    return (int64_t)fz_u64(in);    /* anything */
}

int32_t fz_axis(fz_in *in)
{
    uint8_t b = fz_u8(in);
    if (b < 240)
        return (int32_t)(b % 19) - 9;
    static const int32_t edges[] = {INT32_MIN, INT32_MAX, INT32_MIN + 1, 64, -64, 1 << 20, 10, -10,
                                    100, -100, 127, -128, 255, 256, 9, -9};
    return edges[b - 240];
}

double fz_double(fz_in *in)
{
    static const double edges[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 1e308, -1e308,
                                   5e-324, 1e-310, 9007199254740993.0, 65504.0, 65520.0,
                                   3.4028235677973366e38, 1e39, 255.5, -128.5, 2147483648.0,
                                   -2147483649.0, 9223372036854775808.0, -9.3e18, 1e19, 3.0};
    uint8_t b = fz_u8(in);
    if (b < 24)
        return edges[b];
    if (b == 24)
        return NAN;
    if (b == 25)
        return INFINITY;
    if (b == 26)
        return -INFINITY;
    if (b < 200)
        return (double)((int)b - 113) / (b & 1 ? 1.0 : 4.0);
    uint64_t bits = fz_u64(in);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

int fz_dtype(fz_in *in)
{
    uint8_t b = fz_u8(in);
    if (b < 243)
        return b % BP_DTYPE_COUNT;
    static const int bad[] = {-1, BP_DTYPE_COUNT, BP_DTYPE_COUNT + 1, 1000, -2147483647 - 1,
                              2147483647, 255, 16, 100, -9, 64, 14, 15};
    return bad[b - 243];
}

int32_t fz_rank(fz_in *in)
{
    uint8_t b = fz_u8(in);
    if (b < 200)
        return b % 5;              /* 0..4 */
    if (b < 240)
        return 5 + b % 4;          /* 5..8 */
    static const int32_t bad[] = {-1, 9, 10, 100, INT32_MIN, INT32_MAX, -8, 16};
    return bad[b % 8];
}

const int64_t *fz_shape(fz_in *in, int32_t rank, int64_t *buf)
{
    if (fz_u8(in) == 0xff)
        return NULL;
    int32_t n = rank < 0 ? 0 : rank > 8 ? 8 : rank;
    for (int32_t k = 0; k < 8; k++)
        buf[k] = k < n ? fz_extent(in) : 1;
    return buf;
}

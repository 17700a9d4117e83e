/* Host data read from the input (fz_data.h). */
#include "fz_data.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <backplane/backplane.h>

/* Values that break conversions: NaN, infinities, -0, the integer edges,
 * 2^53 + 1, the largest f16 and bf16, subnormals. */
static double fz_special(unsigned i)
{
    static const double v[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, 1.5,
                               2.5, 127.0, 128.0, -129.0, 255.0, 256.0, 2147483647.0,
                               2147483648.0, -2147483649.0, 9007199254740993.0,
                               9223372036854775807.0, -9223372036854775808.0, 65504.0, 65520.0,
                               3.4e38, 1e300, 1e-40, 5e-324, 6e-8, 1e-5, 3.0, -7.0};
    return v[i % (sizeof v / sizeof v[0])];
}

static void fz_store(void *dst, int dtype, double d, uint64_t raw, bool use_raw)
{
    switch (dtype) {
    case BP_BOOL: { uint8_t x = use_raw ? (uint8_t)(raw & 1) : d != 0.0; memcpy(dst, &x, 1); break; }
    case BP_U8: case BP_I8: { uint8_t x = (uint8_t)raw; memcpy(dst, &x, 1); break; }
    case BP_I32: case BP_U32: { uint32_t x = (uint32_t)raw; memcpy(dst, &x, 4); break; }
    case BP_I16: case BP_U16: { uint16_t x = (uint16_t)raw; memcpy(dst, &x, 2); break; }
    case BP_I64: case BP_U64: { memcpy(dst, &raw, 8); break; }
    case BP_F16: { uint16_t x = use_raw ? (uint16_t)raw : bp_f32_to_f16((float)d); memcpy(dst, &x, 2); break; }
    case BP_BF16: { uint16_t x = use_raw ? (uint16_t)raw : bp_f32_to_bf16((float)d); memcpy(dst, &x, 2); break; }
    case BP_F32: { float x = (float)d; memcpy(dst, &x, 4); break; }
    case BP_F64: { memcpy(dst, &d, 8); break; }
    default: break;
    }
}

static void fz_fill_mode(fz_in *in, uint8_t mode, int dtype, int64_t numel, unsigned char *dst)
{
    size_t elem = bp_dtype_valid(dtype) ? bp_dtype_size((bp_dtype)dtype) : 1;
    uint8_t pattern[16];
    for (int i = 0; i < 16; i++)
        pattern[i] = fz_u8(in);
    for (int64_t i = 0; i < numel; i++) {
        uint64_t raw;
        memcpy(&raw, pattern, 8);
        raw ^= (uint64_t)i * 0x9e3779b97f4a7c15ULL;
        double d;
        switch (mode % 4) {
        case 0: d = (double)(i % 7) - 3.0; break;                     /* small integers */
        case 1: d = fz_special(pattern[i % 16] + (unsigned)i); break; /* edge values */
        case 2: memcpy(&d, &raw, 8); break;                          /* any bits */
        default: d = (double)pattern[i % 16] / 16.0 - 8.0; break;
        }
        /* integers take raw bits in modes 2-3, the value's bits otherwise */
        if (bp_dtype_is_int((bp_dtype)dtype) && mode % 4 < 2) {
            int64_t v = isnan(d) ? 0 : d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)d;
            raw = (uint64_t)v;
        }
        fz_store(dst + (size_t)i * elem, dtype, d, raw, mode % 4 >= 2);
    }
}

void *fz_host_data(fz_in *in, int dtype, int64_t numel)
{
    static _Alignas(64) unsigned char buf[FZ_DATA_CAP + 64];
    uint8_t mode = fz_u8(in);
    if (mode == 0xff)
        return NULL;
    size_t elem = bp_dtype_valid(dtype) ? bp_dtype_size((bp_dtype)dtype) : 1;
    if (numel < 0 || (int64_t)elem * numel > FZ_DATA_CAP)
        return buf; /* the call must be refused: it must not read this */
    fz_fill_mode(in, mode, dtype, numel, buf);
    return buf;
}

void fz_fill(fz_in *in, int dtype, int64_t numel, void *dst)
{
    fz_fill_mode(in, fz_u8(in), dtype, numel, dst);
}

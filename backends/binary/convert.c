/* Element load/store through double or int64 with the cast rules of
 * DESIGN.md: never C undefined behaviour, NaN -> 0 for integers, out-of-range
 * values saturate, anything -> bool is (x != 0). Loads and stores go through
 * memcpy so a view's alignment never matters here. */
#include <math.h>
#include <string.h>

#include "binary.h"

/* Truncate toward zero and clamp to [lo, hi]; the bounds are exact doubles
 * (hi + 1 is a power of two) so the comparisons decide before any conversion. */
static int64_t sat_f64(double v, double lo, double hi_plus_1, int64_t ilo, int64_t ihi)
{
    if (isnan(v))
        return 0;
    if (v >= hi_plus_1)
        return ihi;
    if (v <= lo)
        return ilo;
    return (int64_t)v; /* in range: truncates toward zero */
}

static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

double bpb_load_f64(bp_dtype dt, const char *p)
{
    switch (dt) {
    case BP_BOOL: return p[0] != 0 ? 1.0 : 0.0;
    case BP_U8: return (double)(uint8_t)p[0];
    case BP_I8: { int8_t v; memcpy(&v, p, 1); return (double)v; }
    case BP_I32: { int32_t v; memcpy(&v, p, 4); return (double)v; }
    case BP_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case BP_F16: { uint16_t v; memcpy(&v, p, 2); return (double)bp_f16_to_f32(v); }
    case BP_BF16: { uint16_t v; memcpy(&v, p, 2); return (double)bp_bf16_to_f32(v); }
    case BP_F32: { float v; memcpy(&v, p, 4); return (double)v; }
    case BP_F64: { double v; memcpy(&v, p, 8); return v; }
    }
    return 0.0;
}

void bpb_store_f64(bp_dtype dt, char *p, double v)
{
    switch (dt) {
    case BP_BOOL: p[0] = (char)(v != 0.0); return; /* NaN != 0: true */
    case BP_U8: p[0] = (char)(uint8_t)sat_f64(v, 0.0, 256.0, 0, 255); return;
    case BP_I8: { int8_t r = (int8_t)sat_f64(v, -128.0, 128.0, -128, 127); memcpy(p, &r, 1); return; }
    case BP_I32: {
        int32_t r = (int32_t)sat_f64(v, -2147483648.0, 2147483648.0, INT32_MIN, INT32_MAX);
        memcpy(p, &r, 4);
        return;
    }
    case BP_I64: {
        int64_t r = sat_f64(v, -9223372036854775808.0, 9223372036854775808.0, INT64_MIN, INT64_MAX);
        memcpy(p, &r, 8);
        return;
    }
    case BP_F16: { uint16_t r = bp_f64_to_f16((double)v); memcpy(p, &r, 2); return; }
    case BP_BF16: { uint16_t r = bp_f64_to_bf16((double)v); memcpy(p, &r, 2); return; }
    case BP_F32: { float r = (float)v; memcpy(p, &r, 4); return; }
    case BP_F64: memcpy(p, &v, 8); return;
    }
}

int64_t bpb_load_i64(bp_dtype dt, const char *p)
{
    switch (dt) {
    case BP_BOOL: return p[0] != 0;
    case BP_U8: return (uint8_t)p[0];
    case BP_I8: { int8_t v; memcpy(&v, p, 1); return v; }
    case BP_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case BP_I64: { int64_t v; memcpy(&v, p, 8); return v; }
    case BP_F16: case BP_BF16: case BP_F32: case BP_F64:
        return sat_f64(bpb_load_f64(dt, p), -9223372036854775808.0, 9223372036854775808.0,
                       INT64_MIN, INT64_MAX);
    }
    return 0;
}

void bpb_store_i64(bp_dtype dt, char *p, int64_t v)
{
    switch (dt) {
    case BP_BOOL: p[0] = (char)(v != 0); return;
    case BP_U8: p[0] = (char)(uint8_t)clamp_i64(v, 0, 255); return;
    case BP_I8: { int8_t r = (int8_t)clamp_i64(v, -128, 127); memcpy(p, &r, 1); return; }
    case BP_I32: { int32_t r = (int32_t)clamp_i64(v, INT32_MIN, INT32_MAX); memcpy(p, &r, 4); return; }
    case BP_I64: memcpy(p, &v, 8); return;
    /* int -> float rounds once, from the integer (through double it could
     * round twice once |v| > 2^53) */
    case BP_F16: { uint16_t r = bp_i64_to_f16(v); memcpy(p, &r, 2); return; }
    case BP_BF16: { uint16_t r = bp_i64_to_bf16(v); memcpy(p, &r, 2); return; }
    case BP_F32: { float r = (float)v; memcpy(p, &r, 4); return; }
    case BP_F64: { double r = (double)v; memcpy(p, &r, 8); return; }
    }
}

void bpb_load_row_f64(bp_dtype dt, const char *p, int64_t stride, int64_t n, double *out)
{
    switch (dt) {
    case BP_F16:
        for (int64_t i = 0; i < n; i++)
            out[i] = bp_f16_to_f32(((const uint16_t *)p)[i * stride]);
        break;
    case BP_BF16:
        for (int64_t i = 0; i < n; i++)
            out[i] = bp_bf16_to_f32(((const uint16_t *)p)[i * stride]);
        break;
    case BP_F32:
        for (int64_t i = 0; i < n; i++)
            out[i] = ((const float *)p)[i * stride];
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            out[i] = ((const double *)p)[i * stride];
        break;
    }
}

/* backplane conform: host arrays and the cast rules of ops.h / DESIGN.md,
 * written out in plain C so the oracle never uses the library's (or a
 * backend's) conversions: NaN -> 0 for integers (true for bool), float -> int
 * truncates toward zero, out-of-range values saturate, float -> bool is
 * x != 0, floats round to nearest even (overflow gives infinity). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"

int64_t cf_numel(int32_t rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int32_t k = 0; k < rank; k++)
        n *= shape[k];
    return n;
}

static bool is_float(bp_dtype dt)
{
    return dt == BP_F16 || dt == BP_BF16 || dt == BP_F32 || dt == BP_F64;
}

bool cf_array_init(cf_array *a, bp_dtype dt, int32_t rank, const int64_t *shape)
{
    memset(a, 0, sizeof *a);
    a->dt = dt;
    a->rank = rank;
    for (int32_t k = 0; k < rank; k++)
        a->shape[k] = shape[k];
    a->n = cf_numel(rank, shape);
    size_t slots = (size_t)(a->n > 0 ? a->n : 1);
    if (is_float(dt))
        a->f = calloc(slots, sizeof *a->f);
    else
        a->i = calloc(slots, sizeof *a->i);
    return a->f || a->i;
}

void cf_array_free(cf_array *a)
{
    free(a->f);
    free(a->i);
    a->f = NULL;
    a->i = NULL;
}

int64_t cf_int_min(bp_dtype dt)
{
    switch (dt) {
    case BP_I8: return -128;
    case BP_I32: return INT32_MIN;
    case BP_I64: return INT64_MIN;
    default: return 0;
    }
}

int64_t cf_int_max(bp_dtype dt)
{
    switch (dt) {
    case BP_BOOL: return 1;
    case BP_U8: return 255;
    case BP_I8: return 127;
    case BP_I32: return INT32_MAX;
    default: return INT64_MAX;
    }
}

int64_t cf_wrap(bp_dtype dt, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (dt) {
    case BP_BOOL: return v != 0;
    case BP_U8: return (int64_t)(u & 0xffu);
    case BP_I8: return (int64_t)((u & 0xffu) ^ 0x80u) - 0x80;
    case BP_I32: return (int64_t)((u & 0xffffffffu) ^ 0x80000000u) - (int64_t)0x80000000;
    default: return v;
    }
}

int64_t cf_int_of_f64(bp_dtype dt, double v)
{
    if (dt == BP_BOOL)
        return v != 0.0 || isnan(v);
    if (isnan(v))
        return 0;
    double t = trunc(v);
    if (dt == BP_I64) {
        if (t >= 9223372036854775808.0)
            return INT64_MAX;
        if (t <= -9223372036854775808.0)
            return INT64_MIN;
        return (int64_t)t;
    }
    if (t <= (double)cf_int_min(dt))
        return cf_int_min(dt);
    if (t >= (double)cf_int_max(dt))
        return cf_int_max(dt);
    return (int64_t)t;
}

int64_t cf_int_of_i64(bp_dtype dt, int64_t v)
{
    if (dt == BP_BOOL)
        return v != 0;
    if (v < cf_int_min(dt))
        return cf_int_min(dt);
    if (v > cf_int_max(dt))
        return cf_int_max(dt);
    return v;
}

/* Round v to a binary format with m fraction bits, minimum normal exponent
 * emin, maximum exponent emax; ties to even; overflow to infinity. */
static double round_fmt(double v, int m, int emin, int emax)
{
    if (isnan(v) || isinf(v) || v == 0.0)
        return v;
    int e = ilogb(v);
    if (e < emin)
        e = emin;
    double q = nearbyint(ldexp(v, m - e)); /* default rounding mode: ties to even */
    double r = ldexp(q, e - m);
    double maxv = ldexp(2.0 - ldexp(1.0, -m), emax);
    if (fabs(r) > maxv)
        return copysign(INFINITY, v);
    if (r == 0.0)
        return copysign(0.0, v);
    return r;
}

double cf_round(bp_dtype dt, double v)
{
    switch (dt) {
    case BP_F64: return v;
    case BP_F32: return round_fmt(v, 23, -126, 127);
    case BP_F16: return round_fmt(v, 10, -14, 15);
    case BP_BF16: return round_fmt(v, 7, -126, 127);
    default: return (double)cf_int_of_f64(dt, v);
    }
}

double cf_eps(bp_dtype dt)
{
    switch (dt) {
    case BP_F16: return ldexp(1.0, -10);
    case BP_BF16: return ldexp(1.0, -7);
    case BP_F32: return ldexp(1.0, -23);
    case BP_F64: return ldexp(1.0, -52);
    default: return 0.0;
    }
}

double cf_ulp(bp_dtype dt, double v)
{
    int m, emin;
    switch (dt) {
    case BP_F16: m = 10; emin = -14; break;
    case BP_BF16: m = 7; emin = -126; break;
    case BP_F32: m = 23; emin = -126; break;
    case BP_F64: m = 52; emin = -1022; break;
    default: return 1.0;
    }
    if (isnan(v) || isinf(v))
        return INFINITY;
    int e = v == 0.0 ? emin : ilogb(v);
    if (e < emin)
        e = emin;
    return ldexp(1.0, e - m);
}

double cf_get_f(const cf_array *a, int64_t k)
{
    return a->f ? a->f[k] : (double)a->i[k];
}

int64_t cf_get_i(const cf_array *a, int64_t k)
{
    return a->i ? a->i[k] : cf_int_of_f64(BP_I64, a->f[k]);
}

void cf_set_f(cf_array *a, int64_t k, double v)
{
    if (a->f)
        a->f[k] = v;
    else
        a->i[k] = cf_int_of_f64(a->dt, v);
}

void cf_set_i(cf_array *a, int64_t k, int64_t v)
{
    if (a->f)
        a->f[k] = (double)v;
    else
        a->i[k] = cf_int_of_i64(a->dt, v);
}

/* ---- bytes <-> values ---------------------------------------------------- */

static uint16_t f16_bits(double v)
{
    double r = cf_round(BP_F16, v);
    uint16_t sign = signbit(r) ? 0x8000u : 0u;
    if (isnan(r))
        return (uint16_t)(sign | 0x7e00u);
    if (isinf(r))
        return (uint16_t)(sign | 0x7c00u);
    double a = fabs(r);
    if (a == 0.0)
        return sign;
    int e = ilogb(a);
    if (e < -14)
        return (uint16_t)(sign | (uint16_t)ldexp(a, 24));
    uint16_t man = (uint16_t)(ldexp(a, -e) * 1024.0 - 1024.0);
    return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | man);
}

static double f16_value(uint16_t h)
{
    double s = (h & 0x8000u) ? -1.0 : 1.0;
    int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f)
        return man ? copysign(NAN, s) : s * INFINITY;
    if (exp == 0)
        return s * ldexp((double)man, -24);
    return s * ldexp((double)(1024 + man), exp - 25);
}

static uint16_t bf16_bits(double v)
{
    double r = cf_round(BP_BF16, v);
    if (isnan(r))
        return signbit(r) ? 0xffc0u : 0x7fc0u;
    float f = (float)r; /* exact: r is a bf16 value */
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

static double bf16_value(uint16_t b)
{
    double s = (b & 0x8000u) ? -1.0 : 1.0;
    int exp = (b >> 7) & 0xff, man = b & 0x7f;
    if (exp == 0xff)
        return man ? copysign(NAN, s) : s * INFINITY;
    if (exp == 0)
        return s * ldexp((double)man, -133);
    return s * ldexp((double)(128 + man), exp - 134);
}

void cf_encode(const cf_array *a, void *raw)
{
    char *p = raw;
    for (int64_t k = 0; k < a->n; k++) {
        switch (a->dt) {
        case BP_BOOL: { uint8_t x = a->i[k] != 0; memcpy(p, &x, 1); p += 1; break; }
        case BP_U8: { uint8_t x = (uint8_t)a->i[k]; memcpy(p, &x, 1); p += 1; break; }
        case BP_I8: { int8_t x = (int8_t)a->i[k]; memcpy(p, &x, 1); p += 1; break; }
        case BP_I32: { int32_t x = (int32_t)a->i[k]; memcpy(p, &x, 4); p += 4; break; }
        case BP_I64: memcpy(p, &a->i[k], 8); p += 8; break;
        case BP_F16: { uint16_t x = f16_bits(a->f[k]); memcpy(p, &x, 2); p += 2; break; }
        case BP_BF16: { uint16_t x = bf16_bits(a->f[k]); memcpy(p, &x, 2); p += 2; break; }
        case BP_F32: {
            float x = isnan(a->f[k]) ? (float)a->f[k] : (float)cf_round(BP_F32, a->f[k]);
            memcpy(p, &x, 4);
            p += 4;
            break;
        }
        case BP_F64: memcpy(p, &a->f[k], 8); p += 8; break;
        }
    }
}

void cf_decode(cf_array *a, const void *raw)
{
    const char *p = raw;
    for (int64_t k = 0; k < a->n; k++) {
        switch (a->dt) {
        case BP_BOOL: case BP_U8: { uint8_t x; memcpy(&x, p, 1); a->i[k] = x; p += 1; break; }
        case BP_I8: { int8_t x; memcpy(&x, p, 1); a->i[k] = x; p += 1; break; }
        case BP_I32: { int32_t x; memcpy(&x, p, 4); a->i[k] = x; p += 4; break; }
        case BP_I64: memcpy(&a->i[k], p, 8); p += 8; break;
        case BP_F16: { uint16_t x; memcpy(&x, p, 2); a->f[k] = f16_value(x); p += 2; break; }
        case BP_BF16: { uint16_t x; memcpy(&x, p, 2); a->f[k] = bf16_value(x); p += 2; break; }
        case BP_F32: { float x; memcpy(&x, p, 4); a->f[k] = (double)x; p += 4; break; }
        case BP_F64: memcpy(&a->f[k], p, 8); p += 8; break;
        }
    }
}

/* The cast rules of ops.h / DESIGN.md written out in plain C: the oracle's
 * own, exact statement of them, so that `backplane conform` and the op tests
 * check the library against an independent one (never the library's own
 * conversions in <backplane/cast.h>): NaN -> 0 for integers (true for bool), float -> int truncates
 * toward zero, out-of-range values saturate, float -> bool is x != 0, floats
 * round to nearest even (overflow gives infinity), f16/bf16 bit layouts. */
#include <math.h>
#include <string.h>

#include "cast_rules.h"
#include "independent.h"

int64_t cf_int_min(bp_dtype dt)
{
    switch (dt) {
    case BP_I8: return -128;
    case BP_I16: return -32768;
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
    case BP_I16: return 32767;
    case BP_U16: return 65535;
    case BP_U32: return 4294967295;
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
    case BP_I16: return (int64_t)((u & 0xffffu) ^ 0x8000u) - 0x8000;
    case BP_U16: return (int64_t)(u & 0xffffu);
    case BP_U32: return (int64_t)(u & 0xffffffffu);
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
    if (dt == BP_U64) { /* the oracle holds a u64 as its bits in an int64 */
        if (t >= 18446744073709551616.0)
            return -1; /* UINT64_MAX */
        if (t <= 0.0)
            return 0;
        return (int64_t)(uint64_t)t;
    }
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

/* Round an integer to a float dtype exactly from the integer: keep m + 1
 * leading bits, ties to even, in integer arithmetic (converting to double
 * first would round once more for |v| > 2^53). */
double cf_round_i64(bp_dtype dt, int64_t v)
{
    int m;
    switch (dt) {
    case BP_F16: m = 10; break;
    case BP_BF16: m = 7; break;
    case BP_F32: m = 23; break;
    case BP_F64: m = 52; break;
    default: return (double)cf_int_of_i64(dt, v);
    }
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int bits = 0;
    while (bits < 64 && (u >> bits) != 0)
        bits++;
    int shift = bits - (m + 1);
    if (shift > 0) {
        uint64_t q = u >> shift, r = u & ((UINT64_C(1) << shift) - 1), half = UINT64_C(1) << (shift - 1);
        if (r > half || (r == half && (q & 1)))
            q++;
        double a = ldexp((double)q, shift); /* q <= 2^(m+1): exact */
        return cf_round(dt, v < 0 ? -a : a); /* representable, or overflows to inf */
    }
    double a = (double)u; /* at most m + 1 <= 53 bits: exact */
    return cf_round(dt, v < 0 ? -a : a);
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

/* ---- f16 / bf16 bit layouts ---------------------------------------------- */

uint16_t cf_f16_bits(double v)
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

double cf_f16_value(uint16_t h)
{
    double s = (h & 0x8000u) ? -1.0 : 1.0;
    int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f)
        return man ? copysign(NAN, s) : s * INFINITY;
    if (exp == 0)
        return s * ldexp((double)man, -24);
    return s * ldexp((double)(1024 + man), exp - 25);
}

uint16_t cf_bf16_bits(double v)
{
    double r = cf_round(BP_BF16, v);
    if (isnan(r))
        return signbit(r) ? 0xffc0u : 0x7fc0u;
    float f = (float)r; /* exact: r is a bf16 value */
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

double cf_bf16_value(uint16_t b)
{
    double s = (b & 0x8000u) ? -1.0 : 1.0;
    int exp = (b >> 7) & 0xff, man = b & 0x7f;
    if (exp == 0xff)
        return man ? copysign(NAN, s) : s * INFINITY;
    if (exp == 0)
        return s * ldexp((double)man, -133);
    return s * ldexp((double)(128 + man), exp - 134);
}

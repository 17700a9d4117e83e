/* backplane: element types, and the host-side conversions every backend and
 * user shares (header-only, so plugins need not link libbackplane). */
#ifndef BACKPLANE_DTYPE_H
#define BACKPLANE_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Shared by host code and CUDA kernels (the cuda plugin compiles these for
 * the device too, so every backend rounds and draws identically). */
#ifndef BP_HOST_DEVICE
#if defined(__CUDACC__)
#define BP_HOST_DEVICE __host__ __device__
#else
#define BP_HOST_DEVICE
#endif
#endif

/* The most dimensions a tensor may have. Rank 0 (a scalar) is allowed. */
#define BP_MAX_RANK 8

/* Values are part of the ABI: only appended. i16, u16 and u32 arrived in
 * plugin ABI 1.10 and u64 in 1.11: the core never hands a dtype to a plugin
 * built before it arrived. */
#define BP_DTYPE_LIST(X)             \
    X(BP_BOOL, 0, "bool", 1)         \
    X(BP_U8, 1, "u8", 1)             \
    X(BP_I8, 2, "i8", 1)             \
    X(BP_I32, 3, "i32", 4)           \
    X(BP_I64, 4, "i64", 8)           \
    X(BP_F16, 5, "f16", 2)           \
    X(BP_BF16, 6, "bf16", 2)         \
    X(BP_F32, 7, "f32", 4)           \
    X(BP_F64, 8, "f64", 8)           \
    X(BP_I16, 9, "i16", 2)           \
    X(BP_U16, 10, "u16", 2)          \
    X(BP_U32, 11, "u32", 4)          \
    X(BP_U64, 12, "u64", 8)

typedef enum bp_dtype {
#define BP__DTYPE_ENUM(name, value, str, size) name = value,
    BP_DTYPE_LIST(BP__DTYPE_ENUM)
#undef BP__DTYPE_ENUM
} bp_dtype;

/* The number of dtypes, counted from the list itself. */
#define BP__DTYPE_ONE(name, value, str, size) +1
#define BP_DTYPE_COUNT (0 BP_DTYPE_LIST(BP__DTYPE_ONE))

BP_HOST_DEVICE static inline bool bp_dtype_valid(int dt) { return dt >= 0 && dt < BP_DTYPE_COUNT; }

/* Bytes per element; 0 for an invalid value. */
BP_HOST_DEVICE static inline size_t bp_dtype_size(bp_dtype dt)
{
    switch (dt) {
#define BP__DTYPE_SIZE(name, value, str, size) case name: return size;
        BP_DTYPE_LIST(BP__DTYPE_SIZE)
#undef BP__DTYPE_SIZE
    }
    return 0;
}

/* "f32" etc.; "?" for an invalid value. */
BP_HOST_DEVICE static inline const char *bp_dtype_name(bp_dtype dt)
{
    switch (dt) {
#define BP__DTYPE_NAME(name, value, str, size) case name: return str;
        BP_DTYPE_LIST(BP__DTYPE_NAME)
#undef BP__DTYPE_NAME
    }
    return "?";
}

BP_HOST_DEVICE static inline bool bp_dtype_is_float(bp_dtype dt)
{
    return dt == BP_F16 || dt == BP_BF16 || dt == BP_F32 || dt == BP_F64;
}
BP_HOST_DEVICE static inline bool bp_dtype_is_int(bp_dtype dt)
{
    return dt == BP_U8 || dt == BP_I8 || dt == BP_I32 || dt == BP_I64 || dt == BP_I16 ||
           dt == BP_U16 || dt == BP_U32 || dt == BP_U64;
}
BP_HOST_DEVICE static inline bool bp_dtype_is_signed(bp_dtype dt)
{
    return dt == BP_I8 || dt == BP_I16 || dt == BP_I32 || dt == BP_I64 || bp_dtype_is_float(dt);
}

/* ---- f16 / bf16 <-> f32, round to nearest even, NaN stays NaN ---------- */

BP_HOST_DEVICE static inline uint32_t bp__f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
BP_HOST_DEVICE static inline float bp__bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

BP_HOST_DEVICE static inline float bp_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) /* inf or NaN */
        return bp__bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0)
            return bp__bits_f32(sign);
        /* subnormal: value = man * 2^-24, exact in f32 */
        float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return bp__bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

BP_HOST_DEVICE static inline uint16_t bp_f32_to_f16(float f)
{
    uint32_t u = bp__f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t exp = (u >> 23) & 0xffu, man = u & 0x7fffffu;
    if (exp == 0xff) /* inf or NaN (keep it a quiet NaN) */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 0x1f)
        return (uint16_t)(sign | 0x7c00u); /* overflow to infinity */
    if (e <= 0) {
        /* subnormal or zero in f16 */
        if (e < -10)
            return sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
        if (rem > mid || (rem == mid && (half & 1u)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u)))
        half++; /* may carry into the exponent, up to infinity: correct */
    return (uint16_t)(sign | half);
}

BP_HOST_DEVICE static inline float bp_bf16_to_f32(uint16_t b) { return bp__bits_f32((uint32_t)b << 16); }

BP_HOST_DEVICE static inline uint16_t bp_f32_to_bf16(float f)
{
    uint32_t u = bp__f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* ---- f64 -> f16 / bf16, rounded once ------------------------------------ */

/* f64 -> f32 rounding to odd: truncate, then set the last bit if anything was
 * lost. Rounding that to a format with at least two fewer significand bits
 * (f16: 11, bf16: 8, f32: 24) gives the correctly rounded result, which
 * going through a plain (float) cast does not (it rounds twice). */
BP_HOST_DEVICE static inline float bp__f64_to_f32_odd(double d)
{
    float f = (float)d;
    if ((double)f == d || d != d)
        return f;
    uint32_t u = bp__f32_bits(f);
    if (fabs((double)f) > fabs(d))
        u -= 1u; /* step the magnitude back toward zero: truncation */
    return bp__bits_f32(u | 1u);
}

BP_HOST_DEVICE static inline uint16_t bp_f64_to_f16(double d)
{
    return bp_f32_to_f16(bp__f64_to_f32_odd(d));
}

BP_HOST_DEVICE static inline uint16_t bp_f64_to_bf16(double d)
{
    return bp_f32_to_bf16(bp__f64_to_f32_odd(d));
}

/* ---- int64 -> f16 / bf16, rounded once from the integer ------------------ */

/* int64 -> f32 rounding to odd, exactly from the integer: keep the 24 leading
 * bits and set the last one if any bit below them was lost. (double)v would
 * round first when |v| > 2^53, and a second rounding to f16/bf16 could then
 * land on a tie the integer is not on. */
BP_HOST_DEVICE static inline float bp__i64_to_f32_odd(int64_t v)
{
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint64_t t = u;
    int shift = 0;
    while (t >= ((uint64_t)1 << 24)) {
        t >>= 1;
        shift++;
    }
    if (shift > 0 && (u & ((((uint64_t)1) << shift) - 1u)) != 0)
        t |= 1u; /* sticky: something was lost */
    /* t < 2^24 and the scale is a power of two <= 2^40: both exact, and so
     * is their product */
    float f = (float)t * (float)((uint64_t)1 << shift);
    return v < 0 ? -f : f;
}

BP_HOST_DEVICE static inline uint16_t bp_i64_to_f16(int64_t v)
{
    return bp_f32_to_f16(bp__i64_to_f32_odd(v));
}

BP_HOST_DEVICE static inline uint16_t bp_i64_to_bf16(int64_t v)
{
    return bp_f32_to_bf16(bp__i64_to_f32_odd(v));
}

#ifdef __cplusplus
}
#endif
#endif

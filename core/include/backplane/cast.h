/* backplane: the cast rules, stated once (header-only; host C and CUDA
 * device code), for the core, every backend and plugin authors:
 *
 *   - float -> integer truncates toward zero; NaN gives 0; values outside
 *     the integer's range saturate to its minimum or maximum;
 *   - anything -> bool is (x != 0), so NaN is true; bool -> anything is 0/1;
 *   - integer -> integer saturates (bp_elem_cast_int);
 *   - integer -> float and float -> narrower float round once, to nearest
 *     even; overflow gives infinity (dtype.h's bp_f64_to_f16 and friends).
 *
 * u64 is the one dtype whose values do not all fit in an int64:
 * bp_elem_load_i64 and bp_elem_store_i64 move its bits unchanged (a value
 * above INT64_MAX reads as a negative int64), which is what wrapping
 * arithmetic and copies need; bp_elem_cast_int and bp_elem_load_f64 use its
 * value.
 *
 * Every function is defined for every input: none reaches C undefined
 * behaviour. The loads and stores take a pointer to one element of the dtype;
 * on the host it needs no alignment, in CUDA device code it must be aligned
 * to the element's size (as every element of a bp_view is). */
#ifndef BACKPLANE_CAST_H
#define BACKPLANE_CAST_H

#include <stdint.h>
#include <string.h>

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDA_ARCH__)
#define BP__ELEM_GET(T, dst, p) ((dst) = *(const T *)(p))
#define BP__ELEM_PUT(T, p, v) (*(T *)(p) = (v))
#else
#define BP__ELEM_GET(T, dst, p) memcpy(&(dst), (p), sizeof(T))
#define BP__ELEM_PUT(T, p, v)                                                          \
    do {                                                                               \
        T bp__put_ = (v);                                                              \
        memcpy((p), &bp__put_, sizeof(T));                                             \
    } while (0)
#endif

/* v truncated toward zero and saturated to [ilo, ihi]; lo and hi_plus_1 are
 * ilo and ihi + 1 as exact doubles, so the comparisons decide before any
 * conversion happens. NaN gives 0. */
BP_HOST_DEVICE static inline int64_t bp_sat_f64(double v, double lo, double hi_plus_1, int64_t ilo,
                                                int64_t ihi)
{
    if (v != v)
        return 0;
    if (v >= hi_plus_1)
        return ihi;
    if (v <= lo)
        return ilo;
    return (int64_t)v;
}

BP_HOST_DEVICE static inline int64_t bp_clamp_i64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* One element as a double: exact for every dtype but i64 beyond 2^53. */
BP_HOST_DEVICE static inline double bp_elem_load_f64(bp_dtype dt, const void *p)
{
    switch (dt) {
    case BP_BOOL: { uint8_t v; BP__ELEM_GET(uint8_t, v, p); return v != 0 ? 1.0 : 0.0; }
    case BP_U8: { uint8_t v; BP__ELEM_GET(uint8_t, v, p); return (double)v; }
    case BP_I8: { int8_t v; BP__ELEM_GET(int8_t, v, p); return (double)v; }
    case BP_I32: { int32_t v; BP__ELEM_GET(int32_t, v, p); return (double)v; }
    case BP_I64: { int64_t v; BP__ELEM_GET(int64_t, v, p); return (double)v; }
    case BP_I16: { int16_t v; BP__ELEM_GET(int16_t, v, p); return (double)v; }
    case BP_U16: { uint16_t v; BP__ELEM_GET(uint16_t, v, p); return (double)v; }
    case BP_U32: { uint32_t v; BP__ELEM_GET(uint32_t, v, p); return (double)v; }
    case BP_U64: { uint64_t v; BP__ELEM_GET(uint64_t, v, p); return (double)v; }
    case BP_F16: { uint16_t v; BP__ELEM_GET(uint16_t, v, p); return (double)bp_f16_to_f32(v); }
    case BP_BF16: { uint16_t v; BP__ELEM_GET(uint16_t, v, p); return (double)bp_bf16_to_f32(v); }
    case BP_F32: { float v; BP__ELEM_GET(float, v, p); return (double)v; }
    case BP_F64: { double v; BP__ELEM_GET(double, v, p); return v; }
    }
    return 0.0;
}

/* v truncated toward zero and saturated to [0, UINT64_MAX]; NaN gives 0. */
BP_HOST_DEVICE static inline uint64_t bp_sat_f64_u64(double v)
{
    if (v != v || v <= 0.0)
        return 0;
    if (v >= 18446744073709551616.0)
        return UINT64_MAX;
    return (uint64_t)v;
}

/* Store v into one element of dt with the cast rules. */
BP_HOST_DEVICE static inline void bp_elem_store_f64(bp_dtype dt, void *p, double v)
{
    switch (dt) {
    case BP_BOOL: BP__ELEM_PUT(uint8_t, p, (uint8_t)(v != 0.0)); return; /* NaN != 0: true */
    case BP_U8: BP__ELEM_PUT(uint8_t, p, (uint8_t)bp_sat_f64(v, 0.0, 256.0, 0, 255)); return;
    case BP_I8: BP__ELEM_PUT(int8_t, p, (int8_t)bp_sat_f64(v, -128.0, 128.0, -128, 127)); return;
    case BP_I32:
        BP__ELEM_PUT(int32_t, p,
                     (int32_t)bp_sat_f64(v, -2147483648.0, 2147483648.0, INT32_MIN, INT32_MAX));
        return;
    case BP_I64:
        BP__ELEM_PUT(int64_t, p,
                     bp_sat_f64(v, -9223372036854775808.0, 9223372036854775808.0, INT64_MIN,
                                INT64_MAX));
        return;
    case BP_I16:
        BP__ELEM_PUT(int16_t, p, (int16_t)bp_sat_f64(v, -32768.0, 32768.0, -32768, 32767));
        return;
    case BP_U16: BP__ELEM_PUT(uint16_t, p, (uint16_t)bp_sat_f64(v, 0.0, 65536.0, 0, 65535)); return;
    case BP_U32:
        BP__ELEM_PUT(uint32_t, p, (uint32_t)bp_sat_f64(v, 0.0, 4294967296.0, 0, UINT32_MAX));
        return;
    case BP_U64: BP__ELEM_PUT(uint64_t, p, bp_sat_f64_u64(v)); return;
    case BP_F16: BP__ELEM_PUT(uint16_t, p, bp_f64_to_f16(v)); return; /* rounded once */
    case BP_BF16: BP__ELEM_PUT(uint16_t, p, bp_f64_to_bf16(v)); return;
    case BP_F32: BP__ELEM_PUT(float, p, (float)v); return;
    case BP_F64: BP__ELEM_PUT(double, p, v); return;
    }
}

/* One element as an int64: exact for integers and bool (u64: its bits);
 * floats by the float -> integer rule. */
BP_HOST_DEVICE static inline int64_t bp_elem_load_i64(bp_dtype dt, const void *p)
{
    switch (dt) {
    case BP_BOOL: { uint8_t v; BP__ELEM_GET(uint8_t, v, p); return v != 0; }
    case BP_U8: { uint8_t v; BP__ELEM_GET(uint8_t, v, p); return v; }
    case BP_I8: { int8_t v; BP__ELEM_GET(int8_t, v, p); return v; }
    case BP_I32: { int32_t v; BP__ELEM_GET(int32_t, v, p); return v; }
    case BP_I64: { int64_t v; BP__ELEM_GET(int64_t, v, p); return v; }
    case BP_I16: { int16_t v; BP__ELEM_GET(int16_t, v, p); return v; }
    case BP_U16: { uint16_t v; BP__ELEM_GET(uint16_t, v, p); return v; }
    case BP_U32: { uint32_t v; BP__ELEM_GET(uint32_t, v, p); return v; }
    case BP_U64: { uint64_t v; BP__ELEM_GET(uint64_t, v, p); return (int64_t)v; }
    case BP_F16: case BP_BF16: case BP_F32: case BP_F64:
        return bp_sat_f64(bp_elem_load_f64(dt, p), -9223372036854775808.0, 9223372036854775808.0,
                          INT64_MIN, INT64_MAX);
    }
    return 0;
}

/* Store v into one element of dt: integers saturate (u64 takes v's bits),
 * floats round once from the integer (never through double, which could
 * round twice). */
BP_HOST_DEVICE static inline void bp_elem_store_i64(bp_dtype dt, void *p, int64_t v)
{
    switch (dt) {
    case BP_BOOL: BP__ELEM_PUT(uint8_t, p, (uint8_t)(v != 0)); return;
    case BP_U8: BP__ELEM_PUT(uint8_t, p, (uint8_t)bp_clamp_i64(v, 0, 255)); return;
    case BP_I8: BP__ELEM_PUT(int8_t, p, (int8_t)bp_clamp_i64(v, -128, 127)); return;
    case BP_I32: BP__ELEM_PUT(int32_t, p, (int32_t)bp_clamp_i64(v, INT32_MIN, INT32_MAX)); return;
    case BP_I64: BP__ELEM_PUT(int64_t, p, v); return;
    case BP_I16: BP__ELEM_PUT(int16_t, p, (int16_t)bp_clamp_i64(v, -32768, 32767)); return;
    case BP_U16: BP__ELEM_PUT(uint16_t, p, (uint16_t)bp_clamp_i64(v, 0, 65535)); return;
    case BP_U32: BP__ELEM_PUT(uint32_t, p, (uint32_t)bp_clamp_i64(v, 0, UINT32_MAX)); return;
    case BP_U64: BP__ELEM_PUT(uint64_t, p, (uint64_t)v); return;
    case BP_F16: BP__ELEM_PUT(uint16_t, p, bp_i64_to_f16(v)); return;
    case BP_BF16: BP__ELEM_PUT(uint16_t, p, bp_i64_to_bf16(v)); return;
    case BP_F32: BP__ELEM_PUT(float, p, (float)v); return; /* one rounding */
    case BP_F64: BP__ELEM_PUT(double, p, (double)v); return;
    }
}

/* Store the unsigned v into one element of a float dtype, rounded once. */
BP_HOST_DEVICE static inline void bp_elem_store_u64_float(bp_dtype dt, void *p, uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX) {
        bp_elem_store_i64(dt, p, (int64_t)v);
        return;
    }
    switch (dt) {
    case BP_F32: BP__ELEM_PUT(float, p, (float)v); return;  /* one rounding */
    case BP_F64: BP__ELEM_PUT(double, p, (double)v); return;
    case BP_F16: BP__ELEM_PUT(uint16_t, p, bp_i64_to_f16(INT64_MAX)); return; /* infinity */
    case BP_BF16: {
        /* half of v, its lost bit kept as a sticky bit (bf16 rounds 55 bits
         * above it), rounded once; doubling is then exact: one exponent up */
        uint16_t h = bp_i64_to_bf16((int64_t)((v >> 1) | (v & 1)));
        BP__ELEM_PUT(uint16_t, p, (uint16_t)(h + 0x80));
        return;
    }
    default: bp_elem_store_i64(dt, p, (int64_t)v); return;
    }
}

/* Cast one element between integer or bool dtypes: the value saturates to
 * the destination's range (u64 values above INT64_MAX included). */
BP_HOST_DEVICE static inline void bp_elem_cast_int(bp_dtype to, void *dst, bp_dtype from,
                                                   const void *src)
{
    int64_t v = bp_elem_load_i64(from, src);
    if (from == BP_U64 && v < 0) { /* a value above INT64_MAX */
        if (to == BP_U64 || bp_dtype_is_float(to)) {
            if (to == BP_U64)
                bp_elem_store_i64(to, dst, v); /* the same bits */
            else
                bp_elem_store_u64_float(to, dst, (uint64_t)v);
            return;
        }
        v = INT64_MAX; /* saturates every other integer, and is true as bool */
    } else if (to == BP_U64 && v < 0) {
        v = 0;
    }
    bp_elem_store_i64(to, dst, v);
}

#ifdef __cplusplus
}
#endif
#endif

/* The half floats' conversions for the reference kernels (cast.c,
 * unary.c and binary.c), branch-free so that the loops through them vectorise.
 * Each gives exactly the bits of the cast rules (backplane/cast.h, dtype.h);
 * tests/test_cast_paths.c checks every f16 and bf16 input and the rounding
 * edges of f32, f64 and the integers against them. GCC keeps the select in
 * f16_f32 a branch under trapping math: the files using these build with
 * -fno-trapping-math (CMakeLists.txt). */
#ifndef BPK_HALF_FLOATS_H
#define BPK_HALF_FLOATS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t f_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bits_f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* bp_f16_to_f32, with a NaN made quiet (as the rules' path through double
 * makes it) */
static inline float f16_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    uint32_t normal = sign | ((e + 112u) << 23) | (m << 13);
    uint32_t special = sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u);
    uint32_t sub = sign | f_bits((float)m * 5.9604644775390625e-8f); /* m * 2^-24, exact */
    return bits_f(e == 0x1fu ? special : e == 0 ? sub : normal);
}

/* bp_f32_to_f16: round to nearest even; subnormal halves by the 0.5f magic
 * (the float addition rounds m * 2^-24 to an integer, to nearest even). */
static inline uint16_t f32_f16(float f)
{
    uint32_t u = f_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    uint32_t special = a > 0x7f800000u ? 0x7e00u | ((a & 0x7fffffu) >> 13) : 0x7c00u;
    uint32_t sub = f_bits(bits_f(a) + 0.5f) - 0x3f000000u;
    uint32_t normal = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
    uint32_t h = a >= 0x47800000u ? special : a < 0x38800000u ? sub : normal;
    return (uint16_t)(sign | h);
}

/* the bits shifted into place, a NaN made quiet */
static inline float bf16_f32(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    return bits_f((u & 0x7fffffffu) > 0x7f800000u ? u | 0x400000u : u);
}

/* bp_f32_to_bf16 */
static inline uint16_t f32_bf16(float f)
{
    uint32_t u = f_bits(f);
    uint32_t nan = (u >> 16) | 0x40u, r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : r);
}

/* dtype.h's bp__f64_to_f32_odd: truncate, then set the last bit if inexact */
static inline float f64_f32_odd(double d)
{
    float f = (float)d;
    uint32_t u = f_bits(f);
    bool inexact = (double)f != d && d == d;
    u -= (uint32_t)(inexact && fabs((double)f) > fabs(d));
    return bits_f(u | (uint32_t)inexact);
}

static inline uint16_t f64_f16(double d) { return f32_f16(f64_f32_odd(d)); }
static inline uint16_t f64_bf16(double d) { return f32_bf16(f64_f32_odd(d)); }

#endif

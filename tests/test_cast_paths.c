/* The CPU kernels' typed cast loops (backends/kernels/cast.c: branch-free
 * conversions written for speed) give exactly the bits of the cast rules
 * (backplane/cast.h, the element-at-a-time path every backend can fall back
 * on): on every f16 and bf16 input, and on the f32, f64 and integer inputs
 * where a conversion can go wrong (each half's values, the midpoints between
 * them and their neighbours, subnormals, infinities, NaNs, the integer
 * limits) plus 300000 random bit patterns of each. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/cast.h>

#include "bpt.h"

/* ---- inputs ------------------------------------------------------------------- */

typedef struct inputs {
    unsigned char *bytes;
    size_t n, cap, size; /* elements, and the element size */
} inputs;

static void push(inputs *in, const void *elem)
{
    if (in->n == in->cap) {
        in->cap = in->cap ? in->cap * 2 : 1 << 16;
        in->bytes = realloc(in->bytes, in->cap * in->size);
        cr_assert_not_null(in->bytes);
    }
    memcpy(in->bytes + in->n * in->size, elem, in->size);
    in->n++;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void push_f32(inputs *in, float f) { push(in, &f); }
static void push_f64(inputs *in, double d) { push(in, &d); }

static float f32_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t bits_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static double f64_of(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static uint64_t bits64_of(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

/* Every value of a half type, as float: h(bits) for the 65536 patterns. */
static float half_value(bp_dtype half, uint16_t bits)
{
    return half == BP_F16 ? bp_f16_to_f32(bits) : bp_bf16_to_f32(bits);
}

/* f32 inputs: each half value of both half types, the midpoints between
 * neighbours (exact in f32), each with its f32 neighbours out to 2 ulps;
 * the f32 edges; random patterns. */
static inputs f32_inputs(void)
{
    inputs in = {.size = 4};
    for (int h = 0; h < 2; h++) {
        bp_dtype half = h ? BP_BF16 : BP_F16;
        for (uint32_t b = 0; b < 0xffffu; b++) {
            float a = half_value(half, (uint16_t)b), c = half_value(half, (uint16_t)(b + 1));
            float pts[2] = {a, isfinite(a) && isfinite(c) && (b & 0x7fffu) != 0x7fffu
                                   ? (float)(((double)a + (double)c) / 2) : a};
            for (int p = 0; p < 2; p++) {
                if (isnan(pts[p]))
                    continue;
                uint32_t u = bits_of(pts[p]);
                for (int32_t d = -2; d <= 2; d++)
                    push_f32(&in, f32_of(u + (uint32_t)d));
            }
        }
    }
    const float edges[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -1e-45f,
                           1.17549435e-38f, 65504.0f, 65519.99f, 65520.0f, 3.3895314e38f,
                           2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f,
                           9.2233715e18f, 9.223372e18f, -9.223372e18f, -9.2233725e18f,
                           0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 16777217.0f};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++)
        push_f32(&in, edges[k]);
    const uint32_t nans[] = {0x7f800001u, 0xff800001u, 0x7fc00001u, 0x7fffffffu, 0xffffe000u,
                             0x7f802000u, 0x7fbfffffu};
    for (size_t k = 0; k < sizeof nans / sizeof nans[0]; k++)
        push_f32(&in, f32_of(nans[k]));
    uint64_t s = 0x5eed;
    for (int k = 0; k < 300000; k++)
        push_f32(&in, f32_of((uint32_t)splitmix(&s)));
    return in;
}

/* f64 inputs: the f32 inputs as doubles, each with its double neighbours out
 * to 2 ulps (where narrowing through f32 could round twice), the integer
 * boundaries, random patterns. */
static inputs f64_inputs(const inputs *f32)
{
    inputs in = {.size = 8};
    for (size_t k = 0; k < f32->n; k += 3) {
        float f;
        memcpy(&f, f32->bytes + k * 4, 4);
        uint64_t u = bits64_of((double)f);
        for (int32_t d = -2; d <= 2; d++)
            push_f64(&in, isnan(f) ? (double)f : f64_of(u + (uint64_t)(int64_t)d));
    }
    const double edges[] = {9223372036854775808.0, -9223372036854775808.0,
                            9223372036854774784.0, -9223372036854777856.0, 2147483647.5,
                            2147483648.0, -2147483648.5, -2147483649.0, 4503599627370497.0,
                            5e-324, -5e-324, 1.7976931348623157e308};
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++)
        push_f64(&in, edges[k]);
    uint64_t s = 0xf64;
    for (int k = 0; k < 300000; k++)
        push_f64(&in, f64_of(splitmix(&s)));
    return in;
}

/* Integer inputs: around every power of two (where float spacing changes),
 * the half types' overflow (65504 .. 65520), the limits, random values. */
static inputs int_inputs(bp_dtype dt)
{
    inputs in = {.size = bp_dtype_size(dt)};
    int64_t lo = dt == BP_I32 ? INT32_MIN : INT64_MIN, hi = dt == BP_I32 ? INT32_MAX : INT64_MAX;
    int bits = dt == BP_I32 ? 31 : 63;
    for (int e = 0; e < bits; e++)
        for (int64_t d = -3; d <= 3; d++)
            for (int sg = -1; sg <= 1; sg += 2) {
                int64_t v = sg * (((int64_t)1 << e) + d);
                if (v >= lo && v <= hi) {
                    int32_t v32 = (int32_t)v;
                    push(&in, dt == BP_I32 ? (const void *)&v32 : (const void *)&v);
                }
            }
    for (int64_t v = 65500; v <= 65530; v++) {
        int64_t pm[2] = {v, -v};
        for (int k = 0; k < 2; k++) {
            int32_t v32 = (int32_t)pm[k];
            push(&in, dt == BP_I32 ? (const void *)&v32 : (const void *)&pm[k]);
        }
    }
    int64_t ends[] = {lo, hi, lo + 1, hi - 1, 0};
    for (size_t k = 0; k < 5; k++) {
        int32_t v32 = (int32_t)ends[k];
        push(&in, dt == BP_I32 ? (const void *)&v32 : (const void *)&ends[k]);
    }
    uint64_t s = 0x1a7;
    for (int k = 0; k < 300000; k++) {
        uint64_t r = splitmix(&s);
        int64_t v = (int64_t)(r >> (r & 63)); /* every magnitude */
        if (r & 64)
            v = -v;
        int32_t v32 = (int32_t)v;
        push(&in, dt == BP_I32 ? (const void *)&v32 : (const void *)&v);
    }
    return in;
}

/* ---- the comparison ------------------------------------------------------------- */

/* cast.h's answer for one element: integer and bool sources through int64,
 * float sources through double (the fallback path of every CPU backend). */
static void rule(bp_dtype src, const void *x, bp_dtype dst, void *y)
{
    if (bp_dtype_is_float(src))
        bp_elem_store_f64(dst, y, bp_elem_load_f64(src, x));
    else
        bp_elem_store_i64(dst, y, bp_elem_load_i64(src, x));
}

/* bp_cast of the inputs on be, element by element against rule(). */
static void expect_rule(bp_backend *be, bp_dtype src, bp_dtype dst, const inputs *in)
{
    size_t ds = bp_dtype_size(dst);
    bp_tensor *x = NULL, *y = NULL;
    BPT_OK(bp_tensor_from_host(be, src, 1, (int64_t[]){(int64_t)in->n}, in->bytes, &x));
    BPT_OK(bp_cast(x, dst, &y));
    unsigned char *got = malloc(in->n * ds), want[8];
    cr_assert_not_null(got);
    BPT_OK(bp_tensor_to_host(y, got, in->n * ds));
    size_t bad = 0;
    for (size_t k = 0; k < in->n; k++) {
        rule(src, in->bytes + k * in->size, dst, want);
        if (memcmp(got + k * ds, want, ds) != 0 && bad++ < 3) {
            uint64_t xb = 0, gb = 0, wb = 0;
            memcpy(&xb, in->bytes + k * in->size, in->size);
            memcpy(&gb, got + k * ds, ds);
            memcpy(&wb, want, ds);
            cr_log_error("%s: %s -> %s of bits 0x%llx gave 0x%llx, the rule says 0x%llx",
                         bp_backend_name(be), bp_dtype_name(src), bp_dtype_name(dst),
                         (unsigned long long)xb, (unsigned long long)gb,
                         (unsigned long long)wb);
        }
    }
    cr_expect_eq(bad, 0, "%s: %s -> %s: %zu of %zu elements differ from cast.h's rule",
                 bp_backend_name(be), bp_dtype_name(src), bp_dtype_name(dst), bad, in->n);
    free(got);
    bp_tensor_release(x);
    bp_tensor_release(y);
}

static const bp_dtype TARGETS[] = {BP_F64, BP_F32, BP_F16, BP_BF16, BP_I64, BP_I32,
                                   BP_I8, BP_U8, BP_BOOL};

static void every_target(bp_dtype src, const inputs *in)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (size_t t = 0; t < sizeof TARGETS / sizeof TARGETS[0]; t++)
            if (TARGETS[t] != src)
                expect_rule(be, src, TARGETS[t], in);
    }
    bp_context_destroy(ctx);
}

Test(cast_paths, every_f16_and_bf16_input_casts_as_the_rules_say)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    for (int h = 0; h < 2; h++) {
        inputs in = {.size = 2};
        for (uint32_t b = 0; b <= 0xffffu; b++) {
            uint16_t v = (uint16_t)b;
            push(&in, &v);
        }
        every_target(h ? BP_BF16 : BP_F16, &in);
        free(in.bytes);
    }
}

Test(cast_paths, f32_and_f64_inputs_at_every_rounding_edge_cast_as_the_rules_say)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    inputs f32 = f32_inputs(), f64 = f64_inputs(&f32);
    every_target(BP_F32, &f32);
    every_target(BP_F64, &f64);
    free(f32.bytes);
    free(f64.bytes);
}

Test(cast_paths, integer_inputs_at_every_power_of_two_cast_as_the_rules_say)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    for (int w = 0; w < 2; w++) {
        inputs in = int_inputs(w ? BP_I64 : BP_I32);
        every_target(w ? BP_I64 : BP_I32, &in);
        free(in.bytes);
    }
}

Test(cast_paths, every_bool_u8_and_i8_byte_casts_as_the_rules_say)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    static const bp_dtype bytes[] = {BP_BOOL, BP_U8, BP_I8};
    for (size_t d = 0; d < sizeof bytes / sizeof bytes[0]; d++) {
        inputs in = {.size = 1};
        for (int b = 0; b < 256; b++) { /* a bool's bytes above 1 are true too */
            uint8_t v = (uint8_t)b;
            push(&in, &v);
        }
        every_target(bytes[d], &in);
        free(in.bytes);
    }
}

/* backplane conform: host arrays and the cast rules of ops.h / DESIGN.md,
 * written out in plain C so the oracle never uses the library's (or a
 * backend's) conversions: NaN -> 0 for integers (true for bool), float -> int
 * truncates toward zero, out-of-range values saturate, float -> bool is
 * x != 0, floats round to nearest even (overflow gives infinity). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
        a->f[k] = cf_round_i64(a->dt, v); /* exact from the integer */
    else
        a->i[k] = cf_int_of_i64(a->dt, v);
}

/* ---- bytes <-> values ---------------------------------------------------- */

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
        case BP_F16: { uint16_t x = cf_f16_bits(a->f[k]); memcpy(p, &x, 2); p += 2; break; }
        case BP_BF16: { uint16_t x = cf_bf16_bits(a->f[k]); memcpy(p, &x, 2); p += 2; break; }
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
        case BP_F16: { uint16_t x; memcpy(&x, p, 2); a->f[k] = cf_f16_value(x); p += 2; break; }
        case BP_BF16: { uint16_t x; memcpy(&x, p, 2); a->f[k] = cf_bf16_value(x); p += 2; break; }
        case BP_F32: { float x; memcpy(&x, p, 4); a->f[k] = (double)x; p += 4; break; }
        case BP_F64: memcpy(&a->f[k], p, 8); p += 8; break;
        }
    }
}

/* Host arrays, and one element in and out of raw dtype bytes, by the cast
 * rules (cast_rules.c), never by the library's conversions. */
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "independent.h"

int64_t cf_numel(int32_t rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int32_t k = 0; k < rank; k++)
        n *= shape[k];
    return n;
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
    if (cf_is_float(dt))
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

bool cf_array_from_f64(cf_array *a, bp_dtype dt, int32_t rank, const int64_t *shape,
                       const double *v)
{
    if (!cf_array_init(a, dt, rank, shape))
        return false;
    for (int64_t k = 0; v && k < a->n; k++) {
        if (a->f)
            a->f[k] = cf_round(dt, v[k]);
        else
            a->i[k] = cf_int_of_f64(dt, v[k]);
    }
    return true;
}

bool cf_array_from_i64(cf_array *a, bp_dtype dt, int32_t rank, const int64_t *shape,
                       const int64_t *v)
{
    if (!cf_array_init(a, dt, rank, shape))
        return false;
    for (int64_t k = 0; v && k < a->n; k++)
        cf_set_i(a, k, v[k]);
    return true;
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

/* ---- one element <-> raw bytes --------------------------------------------- */

void cf_store_f64(bp_dtype dt, void *base, int64_t i, double v)
{
    char *p = (char *)base + (size_t)i * cf_dtype_size(dt);
    switch (dt) {
    case BP_BOOL: case BP_U8: { uint8_t x = (uint8_t)cf_int_of_f64(dt, v); memcpy(p, &x, 1); break; }
    case BP_I8: { int8_t x = (int8_t)cf_int_of_f64(dt, v); memcpy(p, &x, 1); break; }
    case BP_I32: { int32_t x = (int32_t)cf_int_of_f64(dt, v); memcpy(p, &x, 4); break; }
    case BP_I16: { int16_t x = (int16_t)cf_int_of_f64(dt, v); memcpy(p, &x, 2); break; }
    case BP_U16: { uint16_t x = (uint16_t)cf_int_of_f64(dt, v); memcpy(p, &x, 2); break; }
    case BP_U32: { uint32_t x = (uint32_t)cf_int_of_f64(dt, v); memcpy(p, &x, 4); break; }
    case BP_I64: case BP_U64: { int64_t x = cf_int_of_f64(dt, v); memcpy(p, &x, 8); break; }
    case BP_F16: { uint16_t x = cf_f16_bits(v); memcpy(p, &x, 2); break; }
    case BP_BF16: { uint16_t x = cf_bf16_bits(v); memcpy(p, &x, 2); break; }
    case BP_F32: { float x = (float)cf_round(BP_F32, v); memcpy(p, &x, 4); break; }
    case BP_F64: memcpy(p, &v, 8); break;
    default: break;
    }
}

void cf_store_i64(bp_dtype dt, void *base, int64_t i, int64_t v)
{
    if (cf_is_float(dt)) {
        cf_store_f64(dt, base, i, cf_round_i64(dt, v)); /* rounded once, from the integer */
        return;
    }
    char *p = (char *)base + (size_t)i * cf_dtype_size(dt);
    if (dt == BP_U64) { /* v is the u64's bits (a wrapped result stays wrapped) */
        memcpy(p, &v, 8);
        return;
    }
    int64_t c = cf_int_of_i64(dt, v);
    switch (dt) {
    case BP_BOOL: case BP_U8: { uint8_t x = (uint8_t)c; memcpy(p, &x, 1); break; }
    case BP_I8: { int8_t x = (int8_t)c; memcpy(p, &x, 1); break; }
    case BP_I32: { int32_t x = (int32_t)c; memcpy(p, &x, 4); break; }
    case BP_I16: { int16_t x = (int16_t)c; memcpy(p, &x, 2); break; }
    case BP_U16: { uint16_t x = (uint16_t)c; memcpy(p, &x, 2); break; }
    case BP_U32: { uint32_t x = (uint32_t)c; memcpy(p, &x, 4); break; }
    default: memcpy(p, &c, 8); break;
    }
}

int64_t cf_load_i64(bp_dtype dt, const void *base, int64_t i)
{
    const char *p = (const char *)base + (size_t)i * cf_dtype_size(dt);
    switch (dt) {
    case BP_BOOL: case BP_U8: { uint8_t x; memcpy(&x, p, 1); return x; }
    case BP_I8: { int8_t x; memcpy(&x, p, 1); return x; }
    case BP_I32: { int32_t x; memcpy(&x, p, 4); return x; }
    case BP_I64: { int64_t x; memcpy(&x, p, 8); return x; }
    case BP_I16: { int16_t x; memcpy(&x, p, 2); return x; }
    case BP_U16: { uint16_t x; memcpy(&x, p, 2); return x; }
    case BP_U32: { uint32_t x; memcpy(&x, p, 4); return x; }
    case BP_U64: { int64_t x; memcpy(&x, p, 8); return x; } /* its bits */
    default: return cf_int_of_f64(BP_I64, cf_load_f64(dt, base, i));
    }
}

double cf_load_f64(bp_dtype dt, const void *base, int64_t i)
{
    const char *p = (const char *)base + (size_t)i * cf_dtype_size(dt);
    switch (dt) {
    case BP_F16: { uint16_t x; memcpy(&x, p, 2); return cf_f16_value(x); }
    case BP_BF16: { uint16_t x; memcpy(&x, p, 2); return cf_bf16_value(x); }
    case BP_F32: { float x; memcpy(&x, p, 4); return (double)x; }
    case BP_F64: { double x; memcpy(&x, p, 8); return x; }
    case BP_U64: { uint64_t x; memcpy(&x, p, 8); return (double)x; }
    default: return (double)cf_load_i64(dt, base, i);
    }
}

void cf_encode(const cf_array *a, void *raw)
{
    for (int64_t k = 0; k < a->n; k++) {
        if (a->f)
            cf_store_f64(a->dt, raw, k, a->f[k]);
        else
            cf_store_i64(a->dt, raw, k, a->i[k]);
    }
}

void cf_decode(cf_array *a, const void *raw)
{
    for (int64_t k = 0; k < a->n; k++) {
        if (a->f)
            a->f[k] = cf_load_f64(a->dt, raw, k);
        else
            a->i[k] = cf_load_i64(a->dt, raw, k);
    }
}

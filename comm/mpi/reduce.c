/* Combining the ranks' values in rank order (reduce.h).
 *
 * The order is the contract: element i of a sum over four ranks is
 * ((x0 + x1) + x2) + x3 in double, rounded once, whatever order the parts
 * arrived in, so every run with the same number of ranks gives the same
 * bits on every rank. Work goes in blocks of BLOCK elements: a block of
 * accumulators stays in L1 while each part streams through it. */
#include "reduce.h"

#include <stdint.h>
#include <string.h>

enum { BLOCK = 512 };

/* ---- floats: double accumulators -------------------------------------------- */

static void load_f(bp_dtype dt, const void *p, size_t i0, size_t m, double *out)
{
    switch (dt) {
    case BP_F32: {
        const float *s = (const float *)p + i0;
        for (size_t j = 0; j < m; j++)
            out[j] = (double)s[j];
        return;
    }
    case BP_F64:
        memcpy(out, (const double *)p + i0, m * sizeof *out);
        return;
    case BP_F16: {
        const uint16_t *s = (const uint16_t *)p + i0;
        for (size_t j = 0; j < m; j++)
            out[j] = (double)bp_f16_to_f32(s[j]);
        return;
    }
    case BP_BF16: {
        const uint16_t *s = (const uint16_t *)p + i0;
        for (size_t j = 0; j < m; j++)
            out[j] = (double)bp_bf16_to_f32(s[j]);
        return;
    }
    default:
        return;
    }
}

static void store_f(bp_dtype dt, void *p, size_t i0, size_t m, const double *in)
{
    switch (dt) {
    case BP_F32: {
        float *d = (float *)p + i0;
        for (size_t j = 0; j < m; j++)
            d[j] = (float)in[j];
        return;
    }
    case BP_F64:
        memcpy((double *)p + i0, in, m * sizeof *in);
        return;
    case BP_F16: {
        uint16_t *d = (uint16_t *)p + i0;
        for (size_t j = 0; j < m; j++)
            d[j] = bp_f64_to_f16(in[j]);
        return;
    }
    case BP_BF16: {
        uint16_t *d = (uint16_t *)p + i0;
        for (size_t j = 0; j < m; j++)
            d[j] = bp_f64_to_bf16(in[j]);
        return;
    }
    default:
        return;
    }
}

static void combine_f(bp_reduce_op op, double *acc, const double *v, size_t m)
{
    switch (op) {
    case BP_REDUCE_SUM:
    case BP_REDUCE_AVG:
        for (size_t j = 0; j < m; j++)
            acc[j] += v[j];
        return;
    case BP_REDUCE_PROD:
        for (size_t j = 0; j < m; j++)
            acc[j] *= v[j];
        return;
    case BP_REDUCE_MAX:
        for (size_t j = 0; j < m; j++)
            acc[j] = acc[j] != acc[j] ? acc[j] : (v[j] != v[j] || v[j] > acc[j]) ? v[j] : acc[j];
        return;
    case BP_REDUCE_MIN:
        for (size_t j = 0; j < m; j++)
            acc[j] = acc[j] != acc[j] ? acc[j] : (v[j] != v[j] || v[j] < acc[j]) ? v[j] : acc[j];
        return;
    }
}

static void reduce_float(bp_dtype dt, bp_reduce_op op, const void *const *parts, int n, void *dst,
                         size_t count)
{
    double acc[BLOCK], v[BLOCK];
    for (size_t i0 = 0; i0 < count; i0 += BLOCK) {
        size_t m = count - i0 < BLOCK ? count - i0 : BLOCK;
        load_f(dt, parts[0], i0, m, acc);
        for (int k = 1; k < n; k++) {
            load_f(dt, parts[k], i0, m, v);
            combine_f(op, acc, v, m);
        }
        if (op == BP_REDUCE_AVG)
            for (size_t j = 0; j < m; j++)
                acc[j] /= (double)n;
        store_f(dt, dst, i0, m, acc);
    }
}

/* ---- integers: 64-bit accumulators, wrapping ---------------------------------- */

static void load_i(bp_dtype dt, const void *p, size_t i0, size_t m, int64_t *out)
{
    switch (dt) {
    case BP_U8: {
        const uint8_t *s = (const uint8_t *)p + i0;
        for (size_t j = 0; j < m; j++)
            out[j] = s[j];
        return;
    }
    case BP_I8: {
        const int8_t *s = (const int8_t *)p + i0;
        for (size_t j = 0; j < m; j++)
            out[j] = s[j];
        return;
    }
    case BP_I32: {
        const int32_t *s = (const int32_t *)p + i0;
        for (size_t j = 0; j < m; j++)
            out[j] = s[j];
        return;
    }
    case BP_I64:
        memcpy(out, (const int64_t *)p + i0, m * sizeof *out);
        return;
    default:
        return;
    }
}

/* The low bits of each accumulator: wrapping, as the library's integer
 * arithmetic does (never a signed overflow in C). */
static void store_i(bp_dtype dt, void *p, size_t i0, size_t m, const int64_t *in)
{
    switch (dt) {
    case BP_U8:
    case BP_I8: {
        uint8_t *d = (uint8_t *)p + i0;
        for (size_t j = 0; j < m; j++)
            d[j] = (uint8_t)(uint64_t)in[j];
        return;
    }
    case BP_I32: {
        uint32_t *d = (uint32_t *)p + i0;
        for (size_t j = 0; j < m; j++)
            d[j] = (uint32_t)(uint64_t)in[j];
        return;
    }
    case BP_I64:
        memcpy((int64_t *)p + i0, in, m * sizeof *in);
        return;
    default:
        return;
    }
}

static void combine_i(bp_reduce_op op, int64_t *acc, const int64_t *v, size_t m)
{
    switch (op) {
    case BP_REDUCE_SUM:
    case BP_REDUCE_AVG: /* refused for integers by the core */
        for (size_t j = 0; j < m; j++)
            acc[j] = (int64_t)((uint64_t)acc[j] + (uint64_t)v[j]);
        return;
    case BP_REDUCE_PROD:
        for (size_t j = 0; j < m; j++)
            acc[j] = (int64_t)((uint64_t)acc[j] * (uint64_t)v[j]);
        return;
    case BP_REDUCE_MAX:
        for (size_t j = 0; j < m; j++)
            acc[j] = v[j] > acc[j] ? v[j] : acc[j];
        return;
    case BP_REDUCE_MIN:
        for (size_t j = 0; j < m; j++)
            acc[j] = v[j] < acc[j] ? v[j] : acc[j];
        return;
    }
}

static void reduce_int(bp_dtype dt, bp_reduce_op op, const void *const *parts, int n, void *dst,
                       size_t count)
{
    int64_t acc[BLOCK], v[BLOCK];
    for (size_t i0 = 0; i0 < count; i0 += BLOCK) {
        size_t m = count - i0 < BLOCK ? count - i0 : BLOCK;
        load_i(dt, parts[0], i0, m, acc);
        for (int k = 1; k < n; k++) {
            load_i(dt, parts[k], i0, m, v);
            combine_i(op, acc, v, m);
        }
        store_i(dt, dst, i0, m, acc);
    }
}

void reduce_in_rank_order(bp_dtype dt, bp_reduce_op op, const void *const *parts, int n,
                          void *dst, size_t count)
{
    if (bp_dtype_is_float(dt))
        reduce_float(dt, op, parts, n, dst, count);
    else
        reduce_int(dt, op, parts, n, dst, count);
}

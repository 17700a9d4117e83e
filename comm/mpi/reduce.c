/* Combining the ranks' values in rank order (reduce.h).
 *
 * The order is the contract: element i of a sum over four ranks is
 * ((x0 + x1) + x2) + x3 in double, rounded once, whatever order the parts
 * arrived in, so every run with the same number of ranks gives the same
 * bits on every rank. Work goes in blocks of BLOCK elements: a block of
 * accumulators stays in L1 while each part streams through it, converted
 * and combined in one pass. The loops are compiled twice, for AVX2 and for
 * the baseline, and the machine picks at load time (target_clones): the
 * arithmetic, and so the bits, are the same in both. */
#include "reduce.h"

#include <stdint.h>
#include <string.h>

enum { BLOCK = 512 };

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define REDUCE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define REDUCE_CLONES
#endif

/* ---- floats: double accumulators -------------------------------------------- */

static inline double f16_at(const uint16_t *p, size_t j) { return (double)bp_f16_to_f32(p[j]); }
static inline double bf16_at(const uint16_t *p, size_t j) { return (double)bp_bf16_to_f32(p[j]); }

#define MAX_F(a, v) ((a) != (a) ? (a) : ((v) != (v) || (v) > (a)) ? (v) : (a))
#define MIN_F(a, v) ((a) != (a) ? (a) : ((v) != (v) || (v) < (a)) ? (v) : (a))

/* acc[j] = combine(acc[j], element j of the part), for one source type. */
#define FOLD_F(LOAD)                                                  \
    switch (op) {                                                     \
    case BP_REDUCE_SUM:                                               \
    case BP_REDUCE_AVG:                                               \
        for (size_t j = 0; j < m; j++)                                \
            acc[j] += LOAD;                                           \
        return;                                                       \
    case BP_REDUCE_PROD:                                              \
        for (size_t j = 0; j < m; j++)                                \
            acc[j] *= LOAD;                                           \
        return;                                                       \
    case BP_REDUCE_MAX:                                               \
        for (size_t j = 0; j < m; j++) {                              \
            double v_ = LOAD;                                         \
            acc[j] = MAX_F(acc[j], v_);                               \
        }                                                             \
        return;                                                       \
    case BP_REDUCE_MIN:                                               \
        for (size_t j = 0; j < m; j++) {                              \
            double v_ = LOAD;                                         \
            acc[j] = MIN_F(acc[j], v_);                               \
        }                                                             \
        return;                                                       \
    }

static inline void load_f(bp_dtype dt, const void *p, size_t m, double *acc)
{
    switch (dt) {
    case BP_F32: {
        const float *s = p;
        for (size_t j = 0; j < m; j++)
            acc[j] = (double)s[j];
        return;
    }
    case BP_F64:
        memcpy(acc, p, m * sizeof *acc);
        return;
    case BP_F16:
        for (size_t j = 0; j < m; j++)
            acc[j] = f16_at(p, j);
        return;
    case BP_BF16:
        for (size_t j = 0; j < m; j++)
            acc[j] = bf16_at(p, j);
        return;
    default:
        return;
    }
}

static inline void fold_f(bp_dtype dt, bp_reduce_op op, const void *p, size_t m, double *acc)
{
    switch (dt) {
    case BP_F32: {
        const float *s = p;
        FOLD_F((double)s[j])
        return;
    }
    case BP_F64: {
        const double *s = p;
        FOLD_F(s[j])
        return;
    }
    case BP_F16: {
        const uint16_t *s = p;
        FOLD_F(f16_at(s, j))
        return;
    }
    case BP_BF16: {
        const uint16_t *s = p;
        FOLD_F(bf16_at(s, j))
        return;
    }
    default:
        return;
    }
}

static inline void store_f(bp_dtype dt, void *p, size_t m, const double *acc)
{
    switch (dt) {
    case BP_F32: {
        float *d = p;
        for (size_t j = 0; j < m; j++)
            d[j] = (float)acc[j];
        return;
    }
    case BP_F64:
        memcpy(p, acc, m * sizeof *acc);
        return;
    case BP_F16: {
        uint16_t *d = p;
        for (size_t j = 0; j < m; j++)
            d[j] = bp_f64_to_f16(acc[j]);
        return;
    }
    case BP_BF16: {
        uint16_t *d = p;
        for (size_t j = 0; j < m; j++)
            d[j] = bp_f64_to_bf16(acc[j]);
        return;
    }
    default:
        return;
    }
}

REDUCE_CLONES
static void reduce_float(bp_dtype dt, bp_reduce_op op, const void *const *parts, int n, void *dst,
                         size_t count)
{
    const size_t es = bp_dtype_size(dt);
    double acc[BLOCK];
    for (size_t i0 = 0; i0 < count; i0 += BLOCK) {
        size_t m = count - i0 < BLOCK ? count - i0 : BLOCK;
        load_f(dt, (const char *)parts[0] + i0 * es, m, acc);
        for (int k = 1; k < n; k++)
            fold_f(dt, op, (const char *)parts[k] + i0 * es, m, acc);
        if (op == BP_REDUCE_AVG)
            for (size_t j = 0; j < m; j++)
                acc[j] /= (double)n;
        store_f(dt, (char *)dst + i0 * es, m, acc);
    }
}

/* ---- integers: 64-bit accumulators, wrapping ---------------------------------- */

/* acc[j] = combine(acc[j], element j), wrapping (never a signed overflow). */
#define FOLD_I(T)                                                                 \
    do {                                                                          \
        const T *s = p;                                                           \
        switch (op) {                                                             \
        case BP_REDUCE_SUM:                                                       \
        case BP_REDUCE_AVG: /* refused for integers by the core */                \
            for (size_t j = 0; j < m; j++)                                        \
                acc[j] = (int64_t)((uint64_t)acc[j] + (uint64_t)(int64_t)s[j]);   \
            return;                                                               \
        case BP_REDUCE_PROD:                                                      \
            for (size_t j = 0; j < m; j++)                                        \
                acc[j] = (int64_t)((uint64_t)acc[j] * (uint64_t)(int64_t)s[j]);   \
            return;                                                               \
        case BP_REDUCE_MAX:                                                       \
            for (size_t j = 0; j < m; j++)                                        \
                acc[j] = (int64_t)s[j] > acc[j] ? (int64_t)s[j] : acc[j];         \
            return;                                                               \
        case BP_REDUCE_MIN:                                                       \
            for (size_t j = 0; j < m; j++)                                        \
                acc[j] = (int64_t)s[j] < acc[j] ? (int64_t)s[j] : acc[j];         \
            return;                                                               \
        }                                                                         \
    } while (0)

static inline void load_i(bp_dtype dt, const void *p, size_t m, int64_t *acc)
{
#define LOAD_AS_I64(T)                                                            \
    do {                                                                          \
        const T *s = p;                                                           \
        for (size_t j = 0; j < m; j++)                                            \
            acc[j] = s[j];                                                        \
    } while (0);                                                                  \
    return
    switch (dt) {
    case BP_U8: LOAD_AS_I64(uint8_t);
    case BP_I8: LOAD_AS_I64(int8_t);
    case BP_I16: LOAD_AS_I64(int16_t);
    case BP_U16: LOAD_AS_I64(uint16_t);
    case BP_I32: LOAD_AS_I64(int32_t);
    case BP_U32: LOAD_AS_I64(uint32_t);
    case BP_I64:
    case BP_U64: /* its bits */
        memcpy(acc, p, m * sizeof *acc);
        return;
    default:
        return;
    }
#undef LOAD_AS_I64
}

static inline void fold_i(bp_dtype dt, bp_reduce_op op, const void *p, size_t m, int64_t *acc)
{
    switch (dt) {
    case BP_U8: FOLD_I(uint8_t); return;
    case BP_I8: FOLD_I(int8_t); return;
    case BP_I32: FOLD_I(int32_t); return;
    case BP_I64: FOLD_I(int64_t); return;
    case BP_I16: FOLD_I(int16_t); return;
    case BP_U16: FOLD_I(uint16_t); return;
    case BP_U32: FOLD_I(uint32_t); return;
    case BP_U64: {
        if (op == BP_REDUCE_MAX || op == BP_REDUCE_MIN) { /* unsigned order */
            const uint64_t *u = p;
            bool mx = op == BP_REDUCE_MAX;
            for (size_t j = 0; j < m; j++) {
                uint64_t a = (uint64_t)acc[j];
                acc[j] = (int64_t)((mx ? u[j] > a : u[j] < a) ? u[j] : a);
            }
            return;
        }
        FOLD_I(uint64_t);
        return;
    }
    default: return;
    }
}

/* The low bits of each accumulator: wrapping, as the library's integer
 * arithmetic does. */
static inline void store_i(bp_dtype dt, void *p, size_t m, const int64_t *acc)
{
    switch (dt) {
    case BP_U8:
    case BP_I8: {
        uint8_t *d = p;
        for (size_t j = 0; j < m; j++)
            d[j] = (uint8_t)(uint64_t)acc[j];
        return;
    }
    case BP_I32:
    case BP_U32: {
        uint32_t *d = p;
        for (size_t j = 0; j < m; j++)
            d[j] = (uint32_t)(uint64_t)acc[j];
        return;
    }
    case BP_I16:
    case BP_U16: {
        uint16_t *d = p;
        for (size_t j = 0; j < m; j++)
            d[j] = (uint16_t)(uint64_t)acc[j];
        return;
    }
    case BP_I64:
    case BP_U64:
        memcpy(p, acc, m * sizeof *acc);
        return;
    default:
        return;
    }
}

REDUCE_CLONES
static void reduce_int(bp_dtype dt, bp_reduce_op op, const void *const *parts, int n, void *dst,
                       size_t count)
{
    const size_t es = bp_dtype_size(dt);
    int64_t acc[BLOCK];
    for (size_t i0 = 0; i0 < count; i0 += BLOCK) {
        size_t m = count - i0 < BLOCK ? count - i0 : BLOCK;
        load_i(dt, (const char *)parts[0] + i0 * es, m, acc);
        for (int k = 1; k < n; k++)
            fold_i(dt, op, (const char *)parts[k] + i0 * es, m, acc);
        store_i(dt, (char *)dst + i0 * es, m, acc);
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

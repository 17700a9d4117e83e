/* The op tests' oracle (see oracle.h). Nothing here calls the library's
 * arithmetic: conversions, rounding and the reference generator are written
 * out in plain C. */
#include "oracle.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const bp_dtype orc_all_dtypes[9] = {BP_BOOL, BP_U8,   BP_I8,  BP_I32, BP_I64,
                                    BP_F16,  BP_BF16, BP_F32, BP_F64};
const bp_dtype orc_numeric_dtypes[8] = {BP_U8,  BP_I8,   BP_I32, BP_I64,
                                        BP_F16, BP_BF16, BP_F32, BP_F64};
const bp_dtype orc_float_dtypes[4] = {BP_F16, BP_BF16, BP_F32, BP_F64};
const bp_dtype orc_int_dtypes[4] = {BP_U8, BP_I8, BP_I32, BP_I64};

static size_t esize(bp_dtype dt)
{
    switch (dt) {
    case BP_BOOL: case BP_U8: case BP_I8: return 1;
    case BP_F16: case BP_BF16: return 2;
    case BP_I32: case BP_F32: return 4;
    case BP_I64: case BP_F64: return 8;
    default: return 0;
    }
}

static bool is_float(bp_dtype dt)
{
    return dt == BP_F16 || dt == BP_BF16 || dt == BP_F32 || dt == BP_F64;
}

int64_t orc_numel(int32_t rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int32_t k = 0; k < rank; k++)
        n *= shape[k];
    return n;
}

/* ---- conversions ------------------------------------------------------- */

void orc_store_f64(bp_dtype dt, void *base, int64_t i, double v)
{
    char *p = (char *)base + (size_t)i * esize(dt);
    switch (dt) {
    case BP_BOOL: { uint8_t x = (uint8_t)cf_int_of_f64(dt, v); memcpy(p, &x, 1); break; }
    case BP_U8: { uint8_t x = (uint8_t)cf_int_of_f64(dt, v); memcpy(p, &x, 1); break; }
    case BP_I8: { int8_t x = (int8_t)cf_int_of_f64(dt, v); memcpy(p, &x, 1); break; }
    case BP_I32: { int32_t x = (int32_t)cf_int_of_f64(dt, v); memcpy(p, &x, 4); break; }
    case BP_I64: { int64_t x = cf_int_of_f64(dt, v); memcpy(p, &x, 8); break; }
    case BP_F16: { uint16_t x = cf_f16_bits(v); memcpy(p, &x, 2); break; }
    case BP_BF16: { uint16_t x = cf_bf16_bits(v); memcpy(p, &x, 2); break; }
    case BP_F32: { float x = (float)cf_round(BP_F32, v); memcpy(p, &x, 4); break; }
    case BP_F64: memcpy(p, &v, 8); break;
    default: break;
    }
}

void orc_store_i64(bp_dtype dt, void *base, int64_t i, int64_t v)
{
    if (is_float(dt)) {
        orc_store_f64(dt, base, i, cf_round_i64(dt, v)); /* rounded once, from the integer */
        return;
    }
    char *p = (char *)base + (size_t)i * esize(dt);
    int64_t c = cf_int_of_i64(dt, v);
    switch (dt) {
    case BP_BOOL: case BP_U8: { uint8_t x = (uint8_t)c; memcpy(p, &x, 1); break; }
    case BP_I8: { int8_t x = (int8_t)c; memcpy(p, &x, 1); break; }
    case BP_I32: { int32_t x = (int32_t)c; memcpy(p, &x, 4); break; }
    default: memcpy(p, &c, 8); break;
    }
}

int64_t orc_load_i64(bp_dtype dt, const void *base, int64_t i)
{
    const char *p = (const char *)base + (size_t)i * esize(dt);
    switch (dt) {
    case BP_BOOL: case BP_U8: { uint8_t x; memcpy(&x, p, 1); return x; }
    case BP_I8: { int8_t x; memcpy(&x, p, 1); return x; }
    case BP_I32: { int32_t x; memcpy(&x, p, 4); return x; }
    case BP_I64: { int64_t x; memcpy(&x, p, 8); return x; }
    default: return cf_int_of_f64(BP_I64, orc_load_f64(dt, base, i));
    }
}

double orc_load_f64(bp_dtype dt, const void *base, int64_t i)
{
    const char *p = (const char *)base + (size_t)i * esize(dt);
    switch (dt) {
    case BP_F16: { uint16_t x; memcpy(&x, p, 2); return cf_f16_value(x); }
    case BP_BF16: { uint16_t x; memcpy(&x, p, 2); return cf_bf16_value(x); }
    case BP_F32: { float x; memcpy(&x, p, 4); return (double)x; }
    case BP_F64: { double x; memcpy(&x, p, 8); return x; }
    default: return (double)orc_load_i64(dt, base, i);
    }
}

/* ---- tensors ------------------------------------------------------------ */

static bp_tensor *make(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                       const void *buf)
{
    bp_tensor *t = NULL;
    bp_status st = bp_tensor_from_host(be, dt, rank, shape, buf, &t);
    cr_assert_eq(st, BP_OK, "bp_tensor_from_host(%s, %s, rank %d) -> %s: %s",
                 bp_backend_name(be), bp_dtype_name(dt), rank, bp_status_string(st),
                 bp_last_error());
    cr_assert_not_null(t);
    return t;
}

bp_tensor *orc_tensor(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                      const double *vals)
{
    int64_t n = orc_numel(rank, shape);
    void *buf = calloc((size_t)(n > 0 ? n : 1), 8);
    cr_assert_not_null(buf);
    for (int64_t i = 0; i < n; i++)
        orc_store_f64(dt, buf, i, vals[i]);
    bp_tensor *t = make(be, dt, rank, shape, buf);
    free(buf);
    return t;
}

bp_tensor *orc_tensor_i64(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                          const int64_t *vals)
{
    int64_t n = orc_numel(rank, shape);
    void *buf = calloc((size_t)(n > 0 ? n : 1), 8);
    cr_assert_not_null(buf);
    for (int64_t i = 0; i < n; i++)
        orc_store_i64(dt, buf, i, vals[i]);
    bp_tensor *t = make(be, dt, rank, shape, buf);
    free(buf);
    return t;
}

bp_tensor *orc_scalar(bp_backend *be, bp_dtype dt, double v)
{
    return orc_tensor(be, dt, 0, NULL, &v);
}

bp_tensor *orc_vec(bp_backend *be, bp_dtype dt, int64_t n, const double *vals)
{
    return orc_tensor(be, dt, 1, &n, vals);
}

static void *read_raw(const bp_tensor *t, int64_t *n_out)
{
    cr_assert_not_null(t, "reading a NULL tensor");
    int64_t n = bp_tensor_numel(t);
    size_t bytes = bp_tensor_nbytes(t);
    cr_assert_eq(bytes, (size_t)n * esize(bp_tensor_dtype(t)), "nbytes %zu for %lld %s elements",
                 bytes, (long long)n, bp_dtype_name(bp_tensor_dtype(t)));
    void *raw = calloc(bytes ? bytes : 1, 1);
    cr_assert_not_null(raw);
    bp_status st = bp_tensor_to_host(t, raw, bytes);
    cr_assert_eq(st, BP_OK, "bp_tensor_to_host -> %s: %s", bp_status_string(st), bp_last_error());
    *n_out = n;
    return raw;
}

double *orc_read(const bp_tensor *t)
{
    int64_t n;
    void *raw = read_raw(t, &n);
    double *out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
    cr_assert_not_null(out);
    for (int64_t i = 0; i < n; i++)
        out[i] = orc_load_f64(bp_tensor_dtype(t), raw, i);
    free(raw);
    return out;
}

int64_t *orc_read_i64(const bp_tensor *t)
{
    int64_t n;
    void *raw = read_raw(t, &n);
    int64_t *out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
    cr_assert_not_null(out);
    for (int64_t i = 0; i < n; i++)
        out[i] = orc_load_i64(bp_tensor_dtype(t), raw, i);
    free(raw);
    return out;
}

/* ---- comparison ---------------------------------------------------------- */

orc_tol orc_exact(void) { return (orc_tol){0.0, 0.0, 0}; }

orc_tol orc_math(bp_dtype dt)
{
    if (dt == BP_F64)
        return (orc_tol){1e-13, 1e-300, 0};
    if (dt == BP_F32)
        return (orc_tol){4e-7, 1e-37, 0};
    return (orc_tol){0.0, 0.0, 1};
}

static const char *bename(const bp_tensor *t)
{
    bp_backend *be = bp_tensor_backend(t);
    return be ? bp_backend_name(be) : "(no backend)";
}

static void shape_str(char *buf, size_t cap, int32_t rank, const int64_t *shape)
{
    size_t used = (size_t)snprintf(buf, cap, "(");
    for (int32_t k = 0; k < rank && used < cap; k++)
        used += (size_t)snprintf(buf + used, cap - used, k ? ",%lld" : "%lld",
                                 (long long)shape[k]);
    if (used < cap)
        snprintf(buf + used, cap - used, rank == 1 ? ",)" : ")");
}

void orc_expect_meta(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
                     const int64_t *shape)
{
    cr_assert_not_null(t, "%s: result is NULL", what);
    char got[128], want[128];
    shape_str(got, sizeof got, bp_tensor_rank(t), bp_tensor_shape(t));
    shape_str(want, sizeof want, rank, shape);
    cr_assert_eq(bp_tensor_dtype(t), dt, "%s on %s: dtype %s, wanted %s", what, bename(t),
                 bp_dtype_name(bp_tensor_dtype(t)), bp_dtype_name(dt));
    cr_assert_eq(bp_tensor_rank(t), rank, "%s on %s: shape %s, wanted %s", what, bename(t),
                 got, want);
    for (int32_t k = 0; k < rank; k++)
        cr_assert_eq(bp_tensor_shape(t)[k], shape[k], "%s on %s: shape %s, wanted %s", what,
                     bename(t), got, want);
}

void orc_expect(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
                const int64_t *shape, const double *want, orc_tol tol)
{
    orc_expect_meta(what, t, dt, rank, shape);
    int64_t n = orc_numel(rank, shape);
    double *got = orc_read(t);
    for (int64_t i = 0; i < n; i++) {
        double w = cf_round(dt, want[i]), g = got[i];
        bool ok;
        if (isnan(w))
            ok = isnan(g);
        else if (isinf(w) || !is_float(dt))
            ok = g == w;
        else if (dt == BP_F16 || dt == BP_BF16) {
            double u = fmax(cf_ulp(dt, w), cf_ulp(dt, g));
            ok = fabs(g - w) <= tol.half_ulps * u;
        } else
            ok = fabs(g - w) <= tol.atol + tol.rtol * fabs(w);
        if (!ok) {
            double unrounded = want[i], g2 = g;
            free(got);
            cr_assert_fail("%s [%s] on %s: element %lld: expected %.17g (oracle %.17g), got "
                           "%.17g (rtol %g, atol %g, half ulps %d)",
                           what, bp_dtype_name(dt), bename(t), (long long)i, w, unrounded, g2,
                           tol.rtol, tol.atol, tol.half_ulps);
        }
    }
    free(got);
}

void orc_expect_i64(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
                    const int64_t *shape, const int64_t *want)
{
    orc_expect_meta(what, t, dt, rank, shape);
    int64_t n = orc_numel(rank, shape);
    int64_t *got = orc_read_i64(t);
    for (int64_t i = 0; i < n; i++) {
        if (got[i] != want[i]) {
            long long g = (long long)got[i];
            free(got);
            cr_assert_fail("%s [%s] on %s: element %lld: expected %lld, got %lld", what,
                           bp_dtype_name(dt), bename(t), (long long)i, (long long)want[i], g);
        }
    }
    free(got);
}

void orc_expect_signbits(const char *what, const bp_tensor *t, const int *neg)
{
    int64_t n = bp_tensor_numel(t);
    double *got = orc_read(t);
    for (int64_t i = 0; i < n; i++) {
        int g = signbit(got[i]) ? 1 : 0;
        if (g != neg[i]) {
            double v = got[i];
            free(got);
            cr_assert_fail("%s [%s] on %s: element %lld: expected %s sign, got %g", what,
                           bp_dtype_name(bp_tensor_dtype(t)), bename(t), (long long)i,
                           neg[i] ? "negative" : "positive", v);
        }
    }
    free(got);
}

/* ---- broadcasting ---------------------------------------------------------- */

void orc_unravel(int32_t rank, const int64_t *shape, int64_t flat, int64_t *idx)
{
    for (int32_t k = rank - 1; k >= 0; k--) {
        idx[k] = shape[k] ? flat % shape[k] : 0;
        flat = shape[k] ? flat / shape[k] : 0;
    }
}

int64_t orc_ravel(int32_t rank, const int64_t *shape, const int64_t *idx)
{
    int64_t f = 0;
    for (int32_t k = 0; k < rank; k++)
        f = f * shape[k] + idx[k];
    return f;
}

int64_t orc_bcast_index(int32_t out_rank, const int64_t *out_shape, int64_t flat,
                        int32_t in_rank, const int64_t *in_shape)
{
    int64_t idx[16];
    orc_unravel(out_rank, out_shape, flat, idx);
    int64_t f = 0;
    for (int32_t k = 0; k < in_rank; k++) {
        int64_t i = idx[out_rank - in_rank + k];
        f = f * in_shape[k] + (in_shape[k] == 1 ? 0 : i);
    }
    return f;
}

/* ---- support ----------------------------------------------------------------- */

bool orc_supports(bp_backend *be, bp_op op, bp_dtype dt)
{
    bool s = bp_backend_supports(be, op, dt);
    if (strcmp(bp_backend_plugin_name(be), "binary") == 0)
        cr_assert(s, "the binary reference backend must implement %s for %s", bp_op_name(op),
                  bp_dtype_name(dt));
    return s;
}

void orc_fill_random(double *dst, int64_t n, uint64_t seed, double lo, double hi)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        double u = (double)(s >> 11) * (1.0 / 9007199254740992.0);
        dst[i] = lo + (hi - lo) * u;
    }
}

/* Philox4x32-10: counter (block lo, block hi, 0, 0), key (seed lo, seed hi). */
static void philox(uint64_t seed, uint64_t block, uint32_t w[4])
{
    uint32_t ctr[4] = {(uint32_t)(block & 0xffffffffu), (uint32_t)(block >> 32), 0, 0};
    uint32_t key[2] = {(uint32_t)(seed & 0xffffffffu), (uint32_t)(seed >> 32)};
    for (int round = 0; round < 10; round++) {
        uint64_t prod0 = (uint64_t)ctr[0] * 0xD2511F53ull;
        uint64_t prod1 = (uint64_t)ctr[2] * 0xCD9E8D57ull;
        uint32_t hi0 = (uint32_t)(prod0 >> 32), lo0 = (uint32_t)prod0;
        uint32_t hi1 = (uint32_t)(prod1 >> 32), lo1 = (uint32_t)prod1;
        uint32_t next[4] = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
        memcpy(ctr, next, sizeof ctr);
        key[0] += 0x9E3779B9u;
        key[1] += 0xBB67AE85u;
    }
    memcpy(w, ctr, sizeof ctr);
}

double orc_philox_uniform01(uint64_t seed, uint64_t position)
{
    uint32_t w[4];
    philox(seed, position >> 2, w);
    return ldexp((double)(w[position & 3u] >> 8), -24);
}

double orc_philox_normal01(uint64_t seed, uint64_t position)
{
    uint32_t w[4];
    philox(seed, position, w);
    double u1 = ldexp((double)(w[0] >> 8) + 1.0, -24);
    double u2 = ldexp((double)(w[1] >> 8), -24);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

int64_t orc_int_edges(bp_dtype dt, const int64_t *mid, size_t n_mid, int64_t *v)
{
    int64_t lo = cf_int_min(dt), hi = cf_int_max(dt), n = 0;
    for (size_t i = 0; i < n_mid + 4; i++) {
        int64_t c = i == 0 ? lo : i == 1 ? lo + 1 : i < n_mid + 2 ? mid[i - 2]
                  : i == n_mid + 2 ? hi - 1 : hi;
        if (c < lo || c > hi)
            continue;
        bool dup = false;
        for (int64_t j = 0; j < n; j++)
            dup = dup || v[j] == c;
        if (!dup)
            v[n++] = c;
    }
    return n;
}

/* The op tests' side of the oracle (see expect.h): tensors in and out by the
 * oracle's cast rules, and comparisons, asserting with Criterion. */
#include "expect.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bp_tensor *bpt_tensor(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                      const double *vals)
{
    int64_t n = cf_numel(rank, shape);
    void *buf = calloc((size_t)(n > 0 ? n : 1), 8);
    cr_assert_not_null(buf);
    for (int64_t i = 0; vals && i < n; i++)
        cf_store_f64(dt, buf, i, vals[i]);
    bp_tensor *t = make(be, dt, rank, shape, buf);
    free(buf);
    return t;
}

bp_tensor *bpt_tensor_i64(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                          const int64_t *vals)
{
    int64_t n = cf_numel(rank, shape);
    void *buf = calloc((size_t)(n > 0 ? n : 1), 8);
    cr_assert_not_null(buf);
    for (int64_t i = 0; vals && i < n; i++)
        cf_store_i64(dt, buf, i, vals[i]);
    bp_tensor *t = make(be, dt, rank, shape, buf);
    free(buf);
    return t;
}

bp_tensor *bpt_tensor_of(bp_backend *be, const cf_array *a)
{
    void *buf = calloc((size_t)(a->n > 0 ? a->n : 1), 8);
    cr_assert_not_null(buf);
    cf_encode(a, buf);
    bp_tensor *t = make(be, a->dt, a->rank, a->shape, buf);
    free(buf);
    return t;
}

bp_tensor *bpt_scalar(bp_backend *be, bp_dtype dt, double v)
{
    return bpt_tensor(be, dt, 0, NULL, &v);
}

bp_tensor *bpt_vec(bp_backend *be, bp_dtype dt, int64_t n, const double *vals)
{
    return bpt_tensor(be, dt, 1, &n, vals);
}

static void *read_raw(const bp_tensor *t, int64_t *n_out)
{
    cr_assert_not_null(t, "reading a NULL tensor");
    int64_t n = bp_tensor_numel(t);
    size_t bytes = bp_tensor_nbytes(t);
    cr_assert_eq(bytes, (size_t)n * cf_dtype_size(bp_tensor_dtype(t)), "nbytes %zu for %lld %s elements",
                 bytes, (long long)n, bp_dtype_name(bp_tensor_dtype(t)));
    void *raw = calloc(bytes ? bytes : 1, 1);
    cr_assert_not_null(raw);
    bp_status st = bp_tensor_to_host(t, raw, bytes);
    cr_assert_eq(st, BP_OK, "bp_tensor_to_host -> %s: %s", bp_status_string(st), bp_last_error());
    *n_out = n;
    return raw;
}

void *bpt_read_bytes(const bp_tensor *t)
{
    int64_t n;
    return read_raw(t, &n);
}

bool bpt_same_bytes(const bp_tensor *a, const bp_tensor *b)
{
    size_t na = bp_tensor_nbytes(a);
    if (na != bp_tensor_nbytes(b))
        return false;
    void *pa = bpt_read_bytes(a), *pb = bpt_read_bytes(b);
    bool same = memcmp(pa, pb, na) == 0;
    free(pa), free(pb);
    return same;
}

double *bpt_read(const bp_tensor *t)
{
    int64_t n;
    void *raw = read_raw(t, &n);
    double *out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
    cr_assert_not_null(out);
    for (int64_t i = 0; i < n; i++)
        out[i] = cf_load_f64(bp_tensor_dtype(t), raw, i);
    free(raw);
    return out;
}

int64_t *bpt_read_i64(const bp_tensor *t)
{
    int64_t n;
    void *raw = read_raw(t, &n);
    int64_t *out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
    cr_assert_not_null(out);
    for (int64_t i = 0; i < n; i++)
        out[i] = cf_load_i64(bp_tensor_dtype(t), raw, i);
    free(raw);
    return out;
}

/* ---- host arrays ----------------------------------------------------------- */

cf_array bpt_array(bp_dtype dt, int32_t rank, const int64_t *shape, const double *vals)
{
    cf_array a;
    cr_assert(cf_array_from_f64(&a, dt, rank, shape, vals), "out of memory");
    return a;
}

cf_array bpt_array_i64(bp_dtype dt, int32_t rank, const int64_t *shape, const int64_t *vals)
{
    cf_array a;
    cr_assert(cf_array_from_i64(&a, dt, rank, shape, vals), "out of memory");
    return a;
}

/* ---- comparison ---------------------------------------------------------- */

bpt_tol bpt_exact(void) { return (bpt_tol){0.0, 0.0, 0}; }

bpt_tol bpt_math(bp_dtype dt)
{
    if (dt == BP_F64)
        return (bpt_tol){1e-13, 1e-300, 0};
    if (dt == BP_F32)
        return (bpt_tol){4e-7, 1e-37, 0};
    return (bpt_tol){0.0, 0.0, 1};
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

void bpt_expect_meta(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
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

void bpt_expect(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
                const int64_t *shape, const double *want, bpt_tol tol)
{
    bpt_expect_meta(what, t, dt, rank, shape);
    int64_t n = cf_numel(rank, shape);
    double *got = bpt_read(t);
    for (int64_t i = 0; i < n; i++) {
        double w = cf_round(dt, want[i]), g = got[i];
        bool ok;
        if (isnan(w))
            ok = isnan(g);
        else if (isinf(w) || !cf_is_float(dt))
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

void bpt_expect_i64(const char *what, const bp_tensor *t, bp_dtype dt, int32_t rank,
                    const int64_t *shape, const int64_t *want)
{
    bpt_expect_meta(what, t, dt, rank, shape);
    int64_t n = cf_numel(rank, shape);
    int64_t *got = bpt_read_i64(t);
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

void bpt_expect_array(const char *what, const bp_tensor *t, const cf_array *want, bpt_tol tol)
{
    if (want->f)
        bpt_expect(what, t, want->dt, want->rank, want->shape, want->f, tol);
    else
        bpt_expect_i64(what, t, want->dt, want->rank, want->shape, want->i);
}

void bpt_expect_signbits(const char *what, const bp_tensor *t, const int *neg)
{
    int64_t n = bp_tensor_numel(t);
    double *got = bpt_read(t);
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

/* ---- support ----------------------------------------------------------------- */

bool bpt_supports(bp_backend *be, bp_op op, bp_dtype dt)
{
    bool s = bp_backend_supports(be, op, dt);
    if (strcmp(bp_backend_plugin_name(be), "binary") == 0)
        cr_assert(s, "the binary reference backend must implement %s for %s", bp_op_name(op),
                  bp_dtype_name(dt));
    return s;
}

void bpt_fill_random(double *dst, int64_t n, uint64_t seed, double lo, double hi)
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

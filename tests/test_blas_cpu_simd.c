/* blas_cpu's instruction levels (the `simd` key): each level's vector math
 * against the binary reference, opened explicitly, so that the AVX-512 and
 * AVX2 kernels are checked on any machine that runs them, whatever the
 * default picks. A level this CPU cannot run (or this build lacks) is
 * skipped with the reason. Within a level: the f32 math functions within
 * one ulp of the reference over a sweep of bit patterns (every sign and
 * exponent, subnormals, zeros, infinities, NaN), the exact ones bit for
 * bit, f64 within 1e-14 relative, pow over bases and exponents, the
 * column sums and products bit for bit (the reference's row order) and f64
 * softmax rows closely, at lengths that are no multiple of any vector
 * width. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpt.h"
#include "expect.h"

static const char *write_ini(char *path, const char *text)
{
    strcpy(path, "/tmp/bpt_simd_XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* A context whose blas_cpu runs `level` (NULL: the default), and its binary
 * backend; the status of opening blas_cpu, its error in why. */
static bp_status open_level(const char *level, bp_context **ctx, bp_backend **bin,
                            bp_backend **blas, char *why, size_t cap)
{
    char path[64], text[128];
    snprintf(text, sizeof text, "[backend.blas_cpu]\nsimd = %s\n", level ? level : "auto");
    write_ini(path, text);
    BPT_OK(bp_context_create(path, ctx));
    unlink(path);
    BPT_OK(bp_backend_get(*ctx, "binary", bin));
    bp_status st = bp_backend_get(*ctx, "blas_cpu", blas);
    snprintf(why, cap, "%s", st == BP_OK ? "" : bp_last_error());
    return st;
}

/* Open `level` or skip the test: the plugin is missing, this build has no
 * such level, or this CPU cannot run it. */
static bp_context *level_or_skip(const char *level, bp_backend **bin, bp_backend **blas)
{
    bp_context *ctx;
    char why[1024];
    if (open_level(level, &ctx, bin, blas, why, sizeof why) != BP_OK) {
        bp_context_destroy(ctx);
        cr_skip_test("blas_cpu with simd = %s does not open here: %s", level, why);
    }
    return ctx;
}

/* A tensor of the raw values on be. */
static bp_tensor *raw(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape,
                      const void *p)
{
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(be, dt, rank, shape, p, &t));
    return t;
}

/* ulps between two floats, across zero too; zeros of opposite sign and a
 * NaN against a number are "far" */
static int64_t ulps_apart(float a, float b)
{
    if (a != a || b != b)
        return (a != a && b != b) ? 0 : INT32_MAX;
    if (a == 0 && b == 0)
        return signbit(a) == signbit(b) ? 0 : INT32_MAX;
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t ka = ia < 0 ? (int64_t)INT32_MIN - ia : ia, kb = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return ka > kb ? ka - kb : kb - ka;
}

/* Every element of two f32 tensors within `bound` ulps (0: the same bits,
 * NaN payloads aside). */
static void expect_f32_within(const char *what, const bp_tensor *want, const bp_tensor *got,
                              const float *x, int64_t bound)
{
    int64_t n = bp_tensor_numel(want), off = 0;
    float *w = bpt_read_bytes(want), *g = bpt_read_bytes(got);
    for (int64_t i = 0; i < n; i++) {
        int64_t d = ulps_apart(g[i], w[i]);
        if (d > bound && off++ < 3)
            cr_log_error("%s: x = %a: %a, reference %a (%lld ulp)", what, x ? x[i] : 0.0f,
                         g[i], w[i], (long long)d);
    }
    cr_expect_eq(off, 0, "%s: %lld elements more than %lld ulp from the reference", what,
                 (long long)off, (long long)bound);
    free(w), free(g);
}

/* Bit patterns: a stride through all 2^32 (every sign and exponent), then
 * specials; n is odd, no multiple of any vector width or chunk. */
enum { SWEEP = 1048573 };
static float *sweep_f32(void)
{
    float *x = malloc(SWEEP * sizeof *x);
    cr_assert_not_null(x);
    for (int64_t i = 0; i < SWEEP; i++) {
        uint32_t u = (uint32_t)((uint64_t)i * 4099u);
        memcpy(&x[i], &u, 4);
    }
    static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f,
                                    0x1p-126f, 0x1.fffffep127f, 88.72f, -103.97f, 9.02f,
                                    0.5625f, 1.0f, -1.0f, 65536.0f, 65537.0f, 1.5707964f};
    for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
        x[k * 13] = special[k];
    return x;
}

static const bp_op MATH[] = {BP_OP_EXP, BP_OP_LOG, BP_OP_SIN, BP_OP_COS,
                             BP_OP_TAN, BP_OP_TANH, BP_OP_SIGMOID};
static const bp_op EXACT[] = {BP_OP_SQRT, BP_OP_RSQRT, BP_OP_FLOOR, BP_OP_CEIL,
                              BP_OP_ROUND, BP_OP_ABS, BP_OP_NEG, BP_OP_RELU};
#define NV(a) (sizeof(a) / sizeof((a)[0]))

static void f32_unary_within_one_ulp(bp_backend *bin, bp_backend *blas, const char *level)
{
    float *x = sweep_f32();
    int64_t n = SWEEP;
    bp_tensor *x0 = raw(bin, BP_F32, 1, &n, x), *x1 = raw(blas, BP_F32, 1, &n, x);
    for (size_t k = 0; k < NV(MATH) + NV(EXACT); k++) {
        bp_op op = k < NV(MATH) ? MATH[k] : EXACT[k - NV(MATH)];
        bp_tensor *r0 = NULL, *r1 = NULL;
        BPT_OK(bp_unary(op, x0, &r0));
        BPT_OK(bp_unary(op, x1, &r1));
        char what[64];
        snprintf(what, sizeof what, "%s f32 %s", level, bp_op_name(op));
        expect_f32_within(what, r0, r1, x, k < NV(MATH) ? 1 : 0);
        bp_tensor_release(r0), bp_tensor_release(r1);
    }
    bp_tensor_release(x0), bp_tensor_release(x1);
    free(x);
}

static void f64_unary_within_1e14(bp_backend *bin, bp_backend *blas, const char *level)
{
    enum { N = 40011 };
    double *v = malloc(N * sizeof *v);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < N; i++) {
        double t = (double)((i * 7919) % 20011 - 10005);
        v[i] = i % 4 == 0 ? t / 37.0 : i % 4 == 1 ? t * 1e-9 : i % 4 == 2 ? t * 13.0 : t / 1001.0;
    }
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e300, 262144.0,
                                     262145.0, 1.5707963267948966, 3.141592653589793, 709.5,
                                     -745.2, 0x1p-1074, 0x1p-1022};
    for (size_t k = 0; k < NV(special); k++)
        v[k * 11] = special[k];
    int64_t n = N;
    bp_tensor *x0 = raw(bin, BP_F64, 1, &n, v), *x1 = raw(blas, BP_F64, 1, &n, v);
    for (size_t k = 0; k < NV(MATH); k++) {
        bp_tensor *r0 = NULL, *r1 = NULL;
        BPT_OK(bp_unary(MATH[k], x0, &r0));
        BPT_OK(bp_unary(MATH[k], x1, &r1));
        double *a = bpt_read_bytes(r0), *b = bpt_read_bytes(r1);
        int64_t off = 0;
        for (int64_t i = 0; i < N; i++) {
            bool same = (a[i] != a[i] && b[i] != b[i]) ||
                        (a[i] == b[i] && signbit(a[i]) == signbit(b[i])) ||
                        fabs(a[i] - b[i]) <= 1e-14 * fabs(a[i]);
            if (!same && off++ < 3)
                cr_log_error("%s f64 %s x = %.17g: %.17g, reference %.17g", level,
                             bp_op_name(MATH[k]), v[i], b[i], a[i]);
        }
        cr_expect_eq(off, 0, "%s f64 %s: %lld elements apart", level, bp_op_name(MATH[k]),
                     (long long)off);
        free(a), free(b);
        bp_tensor_release(r0), bp_tensor_release(r1);
    }
    bp_tensor_release(x0), bp_tensor_release(x1);
    free(v);
}

/* pow: every base of a sweep against exponents broadcast, and exponents of
 * a sweep against fixed bases (both dense) */
static void f32_pow_within_one_ulp(bp_backend *bin, bp_backend *blas, const char *level)
{
    float *x = sweep_f32();
    int64_t n = SWEEP, one = 1;
    bp_tensor *x0 = raw(bin, BP_F32, 1, &n, x), *x1 = raw(blas, BP_F32, 1, &n, x);
    static const float fixed[] = {-2.5f, -1.0f, 0.5f, 0.333333343f, 2.0f, 3.7f, 10.1f, 0.0f};
    float *fill = malloc(SWEEP * sizeof *fill);
    cr_assert_not_null(fill);
    for (size_t k = 0; k < NV(fixed); k++) {
        char what[64];
        bp_tensor *e0 = raw(bin, BP_F32, 1, &one, &fixed[k]), *e1 = raw(blas, BP_F32, 1, &one, &fixed[k]);
        bp_tensor *r0 = NULL, *r1 = NULL;
        BPT_OK(bp_pow(x0, e0, &r0));
        BPT_OK(bp_pow(x1, e1, &r1));
        snprintf(what, sizeof what, "%s f32 x ^ %g", level, (double)fixed[k]);
        expect_f32_within(what, r0, r1, x, 1);
        bp_tensor_release(r0), bp_tensor_release(r1), bp_tensor_release(e0), bp_tensor_release(e1);
        for (int64_t i = 0; i < n; i++)
            fill[i] = fixed[k];
        bp_tensor *b0 = raw(bin, BP_F32, 1, &n, fill), *b1 = raw(blas, BP_F32, 1, &n, fill);
        BPT_OK(bp_pow(b0, x0, &r0));
        BPT_OK(bp_pow(b1, x1, &r1));
        snprintf(what, sizeof what, "%s f32 %g ^ x", level, (double)fixed[k]);
        expect_f32_within(what, r0, r1, x, 1);
        bp_tensor_release(r0), bp_tensor_release(r1), bp_tensor_release(b0), bp_tensor_release(b1);
    }
    free(fill);
    bp_tensor_release(x0), bp_tensor_release(x1);
    free(x);
}

/* pow with bases next to 1 (where log(a) is tiny and a naive split of it
 * would cancel) and next to powers of two, under exponents that take the
 * result anywhere from underflow to overflow: within one ulp */
static void f32_pow_near_one_with_large_exponents(bp_backend *bin, bp_backend *blas,
                                                  const char *level)
{
    enum { N = 65537 };
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    cr_assert(a && b);
    for (int64_t i = 0; i < N; i++) {
        uint32_t u = (i % 2 ? 0x3f800000u : 0x40000000u + (uint32_t)(i % 7) * 0x800000u) +
                     (uint32_t)((i * 7919) % 8192) - 4096u;
        memcpy(&a[i], &u, 4);
        double lg = log2((double)a[i]), t = (double)((i * 104729) % 9973) / 9973.0 * 300.0 - 150.0;
        b[i] = lg != 0.0 ? (float)(t / lg) : 3.0f;
    }
    int64_t n = N;
    bp_tensor *a0 = raw(bin, BP_F32, 1, &n, a), *a1 = raw(blas, BP_F32, 1, &n, a);
    bp_tensor *b0 = raw(bin, BP_F32, 1, &n, b), *b1 = raw(blas, BP_F32, 1, &n, b);
    bp_tensor *r0 = NULL, *r1 = NULL;
    BPT_OK(bp_pow(a0, b0, &r0));
    BPT_OK(bp_pow(a1, b1, &r1));
    char what[64];
    snprintf(what, sizeof what, "%s f32 pow near 1", level);
    expect_f32_within(what, r0, r1, a, 1);
    bp_tensor_release(r0), bp_tensor_release(r1), bp_tensor_release(a0), bp_tensor_release(a1);
    bp_tensor_release(b0), bp_tensor_release(b1);
    free(a), free(b);
}

/* sum, mean and product over a leading and a middle axis, blocks small
 * enough for the column strips: the reference's bits, NaN, inf and -0
 * included; 37 and 45 columns leave tails after every strip width */
static void column_folds_bit_for_bit(bp_backend *bin, bp_backend *blas, const char *level)
{
    static const int64_t shapes[][3] = {{131, 37, 1}, {3, 67, 45}};
    static const bp_op ops[] = {BP_OP_SUM, BP_OP_MEAN, BP_OP_PROD};
    for (int d = 0; d < 2; d++)
        for (size_t s = 0; s < NV(shapes); s++) {
            bp_dtype dt = d ? BP_F64 : BP_F32;
            int32_t rank = shapes[s][2] == 1 ? 2 : 3, axis = rank == 2 ? 0 : 1;
            int64_t n = shapes[s][0] * shapes[s][1] * shapes[s][2];
            double *v = malloc((size_t)n * sizeof *v);
            cr_assert_not_null(v);
            for (int64_t i = 0; i < n; i++) /* products stay finite: factors near 1 */
                v[i] = 1.0 + (double)((i * 7919) % 2001 - 1000) / 8192.0 +
                       (i % 7 == 0 ? 1e-9 * (double)(i % 13) : 0.0);
            v[5] = NAN, v[17] = INFINITY, v[29] = -0.0, v[40] = 1e30;
            bp_tensor *x0 = bpt_tensor(bin, dt, rank, shapes[s], v), *x1 = NULL;
            BPT_OK(bp_backend_copy(x0, blas, &x1));
            for (size_t k = 0; k < NV(ops); k++) {
                bp_tensor *r0 = NULL, *r1 = NULL;
                BPT_OK(bp_reduce(ops[k], x0, 1, &axis, false, &r0));
                BPT_OK(bp_reduce(ops[k], x1, 1, &axis, false, &r1));
                cr_expect(bpt_same_bytes(r0, r1), "%s %s %s over axis %d of rank %d: not the reference's bits",
                          level, bp_dtype_name(dt), bp_op_name(ops[k]), axis, rank);
                bp_tensor_release(r0), bp_tensor_release(r1);
            }
            bp_tensor_release(x0), bp_tensor_release(x1);
            free(v);
        }
}

/* A convolution over few positions (conv_narrow.c: each filter's row
 * dotted with the gathered windows in this level's dots kernel) against the
 * reference, which sums in double: within the bound of its summation. Each
 * of the 8 (f32; f64: 4) lanes is a dot product of n = ck / lanes terms in
 * the dtype (fma or not: the classic bound n eps sum|terms| holds for
 * both), the lanes are added in double, and the total is rounded once:
 * (ck / lanes + 1) eps sum|terms|.
 * 1 to 7 positions, 11 filters (no multiple of 2, 4 or 8), 37 x 3 taps (no
 * multiple of 8), a bias, two images. */
static void narrow_conv_close(bp_backend *bin, bp_backend *blas, const char *level)
{
    enum { N = 2, C = 37, M = 11, K = 3 };
    for (int d = 0; d < 2; d++)
        for (int64_t L = 1; L <= 7; L += 3) {
            bp_dtype dt = d ? BP_F64 : BP_F32;
            const int64_t xs[3] = {N, C, L}, ws[3] = {M, C, K}, bs[1] = {M};
            double x[N * C * 7], w[M * C * K], b[M];
            for (int64_t i = 0; i < N * C * L; i++)
                x[i] = (double)((i * 7919) % 2001 - 1000) / 999.0;
            for (int64_t i = 0; i < M * C * K; i++)
                w[i] = (double)((i * 104729) % 1999 - 999) / 997.0;
            for (int64_t i = 0; i < M; i++)
                b[i] = (double)i / 7.0 - 0.5;
            bp_tensor *x0 = bpt_tensor(bin, dt, 3, xs, x), *w0 = bpt_tensor(bin, dt, 3, ws, w);
            bp_tensor *b0 = bpt_tensor(bin, dt, 1, bs, b), *x1 = NULL, *w1 = NULL, *b1 = NULL;
            BPT_OK(bp_backend_copy(x0, blas, &x1));
            BPT_OK(bp_backend_copy(w0, blas, &w1));
            BPT_OK(bp_backend_copy(b0, blas, &b1));
            const bp_window win = {.struct_size = sizeof win, .pads = {1, 1}};
            bp_tensor *r0 = NULL, *r1 = NULL;
            BPT_OK(bp_conv(x0, w0, b0, &win, &r0));
            BPT_OK(bp_conv(x1, w1, b1, &win, &r1));
            void *p0 = bpt_read_bytes(r0), *p1 = bpt_read_bytes(r1);
            const double eps = d ? 0x1p-53 : 0x1p-24, lanes = d ? 4 : 8;
            int64_t off = 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t m = 0; m < M; m++)
                    for (int64_t o = 0; o < L; o++) {
                        double terms = fabs(b[m]);
                        for (int64_t c = 0; c < C; c++)
                            for (int64_t k = 0; k < K; k++)
                                if (o + k - 1 >= 0 && o + k - 1 < L)
                                    terms += fabs(w[(m * C + c) * K + k]) *
                                             fabs(x[(n * C + c) * L + o + k - 1]);
                        const int64_t i = (n * M + m) * L + o;
                        const double want = d ? ((double *)p0)[i] : ((float *)p0)[i];
                        const double got = d ? ((double *)p1)[i] : ((float *)p1)[i];
                        const double bound = (C * K / lanes + 1) * eps * terms;
                        if (!(fabs(got - want) <= bound) && off++ < 3)
                            cr_log_error("%s %s conv over %lld positions: y[%lld] = %a, "
                                         "reference %a (bound %g)", level, bp_dtype_name(dt),
                                         (long long)L, (long long)i, got, want, bound);
                    }
            cr_expect_eq(off, 0, "%s %s conv over %lld positions: %lld elements outside the "
                         "bound", level, bp_dtype_name(dt), (long long)L, (long long)off);
            free(p0), free(p1);
            bp_tensor_release(r0), bp_tensor_release(r1);
            bp_tensor_release(x0), bp_tensor_release(w0), bp_tensor_release(b0);
            bp_tensor_release(x1), bp_tensor_release(w1), bp_tensor_release(b1);
        }
}

/* f64 softmax and log_softmax of rows: within 1e-14 relative (softmax) or
 * absolute per unit of |x - max| (log_softmax) of the reference; rows with
 * a NaN, +inf, all -inf, or terms that underflow in exp */
static void softmax_f64_rows_close(bp_backend *bin, bp_backend *blas, const char *level)
{
    const int64_t shape[2] = {9, 1031};
    int64_t n = shape[0] * shape[1];
    double *v = malloc((size_t)n * sizeof *v);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)((i * 7919) % 2001 - 1000) / 37.0;
    v[1 * 1031 + 5] = NAN;
    v[2 * 1031 + 9] = INFINITY;
    for (int64_t j = 0; j < 1031; j++)
        v[3 * 1031 + j] = -INFINITY;
    v[4 * 1031 + 3] = 800.0; /* every other term of row 4 underflows */
    bp_tensor *x0 = raw(bin, BP_F64, 2, shape, v), *x1 = raw(blas, BP_F64, 2, shape, v);
    for (int lg = 0; lg < 2; lg++) {
        bp_tensor *r0 = NULL, *r1 = NULL;
        BPT_OK(lg ? bp_log_softmax(x0, 1, &r0) : bp_softmax(x0, 1, &r0));
        BPT_OK(lg ? bp_log_softmax(x1, 1, &r1) : bp_softmax(x1, 1, &r1));
        double *a = bpt_read_bytes(r0), *b = bpt_read_bytes(r1);
        int64_t off = 0;
        for (int64_t i = 0; i < n; i++) {
            double tol = lg ? 1e-14 * (1.0 + fabs(a[i])) : 1e-14 * fabs(a[i]) + 1e-300;
            bool same = (a[i] != a[i] && b[i] != b[i]) || a[i] == b[i] || fabs(a[i] - b[i]) <= tol;
            if (!same && off++ < 3)
                cr_log_error("%s f64 %s element %lld: %.17g, reference %.17g", level,
                             lg ? "log_softmax" : "softmax", (long long)i, b[i], a[i]);
        }
        cr_expect_eq(off, 0, "%s f64 %s: %lld elements apart", level, lg ? "log_softmax" : "softmax",
                     (long long)off);
        free(a), free(b);
        bp_tensor_release(r0), bp_tensor_release(r1);
    }
    bp_tensor_release(x0), bp_tensor_release(x1);
    free(v);
}

/* f32 rsqrt computes in float lanes plus one Newton step in double and
 * falls back to the reference where a float rounding boundary is near (the
 * low 29 bits of the double result within 1024 of half). These inputs are
 * the nearest cases: every float of [1, 4) (each mantissa, both exponent
 * parities: rsqrt(4x) = rsqrt(x) / 2) whose reference double lies within
 * 4096 double ulps of a boundary. The result must be the reference's bits. */
static void f32_rsqrt_next_to_rounding_boundaries(bp_backend *bin, bp_backend *blas,
                                                  const char *level)
{
    enum { CAP = 4096 };
    float *x = malloc(CAP * sizeof *x);
    cr_assert_not_null(x);
    int64_t n = 0;
    for (float v = 1.0f; v < 4.0f && n < CAP; v = nextafterf(v, INFINITY)) {
        double r = 1.0 / sqrt((double)v);
        uint64_t b;
        memcpy(&b, &r, sizeof b);
        int64_t off = (int64_t)(b & ((UINT64_C(1) << 29) - 1)) - ((int64_t)1 << 28);
        if (off > -4096 && off < 4096)
            x[n++] = v;
    }
    cr_assert_gt(n, 16, "only %lld floats of [1, 4) are near a rounding boundary", (long long)n);
    bp_tensor *x0 = raw(bin, BP_F32, 1, &n, x), *x1 = raw(blas, BP_F32, 1, &n, x);
    bp_tensor *r0 = NULL, *r1 = NULL;
    BPT_OK(bp_unary(BP_OP_RSQRT, x0, &r0));
    BPT_OK(bp_unary(BP_OP_RSQRT, x1, &r1));
    char what[64];
    snprintf(what, sizeof what, "%s f32 rsqrt next to rounding boundaries", level);
    expect_f32_within(what, r0, r1, x, 0);
    bp_tensor_release(r0), bp_tensor_release(r1), bp_tensor_release(x0), bp_tensor_release(x1);
    free(x);
}

/* Heavy f16 ops run through the level's f32 kernels, each element whose
 * f32 result is near an f16 rounding boundary (or is subnormal in f16, zero,
 * not finite) taken from the reference: every f16 input, the reference's
 * bits (NaNs included: they come from the reference). */
static void f16_heavy_ops_bit_for_bit(bp_backend *bin, bp_backend *blas, const char *level)
{
    static const bp_op ops[] = {BP_OP_EXP,  BP_OP_LOG,  BP_OP_SIN,     BP_OP_COS, BP_OP_TAN,
                                BP_OP_TANH, BP_OP_SIGMOID, BP_OP_ERF, BP_OP_RSQRT};
    enum { N = 65536 + 7 };
    uint16_t *h = malloc(N * sizeof *h);
    cr_assert_not_null(h);
    for (int64_t i = 0; i < N; i++)
        h[i] = (uint16_t)(i * 40503u); /* every pattern (40503 is odd), 7 again at the end */
    int64_t n = N;
    bp_tensor *x0 = raw(bin, BP_F16, 1, &n, h), *x1 = raw(blas, BP_F16, 1, &n, h);
    for (size_t k = 0; k < NV(ops); k++) {
        bp_tensor *r0 = NULL, *r1 = NULL;
        BPT_OK(bp_unary(ops[k], x0, &r0));
        BPT_OK(bp_unary(ops[k], x1, &r1));
        uint16_t *a = bpt_read_bytes(r0), *b = bpt_read_bytes(r1);
        int64_t off = 0;
        for (int64_t i = 0; i < N; i++)
            if (a[i] != b[i] && off++ < 3)
                cr_log_error("%s f16 %s x = 0x%04x: 0x%04x, reference 0x%04x", level,
                             bp_op_name(ops[k]), h[i], b[i], a[i]);
        cr_expect_eq(off, 0, "%s f16 %s: %lld elements differ from the reference", level,
                     bp_op_name(ops[k]), (long long)off);
        free(a), free(b);
        bp_tensor_release(r0), bp_tensor_release(r1);
    }
    bp_tensor_release(x0), bp_tensor_release(x1);
    free(h);
}

static void level_matches_the_reference(const char *level)
{
    bp_backend *bin, *blas;
    bp_context *ctx = level_or_skip(level, &bin, &blas);
    bp_device_info info = {.struct_size = sizeof info};
    BPT_OK(bp_backend_device_info(blas, &info));
    char want[64];
    snprintf(want, sizeof want, "vector math: %s (", level);
    cr_expect(strstr(info.detail, want) != NULL, "simd = %s, detail: %s", level, info.detail);
    f32_unary_within_one_ulp(bin, blas, level);
    f64_unary_within_1e14(bin, blas, level);
    f32_pow_within_one_ulp(bin, blas, level);
    f32_pow_near_one_with_large_exponents(bin, blas, level);
    f32_rsqrt_next_to_rounding_boundaries(bin, blas, level);
    f16_heavy_ops_bit_for_bit(bin, blas, level);
    column_folds_bit_for_bit(bin, blas, level);
    softmax_f64_rows_close(bin, blas, level);
    narrow_conv_close(bin, blas, level);
    bp_context_destroy(ctx);
}

Test(blas_cpu_simd, avx512_kernels_match_the_reference) { level_matches_the_reference("avx512"); }
Test(blas_cpu_simd, avx2_kernels_match_the_reference) { level_matches_the_reference("avx2"); }
Test(blas_cpu_simd, baseline_kernels_match_the_reference) { level_matches_the_reference("baseline"); }

/* AVX2 and AVX-512 run the same formulas (fma where there is one): only the
 * vector width differs, never a bit of a result. pow, not swept here, has
 * its own formula at each level. */
Test(blas_cpu_simd, avx2_and_avx512_kernels_give_the_same_bits)
{
    bp_backend *bin, *b512, *b256;
    bp_context *c512 = level_or_skip("avx512", &bin, &b512);
    bp_context *c256 = level_or_skip("avx2", &bin, &b256);
    float *x = sweep_f32();
    int64_t n = SWEEP;
    bp_tensor *x512 = raw(b512, BP_F32, 1, &n, x), *x256 = raw(b256, BP_F32, 1, &n, x);
    for (size_t k = 0; k < NV(MATH); k++) {
        bp_tensor *r512 = NULL, *r256 = NULL;
        BPT_OK(bp_unary(MATH[k], x512, &r512));
        BPT_OK(bp_unary(MATH[k], x256, &r256));
        cr_expect(bpt_same_bytes(r512, r256), "f32 %s: avx512 and avx2 differ", bp_op_name(MATH[k]));
        bp_tensor_release(r512), bp_tensor_release(r256);
    }
    bp_tensor_release(x512), bp_tensor_release(x256);
    /* a convolution over few positions: the dots kernel's 256-bit code at both */
    const int64_t xs[3] = {2, 37, 4}, ws[3] = {11, 37, 3};
    bp_tensor *cx[2], *cw[2], *cy[2] = {NULL, NULL};
    bp_backend *bes[2] = {b512, b256};
    const bp_window win = {.struct_size = sizeof win, .pads = {1, 1}};
    for (int i = 0; i < 2; i++) {
        cx[i] = raw(bes[i], BP_F32, 3, xs, x);
        cw[i] = raw(bes[i], BP_F32, 3, ws, x + 1000);
        BPT_OK(bp_conv(cx[i], cw[i], NULL, &win, &cy[i]));
    }
    cr_expect(bpt_same_bytes(cy[0], cy[1]), "f32 conv over 4 positions: avx512 and avx2 differ");
    for (int i = 0; i < 2; i++)
        bp_tensor_release(cx[i]), bp_tensor_release(cw[i]), bp_tensor_release(cy[i]);
    free(x);
    bp_context_destroy(c512);
    bp_context_destroy(c256);
}

/* The default is the widest level that opens here, and the detail says so */
Test(blas_cpu_simd, the_widest_level_this_cpu_runs_is_the_default)
{
    bp_backend *bin, *blas;
    bp_context *ctx;
    char why[1024];
    if (open_level(NULL, &ctx, &bin, &blas, why, sizeof why) != BP_OK) {
        bp_context_destroy(ctx);
        cr_skip_test("the blas_cpu plugin is not available: %s", why);
    }
    bp_device_info info = {.struct_size = sizeof info};
    BPT_OK(bp_backend_device_info(blas, &info));
    bp_context_destroy(ctx);
    static const char *const levels[] = {"avx512", "avx2", "baseline"};
    for (size_t i = 0; i < NV(levels); i++) {
        bp_backend *b2;
        if (open_level(levels[i], &ctx, &bin, &b2, why, sizeof why) != BP_OK) {
            bp_context_destroy(ctx);
            continue;
        }
        bp_context_destroy(ctx);
        char want[96];
        snprintf(want, sizeof want, "vector math: %s (", levels[i]);
        cr_expect(strstr(info.detail, want) && strstr(info.detail, "the widest this CPU runs"),
                  "the first level that opens is %s; the default's detail: %s", levels[i],
                  info.detail);
        return;
    }
    cr_assert_fail("no level opens, not even the baseline");
}

/* A level the simd key names is reported as the key's, not the CPU's */
Test(blas_cpu_simd, a_level_set_by_the_simd_key_is_reported_as_the_keys)
{
    bp_backend *bin, *blas;
    bp_context *ctx = level_or_skip("baseline", &bin, &blas);
    bp_device_info info = {.struct_size = sizeof info};
    BPT_OK(bp_backend_device_info(blas, &info));
    bp_context_destroy(ctx);
    cr_expect(strstr(info.detail, "vector math: baseline (") &&
                  strstr(info.detail, "set by the simd key"),
              "simd = baseline: %s", info.detail);
}

/* A name that is no level is a configuration error naming the choices; a
 * level the CPU cannot run is one naming the widest it can */
Test(blas_cpu_simd, simd_key_refuses_unknown_levels_and_levels_the_cpu_lacks)
{
    bp_backend *bin, *blas;
    bp_context *ctx;
    char why[1024];
    if (open_level("baseline", &ctx, &bin, &blas, why, sizeof why) != BP_OK) {
        bp_context_destroy(ctx);
        cr_skip_test("the blas_cpu plugin is not available: %s", why);
    }
    bp_context_destroy(ctx);
    bp_status st = open_level("sse9", &ctx, &bin, &blas, why, sizeof why);
    bp_context_destroy(ctx);
    cr_expect_eq(st, BP_ERR_CONFIG, "simd = sse9: %s", bp_status_string(st));
    cr_expect(strstr(why, "simd") && strstr(why, "auto") && strstr(why, "baseline"),
              "simd = sse9: %s", why);
    static const char *const wide[] = {"avx512", "avx2"};
    for (size_t i = 0; i < NV(wide); i++) {
        st = open_level(wide[i], &ctx, &bin, &blas, why, sizeof why);
        bp_context_destroy(ctx);
        if (st != BP_OK)
            cr_expect(st == BP_ERR_CONFIG && (strstr(why, "cannot run") || strstr(why, "expected auto")),
                      "simd = %s: %s: %s", wide[i], bp_status_string(st), why);
    }
}

/* blas_cpu's vectorised kernels, against
 * the binary reference: f64 tanh (its small-argument branch, the switch
 * between the two formulas, the IEEE limits) and f32 pow (specials patched
 * with the reference's bits, broadcast operands). Lengths
 * are not a multiple of the vector width or of the kernels' chunk. Skipped
 * when the plugin was not built (no OpenBLAS). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

static bp_context *two_backends(bp_backend **bin, bp_backend **blas)
{
    bp_context *ctx = bpt_context();
    BPT_OK(bp_backend_get(ctx, "binary", bin));
    if (bp_backend_get(ctx, "blas_cpu", blas) != BP_OK) {
        bp_context_destroy(ctx);
        cr_skip_test("the blas_cpu plugin is not available: %s", bp_last_error());
    }
    return ctx;
}

/* Element i of an f32 or f64 tensor, as a double (malloc'd copy). */
static double *values_of(const bp_tensor *t)
{
    int64_t n = bp_tensor_numel(t);
    size_t nb = bp_tensor_nbytes(t);
    void *p = malloc(nb ? nb : 1);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    cr_assert(p && v);
    BPT_OK(bp_tensor_to_host(t, p, nb));
    for (int64_t i = 0; i < n; i++)
        v[i] = bp_tensor_dtype(t) == BP_F64 ? ((double *)p)[i] : ((float *)p)[i];
    free(p);
    return v;
}

/* Every element of got equals want (both NaN, or the same value with the
 * same sign of zero) or lies within rel * |want| + tiny (tiny: one step of
 * the subnormals, where a relative bound means nothing). */
static void expect_close(const char *what, const bp_tensor *want, const bp_tensor *got,
                         double rel, double tiny)
{
    int64_t n = bp_tensor_numel(want), off = 0;
    cr_assert_eq(n, bp_tensor_numel(got), "%s: sizes differ", what);
    double *w = values_of(want), *g = values_of(got);
    for (int64_t i = 0; i < n; i++) {
        bool same = (w[i] != w[i] && g[i] != g[i]) ||
                    (w[i] == g[i] && signbit(w[i]) == signbit(g[i])) ||
                    (w[i] == w[i] && fabs(w[i] - g[i]) <= rel * fabs(w[i]) + tiny);
        if (!same && off++ < 3)
            cr_log_error("%s: element %lld: %.17g, want %.17g", what, (long long)i, g[i], w[i]);
    }
    cr_expect_eq(off, 0, "%s: %lld elements apart", what, (long long)off);
    free(w);
    free(g);
}

/* f64 tanh: the binary backend's libm against blas_cpu's kernel, within
 * 1e-15 relative (the kernel is within 3 ulp; the conformance file allows
 * 512). Arguments dense around 0, around the switch at ln2/4, through the
 * range where tanh leaves 1, and the specials. */
Test(blas_cpu_vmath, tanh_f64_kernel_near_zero_at_its_switch_and_at_the_limits)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    enum { N = 40009 };
    double *v = malloc(N * sizeof *v);
    cr_assert(v);
    for (int64_t i = 0; i < N; i++) {
        double u = (double)((i * 7919) % 10007) / 10007.0 - 0.5; /* [-0.5, 0.5) */
        switch (i % 5) {
        case 0: v[i] = u * 0.7; break;                                  /* both sides of the switch */
        case 1: v[i] = 0.17328679513998632 * (1.0 + u * 1e-6); break;  /* at the switch */
        case 2: v[i] = ldexp(u, -(int)(i % 60)); break;                 /* tiny, subnormal-free */
        case 3: v[i] = u * 50.0; break;                                 /* saturating */
        default: v[i] = u * 8.0; break;
        }
    }
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e-310,
                                     -4e-320, 0x1p-1022, 19.06, 20.0, -20.5, 710.0, 1e300};
    for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
        v[k * 11] = special[k];
    bp_tensor *x0 = bpt_tensor(bin, BP_F64, 1, (int64_t[]){N}, v), *x1 = NULL;
    BPT_OK(bp_backend_copy(x0, blas, &x1));
    bp_tensor *r0 = NULL, *r1 = NULL;
    BPT_OK(bp_unary(BP_OP_TANH, x0, &r0));
    BPT_OK(bp_unary(BP_OP_TANH, x1, &r1));
    expect_close("tanh f64", r0, r1, 1e-15, 0x1p-1074);
    bp_tensor_release(r0), bp_tensor_release(r1);
    bp_tensor_release(x0), bp_tensor_release(x1);
    free(v);
    bp_context_destroy(ctx);
}

/* f32 pow: within one f32 ulp of the reference (a result whose exact value
 * lies at or near a rounding boundary may round the other way: 2^-150, a
 * tie that the reference rounds to 0, can come out as 2^-149), and the
 * reference's own bits for every special case: zero, negative, infinite and
 * NaN bases, infinite and NaN exponents, 1^NaN, x^0, overflow, underflow to
 * subnormals and zero. Dense, with one broadcast exponent, and broadcast
 * along an outer axis. */
Test(blas_cpu_vmath, pow_f32_kernel_specials_broadcast_and_odd_lengths)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    enum { N = 30011 };
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    cr_assert(a && b);
    for (int64_t i = 0; i < N; i++) {
        double u = (double)((i * 7919) % 10007) / 10007.0; /* [0, 1) */
        double w = (double)((i * 104729) % 9973) / 9973.0;
        switch (i % 4) {
        case 0: a[i] = 0.1 + 9.9 * u, b[i] = 8.0 * w - 4.0; break;
        case 1: a[i] = ldexp(u, (int)(i % 200) - 100), b[i] = 2.0 * w - 1.0; break;
        case 2: a[i] = 4.0 * u, b[i] = 300.0 * w - 150.0; break;        /* overflow, underflow */
        default: a[i] = (double)(i % 9) - 4.0, b[i] = (double)(i % 7) - 3.0; break;
        }
    }
    static const double sa[] = {0.0,  -0.0,     INFINITY, -INFINITY, NAN,  1.0,  1.0,
                                -8.0, -2.0,     0.0,      2.0,       1e-45, 3.0, -0.0,
                                0.5,  INFINITY, 2.0,      -1.0,      NAN,   0.0};
    static const double sb[] = {2.0,  -1.0, 0.5,  3.0,       1.0,  NAN,  INFINITY,
                                1.0 / 3, 3.0, -2.0, 128.0,   0.5,  -0.0, -3.0,
                                -INFINITY, -1.0, -150.0, INFINITY, 0.0, NAN};
    for (size_t k = 0; k < sizeof sa / sizeof sa[0]; k++)
        a[k * 13] = sa[k], b[k * 13] = sb[k];
    bp_tensor *a0 = bpt_tensor(bin, BP_F32, 1, (int64_t[]){N}, a), *a1 = NULL;
    bp_tensor *b0 = bpt_tensor(bin, BP_F32, 1, (int64_t[]){N}, b), *b1 = NULL;
    bp_tensor *e0 = bpt_tensor(bin, BP_F32, 1, (int64_t[]){1}, (double[]){-2.5}), *e1 = NULL;
    BPT_OK(bp_backend_copy(a0, blas, &a1));
    BPT_OK(bp_backend_copy(b0, blas, &b1));
    BPT_OK(bp_backend_copy(e0, blas, &e1));
    bp_tensor *r0 = NULL, *r1 = NULL;
    BPT_OK(bp_pow(a0, b0, &r0));
    BPT_OK(bp_pow(a1, b1, &r1));
    expect_close("pow f32", r0, r1, 0x1p-23, 0x1p-149);
    bp_tensor_release(r0), bp_tensor_release(r1);
    BPT_OK(bp_pow(a0, e0, &r0)); /* one exponent for every base */
    BPT_OK(bp_pow(a1, e1, &r1));
    expect_close("pow f32, broadcast exponent", r0, r1, 0x1p-23, 0x1p-149);
    bp_tensor_release(r0), bp_tensor_release(r1);
    /* broadcast along an outer axis: a (7, 4287) base with a (1, 4287)
     * exponent (the kernel, row by row) and a (7, 1) base with the (7, 4287)
     * exponent (the base's stride 0: the reference) */
    enum { R = 7, C = 4287 };
    bp_tensor *m0 = bpt_tensor(bin, BP_F32, 2, (int64_t[]){R, C}, a), *m1 = NULL;
    bp_tensor *w0 = bpt_tensor(bin, BP_F32, 2, (int64_t[]){1, C}, b), *w1 = NULL;
    bp_tensor *c0 = bpt_tensor(bin, BP_F32, 2, (int64_t[]){R, 1}, a + 5), *c1 = NULL;
    BPT_OK(bp_backend_copy(m0, blas, &m1));
    BPT_OK(bp_backend_copy(w0, blas, &w1));
    BPT_OK(bp_backend_copy(c0, blas, &c1));
    BPT_OK(bp_pow(m0, w0, &r0));
    BPT_OK(bp_pow(m1, w1, &r1));
    expect_close("pow f32, exponent rows broadcast", r0, r1, 0x1p-23, 0x1p-149);
    bp_tensor_release(r0), bp_tensor_release(r1);
    BPT_OK(bp_pow(c0, m0, &r0));
    BPT_OK(bp_pow(c1, m1, &r1));
    expect_close("pow f32, base columns broadcast", r0, r1, 0x1p-23, 0x1p-149);
    bp_tensor_release(r0), bp_tensor_release(r1);
    bp_tensor_release(m0), bp_tensor_release(m1), bp_tensor_release(w0), bp_tensor_release(w1);
    bp_tensor_release(c0), bp_tensor_release(c1);
    bp_tensor_release(a0), bp_tensor_release(a1), bp_tensor_release(b0), bp_tensor_release(b1);
    bp_tensor_release(e0), bp_tensor_release(e1);
    free(a), free(b);
    bp_context_destroy(ctx);
}

/* The i64 results of two tensors, equal element by element. */
static void expect_same_index(const char *what, const bp_tensor *want, const bp_tensor *got)
{
    int64_t n = bp_tensor_numel(want), off = 0;
    cr_assert_eq(n, bp_tensor_numel(got), "%s: sizes differ", what);
    int64_t *w = malloc((size_t)(n ? n : 1) * 8), *g = malloc((size_t)(n ? n : 1) * 8);
    cr_assert(w && g);
    BPT_OK(bp_tensor_to_host(want, w, (size_t)n * 8));
    BPT_OK(bp_tensor_to_host(got, g, (size_t)n * 8));
    for (int64_t i = 0; i < n; i++)
        if (w[i] != g[i] && off++ < 3)
            cr_log_error("%s: row %lld: %lld, want %lld", what, (long long)i, (long long)g[i],
                         (long long)w[i]);
    cr_expect_eq(off, 0, "%s: %lld rows apart", what, (long long)off);
    free(w), free(g);
}

/* ARGMAX/ARGMIN of dense rows and of everything (blas_cpu's one-pass lane
 * kernel) against the reference: rows of every length 1..70 (not multiples
 * of the 8 or 16 lanes), ties (the first index, also when equal maxima sit
 * in different lanes), 0 and -0 tied, infinities, a NaN at the start, in
 * the vector part, in the tail, two NaNs, and a long run (the chunked
 * everything-path, on threads) with a NaN late and with ties across chunks. */
Test(blas_cpu_vmath, argmax_argmin_rows_ties_nan_signed_zero_and_odd_lengths)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    enum { R = 24, C0 = 70 };
    double *v = malloc(R * C0 * sizeof *v);
    cr_assert(v);
    bp_op ops[2] = {BP_OP_ARGMAX, BP_OP_ARGMIN};
    for (int dt = 0; dt < 2; dt++)
        for (int64_t c = 1; c <= C0; c++) {
            for (int64_t r = 0; r < R; r++)
                for (int64_t i = 0; i < c; i++) {
                    double *e = &v[r * c + i];
                    switch (r % 8) {
                    case 0: *e = (double)((i * 7919 + r) % 13); break;  /* many ties */
                    case 1: *e = i % 2 ? 0.0 : -0.0; break;              /* all zero */
                    case 2: *e = 5.0; break;                             /* all equal */
                    case 3: *e = (double)((i * 31) % 17) - 8.0; break;
                    case 4: *e = i == c / 2 ? INFINITY : i == c / 3 ? -INFINITY : (double)(i % 5); break;
                    default: *e = (double)((i * 104729 + r * 7) % 9973) / 9973.0; break;
                    }
                }
            v[5 * c + 0] = NAN;                   /* row 5: NaN first */
            v[6 * c + (c - 1)] = NAN;             /* row 6: NaN last (the tail) */
            v[7 * c + c / 2] = NAN;               /* row 7: two NaNs */
            v[7 * c + (c - 1) / 3 + (c > 3)] = -NAN;
            v[13 * c + c / 2] = 2.0;              /* row 13: one max, min elsewhere */
            v[13 * c + (c - 1)] = 2.0;
            bp_dtype t = dt ? BP_F64 : BP_F32;
            bp_tensor *x0 = bpt_tensor(bin, t, 2, (int64_t[]){R, c}, v), *x1 = NULL;
            BPT_OK(bp_backend_copy(x0, blas, &x1));
            for (int k = 0; k < 2; k++) {
                bp_tensor *r0 = NULL, *r1 = NULL;
                BPT_OK(bp_reduce(ops[k], x0, 1, (int32_t[]){1}, false, &r0));
                BPT_OK(bp_reduce(ops[k], x1, 1, (int32_t[]){1}, false, &r1));
                expect_same_index(k ? "argmin rows" : "argmax rows", r0, r1);
                bp_tensor_release(r0), bp_tensor_release(r1);
            }
            bp_tensor_release(x0), bp_tensor_release(x1);
        }
    free(v);

    /* everything: long enough for the threaded chunks */
    enum { N = 1 << 20 };
    double *w = malloc(N * sizeof *w);
    cr_assert(w);
    for (int64_t i = 0; i < N; i++)
        w[i] = (double)((i * 7919) % 10007);
    w[3] = w[N - 5] = w[N / 2 + 1] = 20000.0; /* the max, tied across chunks */
    w[N / 3] = w[N - 2] = -1.0;               /* the min, tied */
    for (int pass = 0; pass < 2; pass++) {
        if (pass)
            w[N - 100] = NAN, w[N - 3] = NAN; /* NaNs late */
        for (int dt = 0; dt < 2; dt++) {
            bp_tensor *x0 = bpt_tensor(bin, dt ? BP_F64 : BP_F32, 1, (int64_t[]){N}, w), *x1 = NULL;
            BPT_OK(bp_backend_copy(x0, blas, &x1));
            for (int k = 0; k < 2; k++) {
                bp_tensor *r0 = NULL, *r1 = NULL;
                BPT_OK(bp_reduce(ops[k], x0, 0, NULL, false, &r0));
                BPT_OK(bp_reduce(ops[k], x1, 0, NULL, false, &r1));
                expect_same_index(k ? "argmin all" : "argmax all", r0, r1);
                bp_tensor_release(r0), bp_tensor_release(r1);
            }
            bp_tensor_release(x0), bp_tensor_release(x1);
        }
    }
    free(w);
    bp_context_destroy(ctx);
}

/* Gather of whole rows (the dense-block path, which prefetches the row a few
 * indices ahead): rows of 280 and 8 bytes, index lists shorter and longer
 * than the prefetch distance, negative indices, repeated ones, the last row;
 * each backend's result against the rows picked by hand. */
Test(blas_cpu_vmath, gather_rows_with_prefetch_negative_repeated_and_short_index_lists)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    enum { R = 301 };
    static const int64_t widths[] = {70, 2};
    static const int64_t lens[] = {1, 3, 8, 9, 37};
    double *v = malloc(R * 70 * sizeof *v);
    int64_t idx[37];
    cr_assert(v);
    for (int64_t i = 0; i < R * 70; i++)
        v[i] = (double)i;
    for (int64_t k = 0; k < 37; k++)
        idx[k] = k % 4 == 1 ? -1 - (k * 13) % R : k % 5 == 2 ? idx[k - 1] : (k * 97) % R;
    idx[0] = R - 1;
    for (size_t w = 0; w < 2; w++)
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
            int64_t c = widths[w], n = lens[l];
            bp_tensor *x0 = bpt_tensor(bin, BP_F32, 2, (int64_t[]){R, c}, v), *x1 = NULL;
            bp_tensor *i0 = bpt_tensor_i64(bin, BP_I64, 1, (int64_t[]){n}, idx), *i1 = NULL;
            BPT_OK(bp_backend_copy(x0, blas, &x1));
            BPT_OK(bp_backend_copy(i0, blas, &i1));
            bp_tensor *r[2] = {NULL, NULL};
            BPT_OK(bp_gather(x0, i0, 0, &r[0]));
            BPT_OK(bp_gather(x1, i1, 0, &r[1]));
            for (int b = 0; b < 2; b++) {
                double *g = values_of(r[b]);
                int64_t off = 0;
                for (int64_t k = 0; k < n; k++) {
                    int64_t row = idx[k] < 0 ? idx[k] + R : idx[k];
                    for (int64_t j = 0; j < c; j++)
                        off += g[k * c + j] != (double)(row * c + j);
                }
                cr_expect_eq(off, 0, "%s: width %lld, %lld indices: %lld elements wrong",
                             b ? "blas_cpu" : "binary", (long long)c, (long long)n, (long long)off);
                free(g);
                bp_tensor_release(r[b]);
            }
            bp_tensor_release(x0), bp_tensor_release(x1), bp_tensor_release(i0), bp_tensor_release(i1);
        }
    free(v);
    bp_context_destroy(ctx);
}

/* Squares by pow(a, 2) with one exponent for every base (a scalar, or a (1, 1)
 * broadcast over rows): the reference's bits for every base, negative,
 * subnormal, huge (inf), -0, inf and NaN among them. (A tensor of exponents
 * that happen to be 2 takes the general kernel: within an ulp.) */
Test(blas_cpu_vmath, pow_f32_by_two_gives_the_reference_bits)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    enum { N = 4099 };
    double *a = malloc(N * sizeof *a), two[1] = {2.0};
    cr_assert(a);
    static const double sa[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e-45, -1e-45,
                                0x1p-75, 0x1p-74, 0x1.fffffep127, -1.8446743e19, 1.0000001};
    for (int64_t i = 0; i < N; i++) {
        double u = (double)((i * 7919) % 10007) / 10007.0 - 0.5;
        a[i] = i < (int64_t)(sizeof sa / sizeof sa[0]) ? sa[i] : ldexp(u, (int)(i % 300) - 150);
    }
    bp_tensor *a0 = bpt_tensor(bin, BP_F32, 1, (int64_t[]){N}, a), *a1 = NULL;
    bp_tensor *e0 = bpt_tensor(bin, BP_F32, 0, NULL, two), *e1 = NULL;
    bp_tensor *m0 = bpt_tensor(bin, BP_F32, 2, (int64_t[]){N / 4, 4}, a), *m1 = NULL;
    bp_tensor *t0 = bpt_tensor(bin, BP_F32, 2, (int64_t[]){1, 1}, two), *t1 = NULL;
    BPT_OK(bp_backend_copy(a0, blas, &a1));
    BPT_OK(bp_backend_copy(e0, blas, &e1));
    BPT_OK(bp_backend_copy(t0, blas, &t1));
    BPT_OK(bp_backend_copy(m0, blas, &m1));
    bp_tensor *r0 = NULL, *r1 = NULL;
    BPT_OK(bp_pow(a0, e0, &r0));
    BPT_OK(bp_pow(a1, e1, &r1));
    cr_expect(bpt_same_bytes(r0, r1), "pow(a, 2): not the reference's bits");
    bp_tensor_release(r0), bp_tensor_release(r1);
    BPT_OK(bp_pow(m0, t0, &r0));
    BPT_OK(bp_pow(m1, t1, &r1));
    cr_expect(bpt_same_bytes(r0, r1), "pow(rows, a (1, 1) two): not the reference's bits");
    bp_tensor_release(r0), bp_tensor_release(r1);
    bp_tensor_release(a0), bp_tensor_release(a1), bp_tensor_release(e0), bp_tensor_release(e1);
    bp_tensor_release(t0), bp_tensor_release(t1), bp_tensor_release(m0), bp_tensor_release(m1);
    free(a);
    bp_context_destroy(ctx);
}

/* op on x0 (binary) and x1 (blas_cpu): the same bytes */
static void expect_same_unary(bp_op op, const bp_tensor *x0, const bp_tensor *x1,
                              const char *what)
{
    bp_tensor *r0 = NULL, *r1 = NULL;
    BPT_OK(bp_unary(op, x0, &r0));
    BPT_OK(bp_unary(op, x1, &r1));
    cr_expect(bpt_same_bytes(r0, r1), "%s %s %s: not the reference's bits",
              bp_dtype_name(bp_tensor_dtype(x0)), bp_op_name(op), what);
    bp_tensor_release(r0), bp_tensor_release(r1);
}

/* Heavy unary ops on f16 and bf16 go by a table of all 65536 results once a
 * device has been asked for 2^16 elements of one: the reference's bits
 * before the table (a call of 4096), from the call that makes it (all 65536
 * bit patterns: NaN payloads, subnormals, infinities), and after it, on a
 * slice (every third element) and a transpose too. */
Test(blas_cpu_vmath, half_float_heavy_ops_by_table_give_the_reference_bits)
{
    bp_backend *bin, *blas;
    bp_context *ctx = two_backends(&bin, &blas);
    enum { N = 1 << 16 };
    uint16_t *bits = malloc(N * sizeof *bits);
    cr_assert_not_null(bits);
    for (int32_t i = 0; i < N; i++)
        bits[i] = (uint16_t)(i * 40503u); /* every pattern once, in scrambled order */
    static const bp_op ops[] = {BP_OP_EXP, BP_OP_LOG, BP_OP_SIN, BP_OP_TANH, BP_OP_ERF,
                                BP_OP_SIGMOID, BP_OP_RSQRT};
    static const bp_dtype dts[] = {BP_F16, BP_BF16};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        int64_t n = N, small = 4096;
        bp_tensor *x0 = NULL, *x1 = NULL, *s0 = NULL, *s1 = NULL, *t0 = NULL, *t1 = NULL;
        bp_tensor *m0 = NULL, *m1 = NULL, *p0 = NULL, *p1 = NULL;
        BPT_OK(bp_tensor_from_host(bin, dts[d], 1, &n, bits, &x0));
        BPT_OK(bp_tensor_from_host(blas, dts[d], 1, &n, bits, &x1));
        BPT_OK(bp_tensor_from_host(bin, dts[d], 1, &small, bits, &s0));
        BPT_OK(bp_tensor_from_host(blas, dts[d], 1, &small, bits, &s1));
        BPT_OK(bp_slice(x0, (int64_t[]){1}, NULL, (int64_t[]){3}, &t0));
        BPT_OK(bp_slice(x1, (int64_t[]){1}, NULL, (int64_t[]){3}, &t1));
        BPT_OK(bp_reshape(x0, 2, (int64_t[]){256, 256}, &m0));
        BPT_OK(bp_reshape(x1, 2, (int64_t[]){256, 256}, &m1));
        BPT_OK(bp_transpose(m0, NULL, &p0));
        BPT_OK(bp_transpose(m1, NULL, &p1));
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            expect_same_unary(ops[k], s0, s1, "4096, before the table");
            expect_same_unary(ops[k], x0, x1, "every input, making the table");
            expect_same_unary(ops[k], s0, s1, "4096, by the table");
            expect_same_unary(ops[k], t0, t1, "every third input, by the table");
            expect_same_unary(ops[k], p0, p1, "transposed, by the table");
        }
        bp_tensor *all[] = {x0, x1, s0, s1, t0, t1, m0, m1, p0, p1};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            bp_tensor_release(all[i]);
    }
    free(bits);
    bp_context_destroy(ctx);
}

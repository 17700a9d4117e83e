/* Movement ops (transpose, slice, concat, broadcast_to, pad, gather), cast,
 * and the metadata-only views (reshape, squeeze, unsqueeze) and item reads:
 * every dtype, every backend, exact against the oracle (cf_oracle_*). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

/* Distinct values that survive every dtype (bool sees parity). */
static double val_for(bp_dtype dt, int64_t i)
{
    if (dt == BP_BOOL)
        return (double)(i % 2);
    if (dt == BP_U8 || dt == BP_I8)
        return (double)(i % 100);
    return (double)i - 7.0 + (bp_dtype_is_float(dt) ? 0.5 : 0.0);
}

static bp_tensor *iota(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *shape, double *vals)
{
    int64_t n = cf_numel(rank, shape);
    for (int64_t i = 0; i < n; i++)
        vals[i] = cf_round(dt, val_for(dt, i));
    return bpt_tensor(be, dt, rank, shape, vals);
}

/* The same values (from val_for(offset)) as the oracle's input array. */
static cf_array iota_array(bp_dtype dt, int32_t rank, const int64_t *shape, int64_t offset)
{
    cf_array a = bpt_array(dt, rank, shape, NULL);
    for (int64_t i = 0; i < a.n; i++)
        cf_set_f(&a, i, cf_round(dt, val_for(dt, i + offset)));
    return a;
}

/* Check the result o of an op on an input like x against the oracle's want
 * (computed by the caller), then free both arrays. */
static void expect_and_free(const char *what, const bp_tensor *o, cf_array *x, cf_array *want)
{
    bpt_expect_array(what, o, want, bpt_exact());
    cf_array_free(x);
    cf_array_free(want);
}

/* ---- transpose ------------------------------------------------------------------ */

static void check_transpose(int32_t rank, const int64_t *shape, const int32_t *perm)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            cf_array x = iota_array(dt, rank, shape, 0), want;
            cr_assert(cf_oracle_transpose(&x, perm, &want));
            bp_tensor *t = bpt_tensor_of(be, &x), *o = NULL;
            BPT_OK(bp_transpose(t, perm, &o));
            expect_and_free(perm ? "transpose(perm)" : "transpose(NULL)", o, &x, &want);
            bp_tensor_release(t);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(movement, transpose_applies_the_permutation_for_every_dtype)
{
    check_transpose(3, (int64_t[]){2, 3, 4}, (int32_t[]){1, 2, 0});
    check_transpose(3, (int64_t[]){2, 3, 4}, (int32_t[]){2, 0, 1});
    check_transpose(2, (int64_t[]){3, 5}, (int32_t[]){0, 1});
}

Test(movement, transpose_with_null_perm_reverses_the_axes)
{
    check_transpose(3, (int64_t[]){2, 3, 4}, NULL);
    check_transpose(4, (int64_t[]){2, 1, 3, 2}, NULL);
    check_transpose(1, (int64_t[]){5}, NULL);
    check_transpose(0, NULL, NULL);
}

Test(movement, transpose_of_an_empty_tensor_permutes_the_shape)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t s[3] = {2, 0, 3}, os[3] = {3, 2, 0};
        bp_tensor *t = bpt_tensor(be, BP_F32, 3, s, NULL), *o = NULL;
        BPT_OK(bp_transpose(t, (int32_t[]){2, 0, 1}, &o));
        bpt_expect_meta("transpose of (2,0,3)", o, BP_F32, 3, os);
        bp_tensor_release(t);
        bp_tensor_release(o);
    }
    bp_context_destroy(ctx);
}

/* ---- slice (ONNX semantics) -------------------------------------------------------------- */

static void check_slice(const char *what, const int64_t *starts, const int64_t *stops,
                        const int64_t *steps, const int64_t *expect_shape)
{
    int64_t shape[2] = {4, 5};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            cf_array x = iota_array(dt, 2, shape, 0), want;
            cr_assert(cf_oracle_slice(&x, starts, stops, steps, &want));
            cr_assert(want.shape[0] == expect_shape[0] && want.shape[1] == expect_shape[1],
                      "oracle self-check for %s: (%lld,%lld)", what, (long long)want.shape[0],
                      (long long)want.shape[1]);
            bp_tensor *t = bpt_tensor_of(be, &x), *o = NULL;
            BPT_OK(bp_slice(t, starts, stops, steps, &o));
            bpt_expect_meta(what, o, dt, 2, expect_shape);
            expect_and_free(what, o, &x, &want);
            bp_tensor_release(t);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(movement, slice_with_negative_starts_and_clamped_stops)
{
    check_slice("slice [1:3, -2:100]", (int64_t[]){1, -2}, (int64_t[]){3, 100}, NULL,
                (int64_t[]){2, 2});
    check_slice("slice [-100:-1, 0:-3]", (int64_t[]){-100, 0}, (int64_t[]){-1, -3}, NULL,
                (int64_t[]){3, 2});
}

Test(movement, slice_with_negative_steps_reaches_the_front_with_int64_min)
{
    check_slice("slice [-1:MIN:-1, 4:0:-2]", (int64_t[]){-1, 4}, (int64_t[]){INT64_MIN, 0},
                (int64_t[]){-1, -2}, (int64_t[]){4, 2});
    check_slice("slice [100:MIN:-3, 3:MIN:-1]", (int64_t[]){100, 3},
                (int64_t[]){INT64_MIN, INT64_MIN}, (int64_t[]){-3, -1}, (int64_t[]){2, 4});
}

Test(movement, slice_with_negative_step_clamps_a_start_before_the_front_to_zero)
{
    /* ONNX: the adjusted start (-100 + 5) clamps into [0, dim - 1] for negative
     * steps, so one element (index 0) is selected (NumPy would select none). */
    check_slice("slice [0:4, -100:MIN:-1]", (int64_t[]){0, -100}, (int64_t[]){4, INT64_MIN},
                (int64_t[]){1, -1}, (int64_t[]){4, 1});
}

Test(movement, slice_with_steps_greater_than_one)
{
    check_slice("slice [0:4:3, 1:5:2]", (int64_t[]){0, 1}, (int64_t[]){4, 5}, (int64_t[]){3, 2},
                (int64_t[]){2, 2});
}

Test(movement, slice_with_null_stops_runs_to_the_end_in_the_step_direction)
{
    check_slice("slice [2::-1, 3::2]", (int64_t[]){2, 3}, NULL, (int64_t[]){-1, 2},
                (int64_t[]){3, 1});
    check_slice("slice [1:, -3:]", (int64_t[]){1, -3}, NULL, NULL, (int64_t[]){3, 3});
}

Test(movement, slice_that_selects_nothing_is_empty)
{
    check_slice("slice [2:1, 0:5]", (int64_t[]){2, 0}, (int64_t[]){1, 5}, NULL, (int64_t[]){0, 5});
    check_slice("slice [0:4, 1:3:-1]", (int64_t[]){0, 1}, (int64_t[]){4, 3}, (int64_t[]){1, -1},
                (int64_t[]){4, 0});
}

/* ---- concat ----------------------------------------------------------------------------- */

Test(movement, concat_of_three_tensors_on_a_middle_axis)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            int64_t s0[3] = {2, 1, 3}, s1[3] = {2, 2, 3}, s2[3] = {2, 3, 3}, so[3] = {2, 6, 3};
            /* the middle part's values start elsewhere: the parts are distinguishable */
            cf_array x[3] = {iota_array(dt, 3, s0, 0), iota_array(dt, 3, s1, 30),
                             iota_array(dt, 3, s2, 0)}, want;
            const cf_array *xs[3] = {&x[0], &x[1], &x[2]};
            cr_assert(cf_oracle_concat(3, xs, 1, &want));
            bp_tensor *t[3] = {bpt_tensor_of(be, &x[0]), bpt_tensor_of(be, &x[1]),
                               bpt_tensor_of(be, &x[2])};
            bp_tensor *o = NULL;
            BPT_OK(bp_concat(3, (const bp_tensor *const *)t, 1, &o));
            bpt_expect_meta("concat axis 1", o, dt, 3, so);
            bpt_expect_array("concat axis 1", o, &want, bpt_exact());
            for (int i = 0; i < 3; i++) {
                bp_tensor_release(t[i]);
                cf_array_free(&x[i]);
            }
            cf_array_free(&want);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(movement, concat_skips_empty_parts_and_accepts_one_tensor)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t sa[2] = {2, 2}, se[2] = {0, 2}, so[2] = {4, 2};
        bp_tensor *a = bpt_tensor(be, BP_I32, 2, sa, (double[]){1, 2, 3, 4});
        bp_tensor *e = bpt_tensor(be, BP_I32, 2, se, NULL), *o = NULL, *one = NULL;
        const bp_tensor *parts[3] = {a, e, a};
        BPT_OK(bp_concat(3, parts, 0, &o));
        bpt_expect("concat with an empty part", o, BP_I32, 2, so,
                   (double[]){1, 2, 3, 4, 1, 2, 3, 4}, bpt_exact());
        BPT_OK(bp_concat(1, parts, 1, &one));
        bpt_expect("concat of one", one, BP_I32, 2, sa, (double[]){1, 2, 3, 4}, bpt_exact());
        bp_tensor_release(a);
        bp_tensor_release(e);
        bp_tensor_release(o);
        bp_tensor_release(one);
    }
    bp_context_destroy(ctx);
}

/* ---- broadcast_to ------------------------------------------------------------------------ */

static void check_broadcast(int32_t ri, const int64_t *si, int32_t ro, const int64_t *so)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            cf_array x = iota_array(dt, ri, si, 0), want;
            cr_assert(cf_oracle_broadcast_to(&x, ro, so, &want));
            bp_tensor *t = bpt_tensor_of(be, &x), *o = NULL;
            BPT_OK(bp_broadcast_to(t, ro, so, &o));
            expect_and_free("broadcast_to", o, &x, &want);
            bp_tensor_release(t);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(movement, broadcast_to_follows_numpy)
{
    check_broadcast(2, (int64_t[]){3, 1}, 3, (int64_t[]){2, 3, 4});
    check_broadcast(0, NULL, 2, (int64_t[]){2, 2});
    check_broadcast(1, (int64_t[]){1}, 1, (int64_t[]){0});
    check_broadcast(2, (int64_t[]){2, 3}, 2, (int64_t[]){2, 3});
    check_broadcast(3, (int64_t[]){1, 4, 1}, 4, (int64_t[]){2, 3, 4, 2});
}

/* ---- pad ----------------------------------------------------------------------------------- */

Test(movement, pad_adds_constant_borders_for_every_dtype)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            int64_t s[2] = {2, 3}, so[2] = {3, 6};
            int64_t before[2] = {1, 0}, after[2] = {0, 3};
            double pv = dt == BP_BOOL ? 1 : dt == BP_U8 ? 7 : -4;
            cf_array x = iota_array(dt, 2, s, 0), want;
            cr_assert(cf_oracle_pad(&x, before, after, pv, &want));
            bp_tensor *t = bpt_tensor_of(be, &x), *o = NULL;
            BPT_OK(bp_pad(t, before, after, pv, &o));
            bpt_expect_meta("pad", o, dt, 2, so);
            expect_and_free("pad", o, &x, &want);
            bp_tensor_release(t);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(movement, pad_of_an_empty_tensor_is_all_padding)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t s[2] = {0, 2}, so[2] = {2, 3};
        bp_tensor *t = bpt_tensor(be, BP_F32, 2, s, NULL), *o = NULL;
        BPT_OK(bp_pad(t, (int64_t[]){1, 0}, (int64_t[]){1, 1}, NAN, &o));
        bpt_expect("pad (0,2)", o, BP_F32, 2, so, (double[]){NAN, NAN, NAN, NAN, NAN, NAN},
                   bpt_exact());
        bp_tensor_release(t);
        bp_tensor_release(o);
    }
    bp_context_destroy(ctx);
}

/* pad fills only the borders and copies the interior: every element must be
 * written by exactly one of them, whatever the output's memory held before
 * (a buffer filled with a sentinel and released first, so that the
 * allocator's cache is likely to hand it back). Odd extents, padding on
 * some axes only, rank 1 to 4, and widths that are not a multiple of a
 * vector. */
static void check_pad_reused(bp_backend *be, bp_dtype dt, int32_t rank, const int64_t *s,
                             const int64_t *before, const int64_t *after)
{
    int64_t so[BP_MAX_RANK];
    for (int32_t k = 0; k < rank; k++)
        so[k] = before[k] + s[k] + after[k];
    bp_tensor *junk = NULL;
    BPT_OK(bp_full(be, dt, rank, so, 99, &junk));
    bp_tensor_release(junk);
    cf_array x = iota_array(dt, rank, s, 1), want;
    cr_assert(cf_oracle_pad(&x, before, after, -3, &want));
    bp_tensor *t = bpt_tensor_of(be, &x), *o = NULL;
    BPT_OK(bp_pad(t, before, after, -3, &o));
    bpt_expect_meta("pad", o, dt, rank, so);
    expect_and_free("pad over a reused buffer", o, &x, &want);
    bp_tensor_release(t);
    bp_tensor_release(o);
}

Test(movement, pad_border_fill_writes_each_element_once_with_odd_shapes)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        check_pad_reused(be, BP_F32, 1, (int64_t[]){13}, (int64_t[]){3}, (int64_t[]){0});
        check_pad_reused(be, BP_F32, 2, (int64_t[]){37, 29}, (int64_t[]){1, 1},
                         (int64_t[]){1, 1});
        check_pad_reused(be, BP_F64, 3, (int64_t[]){3, 5, 7}, (int64_t[]){1, 0, 2},
                         (int64_t[]){2, 3, 0});
        check_pad_reused(be, BP_I32, 3, (int64_t[]){2, 9, 3}, (int64_t[]){0, 0, 0},
                         (int64_t[]){0, 0, 0});
        check_pad_reused(be, BP_U8, 4, (int64_t[]){2, 3, 1, 5}, (int64_t[]){0, 2, 3, 0},
                         (int64_t[]){1, 0, 2, 11});
        check_pad_reused(be, BP_F32, 2, (int64_t[]){129, 67}, (int64_t[]){0, 5},
                         (int64_t[]){7, 0});
    }
    bp_context_destroy(ctx);
}

/* ---- gather (ONNX) --------------------------------------------------------------------------- */

static void check_gather(bp_dtype idx_dt, int32_t axis, int32_t ri, const int64_t *si,
                         const int64_t *idx)
{
    int64_t xs[2] = {3, 4};
    int64_t os[8];
    int32_t ro = 0;
    for (int32_t k = 0; k < axis; k++)
        os[ro++] = xs[k];
    for (int32_t k = 0; k < ri; k++)
        os[ro++] = si[k];
    for (int32_t k = axis + 1; k < 2; k++)
        os[ro++] = xs[k];
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            cf_array x = iota_array(dt, 2, xs, 0), ind = bpt_array_i64(idx_dt, ri, si, idx), want;
            cr_assert(cf_oracle_gather(&x, &ind, axis, &want));
            bp_tensor *t = bpt_tensor_of(be, &x), *it = bpt_tensor_of(be, &ind), *o = NULL;
            BPT_OK(bp_gather(t, it, axis, &o));
            char what[64];
            snprintf(what, sizeof what, "gather axis %d, %s indices", axis, bp_dtype_name(idx_dt));
            bpt_expect_meta(what, o, dt, ro, os);
            expect_and_free(what, o, &x, &want);
            cf_array_free(&ind);
            bp_tensor_release(t);
            bp_tensor_release(it);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(movement, gather_with_negative_i32_indices_on_axis_0)
{
    check_gather(BP_I32, 0, 1, (int64_t[]){4}, (int64_t[]){2, -1, 0, -3});
}

Test(movement, gather_with_i64_index_matrix_on_axis_1)
{
    check_gather(BP_I64, 1, 2, (int64_t[]){2, 2}, (int64_t[]){-4, 3, 1, -1});
}

Test(movement, gather_with_an_index_list_on_the_last_axis)
{
    /* the binary kernel's one-row-at-a-time path (indices normalised once) */
    check_gather(BP_I32, 1, 1, (int64_t[]){6}, (int64_t[]){3, -1, 0, -4, 2, 3});
    check_gather(BP_I64, 1, 1, (int64_t[]){1}, (int64_t[]){-3});
}

Test(movement, gather_with_a_rank_zero_index_drops_the_axis)
{
    check_gather(BP_I64, 0, 0, NULL, (int64_t[]){-2});
    check_gather(BP_I32, 1, 0, NULL, (int64_t[]){3});
}

Test(movement, gather_with_empty_indices_is_empty)
{
    check_gather(BP_I32, 1, 1, (int64_t[]){0}, (int64_t[]){0});
}

/* ---- cast ---------------------------------------------------------------------------------- */

/* Source values for a dtype: edge values for integers, specials and
 * fractions for floats (within every float type's range). */
static int src_values(bp_dtype dt, double *fv, int64_t *iv)
{
    if (dt == BP_BOOL) {
        iv[0] = 0;
        iv[1] = 1;
        return 2;
    }
    if (bp_dtype_is_int(dt)) {
        int64_t cand[] = {INT64_MIN, INT32_MIN, -129, -128, -1, 0, 1, 2, 127, 128, 255, 256,
                          300, 65504, 65520, INT32_MAX, (1LL << 53) + 1, -1310547491564814335LL,
                          (1LL << 60) + (1LL << 36) + 1, INT64_MAX - 1, INT64_MAX};
        int n = 0;
        for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
            int64_t v = cf_int_of_i64(dt, cand[i]);
            bool dup = false;
            for (int j = 0; j < n; j++)
                dup = dup || iv[j] == v;
            if (!dup)
                iv[n++] = v;
        }
        return n;
    }
    static const double f[] = {0, -0.0, 1, -1, 0.5, -0.5, 1.5, -1.5, 2.7, -2.7, 127.9, 128.5,
                               -128.9, -129.5, 255.5, 256, 300, -300, 1000.75, 65504, -65504,
                               1 + 0x1p-11, 1 + 0x3p-11, 1 + 0x1p-8, NAN, INFINITY, -INFINITY};
    int n = (int)(sizeof f / sizeof f[0]);
    for (int i = 0; i < n; i++)
        fv[i] = cf_round(dt, f[i]); /* what the source tensor holds */
    return n;
}

Test(movement, cast_between_every_pair_of_dtypes_follows_the_cast_rules)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int s = 0; s < 9; s++) {
            bp_dtype src = cf_all_dtypes[s];
            if (!bpt_supports(be, BP_OP_CAST, src))
                continue;
            double fv[64];
            int64_t iv[64];
            int64_t n = src_values(src, fv, iv);
            cf_array x = bp_dtype_is_float(src) ? bpt_array(src, 1, &n, fv)
                                                : bpt_array_i64(src, 1, &n, iv);
            bp_tensor *t = bpt_tensor_of(be, &x);
            for (int d = 0; d < 9; d++) {
                bp_dtype dst = cf_all_dtypes[d];
                cf_array want;
                cr_assert(cf_oracle_cast(&x, dst, &want));
                bp_tensor *o = NULL;
                BPT_OK(bp_cast(t, dst, &o));
                char what[64];
                snprintf(what, sizeof what, "cast %s -> %s", bp_dtype_name(src), bp_dtype_name(dst));
                bpt_expect_array(what, o, &want, bpt_exact());
                cf_array_free(&want);
                bp_tensor_release(o);
            }
            cf_array_free(&x);
            bp_tensor_release(t);
        }
    }
    bp_context_destroy(ctx);
}

/* One float -> dst case per row. */
typedef struct fcase { bp_dtype src, dst; double in; int64_t want_i; double want_f; } fcase;

static void run_fcases(const char *name, const fcase *c, size_t n)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (size_t k = 0; k < n; k++) {
            bp_tensor *t = bpt_scalar(be, c[k].src, c[k].in), *o = NULL;
            BPT_OK(bp_cast(t, c[k].dst, &o));
            char what[96];
            snprintf(what, sizeof what, "%s: cast %s %.17g -> %s", name, bp_dtype_name(c[k].src),
                     c[k].in, bp_dtype_name(c[k].dst));
            if (bp_dtype_is_float(c[k].dst))
                bpt_expect(what, o, c[k].dst, 0, NULL, &c[k].want_f, bpt_exact());
            else
                bpt_expect_i64(what, o, c[k].dst, 0, NULL, &c[k].want_i);
            bp_tensor_release(t);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(movement, cast_nan_gives_zero_for_integers_and_true_for_bool)
{
    static const fcase c[] = {
        {BP_F32, BP_I32, NAN, 0, 0}, {BP_F64, BP_I64, NAN, 0, 0}, {BP_F16, BP_U8, NAN, 0, 0},
        {BP_BF16, BP_I8, NAN, 0, 0}, {BP_F32, BP_BOOL, NAN, 1, 0},
    };
    run_fcases("NaN", c, sizeof c / sizeof c[0]);
}

Test(movement, cast_saturates_out_of_range_floats)
{
    static const fcase c[] = {
        {BP_F32, BP_U8, 300.0, 255, 0},         {BP_F64, BP_I32, -1e30, INT32_MIN, 0},
        {BP_F64, BP_I32, 1e30, INT32_MAX, 0},   {BP_F32, BP_I64, 1e30, INT64_MAX, 0},
        {BP_F32, BP_I64, -1e30, INT64_MIN, 0},  {BP_F64, BP_I64, 0x1p63, INT64_MAX, 0},
        {BP_F64, BP_I64, -0x1p63, INT64_MIN, 0}, {BP_F32, BP_U8, -1.0, 0, 0},
        {BP_F32, BP_I32, INFINITY, INT32_MAX, 0}, {BP_F16, BP_I8, -INFINITY, -128, 0},
        {BP_F64, BP_I8, 200.7, 127, 0},         {BP_F64, BP_I32, 2147483647.9, INT32_MAX, 0},
        {BP_F64, BP_I32, -2147483648.9, INT32_MIN, 0},
    };
    run_fcases("saturation", c, sizeof c / sizeof c[0]);
}

Test(movement, cast_float_to_int_truncates_toward_zero)
{
    static const fcase c[] = {
        {BP_F32, BP_I32, 2.7, 2, 0},   {BP_F32, BP_I32, -2.7, -2, 0}, {BP_F64, BP_I64, -0.9, 0, 0},
        {BP_F16, BP_I8, -1.5, -1, 0},  {BP_BF16, BP_U8, 3.5, 3, 0},   {BP_F64, BP_U8, -0.5, 0, 0},
    };
    run_fcases("truncation", c, sizeof c / sizeof c[0]);
}

Test(movement, cast_float_to_bool_is_nonzero)
{
    static const fcase c[] = {
        {BP_F32, BP_BOOL, 0.0, 0, 0},  {BP_F32, BP_BOOL, -0.0, 0, 0}, {BP_F64, BP_BOOL, 1e-300, 1, 0},
        {BP_F16, BP_BOOL, -2, 1, 0},   {BP_BF16, BP_BOOL, 0.1, 1, 0}, {BP_F32, BP_BOOL, -INFINITY, 1, 0},
    };
    run_fcases("float -> bool", c, sizeof c / sizeof c[0]);
}

Test(movement, cast_rounds_to_nearest_even_in_f16_and_bf16)
{
    static const fcase c[] = {
        {BP_F32, BP_F16, 1 + 0x1p-11, 0, 1},           {BP_F32, BP_F16, 1 + 0x3p-11, 0, 1 + 0x1p-9},
        {BP_F64, BP_F16, 1 + 0x1p-11, 0, 1},           {BP_F32, BP_BF16, 1 + 0x1p-8, 0, 1},
        {BP_F32, BP_BF16, 1 + 0x3p-8, 0, 1 + 0x1p-6},  {BP_F32, BP_F16, 65519, 0, 65504},
        {BP_F32, BP_F16, 65520, 0, INFINITY},          {BP_F32, BP_F16, 0x1p-25, 0, 0},
        {BP_F32, BP_F16, 0x3p-25, 0, 0x1p-23},         {BP_I32, BP_F16, 2049, 0, 2048},
        {BP_I32, BP_F16, 2051, 0, 2052},               {BP_F64, BP_F32, 1 + 0x1p-24, 0, 1},
    };
    run_fcases("round to nearest even", c, sizeof c / sizeof c[0]);
}

Test(movement, cast_f64_to_f16_rounds_once)
{
    /* 1 + 2^-11 + 2^-40 is above the tie: nearest f16 is 1 + 2^-10. Rounding
     * through f32 first would land on the tie 1 + 2^-11 and then on 1. */
    static const fcase c[] = {
        {BP_F64, BP_F16, 1 + 0x1p-11 + 0x1p-40, 0, 1 + 0x1p-10},
        {BP_F64, BP_F16, -(1 + 0x1p-11 + 0x1p-40), 0, -(1 + 0x1p-10)},
    };
    run_fcases("single rounding", c, sizeof c / sizeof c[0]);
}

Test(movement, cast_f64_to_bf16_rounds_once)
{
    static const fcase c[] = {
        {BP_F64, BP_BF16, 1 + 0x1p-8 + 0x1p-40, 0, 1 + 0x1p-7},
    };
    run_fcases("single rounding", c, sizeof c / sizeof c[0]);
}

Test(movement, cast_float_overflow_to_a_narrower_float_is_infinite)
{
    static const fcase c[] = {
        {BP_F64, BP_F32, 1e300, 0, INFINITY}, {BP_F64, BP_F32, -1e300, 0, -INFINITY},
        {BP_F32, BP_F16, 1e5, 0, INFINITY},   {BP_F64, BP_BF16, -1e39, 0, -INFINITY},
    };
    run_fcases("overflow", c, sizeof c / sizeof c[0]);
}

Test(movement, cast_integer_narrowing_saturates)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        struct { bp_dtype src, dst; int64_t in, want; } c[] = {
            {BP_I32, BP_U8, 300, 255},       {BP_I32, BP_U8, -1, 0},
            {BP_I64, BP_I32, 1LL << 40, INT32_MAX}, {BP_I64, BP_I32, INT64_MIN, INT32_MIN},
            {BP_I32, BP_I8, -200, -128},     {BP_U8, BP_I8, 255, 127},
            {BP_I8, BP_U8, -5, 0},           {BP_I64, BP_U8, INT64_MAX, 255},
            {BP_I32, BP_BOOL, -7, 1},        {BP_I64, BP_BOOL, 0, 0},
        };
        for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
            bp_tensor *t = bpt_tensor_i64(be, c[k].src, 0, NULL, &c[k].in), *o = NULL;
            BPT_OK(bp_cast(t, c[k].dst, &o));
            char what[96];
            snprintf(what, sizeof what, "cast %s %lld -> %s", bp_dtype_name(c[k].src),
                     (long long)c[k].in, bp_dtype_name(c[k].dst));
            bpt_expect_i64(what, o, c[k].dst, 0, NULL, &c[k].want);
            bp_tensor_release(t);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

Test(movement, cast_keeps_shape_including_empty_and_rank_zero)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t s[3] = {2, 0, 5};
        bp_tensor *t = bpt_tensor(be, BP_F32, 3, s, NULL), *o = NULL;
        BPT_OK(bp_cast(t, BP_I64, &o));
        bpt_expect_meta("cast of (2,0,5)", o, BP_I64, 3, s);
        bp_tensor_release(t);
        bp_tensor_release(o);
    }
    bp_context_destroy(ctx);
}

/* ---- reshape / squeeze / unsqueeze / item ------------------------------------------------------ */

Test(movement, reshape_infers_the_minus_one_extent_and_keeps_the_values)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            int64_t s[3] = {2, 3, 4}, want_s[2] = {4, 6}, empty_s[2] = {0, 3};
            double x[24];
            bp_tensor *t = iota(be, dt, 3, s, x), *o = NULL, *e = NULL, *e2 = NULL;
            BPT_OK(bp_reshape(t, 2, (int64_t[]){4, -1}, &o));
            bpt_expect("reshape (4,-1)", o, dt, 2, want_s, x, bpt_exact());
            e = bpt_tensor(be, dt, 2, empty_s, NULL);
            BPT_OK(bp_reshape(e, 3, (int64_t[]){3, 0, 5}, &e2));
            bpt_expect_meta("reshape (0,3) -> (3,0,5)", e2, dt, 3, (int64_t[]){3, 0, 5});
            bp_tensor_release(t);
            bp_tensor_release(o);
            bp_tensor_release(e);
            bp_tensor_release(e2);
        }
    }
    bp_context_destroy(ctx);
}

Test(movement, squeeze_and_unsqueeze_change_only_the_shape)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t s[4] = {1, 3, 1, 2};
        double x[6];
        bp_tensor *t = iota(be, BP_F64, 4, s, x), *a = NULL, *b = NULL, *c = NULL, *u = NULL,
                  *v = NULL, *w = NULL;
        BPT_OK(bp_squeeze(t, 0, NULL, &a));
        bpt_expect("squeeze all", a, BP_F64, 2, (int64_t[]){3, 2}, x, bpt_exact());
        BPT_OK(bp_squeeze(t, 1, (int32_t[]){0}, &b));
        bpt_expect("squeeze {0}", b, BP_F64, 3, (int64_t[]){3, 1, 2}, x, bpt_exact());
        BPT_OK(bp_squeeze(t, 1, (int32_t[]){-2}, &c));
        bpt_expect("squeeze {-2}", c, BP_F64, 3, (int64_t[]){1, 3, 2}, x, bpt_exact());
        BPT_OK(bp_unsqueeze(a, 0, &u));
        bpt_expect("unsqueeze 0", u, BP_F64, 3, (int64_t[]){1, 3, 2}, x, bpt_exact());
        BPT_OK(bp_unsqueeze(a, -1, &v));
        bpt_expect("unsqueeze -1", v, BP_F64, 3, (int64_t[]){3, 2, 1}, x, bpt_exact());
        BPT_OK(bp_unsqueeze(a, 2, &w));
        bpt_expect("unsqueeze 2 (= rank)", w, BP_F64, 3, (int64_t[]){3, 2, 1}, x, bpt_exact());
        cr_expect_eq(bp_tensor_backend(a), bp_tensor_backend(t));
        bp_tensor *tr = NULL;
        /* the views stay usable after the original is released */
        bp_tensor_release(t);
        BPT_OK(bp_transpose(a, NULL, &tr));
        bpt_expect("transpose of a squeezed view", tr, BP_F64, 2, (int64_t[]){2, 3},
                   (double[]){x[0], x[2], x[4], x[1], x[3], x[5]}, bpt_exact());
        bp_tensor_release(a);
        bp_tensor_release(b);
        bp_tensor_release(c);
        bp_tensor_release(u);
        bp_tensor_release(v);
        bp_tensor_release(w);
        bp_tensor_release(tr);
    }
    bp_context_destroy(ctx);
}

Test(movement, unsqueeze_of_a_scalar_gives_shape_one)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *t = bpt_scalar(be, BP_I32, 42), *u = NULL, *s = NULL;
        BPT_OK(bp_unsqueeze(t, 0, &u));
        int64_t one = 1;
        bpt_expect("unsqueeze scalar", u, BP_I32, 1, &one, (double[]){42}, bpt_exact());
        BPT_OK(bp_squeeze(u, 0, NULL, &s));
        bpt_expect("squeeze back", s, BP_I32, 0, NULL, (double[]){42}, bpt_exact());
        bp_tensor_release(t);
        bp_tensor_release(u);
        bp_tensor_release(s);
    }
    bp_context_destroy(ctx);
}

Test(movement, item_reads_any_one_element_tensor)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t s[3] = {1, 1, 1};
        bp_tensor *t = bpt_tensor(be, BP_F32, 3, s, (double[]){-2.5}), *r0 = bpt_scalar(be, BP_F16, 3);
        int64_t big = INT64_MIN + 3;
        bp_tensor *ti = bpt_tensor_i64(be, BP_I64, 3, s, &big);
        bp_tensor *tb = bpt_tensor(be, BP_BOOL, 3, s, (double[]){1});
        double f = 0;
        int64_t i = 0;
        bool b = false;
        BPT_OK(bp_item_f64(t, &f));
        cr_expect_eq(f, -2.5, "item_f64 of (1,1,1) on %s gave %g", bp_backend_name(be), f);
        BPT_OK(bp_item_f64(r0, &f));
        cr_expect_eq(f, 3.0);
        BPT_OK(bp_item_i64(ti, &i));
        cr_expect_eq(i, INT64_MIN + 3, "item_i64 must be exact beyond 2^53");
        BPT_OK(bp_item_bool(tb, &b));
        cr_expect(b);
        bp_tensor_release(t);
        bp_tensor_release(r0);
        bp_tensor_release(ti);
        bp_tensor_release(tb);
    }
    bp_context_destroy(ctx);
}

Test(movement, item_of_four_elements_is_a_shape_error)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t s[2] = {2, 2}, z = 0;
        bp_tensor *t = bpt_tensor(be, BP_F32, 2, s, (double[]){1, 2, 3, 4});
        bp_tensor *e = bpt_tensor(be, BP_F32, 1, &z, NULL);
        double f;
        int64_t i;
        bool b;
        BPT_FAILS(BP_ERR_SHAPE, bp_item_f64(t, &f));
        cr_expect_neq(bp_last_error()[0], '\0', "no message for item_f64 on 4 elements");
        BPT_FAILS(BP_ERR_SHAPE, bp_item_i64(t, &i));
        BPT_FAILS(BP_ERR_SHAPE, bp_item_bool(t, &b));
        BPT_FAILS(BP_ERR_SHAPE, bp_item_f64(e, &f));
        bp_tensor_release(t);
        bp_tensor_release(e);
    }
    bp_context_destroy(ctx);
}

Test(movement, f16_and_bf16_are_stored_as_native_16_bit_values)
{
    /* inputs built with the public converters of dtype.h, read back raw */
    float vals[4] = {1.0f, -2.5f, 65504.0f, 0.1f};
    uint16_t h[4], b[4], got[4];
    for (int i = 0; i < 4; i++) {
        h[i] = bp_f32_to_f16(vals[i]);
        b[i] = bp_f32_to_bf16(vals[i]);
    }
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        int64_t n = 4;
        bp_tensor *th = NULL, *tb = NULL, *sum = NULL;
        BPT_OK(bp_tensor_from_host(be, BP_F16, 1, &n, h, &th));
        BPT_OK(bp_tensor_from_host(be, BP_BF16, 1, &n, b, &tb));
        cr_expect_eq(bp_tensor_nbytes(th), 8u);
        cr_expect_eq(bp_tensor_nbytes(tb), 8u);
        BPT_OK(bp_tensor_to_host(th, got, sizeof got));
        cr_expect(memcmp(got, h, sizeof h) == 0, "f16 bits changed on %s", bp_backend_name(be));
        BPT_OK(bp_tensor_to_host(tb, got, sizeof got));
        cr_expect(memcmp(got, b, sizeof b) == 0, "bf16 bits changed on %s", bp_backend_name(be));
        /* x + x in f16: exact doubling, except 65504 + 65504 -> inf */
        BPT_OK(bp_add(th, th, &sum));
        BPT_OK(bp_tensor_to_host(sum, got, sizeof got));
        for (int i = 0; i < 4; i++) {
            float want = bp_f16_to_f32(h[i]) * 2.0f;
            cr_expect_eq(got[i], bp_f32_to_f16(want), "f16 %g + itself on %s: bits %04x, wanted %04x",
                         (double)bp_f16_to_f32(h[i]), bp_backend_name(be), got[i],
                         bp_f32_to_f16(want));
        }
        bp_tensor_release(th);
        bp_tensor_release(tb);
        bp_tensor_release(sum);
    }
    bp_context_destroy(ctx);
}

/* One int64 -> float case per row (the input is exact, never a double). */
typedef struct icase { bp_dtype dst; int64_t in; double want; } icase;

Test(movement, cast_i64_to_float_rounds_once_from_the_integer)
{
    /* -1310547491564814335 is -(145.5 * 2^53 - 1): just short of the halfway
     * point between the bf16 values 145 * 2^53 and 146 * 2^53. Through double
     * it lands exactly on the tie, which then rounds to even (146). The f32
     * row likewise: 2^60 + 2^36 + 1 is just above a tie of f32 but becomes the
     * tie in double. */
    static const icase c[] = {
        {BP_BF16, -1310547491564814335LL, -145.0 * 0x1p53},
        {BP_BF16, 1310547491564814335LL, 145.0 * 0x1p53},
        {BP_BF16, INT64_MAX, 0x1p63},
        {BP_BF16, INT64_MIN, -0x1p63},
        {BP_F32, (1LL << 60) + (1LL << 36) + 1, 0x1p60 + 0x1p37},
        {BP_F32, -((1LL << 60) + (1LL << 36) + 1), -(0x1p60 + 0x1p37)},
        {BP_F16, 65519, 65504},
        {BP_F16, 65520, INFINITY},
        {BP_F16, INT64_MIN, -INFINITY},
        {BP_F64, (1LL << 62) + 1, 0x1p62},
    };
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
            bp_tensor *t = bpt_tensor_i64(be, BP_I64, 0, NULL, &c[k].in), *o = NULL;
            BPT_OK(bp_cast(t, c[k].dst, &o));
            char what[96];
            snprintf(what, sizeof what, "cast i64 %lld -> %s", (long long)c[k].in,
                     bp_dtype_name(c[k].dst));
            bpt_expect(what, o, c[k].dst, 0, NULL, &c[k].want, bpt_exact());
            bp_tensor_release(t);
            bp_tensor_release(o);
        }
    }
    bp_context_destroy(ctx);
}

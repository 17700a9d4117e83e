/* The core's error messages name the fix (ops_elementwise.c, ops_index.c,
 * ops_reduce.c, ops_gemm.c, ops_compose.c, ops_einsum.c): wrong dtypes,
 * shapes, axes, NULL arguments, bad reductions, parameters and equations.
 * Every failure returns the documented code, sets *out to NULL (even over
 * garbage), and says in bp_last_error() what to do. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

#define GARBAGE ((bp_tensor *)(uintptr_t)0x10)

static void check_err(const char *call, bp_status want, bp_status got, bp_tensor *out,
                      const char *needle, bp_backend *be)
{
    const char *msg = bp_last_error();
    cr_expect_eq(got, want, "%s on %s -> %s, wanted %s: %s", call, bp_backend_name(be),
                 bp_status_string(got), bp_status_string(want), msg);
    cr_expect(out == NULL, "%s on %s failed but left *out = %p", call, bp_backend_name(be),
              (void *)out);
    cr_expect(msg && strstr(msg, needle), "%s on %s: the message does not say \"%s\": %s", call,
              bp_backend_name(be), needle, msg ? msg : "(none)");
    if (got == BP_OK && out && out != GARBAGE)
        bp_tensor_release(out);
}

/* ERR(code, needle, out, call): *out set to garbage first; the message must
 * contain needle. */
#define ERR(code, needle, out, call)                                     \
    do {                                                                 \
        (out) = GARBAGE;                                                 \
        bp_status st_ = (call);                                          \
        check_err(#call, (code), st_, (out), (needle), be);              \
    } while (0)

typedef struct fx {
    bp_tensor *f32_23, *f64_23, *i32_23, *bool_23, *f32_3, *f32_2, *f32_234, *i64_23, *f32_idx,
        *i64_idx2, *f32_4d;
} fx;

static fx make_fx(bp_backend *be)
{
    double v[48] = {0};
    fx f;
    f.f32_23 = bpt_tensor(be, BP_F32, 2, (int64_t[]){2, 3}, v);
    f.f64_23 = bpt_tensor(be, BP_F64, 2, (int64_t[]){2, 3}, v);
    f.i32_23 = bpt_tensor(be, BP_I32, 2, (int64_t[]){2, 3}, v);
    f.bool_23 = bpt_tensor(be, BP_BOOL, 2, (int64_t[]){2, 3}, v);
    f.f32_3 = bpt_tensor(be, BP_F32, 1, (int64_t[]){3}, v);
    f.f32_2 = bpt_tensor(be, BP_F32, 1, (int64_t[]){2}, v);
    f.f32_234 = bpt_tensor(be, BP_F32, 3, (int64_t[]){2, 3, 4}, v);
    f.i64_23 = bpt_tensor(be, BP_I64, 2, (int64_t[]){2, 3}, v);
    f.f32_idx = bpt_tensor(be, BP_F32, 2, (int64_t[]){2, 3}, v);
    f.i64_idx2 = bpt_tensor(be, BP_I64, 2, (int64_t[]){2, 2}, v);
    f.f32_4d = bpt_tensor(be, BP_F32, 4, (int64_t[]){1, 3, 2, 2}, v);
    return f;
}

static void free_fx(fx *f)
{
    bp_tensor *all[] = {f->f32_23, f->f64_23, f->i32_23, f->bool_23, f->f32_3, f->f32_2,
                        f->f32_234, f->i64_23, f->f32_idx, f->i64_idx2, f->f32_4d};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bp_tensor_release(all[i]);
}

/* Every backend, with a fixture f made before the body and freed after it
 * (the inner loop runs once). */
#define FOR_EACH(ctx, be, f) \
    bp_context *ctx = bpt_context(); \
    bp_backend *be; \
    BPT_FOR_EACH_BACKEND(ctx, be) for (fx f = make_fx(be), *once_ = &f; once_; once_ = NULL, free_fx(&f))

/* ---- dtypes ------------------------------------------------------------------------ */

Test(error_messages, float_only_ops_refuse_integers_naming_bp_cast)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o;
        ERR(BP_ERR_DTYPE, "bp_cast", o, bp_acos(f.i32_23, &o));
        ERR(BP_ERR_DTYPE, "float dtypes", o, bp_softplus(f.bool_23, &o));
        ERR(BP_ERR_DTYPE, "bp_cast", o, bp_elu(f.i32_23, 1, &o));
        ERR(BP_ERR_DTYPE, "bp_cast", o, bp_hard_sigmoid(f.i64_23, 0.2, 0.5, &o));
        ERR(BP_ERR_DTYPE, "float dtypes", o, bp_reduce_l2(f.i32_23, 0, NULL, false, &o));
        ERR(BP_ERR_DTYPE, "float dtypes", o, bp_reduce_var(f.i32_23, 0, NULL, false, 0, &o));
        ERR(BP_ERR_DTYPE, "float dtypes", o, bp_hardmax(f.i32_23, 1, &o));
        const bp_tensor *xs[2] = {f.i32_23, f.i32_23};
        ERR(BP_ERR_DTYPE, "float dtypes", o, bp_mean_n(2, xs, &o));
    }
    bp_context_destroy(ctx);
}

Test(error_messages, integer_only_and_bool_only_ops_refuse_other_dtypes)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o;
        ERR(BP_ERR_DTYPE, "integer dtypes", o, bp_bitwise_not(f.f32_23, &o));
        ERR(BP_ERR_DTYPE, "integer dtypes", o, bp_bitwise_and(f.bool_23, f.bool_23, &o));
        ERR(BP_ERR_DTYPE, "integer dtypes", o, bp_bitshift_left(f.f64_23, f.f64_23, &o));
        ERR(BP_ERR_DTYPE, "bool only", o, bp_reduce_any(f.i32_23, 0, NULL, false, &o));
        ERR(BP_ERR_DTYPE, "bool only", o, bp_reduce_all(f.f32_23, 0, NULL, false, &o));
        ERR(BP_ERR_DTYPE, "not bool", o, bp_square(f.bool_23, &o));
        ERR(BP_ERR_DTYPE, "not bool", o, bp_cumsum(f.bool_23, 0, false, false, &o));
        bp_tensor *v = NULL, *i = NULL;
        ERR(BP_ERR_DTYPE, "not bool", v, bp_sort(f.bool_23, 0, false, &v, &i));
        ERR(BP_ERR_DTYPE, "not bool", v, bp_topk(f.bool_23, 1, 0, true, true, &v, &i));
        ERR(BP_ERR_DTYPE, "not bool", o, bp_gemm(f.bool_23, f.bool_23, NULL, 1, 0, false, true, &o));
    }
    bp_context_destroy(ctx);
}

Test(error_messages, operands_of_two_dtypes_name_bp_cast)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o;
        ERR(BP_ERR_DTYPE, "bp_cast", o, bp_fmod(f.f32_23, f.f64_23, &o));
        ERR(BP_ERR_DTYPE, "bp_cast", o, bp_prelu(f.f32_23, f.f64_23, &o));
        ERR(BP_ERR_DTYPE, "bp_cast", o, bp_bitwise_or(f.i32_23, f.i64_23, &o));
        ERR(BP_ERR_DTYPE, "bp_cast", o, bp_clip(f.f32_23, f.f64_23, NULL, &o));
        ERR(BP_ERR_DTYPE, "bp_cast", o, bp_gemm(f.f32_23, f.f64_23, NULL, 1, 0, false, true, &o));
        ERR(BP_ERR_DTYPE, "c is f64", o, bp_gemm(f.f32_23, f.f32_23, f.f64_23, 1, 1, false, true, &o));
        ERR(BP_ERR_DTYPE, "share a dtype", o,
            bp_scatter_elements(f.f32_23, f.i64_23, f.f64_23, 0, BP_SCATTER_NONE, &o));
        const bp_tensor *xs[2] = {f.f32_23, f.f64_23};
        ERR(BP_ERR_DTYPE, "bp_cast", o, bp_sum_n(2, xs, &o));
        bp_tensor *d32 = bpt_tensor(be, BP_F64, 2, (int64_t[]){3, 2}, NULL);
        ERR(BP_ERR_DTYPE, "bp_cast", o, bp_einsum("ij,jk->ik", 2,
            (const bp_tensor *const[]){f.f32_23, d32}, &o));
        bp_tensor_release(d32);
    }
    bp_context_destroy(ctx);
}

Test(error_messages, float_indices_are_a_dtype_error_naming_i32_or_i64)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o;
        ERR(BP_ERR_DTYPE, "must be i32 or i64", o, bp_gather_elements(f.f32_23, f.f32_idx, 0, &o));
        ERR(BP_ERR_DTYPE, "must be i32 or i64", o, bp_gather_nd(f.f32_23, f.f32_idx, 0, &o));
        ERR(BP_ERR_DTYPE, "must be i32 or i64", o,
            bp_scatter_elements(f.f32_23, f.f32_idx, f.f32_23, 0, BP_SCATTER_ADD, &o));
        ERR(BP_ERR_DTYPE, "must be i32 or i64", o,
            bp_scatter_nd(f.f32_23, f.f32_idx, f.f32_23, BP_SCATTER_NONE, &o));
    }
    bp_context_destroy(ctx);
}

/* ---- shapes --------------------------------------------------------------------------- */

Test(error_messages, prelu_slope_must_broadcast_to_x_one_way)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o;
        /* (3,) broadcasts with (2, 3) either way, but x (3,) cannot grow to (2, 3) */
        ERR(BP_ERR_SHAPE, "goes one way", o, bp_prelu(f.f32_3, f.f32_23, &o));
        ERR(BP_ERR_SHAPE, "must broadcast to x's shape", o, bp_clip(f.f32_3, f.f32_23, NULL, &o));
        ERR(BP_ERR_SHAPE, "broadcast", o, bp_fmod(f.f32_2, f.f32_3, &o));
    }
    bp_context_destroy(ctx);
}

Test(error_messages, gemm_shapes_name_what_does_not_fit)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o;
        /* (2, 3) x (2, 3): 3 columns against 2 rows */
        ERR(BP_ERR_SHAPE, "has 3 columns", o, bp_gemm(f.f32_23, f.f32_23, NULL, 1, 0, false, false, &o));
        ERR(BP_ERR_SHAPE, "use bp_matmul for batches", o,
            bp_gemm(f.f32_234, f.f32_23, NULL, 1, 0, false, false, &o));
        /* (2, 3) x (3, 2)^T... c (3,) cannot broadcast to (2, 2) */
        ERR(BP_ERR_SHAPE, "must broadcast to the result's shape", o,
            bp_gemm(f.f32_23, f.f32_23, f.f32_3, 1, 1, false, true, &o));
    }
    bp_context_destroy(ctx);
}

Test(error_messages, index_shapes_are_checked_before_any_index)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o;
        bp_tensor *i1 = bpt_tensor_i64(be, BP_I64, 1, (int64_t[]){2}, (int64_t[]){0, 1});
        bp_tensor *i33 = bpt_tensor_i64(be, BP_I64, 2, (int64_t[]){3, 3}, NULL);
        ERR(BP_ERR_SHAPE, "must have x's rank", o, bp_gather_elements(f.f32_23, i1, 0, &o));
        ERR(BP_ERR_SHAPE, "no larger than x", o, bp_gather_elements(f.f32_23, i33, 1, &o));
        ERR(BP_ERR_SHAPE, "must have the shape of indices", o,
            bp_scatter_elements(f.f32_23, f.i64_idx2, f.f32_23, 1, BP_SCATTER_NONE, &o));
        /* tuples of 3 components cannot address a rank-2 x */
        ERR(BP_ERR_SHAPE, "index tuples of 3 components", o, bp_gather_nd(f.f32_23, i33, 0, &o));
        ERR(BP_ERR_SHAPE, "batch_dims 2", o, bp_gather_nd(f.f32_23, f.i64_idx2, 2, &o));
        bp_tensor *i31 = bpt_tensor_i64(be, BP_I64, 2, (int64_t[]){3, 1}, NULL);
        ERR(BP_ERR_SHAPE, "batch axis 0 differs", o, bp_gather_nd(f.f32_234, i31, 1, &o));
        bp_tensor_release(i31);
        ERR(BP_ERR_SHAPE, "updates", o,
            bp_scatter_nd(f.f32_23, f.i64_idx2, f.f32_23, BP_SCATTER_NONE, &o));
        ERR(BP_ERR_SHAPE, "rank >= 2", o, bp_trilu(f.f32_3, true, 0, &o));
        ERR(BP_ERR_SHAPE, "two elements (off, on)", o, bp_one_hot(i1, 3, 0, f.f32_3, &o));
        bp_tensor_release(i1), bp_tensor_release(i33);
    }
    bp_context_destroy(ctx);
}

Test(error_messages, composed_ops_check_their_shapes_first)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o, *parts[3];
        parts[0] = GARBAGE;
        ERR(BP_ERR_SHAPE, "pass sizes", parts[0], bp_split(f.f32_23, 1, 2, NULL, parts));
        parts[0] = GARBAGE;
        ERR(BP_ERR_SHAPE, "sum to", parts[0],
            bp_split(f.f32_23, 1, 2, (const int64_t[]){1, 1}, parts));
        ERR(BP_ERR_SHAPE, "do not divide by blocksize^2", o, bp_depth_to_space(f.f32_4d, 2, false, &o));
        ERR(BP_ERR_SHAPE, "must divide by blocksize", o, bp_space_to_depth(f.f32_4d, 3, &o));
        ERR(BP_ERR_SHAPE, "(N, C, H, W)", o, bp_space_to_depth(f.f32_23, 2, &o));
        const bp_tensor *xs[2] = {f.f32_2, f.f32_3};
        ERR(BP_ERR_SHAPE, "broadcast", o, bp_max_n(2, xs, &o));
        const bp_tensor *ys[2] = {f.f32_23, f.f32_23};
        ERR(BP_ERR_SHAPE, "names 3 axes but xs[0] has rank 2", o, bp_einsum("ijk,jk->i", 2, ys, &o));
        bp_tensor *t32 = bpt_tensor(be, BP_F32, 2, (int64_t[]){3, 2}, NULL);
        ERR(BP_ERR_SHAPE, "has extent 2 in one operand and 3", o, bp_einsum("ij,ij->i", 2,
            (const bp_tensor *const[]){f.f32_23, t32}, &o));
        bp_tensor_release(t32);
    }
    bp_context_destroy(ctx);
}

/* ---- axes ------------------------------------------------------------------------------- */

Test(error_messages, axes_out_of_range_are_a_shape_error_naming_the_valid_range)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o, *v, *i;
        ERR(BP_ERR_SHAPE, "valid: -2..1", o, bp_cumsum(f.f32_23, 2, false, false, &o));
        ERR(BP_ERR_SHAPE, "valid: -2..1", o, bp_cumprod(f.f32_23, -3, false, false, &o));
        ERR(BP_ERR_SHAPE, "valid: -2..1", o, bp_hardmax(f.f32_23, 5, &o));
        ERR(BP_ERR_SHAPE, "valid: -2..1", v, bp_sort(f.f32_23, 2, false, &v, &i));
        ERR(BP_ERR_SHAPE, "valid: -2..1", v, bp_topk(f.f32_23, 1, -3, true, true, &v, &i));
        ERR(BP_ERR_SHAPE, "valid", o, bp_gather_elements(f.f32_23, f.i64_23, 2, &o));
        ERR(BP_ERR_SHAPE, "valid", o, bp_reduce_l1(f.f32_23, 1, (int32_t[]){2}, false, &o));
        ERR(BP_ERR_SHAPE, "valid", o, bp_argmax_last(f.f32_23, 1, (int32_t[]){-3}, false, &o));
        bp_tensor *i1 = bpt_tensor_i64(be, BP_I64, 1, (int64_t[]){2}, (int64_t[]){0, 1});
        bp_tensor *vals = bpt_tensor(be, BP_F32, 1, (int64_t[]){2}, NULL);
        ERR(BP_ERR_SHAPE, "valid: -2..1", o, bp_one_hot(i1, 3, 2, vals, &o));
        bp_tensor_release(i1), bp_tensor_release(vals);
        bp_tensor *parts[2] = {GARBAGE, GARBAGE};
        ERR(BP_ERR_SHAPE, "valid", parts[0], bp_split(f.f32_23, 3, 2, NULL, parts));
    }
    bp_context_destroy(ctx);
}

/* ---- NULL arguments and bad parameters ---------------------------------------------------- */

Test(error_messages, null_arguments_are_invalid_arguments)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o, *v = NULL, *i = NULL;
        ERR(BP_ERR_INVALID_ARGUMENT, "NULL", o, bp_cumsum(NULL, 0, false, false, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "NULL", o, bp_gemm(f.f32_23, NULL, NULL, 1, 0, 0, 1, &o));
        /* the one output given is cleared too */
        ERR(BP_ERR_INVALID_ARGUMENT, "both be given", i, bp_topk(f.f32_23, 1, 0, 1, 1, NULL, &i));
        ERR(BP_ERR_INVALID_ARGUMENT, "both be given", v, bp_topk(f.f32_23, 1, 0, 1, 1, &v, NULL));
        (void)v;
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_sort(f.f32_23, 0, false, NULL, NULL));
        cr_expect(strstr(bp_last_error(), "both NULL"), "%s", bp_last_error());
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_argsort(f.f32_23, 0, false, NULL));
        cr_expect(strstr(bp_last_error(), "indices is NULL"), "%s", bp_last_error());
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_split(f.f32_23, 0, 2, NULL, NULL));
        cr_expect(strstr(bp_last_error(), "outs is NULL"), "%s", bp_last_error());
        ERR(BP_ERR_INVALID_ARGUMENT, "equation is NULL", o, bp_einsum(NULL, 1,
            (const bp_tensor *const[]){f.f32_23}, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "NULL", o, bp_one_hot(f.i64_23, 3, 0, NULL, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "reps is NULL", o, bp_tile(f.f32_23, NULL, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "n >= 1", o, bp_max_n(0, NULL, &o));
    }
    bp_context_destroy(ctx);
}

Test(error_messages, bad_reductions_and_parameters_say_what_is_allowed)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o, *v, *i;
        ERR(BP_ERR_INVALID_ARGUMENT, "is not a bp_scatter_reduction", o,
            bp_scatter_elements(f.f32_23, f.i64_23, f.f32_23, 0, (bp_scatter_reduction)7, &o));
        ERR(BP_ERR_DTYPE, "needs a numeric dtype", o,
            bp_scatter_nd(f.bool_23, f.i64_idx2, f.bool_23, BP_SCATTER_ADD, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "0 <= k <= extent", v, bp_topk(f.f32_23, 4, 1, 1, 1, &v, &i));
        ERR(BP_ERR_INVALID_ARGUMENT, "0 <= k <= extent", v, bp_topk(f.f32_23, -1, 1, 1, 1, &v, &i));
        ERR(BP_ERR_INVALID_ARGUMENT, "must be >= 0", o,
            bp_reduce_std(f.f32_23, 0, NULL, false, -1, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "a parameter is NaN", o, bp_elu(f.f32_23, NAN, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "INFINITY for no bound", o,
            bp_clip_scalar(f.f32_23, NAN, 1, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "alpha or beta is NaN", o,
            bp_gemm(f.f32_23, f.f32_23, NULL, NAN, 0, false, true, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "must be >= 1", o, bp_one_hot(f.i64_23, 0, 0, f.f32_2, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "must be >= 1", o, bp_depth_to_space(f.f32_4d, 0, true, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "must be >= 0", o, bp_tile(f.f32_23, (int64_t[]){1, -2}, &o));
        bp_tensor *parts[1];
        BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_split(f.f32_23, 0, 0, NULL, parts));
        cr_expect(strstr(bp_last_error(), "n >= 1"), "%s", bp_last_error());
    }
    bp_context_destroy(ctx);
}

Test(error_messages, einsum_refuses_bad_equations_saying_why)
{
    FOR_EACH(ctx, be, f) {
        bp_tensor *o;
        const bp_tensor *xs[2] = {f.f32_23, f.f32_23};
        ERR(BP_ERR_INVALID_ARGUMENT, "not a letter", o, bp_einsum("i1->i", 1, xs, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "two arrows", o, bp_einsum("ij->ji->ij", 1, xs, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "diagonals", o, bp_einsum("ij,jj->i", 2, xs, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, "diagonals", o, bp_einsum("ij->ii", 1, xs, &o));
    }
    bp_context_destroy(ctx);
}

Test(error_messages, tensors_of_two_backends_name_bp_backend_copy)
{
    bp_context *ctx = bpt_context();
    bp_backend *list[16];
    size_t n = bpt_backends(ctx, list, 16);
    cr_assert_geq(n, 2, "needs two backends (binary and devsim)");
    bp_backend *be = list[0];
    bp_tensor *a = bpt_tensor(list[0], BP_F32, 2, (int64_t[]){2, 2}, NULL);
    bp_tensor *b = bpt_tensor(list[n - 1], BP_F32, 2, (int64_t[]){2, 2}, NULL);
    bp_tensor *ib = bpt_tensor_i64(list[n - 1], BP_I64, 2, (int64_t[]){2, 2}, NULL), *o;
    ERR(BP_ERR_BACKEND_MISMATCH, "bp_backend_copy", o, bp_gemm(a, a, b, 1, 1, false, false, &o));
    ERR(BP_ERR_BACKEND_MISMATCH, "bp_backend_copy", o, bp_clip(a, b, NULL, &o));
    ERR(BP_ERR_BACKEND_MISMATCH, "bp_backend_copy", o, bp_fmod(a, b, &o));
    ERR(BP_ERR_BACKEND_MISMATCH, "bp_backend_copy", o, bp_gather_elements(a, ib, 0, &o));
    ERR(BP_ERR_BACKEND_MISMATCH, "bp_backend_copy", o,
        bp_scatter_elements(a, ib, a, 0, BP_SCATTER_ADD, &o));
    bp_tensor_release(a), bp_tensor_release(b), bp_tensor_release(ib);
    bp_context_destroy(ctx);
}

/* bp_concat names its tensors by index (xs[i], formatted only for the
 * message): the pair that differs, and the bp_backend_copy call, over any
 * number of tensors; symbolic tensors of two graphs too. */
Test(error_messages, concat_names_the_two_tensors_that_differ_by_their_index_in_xs)
{
    bp_context *ctx = bpt_context();
    bp_backend *list[16];
    size_t n = bpt_backends(ctx, list, 16);
    cr_assert_geq(n, 2, "needs two backends (binary and devsim)");
    bp_backend *be = list[0], *other = list[n - 1];
    bp_tensor *a = bpt_tensor(be, BP_F32, 1, (int64_t[]){2}, NULL);
    bp_tensor *b = bpt_tensor(other, BP_F32, 1, (int64_t[]){2}, NULL), *o;
    char want[512];
    enum { MANY = 40 };
    const bp_tensor *xs[MANY];
    for (int i = 0; i < MANY; i++)
        xs[i] = a;
    xs[MANY - 1] = b;
    snprintf(want, sizeof want,
             "bp_concat: xs[0] is on backend %s but xs[%d] is on backend %s; tensors never move "
             "implicitly. Copy one explicitly, e.g. bp_backend_copy(<the xs[%d] tensor>, "
             "<backend %s>, &copy)",
             bp_backend_name(be), MANY - 1, bp_backend_name(other), MANY - 1,
             bp_backend_name(be));
    ERR(BP_ERR_BACKEND_MISMATCH, want, o, bp_concat(MANY, xs, 0, &o));

    bp_graph *g1 = NULL, *g2 = NULL;
    bp_tensor *s1 = NULL, *s2 = NULL;
    BPT_OK(bp_graph_create(be, &g1));
    BPT_OK(bp_graph_create(be, &g2));
    BPT_OK(bp_graph_input(g1, BP_F32, 1, (const int64_t[]){2}, &s1));
    BPT_OK(bp_graph_input(g2, BP_F32, 1, (const int64_t[]){2}, &s2));
    ERR(BP_ERR_INVALID_ARGUMENT,
        "bp_concat: xs[1] and xs[2] are symbolic tensors of two different graphs; the tensors "
        "of one op must belong to one graph",
        o, bp_concat(3, (const bp_tensor *const[]){a, s1, s2}, 0, &o));
    snprintf(want, sizeof want,
             "bp_concat: xs[0] is a symbolic tensor of a graph on backend %s but xs[2] is on "
             "backend %s; tensors never move implicitly, not into a graph either. Copy it "
             "explicitly before recording, e.g. bp_backend_copy(<the xs[2] tensor>, "
             "<backend %s>, &copy)",
             bp_backend_name(be), bp_backend_name(other), bp_backend_name(be));
    ERR(BP_ERR_BACKEND_MISMATCH, want, o,
        bp_concat(3, (const bp_tensor *const[]){s1, a, b}, 0, &o));
    bp_tensor_release(s1), bp_tensor_release(s2);
    bp_graph_release(g1), bp_graph_release(g2);
    bp_tensor_release(a), bp_tensor_release(b);
    bp_context_destroy(ctx);
}

/* Op validation (ops.h, "common errors for every op"): wrong dtypes, shapes
 * that do not broadcast, bad and duplicate axes, out-of-range indices, NULL
 * arguments. Every failure returns the documented code, sets *out to NULL
 * (even when the caller left garbage there) and leaves a message in
 * bp_last_error(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

/* A non-NULL garbage value the library must overwrite with NULL on failure. */
#define GARBAGE ((bp_tensor *)(uintptr_t)0x10)

static void check_err(const char *call, bp_status want1, bp_status want2, bp_status got,
                      bp_tensor *out, bp_backend *be)
{
    const char *msg = bp_last_error();
    cr_expect(got == want1 || got == want2, "%s on %s -> %s, wanted %s: %s", call,
              be ? bp_backend_name(be) : "?", bp_status_string(got), bp_status_string(want1),
              msg);
    cr_expect(out == NULL, "%s on %s failed but left *out = %p", call,
              be ? bp_backend_name(be) : "?", (void *)out);
    cr_expect(msg != NULL && msg[0] != '\0', "%s on %s: bp_last_error() is empty", call,
              be ? bp_backend_name(be) : "?");
    if (got == BP_OK && out != NULL && out != GARBAGE)
        bp_tensor_release(out);
}

/* ERR(code, out, call): out is set to garbage first. */
#define ERR(code, out, call)                                             \
    do {                                                                 \
        (out) = GARBAGE;                                                 \
        bp_status st_ = (call);                                          \
        check_err(#call, (code), (code), st_, (out), be);                \
    } while (0)
/* Either of two codes where the spec does not pin one down. */
#define ERR2(c1, c2, out, call)                                          \
    do {                                                                 \
        (out) = GARBAGE;                                                 \
        bp_status st_ = (call);                                          \
        check_err(#call, (c1), (c2), st_, (out), be);                    \
    } while (0)

/* A small fixture of tensors on one backend. */
typedef struct fx {
    bp_tensor *f32_23, *f64_23, *i32_23, *f32_3, *f32_4, *f32_32, *bool_23, *f32_234, *i32_3,
        *f32_s, *i32_idx, *f32_idx;
} fx;

static fx make_fx(bp_backend *be)
{
    fx f;
    double v[24] = {0};
    for (int i = 0; i < 24; i++)
        v[i] = i % 3;
    f.f32_23 = bpt_tensor(be, BP_F32, 2, (int64_t[]){2, 3}, v);
    f.f64_23 = bpt_tensor(be, BP_F64, 2, (int64_t[]){2, 3}, v);
    f.i32_23 = bpt_tensor(be, BP_I32, 2, (int64_t[]){2, 3}, v);
    f.f32_3 = bpt_tensor(be, BP_F32, 1, (int64_t[]){3}, v);
    f.f32_4 = bpt_tensor(be, BP_F32, 1, (int64_t[]){4}, v);
    f.f32_32 = bpt_tensor(be, BP_F32, 2, (int64_t[]){3, 2}, v);
    f.bool_23 = bpt_tensor(be, BP_BOOL, 2, (int64_t[]){2, 3}, v);
    f.f32_234 = bpt_tensor(be, BP_F32, 3, (int64_t[]){2, 3, 4}, v);
    f.i32_3 = bpt_tensor(be, BP_I32, 1, (int64_t[]){3}, v);
    f.f32_s = bpt_scalar(be, BP_F32, 1);
    f.i32_idx = bpt_tensor(be, BP_I32, 1, (int64_t[]){2}, (double[]){0, 1});
    f.f32_idx = bpt_tensor(be, BP_F32, 1, (int64_t[]){2}, (double[]){0, 1});
    return f;
}

static void free_fx(fx *f)
{
    bp_tensor *all[] = {f->f32_23, f->f64_23, f->i32_23, f->f32_3, f->f32_4, f->f32_32,
                        f->bool_23, f->f32_234, f->i32_3, f->f32_s, f->i32_idx, f->f32_idx};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bp_tensor_release(all[i]);
}

Test(errors, operands_of_different_dtypes_are_a_dtype_error)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        fx f = make_fx(be);
        bp_tensor *o;
        ERR(BP_ERR_DTYPE, o, bp_add(f.f32_23, f.f64_23, &o));
        ERR(BP_ERR_DTYPE, o, bp_binary(BP_OP_LT, f.i32_23, f.f32_23, &o));
        ERR(BP_ERR_DTYPE, o, bp_where(f.bool_23, f.f32_23, f.f64_23, &o));
        ERR(BP_ERR_DTYPE, o, bp_where(f.i32_23, f.f32_23, f.f32_23, &o)); /* cond not bool */
        bp_tensor *v64 = bpt_tensor(be, BP_F64, 1, (int64_t[]){3}, (double[3]){0});
        ERR(BP_ERR_DTYPE, o, bp_matmul(f.f32_23, v64, &o));
        bp_tensor_release(v64);
        const bp_tensor *parts[2] = {f.f32_23, f.i32_23};
        ERR(BP_ERR_DTYPE, o, bp_concat(2, parts, 0, &o));
        ERR(BP_ERR_DTYPE, o, bp_gather(f.f32_23, f.f32_idx, 0, &o)); /* float indices */
        free_fx(&f);
    }
    bp_context_destroy(ctx);
}

Test(errors, float_only_ops_refuse_integers_and_bools)
{
    static const bp_op float_only[] = {BP_OP_EXP, BP_OP_LOG, BP_OP_SQRT, BP_OP_RSQRT,
                                       BP_OP_RECIPROCAL, BP_OP_SIN, BP_OP_COS, BP_OP_TAN,
                                       BP_OP_TANH, BP_OP_SIGMOID, BP_OP_GELU, BP_OP_ERF,
                                       BP_OP_FLOOR, BP_OP_CEIL, BP_OP_ROUND, BP_OP_ISNAN,
                                       BP_OP_ISINF};
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        fx f = make_fx(be);
        bp_tensor *o;
        for (size_t k = 0; k < sizeof float_only / sizeof float_only[0]; k++) {
            ERR(BP_ERR_DTYPE, o, bp_unary(float_only[k], f.i32_23, &o));
            ERR(BP_ERR_DTYPE, o, bp_unary(float_only[k], f.bool_23, &o));
        }
        ERR(BP_ERR_DTYPE, o, bp_mean(f.i32_23, 0, NULL, false, &o));
        ERR(BP_ERR_DTYPE, o, bp_logsumexp(f.i32_23, 0, NULL, false, &o));
        ERR(BP_ERR_DTYPE, o, bp_softmax(f.i32_23, 1, &o));
        ERR(BP_ERR_DTYPE, o, bp_log_softmax(f.i32_23, 1, &o));
        int64_t n = 4;
        ERR(BP_ERR_DTYPE, o, bp_random_uniform(be, BP_I32, 1, &n, 1, 0, 0, 1, &o));
        ERR(BP_ERR_DTYPE, o, bp_random_normal(be, BP_BOOL, 1, &n, 1, 0, 0, 1, &o));
        free_fx(&f);
    }
    bp_context_destroy(ctx);
}

Test(errors, numeric_ops_refuse_bools_and_logical_ops_refuse_numbers)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        fx f = make_fx(be);
        bp_tensor *o;
        ERR(BP_ERR_DTYPE, o, bp_neg(f.bool_23, &o));
        ERR(BP_ERR_DTYPE, o, bp_abs(f.bool_23, &o));
        ERR(BP_ERR_DTYPE, o, bp_add(f.bool_23, f.bool_23, &o));
        ERR(BP_ERR_DTYPE, o, bp_mod(f.bool_23, f.bool_23, &o));
        ERR(BP_ERR_DTYPE, o, bp_sum(f.bool_23, 0, NULL, false, &o));
        ERR(BP_ERR_DTYPE, o, bp_argmax(f.bool_23, 0, NULL, false, &o));
        bp_tensor *vb = bpt_tensor(be, BP_BOOL, 1, (int64_t[]){3}, (double[3]){0});
        ERR(BP_ERR_DTYPE, o, bp_matmul(f.bool_23, vb, &o));
        bp_tensor_release(vb);
        ERR(BP_ERR_DTYPE, o, bp_logical_not(f.f32_23, &o));
        ERR(BP_ERR_DTYPE, o, bp_logical_and(f.i32_23, f.i32_23, &o));
        ERR(BP_ERR_DTYPE, o, bp_logical_xor(f.f32_23, f.f32_23, &o));
        free_fx(&f);
    }
    bp_context_destroy(ctx);
}

Test(errors, shapes_that_do_not_broadcast_are_a_shape_error)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        fx f = make_fx(be);
        bp_tensor *o;
        ERR(BP_ERR_SHAPE, o, bp_add(f.f32_3, f.f32_4, &o));
        ERR(BP_ERR_SHAPE, o, bp_mul(f.f32_23, f.f32_32, &o));
        ERR(BP_ERR_SHAPE, o, bp_eq(f.f32_234, f.f32_32, &o));
        bp_tensor *c4 = bpt_tensor(be, BP_BOOL, 1, (int64_t[]){4}, (double[4]){0});
        ERR(BP_ERR_SHAPE, o, bp_where(c4, f.f32_23, f.f32_23, &o));
        ERR(BP_ERR_SHAPE, o, bp_broadcast_to(f.f32_3, 1, (int64_t[]){4}, &o));
        ERR(BP_ERR_SHAPE, o, bp_broadcast_to(f.f32_23, 1, (int64_t[]){3}, &o));
        ERR(BP_ERR_SHAPE, o, bp_matmul(f.f32_23, f.f32_23, &o));
        const bp_tensor *p1[2] = {f.f32_23, f.f32_32};
        ERR(BP_ERR_SHAPE, o, bp_concat(2, p1, 0, &o)); /* other extents differ */
        const bp_tensor *p2[2] = {f.f32_23, f.f32_3};
        ERR(BP_ERR_SHAPE, o, bp_concat(2, p2, 0, &o)); /* ranks differ */
        ERR(BP_ERR_SHAPE, o, bp_reshape(f.f32_23, 2, (int64_t[]){4, 2}, &o));
        ERR(BP_ERR_SHAPE, o, bp_reshape(f.f32_23, 2, (int64_t[]){4, -1}, &o));
        bp_tensor_release(c4);
        free_fx(&f);
    }
    bp_context_destroy(ctx);
}

Test(errors, axes_out_of_range_are_a_shape_error)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        fx f = make_fx(be);
        bp_tensor *o;
        ERR(BP_ERR_SHAPE, o, bp_sum(f.f32_234, 1, (int32_t[]){3}, false, &o));
        ERR(BP_ERR_SHAPE, o, bp_max(f.f32_234, 1, (int32_t[]){-4}, true, &o));
        ERR(BP_ERR_SHAPE, o, bp_argmax(f.f32_234, 2, (int32_t[]){0, 7}, false, &o));
        ERR(BP_ERR_SHAPE, o, bp_sum(f.f32_s, 1, (int32_t[]){0}, false, &o));
        ERR(BP_ERR_SHAPE, o, bp_softmax(f.f32_23, 2, &o));
        ERR(BP_ERR_SHAPE, o, bp_log_softmax(f.f32_23, -3, &o));
        const bp_tensor *parts[2] = {f.f32_23, f.f32_23};
        ERR(BP_ERR_SHAPE, o, bp_concat(2, parts, 2, &o));
        ERR(BP_ERR_SHAPE, o, bp_gather(f.f32_23, f.i32_idx, 2, &o));
        ERR(BP_ERR_SHAPE, o, bp_transpose(f.f32_234, (int32_t[]){0, 1, 3}, &o));
        ERR(BP_ERR_SHAPE, o, bp_squeeze(f.f32_23, 1, (int32_t[]){0}, &o)); /* extent 2 */
        ERR(BP_ERR_SHAPE, o, bp_squeeze(f.f32_23, 1, (int32_t[]){5}, &o));
        ERR(BP_ERR_SHAPE, o, bp_unsqueeze(f.f32_23, 3, &o));
        ERR(BP_ERR_SHAPE, o, bp_unsqueeze(f.f32_23, -4, &o));
        free_fx(&f);
    }
    bp_context_destroy(ctx);
}

Test(errors, duplicate_axes_are_a_shape_error)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        fx f = make_fx(be);
        bp_tensor *o;
        ERR(BP_ERR_SHAPE, o, bp_sum(f.f32_234, 2, (int32_t[]){0, 0}, false, &o));
        ERR(BP_ERR_SHAPE, o, bp_mean(f.f32_234, 2, (int32_t[]){1, -2}, true, &o));
        ERR(BP_ERR_SHAPE, o, bp_argmin(f.f32_234, 3, (int32_t[]){2, 0, -1}, false, &o));
        ERR(BP_ERR_SHAPE, o, bp_transpose(f.f32_234, (int32_t[]){0, 0, 1}, &o));
        ERR(BP_ERR_SHAPE, o, bp_reduce_var(f.f32_234, 2, (int32_t[]){2, -1}, false, 0, &o));
        ERR(BP_ERR_SHAPE, o, bp_reduce_l1(f.f32_234, 2, (int32_t[]){1, 1}, true, &o));
        ERR(BP_ERR_SHAPE, o, bp_argmax_last(f.f32_234, 2, (int32_t[]){0, -3}, false, &o));
        free_fx(&f);
    }
    bp_context_destroy(ctx);
}

/* An index out of range is BP_ERR_INDEX: from bp_gather itself on a backend
 * the core checks on the host, or from the next waiting call on a device
 * backend that checks on the device (deferred, so gather never waits). */
static void expect_index_error(bp_backend *be, const bp_tensor *x, const bp_tensor *idx,
                               int32_t axis, const char *what)
{
    bp_tensor *o = NULL;
    bp_status st = bp_gather(x, idx, axis, &o);
    if (st == BP_OK) {
        bp_tensor_release(o);
        st = bp_synchronize(be);
        cr_assert_eq(st, BP_ERR_INDEX, "%s on %s: deferred -> %s: %s", what, bp_backend_name(be),
                     bp_status_string(st), bp_last_error());
        cr_assert(strstr(bp_last_error(), "gather") && strstr(bp_last_error(), "queued earlier"),
                  "%s", bp_last_error());
        BPT_OK(bp_synchronize(be)); /* reported once, then cleared */
    } else {
        cr_assert_eq(st, BP_ERR_INDEX, "%s on %s -> %s: %s", what, bp_backend_name(be),
                     bp_status_string(st), bp_last_error());
        cr_assert_null(o);
    }
}

Test(errors, gather_index_out_of_range_is_an_index_error_now_or_at_the_next_wait)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        fx f = make_fx(be);
        int64_t two = 2;
        bp_tensor *hi = bpt_tensor_i64(be, BP_I64, 1, &two, (int64_t[]){0, 3});
        bp_tensor *lo = bpt_tensor_i64(be, BP_I32, 1, &two, (int64_t[]){-4, 0});
        bp_tensor *big = bpt_tensor_i64(be, BP_I64, 1, &two, (int64_t[]){INT64_MIN, 0});
        expect_index_error(be, f.f32_23, hi, 1, "3 on extent 3");
        expect_index_error(be, f.f32_23, lo, 1, "-4 on extent 3");
        expect_index_error(be, f.f32_23, hi, 0, "3 on extent 2");
        expect_index_error(be, f.f32_23, big, 0, "INT64_MIN");
        bp_tensor_release(hi);
        bp_tensor_release(lo);
        bp_tensor_release(big);
        free_fx(&f);
    }
    bp_context_destroy(ctx);
}

Test(errors, null_arguments_are_invalid_and_never_crash)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        fx f = make_fx(be);
        bp_tensor *o;
        const bp_status IA = BP_ERR_INVALID_ARGUMENT;
        ERR(IA, o, bp_add(NULL, f.f32_23, &o));
        ERR(IA, o, bp_add(f.f32_23, NULL, &o));
        ERR(IA, o, bp_unary(BP_OP_EXP, NULL, &o));
        ERR(IA, o, bp_exp(NULL, &o));
        ERR(IA, o, bp_where(NULL, f.f32_23, f.f32_23, &o));
        ERR(IA, o, bp_where(f.bool_23, f.f32_23, NULL, &o));
        ERR(IA, o, bp_reduce(BP_OP_SUM, NULL, 0, NULL, false, &o));
        ERR(IA, o, bp_sum(f.f32_23, 1, NULL, false, &o)); /* n_axes 1, axes NULL */
        ERR(IA, o, bp_softmax(NULL, 0, &o));
        ERR(IA, o, bp_matmul(NULL, f.f32_32, &o));
        ERR(IA, o, bp_transpose(NULL, NULL, &o));
        ERR(IA, o, bp_slice(NULL, (int64_t[]){0, 0}, NULL, NULL, &o));
        ERR(IA, o, bp_slice(f.f32_23, NULL, NULL, NULL, &o));
        ERR(IA, o, bp_concat(2, NULL, 0, &o));
        const bp_tensor *with_null[2] = {f.f32_23, NULL};
        ERR(IA, o, bp_concat(2, with_null, 0, &o));
        ERR(IA, o, bp_concat(0, with_null, 0, &o));
        ERR(IA, o, bp_broadcast_to(NULL, 1, (int64_t[]){3}, &o));
        ERR(IA, o, bp_broadcast_to(f.f32_3, 1, NULL, &o));
        ERR(IA, o, bp_pad(NULL, (int64_t[]){0}, (int64_t[]){0}, 0, &o));
        ERR(IA, o, bp_pad(f.f32_3, NULL, (int64_t[]){0}, 0, &o));
        ERR(IA, o, bp_gather(NULL, f.i32_idx, 0, &o));
        ERR(IA, o, bp_gather(f.f32_23, NULL, 0, &o));
        ERR(IA, o, bp_cast(NULL, BP_F64, &o));
        ERR(IA, o, bp_reshape(NULL, 1, (int64_t[]){6}, &o));
        ERR(IA, o, bp_squeeze(NULL, 0, NULL, &o));
        ERR(IA, o, bp_unsqueeze(NULL, 0, &o));
        ERR(IA, o, bp_full(NULL, BP_F32, 1, (int64_t[]){2}, 1.0, &o));
        ERR(IA, o, bp_zeros(be, BP_F32, 1, NULL, &o));
        ERR(IA, o, bp_arange(NULL, BP_F32, 0, 1, 1, &o));
        ERR(IA, o, bp_eye(NULL, BP_F32, 2, 2, &o));
        ERR(IA, o, bp_random_uniform(NULL, BP_F32, 1, (int64_t[]){2}, 0, 0, 0, 1, &o));
        ERR(IA, o, bp_tensor_from_host(be, BP_F32, 1, (int64_t[]){2}, NULL, &o));
        /* NULL out pointers */
        cr_expect_eq(bp_add(f.f32_23, f.f32_23, NULL), IA);
        cr_expect_eq(bp_exp(f.f32_23, NULL), IA);
        cr_expect_eq(bp_sum(f.f32_23, 0, NULL, false, NULL), IA);
        cr_expect_eq(bp_matmul(f.f32_23, f.f32_32, NULL), IA);
        cr_expect_eq(bp_full(be, BP_F32, 0, NULL, 1.0, NULL), IA);
        cr_expect_eq(bp_cast(f.f32_23, BP_I32, NULL), IA);
        cr_expect_eq(bp_item_f64(f.f32_s, NULL), IA);
        cr_expect_eq(bp_item_f64(NULL, (double[1]){0}), IA);
        cr_expect_eq(bp_tensor_to_host(NULL, (float[6]){0}, 24), IA);
        cr_expect_eq(bp_tensor_to_host(f.f32_23, NULL, 24), IA);
        cr_expect_eq(bp_tensor_to_host(f.f32_23, (float[6]){0}, 23), IA); /* too small */
        free_fx(&f);
    }
    bp_context_destroy(ctx);
}

Test(errors, invalid_dtypes_and_op_codes_are_refused)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        fx f = make_fx(be);
        bp_tensor *o;
        ERR(BP_ERR_DTYPE, o, bp_full(be, (bp_dtype)99, 1, (int64_t[]){2}, 0, &o));
        ERR(BP_ERR_DTYPE, o, bp_cast(f.f32_23, (bp_dtype)-1, &o));
        ERR(BP_ERR_DTYPE, o,
            bp_tensor_from_host(be, (bp_dtype)BP_DTYPE_COUNT, 1, (int64_t[]){1}, (float[1]){0}, &o));
        /* an op code of the wrong family */
        ERR2(BP_ERR_INVALID_ARGUMENT, BP_ERR_UNSUPPORTED_OP, o, bp_unary(BP_OP_ADD, f.f32_23, &o));
        ERR2(BP_ERR_INVALID_ARGUMENT, BP_ERR_UNSUPPORTED_OP, o, bp_binary(BP_OP_EXP, f.f32_23, f.f32_23, &o));
        ERR2(BP_ERR_INVALID_ARGUMENT, BP_ERR_UNSUPPORTED_OP, o, bp_reduce(BP_OP_MATMUL, f.f32_23, 0, NULL, false, &o));
        ERR2(BP_ERR_INVALID_ARGUMENT, BP_ERR_UNSUPPORTED_OP, o, bp_unary((bp_op)1000, f.f32_23, &o));
        free_fx(&f);
    }
    bp_context_destroy(ctx);
}

Test(errors, bad_slice_pad_arange_and_shape_arguments_are_refused)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        fx f = make_fx(be);
        bp_tensor *o;
        const bp_status IA = BP_ERR_INVALID_ARGUMENT, SH = BP_ERR_SHAPE;
        ERR2(IA, SH, o, bp_slice(f.f32_23, (int64_t[]){0, 0}, NULL, (int64_t[]){1, 0}, &o));
        ERR2(IA, SH, o, bp_pad(f.f32_23, (int64_t[]){-1, 0}, (int64_t[]){0, 0}, 0, &o));
        ERR2(IA, SH, o, bp_arange(be, BP_F32, 0, 1, 0, &o));
        ERR2(IA, SH, o, bp_eye(be, BP_F32, -1, 2, &o));
        ERR2(IA, SH, o, bp_full(be, BP_F32, 1, (int64_t[]){-2}, 0, &o));
        ERR2(IA, SH, o, bp_full(be, BP_F32, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, &o));
        ERR2(IA, SH, o, bp_full(be, BP_F32, -1, (int64_t[]){1}, 0, &o));
        ERR2(IA, SH, o, bp_reshape(f.f32_23, 2, (int64_t[]){-1, -1}, &o));
        ERR2(IA, SH, o, bp_full(be, BP_F64, 2, (int64_t[]){INT64_MAX / 2, 4}, 0, &o)); /* overflow */
        free_fx(&f);
    }
    bp_context_destroy(ctx);
}

Test(errors, tensors_of_two_contexts_are_a_backend_mismatch)
{
    bp_context *c1 = bpt_context(), *c2 = bpt_context();
    bp_backend *b1 = NULL, *be = NULL;
    BPT_OK(bp_backend_get(c1, "binary", &b1));
    BPT_OK(bp_backend_get(c2, "binary", &be));
    bp_tensor *x = bpt_scalar(b1, BP_F32, 1), *y = bpt_scalar(be, BP_F32, 2), *o;
    ERR(BP_ERR_BACKEND_MISMATCH, o, bp_add(x, y, &o));
    /* the suggested fix must be one that works: bp_backend_copy refuses to
     * cross contexts, so the message points at host memory instead */
    cr_assert(strstr(bp_last_error(), "bp_tensor_to_host") &&
                  !strstr(bp_last_error(), "bp_backend_copy("),
              "%s", bp_last_error());
    bp_tensor *moved = NULL;
    BPT_FAILS(BP_ERR_BACKEND_MISMATCH, bp_backend_copy(y, b1, &moved));
    ERR(BP_ERR_BACKEND_MISMATCH, o, bp_matmul(x, y, &o));
    bp_tensor_release(x);
    bp_tensor_release(y);
    bp_context_destroy(c1);
    bp_context_destroy(c2);
}

Test(errors, a_tensor_given_away_by_transfer_is_an_invalid_argument)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = bpt_vec(be, BP_F32, 2, (double[]){1, 2}), *moved = NULL, *o;
        BPT_OK(bp_backend_transfer(x, be, &moved));
        cr_expect(!bp_tensor_is_valid(x));
        ERR(BP_ERR_INVALID_ARGUMENT, o, bp_neg(x, &o));
        ERR(BP_ERR_INVALID_ARGUMENT, o, bp_add(x, moved, &o));
        double v;
        cr_expect_eq(bp_item_f64(x, &v), BP_ERR_INVALID_ARGUMENT);
        int64_t two = 2;
        bpt_expect("transferred copy", moved, BP_F32, 1, &two, (double[]){1, 2}, bpt_exact());
        bp_tensor_release(x);
        bp_tensor_release(moved);
    }
    bp_context_destroy(ctx);
}

Test(errors, a_failing_call_does_not_disturb_later_calls)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        fx f = make_fx(be);
        bp_tensor *o;
        ERR(BP_ERR_SHAPE, o, bp_add(f.f32_3, f.f32_4, &o));
        BPT_OK(bp_add(f.f32_3, f.f32_3, &o));
        int64_t three = 3;
        bpt_expect("add after a failure", o, BP_F32, 1, &three, (double[]){0, 2, 4}, bpt_exact());
        bp_tensor_release(o);
        free_fx(&f);
    }
    bp_context_destroy(ctx);
}

/* Core tensor behaviour: lifetime, shapes, explicit backend moves, errors,
 * threads, and the library's silence on stdout. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "bpt.h" /* before criterion/redirect.h, which needs criterion.h first */

#include <criterion/redirect.h>

static bp_context *ctx;
static bp_backend *cpu, *other; /* binary, and crashy: a second, non-host-addressable backend */

static void setup(void)
{
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    setenv("BP_LOG_LEVEL", "error", 1);
    ctx = bpt_context();
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
    BPT_OK(bp_backend_get(ctx, "crashy", &other));
}
static void teardown(void) { bp_context_destroy(ctx); }

TestSuite(tensor, .init = setup, .fini = teardown);

static bp_tensor *f32(bp_backend *be, int32_t rank, const int64_t *shape, const float *data)
{
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F32, rank, shape, data, &t));
    return t;
}

Test(tensor, round_trips_host_data_exactly)
{
    float in[6] = {1.5f, -2, 3e-38f, 4, 5, 6}, out[6] = {0};
    bp_tensor *t = f32(cpu, 2, (int64_t[]){2, 3}, in);
    cr_assert_eq(bp_tensor_rank(t), 2);
    cr_assert_eq(bp_tensor_numel(t), 6);
    cr_assert_eq(bp_tensor_nbytes(t), sizeof in);
    BPT_OK(bp_tensor_to_host(t, out, sizeof out));
    cr_assert_arr_eq(in, out, sizeof in);
    bp_tensor_release(t);
}

Test(tensor, to_host_refuses_a_too_small_destination)
{
    float out[2];
    bp_tensor *t = f32(cpu, 1, (int64_t[]){3}, (float[]){1, 2, 3});
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_tensor_to_host(t, out, sizeof out));
    bp_tensor_release(t);
}

Test(tensor, shapes_are_checked_for_rank_negative_extents_and_overflow)
{
    bp_tensor *t = NULL;
    int64_t big[3] = {INT64_MAX / 2, 4, 4};
    BPT_FAILS(BP_ERR_SHAPE, bp_tensor_from_host(cpu, BP_F32, 3, big, NULL, &t));
    cr_assert_null(t);
    BPT_FAILS(BP_ERR_SHAPE, bp_tensor_from_host(cpu, BP_F32, 1, (int64_t[]){-1}, NULL, &t));
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    BPT_FAILS(BP_ERR_SHAPE, bp_tensor_from_host(cpu, BP_F32, 9, nine, (float[]){1}, &t));
    BPT_FAILS(BP_ERR_DTYPE, bp_tensor_from_host(cpu, (bp_dtype)42, 0, NULL, (float[]){1}, &t));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_tensor_from_host(cpu, BP_F32, 1, (int64_t[]){2}, NULL, &t));
}

Test(tensor, empty_and_rank0_tensors_are_valid)
{
    bp_tensor *e = NULL, *s = NULL;
    BPT_OK(bp_tensor_from_host(cpu, BP_F64, 2, (int64_t[]){0, 5}, NULL, &e));
    cr_assert_eq(bp_tensor_numel(e), 0);
    BPT_OK(bp_tensor_from_host(cpu, BP_F64, 0, NULL, (double[]){2.5}, &s));
    double v = 0;
    BPT_OK(bp_item_f64(s, &v));
    cr_assert_eq(v, 2.5);
    BPT_FAILS(BP_ERR_SHAPE, bp_item_f64(e, &v));
    bp_tensor_release(e);
    bp_tensor_release(s);
}

Test(tensor, item_accepts_any_tensor_with_exactly_one_element)
{
    bp_tensor *t = NULL, *four = NULL;
    BPT_OK(bp_tensor_from_host(cpu, BP_I64, 3, (int64_t[]){1, 1, 1}, (int64_t[]){INT64_MIN}, &t));
    int64_t i = 0;
    BPT_OK(bp_item_i64(t, &i));
    cr_assert_eq(i, INT64_MIN);
    four = f32(cpu, 2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4});
    double d;
    BPT_FAILS(BP_ERR_SHAPE, bp_item_f64(four, &d));
    cr_assert(strstr(bp_last_error(), "4 elements"), "%s", bp_last_error());
    bp_tensor_release(t);
    bp_tensor_release(four);
}

Test(tensor, reshape_with_one_inferred_extent_shares_the_data)
{
    float in[6] = {1, 2, 3, 4, 5, 6}, out[6];
    bp_tensor *t = f32(cpu, 2, (int64_t[]){2, 3}, in), *r = NULL;
    BPT_OK(bp_reshape(t, 3, (int64_t[]){3, -1, 1}, &r));
    cr_assert_eq(bp_tensor_shape(r)[1], 2);
    BPT_OK(bp_tensor_to_host(r, out, sizeof out));
    cr_assert_arr_eq(in, out, sizeof in);
    bp_tensor *bad = NULL;
    BPT_FAILS(BP_ERR_SHAPE, bp_reshape(t, 2, (int64_t[]){-1, -1}, &bad));
    BPT_FAILS(BP_ERR_SHAPE, bp_reshape(t, 2, (int64_t[]){4, -1}, &bad));
    BPT_FAILS(BP_ERR_SHAPE, bp_reshape(t, 1, (int64_t[]){7}, &bad));
    bp_tensor_release(t); /* the view keeps the data alive */
    BPT_OK(bp_tensor_to_host(r, out, sizeof out));
    cr_assert_arr_eq(in, out, sizeof in);
    bp_tensor_release(r);
}

Test(tensor, squeeze_and_unsqueeze_change_only_metadata)
{
    bp_tensor *t = f32(cpu, 3, (int64_t[]){1, 3, 1}, (float[]){1, 2, 3}), *s = NULL, *u = NULL;
    BPT_OK(bp_squeeze(t, 0, NULL, &s));
    cr_assert_eq(bp_tensor_rank(s), 1);
    BPT_OK(bp_unsqueeze(s, -1, &u));
    cr_assert_eq(bp_tensor_rank(u), 2);
    cr_assert_eq(bp_tensor_shape(u)[0], 3);
    cr_assert_eq(bp_tensor_shape(u)[1], 1);
    bp_tensor *bad = NULL;
    BPT_FAILS(BP_ERR_SHAPE, bp_squeeze(t, 1, (int32_t[]){1}, &bad));
    BPT_FAILS(BP_ERR_SHAPE, bp_unsqueeze(s, 3, &bad));
    bp_tensor_release(t);
    bp_tensor_release(s);
    bp_tensor_release(u);
}

Test(tensor, squeeze_refuses_an_axis_listed_twice)
{
    bp_tensor *t = f32(cpu, 3, (int64_t[]){1, 3, 1}, (float[]){1, 2, 3}), *bad = NULL;
    BPT_FAILS(BP_ERR_SHAPE, bp_squeeze(t, 2, (int32_t[]){0, 0}, &bad));
    cr_assert_null(bad);
    cr_assert(strstr(bp_last_error(), "axis 0 (given as axes[1] = 0) appears twice"), "%s",
              bp_last_error());
    BPT_FAILS(BP_ERR_SHAPE, bp_squeeze(t, 3, (int32_t[]){2, 0, -1}, &bad));
    cr_assert(strstr(bp_last_error(), "axis 2 (given as axes[2] = -1) appears twice"), "%s",
              bp_last_error());
    bp_tensor *s = NULL; /* each once is fine */
    BPT_OK(bp_squeeze(t, 2, (int32_t[]){-1, 0}, &s));
    cr_assert_eq(bp_tensor_rank(s), 1);
    bp_tensor_release(s);
    bp_tensor_release(t);
}

Test(tensor, mixing_backends_is_an_error_naming_both_and_the_fix)
{
    bp_tensor *a = f32(cpu, 1, (int64_t[]){2}, (float[]){1, 2});
    bp_tensor *b = f32(other, 1, (int64_t[]){2}, (float[]){3, 4});
    bp_tensor *c = NULL;
    BPT_FAILS(BP_ERR_BACKEND_MISMATCH, bp_add(a, b, &c));
    cr_assert_null(c);
    const char *e = bp_last_error();
    cr_assert(strstr(e, "binary:0") && strstr(e, "crashy:0") && strstr(e, "bp_backend_copy"), "%s", e);
    BPT_FAILS(BP_ERR_BACKEND_MISMATCH, bp_add(b, a, &c));
    BPT_FAILS(BP_ERR_BACKEND_MISMATCH, bp_matmul(a, b, &c));
    bp_tensor *cond = NULL;
    BPT_OK(bp_tensor_from_host(other, BP_BOOL, 1, (int64_t[]){2}, (uint8_t[]){1, 0}, &cond));
    BPT_FAILS(BP_ERR_BACKEND_MISMATCH, bp_where(cond, a, a, &c));
    BPT_FAILS(BP_ERR_BACKEND_MISMATCH, bp_concat(2, (const bp_tensor *[]){a, b}, 0, &c));
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_tensor_release(cond);
}

Test(tensor, backend_copy_round_trips_exactly_between_backends)
{
    double in[5] = {1.0 / 3, -0.0, 1e300, -5e-324, 42}, out[5];
    bp_tensor *a = NULL, *b = NULL, *c = NULL;
    BPT_OK(bp_tensor_from_host(cpu, BP_F64, 1, (int64_t[]){5}, in, &a));
    BPT_OK(bp_backend_copy(a, other, &b));
    cr_assert_eq(bp_tensor_backend(b), other);
    BPT_OK(bp_backend_copy(b, cpu, &c));
    BPT_OK(bp_tensor_to_host(c, out, sizeof out));
    cr_assert_arr_eq(in, out, sizeof in);
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_tensor_release(c);
}

Test(tensor, backend_copy_stages_through_host_between_two_device_backends)
{
    int32_t in[3] = {INT32_MIN, 0, INT32_MAX}, out[3];
    bp_tensor *a = NULL, *b = NULL, *c = NULL;
    BPT_OK(bp_tensor_from_host(other, BP_I32, 1, (int64_t[]){3}, in, &a));
    BPT_OK(bp_backend_copy(a, other, &b)); /* neither side host-addressable, no copy entry: staged */
    BPT_OK(bp_backend_copy(b, cpu, &c));
    BPT_OK(bp_tensor_to_host(c, out, sizeof out));
    cr_assert_arr_eq(in, out, sizeof in);
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_tensor_release(c);
}

Test(tensor, a_tensor_used_after_transfer_gives_a_clear_error)
{
    float in[2] = {1, 2}, out[2];
    bp_tensor *a = f32(cpu, 1, (int64_t[]){2}, in), *moved = NULL, *c = NULL;
    BPT_OK(bp_backend_transfer(a, other, &moved));
    cr_assert_not(bp_tensor_is_valid(a));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_tensor_to_host(a, out, sizeof out));
    cr_assert(strstr(bp_last_error(), "bp_backend_transfer"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_neg(a, &c));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_backend_transfer(a, cpu, &c));
    BPT_OK(bp_tensor_to_host(moved, out, sizeof out));
    cr_assert_arr_eq(in, out, sizeof in);
    bp_tensor_release(a);
    bp_tensor_release(moved);
}

Test(tensor, transfer_of_a_shared_tensor_copies_and_leaves_other_holders_intact)
{
    float in[2] = {1, 2}, out[2];
    bp_tensor *a = f32(cpu, 1, (int64_t[]){2}, in), *view = NULL, *moved = NULL;
    BPT_OK(bp_reshape(a, 2, (int64_t[]){1, 2}, &view)); /* another holder of a's data */
    BPT_OK(bp_backend_transfer(a, other, &moved));
    cr_assert_not(bp_tensor_is_valid(a));
    cr_assert(bp_tensor_is_valid(view), "the data was moved from under another holder");
    BPT_OK(bp_tensor_to_host(view, out, sizeof out));
    cr_assert_arr_eq(in, out, sizeof in);
    bp_tensor_release(a);
    bp_tensor_release(view);
    bp_tensor_release(moved);
}

Test(tensor, transfer_of_a_sole_holder_frees_its_memory_at_once)
{
    bp_tensor *a = NULL, *moved = NULL;
    BPT_OK(bp_zeros(cpu, BP_F64, 1, (int64_t[]){1000}, &a));
    bp_stats s = {.struct_size = sizeof s};
    BPT_OK(bp_backend_stats(cpu, &s));
    uint64_t before = s.bytes_in_use;
    BPT_OK(bp_backend_transfer(a, other, &moved));
    BPT_OK(bp_backend_stats(cpu, &s));
    cr_assert_eq(s.bytes_in_use, before - 8000, "%llu -> %llu", (unsigned long long)before,
                 (unsigned long long)s.bytes_in_use);
    bp_tensor_release(a);
    bp_tensor_release(moved);
}

Test(tensor, unsupported_op_names_backend_op_and_dtype)
{
    bp_tensor *a = f32(other, 1, (int64_t[]){2}, (float[]){1, 2}), *c = NULL;
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_add(a, a, &c));
    const char *e = bp_last_error();
    cr_assert(strstr(e, "crashy:0") && strstr(e, "add") && strstr(e, "f32"), "%s", e);
    cr_assert_not(bp_backend_supports(other, BP_OP_ADD, BP_F32));
    cr_assert(bp_backend_supports(cpu, BP_OP_ADD, BP_F32));
    bp_tensor_release(a);
}

Test(tensor, status_names_come_from_one_list)
{
    cr_assert_str_eq(bp_status_string(BP_OK), "BP_OK");
    cr_assert_str_eq(bp_status_string(BP_ERR_BACKEND_MISMATCH), "BP_ERR_BACKEND_MISMATCH");
    cr_assert_str_eq(bp_status_string((bp_status)999), "BP_UNKNOWN_STATUS");
    cr_assert_str_eq(bp_status_message(BP_ERR_SHAPE), "incompatible or invalid shape");
}

static void *worker(void *arg)
{
    bp_backend *be = arg;
    for (int i = 0; i < 200; i++) {
        bp_tensor *a = NULL, *b = NULL, *bad = NULL;
        float v = (float)i;
        if (bp_tensor_from_host(be, BP_F32, 0, NULL, &v, &a) != BP_OK)
            return "from_host failed";
        if (bp_add(a, a, &b) != BP_OK)
            return "add failed";
        double d;
        if (bp_item_f64(b, &d) != BP_OK || d != 2.0 * i)
            return "wrong sum";
        /* each thread's error stays its own */
        if (bp_reshape(a, 1, (int64_t[]){2}, &bad) != BP_ERR_SHAPE || !strstr(bp_last_error(), "bp_reshape"))
            return "error message crossed threads";
        bp_tensor_release(a);
        bp_tensor_release(b);
    }
    return NULL;
}

Test(tensor, one_context_serves_several_threads_with_per_thread_errors)
{
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, worker, cpu), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        cr_assert_null(r, "thread %d: %s", i, (const char *)r);
    }
}

Test(tensor, two_contexts_do_not_share_backends)
{
    bp_context *ctx2 = bpt_context();
    bp_backend *cpu2 = NULL;
    BPT_OK(bp_backend_get(ctx2, "binary", &cpu2));
    cr_assert_neq(cpu, cpu2);
    bp_tensor *a = f32(cpu, 1, (int64_t[]){1}, (float[]){1}), *b = f32(cpu2, 1, (int64_t[]){1}, (float[]){1}), *c = NULL;
    BPT_FAILS(BP_ERR_BACKEND_MISMATCH, bp_add(a, b, &c));
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_context_destroy(ctx2);
}

Test(tensor_lifetime, destroy_with_live_tensors_warns_and_keeps_them_usable, .init = cr_redirect_stderr)
{
    bp_context *c = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(c, "binary", &be));
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F32, 1, (int64_t[]){4}, (float[]){1, 2, 3, 4}, &t));
    bp_context_destroy(c);
    float out[4];
    BPT_OK(bp_tensor_to_host(t, out, sizeof out)); /* still valid */
    cr_assert_eq(out[3], 4.0f);
    bp_tensor_release(t); /* the last release frees the context */
    fflush(stderr);
    cr_assert_stderr_eq_str(
        "backplane: warn: bp_context_destroy: 1 tensor buffer(s) still alive, 16 bytes "
        "[binary:0: 1 (16 bytes)]; the context stays until the last is released with "
        "bp_tensor_release\n");
}

Test(tensor_lifetime, the_library_writes_nothing_to_stdout, .init = cr_redirect_stdout)
{
    setenv("BP_LOG_LEVEL", "debug", 1);
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    bp_context *c = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_default(c, &be));
    bp_tensor *t = NULL, *u = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F32, 1, (int64_t[]){2}, (float[]){1, 2}, &t));
    BPT_OK(bp_exp(t, &u));
    bp_backend_get(c, "open_fails", &be);
    bp_tensor_release(t);
    bp_tensor_release(u);
    bp_context_destroy(c);
    fflush(stdout);
    cr_assert_stdout_eq_str("");
}

Test(tensor_guards, guards_stay_intact_through_ops_on_the_binary_backend)
{
    bp_context *c = bpt_context();
    BPT_OK(bp_context_set_debug_guards(c, 64));
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(c, "binary", &be));
    float in[6] = {1, -2, 3, -4, 5, -6}, out[6];
    bp_tensor *a = NULL, *t = NULL, *m = NULL, *s = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F32, 2, (int64_t[]){2, 3}, in, &a));
    BPT_OK(bp_transpose(a, NULL, &t));
    BPT_OK(bp_matmul(a, t, &m));
    BPT_OK(bp_sum(a, 1, (int32_t[]){1}, false, &s));
    BPT_OK(bp_tensor_to_host(a, out, sizeof out)); /* reads skip the guards */
    cr_assert_arr_eq(in, out, sizeof in);
    bp_tensor *all[] = {a, t, m, s};
    for (int i = 0; i < 4; i++) {
        BPT_OK(bp_tensor_check_guards(all[i]));
        bp_tensor_release(all[i]);
    }
    bp_context_destroy(c);
}

Test(tensor_guards, a_backend_writing_past_its_output_is_caught)
{
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    bp_context *c = bpt_context();
    BPT_OK(bp_context_set_debug_guards(c, 64));
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(c, "overrun", &be));
    bp_tensor *a = NULL, *n = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F32, 1, (int64_t[]){3}, (float[]){1, 2, 3}, &a));
    BPT_OK(bp_neg(a, &n));
    BPT_OK(bp_tensor_check_guards(a));
    BPT_FAILS(BP_ERR_BACKEND, bp_tensor_check_guards(n));
    const char *e = bp_last_error();
    cr_assert(strstr(e, "overrun:0") && strstr(e, "past the end"), "%s", e);
    float out[3];
    BPT_OK(bp_tensor_to_host(n, out, sizeof out));
    cr_assert(out[0] == -1 && out[1] == -2 && out[2] == -3);
    bp_tensor_release(a);
    bp_tensor_release(n);
    bp_context_destroy(c);
}

/* ---- reliability regressions (found by fuzzing) --------------------------- */

Test(tensor, a_zero_element_shape_whose_other_extents_overflow_is_refused)
{
    /* NumPy bounds the product of the non-zero extents too: the strides of
     * such a shape overflow even though it holds no element. */
    bp_tensor *t = NULL;
    BPT_FAILS(BP_ERR_SHAPE, bp_zeros(cpu, BP_F32, 3, (int64_t[]){0, 1LL << 62, 4}, &t));
    cr_assert_null(t);
    BPT_FAILS(BP_ERR_SHAPE,
              bp_tensor_from_host(cpu, BP_F64, 2, (int64_t[]){INT64_MAX, 0}, NULL, &t));
    cr_assert(strstr(bp_last_error(), "non-zero extents"), "%s", bp_last_error());
    /* a zero-element shape whose other extents fit stays valid */
    BPT_OK(bp_zeros(cpu, BP_F32, 3, (int64_t[]){0, 1LL << 20, 4}, &t));
    cr_assert_eq(bp_tensor_numel(t), 0);
    bp_tensor_release(t);
}

Test(tensor_guards, debug_guards_refuse_sizes_that_would_misalign_tensors)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    bp_context *c = bpt_context();
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_context_set_debug_guards(c, 7));
    cr_assert(strstr(bp_last_error(), "multiple of 64"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_context_set_debug_guards(c, 96));
    BPT_OK(bp_context_set_debug_guards(c, 0));
    BPT_OK(bp_context_set_debug_guards(c, 64));
    BPT_OK(bp_context_set_debug_guards(c, 4096));
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(c, "binary", &be));
    bp_tensor *t = NULL;
    BPT_OK(bp_zeros(be, BP_F64, 1, (int64_t[]){3}, &t));
    BPT_OK(bp_tensor_check_guards(t));
    bp_tensor_release(t);
    bp_context_destroy(c);
}

Test(tensor, reshape_of_an_empty_tensor_refuses_extents_that_overflow)
{
    bp_tensor *t = NULL, *r = NULL;
    BPT_OK(bp_zeros(cpu, BP_F32, 1, (int64_t[]){0}, &t));
    BPT_FAILS(BP_ERR_SHAPE, bp_reshape(t, 3, (int64_t[]){0, 1LL << 62, 4}, &r));
    cr_assert_null(r);
    BPT_OK(bp_reshape(t, 2, (int64_t[]){0, 5}, &r));
    bp_tensor_release(r);
    bp_tensor_release(t);
}

/* ---- free repeated copies and transfer accounting -------------- */

static bp_stats stats_of(bp_backend *be)
{
    bp_stats s = {.struct_size = sizeof s};
    BPT_OK(bp_backend_stats(be, &s));
    return s;
}

Test(tensor, copy_to_own_backend_is_free)
{
    bp_tensor *a = f32(cpu, 1, (int64_t[]){3}, (float[]){1, 2, 3}), *b = NULL;
    bp_stats s0 = stats_of(cpu);
    BPT_OK(bp_backend_copy(a, cpu, &b));
    bp_stats s1 = stats_of(cpu);
    cr_assert_eq(b, a, "a copy to the tensor's own backend is the tensor itself");
    cr_assert_eq(s1.copy_hits, s0.copy_hits + 1);
    cr_assert_eq(s1.allocs, s0.allocs, "nothing was allocated");
    cr_assert_eq(s1.ops, s0.ops, "nothing was dispatched");
    bp_tensor_release(b); /* one more reference: released like any other */
    float out[3];
    BPT_OK(bp_tensor_to_host(a, out, sizeof out));
    bp_tensor_release(a);
}

Test(tensor, second_copy_of_same_tensor_is_free)
{
    bp_tensor *a = f32(cpu, 1, (int64_t[]){3}, (float[]){1, 2, 3}), *b1 = NULL, *b2 = NULL, *b3;
    bp_stats s0 = stats_of(other);
    BPT_OK(bp_backend_copy(a, other, &b1));
    BPT_OK(bp_backend_copy(a, other, &b2));
    bp_stats s1 = stats_of(other);
    cr_assert_eq(b2, b1, "the second copy is the first, while it lives");
    cr_assert_eq(s1.copies_in, s0.copies_in + 1, "one transfer, not two");
    cr_assert_eq(s1.copy_hits, s0.copy_hits + 1);
    bp_tensor_release(b1);
    bp_tensor_release(b2);
    BPT_OK(bp_backend_copy(a, other, &b3)); /* the first copy is gone: a new transfer */
    bp_stats s2 = stats_of(other);
    cr_assert_eq(s2.copies_in, s1.copies_in + 1);
    float out[3];
    BPT_OK(bp_tensor_to_host(b3, out, sizeof out));
    cr_assert_arr_eq(out, ((float[]){1, 2, 3}), sizeof out);
    bp_tensor_release(b3);
    bp_tensor_release(a);
}

Test(tensor, a_kept_copy_outlives_its_source)
{
    bp_tensor *a = f32(cpu, 1, (int64_t[]){2}, (float[]){5, 6}), *b = NULL;
    BPT_OK(bp_backend_copy(a, other, &b));
    bp_tensor_release(a);
    float out[2];
    BPT_OK(bp_tensor_to_host(b, out, sizeof out));
    cr_assert_arr_eq(out, ((float[]){5, 6}), sizeof out);
    bp_tensor_release(b);
}

Test(tensor, stats_count_host_transfers)
{
    bp_stats s0 = stats_of(cpu);
    bp_tensor *a = f32(cpu, 2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4}), *b = NULL;
    BPT_OK(bp_neg(a, &b));
    float out[4];
    BPT_OK(bp_tensor_to_host(b, out, sizeof out));
    double item;
    bp_tensor *one = NULL;
    BPT_OK(bp_sum(b, 0, NULL, false, &one));
    BPT_OK(bp_item_f64(one, &item));
    BPT_OK(bp_synchronize(cpu));
    bp_stats s1 = stats_of(cpu);
    cr_assert_eq(s1.h2d_calls - s0.h2d_calls, 1);
    cr_assert_eq(s1.h2d_bytes - s0.h2d_bytes, 16);
    cr_assert_eq(s1.d2h_calls - s0.d2h_calls, 2);
    cr_assert_eq(s1.d2h_bytes - s0.d2h_bytes, 16 + 4);
    cr_assert_eq(s1.sync_reads - s0.sync_reads, 3, "two reads and bp_synchronize");
    cr_assert_eq(s1.ops - s0.ops, 2, "neg and sum");
    cr_assert_eq(s1.allocs - s0.allocs, 3);
    cr_assert_geq(s1.peak_bytes_in_use, s1.bytes_in_use);
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_tensor_release(one);
    BPT_OK(bp_backend_stats_reset(cpu));
    bp_stats s2 = stats_of(cpu);
    cr_assert_eq(s2.ops + s2.h2d_calls + s2.d2h_calls + s2.sync_reads + s2.allocs, 0);
    cr_assert_eq(s2.peak_bytes_in_use, s2.bytes_in_use);
}

Test(tensor, stats_count_copies_between_backends_on_both_sides)
{
    bp_tensor *a = f32(cpu, 1, (int64_t[]){4}, (float[]){1, 2, 3, 4}), *b = NULL, *c = NULL;
    bp_stats c0 = stats_of(cpu), o0 = stats_of(other);
    BPT_OK(bp_backend_copy(a, other, &b));
    BPT_OK(bp_backend_transfer(b, cpu, &c)); /* b was a's kept copy: a new transfer back */
    bp_stats c1 = stats_of(cpu), o1 = stats_of(other);
    cr_assert_eq(c1.copies_out - c0.copies_out, 1);
    cr_assert_eq(o1.copies_in - o0.copies_in, 1);
    cr_assert_eq(o1.copies_in_bytes - o0.copies_in_bytes, 16);
    cr_assert_eq(o1.copies_out - o0.copies_out, 1);
    cr_assert_eq(c1.copies_in - c0.copies_in, 1);
    bp_tensor *d = NULL;
    BPT_OK(bp_backend_copy(a, other, &d)); /* b was given away: no longer a's copy */
    cr_assert_neq(d, b);
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_tensor_release(c);
    bp_tensor_release(d);
}

/* bp_backend_copy hands every caller the same handle while a kept copy
 * lives, so each believes it holds its own tensor: a transfer of that
 * handle copies and leaves it valid, never taking it from the others. */
Test(tensor, transfer_of_one_of_two_equal_copies_leaves_the_other_valid)
{
    float in[3] = {1, 2, 3}, out[3];
    bp_tensor *a = f32(cpu, 1, (int64_t[]){3}, in), *b1 = NULL, *b2 = NULL, *moved = NULL;
    BPT_OK(bp_backend_copy(a, other, &b1));
    BPT_OK(bp_backend_copy(a, other, &b2)); /* the kept copy: free, shared */
    BPT_OK(bp_backend_transfer(b1, cpu, &moved));
    cr_assert(bp_tensor_is_valid(b2), "a transfer by one holder invalidated another's copy");
    BPT_OK(bp_tensor_to_host(b2, out, sizeof out));
    cr_assert_arr_eq(in, out, sizeof in);
    BPT_OK(bp_tensor_to_host(moved, out, sizeof out));
    cr_assert_arr_eq(in, out, sizeof in);
    bp_tensor_release(b1);
    bp_tensor_release(b2);
    bp_tensor_release(moved);
    bp_tensor_release(a);
}

/* A DLPack export holds the tensor: a transfer then keeps the memory the
 * other library reads, and the tensor itself. */
Test(tensor, transfer_of_a_tensor_lent_through_dlpack_keeps_the_lent_memory)
{
    bp_tensor *a = NULL, *moved = NULL;
    BPT_OK(bp_arange(cpu, BP_F64, 0, 1000, 1, &a));
    struct DLManagedTensor *m = NULL;
    BPT_OK(bp_tensor_to_dlpack(a, &m));
    bp_stats s0 = stats_of(cpu);
    BPT_OK(bp_backend_transfer(a, other, &moved));
    bp_stats s1 = stats_of(cpu);
    cr_assert_eq(s1.bytes_in_use, s0.bytes_in_use, "the lent memory was freed by the transfer");
    cr_assert(bp_tensor_is_valid(a));
    const double *lent = m->dl_tensor.data; /* what the other library reads */
    cr_assert_eq(lent[999], 999.0);
    bp_tensor_release(a);
    bp_tensor_release(moved);
    m->deleter(m);
}

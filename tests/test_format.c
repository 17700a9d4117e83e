/* Printing tensors as NumPy prints arrays. The expected bodies below are
 * what NumPy 2.4's str() prints for the same arrays. */
#include <stdlib.h>
#include <string.h>

#include "bpt.h"

static bp_context *ctx;
static bp_backend *cpu;

static void setup(void)
{
    ctx = bpt_context();
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
}
static void teardown(void) { bp_context_destroy(ctx); }
TestSuite(format, .init = setup, .fini = teardown);

/* The text after the header line. */
static const char *body(const bp_tensor *t)
{
    static char buf[8192];
    BPT_OK(bp_tensor_format(t, buf, sizeof buf, NULL));
    const char *nl = strchr(buf, '\n');
    cr_assert_not_null(nl, "%s", buf);
    return nl + 1;
}

static bp_tensor *from(bp_dtype dt, int32_t rank, const int64_t *shape, const void *data)
{
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(cpu, dt, rank, shape, data, &t));
    return t;
}

Test(format, a_header_line_names_shape_dtype_and_backend)
{
    bp_tensor *t = from(BP_F32, 2, (int64_t[]){2, 3}, (float[]){1.5f, -2, 3, 4, 5, 6});
    char buf[256];
    BPT_OK(bp_tensor_format(t, buf, sizeof buf, NULL));
    cr_assert_str_eq(buf, "tensor (2, 3) f32 on binary:0\n[[ 1.5 -2.   3. ]\n [ 4.   5.   6. ]]");
    bp_tensor_release(t);
}

Test(format, floats_print_the_fewest_digits_that_identify_them_aligned_on_the_point)
{
    bp_tensor *t = from(BP_F32, 1, (int64_t[]){3}, (float[]){0.1f, 0.25f, 1.0f / 3});
    cr_assert_str_eq(body(t), "[0.1        0.25       0.33333334]");
    bp_tensor_release(t);
    t = from(BP_F64, 1, (int64_t[]){3}, (double[]){NAN, 1.0, -INFINITY});
    cr_assert_str_eq(body(t), "[ nan   1. -inf]");
    bp_tensor_release(t);
}

Test(format, magnitudes_far_apart_print_in_scientific_notation)
{
    bp_tensor *t = from(BP_F64, 1, (int64_t[]){2}, (double[]){1e9, 2.0});
    cr_assert_str_eq(body(t), "[1.e+09 2.e+00]");
    bp_tensor_release(t);
    t = from(BP_F64, 1, (int64_t[]){4}, (double[]){1e-5, 1.5e3, -0.0, INFINITY});
    cr_assert_str_eq(body(t), "[ 1.0e-05  1.5e+03 -0.0e+00      inf]");
    bp_tensor_release(t);
}

Test(format, higher_ranks_nest_with_a_blank_line_between_blocks)
{
    bp_tensor *a = NULL, *t = NULL;
    BPT_OK(bp_arange(cpu, BP_F64, 0, 24, 1, &a));
    BPT_OK(bp_reshape(a, 3, (int64_t[]){2, 3, 4}, &t));
    cr_assert_str_eq(body(t), "[[[ 0.  1.  2.  3.]\n  [ 4.  5.  6.  7.]\n  [ 8.  9. 10. 11.]]\n\n"
                              " [[12. 13. 14. 15.]\n  [16. 17. 18. 19.]\n  [20. 21. 22. 23.]]]");
    bp_tensor_release(a);
    bp_tensor_release(t);
}

Test(format, large_tensors_are_summarised_with_edge_items)
{
    bp_tensor *a = NULL, *t = NULL;
    BPT_OK(bp_arange(cpu, BP_I64, 0, 1200, 1, &a));
    BPT_OK(bp_reshape(a, 2, (int64_t[]){40, 30}, &t));
    cr_assert_str_eq(body(t), "[[   0    1    2 ...   27   28   29]\n"
                              " [  30   31   32 ...   57   58   59]\n"
                              " [  60   61   62 ...   87   88   89]\n"
                              " ...\n"
                              " [1110 1111 1112 ... 1137 1138 1139]\n"
                              " [1140 1141 1142 ... 1167 1168 1169]\n"
                              " [1170 1171 1172 ... 1197 1198 1199]]");
    bp_tensor_release(a);
    bp_tensor_release(t);
}

Test(format, integers_bools_scalars_and_empty_tensors)
{
    bp_tensor *t = from(BP_I8, 1, (int64_t[]){3}, (int8_t[]){-128, 0, 127});
    cr_assert_str_eq(body(t), "[-128    0  127]");
    bp_tensor_release(t);
    t = from(BP_BOOL, 1, (int64_t[]){3}, (unsigned char[]){1, 0, 1});
    cr_assert_str_eq(body(t), "[ True False  True]");
    bp_tensor_release(t);
    t = from(BP_F32, 0, NULL, (float[]){3.25f});
    cr_assert_str_eq(body(t), "3.25");
    bp_tensor_release(t);
    t = from(BP_F32, 2, (int64_t[]){0, 3}, NULL);
    cr_assert_str_eq(body(t), "[]");
    bp_tensor_release(t);
}

Test(format, the_precision_option_caps_the_digits)
{
    bp_tensor *t = from(BP_F64, 1, (int64_t[]){2}, (double[]){1.0 / 3, 2.0 / 3});
    bp_format_options o = bp_format_defaults();
    o.precision = 3;
    char buf[256];
    BPT_OK(bp_tensor_format(t, buf, sizeof buf, &o));
    cr_assert_str_eq(strchr(buf, '\n') + 1, "[0.333 0.667]");
    o.precision = 40;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_tensor_format(t, buf, sizeof buf, &o));
    bp_tensor_release(t);
}

Test(format, a_buffer_too_small_is_refused_saying_the_size_needed)
{
    bp_tensor *t = from(BP_F32, 1, (int64_t[]){3}, (float[]){1, 2, 3});
    char buf[10];
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_tensor_format(t, buf, sizeof buf, NULL));
    cr_assert(strstr(bp_last_error(), "needs"), "%s", bp_last_error());
    cr_assert_eq(strlen(buf), sizeof buf - 1, "the beginning, NUL-terminated");
    bp_tensor_release(t);
}

Test(format, printing_is_one_synchronising_read)
{
    bp_backend *dev = NULL;
    BPT_OK(bp_backend_get(ctx, BPT_DEVSIM_PATH, &dev));
    bp_tensor *t = NULL;
    BPT_OK(bp_ones(dev, BP_F32, 1, (int64_t[]){4}, &t));
    bp_stats s0 = {.struct_size = sizeof s0}, s1 = {.struct_size = sizeof s1};
    BPT_OK(bp_backend_stats(dev, &s0));
    FILE *null = fopen("/dev/null", "w");
    BPT_OK(bp_tensor_print(t, null));
    fclose(null);
    BPT_OK(bp_backend_stats(dev, &s1));
    cr_assert_eq(s1.sync_reads - s0.sync_reads, 1);
    cr_assert_eq(s1.d2h_bytes - s0.d2h_bytes, 16);
    bp_tensor_release(t);
}

/* Printing tensors as NumPy prints arrays. The expected bodies below are
 * what NumPy 2.4's str() prints for the same arrays (f16, f32 and f64 values
 * rounded to the dtype as astype does). */
#include <stdlib.h>
#include <string.h>

#include <backplane/cast.h>

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

Test(format, a_summarised_axis_above_the_rows_sets_its_ellipsis_apart_as_numpy_does)
{
    bp_tensor *a = NULL, *t = NULL;
    BPT_OK(bp_arange(cpu, BP_I64, 0, 1400, 1, &a));
    BPT_OK(bp_reshape(a, 3, (int64_t[]){7, 2, 100}, &t));
    cr_assert_str_eq(body(t), "[[[   0    1    2 ...   97   98   99]\n"
                              "  [ 100  101  102 ...  197  198  199]]\n\n"
                              " [[ 200  201  202 ...  297  298  299]\n"
                              "  [ 300  301  302 ...  397  398  399]]\n\n"
                              " [[ 400  401  402 ...  497  498  499]\n"
                              "  [ 500  501  502 ...  597  598  599]]\n\n"
                              " ...\n\n"
                              " [[ 800  801  802 ...  897  898  899]\n"
                              "  [ 900  901  902 ...  997  998  999]]\n\n"
                              " [[1000 1001 1002 ... 1097 1098 1099]\n"
                              "  [1100 1101 1102 ... 1197 1198 1199]]\n\n"
                              " [[1200 1201 1202 ... 1297 1298 1299]\n"
                              "  [1300 1301 1302 ... 1397 1398 1399]]]");
    bp_tensor_release(a);
    bp_tensor_release(t);
}

/* A 0-d float prints as NumPy's str() of it, which is its scalar's: the
 * shortest round-trip digits, positional within the dtype's range. */
static const char *scalar_body(bp_dtype dt, double v)
{
    unsigned char e[8];
    bp_elem_store_f64(dt, e, v);
    bp_tensor *t = from(dt, 0, NULL, e);
    const char *s = body(t);
    bp_tensor_release(t);
    return s;
}

Test(format, a_0d_float_prints_as_numpys_scalar_str)
{
    cr_assert_str_eq(scalar_body(BP_F64, 0.0), "0.0");
    cr_assert_str_eq(scalar_body(BP_F64, -0.0), "-0.0");
    cr_assert_str_eq(scalar_body(BP_F64, 1e-5), "1e-05");
    cr_assert_str_eq(scalar_body(BP_F64, 0.1 + 0.2), "0.30000000000000004");
    cr_assert_str_eq(scalar_body(BP_F64, 123456789.0), "123456789.0");
    cr_assert_str_eq(scalar_body(BP_F64, 1e16), "1e+16");
    cr_assert_str_eq(scalar_body(BP_F64, 3.14159265), "3.14159265");
    cr_assert_str_eq(scalar_body(BP_F32, 0.1), "0.1");
    cr_assert_str_eq(scalar_body(BP_F32, 1e-4), "1e-04"); /* f32's 1e-4 is below 1e-4 */
    cr_assert_str_eq(scalar_body(BP_F32, 100000.0), "100000.0");
    cr_assert_str_eq(scalar_body(BP_F32, 1e6), "1e+06");
    cr_assert_str_eq(scalar_body(BP_F32, 123456789.0), "1.2345679e+08");
    cr_assert_str_eq(scalar_body(BP_F16, 999.0), "999.0");
    cr_assert_str_eq(scalar_body(BP_F16, 1000.0), "1e+03");
    cr_assert_str_eq(scalar_body(BP_F64, NAN), "nan");
    cr_assert_str_eq(scalar_body(BP_F64, -INFINITY), "-inf");
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

/* An f16 tensor of these values (each rounded to f16, as NumPy's astype). */
static bp_tensor *f16_of(int64_t n, const double *v)
{
    uint16_t h[16];
    cr_assert_leq(n, 16);
    for (int64_t i = 0; i < n; i++)
        h[i] = bp_f64_to_f16(v[i]);
    return from(BP_F16, 1, (int64_t[]){n}, h);
}

Test(format, f16_in_scientific_notation_shows_the_exact_digits_as_numpy_does)
{
    /* f16's 0.1 is 0.0999755859375: beside 1.003e+02 NumPy prints its exact
     * digits (9.998e-02), not the shortest ones padded with zeros */
    bp_tensor *t = f16_of(4, (double[]){0.1, 1.5, -2.25, 100.3});
    cr_assert_str_eq(body(t), "[ 9.998e-02  1.500e+00 -2.250e+00  1.003e+02]");
    bp_tensor_release(t);
    t = f16_of(2, (double[]){1e-5, 1234.5678});
    cr_assert_str_eq(body(t), "[1.001e-05 1.235e+03]");
    bp_tensor_release(t);
}

Test(format, scientific_notation_starts_where_the_dtype_runs_out_of_digits_as_in_numpy_2)
{
    /* 10^min(8, decimal digits): 1e3 for f16, 1e6 for f32, 1e8 for f64 */
    bp_tensor *t = f16_of(2, (double[]){-5972, 33152});
    cr_assert_str_eq(body(t), "[-5.972e+03  3.315e+04]");
    bp_tensor_release(t);
    t = from(BP_F32, 1, (int64_t[]){2}, (float[]){1e6f, 2e6f});
    cr_assert_str_eq(body(t), "[1.e+06 2.e+06]");
    bp_tensor_release(t);
    t = from(BP_F64, 1, (int64_t[]){2}, (double[]){1e6, 2e6});
    cr_assert_str_eq(body(t), "[1000000. 2000000.]");
    bp_tensor_release(t);
}

Test(format, nan_and_inf_take_the_width_of_the_finite_values)
{
    bp_tensor *t = f16_of(5, (double[]){INFINITY, -4405.9, -3.3894, -1.0588, 28339.7});
    cr_assert_str_eq(body(t), "[       inf -4.404e+03 -3.389e+00 -1.059e+00  2.834e+04]");
    bp_tensor_release(t);
    t = f16_of(3, (double[]){-INFINITY, -0.12115, 5.3226});
    cr_assert_str_eq(body(t), "[    -inf -0.12115  5.324  ]");
    bp_tensor_release(t);
}

Test(format, rows_wrap_before_the_closing_bracket_without_trailing_padding)
{
    bp_tensor *t = from(BP_F32, 1, (int64_t[]){5},
                        (float[]){992260.15f, -4405.8866f, -3.3894136f, -1.0587843f, 28339.724f});
    cr_assert_str_eq(body(t), "[ 9.9226012e+05 -4.4058867e+03 -3.3894136e+00 -1.0587842e+00\n"
                              "  2.8339725e+04]");
    bp_tensor_release(t);
    t = from(BP_F32, 1, (int64_t[]){7},
             (float[]){-0.2252706f, -1.5426701f, 1.3929003f, 0.5f, -0.5284681f, -0.7154679f,
                       -0.24627103f});
    cr_assert_str_eq(body(t), "[-0.2252706  -1.5426701   1.3929003   0.5        -0.5284681  -0.7154679\n"
                              " -0.24627103]");
    bp_tensor_release(t);
}

Test(format, bools_are_five_wide_even_when_all_are_true)
{
    bp_tensor *t = from(BP_BOOL, 1, (int64_t[]){2}, (unsigned char[]){1, 1});
    cr_assert_str_eq(body(t), "[ True  True]");
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

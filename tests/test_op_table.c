/* The op table (opcodes.h) as data: every row well formed, and what it
 * says true of the core: each op's function refuses exactly the dtypes
 * outside the row's class, and every input the row does not mark optional
 * is required, refused when NULL with a message naming it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"
#include "op_calls.h"

Test(op_table, every_row_is_well_formed)
{
    uint32_t prev_since = 0;
    for (int op = 0; op < BP_OP_COUNT; op++) {
        const bp_op_info *r = bp_op_info_of((bp_op)op);
        cr_assert_not_null(r);
        cr_assert(r->name && *r->name, "op %d has no name", op);
        cr_assert_lt((int)r->kind, (int)BP_KIND_COUNT, "%s", r->name);
        cr_assert_geq(r->since, prev_since, "%s: codes are appended in ABI order", r->name);
        prev_since = r->since;
        uint32_t oi, oo;
        int32_t n_in = bp_op_arity(r->in, &oi), n_out = bp_op_arity(r->out, &oo);
        cr_assert(n_in >= 0 && n_in <= 5, "%s: %d inputs", r->name, (int)n_in);
        cr_assert(n_out >= 1 && n_out <= 3, "%s: %d outputs", r->name, (int)n_out);
        cr_assert_eq(oo & 1u, 0, "%s: its first output is always there", r->name);
        cr_assert(r->typed >= -1 && r->typed < n_in, "%s: typed input %d of %d", r->name,
                  (int)r->typed, (int)n_in);
        cr_assert_eq(r->typed < 0, n_in == 0, "%s: an op with inputs is typed by one", r->name);
        if (r->typed >= 0)
            cr_assert_eq((oi >> r->typed) & 1u, 0, "%s: its typed input is optional", r->name);
        for (int32_t k = 0; k < n_in; k++) {
            char name[32];
            bp_op_arg_name(r->in, k, name, sizeof name);
            cr_assert(*name && !strchr(name, '?'), "%s: input %d is '%s'", r->name, (int)k, name);
        }
        cr_assert_eq(bp_op_since((bp_op)op), r->since);
        cr_assert_str_eq(bp_op_name((bp_op)op), r->name);
    }
    cr_assert_eq(bp_op_since(BP_OP_FIRST_1_4), 4);
    cr_assert_eq(bp_op_since((bp_op)(BP_OP_FIRST_1_4 - 1)), 0);
    cr_assert_eq(bp_op_since(BP_OP_FIRST_1_5), 5);
    cr_assert_eq(bp_op_since((bp_op)(BP_OP_FIRST_1_5 - 1)), 4);
    cr_assert_null(bp_op_info_of(BP_OP_COUNT));
    cr_assert_str_eq(bp_op_name(BP_OP_COUNT), "?");
}

Test(op_table, arity_and_names_are_read_from_the_row)
{
    uint32_t opt = 0;
    cr_assert_eq(bp_op_arity("x w bias?", &opt), 3);
    cr_assert_eq(opt, 4u);
    cr_assert_eq(bp_op_arity("", &opt), 0);
    cr_assert_eq(bp_op_arity("y mean? inv_std?", &opt), 3);
    cr_assert_eq(opt, 6u);
    char buf[8];
    cr_assert_str_eq(bp_op_arg_name("x w bias?", 2, buf, sizeof buf), "bias");
    cr_assert_str_eq(bp_op_arg_name("x w bias?", 3, buf, sizeof buf), "");
    cr_assert_str_eq(bp_op_arg_name("scores labels", 1, buf, sizeof buf), "labels");
    cr_assert_eq(strlen(buf), 6);
    cr_assert_str_eq(bp_op_arg_name("indices", 0, buf, 4), "ind", "truncated to the buffer");
}

static bool in_class(bp_op_dtypes cls, bp_dtype dt)
{
    switch (cls) {
    case BP_DTYPES_ANY: return true;
    case BP_DTYPES_NUMERIC: return dt != BP_BOOL;
    case BP_DTYPES_FLOAT: return bp_dtype_is_float(dt);
    case BP_DTYPES_BOOL: return dt == BP_BOOL;
    case BP_DTYPES_INTEGER: return bp_dtype_is_int(dt);
    }
    return false;
}

/* Resize takes integers only in its nearest mode (the default op_calls
 * uses): the row says numeric, the linear and cubic modes refuse them. */
Test(op_table, each_ops_function_refuses_exactly_the_dtypes_outside_its_row)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    for (int op = 0; op < BP_OP_COUNT; op++) {
        const bp_op_info *r = bp_op_info_of((bp_op)op);
        for (int dt = 0; dt < BP_DTYPE_COUNT; dt++) {
            bp_status st = bpt_op_call(be, (bp_op)op, (bp_dtype)dt, -1);
            bool core = st != BP_ERR_DTYPE, table = in_class(r->dtypes, (bp_dtype)dt);
            cr_expect_eq(core, table, "%s / %s: the core says %s (%s), the table %s", r->name,
                         bp_dtype_name((bp_dtype)dt), bp_status_string(st),
                         st == BP_OK ? "" : bp_last_error(), table ? "accepts" : "refuses");
        }
    }
    bp_context_destroy(ctx);
}

Test(op_table, every_op_refuses_a_null_required_input_naming_it)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    int checked = 0;
    for (int op = 0; op < BP_OP_COUNT; op++) {
        const bp_op_info *r = bp_op_info_of((bp_op)op);
        uint32_t optional;
        int32_t n_in = bp_op_arity(r->in, &optional);
        bp_dtype dt = r->dtypes == BP_DTYPES_BOOL ? BP_BOOL
                      : r->dtypes == BP_DTYPES_INTEGER ? BP_I32 : BP_F32;
        for (int32_t k = 0; k < n_in; k++) {
            char name[32], want[64];
            bp_op_arg_name(r->in, k, name, sizeof name);
            bp_status st = bpt_op_call(be, (bp_op)op, dt, k);
            if (optional >> k & 1u) {
                cr_expect_eq(st, BP_OK, "%s without its optional %s: %s: %s", r->name, name,
                             bp_status_string(st), bp_last_error());
                continue;
            }
            /* concat's public function takes its inputs as an array */
            snprintf(want, sizeof want, "%s is NULL", op == BP_OP_CONCAT ? "xs[0]" : name);
            cr_expect_eq(st, BP_ERR_INVALID_ARGUMENT, "%s with %s NULL: %s: %s", r->name, name,
                         bp_status_string(st), bp_last_error());
            cr_expect(strstr(bp_last_error(), want), "%s with %s NULL says: %s", r->name, name,
                      bp_last_error());
            checked++;
        }
    }
    cr_assert_gt(checked, 150);
    bp_context_destroy(ctx);
}

static void expect_same(const bp_tensor *a, const bp_tensor *b, const char *what)
{
    double x[6], y[6];
    bp_tensor *ca = NULL, *cb = NULL;
    BPT_OK(bp_cast(a, BP_F64, &ca));
    BPT_OK(bp_cast(b, BP_F64, &cb));
    cr_assert_eq(bp_tensor_numel(ca), bp_tensor_numel(cb), "%s", what);
    BPT_OK(bp_tensor_to_host(ca, x, sizeof x));
    BPT_OK(bp_tensor_to_host(cb, y, sizeof y));
    cr_assert_arr_eq(x, y, (size_t)bp_tensor_numel(ca) * sizeof x[0], "%s", what);
    bp_tensor_release(ca);
    bp_tensor_release(cb);
}

/* bp_unary, bp_binary and bp_reduce take every code of their kind (the ops
 * of later ABI minors too, with ONNX's defaults for parameters) and refuse
 * codes of other kinds. */
Test(op_table, unary_binary_and_reduce_take_every_code_of_their_kind)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    const double v[6] = {-2, -0.5, 0, 0.25, 0.5, 3};
    const int32_t iv[6] = {5, 3, 0, 12, 7, 1};
    bp_tensor *x = NULL, *i = NULL, *a = NULL, *b = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F64, 1, (int64_t[]){6}, v, &x));
    BPT_OK(bp_tensor_from_host(be, BP_I32, 1, (int64_t[]){6}, iv, &i));
    BPT_OK(bp_unary(BP_OP_ASINH, x, &a));
    BPT_OK(bp_asinh(x, &b));
    expect_same(a, b, "bp_unary(ASINH) and bp_asinh");
    bp_tensor_release(a), bp_tensor_release(b);
    BPT_OK(bp_unary(BP_OP_ELU, x, &a));
    BPT_OK(bp_elu(x, 1.0, &b));
    expect_same(a, b, "bp_unary(ELU) and bp_elu(alpha 1)");
    bp_tensor_release(a), bp_tensor_release(b);
    BPT_OK(bp_unary(BP_OP_LEAKY_RELU, x, &a));
    BPT_OK(bp_leaky_relu(x, 0.01, &b));
    expect_same(a, b, "bp_unary(LEAKY_RELU) and bp_leaky_relu(alpha 0.01)");
    bp_tensor_release(a), bp_tensor_release(b);
    BPT_OK(bp_binary(BP_OP_BITWISE_AND, i, i, &a));
    BPT_OK(bp_bitwise_and(i, i, &b));
    expect_same(a, b, "bp_binary(BITWISE_AND) and bp_bitwise_and");
    bp_tensor_release(a), bp_tensor_release(b);
    BPT_OK(bp_reduce(BP_OP_REDUCE_L2, x, 0, NULL, false, &a));
    BPT_OK(bp_reduce_l2(x, 0, NULL, false, &b));
    expect_same(a, b, "bp_reduce(REDUCE_L2) and bp_reduce_l2");
    bp_tensor_release(a), bp_tensor_release(b);
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_unary(BP_OP_ADD, x, &a));
    cr_assert(strstr(bp_last_error(), "not a unary op"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_binary(BP_OP_ACOS, x, x, &a));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_reduce(BP_OP_SOFTMAX, x, 0, NULL, false, &a));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_unary(BP_OP_COUNT, x, &a));
    bp_tensor_release(x);
    bp_tensor_release(i);
    bp_context_destroy(ctx);
}

/* bp_unary_params hands an op its parameters as the named function does,
 * ignores them for an op that takes fewer, and refuses NaN; the parameter
 * rows name only unary ops. */
Test(op_table, unary_params_passes_the_parameters_the_op_takes)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    double d[2];
    for (int op = 0; op < BP_OP_COUNT; op++)
        if (bp_op_param_defaults((bp_op)op, d))
            cr_assert_eq(bp_op_kind_of((bp_op)op), BP_KIND_UNARY, "%s", bp_op_name((bp_op)op));
    cr_assert_eq(bp_op_param_defaults(BP_OP_SELU, d), 2);
    cr_assert_eq(bp_op_param_defaults(BP_OP_ELU, d), 1);
    cr_assert_eq(bp_op_param_defaults(BP_OP_EXP, d), 0);
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &be));
    const double v[6] = {-2, -0.5, 0, 0.25, 0.5, 3};
    bp_tensor *x = NULL, *a = NULL, *b = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F64, 1, (int64_t[]){6}, v, &x));
    BPT_OK(bp_unary_params(BP_OP_SELU, x, 1.5, 2.0, &a));
    BPT_OK(bp_selu(x, 1.5, 2.0, &b));
    expect_same(a, b, "bp_unary_params(SELU, 1.5, 2) and bp_selu(1.5, 2)");
    bp_tensor_release(a), bp_tensor_release(b);
    BPT_OK(bp_unary_params(BP_OP_ELU, x, 0.5, NAN, &a)); /* elu takes no f1 */
    BPT_OK(bp_elu(x, 0.5, &b));
    expect_same(a, b, "bp_unary_params(ELU, 0.5, NaN) and bp_elu(0.5)");
    bp_tensor_release(a), bp_tensor_release(b);
    BPT_OK(bp_unary_params(BP_OP_EXP, x, NAN, NAN, &a));
    BPT_OK(bp_exp(x, &b));
    expect_same(a, b, "bp_unary_params(EXP, NaN, NaN) and bp_exp");
    bp_tensor_release(a), bp_tensor_release(b);
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_unary_params(BP_OP_ELU, x, NAN, 0, &a));
    cr_assert(strstr(bp_last_error(), "NaN"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_unary_params(BP_OP_ADD, x, 1, 1, &a));
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

/* A tensor of shape (2^57, 0) has no elements, but a kernel that walks its
 * rows would take years to do nothing: an op whose every view is empty is
 * not run (found by the API fuzzer: bp_cumsum hung). */
Test(op_table, an_op_whose_every_view_is_empty_returns_at_once, .timeout = 60)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *x = NULL, *y = NULL, *z = NULL;
        BPT_OK(bp_zeros(be, BP_F32, 2, (int64_t[]){(int64_t)1 << 57, 0}, &x));
        BPT_OK(bp_cumsum(x, -1, false, false, &y));
        bp_tensor_release(y);
        BPT_OK(bp_softmax(x, -1, &y));
        bp_tensor_release(y);
        BPT_OK(bp_hardmax(x, -1, &y));
        bp_tensor_release(y);
        BPT_OK(bp_sort(x, -1, false, &y, &z));
        bp_tensor_release(y);
        bp_tensor_release(z);
        BPT_OK(bp_transpose(x, NULL, &y));
        cr_assert_eq(bp_tensor_shape(y)[1], (int64_t)1 << 57);
        bp_tensor_release(y);
        bp_tensor_release(x);
    }
    bp_context_destroy(ctx);
}

/* The schema's defaults are ONNX's, and its unary parameters are f0, f1 in
 * the order bp_unary_params takes them. */
Test(op_table, schema_gives_the_unary_parameters_their_onnx_defaults)
{
    double d[2];
    char name[16];
    cr_assert_eq(bp_op_param_defaults(BP_OP_SELU, d), 2);
    cr_assert_eq(d[0], 1.67326319217681884765625);
    cr_assert_eq(d[1], 1.05070102214813232421875);
    cr_assert_str_eq(bp_op_param_name(BP_OP_SELU, 0, name, sizeof name), "alpha");
    cr_assert_str_eq(bp_op_param_name(BP_OP_SELU, 1, name, sizeof name), "gamma");
    cr_assert_str_eq(bp_op_param_name(BP_OP_SELU, 2, name, sizeof name), "");
    cr_assert_str_eq(bp_op_param_name(BP_OP_EXP, 0, name, sizeof name), "");
    cr_assert_eq(bp_op_param_defaults(BP_OP_HARD_SIGMOID, d), 2);
    cr_assert(d[0] == 0.2 && d[1] == 0.5);
    cr_assert_eq(bp_op_param_defaults(BP_OP_CUMSUM, d), 0, "only unary ops take f0, f1");
}

/* bp_op_domain reads a range, an integral range, a range for integer dtypes
 * and a parameter's value to test with, and refuses a name without one. */
Test(op_table, op_domain_reads_each_form_of_domain)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    double lo, hi;
    bool integral;
    BPT_OK(bp_op_domain(BP_OP_LOG, "x", BP_F32, &lo, &hi, &integral));
    cr_assert(lo == 1e-3 && hi == 100 && !integral);
    BPT_OK(bp_op_domain(BP_OP_EQ, "b", BP_F32, &lo, &hi, &integral));
    cr_assert(lo == -3 && hi == 3 && integral);
    BPT_OK(bp_op_domain(BP_OP_POW, "b", BP_F64, &lo, &hi, &integral));
    cr_assert(lo == -3 && hi == 3);
    BPT_OK(bp_op_domain(BP_OP_POW, "b", BP_I32, &lo, &hi, &integral));
    cr_assert(lo == -3 && hi == 12);
    BPT_OK(bp_op_domain(BP_OP_CELU, "alpha", BP_F64, &lo, &hi, &integral));
    cr_assert(lo == 2 && hi == 2);
    cr_assert_eq(bp_op_domain(BP_OP_CELU, "a", BP_F64, &lo, &hi, &integral),
                 BP_ERR_INVALID_ARGUMENT);
    cr_assert_eq(bp_op_domain(BP_OP_CUMSUM, "x", BP_F64, &lo, &hi, &integral),
                 BP_ERR_INVALID_ARGUMENT);
    cr_assert_eq(bp_op_domain(BP_OP_COUNT, "x", BP_F64, &lo, &hi, &integral),
                 BP_ERR_INVALID_ARGUMENT);
}

/* Every domain the schema gives an op's input reads, and is not empty. */
Test(op_table, every_schema_domain_reads)
{
    for (int op = 0; op < BP_OP_COUNT; op++) {
        const bp_op_info *r = bp_op_info_of((bp_op)op);
        for (int32_t k = 0; k < bp_op_arity(r->in, NULL); k++) {
            char name[32];
            double lo, hi;
            bool integral;
            bp_op_arg_name(r->in, k, name, sizeof name);
            if (!strstr(bp_op_schema_of((bp_op)op)->domains, name))
                continue;
            BPT_OK(bp_op_domain((bp_op)op, name, BP_F64, &lo, &hi, &integral));
            cr_assert_leq(lo, hi, "%s: %s", r->name, name);
        }
    }
}

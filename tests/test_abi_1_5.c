/* ABI 1.5: bp_op_params grew from six integers and six reals to sixteen of
 * each, and the neural-network ops arrived. A plugin built for 1.4 still
 * computes with the parameters it was given (the core hands it 1.4's
 * layout: tests/plugins/bp_abi_1_4_params.c reads through a frozen copy of
 * it) and is never handed an op of 1.5. */
#include <math.h>
#include <string.h>

#include "bpt.h"
#include "expect.h"

#define PLUGIN(stem) BPT_PLUGIN_DIR "/" stem ".so"

static bp_tensor *input(bp_backend *be)
{
    return bpt_tensor(be, BP_F32, 1, (const int64_t[]){6},
                      (const double[]){-2, -0.5, 0, 0.25, 1, 3});
}

static void read6(const bp_tensor *t, float got[6])
{
    BPT_OK(bp_tensor_to_host(t, got, 6 * sizeof(float)));
}

static void expect_near(const float got[6], const double want[6], const char *what)
{
    for (int k = 0; k < 6; k++)
        cr_expect(fabs(got[k] - want[k]) <= 1e-6 * (1 + fabs(want[k])),
                  "%s[%d]: got %.9g, want %.9g", what, k, got[k], want[k]);
}

Test(abi_1_5, a_plugin_built_for_abi_1_4_reads_its_real_parameters_where_it_was_built_to)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, PLUGIN("bp_abi_1_4_params"), &be));
    bp_tensor *x = input(be), *o = NULL;
    const double xs[6] = {-2, -0.5, 0, 0.25, 1, 3};
    float got[6];
    double want[6];

    BPT_OK(bp_elu(x, 1.5, &o)); /* alpha in f[0] */
    read6(o, got);
    for (int k = 0; k < 6; k++)
        want[k] = xs[k] < 0 ? 1.5 * expm1(xs[k]) : xs[k];
    expect_near(got, want, "elu");
    bp_tensor_release(o);

    BPT_OK(bp_hard_sigmoid(x, 0.25, 0.5, &o)); /* alpha f[0], beta f[1] */
    read6(o, got);
    for (int k = 0; k < 6; k++)
        want[k] = fmax(0, fmin(1, 0.25 * xs[k] + 0.5));
    expect_near(got, want, "hard_sigmoid");
    bp_tensor_release(o);

    BPT_OK(bp_shrink(x, 0.125, 0.75, &o)); /* bias f[0], lambd f[1] */
    read6(o, got);
    for (int k = 0; k < 6; k++)
        want[k] = xs[k] < -0.75 ? xs[k] + 0.125 : xs[k] > 0.75 ? xs[k] - 0.125 : 0;
    expect_near(got, want, "shrink");
    bp_tensor_release(o);

    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

Test(abi_1_5, a_plugin_built_for_abi_1_4_is_never_handed_an_op_of_abi_1_5)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, PLUGIN("bp_abi_1_4_params"), &be));
    for (int op = BP_OP_FIRST_1_5; op < BP_OP_COUNT; op++)
        cr_assert_not(bp_backend_supports(be, (bp_op)op, BP_F32),
                      "%s is declared on a plugin built for ABI 1.4", bp_op_name((bp_op)op));
    bp_tensor *x = bpt_tensor(be, BP_F32, 2, (const int64_t[]){2, 3}, NULL), *o = NULL;
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_rms_norm(x, 1, NULL, 1e-5, &o));
    cr_assert(strstr(bp_last_error(), "arrived in ABI 1.5; rebuild it"), "%s", bp_last_error());
    cr_assert_null(o);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

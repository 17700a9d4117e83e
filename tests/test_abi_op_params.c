/* ABI 1.5: bp_op_params grew from six integers and six reals to sixteen of
 * each, and the neural-network ops arrived. A plugin built for 1.4 still
 * computes with the parameters it was given (the core hands it 1.4's
 * layout: tests/plugins/bp_abi_1_4_params.c reads through a frozen copy of
 * it) and is never handed an op of 1.5. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bpt.h"
#include "direct_plugin.h"
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

Test(abi_op_params, a_plugin_built_for_abi_1_4_reads_its_real_parameters_where_it_was_built_to)
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

Test(abi_op_params, a_plugin_built_for_abi_1_4_is_never_handed_an_op_of_abi_1_5)
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

/* ---- a core of ABI 1.4 calling a plugin of 1.5 ------------------------------- *
 * Such a core sends 1.4's bp_op_params. These talk to the plugin as that core
 * does (its descriptor, a host API, a device, buffers through its entries),
 * handing elu alpha = 1.5 in 1.4's f[0]. */

static bp_view dense6(void *buffer)
{
    bp_view v = {.struct_size = sizeof v, .buffer = buffer, .dtype = BP_F32, .rank = 1};
    v.shape[0] = 6;
    v.strides[0] = 1;
    return v;
}

static void reads_params_sent_by_a_1_4_core(const char *path)
{
    bpt_direct d;
    bpt_direct_open(&d, path, 4);
    const bp_plugin *p = d.p;
    void *dev = d.dev, *bx = NULL, *by = NULL;
    const char *msg = bpt_direct_error();
    const float xs[6] = {-2, -0.5f, 0, 0.25f, 1, 3};
    cr_assert_eq(p->alloc(dev, sizeof xs, &bx), BP_OK, "%s", msg);
    cr_assert_eq(p->alloc(dev, sizeof xs, &by), BP_OK, "%s", msg);
    cr_assert_eq(p->write(dev, bx, 0, xs, sizeof xs), BP_OK, "%s", msg);
    bp_view vx = dense6(bx), vy = dense6(by);
    bp_op_params_1_4 old = {.struct_size = sizeof old};
    old.f[0] = 1.5;
    bp_status st = p->op(dev, BP_OP_ELU, (const bp_op_params *)(const void *)&old, 1,
                         (const bp_view *[]){&vx}, 1, (const bp_view *[]){&vy});
    cr_assert_eq(st, BP_OK, "%s: %s", path, msg);
    if (p->synchronize)
        cr_assert_eq(p->synchronize(dev), BP_OK, "%s", msg);
    float got[6];
    cr_assert_eq(p->read(dev, by, 0, got, sizeof got), BP_OK, "%s", msg);
    double want[6];
    for (int k = 0; k < 6; k++)
        want[k] = xs[k] < 0 ? 1.5 * expm1(xs[k]) : xs[k];
    expect_near(got, want, path);
    p->free(dev, bx);
    p->free(dev, by);
    bpt_direct_close(&d);
}

Test(abi_op_params, binary_reads_the_parameters_a_core_of_abi_1_4_sends)
{
    reads_params_sent_by_a_1_4_core(BPT_BUILD_PLUGIN_DIR "/bp_binary.so");
}

Test(abi_op_params, blas_cpu_reads_the_parameters_a_core_of_abi_1_4_sends)
{
    if (access(BPT_BUILD_PLUGIN_DIR "/bp_blas_cpu.so", R_OK) != 0)
        cr_skip_test("blas_cpu is not built here (no OpenBLAS)");
    reads_params_sent_by_a_1_4_core(BPT_BUILD_PLUGIN_DIR "/bp_blas_cpu.so");
}

Test(abi_op_params, devsim_reads_the_parameters_a_core_of_abi_1_4_sends)
{
    reads_params_sent_by_a_1_4_core(BPT_DEVSIM_PATH);
}

/* bp_op_params_read itself: both layouts, a shorter struct, NULL. */
Test(abi_op_params, bp_op_params_read_takes_each_layout_a_core_may_send)
{
    bp_op_params got;
    bp_op_params_1_4 old = {.struct_size = sizeof old, .i = {7, 0, 0, 0, 0, 9}, .f = {2.5, 0, 0, 0, 0, -1}};
    bp_op_params_read((const bp_op_params *)(const void *)&old, &got);
    cr_assert(got.struct_size == sizeof got && got.i[0] == 7 && got.i[5] == 9 && got.i[6] == 0 &&
              got.f[0] == 2.5 && got.f[5] == -1 && got.f[6] == 0);

    bp_op_params now = {.struct_size = sizeof now};
    now.i[15] = 3;
    now.f[15] = 0.5;
    now.f[0] = 4;
    bp_op_params_read(&now, &got);
    cr_assert(got.i[15] == 3 && got.f[15] == 0.5 && got.f[0] == 4);

    /* a 1.5 struct cut short (as a later header read by this one would be
     * the other way round): past struct_size reads as 0 */
    now.struct_size = (uint32_t)offsetof(bp_op_params, f) + 8;
    bp_op_params_read(&now, &got);
    cr_assert(got.f[0] == 4 && got.f[15] == 0 && got.i[15] == 3 && got.struct_size == sizeof got);

    bp_op_params_read(NULL, &got);
    cr_assert(got.struct_size == sizeof got && got.i[0] == 0 && got.f[0] == 0);
}

/* bp_op_params_get: the core's own struct where it has this header's
 * layout, a converted copy otherwise (1.4's layout, a shorter struct, NULL) */
Test(abi_op_params, bp_op_params_get_copies_only_a_layout_other_than_its_own)
{
    bp_op_params scratch, now = {.struct_size = sizeof now};
    now.i[15] = 3;
    now.f[0] = 4;
    cr_assert_eq(bp_op_params_get(&now, &scratch), &now);

    bp_op_params_1_4 old = {.struct_size = sizeof old, .i = {7, 0, 0, 0, 0, 9}, .f = {2.5}};
    const bp_op_params *got = bp_op_params_get((const bp_op_params *)(const void *)&old, &scratch);
    cr_assert(got == &scratch && got->struct_size == sizeof *got && got->i[0] == 7 &&
              got->i[5] == 9 && got->i[6] == 0 && got->f[0] == 2.5);

    now.struct_size = (uint32_t)offsetof(bp_op_params, f) + 8;
    got = bp_op_params_get(&now, &scratch);
    cr_assert(got == &scratch && got->f[0] == 4 && got->f[15] == 0 && got->i[15] == 3);

    got = bp_op_params_get(NULL, &scratch);
    cr_assert(got == &scratch && got->struct_size == sizeof *got && got->i[0] == 0);
}

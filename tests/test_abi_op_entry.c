/* The op entry of ABI 1.4 (plugin.h's `op`) and plugins built before it:
 * such a plugin loads and works, declares none of the new ops, and every
 * one of them is refused with BP_ERR_UNSUPPORTED_OP, without the plugin
 * being called (its would-be entry aborts: tests/plugins/bp_abi_1_3*.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpt.h"
#include "direct_plugin.h"
#include "expect.h"

#define PLUGIN(stem) BPT_PLUGIN_DIR "/" stem ".so"

static void refuses_every_new_op(const char *path, const char *needle)
{
    bp_context *ctx = bpt_context();
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(ctx, path, &be));
    for (int op = BP_OP_FIRST_1_4; op < BP_OP_COUNT; op++)
        cr_assert_not(bp_backend_supports(be, (bp_op)op, BP_F32),
                      "%s declares %s although built for ABI 1.3", path, bp_op_name((bp_op)op));
    bp_tensor *x = bpt_tensor(be, BP_F32, 2, (const int64_t[]){2, 3},
                              (const double[]){1, 2, 3, 4, 5, 6});
    bp_tensor *i = bpt_tensor_i64(be, BP_I64, 2, (const int64_t[]){2, 3}, NULL);
    bp_tensor *o = NULL, *v = NULL;
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_cumsum(x, 1, false, false, &o));
    cr_assert(strstr(bp_last_error(), needle), "%s", bp_last_error());
    cr_assert(strstr(bp_last_error(), "cumsum"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_acos(x, &o));
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_gemm(x, x, NULL, 1, 0, false, true, &o));
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_topk(x, 1, 1, true, true, &v, &o));
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_scatter_elements(x, i, x, 0, BP_SCATTER_ADD, &o));
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_reduce_var(x, 0, NULL, false, 0, &o));
    cr_assert_null(o);
    /* the plugin still works for what it has: buffers */
    float back[6];
    BPT_OK(bp_tensor_to_host(x, back, sizeof back));
    cr_assert(back[0] == 1 && back[5] == 6, "read back %g .. %g", back[0], back[5]);
    bp_tensor_release(x);
    bp_tensor_release(i);
    bp_context_destroy(ctx);
}

Test(abi_op_entry, a_plugin_built_for_abi_1_3_is_never_handed_a_new_op)
{
    refuses_every_new_op(PLUGIN("bp_abi_1_3"), "no entry for this op family");
}

Test(abi_op_entry, a_plugin_claiming_abi_1_3_is_never_called_even_with_an_op_entry)
{
    refuses_every_new_op(PLUGIN("bp_abi_1_3_claims_op"), "arrived in ABI 1.4; rebuild it");
}

/* The ABI minor the plugin behind be was built for. */
static uint32_t plugin_minor(bp_context *ctx, const bp_backend *be)
{
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++) {
        bp_plugin_record r = {.struct_size = sizeof r};
        if (bp_context_plugin(ctx, i, &r) == BP_OK && r.loaded &&
            strcmp(r.name, bp_backend_plugin_name(be)) == 0)
            return r.abi_minor;
    }
    cr_assert_fail("no plugin record for %s", bp_backend_name(be));
    return 0;
}

/* Every op of the op entry (the ops of 1.4, nn.h's of 1.5: conv .. resize,
 * and those since) has CPU kernels: declared on binary, blas_cpu and devsim
 * alike, each up to the ABI minor its plugin was built for (devsim stays at
 * 1.5 to keep the older path exercised). */
Test(abi_op_entry, the_cpu_backends_declare_every_new_op)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        uint32_t minor = plugin_minor(ctx, be);
        for (int op = BP_OP_FIRST_1_4; op < BP_OP_COUNT; op++) {
            if (bp_op_since((bp_op)op) > minor) {
                cr_expect_not(bp_backend_supports(be, (bp_op)op, BP_F32), "%s (ABI 1.%u) "
                              "declares %s of 1.%u", bp_backend_name(be), (unsigned)minor,
                              bp_op_name((bp_op)op), (unsigned)bp_op_since((bp_op)op));
                continue;
            }
            bool declared = bp_backend_supports(be, (bp_op)op, BP_F32) ||
                            bp_backend_supports(be, (bp_op)op, BP_BOOL) ||
                            bp_backend_supports(be, (bp_op)op, BP_I32);
            cr_expect(declared, "%s does not declare %s", bp_backend_name(be),
                      bp_op_name((bp_op)op));
        }
    }
    bp_context_destroy(ctx);
}

/* ---- a code the plugin does not know, as a newer core would send ------------ *
 * The core never sends a code past its own list, so these talk to the plugin
 * directly, as the core does: its descriptor, a host API, a device. */

static void unknown_code_is_unsupported(const char *path)
{
    bpt_direct d;
    bpt_direct_open(&d, path, BP_ABI_MINOR);
    const bp_plugin *p = d.p;
    bp_op code = (bp_op)(BP_OP_COUNT + 3); /* past this core's list, as a newer core sends */
    cr_assert(p->supports(d.dev, BP_OP_GEMM, BP_F32), "%s does not declare gemm", path);
    cr_assert(p->supports(d.dev, BP_OP_ADD, BP_F32), "%s does not declare add", path);
    cr_assert_not(p->supports(d.dev, code, BP_F32), "%s declares an op it has no kernel for", path);
    bp_op_params params = {.struct_size = sizeof params};
    bpt_direct_clear_error();
    bp_status st = p->op(d.dev, code, &params, 0, NULL, 0, NULL);
    cr_assert_eq(st, BP_ERR_UNSUPPORTED_OP, "%s: op code %d -> %s", path, (int)code,
                 bp_status_string(st));
    char num[16];
    snprintf(num, sizeof num, "%d", (int)code);
    cr_assert(strstr(bpt_direct_error(), num), "%s: the detail does not name the code: '%s'", path,
              bpt_direct_error());
    bpt_direct_close(&d);
}

Test(abi_op_entry, binary_refuses_an_op_code_it_does_not_know)
{
    unknown_code_is_unsupported(BPT_BUILD_PLUGIN_DIR "/bp_binary.so");
}

Test(abi_op_entry, blas_cpu_refuses_an_op_code_it_does_not_know)
{
    if (access(BPT_BUILD_PLUGIN_DIR "/bp_blas_cpu.so", R_OK) != 0)
        cr_skip_test("blas_cpu is not built here (no OpenBLAS)");
    unknown_code_is_unsupported(BPT_BUILD_PLUGIN_DIR "/bp_blas_cpu.so");
}

Test(abi_op_entry, devsim_refuses_an_op_code_it_does_not_know_before_queueing_it)
{
    unknown_code_is_unsupported(BPT_DEVSIM_PATH);
}

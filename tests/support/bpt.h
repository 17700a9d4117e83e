/* Test support shared by every suite. */
#ifndef BPT_H
#define BPT_H

#include <criterion/criterion.h>
#include <stddef.h>

#include <backplane/backplane.h>

/* A context with built-in defaults (the ctest environment clears every
 * BP_* variable and points HOME/XDG at empty directories). Fails the test
 * if creation fails. */
bp_context *bpt_context(void);

/* A context made from an ini file holding `ini` (written to a temporary
 * file, removed once read), and its backend named `name`; the test is
 * skipped if that backend is not available here. */
bp_context *bpt_context_ini(const char *ini, const char *name, bp_backend **be);

/* Every backend of ctx whose plugin opens (device 0 of each), in plugin
 * order, then the device-like test backend devsim (tests/devsim); at most
 * max. The binary backend is always among them. */
size_t bpt_backends(bp_context *ctx, bp_backend **out, size_t max);

/* Compile g (fused unless fuse is false) and fill *st with the plan's
 * stats; fails the test if either call fails. */
bp_graph_exec *bpt_graph_compile(bp_graph *g, bool fuse, bp_graph_stats *st);

/* Whether blas_cpu backend be runs the convolutions whose GEMM reads x in
 * place (1x1 kernels, kernels along one axis) on its direct kernel when a
 * plan prepares them, as its device detail says ("1x1 and one-axis
 * convolutions: direct"): an AVX-512 level against OpenBLAS kernels of
 * 256 bits or fewer, which depends on the CPU and on the kernels OpenBLAS
 * picked (or OPENBLAS_CORETYPE named). Such a plan's convolution is within
 * the op's tolerance of the eager one, not its bits (docs/graphs.md). */
bool bpt_blas_cpu_in_place_direct(bp_backend *be);

/* Run `body` once per backend: for (each) { bp_backend *be = ...; body }. */
#define BPT_FOR_EACH_BACKEND(ctx, be)                                          \
    bp_backend *bpt_list_[16];                                                 \
    size_t bpt_n_ = bpt_backends((ctx), bpt_list_, 16);                        \
    for (size_t bpt_i_ = 0; bpt_i_ < bpt_n_ && ((be) = bpt_list_[bpt_i_], 1); bpt_i_++)

/* Assert a call returned BP_OK, printing bp_last_error() if not. */
#define BPT_OK(call)                                                           \
    do {                                                                       \
        bp_status bpt_st_ = (call);                                            \
        cr_assert_eq(bpt_st_, BP_OK, "%s -> %s: %s", #call,                    \
                     bp_status_string(bpt_st_), bp_last_error());              \
    } while (0)

/* Assert a call failed with exactly `code`. */
#define BPT_FAILS(code, call)                                                  \
    do {                                                                       \
        bp_status bpt_st_ = (call);                                            \
        cr_assert_eq(bpt_st_, (code), "%s -> %s (wanted %s): %s", #call,       \
                     bp_status_string(bpt_st_), bp_status_string(code),        \
                     bp_last_error());                                         \
    } while (0)

#endif

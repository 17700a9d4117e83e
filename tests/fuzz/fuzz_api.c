/* fuzz_api: sequences of API calls decoded from the input bytes.
 *
 * Each input drives up to FA_STEPS actions over two contexts, their binary
 * and blas_cpu backends and FA_SLOTS tensor slots: every op family, every
 * dtype, ranks 0..8, absurd extents (0, negative, 2^31, 2^62, INT64_MAX),
 * random axes, perms and slices, NULL pointers, tensors reused after
 * bp_backend_transfer, copies between backends and contexts, contexts
 * destroyed while their tensors live, guard bytes. Each call is checked
 * against the oracles of fz_oracle.h and the op's contract (fa_expect.c):
 * calls the contract refuses must fail, calls it accepts must not be refused
 * for their arguments, and results must have the predicted dtype and shape.
 * After the last action every tensor is released and each live backend must
 * report 0 bytes in use; nothing may have reached stdout; LeakSanitizer
 * checks that nothing leaked.
 *
 * Decoding (fz_bytes.h): byte 0 picks the first action, each action reads
 * its own arguments; reading past the end gives zeros. Seeds:
 * tests/fuzz/corpus/fuzz_api, written by tests/fuzz/make_api_seeds.py. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fa_state.h"
#include "fz_anchor.h"
#include "fz_oracle.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Context 0 prefers binary; context 1 skips a backend that cannot open here
 * first (cuda: no GPU, or not built; a name no plugin has would be a
 * configuration error). Logs are off so that the fuzzer's output stays
 * readable (fuzz_config covers the log levels). */
static const char fa_config0[] = "[backplane]\ndefault_backend = binary\nlog_level = off\n"
                                 "[backend.blas_cpu]\nthreads = 2\ncache_mb = 1\n";
static const char fa_config1[] = "[backplane]\ndefault_backend = cuda, blas_cpu, binary\n"
                                 "log_level = off\n[backend.blas_cpu]\nthreads = 1\ncache_mb = 0\n";
static char fa_path[2][600];

static void fa_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        fz_fail("cannot write %s", path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = fz_setup();
    snprintf(fa_path[0], sizeof fa_path[0], "%s/api0.ini", dir);
    snprintf(fa_path[1], sizeof fa_path[1], "%s/api1.ini", dir);
    fa_write(fa_path[0], fa_config0);
    fa_write(fa_path[1], fa_config1);
    fz_anchor(dir);
    return 0;
}

typedef struct fa_action {
    void (*run)(fa_state *s);
    const char *name;
} fa_action;

#define FA_ACT(name) {fa_act_##name, #name}
static const fa_action fa_actions[] = {
    FA_ACT(from_host), FA_ACT(from_host), FA_ACT(fill),    FA_ACT(arange_eye), FA_ACT(random),
    FA_ACT(unary),     FA_ACT(binary),    FA_ACT(binary),  FA_ACT(where),      FA_ACT(reduce),
    FA_ACT(softmax),   FA_ACT(matmul),    FA_ACT(cast),    FA_ACT(transpose),  FA_ACT(slice),
    FA_ACT(concat),    FA_ACT(pad),       FA_ACT(gather),  FA_ACT(broadcast),  FA_ACT(reshape),
    FA_ACT(squeeze),   FA_ACT(unsqueeze), FA_ACT(copy),    FA_ACT(copy),       FA_ACT(read),
    FA_ACT(lifetime),  FA_ACT(inspect),   FA_ACT(guards),  FA_ACT(backend),    FA_ACT(context),
    FA_ACT(op),        FA_ACT(op),        FA_ACT(op),      FA_ACT(op),         FA_ACT(dlpack),
    FA_ACT(dlpack),
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fa_state s;
    memset(&s, 0, sizeof s);
    s.in.p = data;
    s.in.n = size;
    s.config[0] = fa_path[0];
    s.config[1] = fa_path[1];
    fz_mark();
    bp_status st = bp_context_create(s.config[0], &s.ctx[0]);
    s.ctx_id[0] = ++s.ctx_ids;
    fz_status("bp_context_create", st);
    if (st != BP_OK)
        fz_fail("bp_context_create: %s", bp_last_error());
    static const char *const names[2] = {"binary", "blas_cpu"};
    for (int i = 0; i < 2; i++) {
        bp_backend *b = NULL;
        fz_mark();
        st = bp_backend_get(s.ctx[0], names[i], &b);
        fz_status("bp_backend_get", st);
        if (st != BP_OK)
            fz_fail("bp_backend_get(%s): %s", names[i], bp_last_error());
        fa_backend_store(&s, 0, b);
    }
    for (int step = 0; step < FA_STEPS && !fz_done(&s.in); step++) {
        const fa_action *a = &fa_actions[fz_pick(&s.in, sizeof fa_actions / sizeof fa_actions[0])];
        fz_trace("step %d: %s", step, a->name);
        a->run(&s);
    }
    fa_teardown(&s);
    fz_stdout_check();
    return 0;
}

/* blas_cpu's check of OpenBLAS's kernels against the CPU
 * (backends/blas_cpu/openblas_check.c), table-driven: each row is the core
 * name OpenBLAS reports, the CPU's features and $OPENBLAS_CORETYPE, and the
 * verdict, the suggested core type and words of the summary and warning.
 * Pure function: every row runs on any machine. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "openblas_check.h"

/* CPUs by what they run. */
static const bpc_cpu_features SAPPHIRE_RAPIDS = {
    .x86_64 = true, .avx = true, .avx2 = true, .fma = true, .avx512f = true,
    .avx512cd = true, .avx512bw = true, .avx512dq = true, .avx512vl = true};
static const bpc_cpu_features ZEN4 = {
    .x86_64 = true, .amd = true, .family = 0x19, .avx = true, .avx2 = true, .fma = true,
    .avx512f = true, .avx512cd = true, .avx512bw = true, .avx512dq = true, .avx512vl = true};
/* Zen 5: AVX-512 on full 512-bit units, family 0x1a */
static const bpc_cpu_features ZEN5 = {
    .x86_64 = true, .amd = true, .family = 0x1a, .avx = true, .avx2 = true, .fma = true,
    .avx512f = true, .avx512cd = true, .avx512bw = true, .avx512dq = true, .avx512vl = true};
static const bpc_cpu_features HASWELL = {.x86_64 = true, .avx = true, .avx2 = true, .fma = true};
static const bpc_cpu_features ZEN3 = {
    .x86_64 = true, .amd = true, .family = 0x19, .avx = true, .avx2 = true, .fma = true};
static const bpc_cpu_features SANDY_BRIDGE = {.x86_64 = true, .avx = true};
static const bpc_cpu_features WESTMERE = {.x86_64 = true};
/* Xeon Phi: AVX-512 F and CD without BW/DQ/VL, which SkylakeX kernels need. */
static const bpc_cpu_features KNIGHTS_LANDING = {
    .x86_64 = true, .avx = true, .avx2 = true, .fma = true, .avx512f = true, .avx512cd = true};
static const bpc_cpu_features NOT_X86 = {.x86_64 = false};

typedef struct kernels_case {
    const char *name;
    const char *core;               /* openblas_get_corename() */
    const bpc_cpu_features *cpu;
    const char *user;               /* $OPENBLAS_CORETYPE */
    bpc_kernels_verdict want;
    const char *suggest;            /* expected suggestion (NULL: none) */
    const char *summary;            /* substring of the summary */
} kernels_case;

static const kernels_case cases[] = {
    /* older kernels than the CPU: a warning */
    {"prescott_on_avx512_is_older", "Prescott", &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OLDER,
     "SkylakeX", "Prescott (SSE), older than this CPU (AVX-512)"},
    {"core2_on_avx512_is_older", "Core2", &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OLDER, "SkylakeX",
     "older"},
    {"nehalem_on_avx512_is_older", "Nehalem", &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OLDER,
     "SkylakeX", "older"},
    {"sandybridge_on_avx512_is_older", "Sandybridge", &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OLDER,
     "SkylakeX", "Sandybridge (AVX), older"},
    {"prescott_on_avx2_is_older", "Prescott", &HASWELL, NULL, BPC_KERNELS_OLDER, "Haswell",
     "older than this CPU (AVX2)"},
    {"core2_on_avx2_is_older", "Core2", &HASWELL, NULL, BPC_KERNELS_OLDER, "Haswell", "older"},
    {"nehalem_on_avx2_is_older", "Nehalem", &HASWELL, NULL, BPC_KERNELS_OLDER, "Haswell", "older"},
    {"sandybridge_on_avx2_is_older", "Sandybridge", &HASWELL, NULL, BPC_KERNELS_OLDER, "Haswell",
     "older"},
    {"prescott_on_an_amd_avx2_cpu_suggests_zen", "Prescott", &ZEN3, NULL, BPC_KERNELS_OLDER, "Zen",
     "OPENBLAS_CORETYPE=Zen"},
    {"haswell_on_avx512_is_older", "Haswell", &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OLDER,
     "SkylakeX", "Haswell (AVX2), older than this CPU (AVX-512)"},
    {"zen_on_an_avx512_zen4_is_older", "Zen", &ZEN4, NULL, BPC_KERNELS_OLDER, "SkylakeX", "older"},
    {"a_fixed_builds_upper_case_name_is_known", "PRESCOTT", &SAPPHIRE_RAPIDS, NULL,
     BPC_KERNELS_OLDER, "SkylakeX", "PRESCOTT (SSE)"},
    {"nehalem_on_avx_is_older", "Nehalem", &SANDY_BRIDGE, NULL, BPC_KERNELS_OLDER, "Sandybridge",
     "older"},
    /* as new as the CPU */
    {"haswell_on_avx2_is_ok", "Haswell", &HASWELL, NULL, BPC_KERNELS_OK, NULL,
     "Haswell (AVX2), as new as this CPU (AVX2)"},
    {"zen_on_avx2_is_ok", "Zen", &ZEN3, NULL, BPC_KERNELS_OK, NULL, "as new as this CPU"},
    {"haswell_on_an_amd_avx2_cpu_is_ok", "Haswell", &ZEN3, NULL, BPC_KERNELS_OK, NULL, "as new"},
    {"excavator_kernels_are_avx2", "Excavator", &ZEN3, NULL, BPC_KERNELS_OK, NULL, "as new"},
    {"skylakex_on_avx512_is_ok", "SkylakeX", &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OK, NULL,
     "SkylakeX (AVX-512), as new"},
    {"cooperlake_on_avx512_is_ok", "Cooperlake", &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OK, NULL,
     "as new"},
    {"sapphirerapids_on_avx512_is_ok", "SapphireRapids", &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OK,
     NULL, "as new"},
    {"cooperlake_on_zen4_is_ok", "Cooperlake", &ZEN4, NULL, BPC_KERNELS_OK, NULL, "as new"},
    {"sandybridge_on_avx_is_ok", "Sandybridge", &SANDY_BRIDGE, NULL, BPC_KERNELS_OK, NULL,
     "as new"},
    {"nehalem_on_an_sse_cpu_is_ok", "Nehalem", &WESTMERE, NULL, BPC_KERNELS_OK, NULL, "as new"},
    {"haswell_on_xeon_phi_is_ok", "Haswell", &KNIGHTS_LANDING, NULL, BPC_KERNELS_OK, NULL,
     "as new"},
    {"newer_kernels_than_the_cpu_are_ok", "SkylakeX", &HASWELL, NULL, BPC_KERNELS_OK, NULL,
     "SkylakeX"},
    /* nothing known to compare: never a false alarm */
    {"an_unknown_name_is_ok", "Zen7Future", &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OK, NULL,
     "OpenBLAS kernels Zen7Future"},
    {"generic_is_ok", "generic", &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OK, NULL, "generic"},
    {"an_arm_core_is_ok", "NEOVERSEN1", &NOT_X86, NULL, BPC_KERNELS_OK, NULL, "NEOVERSEN1"},
    {"an_x86_name_on_another_architecture_is_ok", "Prescott", &NOT_X86, NULL, BPC_KERNELS_OK,
     NULL, "Prescott"},
    {"no_core_name_is_ok", NULL, &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OK, NULL,
     "OpenBLAS kernels unknown"},
    {"an_empty_core_name_is_ok", "", &SAPPHIRE_RAPIDS, NULL, BPC_KERNELS_OK, NULL, "unknown"},
    /* the user's OPENBLAS_CORETYPE: reported, never warned, never overridden */
    {"the_users_coretype_is_never_warned", "Prescott", &SAPPHIRE_RAPIDS, "Prescott",
     BPC_KERNELS_USER_SET, NULL, "chosen by OPENBLAS_CORETYPE=Prescott (set by the user"},
    {"the_users_coretype_is_reported_when_it_matches", "SkylakeX", &SAPPHIRE_RAPIDS, "SkylakeX",
     BPC_KERNELS_USER_SET, NULL, "OpenBLAS kernels SkylakeX, chosen by OPENBLAS_CORETYPE"},
    {"an_empty_coretype_is_not_set", "Prescott", &SAPPHIRE_RAPIDS, "", BPC_KERNELS_OLDER,
     "SkylakeX", "older"},
};

static const char *verdict_name(bpc_kernels_verdict v)
{
    switch (v) {
    case BPC_KERNELS_OK: return "OK";
    case BPC_KERNELS_OLDER: return "OLDER";
    case BPC_KERNELS_USER_SET: return "USER_SET";
    }
    return "?";
}

Test(blas_cpu_openblas, every_row_of_the_table)
{
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const kernels_case *c = &cases[i];
        bpc_kernels_decision d = bpc_kernels_decide(c->core, c->cpu, c->user);
        char summary[512];
        bpc_kernels_summary(summary, sizeof summary, &d, c->core, c->user);
        bool ok = d.verdict == c->want &&
                  (c->suggest ? d.suggest && strcmp(d.suggest, c->suggest) == 0 : !d.suggest) &&
                  strstr(summary, c->summary) != NULL;
        if (!ok) {
            failed++;
            fprintf(stderr, "%s: verdict %s (want %s), suggest %s (want %s), summary \"%s\" "
                    "(want to contain \"%s\")\n", c->name, verdict_name(d.verdict),
                    verdict_name(c->want), d.suggest ? d.suggest : "none",
                    c->suggest ? c->suggest : "none", summary, c->summary);
        }
    }
    cr_assert_eq(failed, 0, "%d rows of the table failed (listed above)", failed);
}

Test(blas_cpu_openblas, the_warning_names_the_kernels_the_cpu_and_both_remedies)
{
    bpc_kernels_decision d = bpc_kernels_decide("Prescott", &SAPPHIRE_RAPIDS, NULL);
    char w[1024];
    int n = bpc_kernels_warning(w, sizeof w, &d, "Prescott", "Intel(R) Xeon(R) Platinum 8480+");
    cr_assert_lt(n, (int)sizeof w, "the warning was cut: %s", w);
    cr_expect_not_null(strstr(w, "Prescott kernels (SSE)"), "%s", w);
    cr_expect_not_null(strstr(w, "Intel(R) Xeon(R) Platinum 8480+, AVX-512"), "%s", w);
    cr_expect_not_null(strstr(w, "-DBP_OPENBLAS=scipy-openblas32"), "%s", w);
    cr_expect_not_null(strstr(w, "OPENBLAS_CORETYPE=SkylakeX yourself"), "%s", w);
    cr_expect_null(strchr(w, '\n'), "one line: %s", w);
}

Test(blas_cpu_openblas, the_warning_without_a_cpu_name_still_names_the_instruction_set)
{
    bpc_kernels_decision d = bpc_kernels_decide("Core2", &HASWELL, NULL);
    char w[1024];
    bpc_kernels_warning(w, sizeof w, &d, "Core2", NULL);
    cr_expect_not_null(strstr(w, "older than this CPU (AVX2)"), "%s", w);
}

Test(blas_cpu_openblas, no_warning_text_when_the_kernels_fit)
{
    bpc_kernels_decision d = bpc_kernels_decide("Zen", &ZEN3, NULL);
    char w[64] = "x";
    bpc_kernels_warning(w, sizeof w, &d, "Zen", "AMD EPYC");
    cr_expect_str_empty(w);
}

/* 1x1 convolutions go direct only against kernels known to be 256-bit or
 * narrower; AVX-512 kernels and names the table does not know keep them. */
Test(blas_cpu_openblas, kernels_narrower_than_avx512_are_the_known_256_bit_and_older)
{
    cr_expect(bpc_kernels_narrower_than_avx512(bpc_isa_of_core("Haswell")));
    cr_expect(bpc_kernels_narrower_than_avx512(bpc_isa_of_core("Zen")));
    cr_expect(bpc_kernels_narrower_than_avx512(bpc_isa_of_core("Sandybridge")));
    cr_expect(bpc_kernels_narrower_than_avx512(bpc_isa_of_core("Prescott")));
    cr_expect_not(bpc_kernels_narrower_than_avx512(bpc_isa_of_core("SkylakeX")));
    cr_expect_not(bpc_kernels_narrower_than_avx512(bpc_isa_of_core("SKYLAKEX")));
    cr_expect_not(bpc_kernels_narrower_than_avx512(bpc_isa_of_core("Neoversev2")));
    cr_expect_not(bpc_kernels_narrower_than_avx512(bpc_isa_of_core(NULL)));
}

Test(blas_cpu_openblas, instruction_sets_of_the_cpus)
{
    cr_expect_eq(bpc_isa_of_cpu(&SAPPHIRE_RAPIDS), BPC_ISA_AVX512);
    cr_expect_eq(bpc_isa_of_cpu(&KNIGHTS_LANDING), BPC_ISA_AVX2);
    cr_expect_eq(bpc_isa_of_cpu(&ZEN3), BPC_ISA_AVX2);
    cr_expect_eq(bpc_isa_of_cpu(&SANDY_BRIDGE), BPC_ISA_AVX);
    cr_expect_eq(bpc_isa_of_cpu(&WESTMERE), BPC_ISA_SSE);
    cr_expect_eq(bpc_isa_of_cpu(&NOT_X86), BPC_ISA_UNKNOWN);
}

/* Only Zen 4 (AMD family 0x19 with AVX-512: Zen 3 has none) runs its 512-bit
 * fmas as two halves among these */
Test(blas_cpu_openblas, zen4_alone_splits_its_512_bit_fmas)
{
    cr_expect(bpc_cpu_splits_512_bit_fma(&ZEN4));
    const bpc_cpu_features *whole[] = {&ZEN5, &ZEN3, &SAPPHIRE_RAPIDS, &HASWELL, &KNIGHTS_LANDING,
                                       &NOT_X86};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
        cr_expect_not(bpc_cpu_splits_512_bit_fma(whole[i]), "row %zu", i);
}

/* conv_in_place = auto: direct with the 512-bit block against narrower
 * kernels anywhere, and against AVX-512 ones on a Zen 4 only; never
 * without the block */
Test(blas_cpu_openblas, conv_in_place_auto_takes_the_block_against_narrower_kernels_or_on_zen4)
{
    static const struct {
        bool block;
        bpc_isa kernels;
        const bpc_cpu_features *cpu;
        bool direct;
    } rows[] = {
        {true, BPC_ISA_AVX2, &SAPPHIRE_RAPIDS, true},  /* an OpenBLAS that does not know the CPU */
        {true, BPC_ISA_SSE, &SAPPHIRE_RAPIDS, true},
        {true, BPC_ISA_AVX512, &SAPPHIRE_RAPIDS, false}, /* measured 0.85x there */
        {true, BPC_ISA_AVX512, &ZEN4, true},             /* measured 1.02-1.12x */
        {true, BPC_ISA_AVX512, &ZEN5, false},            /* not measured against AVX-512 kernels */
        {true, BPC_ISA_AVX2, &ZEN5, true},
        {true, BPC_ISA_UNKNOWN, &SAPPHIRE_RAPIDS, false}, /* a newer OpenBLAS's name */
        {true, BPC_ISA_UNKNOWN, &ZEN4, true},
        {false, BPC_ISA_AVX2, &ZEN4, false},             /* the avx2 level has no such block */
        {false, BPC_ISA_SSE, &HASWELL, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        cr_expect_eq(bpc_in_place_direct_auto(rows[i].block, rows[i].kernels, rows[i].cpu),
                     rows[i].direct, "row %zu", i);
}

/* The grouped ones go direct against narrower kernels only (not on a Zen 4
 * against AVX-512 kernels: ShuffleNet's grouped 1x1s ran 0.80-0.87x) */
Test(blas_cpu_openblas, conv_in_place_auto_keeps_grouped_ones_on_avx512_kernels)
{
    cr_expect(bpc_in_place_grouped_direct_auto(true, BPC_ISA_AVX2));
    cr_expect(bpc_in_place_grouped_direct_auto(true, BPC_ISA_SSE));
    cr_expect_not(bpc_in_place_grouped_direct_auto(true, BPC_ISA_AVX512));
    cr_expect_not(bpc_in_place_grouped_direct_auto(true, BPC_ISA_UNKNOWN));
    cr_expect_not(bpc_in_place_grouped_direct_auto(false, BPC_ISA_AVX2));
}

/* The cuda backend's compute-capability decision (backends/cuda/cc_check.c),
 * table-driven: every row is one device / build / driver / config situation
 * and the verdict, image and words of reason and remedy it must give. Pure
 * function: runs on machines without a GPU. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cc_check.h"

typedef struct cc_case {
    const char *name;
    const char *cc;          /* device */
    const char *sass, *ptx;  /* the build's lists */
    int driver, runtime;
    bool jit;                /* allow_ptx_jit */
    const char *allow, *deny;
    bpcu_verdict want;
    const char *image;       /* expected image ("" for none) */
    const char *reason;      /* substring of the reason (NULL: not checked) */
    const char *remedy;      /* substring of the remedy (NULL: not checked) */
    const char *not_remedy;  /* substring the remedy must not hold (NULL: none) */
} cc_case;

#define R13 13000
static const cc_case cases[] = {
    {"same_major_newer_minor_runs_native", "8.6", "80", "", R13, R13, true, "", "",
     BPCU_NATIVE, "sm_80", "same major, newer minor", NULL, NULL},
    {"exact_real_code_runs_native", "9.0", "80,90", "", R13, R13, true, "", "",
     BPCU_NATIVE, "sm_90", "matches 9.0", NULL, NULL},
    {"the_best_real_code_is_chosen", "8.9", "80,86,89,90", "", R13, R13, true, "", "",
     BPCU_NATIVE, "sm_89", NULL, NULL, NULL},
    {"real_code_is_preferred_over_ptx", "9.0", "90", "90", R13, R13, true, "", "",
     BPCU_NATIVE, "sm_90", NULL, NULL, NULL},
    {"newer_major_with_ptx_runs_by_jit", "12.0", "80,90", "90", R13, R13, true, "", "",
     BPCU_JIT, "compute_90", "JIT-compiles PTX compute_90", "120-real", NULL},
    {"newer_major_without_ptx_is_unsupported", "12.0", "80,90", "", R13, R13, true, "", "",
     BPCU_UNSUPPORTED, "", "own major version and there is no PTX", "120-real", NULL},
    {"jit_disabled_by_config_is_unsupported", "12.0", "80,90", "90", R13, R13, false, "", "",
     BPCU_UNSUPPORTED, "", "allow_ptx_jit = false", "set allow_ptx_jit = true", NULL},
    {"ptx_newer_than_the_driver_is_unsupported", "12.0", "80,90", "90", 13000, 13020, true, "", "",
     BPCU_UNSUPPORTED, "", "cannot JIT-compile", "supports CUDA 13.2 or newer", "version >="},
    {"real_code_runs_on_an_older_driver_of_the_same_major", "9.0", "90", "90", 13000, 13020, true,
     "", "", BPCU_NATIVE, "sm_90", NULL, NULL, NULL},
    {"driver_older_than_the_runtime_runs_nothing", "9.0", "90", "90", 12080, R13, true, "", "",
     BPCU_UNSUPPORTED, "", "major version is older than the runtime's",
     "update the NVIDIA driver", NULL},
    {"driver_older_than_the_runtime_is_not_forced_by_allow_cc", "9.0", "90", "90", 12080, R13, true,
     "9.0", "", BPCU_UNSUPPORTED, "", "major version is older", NULL, NULL},
    {"no_driver_is_unsupported", "9.0", "90", "90", 0, R13, true, "", "",
     BPCU_UNSUPPORTED, "", "no CUDA driver found",
     "install an NVIDIA driver that supports CUDA 13.0 or newer (release 580.65.06 or newer)",
     "13000"},
    {"no_driver_is_not_forced_by_allow_cc", "9.0", "90", "", 0, R13, true, "9.0", "",
     BPCU_UNSUPPORTED, "", "no CUDA driver found", NULL, NULL},
    {"a_only_image_refuses_another_cc", "10.3", "100a", "", R13, R13, true, "", "",
     BPCU_UNSUPPORTED, "", "sm_100a runs only on exactly 10.0", "103-real", NULL},
    {"a_image_runs_on_its_exact_cc", "9.0", "90a", "", R13, R13, true, "", "",
     BPCU_NATIVE, "sm_90a", NULL, NULL, NULL},
    {"a_ptx_refuses_another_cc", "10.3", "", "100a", R13, R13, true, "", "",
     BPCU_UNSUPPORTED, "", NULL, "103-real", NULL},
    {"f_image_runs_on_a_newer_minor_of_its_family", "10.3", "100f", "", R13, R13, true, "", "",
     BPCU_NATIVE, "sm_100f", NULL, NULL, NULL},
    {"f_image_does_not_cross_a_major", "12.0", "100f", "", R13, R13, true, "", "",
     BPCU_UNSUPPORTED, "", "no image in this build runs on 12.0", "120-real", NULL},
    {"f_ptx_does_not_cross_a_major", "12.0", "", "100f", R13, R13, true, "", "",
     BPCU_UNSUPPORTED, "", NULL, NULL, NULL},
    {"plain_ptx_crosses_a_major", "12.0", "", "100", R13, R13, true, "", "",
     BPCU_JIT, "compute_100", NULL, NULL, NULL},
    {"device_older_than_every_image_is_unsupported", "7.5", "80,90", "90", R13, R13, true, "", "",
     BPCU_UNSUPPORTED, "", "older than every image", "75-real", NULL},
    {"a_build_without_images_is_unsupported", "9.0", "", "", R13, R13, true, "", "",
     BPCU_UNSUPPORTED, "", "no kernel images at all", "90-real", NULL},
    {"allow_listed_device_is_forced_with_a_warning", "7.5", "80,90", "90", R13, R13, true,
     "8.6, 7.5", "", BPCU_FORCED, "", "warning: forced by config (allow_cc", "75-real", NULL},
    {"allow_list_leaves_a_native_device_native", "8.6", "86", "", R13, R13, true, "8.6", "",
     BPCU_NATIVE, "sm_86", NULL, NULL, NULL},
    {"allow_list_does_not_force_disabled_jit", "12.0", "90", "90", R13, R13, false, "12.0", "",
     BPCU_UNSUPPORTED, "", "allow_ptx_jit = false", NULL, NULL},
    {"deny_listed_device_is_unsupported_even_with_real_code", "8.6", "86", "", R13, R13, true, "",
     "8.6", BPCU_UNSUPPORTED, "", "denied by config", "deny_cc", NULL},
    {"deny_list_wins_over_allow_list", "7.5", "80", "", R13, R13, true, "7.5", "7.5",
     BPCU_UNSUPPORTED, "", "denied by config", NULL, NULL},
    {"deny_list_wins_over_a_missing_driver", "8.6", "86", "", 0, R13, true, "", "12.0 8.6",
     BPCU_UNSUPPORTED, "", "denied by config", NULL, NULL},
    /* remedies: only possible ones, with the toolkit and the CMake spelling */
    {"remedy_names_the_toolkit_an_architecture_needs", "12.0", "80,90", "", R13, R13, true, "", "",
     BPCU_UNSUPPORTED, "", NULL,
     "120-real (or 120-virtual for PTX) (sm_120 needs CUDA 12.8 or newer)", NULL},
    {"cuda_13_is_not_offered_below_sm_75", "7.0", "80", "", R13, R13, true, "", "",
     BPCU_UNSUPPORTED, "", "older than every image", "CUDA 13 builds nothing below sm_75",
     "rebuild with CMAKE_CUDA_ARCHITECTURES"},
    {"an_older_toolkit_is_told_which_one_the_architecture_needs", "12.0", "80,90", "", 12080, 12040,
     true, "", "", BPCU_UNSUPPORTED, "", NULL,
     "rebuild with CUDA 12.8 or newer (sm_120 needs it; this build used 12.4)", NULL},
    {"an_old_driver_is_offered_a_toolkit_it_can_run", "9.0", "90", "", 12080, R13, true, "", "",
     BPCU_UNSUPPORTED, "", NULL,
     "from 11.8 to 12.8 and CMAKE_CUDA_ARCHITECTURES including 90-real", NULL},
    {"a_driver_too_old_for_the_architecture_is_not_offered_a_rebuild", "12.0", "120", "", 12040,
     R13, true, "", "", BPCU_UNSUPPORTED, "", NULL, "update the NVIDIA driver", "build with"},
    {"a_device_no_image_fits_is_not_told_to_only_update_the_driver", "7.0", "80,90", "", 12020, R13,
     true, "", "", BPCU_UNSUPPORTED, "", NULL, "build with a CUDA toolkit from 9.0 to 12.2",
     "update the NVIDIA driver"},
    {"an_architecture_newer_than_the_table_is_offered_ptx", "13.0", "120a", "", R13, R13, true, "",
     "", BPCU_UNSUPPORTED, "", NULL, "120-virtual", NULL},
    /* lists no toolkit can have made, and words for drivers */
    {"sm_120_from_cuda_12_6_is_not_native_since_12_6_cannot_build_it", "12.0", "120", "", R13,
     12060, true, "", "", BPCU_UNSUPPORTED, "",
     "sm_120 needs CUDA 12.8 or newer, so a build made with CUDA 12.6 cannot contain it",
     "rebuild with CUDA 12.8 or newer", NULL},
    {"an_image_no_toolkit_made_does_not_hide_one_that_runs", "9.0", "90,120", "", R13, 12060,
     true, "", "", BPCU_NATIVE, "sm_90", NULL, NULL, NULL},
    {"the_driver_is_named_by_cuda_version_and_release_never_by_cuda_s_integer", "9.0", "90", "",
     12080, R13, true, "", "", BPCU_UNSUPPORTED, "", "the driver supports CUDA 12.8 but",
     "update the NVIDIA driver to one that supports CUDA 13.0 or newer (release 580.65.06 or "
     "newer)", "13000"},
    {"a_toolkit_range_of_one_version_is_named_as_that_version", "12.0", "120", "", 12080, R13,
     true, "", "", BPCU_UNSUPPORTED, "", NULL,
     "build with CUDA 12.8 and CMAKE_CUDA_ARCHITECTURES including 120-real", "from 12.8 to 12.8"},
};

static void check_case(const char *name)
{
    const cc_case *c = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(cases[i].name, name) == 0)
            c = &cases[i];
    cr_assert_not_null(c, "no table row named %s", name);

    char err[256];
    bpcu_cc cc;
    bpcu_arch_list sass, ptx;
    bpcu_cc_list allow, deny;
    cr_assert(bpcu_parse_cc(c->cc, &cc, err, sizeof err), "%s", err);
    cr_assert(bpcu_parse_arch_list(c->sass, &sass, err, sizeof err), "%s", err);
    cr_assert(bpcu_parse_arch_list(c->ptx, &ptx, err, sizeof err), "%s", err);
    cr_assert(bpcu_parse_cc_list(c->allow, &allow, err, sizeof err), "%s", err);
    cr_assert(bpcu_parse_cc_list(c->deny, &deny, err, sizeof err), "%s", err);
    bpcu_cc_input in = {
        .cc_major = cc.major, .cc_minor = cc.minor,
        .driver_version = c->driver, .runtime_version = c->runtime,
        .sass = &sass, .ptx = &ptx, .allow_ptx_jit = c->jit, .allow = &allow, .deny = &deny,
    };
    bpcu_decision d;
    bpcu_verdict v = bpcu_cc_decide(&in, &d);
    cr_assert_eq(v, d.verdict);
    cr_assert_eq(v, c->want, "%s: got %s, wanted %s: %s | %s", name, bpcu_verdict_name(v),
                 bpcu_verdict_name(c->want), d.reason, d.remedy);
    cr_assert_str_eq(d.image, c->image, "%s: image %s", name, d.image);
    cr_assert_neq(d.reason[0], '\0', "every verdict has a reason");
    if (c->reason)
        cr_assert(strstr(d.reason, c->reason), "%s: reason \"%s\" lacks \"%s\"", name, d.reason,
                  c->reason);
    if (c->remedy)
        cr_assert(strstr(d.remedy, c->remedy), "%s: remedy \"%s\" lacks \"%s\"", name, d.remedy,
                  c->remedy);
    if (c->not_remedy)
        cr_assert_null(strstr(d.remedy, c->not_remedy), "%s: remedy \"%s\" holds \"%s\"", name,
                       d.remedy, c->not_remedy);
    if (v == BPCU_UNSUPPORTED || v == BPCU_FORCED || v == BPCU_JIT)
        cr_assert_neq(d.remedy[0], '\0', "%s: a refusal or warning names a remedy", name);
    cr_assert_null(strchr(d.reason, '\n'));
    char integer[16];
    snprintf(integer, sizeof integer, "%d", c->driver);
    if (c->driver >= 1000) /* a CUDA version is written 12.8, never as CUDA's 12080 */
        cr_assert(!strstr(d.reason, integer) && !strstr(d.remedy, integer), "%s: %s | %s", name,
                  d.reason, d.remedy);
}

#define CC_TEST(name) Test(cuda_cc, name) { check_case(#name); }

CC_TEST(same_major_newer_minor_runs_native)
CC_TEST(exact_real_code_runs_native)
CC_TEST(the_best_real_code_is_chosen)
CC_TEST(real_code_is_preferred_over_ptx)
CC_TEST(newer_major_with_ptx_runs_by_jit)
CC_TEST(newer_major_without_ptx_is_unsupported)
CC_TEST(jit_disabled_by_config_is_unsupported)
CC_TEST(ptx_newer_than_the_driver_is_unsupported)
CC_TEST(real_code_runs_on_an_older_driver_of_the_same_major)
CC_TEST(driver_older_than_the_runtime_runs_nothing)
CC_TEST(driver_older_than_the_runtime_is_not_forced_by_allow_cc)
CC_TEST(no_driver_is_unsupported)
CC_TEST(no_driver_is_not_forced_by_allow_cc)
CC_TEST(a_only_image_refuses_another_cc)
CC_TEST(a_image_runs_on_its_exact_cc)
CC_TEST(a_ptx_refuses_another_cc)
CC_TEST(f_image_runs_on_a_newer_minor_of_its_family)
CC_TEST(f_image_does_not_cross_a_major)
CC_TEST(f_ptx_does_not_cross_a_major)
CC_TEST(plain_ptx_crosses_a_major)
CC_TEST(device_older_than_every_image_is_unsupported)
CC_TEST(a_build_without_images_is_unsupported)
CC_TEST(allow_listed_device_is_forced_with_a_warning)
CC_TEST(allow_list_leaves_a_native_device_native)
CC_TEST(allow_list_does_not_force_disabled_jit)
CC_TEST(deny_listed_device_is_unsupported_even_with_real_code)
CC_TEST(deny_list_wins_over_allow_list)
CC_TEST(deny_list_wins_over_a_missing_driver)
CC_TEST(remedy_names_the_toolkit_an_architecture_needs)
CC_TEST(cuda_13_is_not_offered_below_sm_75)
CC_TEST(an_older_toolkit_is_told_which_one_the_architecture_needs)
CC_TEST(an_old_driver_is_offered_a_toolkit_it_can_run)
CC_TEST(a_driver_too_old_for_the_architecture_is_not_offered_a_rebuild)
CC_TEST(a_device_no_image_fits_is_not_told_to_only_update_the_driver)
CC_TEST(an_architecture_newer_than_the_table_is_offered_ptx)
CC_TEST(sm_120_from_cuda_12_6_is_not_native_since_12_6_cannot_build_it)
CC_TEST(an_image_no_toolkit_made_does_not_hide_one_that_runs)
CC_TEST(the_driver_is_named_by_cuda_version_and_release_never_by_cuda_s_integer)
CC_TEST(a_toolkit_range_of_one_version_is_named_as_that_version)

Test(cuda_cc, every_table_row_has_a_test)
{
    /* keeps the table and the CC_TEST list above in step */
    cr_assert_eq(sizeof cases / sizeof cases[0], 39);
}

/* ---- parsers ------------------------------------------------------------- */

Test(cuda_cc, parses_an_architecture_list_with_a_and_f_suffixes)
{
    bpcu_arch_list l;
    char err[256];
    cr_assert(bpcu_parse_arch_list(" 80, 90a,100f,120 ", &l, err, sizeof err), "%s", err);
    cr_assert_eq(l.count, 4);
    cr_assert(l.arch[0].major == 8 && l.arch[0].minor == 0 && l.arch[0].suffix == BPCU_ARCH_PLAIN);
    cr_assert(l.arch[1].major == 9 && l.arch[1].minor == 0 && l.arch[1].suffix == BPCU_ARCH_A);
    cr_assert(l.arch[2].major == 10 && l.arch[2].minor == 0 && l.arch[2].suffix == BPCU_ARCH_F);
    cr_assert(l.arch[3].major == 12 && l.arch[3].minor == 0);
    char buf[64];
    cr_assert_str_eq(bpcu_format_arch_list(&l, buf, sizeof buf), "80,90a,100f,120");
}

Test(cuda_cc, an_empty_architecture_list_is_valid_and_empty)
{
    bpcu_arch_list l = {.count = 3};
    char err[64], buf[16];
    cr_assert(bpcu_parse_arch_list("", &l, err, sizeof err));
    cr_assert_eq(l.count, 0);
    cr_assert(bpcu_parse_arch_list("  ", &l, err, sizeof err));
    cr_assert_eq(l.count, 0);
    cr_assert_str_eq(bpcu_format_arch_list(&l, buf, sizeof buf), "none");
}

Test(cuda_cc, refuses_bad_architecture_lists_naming_the_entry)
{
    static const struct { const char *s, *word; } bad[] = {
        {"80,,90", "empty entry"}, {"80,", "empty entry"}, {",80", "empty entry"},
        {"9x", "'9x'"}, {"8", "'8'"}, {"1000", "'1000'"}, {"090", "'090'"},
        {"90b", "'90b'"}, {"sm_90", "'sm_90'"}, {"90-real", "'90-real'"}, {"90 a", "'90 a'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bpcu_arch_list l;
        char err[256] = "";
        cr_assert_not(bpcu_parse_arch_list(bad[i].s, &l, err, sizeof err), "accepted \"%s\"",
                      bad[i].s);
        cr_assert(strstr(err, bad[i].word), "\"%s\": error \"%s\" lacks %s", bad[i].s, err,
                  bad[i].word);
    }
}

Test(cuda_cc, parses_compute_capabilities)
{
    bpcu_cc cc;
    char err[128];
    cr_assert(bpcu_parse_cc("12.0", &cc, err, sizeof err));
    cr_assert(cc.major == 12 && cc.minor == 0);
    cr_assert(bpcu_parse_cc(" 8.6 ", &cc, err, sizeof err));
    cr_assert(cc.major == 8 && cc.minor == 6);
}

Test(cuda_cc, refuses_bad_compute_capabilities)
{
    static const char *bad[] = {"12", "86", "8.", ".6", "8.6.1", "8.10", "abc", "", "-8.6",
                                "0.5", "8,6", "1234.0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bpcu_cc cc;
        char err[128] = "";
        cr_assert_not(bpcu_parse_cc(bad[i], &cc, err, sizeof err), "accepted \"%s\"", bad[i]);
        cr_assert(strstr(err, "MAJOR.MINOR"), "\"%s\": %s", bad[i], err);
    }
}

Test(cuda_cc, parses_compute_capability_lists_with_commas_or_spaces)
{
    bpcu_cc_list l;
    char err[256];
    cr_assert(bpcu_parse_cc_list("12.0, 8.6", &l, err, sizeof err), "%s", err);
    cr_assert_eq(l.count, 2);
    cr_assert(l.cc[0].major == 12 && l.cc[1].major == 8 && l.cc[1].minor == 6);
    cr_assert(bpcu_parse_cc_list("9.0 7.5", &l, err, sizeof err), "%s", err);
    cr_assert_eq(l.count, 2);
    cr_assert(bpcu_parse_cc_list("", &l, err, sizeof err));
    cr_assert_eq(l.count, 0);
    cr_assert_not(bpcu_parse_cc_list("12.0, sm_86", &l, err, sizeof err));
    cr_assert(strstr(err, "sm_86"), "%s", err);
}

Test(cuda_cc, formats_cuda_version_integers)
{
    char buf[16];
    cr_assert_str_eq(bpcu_format_version(13000, buf, sizeof buf), "13.0");
    cr_assert_str_eq(bpcu_format_version(12080, buf, sizeof buf), "12.8");
    cr_assert_str_eq(bpcu_format_version(0, buf, sizeof buf), "none");
}

Test(cuda_cc, names_every_verdict)
{
    cr_assert_str_eq(bpcu_verdict_name(BPCU_NATIVE), "native");
    cr_assert_str_eq(bpcu_verdict_name(BPCU_JIT), "jit");
    cr_assert_str_eq(bpcu_verdict_name(BPCU_FORCED), "forced");
    cr_assert_str_eq(bpcu_verdict_name(BPCU_UNSUPPORTED), "unsupported");
}

Test(cuda_cc, accepts_the_toolchain_and_cmake_spellings_of_architectures)
{
    bpcu_arch_list l;
    char err[256], buf[64];
    cr_assert(bpcu_parse_arch_list_any("sm_120, compute_90,100-real, 86-virtual,120a", &l, err,
                                       sizeof err), "%s", err);
    cr_assert_str_eq(bpcu_format_arch_list(&l, buf, sizeof buf), "120,90,100,86,120a");
    cr_assert_not(bpcu_parse_arch_list_any("sm_9x", &l, err, sizeof err));
    cr_assert(strstr(err, "'9x'") && strstr(err, "sm_120"), "%s", err);
    cr_assert_not(bpcu_parse_arch_list_any("80,", &l, err, sizeof err));
}

Test(cuda_cc, parses_cuda_versions_as_nvidia_smi_prints_them)
{
    static const struct { const char *s; int v; } good[] = {
        {"13000", 13000}, {"13.0", 13000}, {"12.8", 12080}, {"12.10", 12100}, {"0", 0},
        {"none", 0},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int v = -1;
        char err[256];
        cr_assert(bpcu_parse_cuda_version(good[i].s, &v, err, sizeof err), "%s: %s", good[i].s,
                  err);
        cr_assert_eq(v, good[i].v, "%s gave %d", good[i].s, v);
    }
}

Test(cuda_cc, reads_a_driver_release_as_the_cuda_version_it_supports)
{
    static const struct { const char *s; int v; const char *note; } good[] = {
        {"575.57.08", 12090, "driver release 575.57.08 supports CUDA 12.9"},
        {"575.51.03", 12090, NULL}, {"575", 12090, NULL}, {"570.86.10", 12080, NULL},
        {"570.26", 12080, NULL}, {"580.65.06", 13000, NULL}, {"535.161.07", 12020, NULL},
        {"565.57.01", 12070, NULL}, {"560.35.05", 12060, NULL}, {"450.80.02", 11000, NULL},
        {"610.10", 13010, "at least"},
        /* and the CUDA version itself, as before */
        {"12.8", 12080, ""}, {"13000", 13000, ""}, {"0", 0, ""},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int v = -1;
        char err[256] = "", note[160] = "x";
        cr_assert(bpcu_parse_driver(good[i].s, &v, note, sizeof note, err, sizeof err), "%s: %s",
                  good[i].s, err);
        cr_assert_eq(v, good[i].v, "%s gave %d", good[i].s, v);
        if (good[i].note && !good[i].note[0])
            cr_assert_str_eq(note, "", "%s", good[i].s);
        else if (good[i].note)
            cr_assert(strstr(note, good[i].note), "%s: %s", good[i].s, note);
    }
    int v;
    char err[256] = "";
    cr_assert_not(bpcu_parse_driver("390.46", &v, NULL, 0, err, sizeof err));
    cr_assert(strstr(err, "older than 410.48"), "%s", err);
    cr_assert_not(bpcu_parse_driver("575.57.08.1", &v, NULL, 0, err, sizeof err));
}

Test(cuda_cc, names_the_first_driver_release_of_a_cuda_version)
{
    char buf[24];
    cr_assert_str_eq(bpcu_driver_min_release(13000, buf, sizeof buf), "580.65.06");
    cr_assert_str_eq(bpcu_driver_min_release(12080, buf, sizeof buf), "570.26");
    cr_assert_null(bpcu_driver_min_release(99000, buf, sizeof buf));
}

Test(cuda_cc, refuses_driver_releases_and_malformed_cuda_versions)
{
    static const struct { const char *s, *word; } bad[] = {
        {"575.57.08", "driver release"}, {"13.", "not a CUDA version"}, {"x", "not a CUDA version"},
        {"999", "not a CUDA version"}, {"", "not a CUDA version"}, {"12.8.1", "not a CUDA version"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int v;
        char err[256] = "";
        cr_assert_not(bpcu_parse_cuda_version(bad[i].s, &v, err, sizeof err), "accepted %s",
                      bad[i].s);
        cr_assert(strstr(err, bad[i].word), "\"%s\": %s", bad[i].s, err);
    }
}

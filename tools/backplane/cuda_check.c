/* backplane cuda-check: the cuda plugin's load-time decision for a device
 * described on the command line, answered offline. Without --sass/--ptx it
 * uses the lists this build recorded (CMAKE_CUDA_ARCHITECTURES); without
 * --driver it assumes a driver new enough for this build's runtime and says
 * so; without --runtime, the toolkit this build used. */
#include "cuda_check.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cc_check.h"
#include "cli.h"

static const char *cmd_name = "cuda-check";

static void usage(FILE *f)
{
    char rt[16];
    const char *sass = bpcu_build_sass(), *ptx = bpcu_build_ptx();
    fprintf(f,
            "usage: backplane cuda-check --cc X.Y [--sass LIST] [--ptx LIST] [--driver V]\n"
            "                            [--runtime V] [--no-jit] [--allow CCS] [--deny CCS]\n"
            "\n"
            "Would the cuda plugin run on a GPU of compute capability X.Y? Answered offline,\n"
            "by the same decision the plugin makes when it opens. Prints one line: the\n"
            "verdict (native, jit, forced or unsupported), the reason and the remedy.\n"
            "Exit status 0 when it could run, 1 when not, 2 on a usage error.\n"
            "\n"
            "options:\n"
            "  --cc X.Y         the GPU's compute capability, e.g. 8.6 or 12.0 (required);\n"
            "                   on the GPU's machine:\n"
            "                     nvidia-smi --query-gpu=compute_cap --format=csv\n"
            "  --sass LIST      real-code architectures, e.g. 80,90a,100f,120; each as 120,\n"
            "                   sm_120, compute_120, 120-real or 120a\n"
            "  --ptx LIST       PTX architectures, the same spellings (with --sass or --ptx,\n"
            "                   the other list is empty unless given too)\n"
            "  --driver V       the CUDA version the driver supports, as nvidia-smi prints\n"
            "                   it (\"CUDA Version: 12.8\": 12.8) or as CUDA's integer (12080);\n"
            "                   0 means no driver. Default: assumed new enough for this\n"
            "                   build's runtime (the answer says so)\n"
            "  --runtime V      the toolkit that built the images (default: this build's)\n"
            "  --no-jit         as allow_ptx_jit = false\n"
            "  --allow CCS      as allow_cc, e.g. \"12.0, 8.6\"\n"
            "  --deny CCS       as deny_cc\n"
            "  -h, --help       show this help\n"
            "\n"
            "A GPU that no image of a build fits fails at its first kernel with CUDA's\n"
            "'no kernel image is available for execution on the device'\n"
            "(cudaErrorNoKernelImageForDevice); the plugin refuses such a GPU when it opens,\n"
            "and this command tells beforehand. Remedies name the CMAKE_CUDA_ARCHITECTURES\n"
            "entry to add (120-real for real code, 120-virtual for PTX) and the CUDA\n"
            "toolkit it needs (sm_120: 12.8 or newer; CUDA 13 builds nothing below sm_75).\n"
            "\n"
            "This build: real code %s; PTX %s; CUDA runtime %s.\n",
            *sass ? sass : "none (the cuda plugin is not built)", *ptx ? ptx : "none",
            bpcu_format_version(bpcu_build_runtime_version(), rt, sizeof rt));
}

int cli_cuda_check(int argc, char **argv)
{
    const char *cc_s = NULL, *sass_s = NULL, *ptx_s = NULL, *allow_s = NULL, *deny_s = NULL;
    const char *drv_s = NULL, *rt_s = NULL;
    bool jit = true;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(arg, "--no-jit") == 0) {
            jit = false;
            continue;
        }
        static const char *names[] = {"--cc", "--sass", "--ptx", "--driver", "--runtime",
                                      "--allow", "--deny"};
        const char **slots[] = {&cc_s, &sass_s, &ptx_s, &drv_s, &rt_s, &allow_s, &deny_s};
        int matched = 0;
        for (size_t k = 0; k < sizeof names / sizeof names[0] && !matched; k++) {
            matched = cli_option_value(cmd_name, argc, argv, &i, names[k], slots[k]);
            if (matched < 0)
                return CLI_EXIT_USAGE;
        }
        if (!matched)
            return cli_usage_error(cmd_name, "unknown argument '%s'", arg);
    }
    if (!cc_s)
        return cli_usage_error(cmd_name, "--cc X.Y is required (the device's compute capability)");

    char err[256];
    bpcu_cc cc;
    bpcu_arch_list sass, ptx;
    bpcu_cc_list allow, deny;
    if (!bpcu_parse_cc(cc_s, &cc, err, sizeof err))
        return cli_usage_error(cmd_name, "--cc: %s", err);
    bool own_lists = !sass_s && !ptx_s;
    if (!bpcu_parse_arch_list_any(own_lists ? bpcu_build_sass() : sass_s ? sass_s : "", &sass,
                                  err, sizeof err))
        return cli_usage_error(cmd_name, "--sass: %s", err);
    if (!bpcu_parse_arch_list_any(own_lists ? bpcu_build_ptx() : ptx_s ? ptx_s : "", &ptx, err,
                                  sizeof err))
        return cli_usage_error(cmd_name, "--ptx: %s", err);
    if (!bpcu_parse_cc_list(allow_s, &allow, err, sizeof err))
        return cli_usage_error(cmd_name, "--allow: %s", err);
    if (!bpcu_parse_cc_list(deny_s, &deny, err, sizeof err))
        return cli_usage_error(cmd_name, "--deny: %s", err);
    int driver = 0, runtime = bpcu_build_runtime_version();
    if (rt_s && !bpcu_parse_cuda_version(rt_s, &runtime, err, sizeof err))
        return cli_usage_error(cmd_name, "--runtime: %s", err);
    if (drv_s && !bpcu_parse_cuda_version(drv_s, &driver, err, sizeof err))
        return cli_usage_error(cmd_name, "--driver: %s", err);
    /* without --driver: the oldest driver that runs this runtime's images */
    char assumed[200] = "";
    if (!drv_s) {
        char v[16];
        driver = runtime > 0 ? runtime : 1000;
        if (runtime > 0)
            snprintf(assumed, sizeof assumed, " (driver assumed to support CUDA %s, as this "
                     "build's runtime needs; give --driver to check another)",
                     bpcu_format_version(driver, v, sizeof v));
        else
            snprintf(assumed, sizeof assumed, " (a driver assumed present; give --driver to "
                     "check one)");
    }

    bpcu_cc_input in = {
        .cc_major = cc.major, .cc_minor = cc.minor,
        .driver_version = driver, .runtime_version = runtime,
        .sass = &sass, .ptx = &ptx, .allow_ptx_jit = jit, .allow = &allow, .deny = &deny,
    };
    bpcu_decision d;
    bpcu_verdict v = bpcu_cc_decide(&in, &d);
    printf("%s: %s%s%s%s\n", bpcu_verdict_name(v), d.reason, d.remedy[0] ? "; remedy: " : "",
           d.remedy, assumed);
    return bpcu_verdict_runs(v) ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

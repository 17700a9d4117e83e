/* backplane cuda-check: the cuda plugin's load-time decision for a device
 * described on the command line. Without --sass/--ptx it uses the lists this
 * build recorded (CMAKE_CUDA_ARCHITECTURES); without --driver, this machine's
 * driver (libcuda.so.1's cuDriverGetVersion, found with dlopen: no driver is
 * a valid answer); without --runtime, the toolkit this build used. */
#include "cuda_check.h"

#include <dlfcn.h>
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
            "usage: backplane cuda-check --cc X.Y [--sass LIST] [--ptx LIST] [--driver N]\n"
            "                            [--runtime N] [--no-jit] [--allow CCS] [--deny CCS]\n"
            "\n"
            "Would the cuda plugin run on a GPU of compute capability X.Y? Prints one line:\n"
            "the verdict (native, jit, forced or unsupported), the reason and the remedy.\n"
            "Exit status 0 when it could run, 1 when not, 2 on a usage error.\n"
            "\n"
            "options:\n"
            "  --cc X.Y         the device's compute capability, e.g. 8.6 or 12.0 (required)\n"
            "  --sass LIST      real-code architectures as in sm_XY, e.g. 80,90a,100f,120\n"
            "  --ptx LIST       PTX architectures, same form (with --sass or --ptx, the\n"
            "                   other list is empty unless given too)\n"
            "  --driver N       driver's CUDA version as CUDA's integer (13000 = 13.0);\n"
            "                   0 means no driver (default: this machine's)\n"
            "  --runtime N      the toolkit that built the images (default: this build's)\n"
            "  --no-jit         as allow_ptx_jit = false\n"
            "  --allow CCS      as allow_cc, e.g. \"12.0, 8.6\"\n"
            "  --deny CCS       as deny_cc\n"
            "  -h, --help       show this help\n"
            "\n"
            "This build: real code %s; PTX %s; CUDA runtime %s.\n",
            *sass ? sass : "none (the cuda plugin is not built)", *ptx ? ptx : "none",
            bpcu_format_version(bpcu_build_runtime_version(), rt, sizeof rt));
}

/* This machine's driver version through libcuda.so.1, or 0 when there is no
 * driver (no library, no symbol, or a failing call). */
static int machine_driver_version(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 0;
    int version = 0;
    typedef int (*get_version_fn)(int *);
    get_version_fn fn;
    void *sym = dlsym(lib, "cuDriverGetVersion");
    memcpy(&fn, &sym, sizeof fn); /* object -> function pointer, without a cast warning */
    if (!fn || fn(&version) != 0)
        version = 0;
    dlclose(lib);
    return version;
}

static bool parse_version(const char *s, int *out)
{
    int64_t v;
    if (!cli_parse_i64(s, 0, 1000000, &v))
        return false;
    *out = (int)v;
    return true;
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
    if (!bpcu_parse_arch_list(own_lists ? bpcu_build_sass() : sass_s ? sass_s : "", &sass, err,
                              sizeof err))
        return cli_usage_error(cmd_name, "--sass: %s", err);
    if (!bpcu_parse_arch_list(own_lists ? bpcu_build_ptx() : ptx_s ? ptx_s : "", &ptx, err,
                              sizeof err))
        return cli_usage_error(cmd_name, "--ptx: %s", err);
    if (!bpcu_parse_cc_list(allow_s, &allow, err, sizeof err))
        return cli_usage_error(cmd_name, "--allow: %s", err);
    if (!bpcu_parse_cc_list(deny_s, &deny, err, sizeof err))
        return cli_usage_error(cmd_name, "--deny: %s", err);
    int driver, runtime;
    if (drv_s) {
        if (!parse_version(drv_s, &driver))
            return cli_usage_error(cmd_name, "--driver: '%s' is not a CUDA version integer "
                                   "such as 13000 (0 for no driver)", drv_s);
    } else {
        driver = machine_driver_version();
    }
    if (rt_s) {
        if (!parse_version(rt_s, &runtime))
            return cli_usage_error(cmd_name, "--runtime: '%s' is not a CUDA version integer "
                                   "such as 13000", rt_s);
    } else {
        runtime = bpcu_build_runtime_version();
    }

    bpcu_cc_input in = {
        .cc_major = cc.major, .cc_minor = cc.minor,
        .driver_version = driver, .runtime_version = runtime,
        .sass = &sass, .ptx = &ptx, .allow_ptx_jit = jit, .allow = &allow, .deny = &deny,
    };
    bpcu_decision d;
    bpcu_verdict v = bpcu_cc_decide(&in, &d);
    printf("%s: %s%s%s\n", bpcu_verdict_name(v), d.reason, d.remedy[0] ? "; remedy: " : "",
           d.remedy);
    return bpcu_verdict_runs(v) ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

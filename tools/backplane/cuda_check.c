/* backplane cuda-check: the cuda plugin's load-time decision, answered
 * without opening the plugin. With --cc, for a device described on the
 * command line (no GPU needed); without, for each GPU of this machine, as the
 * CUDA driver describes it. Without --sass/--ptx it uses the lists this build
 * recorded (CMAKE_CUDA_ARCHITECTURES); without --driver, the local driver, or
 * for --cc one new enough for this build's runtime, and says so; without
 * --runtime, the toolkit this build used. */
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
            "usage: backplane cuda-check [--cc X.Y] [--sass LIST] [--ptx LIST] [--driver V]\n"
            "                            [--runtime V] [--no-jit] [--allow CCS] [--deny CCS]\n"
            "\n"
            "Would the cuda plugin run on this machine's GPUs, or on a GPU of compute\n"
            "capability X.Y? Answered by the same decision the plugin makes when it opens,\n"
            "without opening it. Prints one line per GPU: the verdict (native, jit, forced\n"
            "or unsupported), the reason and the remedy. Exit status 0 when it could run\n"
            "(on every GPU), 1 when not or when there is no GPU to check, 2 on a usage\n"
            "error.\n"
            "\n"
            "options:\n"
            "  --cc X.Y         a GPU's compute capability, e.g. 8.6 or 12.0 (no GPU needed);\n"
            "                   without it, each GPU of this machine is checked. On the\n"
            "                   GPU's machine:\n"
            "                     nvidia-smi --query-gpu=compute_cap --format=csv\n"
            "  --sass LIST      real-code architectures, e.g. 80,90a,100f,120; each as 120,\n"
            "                   sm_120, compute_120, 120-real or 120a\n"
            "  --ptx LIST       PTX architectures, the same spellings (with --sass or --ptx,\n"
            "                   the other list is empty unless given too)\n"
            "  --driver V       the driver: the CUDA version it supports as nvidia-smi\n"
            "                   prints it (\"CUDA Version: 12.9\": 12.9, or CUDA's integer\n"
            "                   12090), or its release (\"Driver Version: 575.57.08\":\n"
            "                   575.57.08, which supports CUDA 12.9); 0 means no driver.\n"
            "                   Default: this machine's; with --cc, one new enough for this\n"
            "                   build's runtime (the answer says so)\n"
            "  --runtime V      the CUDA toolkit that built the images, e.g. 12.8\n"
            "                   (default: this build's)\n"
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

/* ---- the GPUs of this machine ------------------------------------------------ */

enum { MAX_LOCAL_GPUS = 64 };

typedef struct local_gpu {
    int major, minor;
    char name[128];
} local_gpu;

typedef struct local_gpus {
    int driver;            /* the CUDA version the driver supports; 0: none */
    char release[32];      /* the driver's release ("575.57.08"), "" if unknown */
    int n;
    local_gpu gpu[MAX_LOCAL_GPUS];
    char why[320];         /* why there is none */
} local_gpus;

/* The driver's release, from the kernel module's version file. */
static void driver_release(char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f)
        return;
    char line[512], tok[64];
    if (fgets(line, sizeof line, f)) {
        for (const char *p = line; *p;) {
            size_t len = strcspn(p, " \t\n");
            int r = 0, dots = 0;
            for (size_t i = 0; i < len; i++)
                dots += p[i] == '.';
            if (len > 0 && len < sizeof tok && dots >= 1 && sscanf(p, "%d.", &r) == 1 && r >= 100 &&
                strspn(p, "0123456789.") == len) {
                snprintf(buf, size, "%.*s", (int)len, p);
                break;
            }
            p += len;
            p += strspn(p, " \t\n");
        }
    }
    fclose(f);
}

/* Ask the CUDA driver about this machine's GPUs, with nothing but dlopen:
 * the command links no CUDA library (as the cuda plugin's front). */
static void find_local_gpus(local_gpus *g)
{
    memset(g, 0, sizeof *g);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(g->why, sizeof g->why, "no CUDA driver here (%s)", e ? e : "libcuda.so.1 not found");
        return;
    }
    int (*init)(unsigned) = NULL, (*version)(int *) = NULL, (*count)(int *) = NULL;
    int (*get)(int *, int) = NULL, (*attr)(int *, int, int) = NULL, (*name)(char *, int, int) = NULL;
    void *p;
    if ((p = dlsym(lib, "cuInit")))
        memcpy(&init, &p, sizeof p);
    if ((p = dlsym(lib, "cuDriverGetVersion")))
        memcpy(&version, &p, sizeof p);
    if ((p = dlsym(lib, "cuDeviceGetCount")))
        memcpy(&count, &p, sizeof p);
    if ((p = dlsym(lib, "cuDeviceGet")))
        memcpy(&get, &p, sizeof p);
    if ((p = dlsym(lib, "cuDeviceGetAttribute")))
        memcpy(&attr, &p, sizeof p);
    if ((p = dlsym(lib, "cuDeviceGetName")))
        memcpy(&name, &p, sizeof p);
    if (!init || !version || !count || !get || !attr || !name || version(&g->driver) != 0 ||
        g->driver <= 0) {
        g->driver = 0;
        snprintf(g->why, sizeof g->why, "no usable CUDA driver here (libcuda.so.1 lacks the "
                 "calls or gives no version)");
        dlclose(lib);
        return;
    }
    driver_release(g->release, sizeof g->release);
    int n = 0, r = init(0);
    if (r != 0 || count(&n) != 0 || n <= 0) {
        snprintf(g->why, sizeof g->why, "the CUDA driver sees no GPU here%s", r == 100 ?
                 " (CUDA_ERROR_NO_DEVICE)" : "");
        dlclose(lib);
        return;
    }
    enum { CC_MAJOR = 75, CC_MINOR = 76 }; /* CUdevice_attribute */
    for (int i = 0; i < n && g->n < MAX_LOCAL_GPUS; i++) {
        local_gpu *d = &g->gpu[g->n];
        int dev = 0;
        if (get(&dev, i) != 0 || attr(&d->major, CC_MAJOR, dev) != 0 ||
            attr(&d->minor, CC_MINOR, dev) != 0)
            continue;
        if (name(d->name, (int)sizeof d->name, dev) != 0)
            snprintf(d->name, sizeof d->name, "GPU %d", i);
        d->name[sizeof d->name - 1] = '\0';
        g->n++;
    }
    if (g->n == 0)
        snprintf(g->why, sizeof g->why, "the CUDA driver lists %d GPU(s) but describes none", n);
    dlclose(lib);
}

/* ---- the command ---------------------------------------------------------------- */

typedef struct check_args {
    const char *cc, *sass, *ptx, *driver, *runtime, *allow, *deny;
    bool jit;
} check_args;

/* The decision's lists and versions from the command line (or this build's).
 * CLI_EXIT_OK, or a usage error's exit code. */
static int read_inputs(const check_args *a, bpcu_arch_list *sass, bpcu_arch_list *ptx,
                       bpcu_cc_list *allow, bpcu_cc_list *deny, int *driver, int *runtime,
                       char *driver_note, size_t note_size)
{
    char err[256];
    bool own_lists = !a->sass && !a->ptx;
    if (!bpcu_parse_arch_list_any(own_lists ? bpcu_build_sass() : a->sass ? a->sass : "", sass,
                                  err, sizeof err))
        return cli_usage_error(cmd_name, "--sass: %s", err);
    if (!bpcu_parse_arch_list_any(own_lists ? bpcu_build_ptx() : a->ptx ? a->ptx : "", ptx, err,
                                  sizeof err))
        return cli_usage_error(cmd_name, "--ptx: %s", err);
    if (!bpcu_parse_cc_list(a->allow, allow, err, sizeof err))
        return cli_usage_error(cmd_name, "--allow: %s", err);
    if (!bpcu_parse_cc_list(a->deny, deny, err, sizeof err))
        return cli_usage_error(cmd_name, "--deny: %s", err);
    *runtime = bpcu_build_runtime_version();
    if (a->runtime && !bpcu_parse_cuda_version(a->runtime, runtime, err, sizeof err))
        return cli_usage_error(cmd_name, "--runtime: %s", err);
    driver_note[0] = '\0';
    if (a->driver && !bpcu_parse_driver(a->driver, driver, driver_note, note_size, err, sizeof err))
        return cli_usage_error(cmd_name, "--driver: %s", err);
    return CLI_EXIT_OK;
}

int cli_cuda_check(int argc, char **argv)
{
    check_args a = {.jit = true};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(arg, "--no-jit") == 0) {
            a.jit = false;
            continue;
        }
        static const char *names[] = {"--cc", "--sass", "--ptx", "--driver", "--runtime",
                                      "--allow", "--deny"};
        const char **slots[] = {&a.cc, &a.sass, &a.ptx, &a.driver, &a.runtime, &a.allow, &a.deny};
        int matched = 0;
        for (size_t k = 0; k < sizeof names / sizeof names[0] && !matched; k++) {
            matched = cli_option_value(cmd_name, argc, argv, &i, names[k], slots[k]);
            if (matched < 0)
                return CLI_EXIT_USAGE;
        }
        if (!matched)
            return cli_usage_error(cmd_name, "unknown argument '%s'", arg);
    }

    char err[256], driver_note[160];
    bpcu_arch_list sass, ptx;
    bpcu_cc_list allow, deny;
    int driver = 0, runtime = 0;
    int rc = read_inputs(&a, &sass, &ptx, &allow, &deny, &driver, &runtime, driver_note,
                         sizeof driver_note);
    if (rc != CLI_EXIT_OK)
        return rc;
    char rt_s[16];
    bpcu_format_version(runtime, rt_s, sizeof rt_s);
    bpcu_cc_input in = {
        .runtime_version = runtime, .sass = &sass, .ptx = &ptx, .allow_ptx_jit = a.jit,
        .allow = &allow, .deny = &deny,
    };

    if (!a.cc) { /* this machine's GPUs */
        local_gpus g;
        find_local_gpus(&g);
        if (g.n == 0) {
            fprintf(stderr, "backplane cuda-check: no NVIDIA GPU to check: %s.\n"
                    "To ask about a GPU elsewhere, give its compute capability: --cc X.Y "
                    "(on its machine: nvidia-smi --query-gpu=compute_cap --format=csv).\n", g.why);
            return CLI_EXIT_FAILURE;
        }
        bool all_run = true;
        for (int i = 0; i < g.n; i++) {
            char drv_s[16], drv_desc[96];
            in.cc_major = g.gpu[i].major;
            in.cc_minor = g.gpu[i].minor;
            in.driver_version = a.driver ? driver : g.driver;
            bpcu_format_version(in.driver_version, drv_s, sizeof drv_s);
            if (a.driver)
                snprintf(drv_desc, sizeof drv_desc, "a driver for CUDA %s (--driver)", drv_s);
            else if (g.release[0])
                snprintf(drv_desc, sizeof drv_desc, "driver %s for CUDA %s", g.release, drv_s);
            else
                snprintf(drv_desc, sizeof drv_desc, "a driver for CUDA %s", drv_s);
            bpcu_decision d;
            bpcu_verdict v = bpcu_cc_decide(&in, &d);
            all_run = all_run && bpcu_verdict_runs(v);
            printf("%s: GPU %d (%s, compute capability %d.%d, %s): %s%s%s\n", bpcu_verdict_name(v),
                   i, g.gpu[i].name, g.gpu[i].major, g.gpu[i].minor, drv_desc, d.reason,
                   d.remedy[0] ? "; remedy: " : "", d.remedy);
        }
        return all_run ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
    }

    bpcu_cc cc;
    if (!bpcu_parse_cc(a.cc, &cc, err, sizeof err))
        return cli_usage_error(cmd_name, "--cc: %s", err);
    /* without --driver: the oldest driver that runs this runtime's images */
    char said[240] = "";
    if (!a.driver) {
        driver = runtime > 0 ? runtime : 1000;
        if (runtime > 0)
            snprintf(said, sizeof said, " (driver assumed to support CUDA %s, as this "
                     "build's runtime needs; give --driver to check another)", rt_s);
        else
            snprintf(said, sizeof said, " (a driver assumed present; give --driver to "
                     "check one)");
    } else if (driver_note[0]) {
        snprintf(said, sizeof said, " (%s)", driver_note);
    }
    in.cc_major = cc.major;
    in.cc_minor = cc.minor;
    in.driver_version = driver;
    bpcu_decision d;
    bpcu_verdict v = bpcu_cc_decide(&in, &d);
    printf("%s: %s%s%s%s\n", bpcu_verdict_name(v), d.reason, d.remedy[0] ? "; remedy: " : "",
           d.remedy, said);
    return bpcu_verdict_runs(v) ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

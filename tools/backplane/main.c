/* backplane: the command-line tool. Subcommand dispatch and shared helpers.
 *
 * To add a command, declare `int cli_NAME(int argc, char **argv)` in cli.h,
 * define it in tools/backplane/NAME.c (tools/CMakeLists.txt picks up every
 * .c here) and add one row to `commands` below. */
#include "cli.h"
#include "cuda_check.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CLI_STR2(x) #x
#define CLI_STR(x) CLI_STR2(x)
#define CLI_VERSION_STRING                                                          \
    CLI_STR(BP_VERSION_MAJOR) "." CLI_STR(BP_VERSION_MINOR) "." CLI_STR(BP_VERSION_PATCH)

typedef struct cli_command {
    const char *name;
    cli_command_fn fn;
    const char *summary; /* one line for `backplane --help` */
} cli_command;

/* The command table: one row per subcommand, in the order --help lists them. */
static const cli_command commands[] = {
    {"info", cli_info, "show the version, configuration, plugins, devices and default backend"},
    {"demo", cli_demo, "train a small model (an MLP, or a CNN with --model cnn) on synthetic "
                       "data with the library's ops"},
    {"inspect", cli_inspect, "list the tensors and metadata of a safetensors checkpoint"},
    {"bench", cli_bench, "time ops per backend (median of repetitions; no pass/fail)"},
    {"conform", cli_conform,
     "run the conformance suite against a backend or plugin file (op x dtype, contract)"},
    {"cuda-check", cli_cuda_check,
     "would this build's cuda plugin run on this machine's GPUs, or on one of compute "
     "capability X.Y (--cc, no GPU needed)?"},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void print_usage(FILE *f)
{
    fprintf(f,
            "usage: backplane [--help] [--version] COMMAND [OPTIONS]\n"
            "\n"
            "backplane is a C11 tensor library whose backends are plugins.\n"
            "\n"
            "commands:\n");
    size_t width = 4;
    for (size_t i = 0; i < N_COMMANDS; i++) {
        size_t len = strlen(commands[i].name);
        if (len > width)
            width = len;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-*s  %s\n", (int)width, commands[i].name, commands[i].summary);
    fprintf(f, "  %-*s  %s\n", (int)width, "help", "show this help, or a command's (help COMMAND)");
    fprintf(f,
            "\n"
            "options:\n"
            "  -h, --help     show this help and exit\n"
            "  -V, --version  show the version and exit\n"
            "\n"
            "Run 'backplane COMMAND --help' for a command's options.\n"
            "Environment: BP_CONFIG, BP_DEFAULT_BACKEND, BP_LOG_LEVEL, BP_PLUGIN_PATH.\n");
}

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int unknown_command(const char *name)
{
    fprintf(stderr, "backplane: unknown command '%s'\n", name);
    fprintf(stderr, "Run 'backplane --help' for the list of commands.\n");
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *arg = argv[1];
    if (cli_is_help(arg)) {
        print_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0) {
        printf("backplane %s (libbackplane %s, plugin ABI %d.%d)\n", CLI_VERSION_STRING,
               bp_version(), BP_ABI_MAJOR, BP_ABI_MINOR);
        return CLI_EXIT_OK;
    }
    if (strcmp(arg, "help") == 0) {
        if (argc == 2) {
            print_usage(stdout);
            return CLI_EXIT_OK;
        }
        if (argc > 3)
            return cli_usage_error("help", "expected at most one command name");
        const cli_command *c = find_command(argv[2]);
        if (!c)
            return unknown_command(argv[2]);
        char help_opt[] = "--help";
        char *sub_argv[] = {(char *)c->name, help_opt, NULL};
        return c->fn(2, sub_argv);
    }
    if (arg[0] == '-') {
        fprintf(stderr, "backplane: unknown option '%s'\n", arg);
        fprintf(stderr, "Run 'backplane --help' for usage.\n");
        return CLI_EXIT_USAGE;
    }
    const cli_command *c = find_command(arg);
    if (!c)
        return unknown_command(arg);
    return c->fn(argc - 1, argv + 1);
}

/* ---- helpers -------------------------------------------------------------- */

int cli_fail(const char *cmd, const char *what, bp_status status)
{
    const char *detail = bp_last_error();
    fprintf(stderr, "backplane %s: %s: %s (%s)\n", cmd, what, bp_status_string(status),
            bp_status_message(status));
    cli_print_block(stderr, detail, "  ");
    return CLI_EXIT_FAILURE;
}

void cli_print_block(FILE *f, const char *s, const char *indent)
{
    if (!s || !s[0])
        return;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '\n')
        n--;
    const char *p = s, *end = s + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        fprintf(f, "%s%.*s\n", indent, (int)len, p);
        p += len + 1;
    }
}

int cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "backplane %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_FAILURE;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "backplane %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun 'backplane %s --help' for usage.\n", cmd);
    return CLI_EXIT_USAGE;
}

bool cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cli_option_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                     const char **value)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        cli_usage_error(cmd, "option '%s' needs a value", name);
        return -1;
    }
    *i += 1;
    *value = argv[*i];
    return 1;
}

bool cli_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || !end || *end != '\0')
        return false;
    *out = (uint64_t)v;
    return true;
}

bool cli_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (!s || !*s || *s == ' ')
        return false;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || !end || *end != '\0' || v < min || v > max)
        return false;
    *out = (int64_t)v;
    return true;
}

bool cli_parse_f64(const char *s, double *out)
{
    if (!s || !*s || *s == ' ')
        return false;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || !end || *end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

void cli_json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(f, "\\u%04x", (unsigned)*p);
            else
                fputc(*p, f); /* UTF-8 passes through unchanged */
        }
    }
    fputc('"', f);
}

const char *cli_format_bytes(uint64_t bytes, char *buf, size_t size)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024) {
        snprintf(buf, size, "%" PRIu64 " B", bytes);
        return buf;
    }
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, size, "%.1f %s", v, units[u]);
    return buf;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* backplane CLI: declarations shared by the subcommands.
 *
 * Conventions for every subcommand (see main.c for the command table):
 *   - output for the user goes to stdout; errors go to stderr;
 *   - exit CLI_EXIT_OK on success, CLI_EXIT_FAILURE (1) when the work failed,
 *     CLI_EXIT_USAGE (2) for a usage error (unknown option, bad value);
 *   - every command accepts -h / --help;
 *   - a command is `int cli_NAME(int argc, char **argv)`, where argv[0] is
 *     the command's own name ("info", "demo", ...).
 *
 * To add a command: write tools/backplane/NAME.c defining cli_NAME, declare
 * it below, and add one row to the table in main.c. */
#ifndef BACKPLANE_CLI_H
#define BACKPLANE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <backplane/backplane.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILURE 1
#define CLI_EXIT_USAGE 2
/* conform only: the backend's device is not available on this machine (a
 * skip, not a pass; ctest's SKIP_RETURN_CODE). */
#define CLI_EXIT_SKIP 77

#if defined(__GNUC__) || defined(__clang__)
#define CLI_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define CLI_PRINTF(fmt_index, first_arg)
#endif

typedef int (*cli_command_fn)(int argc, char **argv);

/* ---- the subcommands ------------------------------------------------------ */
int cli_info(int argc, char **argv);
int cli_demo(int argc, char **argv);
int cli_inspect(int argc, char **argv);
/* `backplane bench [--backend NAME ...] [--op NAME ...] [--size S ...] [--json]
 * [--config FILE] [--min-time SEC] [--min-reps N]` (bench.c). */
int cli_bench(int argc, char **argv);
/* `backplane conform ...` (conform.c): a front end to libbackplane_conform.
 * Also returns CLI_EXIT_SKIP. */
int cli_conform(int argc, char **argv);
/* cli_cuda_check is declared in cuda_check.h, beside the compute-capability
 * check it fronts. */

/* ---- helpers (main.c) ----------------------------------------------------- */

/* Report a failed library call on stderr:
 *   backplane CMD: WHAT: BP_ERR_X (meaning)
 *     <bp_last_error() detail, if any>
 * Returns CLI_EXIT_FAILURE so callers can `return cli_fail(...)`. Call it
 * before any other library call that may fail (bp_last_error is per thread
 * and overwritten by the next failure). */
int cli_fail(const char *cmd, const char *what, bp_status status);

/* A failure that is not a library error: "backplane CMD: message" on stderr.
 * Returns CLI_EXIT_FAILURE. */
int cli_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

/* "backplane CMD: message" plus a hint to run --help, on stderr. Returns
 * CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

/* True for "-h" and "--help". */
bool cli_is_help(const char *arg);

/* Match argv[*i] against the option `name` ("--steps") taking a value, as
 * "--steps 10" or "--steps=10".
 *   1: matched; *value is set and *i points at the last argv entry consumed.
 *   0: argv[*i] is not this option.
 *  -1: matched but the value is missing (a usage error was printed). */
int cli_option_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                     const char **value);

/* Strict number parsing: the whole string must be a number in range. */
bool cli_parse_u64(const char *s, uint64_t *out);
bool cli_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
bool cli_parse_f64(const char *s, double *out);

/* Print every line of s (trailing newlines dropped) to f, each after indent.
 * NULL or "" prints nothing. */
void cli_print_block(FILE *f, const char *s, const char *indent);

/* Write s as a JSON string literal (quotes included; NULL writes null). */
void cli_json_string(FILE *f, const char *s);

/* "1.5 MiB" etc. into buf; returns buf. */
const char *cli_format_bytes(uint64_t bytes, char *buf, size_t size);

/* Seconds from a monotonic clock. */
double cli_now(void);

/* Run fn(arg) in a child process (its output discarded) and wait: 0 if it
 * returned, else the signal that ended it. When no child can be made, 0:
 * the caller then runs the step in-process (isolate.c). */
int cli_isolated_signal(void (*fn)(void *arg), void *arg);
/* "SIGSEGV" etc. */
const char *cli_signal_name(int sig);

#endif

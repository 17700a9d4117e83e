/* The wide table of bench/gpu (ops.txt, docs/gpu.md) without a GPU: both
 * sides read it the same way, every row's call is right (run once on the
 * binary backend at small shapes), and a bad row stops both with its file
 * and line before anything is timed. Skipped where bp_gpu_bench is not
 * built (a build without the cuda plugin) or python3 is missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpt.h"

#define BENCH BPT_BINARY_DIR "/bin/bp_gpu_bench"
#define TABLE BPT_SOURCE_DIR "/bench/gpu/ops.txt"
#define TORCH_SIDE BPT_SOURCE_DIR "/bench/gpu/torch_bench.py"

static void need_bench(void)
{
    if (access(BENCH, X_OK) != 0)
        cr_skip_test("%s is not built (it comes with the cuda plugin)", BENCH);
}

static void need_python(void)
{
    if (system("python3 -c '' > /dev/null 2>&1") != 0)
        cr_skip_test("no python3 here");
}

/* Run cmd; its stdout and stderr (malloc'ed) and its exit status. */
static char *run(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "popen %s", cmd);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    for (size_t got; (got = fread(out + n, 1, cap - n - 1, p)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            cap *= 2;
            out = realloc(out, cap);
            cr_assert_not_null(out);
        }
    }
    out[n] = 0;
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

static int lines(const char *s, const char *prefix)
{
    int n = 0;
    for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        n += strncmp(l, prefix, strlen(prefix)) == 0;
    return n;
}

Test(bench_table, every_row_runs_once_on_the_binary_backend_at_small_shapes)
{
    need_bench();
    int st, st2;
    char *list = run(BENCH " --table " TABLE " --list 2>&1", &st);
    cr_assert_eq(st, 0, "--list: %s", list);
    char *dry = run(BENCH " --table " TABLE " --dry-run 2>&1", &st2);
    cr_assert_eq(st2, 0, "--dry-run failed:\n%s", dry);
    const int rows = lines(list, "");
    cr_assert_gt(rows, 50, "the table has %d rows", rows);
    cr_assert_eq(lines(dry, "ok "), rows, "%d rows, but:\n%s", rows, dry);
    cr_assert_eq(lines(dry, "FAILED"), 0, "%s", dry);
    free(list), free(dry);
}

Test(bench_table, the_pytorch_side_reads_the_same_rows)
{
    need_bench();
    need_python();
    int st, st2;
    char *c = run(BENCH " --table " TABLE " --list 2>&1", &st);
    char *py = run("python3 " TORCH_SIDE " --table " TABLE " --list 2>&1", &st2);
    cr_assert_eq(st, 0, "%s", c);
    cr_assert_eq(st2, 0, "torch_bench.py --list (it needs no torch):\n%s", py);
    cr_assert_str_eq(c, py, "bp_gpu_bench and torch_bench.py disagree on the rows");
    free(c), free(py);
}

/* A table with one bad line (3); both sides must refuse it with exit status
 * 2, naming the file, the line and what is wrong. */
static void refused(const char *bad_line, const char *why)
{
    char path[] = "/tmp/bpt_table_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fprintf(f, "# a table\nadd_ok elementwise add f32 8,8 bw=1\n%s\n", bad_line);
    fclose(f);
    char cmd[512], where[300];
    snprintf(where, sizeof where, "%s:3: ", path);
    snprintf(cmd, sizeof cmd, BENCH " --table %s --list 2>&1", path);
    int st;
    char *out = run(cmd, &st);
    cr_assert_eq(st, 2, "bp_gpu_bench took '%s': %s", bad_line, out);
    cr_assert(strstr(out, where) && strstr(out, why), "bp_gpu_bench: '%s' does not say %s%s",
              out, where, why);
    free(out);
    if (system("python3 -c '' > /dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd, "python3 " TORCH_SIDE " --table %s --list 2>&1", path);
        out = run(cmd, &st);
        cr_assert_eq(st, 2, "torch_bench.py took '%s': %s", bad_line, out);
        cr_assert(strstr(out, where) && strstr(out, why), "torch_bench.py: '%s' does not say %s%s",
                  out, where, why);
        free(out);
    }
    remove(path);
}

Test(bench_table, a_bad_row_is_refused_with_its_file_and_line)
{
    need_bench();
    refused("bad elementwise frobnicate f32 8", "unknown op 'frobnicate'");
    refused("c conv conv f32 1x1x4x4,1x1x3x3", "conv needs k=");
    refused("a elementwise add f32 8", "add takes 2 to 2 inputs, not 1");
    refused("m reduce max f32 8x0 axis=1", "is not a shape");
    refused("add_ok elementwise add f32 8,8", "key 'add_ok' already used on line 2");
}

Test(bench_table, the_timed_run_stops_before_timing_anything_on_a_bad_table)
{
    need_bench();
    char path[] = "/tmp/bpt_table_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fputs("x elementwise add f99 8,8\n", f);
    fclose(f);
    char cmd[512];
    snprintf(cmd, sizeof cmd, BENCH " --table %s --no-classic 2>&1", path);
    int st;
    char *out = run(cmd, &st);
    cr_assert_eq(st, 2, "%s", out);
    cr_assert(strstr(out, "'f99' is not a float dtype"), "%s", out);
    free(out);
    remove(path);
}

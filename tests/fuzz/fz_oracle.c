/* Oracles shared by the harnesses (fz_oracle.h). */
#define _GNU_SOURCE
#include "fz_oracle.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#define FZ_MARK_INDEX ((size_t)0x5eed5eed5eedULL)

static char fz_mark_text[256];
static int fz_stdout_fd = -1;

void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz oracle: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    __builtin_trap();
}

static char fz_dir[512];

static int fz_remove_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    return remove(path);
}

/* At a normal exit: the temporary directory goes (after a crash it stays,
 * with the files the crash needs). */
static void fz_cleanup(void)
{
    if (fz_dir[0])
        nftw(fz_dir, fz_remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

const char *fz_setup(void)
{
    char *dir = fz_dir;
    const char *vars[] = {"BP_CONFIG", "BP_PLUGIN_PATH", "BP_DEFAULT_BACKEND", "BP_LOG_LEVEL"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    /* fuzz_config rewrites its ini file for every input: in memory (tmpfs)
     * that costs nothing, on ext4 each truncate-and-rewrite is written out */
    struct stat sb;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) && access("/dev/shm", W_OK) == 0
                  ? "/dev/shm"
                  : "/tmp";
    snprintf(dir, sizeof fz_dir, "%s/bp-fuzz-XXXXXX", tmp);
    if (!mkdtemp(dir))
        fz_fail("cannot make a temporary directory under %s", tmp);
    atexit(fz_cleanup);
    /* stdout goes to an unlinked file: anything written there is a finding */
    char path[600];
    snprintf(path, sizeof path, "%s/stdout", dir);
    fflush(stdout);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 1) < 0)
        fz_fail("cannot redirect stdout");
    close(fd);
    unlink(path);
    fz_stdout_fd = 1;
    /* the mark's text, as the library words it */
    bp_context_setting(NULL, FZ_MARK_INDEX, NULL);
    snprintf(fz_mark_text, sizeof fz_mark_text, "%s", bp_last_error());
    return dir;
}

void fz_stdout_check(void)
{
    struct stat sb;
    fflush(stdout);
    if (fz_stdout_fd >= 0 && fstat(fz_stdout_fd, &sb) == 0 && sb.st_size > 0) {
        char buf[256] = "";
        ssize_t n = pread(fz_stdout_fd, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        fz_fail("the library wrote %lld byte(s) to stdout, starting: %s", (long long)sb.st_size,
                buf);
    }
}

void fz_trace(const char *fmt, ...)
{
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("FZ_TRACE");
        on = v && *v && *v != '0';
    }
    if (!on)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("trace: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void fz_mark(void) { bp_context_setting(NULL, FZ_MARK_INDEX, NULL); }

void fz_known(const char *what, bp_status st)
{
    if (strcmp(bp_status_string(st), "BP_UNKNOWN_STATUS") == 0)
        fz_fail("%s is %d, which is not a bp_status code", what, (int)st);
}

void fz_status(const char *call, bp_status st)
{
    fz_known(call, st);
    if (st == BP_OK)
        return;
    const char *msg = bp_last_error();
    if (!msg || !*msg)
        fz_fail("%s failed with %s but bp_last_error() is empty", call, bp_status_string(st));
    if (strcmp(msg, fz_mark_text) == 0)
        fz_fail("%s failed with %s but set no message (bp_last_error() still holds the "
                "previous one)", call, bp_status_string(st));
}

void fz_result(const char *call, bp_status st, const bp_tensor *out)
{
    fz_trace("  %s -> %s%s%s", call, bp_status_string(st), st ? ": " : "", st ? bp_last_error() : "");
    if (st == BP_OK && out) {
        char shape[160] = "";
        int n = 0;
        for (int32_t k = 0; k < bp_tensor_rank(out) && k < BP_MAX_RANK && n < 140; k++)
            n += snprintf(shape + n, sizeof shape - (size_t)n, "%s%lld", k ? ", " : "",
                          (long long)bp_tensor_shape(out)[k]);
        fz_trace("  = %s (%s) on %s", bp_dtype_name(bp_tensor_dtype(out)), shape,
                 bp_backend_name(bp_tensor_backend(out)));
    }
    fz_status(call, st);
    if (st != BP_OK && out)
        fz_fail("%s failed with %s but left *out = %p", call, bp_status_string(st),
                (const void *)out);
    if (st == BP_OK && !out)
        fz_fail("%s returned BP_OK but *out is NULL", call);
    if (st == BP_OK)
        fz_tensor_sane(call, out);
}

bool fz_numel(int rank, const int64_t *shape, size_t elem, int64_t *numel)
{
    int64_t n = 1;
    bool zero = false;
    for (int k = 0; k < rank; k++) {
        if (shape[k] < 0)
            return false;
        if (shape[k] == 0) {
            zero = true;
            continue;
        }
        if (__builtin_mul_overflow(n, shape[k], &n))
            return false;
    }
    size_t bytes;
    if ((uint64_t)n > SIZE_MAX || __builtin_mul_overflow((size_t)n, elem ? elem : 1, &bytes) ||
        bytes > (size_t)INT64_MAX)
        return false;
    *numel = zero ? 0 : n;
    return true;
}

void fz_tensor_sane(const char *call, const bp_tensor *t)
{
    bp_dtype dt = bp_tensor_dtype(t);
    int32_t rank = bp_tensor_rank(t);
    const int64_t *shape = bp_tensor_shape(t);
    if (!bp_dtype_valid((int)dt))
        fz_fail("%s made a tensor of dtype %d", call, (int)dt);
    if (rank < 0 || rank > BP_MAX_RANK || (rank > 0 && !shape))
        fz_fail("%s made a tensor of rank %d (shape %p)", call, (int)rank, (const void *)shape);
    int64_t want = 1;
    bool zero = false;
    for (int32_t k = 0; k < rank; k++) {
        if (shape[k] < 0)
            fz_fail("%s made a tensor with extent %lld on axis %d", call, (long long)shape[k], k);
        if (shape[k] == 0)
            zero = true;
        else if (__builtin_mul_overflow(want, shape[k], &want))
            want = -1;
    }
    if (zero)
        want = 0;
    if (bp_tensor_numel(t) != want)
        fz_fail("%s made a tensor of %lld elements whose shape holds %lld", call,
                (long long)bp_tensor_numel(t), (long long)want);
    if (bp_tensor_nbytes(t) != (size_t)want * bp_dtype_size(dt))
        fz_fail("%s made a tensor of %lld %s elements in %zu bytes", call, (long long)want,
                bp_dtype_name(dt), bp_tensor_nbytes(t));
    if (!bp_tensor_backend(t))
        fz_fail("%s made a tensor without a backend", call);
    if (!bp_tensor_is_valid(t))
        fz_fail("%s made a tensor that is already given away", call);
}

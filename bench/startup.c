/* What a program pays to start: bp_context_create + bp_backend_default, the
 * wall time of those two calls and the process's peak resident memory.
 *
 *   bp_bench_startup [N]   N times in one process (default 1); prints
 *                          "<backend> <ms per create+default> <peak RSS KiB>"
 *
 * Timed in-process with a monotonic clock; the RSS is the whole process's
 * peak (getrusage), which is what a user's program would see. Run it under
 * /usr/bin/time -v for the outside view. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <backplane/backplane.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    if (n < 1)
        n = 1;
    char name[96] = "";
    double total = 0;
    for (int i = 0; i < n; i++) {
        double t0 = now();
        bp_context *ctx = NULL;
        bp_backend *be = NULL;
        if (bp_context_create(NULL, &ctx) != BP_OK || bp_backend_default(ctx, &be) != BP_OK) {
            fprintf(stderr, "bp_bench_startup: %s\n", bp_last_error());
            bp_context_destroy(ctx);
            return 1;
        }
        total += now() - t0;
        snprintf(name, sizeof name, "%s", bp_backend_name(be));
        bp_context_destroy(ctx);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%s %.3f %ld\n", name, total / n * 1e3, ru.ru_maxrss);
    return 0;
}

/* bp_all_reduce against MPI_Allreduce called directly on the same buffers,
 * from 1 KiB to 256 MiB of f32, under mpirun:
 *
 *   mpirun -np 4 bp_bench_comm [--backend NAME] [--max BYTES] [--json]
 *
 * As nccl-tests measures: for each size, a round runs `iters` calls back to
 * back from a barrier and takes the slowest rank's time divided by iters;
 * rounds of bp_all_reduce and of MPI_Allreduce alternate (ROUNDS of each,
 * so that both see the same machine) and the median round of each is
 * reported. MPI reads the tensor's own memory and
 * writes into a result tensor's (their addresses from DLPack);
 * bp_all_reduce makes a new tensor each call, as every op does, and that
 * allocation is part of its time. Bus bandwidth as nccl-tests defines it:
 * bytes * 2 (n - 1) / n / time. ratio = MPI's time / backplane's (>= 1:
 * backplane is as fast or faster). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <backplane/backplane.h>
#include <dlpack/dlpack.h>

enum { ROUNDS = 5 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The slowest rank's time. */
static double slowest(double t)
{
    double worst = 0;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static void *address_of(bp_tensor *t, DLManagedTensor **lent)
{
    if (bp_tensor_to_dlpack(t, lent) != BP_OK)
        return NULL;
    return (*lent)->dl_tensor.data;
}

int main(int argc, char **argv)
{
    const char *backend = NULL;
    long long max_bytes = 256LL << 20;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
            backend = argv[++i];
        else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
            max_bytes = atoll(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else {
            fprintf(stderr, "usage: mpirun -np N bp_bench_comm [--backend NAME] [--max BYTES] "
                            "[--json]\n");
            return 2;
        }
    }
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    bp_context *ctx = NULL;
    bp_backend *be = NULL;
    bp_comm *comm = NULL;
    MPI_Comm world = MPI_COMM_WORLD;
    bp_comm_options o = BP_COMM_OPTIONS_INIT;
    o.mpi_comm = &world;
    if (bp_context_create(NULL, &ctx) != BP_OK ||
        (backend ? bp_backend_get(ctx, backend, &be) : bp_backend_default(ctx, &be)) != BP_OK ||
        bp_comm_create(be, &o, &comm) != BP_OK) {
        fprintf(stderr, "bp_bench_comm (rank %d): %s\n", rank, bp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0 && !json) {
        printf("all_reduce (sum, f32) on %d processes, backend %s: time per call, median of %d "
               "rounds\n", size, bp_backend_name(be), ROUNDS);
        printf("%10s %6s %12s %12s %12s %12s %7s\n", "bytes", "calls", "bp us", "MPI us",
               "bp busbw", "MPI busbw", "ratio");
    }
    for (long long bytes = 1024; bytes <= max_bytes; bytes *= 4) {
        int64_t n = bytes / 4;
        float *h = malloc((size_t)bytes);
        for (int64_t i = 0; i < n; i++)
            h[i] = (float)((i * 7 + rank) % 13) * 0.25f;
        bp_tensor *x = NULL, *y0 = NULL;
        DLManagedTensor *lx = NULL, *ly = NULL;
        if (bp_tensor_from_host(be, BP_F32, 1, &n, h, &x) != BP_OK ||
            bp_all_reduce(comm, x, BP_REDUCE_SUM, &y0) != BP_OK) {
            fprintf(stderr, "bp_bench_comm (rank %d): %s\n", rank, bp_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        free(h);
        void *src = address_of(x, &lx), *dst = address_of(y0, &ly);
        if (!src || !dst) {
            fprintf(stderr, "bp_bench_comm: backend %s's memory is not host memory (%s)\n",
                    bp_backend_name(be), bp_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        /* enough calls for a round of ~20 ms at 1 GB/s, at least 3 */
        int iters = (int)((20LL << 20) / bytes);
        iters = iters < 3 ? 3 : iters > 2000 ? 2000 : iters;
        double tb[ROUNDS], tm[ROUNDS];
        for (int r = -1; r < ROUNDS; r++) { /* one warm-up round */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now();
            for (int i = 0; i < iters; i++) {
                bp_tensor *y = NULL;
                if (bp_all_reduce(comm, x, BP_REDUCE_SUM, &y) != BP_OK) {
                    fprintf(stderr, "bp_bench_comm (rank %d): %s\n", rank, bp_last_error());
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                bp_tensor_release(y);
            }
            double t_bp = slowest(now() - t0) / iters;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = now();
            for (int i = 0; i < iters; i++)
                MPI_Allreduce(src, dst, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double t_mpi = slowest(now() - t0) / iters;
            if (r >= 0) {
                tb[r] = t_bp;
                tm[r] = t_mpi;
            }
        }
        double b = median(tb, ROUNDS), m = median(tm, ROUNDS);
        int reps = iters;
        double factor = size > 1 ? 2.0 * (size - 1) / size : 1.0;
        if (rank == 0 && json)
            printf("{\"bytes\": %lld, \"ranks\": %d, \"backend\": \"%s\", \"calls\": %d, "
                   "\"bp_s\": %.9g, \"mpi_s\": %.9g, \"bp_busbw_gbs\": %.6g, "
                   "\"mpi_busbw_gbs\": %.6g, \"ratio\": %.4g}\n",
                   bytes, size, bp_backend_name(be), reps, b, m, bytes * factor / b / 1e9,
                   bytes * factor / m / 1e9, m / b);
        else if (rank == 0)
            printf("%10lld %6d %12.1f %12.1f %10.2f GB/s %7.2f GB/s %7.2f\n", bytes, reps, b * 1e6,
                   m * 1e6, bytes * factor / b / 1e9, bytes * factor / m / 1e9, m / b);
        fflush(stdout);
        lx->deleter(lx);
        ly->deleter(ly);
        bp_tensor_release(x);
        bp_tensor_release(y0);
    }
    bp_comm_destroy(comm);
    bp_context_destroy(ctx);
    MPI_Finalize();
    return 0;
}

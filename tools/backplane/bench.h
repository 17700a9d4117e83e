/* backplane bench: op throughput per backend (see bench.c). */
#ifndef BACKPLANE_BENCH_H
#define BACKPLANE_BENCH_H

/* `backplane bench [--backend NAME ...] [--op NAME ...] [--size S ...] [--json]
 * [--config FILE] [--min-time SEC] [--min-reps N]`; argv[0] is "bench".
 * Returns a CLI_EXIT_* code. */
int bp_cli_bench(int argc, char **argv);

#endif

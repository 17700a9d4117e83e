/* The wide table against PyTorch (bench/gpu/ops.txt, docs/gpu.md):
 * parsing its rows, making each row's inputs and calling its op on a
 * backend. gpu_bench.c times them on the cuda backend; --dry-run runs each
 * row once on a CPU backend with every extent capped, to prove the rows
 * and their calls without a GPU. */
#ifndef BENCH_GPU_WIDE_H
#define BENCH_GPU_WIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <backplane/backplane.h>

#define WIDE_MAX_IN 6

typedef struct wide_row {
    int line;                      /* in the table file */
    char key[64], family[32], op[32];
    bp_dtype dt, to;               /* to: cast's target */
    int nin;
    int32_t rank[WIDE_MAX_IN];
    int64_t shape[WIDE_MAX_IN][BP_MAX_RANK];
    bool has_axis;
    int32_t axis;
    int32_t nperm, perm[BP_MAX_RANK];
    int64_t k[2], s[2], p[2];      /* windows (2-D) */
    bool bw, tf32;
} wide_row;

/* Read the table at path into *rows (malloc'ed, *n of them). On a bad line
 * returns false with "path:line: what is wrong" in err. */
bool wide_parse(const char *path, wide_row **rows, int *n, char *err, size_t errsz);

/* The row in the normalised form both sides print for --list:
 * "KEY FAMILY OP DTYPE SHAPES PARAMS". */
void wide_describe(const wide_row *r, char *buf, size_t size);

/* A row's inputs on backend b (every extent capped at cap when cap > 0).
 * Returns BP_OK or the failing call's status (bp_last_error says why). */
bp_status wide_inputs(const wide_row *r, bp_backend *b, int64_t cap, bp_tensor **in);
void wide_release(bp_tensor **in, int n);

/* One call of the row's op on its inputs (the result released). */
bp_status wide_call(const wide_row *r, bp_tensor **in);

/* Bytes a memory-bound row reads and writes (for the bandwidth column). */
double wide_bytes(const wide_row *r);

#endif

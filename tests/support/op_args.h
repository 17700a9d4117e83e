/* An op of the op table called through its public function, its arguments
 * beyond its tensors given as data: shared by the tests that walk the table
 * (op_calls.c, with small valid arguments) and the API fuzzer (fa_table.c,
 * with fuzzed ones). No test framework here, so the fuzzer links it too. */
#ifndef BPT_OP_ARGS_H
#define BPT_OP_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include <backplane/backplane.h>

typedef struct bpt_op_args {
    bp_backend *backend;           /* creation ops */
    bp_dtype dtype;                /* creation ops; cast's target */
    int32_t rank;                  /* creation, broadcast_to: the shape */
    const int64_t *shape;
    int32_t n_axes;                /* reductions (0: all) */
    const int32_t *axes;
    bool keepdims;
    int32_t axis;                  /* gather, concat, softmax, scans, sorts, norms, one_hot */
    int64_t k;                     /* topk's k, trilu's k, one_hot's depth, lrn's size */
    bool flag0, flag1;             /* exclusive / reverse, descending / largest / sorted,
                                      upper, trans_a / trans_b */
    double f0, f1, f2;             /* the reals: alpha, beta, gamma, epsilon, value, ... */
    const int32_t *perm;           /* transpose */
    const int64_t *starts, *stops, *steps; /* slice */
    const int64_t *before, *after; /* pad */
    int32_t n_concat;              /* concat: in[0] that many times */
    const bp_window *window;       /* conv, conv_transpose, pools */
    int32_t reduction;             /* scatters, losses */
    const int64_t *ignore_index;   /* losses */
    const double *scales;          /* resize */
    const int64_t *sizes;
    const bp_resize_options *resize;
    uint64_t seed, offset;         /* random */
} bpt_op_args;

/* Small valid operands for op, of dtype dt where the row types them (x of
 * shape (2, 3), spatial ones (1, 2, 3); indices i64, where's cond bool,
 * one_hot's values f32), in the row's order into in[0..5); the optional
 * ones left out. BP_OK, or the failure of making one (nothing left then). */
bp_status bpt_op_operands(bp_backend *be, bp_op op, bp_dtype dt, bp_tensor **in);

/* Small valid arguments for op on tensors made as tests/support/op_calls.c
 * makes them (x of shape (2, 3), spatial ones (1, 2, 3)). */
void bpt_op_args_default(bp_op op, bp_backend *be, bp_dtype dt, bpt_op_args *a);

/* Call op's function with the row's tensors in[] (in the row's order) and
 * a: its status in *st; o1 and o2 get its outputs (o2: the second, for the
 * ops that have one). false, with nothing called, for a code it has no call
 * for (one this file has not learnt yet, or not an op). */
bool bpt_op_invoke(bp_op op, bp_tensor *const *in, const bpt_op_args *a, bp_tensor **o1,
                   bp_tensor **o2, bp_status *st);

#endif

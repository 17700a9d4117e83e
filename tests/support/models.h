/* Small models written once with public ops, called eagerly or on symbolic
 * tensors (the graph suites compare the two). */
#ifndef BPT_MODELS_H
#define BPT_MODELS_H

#include <backplane/backplane.h>

/* A scalar constant of dtype dt on be (concrete: captured when mixed with
 * symbolic tensors). */
bp_tensor *bpt_constant(bp_backend *be, bp_dtype dt, double v);
/* 0.5*x*(1+tanh(0.7978845608*(x+0.044715*x*x*x))), primitive ops only
 * (nine of them: a chain a graph fuses). */
bp_tensor *bpt_gelu_tanh(bp_backend *be, const bp_tensor *x);
/* An f32 tensor of values drawn uniformly from [-3, 3) by seed. */
bp_tensor *bpt_random_f32(bp_backend *be, int32_t rank, const int64_t *shape, uint64_t seed);

#endif

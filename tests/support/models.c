/* models.h: small models written once with public ops. */
#include <stdlib.h>

#include "bpt.h"
#include "expect.h"
#include "models.h"

bp_tensor *bpt_constant(bp_backend *be, bp_dtype dt, double v)
{
    bp_tensor *c = NULL;
    BPT_OK(bp_full(be, dt, 0, NULL, v, &c));
    return c;
}

bp_tensor *bpt_gelu_tanh(bp_backend *be, const bp_tensor *x)
{
    bp_dtype dt = bp_tensor_dtype(x);
    bp_tensor *half = bpt_constant(be, dt, 0.5), *one = bpt_constant(be, dt, 1.0),
              *k = bpt_constant(be, dt, 0.7978845608), *c = bpt_constant(be, dt, 0.044715);
    bp_tensor *x2, *x3, *cx3, *inner, *scaled, *th, *onep, *hx, *y;
    BPT_OK(bp_mul(x, x, &x2));
    BPT_OK(bp_mul(x2, x, &x3));
    BPT_OK(bp_mul(c, x3, &cx3)); /* the concrete operand first: captured either way */
    BPT_OK(bp_add(x, cx3, &inner));
    BPT_OK(bp_mul(k, inner, &scaled));
    BPT_OK(bp_tanh(scaled, &th));
    BPT_OK(bp_add(one, th, &onep));
    BPT_OK(bp_mul(half, x, &hx));
    BPT_OK(bp_mul(hx, onep, &y));
    bp_tensor *tmp[] = {half, one, k, c, x2, x3, cx3, inner, scaled, th, onep, hx};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        bp_tensor_release(tmp[i]);
    return y;
}

bp_tensor *bpt_random_f32(bp_backend *be, int32_t rank, const int64_t *shape, uint64_t seed)
{
    int64_t n = 1;
    for (int32_t k = 0; k < rank; k++)
        n *= shape[k];
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    cr_assert(v);
    bpt_fill_random(v, n, seed, -3.0, 3.0);
    bp_tensor *t = bpt_tensor(be, BP_F32, rank, shape, v);
    free(v);
    return t;
}

/* The reference kernels' op entry: every op of the op table (opcodes.h)
 * comes here with its views and bp_op_params, and goes to its kind's
 * kernel, which switches on the op code. Small adapters below hand the
 * kernels with typed signatures (elementwise.c, reduce.c, ...) their views
 * and parameters where opcodes.h's bp_op_kind puts them. */
#include <string.h>

#include "kernels.h"
#include "kernels_nn.h"

static bp_status unary_kind(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                            const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return bpk_unary(dev, op, p, in[0], out[0]);
}

static bp_status binary_kind(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                             const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return bpk_binary(dev, op, p, in[0], in[1], out[0]);
}

static bp_status where_kind(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                            const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return bpk_where(dev, in[0], in[1], in[2], out[0]);
}

static bp_status reduce_kind(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                             const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return bpk_reduce(dev, op, p, in[0], out[0]);
}

static bp_status matmul_kind(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                             const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return bpk_matmul(dev, in[0], in[1], out[0]);
}

static bp_status movement_kind(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                               const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return bpk_copy(dev, op, in[0], out[0]);
}

static bp_status gather_kind(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                             const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return bpk_gather(dev, in[0], in[1], (int32_t)p->i[0], out[0]);
}

static bp_status softmax_kind(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                              const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return bpk_softmax(dev, op, in[0], out[0]);
}

static bp_status fill_kind(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                           const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return bpk_fill(dev, out[0], &p->i[0]); /* the element's bytes first */
}

static bp_status arange_kind(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                             const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return bpk_arange(dev, p->f[0], p->f[1], out[0]);
}

static bp_status random_kind(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                             const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    return bpk_random(dev, op, (uint64_t)p->i[0], (uint64_t)p->i[1], p->f[0], p->f[1], out[0]);
}

/* One kernel per kind. A kind appended to opcodes.h stops the build here
 * until it has one. */
static const bpk_op_fn BY_KIND[BP_KIND_COUNT] = {
    [BP_KIND_UNARY] = unary_kind,       [BP_KIND_BINARY] = binary_kind,
    [BP_KIND_WHERE] = where_kind,       [BP_KIND_REDUCE] = reduce_kind,
    [BP_KIND_MATMUL] = matmul_kind,     [BP_KIND_MOVEMENT] = movement_kind,
    [BP_KIND_GATHER] = gather_kind,     [BP_KIND_SOFTMAX] = softmax_kind,
    [BP_KIND_FILL] = fill_kind,         [BP_KIND_ARANGE] = arange_kind,
    [BP_KIND_RANDOM] = random_kind,     [BP_KIND_CLIP] = bpk_op_clip,
    [BP_KIND_HARDMAX] = bpk_op_hardmax, [BP_KIND_SCAN] = bpk_op_scan,
    [BP_KIND_SORT] = bpk_op_sort,       [BP_KIND_TRILU] = bpk_op_trilu,
    [BP_KIND_ONE_HOT] = bpk_op_one_hot, [BP_KIND_INDEX] = bpk_op_gather_more,
    [BP_KIND_SCATTER] = bpk_op_scatter, [BP_KIND_GEMM] = bpk_op_gemm,
    [BP_KIND_CONV] = bpk_nn_op,         [BP_KIND_POOL] = bpk_nn_op,
    [BP_KIND_LRN] = bpk_nn_op,          [BP_KIND_NORM] = bpk_nn_op,
    [BP_KIND_LOSS] = bpk_nn_op,         [BP_KIND_RESIZE] = bpk_nn_op,
};
_Static_assert(BP_KIND_COUNT == 26, "opcodes.h has a new kind: give it its kernel in BY_KIND");

bool bpk_supports(void *dev, bp_op op, bp_dtype dtype)
{
    (void)dev, (void)dtype;
    /* a kernel for every op of the table, for every dtype its row accepts
     * (which is all the core lets through) */
    return (unsigned)op < (unsigned)BP_OP_COUNT;
}

bp_status bpk_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                 const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    bp_op_params scratch; /* this build's layout, whichever core sent it */
    const bp_op_params *p = bp_op_params_get(params, &scratch);
    bp_op_kind kind = bp_op_kind_of(op);
    if ((unsigned)kind >= (unsigned)BP_KIND_COUNT || !BY_KIND[kind])
        return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP,
                        "op code %d (%s) has no kernel in this build of the reference kernels",
                        (int)op, bp_op_name(op));
    return BY_KIND[kind](dev, op, p, n_in, in, n_out, out);
}

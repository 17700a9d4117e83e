/* backplane core: matmul (MATMUL family), NumPy semantics.
 *
 * The plugin only ever sees a [..., M, K] x b [..., K, N] -> out [..., M, N]
 * with one rank >= 2 for all three and the batch dimensions already broadcast
 * (stride 0). Promotion of 1-D operands and dropping the promoted axis again
 * happen here. */
#include <stdio.h>

#include "internal.h"


bp_status bp_matmul(const bp_tensor *a, const bp_tensor *b, bp_tensor **out)
{
    static const char fn[] = "bp_matmul";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    const bp_tensor *in[2] = {a, b};
    BP__TRY(bp__op_same_dtype(fn, BP_OP_MATMUL, in, 0, 1));
    BP__TRY(bp__op_begin(fn, BP_OP_MATMUL, in, &be));

    char sa[BP__SHAPE_STR_CAP], sb[BP__SHAPE_STR_CAP];
    if (a->rank == 0 || b->rank == 0)
        return bp__error(BP_ERR_SHAPE,
                         "%s: %s is a scalar (shape ()); matmul needs rank >= 1 operands, use "
                         "bp_mul to scale by a scalar",
                         fn, a->rank == 0 ? "a" : "b");

    /* Promote: a [K] -> [1, K], b [K] -> [K, 1]. */
    int64_t pa[BP_MAX_RANK], pb[BP_MAX_RANK];
    int32_t ra = a->rank, rb = b->rank;
    bool a_vec = ra == 1, b_vec = rb == 1;
    for (int32_t k = 0; k < ra; k++)
        pa[k + a_vec] = a->shape[k];
    for (int32_t k = 0; k < rb; k++)
        pb[k] = b->shape[k];
    if (a_vec) {
        pa[0] = 1;
        ra = 2;
    }
    if (b_vec) {
        pb[1] = 1;
        rb = 2;
    }
    int64_t M = pa[ra - 2], K = pa[ra - 1], N = pb[rb - 1];
    if (pb[rb - 2] != K)
        return bp__error(BP_ERR_SHAPE,
                         "%s: inner dimensions differ: a %s has %lld columns but b %s has %lld "
                         "rows; transpose or reshape one operand",
                         fn, BP__SHAPE_STR(sa, a->rank, a->shape), (long long)K,
                         BP__SHAPE_STR(sb, b->rank, b->shape), (long long)pb[rb - 2]);

    int32_t batch_rank = 0;
    int64_t shape[BP_MAX_RANK];
    if (bp__broadcast_shapes(fn, ra - 2, pa, rb - 2, pb, &batch_rank, shape) != BP_OK)
        return bp__error(BP_ERR_SHAPE,
                         "%s: batch dimensions of a %s and b %s do not broadcast (NumPy rules: "
                         "each pair equal or one of them 1)",
                         fn, BP__SHAPE_STR(sa, a->rank, a->shape), BP__SHAPE_STR(sb, b->rank, b->shape));
    int32_t rank = batch_rank + 2;
    shape[batch_rank] = M;
    shape[batch_rank + 1] = N;

    BP__TRY(bp__op_require(be, BP_OP_MATMUL, a->dtype));

    bp_tensor *full = NULL;
    BP__TRY(bp__tensor_new(fn, be, a->dtype, rank, shape, &full));
    int64_t a_target[BP_MAX_RANK], b_target[BP_MAX_RANK];
    for (int32_t k = 0; k < batch_rank; k++)
        a_target[k] = b_target[k] = shape[k];
    a_target[batch_rank] = M;
    a_target[batch_rank + 1] = K;
    b_target[batch_rank] = K;
    b_target[batch_rank + 1] = N;
    bp_view va, vb, vo;
    bp__view_dense(a, &va);
    bp__view_broadcast_as(&va, ra, pa, rank, a_target);
    bp__view_dense(b, &vb);
    bp__view_broadcast_as(&vb, rb, pb, rank, b_target);
    bp__view_dense(full, &vo);
    bp_op_params p = bp__params();
    bp_status st = bp__op_run(be, BP_OP_MATMUL, &p, (const bp_view *[]){&va, &vb},
                              (const bp_view *[]){&vo});
    if (st != BP_OK) {
        bp_tensor_release(full);
        return st;
    }
    if (!a_vec && !b_vec) {
        *out = full;
        return BP_OK;
    }

    /* Drop the promoted axes: M if a was 1-D, N if b was. */
    int64_t final_shape[BP_MAX_RANK];
    int32_t final_rank = batch_rank;
    for (int32_t k = 0; k < batch_rank; k++)
        final_shape[k] = shape[k];
    if (!a_vec)
        final_shape[final_rank++] = M;
    if (!b_vec)
        final_shape[final_rank++] = N;
    bp_tensor *res = NULL;
    st = bp__tensor_alias(full, final_rank, final_shape, &res);
    bp_tensor_release(full);
    if (st != BP_OK)
        return st;
    *out = res;
    return BP_OK;
}

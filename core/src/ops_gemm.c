/* backplane core: gemm (ONNX Gemm), alpha op(a) op(b) + beta c. The
 * transposes are views (swapped strides) handed to the plugin, which gives
 * them to BLAS as transpose flags: x @ w.T never copies w. */
#include <math.h>
#include <stdio.h>

#include "internal.h"

static bp_status gemm_operands(const char *fn, const bp_tensor *a, const bp_tensor *b,
                               const bp_tensor *c)
{
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_GEMM, (const bp_tensor *const[]){a, b, c}, &be));
    const bp_tensor *other = b->dtype != a->dtype ? b : c && c->dtype != a->dtype ? c : NULL;
    if (other)
        return bp__error(BP_ERR_DTYPE, "%s: a is %s but %s is %s; operands must share a dtype: "
                         "convert with bp_cast first", fn, bp_dtype_name(a->dtype),
                         other == b ? "b" : "c", bp_dtype_name(other->dtype));
    if (a->rank != 2 || b->rank != 2) {
        char sa[BP__SHAPE_STR_CAP], sb[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: a %s and b %s must both be 2-D; use bp_matmul for "
                         "batches", fn, BP__SHAPE_STR(sa, a->rank, a->shape),
                         BP__SHAPE_STR(sb, b->rank, b->shape));
    }
    return BP_OK;
}

bp_status bp_gemm(const bp_tensor *a, const bp_tensor *b, const bp_tensor *c, double alpha,
                  double beta, bool trans_a, bool trans_b, bp_tensor **out)
{
    static const char fn[] = "bp_gemm";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(gemm_operands(fn, a, b, c));
    if (isnan(alpha) || isnan(beta))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: alpha or beta is NaN", fn);
    int64_t m = a->shape[trans_a], k = a->shape[!trans_a];
    int64_t kb = b->shape[trans_b], n = b->shape[!trans_b];
    char sa[BP__SHAPE_STR_CAP], sb[BP__SHAPE_STR_CAP];
    if (k != kb)
        return bp__error(BP_ERR_SHAPE, "%s: op(a) from a %s%s has %lld columns but op(b) from "
                         "b %s%s has %lld rows", fn, BP__SHAPE_STR(sa, 2, a->shape),
                         trans_a ? " transposed" : "", (long long)k,
                         BP__SHAPE_STR(sb, 2, b->shape), trans_b ? " transposed" : "",
                         (long long)kb);
    const int64_t shape[2] = {m, n};
    if (c) {
        int32_t rank = 0;
        int64_t bs[BP_MAX_RANK];
        bp_status st = bp__broadcast_shapes(fn, c->rank, c->shape, 2, shape, &rank, bs);
        if (st != BP_OK || rank != 2 || bs[0] != m || bs[1] != n) {
            return bp__error(BP_ERR_SHAPE, "%s: c %s must broadcast to the result's shape %s",
                             fn, BP__SHAPE_STR(sa, c->rank, c->shape),
                             BP__SHAPE_STR(sb, 2, shape));
        }
    }
    bp_backend *be = bp__backend_of_all(3, (const bp_tensor *const[]){a, b, c});
    BP__TRY(bp__op_require(be, BP_OP_GEMM, a->dtype));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, a->dtype, 2, shape, &res));
    static const int32_t swap[2] = {1, 0};
    bp_view va, vb, vc, vo;
    bp__view_dense(a, &va);
    if (trans_a)
        bp__view_permute(&va, swap);
    bp__view_dense(b, &vb);
    if (trans_b)
        bp__view_permute(&vb, swap);
    if (c)
        bp__view_broadcast(c, 2, shape, &vc);
    bp__view_dense(res, &vo);
    bp_op_params p = bp__params();
    p.f[0] = alpha;
    p.f[1] = beta;
    p.i[0] = c != NULL;
    const bp_view *in[3] = {&va, &vb, c ? &vc : NULL};
    return bp__deliver(res, bp__op_run(be, BP_OP_GEMM, &p, in, (const bp_view *[]){&vo}),
                       out);
}

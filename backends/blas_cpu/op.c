/* blas_cpu's op entry: every op of the op table, routed by its kind. The
 * elementwise kinds, reductions, matmul, copies, gather, softmax, fill and
 * random go to this plugin's own kernels for them (ops.c, matmul.c: vmath
 * kernels, OpenBLAS, the pool); gemm, cumsum/cumprod, topk and scatter-add
 * to theirs (see op.h); the nn ops to nn.c; the rest to the reference
 * kernels, cut into slabs across threads where each output element
 * (elementwise ops) or row (hardmax, sort) depends only on its own inputs. Cutting changes which thread computes a
 * value, never how, so those results are the binary backend's bits. */
#include <stdlib.h>
#include <string.h>

#include "blas_cpu_nn.h"
#include "op.h"

/* A slab's views back into the op entry's form: inputs then outputs, the
 * absent inputs (clip's bounds) NULL again. */
typedef struct slab_args {
    const bpc_op_call *call;
    unsigned absent; /* bit k: input k was NULL (a stand-in view was cut) */
} slab_args;

static bp_status ref_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo,
                          int64_t hi)
{
    (void)lo, (void)hi;
    const slab_args *a = args;
    const bpc_op_call *c = a->call;
    const bp_view *in[BPC_MAX_VIEWS], *out[BPC_MAX_VIEWS];
    for (int32_t k = 0; k < c->n_out; k++)
        out[k] = &v[k];
    for (int32_t k = 0; k < c->n_in; k++)
        in[k] = (a->absent >> k) & 1u ? NULL : &v[c->n_out + k];
    return bpk_op(d, c->op, c->p, c->n_in, in, c->n_out, out);
}

/* The reference over slabs of out[0]'s first n_axes axes; every view shares
 * those axes (same index in each). */
static bp_status split_ref(bpc_dev *d, const bpc_op_call *c, int32_t n_axes, int64_t work)
{
    const bp_view *v[BPC_MAX_VIEWS];
    slab_args a = {.call = c};
    int n = 0;
    if (c->n_in + c->n_out > BPC_MAX_VIEWS)
        return bpk_fail(d, BP_ERR_BACKEND, "blas_cpu: %s with %d views, more than a slab holds",
                        bp_op_name(c->op), (int)(c->n_in + c->n_out));
    for (int32_t k = 0; k < c->n_out; k++)
        v[n++] = c->out[k];
    for (int32_t k = 0; k < c->n_in; k++) {
        if (!c->in[k])
            a.absent |= 1u << k;
        v[n++] = c->in[k] ? c->in[k] : c->in[0]; /* a stand-in of the same shape */
    }
    return bpc_split(d, n, v, n_axes, NULL, false, work, ref_slab, &a);
}

static bp_status reference(bpc_dev *d, const bpc_op_call *c)
{
    return bpk_op(d, c->op, c->p, c->n_in, c->in, c->n_out, c->out);
}

/* One path per kind: this plugin's kernel for the kind where it has one
 * (each switching on the op code where the ops differ), else the reference
 * kernels, split across threads where the kind allows it. */
static bp_status dispatch(bpc_dev *d, const bpc_op_call *c)
{
    const bp_view *const *in = c->in, *o = c->out[0];
    const bp_op_params *p = c->p;
    switch (bp_op_kind_of(c->op)) {
    case BP_KIND_UNARY: return bpc_unary(d, c->op, p, in[0], o);
    case BP_KIND_BINARY: return bpc_binary(d, c->op, p, in[0], in[1], o);
    case BP_KIND_WHERE: return bpc_where(d, in[0], in[1], in[2], o);
    case BP_KIND_REDUCE: return bpc_reduce(d, c->op, p, in[0], o);
    case BP_KIND_MATMUL: return bpc_matmul(d, in[0], in[1], o);
    case BP_KIND_MOVEMENT: return bpc_copy(d, c->op, in[0], o);
    case BP_KIND_GATHER: return bpc_gather(d, in[0], in[1], (int32_t)p->i[0], o);
    case BP_KIND_SOFTMAX: return bpc_softmax(d, c->op, in[0], o);
    case BP_KIND_FILL: return bpc_fill(d, o, &p->i[0]);
    case BP_KIND_RANDOM:
        return bpc_random(d, c->op, (uint64_t)p->i[0], (uint64_t)p->i[1], p->f[0], p->f[1], o);
    case BP_KIND_ARANGE: return reference(d, c); /* cheap and rank 1: the reference as is */
    case BP_KIND_CLIP: /* elementwise: every view has out's shape */
        return split_ref(d, c, o->rank, bpk_numel(o) * 2);
    case BP_KIND_GEMM: return bpc_gemm(d, c);
    case BP_KIND_SCAN: return bpc_scan(d, c);
    case BP_KIND_SORT:
        /* row-wise along the last axis: the leading axes may be cut */
        if (c->op == BP_OP_TOPK)
            return bpc_topk(d, c);
        return split_ref(d, c, in[0]->rank - 1, bpk_numel(in[0]) * 8);
    case BP_KIND_HARDMAX: return split_ref(d, c, in[0]->rank - 1, bpk_numel(in[0]) * 8);
    case BP_KIND_SCATTER:
        if (c->op == BP_OP_SCATTER_ELEMENTS && c->p->i[1] == BP_SCATTER_ADD)
            return bpc_scatter_add(d, c);
        return reference(d, c);
    case BP_KIND_TRILU: case BP_KIND_ONE_HOT: case BP_KIND_INDEX: return reference(d, c);
    case BP_KIND_CONV: case BP_KIND_POOL: case BP_KIND_LRN: case BP_KIND_NORM:
    case BP_KIND_LOSS: case BP_KIND_RESIZE: /* nn.h's ops (nn.c) */
        return bpc_nn_op(d, c->op, c->p, c->n_in, c->in, c->n_out, c->out);
    case BP_KIND_COUNT: break;
    }
    return bpk_fail(d, BP_ERR_UNSUPPORTED_OP, "blas_cpu: %s has no kernel here",
                    bp_op_name(c->op));
}
_Static_assert(BP_KIND_COUNT == 26, "opcodes.h has a new kind: route it in dispatch");

bp_status bpc_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                 const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    bp_op_params scratch; /* this build's layout, whichever core sent it */
    const bp_op_params *p = bp_op_params_get(params, &scratch);
    if ((unsigned)op >= (unsigned)BP_OP_COUNT || n_out < 1)
        return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP, "blas_cpu: op code %d (%s) has no kernel here",
                        (int)op, bp_op_name(op));
    bpc_op_call c = {.op = op, .p = p, .n_in = n_in, .n_out = n_out, .in = in, .out = out};
    return dispatch(dev, &c);
}

/* ---- prepared nodes (plugin.h's prepare, ABI 1.13) ------------------------ */

bp_status bpc_prepare(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out,
                      void **prepared)
{
    bp_op_params scratch;
    const bp_op_params *p = bp_op_params_get(params, &scratch);
    *prepared = NULL;
    /* a convolution whose weights are a constant: reordered for the direct
     * kernel, where that is the path (conv_direct.c), or a depthwise 3x3
     * one's kept for the f32 kernel (conv_depthwise.c) */
    if (op != BP_OP_CONV || n_in < 2 || n_out < 1 || !in[1]->buffer)
        return BP_OK;
    if (bpc_conv_direct_takes(dev, p, in[0], in[1], out[0]))
        return bpc_conv_direct_prepare(dev, p, in[0], in[1], out[0], false, false, prepared);
    if (bpc_conv_depthwise_prepares(dev, p, in[0], in[1], out[0]))
        return bpc_conv_depthwise_prepare(dev, in[1], prepared);
    return BP_OK;
}

/* A convolution whose weights are a constant, with a residual added after
 * it and/or a Relu: the residual and the Relu stored with the direct
 * kernel's tiles (conv_direct.c), or applied to each GEMM tile as it is
 * done (conv.c), where the eager call takes the GEMM. */
static bp_status prepare_conv_epilogue(bpc_dev *dev, const bp_op_params *p, int32_t n_in,
                                       const bp_view *const *in, const bp_view *y,
                                       bool residual, bool relu, void **prepared)
{
    *prepared = NULL;
    if (n_in < 2 || !in[1]->buffer)
        return BP_OK;
    const bp_view *x = in[0], *w = in[1], *bias = n_in > 2 ? in[2] : NULL;
    if (bpc_conv_direct_takes(dev, p, x, w, y))
        return bpc_conv_direct_prepare(dev, p, x, w, y, residual, relu, prepared);
    if (bpc_conv_depthwise_takes(p, x, w, bias, y) || bpc_conv_narrow_takes(p, x, w, y) ||
        !bpc_conv_gemm_takes(p, x, w, y))
        return BP_OK;
    bpc_conv_gemm_relu *q = malloc(sizeof *q);
    if (!q)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "conv: out of memory preparing it");
    *q = (bpc_conv_gemm_relu){.kind = BPC_PREPARED_GEMM, .residual = residual, .relu = relu};
    *prepared = q;
    return BP_OK;
}

bp_status bpc_prepare_epilogue(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                               const bp_view *const *in, int32_t n_out,
                               const bp_view *const *out, bp_op epilogue,
                               const bp_op_params *epilogue_params, void **prepared)
{
    (void)epilogue_params; /* relu has none */
    bp_op_params scratch;
    const bp_op_params *p = bp_op_params_get(params, &scratch);
    *prepared = NULL;
    if (op != BP_OP_CONV || epilogue != BP_OP_RELU || n_out < 1)
        return BP_OK;
    return prepare_conv_epilogue(dev, p, n_in, in, out[0], false, true, prepared);
}

bp_status bpc_prepare_epilogues(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                                const bp_view *const *in, int32_t n_out,
                                const bp_view *const *out, int32_t n_steps,
                                const bp_epilogue_step *steps, const bp_view *const *operands,
                                void **prepared)
{
    bp_op_params scratch;
    const bp_op_params *p = bp_op_params_get(params, &scratch);
    *prepared = NULL;
    /* a residual network's add after a convolution, then (or not) its Relu:
     * the residual a dense value of y's shape and dtype (addition is
     * commutative, bit for bit, so either order of the add's inputs) */
    if (op != BP_OP_CONV || n_out < 1 || n_steps < 1 || n_steps > 2 ||
        steps[0].op != BP_OP_ADD || (n_steps == 2 && steps[1].op != BP_OP_RELU) ||
        !bpk_view_dense(operands[0]) || operands[0]->dtype != out[0]->dtype)
        return BP_OK;
    return prepare_conv_epilogue(dev, p, n_in, in, out[0], true, n_steps == 2, prepared);
}

bp_status bpc_prepared_op(void *dev, void *prepared, bp_op op, const bp_op_params *params,
                          int32_t n_in, const bp_view *const *in, int32_t n_out,
                          const bp_view *const *out)
{
    bp_op_params scratch;
    const bp_op_params *p = bp_op_params_get(params, &scratch);
    (void)op, (void)n_out; /* a convolution: the only op prepare takes */
    /* x, w, bias?, then a residual add's operand (prepare_epilogues) */
    const bp_view *bias = n_in > 2 ? in[2] : NULL, *res = n_in > 3 ? in[3] : NULL;
    switch (*(const bpc_prepared_kind *)prepared) {
    case BPC_PREPARED_DEPTHWISE:
        return bpc_conv_depthwise_prepared(dev, prepared, p, in[0], bias, out[0]);
    case BPC_PREPARED_GEMM: {
        const bpc_conv_gemm_relu *q = prepared;
        return bpc_conv_gemm(dev, p, in[0], in[1], bias, q->residual ? res : NULL, out[0],
                             q->relu);
    }
    default:
        return bpc_conv_direct(dev, prepared, p, in[0], bias, res, out[0]);
    }
}

void bpc_prepared_free(void *dev, void *prepared)
{
    (void)dev;
    if (!prepared)
        return;
    switch (*(const bpc_prepared_kind *)prepared) {
    case BPC_PREPARED_DEPTHWISE:
        bpc_conv_depthwise_free(prepared);
        return;
    case BPC_PREPARED_GEMM:
        free(prepared);
        return;
    default:
        bpc_conv_direct_free(prepared);
    }
}

/* The op entry (op.cu) and the kinds' functions: one call record, checked
 * and scoped once in op.cu, handed to each. What
 * each op receives is its kind's and row's in opcodes.h; ops.h gives the
 * semantics. */
#ifndef BPCU_OP_H
#define BPCU_OP_H

#include "bpcu.h"
#include "elem.h"

typedef struct bpcu_opcall {
    bp_op op;
    bp_op_params p;                /* the core's, zero beyond what it sent */
    const bp_view *in[5];          /* NULL: an optional input not given (or none) */
    const bp_view *out[3];         /* NULL: an optional output not wanted (or none) */
} bpcu_opcall;

/* elementwise.cu: the UNARY and BINARY kinds, every op of each */
bp_status bpcu_op_unary(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_op_binary(bpcu_device *d, const bpcu_opcall *c);
/* clip.cu */
bp_status bpcu_op_clip(bpcu_device *d, const bpcu_opcall *c);
/* reduce.cu: the REDUCE kind, every reduction */
bp_status bpcu_op_reduce(bpcu_device *d, const bpcu_opcall *c);
/* hardmax.cu, scan.cu (CUMSUM, CUMPROD), sort.cu (SORT, TOPK) */
bp_status bpcu_op_hardmax(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_op_scan(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_op_sort(bpcu_device *d, const bpcu_opcall *c);
/* trilu.cu, one_hot.cu, gather.cu (GATHER_ELEMENTS, GATHER_ND),
 * scatter.cu (SCATTER_ELEMENTS, SCATTER_ND) */
bp_status bpcu_op_trilu(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_op_one_hot(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_op_gather(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_op_scatter(bpcu_device *d, const bpcu_opcall *c);
/* gemm.cu */
bp_status bpcu_op_gemm(bpcu_device *d, const bpcu_opcall *c);
/* nn.h's ops (nn_common.h): conv.cu, conv_transpose.cu, pool.cu
 * (MAX_POOL, AVERAGE_POOL), lrn.cu, norm.cu (BATCH_NORM, INSTANCE_NORM,
 * LAYER_NORM, RMS_NORM), loss.cu (SOFTMAX_CROSS_ENTROPY_LOSS, NLL_LOSS),
 * resize.cu */
bp_status bpcu_nn_conv(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_nn_conv_transpose(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_nn_pool(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_nn_lrn(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_nn_norm(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_nn_loss(bpcu_device *d, const bpcu_opcall *c);
bp_status bpcu_nn_resize(bpcu_device *d, const bpcu_opcall *c);

/* dnn.cu: conv (forward) and conv_transpose (backward data) through cuDNN.
 * True when cuDNN took the op (*st: its status, an error included once
 * work may have been queued); false when it cannot (no cuDNN, cudnn = off,
 * a geometry or dtype it does not take): the caller runs the im2col path. */
bool bpcu_dnn_conv(bpcu_device *d, const bpcu_opcall *c, bp_status *st);

/* The leading axes of a view whose last axis is the op's (rows), for the
 * ops along one axis: row r's first element is at sum c_k * strides[k]. */
typedef struct bpcu_rows {
    int32_t lead;                  /* leading axes */
    int64_t count;                 /* rows */
    int64_t shape[BP_MAX_RANK];
    int64_t strides[BP_MAX_RANK];
} bpcu_rows;

static inline bpcu_rows bpcu_rows_of(const bp_view *v)
{
    bpcu_rows r;
    memset(&r, 0, sizeof r);
    r.lead = v->rank > 0 ? v->rank - 1 : 0;
    r.count = 1;
    for (int32_t k = 0; k < r.lead; k++) {
        r.shape[k] = v->shape[k];
        r.strides[k] = v->strides[k];
        r.count *= v->shape[k];
    }
    return r;
}

#ifdef __CUDACC__
/* Offset (in elements) of row r's first element. */
static __device__ __forceinline__ int64_t bpcu_row_off(const bpcu_rows &g, int64_t r)
{
    int64_t off = 0;
    for (int32_t k = g.lead - 1; k >= 0; k--) {
        off += (r % g.shape[k]) * g.strides[k];
        r /= g.shape[k];
    }
    return off;
}

/* An index element (i32 or i64) at element offset off. */
static __device__ __forceinline__ int64_t bpcu_load_index(const char *idx, bool i64, int64_t off)
{
    return i64 ? ((const int64_t *)idx)[off] : (int64_t)((const int32_t *)idx)[off];
}
#endif

#endif

/* Gradients (grad.c and the rules, grad_<kind>.c): what the reverse pass and
 * the vector-Jacobian rules share. Nothing here is API.
 *
 * The reverse pass walks a graph's nodes backwards. A node is an op as the
 * op entry received it: its views are the core's canonical forms (a
 * reduction's reduced axes last, a broadcast operand's repeated axes with
 * stride 0, a transpose as strides), so a rule sees one layout per kind and
 * writes its gradient in the shape of the node's own views. The pass maps
 * views back onto the values they view (grad.c): repeated axes summed,
 * strided and offset views written into zeros, parts of one value (concat)
 * joined, so no rule handles broadcasting, transposes or slices. */
#ifndef BP_GRAD_INTERNAL_H
#define BP_GRAD_INTERNAL_H

#include "graph_internal.h"

#define BP__VJP_TEMPS 48

/* One node's vector-Jacobian product being built. A rule reads the node's
 * op, parameters and views, the gradients of its outputs (gy, NULL: zero)
 * and, through bp__vjp_in / bp__vjp_out, its forward values; it sets gx[k]
 * for each input k with want[k] (leaving NULL means zero), shaped as input
 * k's view, or as its compact shape (repeated axes of extent 1). Every
 * tensor a rule makes goes through the e_* builders below: they record on
 * the graph, keep the result until the node is done, and stop at the first
 * failure (c->st), so a rule is a straight line of expressions. */
typedef struct bp__vjp {
    struct bp__grad_state *gs;
    int32_t node;                          /* its index in the graph */
    const bp__gnode *n;
    bp_backend *rec;                       /* the graph's recording backend */
    const bp_tensor *gy[BP__GRAPH_MAX_IO];
    bool want[BP__GRAPH_MAX_IO];
    const bp_tensor *gx[BP__GRAPH_MAX_IO];
    bp_status st;
    bp_tensor *temps[BP__VJP_TEMPS];
    int32_t n_temps;
} bp__vjp;

typedef bp_status (*bp__vjp_rule)(bp__vjp *c);

/* The forward value of input k / output k of the node, in the compact shape
 * of its view (a repeated axis has extent 1); NULL after a failure. */
const bp_tensor *bp__vjp_in(bp__vjp *c, int32_t k);
const bp_tensor *bp__vjp_out(bp__vjp *c, int32_t k);

/* Expression builders: each records one public op on the graph and returns
 * its result, kept until the node is done; NULL once c->st failed. */
const bp_tensor *bp__e_keep(bp__vjp *c, bp_status st, bp_tensor *t);
const bp_tensor *bp__e_un(bp__vjp *c, bp_op op, const bp_tensor *x);
const bp_tensor *bp__e_unp(bp__vjp *c, bp_op op, const bp_tensor *x, double f0, double f1);
const bp_tensor *bp__e_bin(bp__vjp *c, bp_op op, const bp_tensor *a, const bp_tensor *b);
const bp_tensor *bp__e_where(bp__vjp *c, const bp_tensor *cond, const bp_tensor *a,
                             const bp_tensor *b);
/* A 0-d constant of like's dtype. */
const bp_tensor *bp__e_const(bp__vjp *c, const bp_tensor *like, double value);
/* x reduced (op of the REDUCE kind) over its last n axes, kept as extent 1. */
const bp_tensor *bp__e_reduce_last(bp__vjp *c, bp_op op, const bp_tensor *x, int32_t n);
/* x (its shape a prefix of shape's, then 1s or nothing) broadcast to shape. */
const bp_tensor *bp__e_expand(bp__vjp *c, const bp_tensor *x, int32_t rank, const int64_t *shape);
const bp_tensor *bp__e_matmul(bp__vjp *c, const bp_tensor *a, const bp_tensor *b);
/* x with its last two axes swapped. */
const bp_tensor *bp__e_mT(bp__vjp *c, const bp_tensor *x);
const bp_tensor *bp__e_cast(bp__vjp *c, const bp_tensor *x, bp_dtype dtype);
/* x's elements in another shape (an alias: no node). */
const bp_tensor *bp__e_reshape(bp__vjp *c, const bp_tensor *x, int32_t rank,
                              const int64_t *shape);
const bp_tensor *bp__e_cumsum_last(bp__vjp *c, const bp_tensor *x, bool exclusive, bool reverse);
const bp_tensor *bp__e_cumprod_last(bp__vjp *c, const bp_tensor *x, bool exclusive, bool reverse);

/* The rules, one per kind (grad_<kind>.c): each switches on the op. */
bp_status bp__vjp_unary(bp__vjp *c);
bp_status bp__vjp_binary(bp__vjp *c);
bp_status bp__vjp_where(bp__vjp *c);
bp_status bp__vjp_clip(bp__vjp *c);
bp_status bp__vjp_reduce(bp__vjp *c);
bp_status bp__vjp_softmax(bp__vjp *c);
bp_status bp__vjp_scan(bp__vjp *c);
bp_status bp__vjp_matmul(bp__vjp *c);
bp_status bp__vjp_gemm(bp__vjp *c);
bp_status bp__vjp_movement(bp__vjp *c);
bp_status bp__vjp_norm(bp__vjp *c);
bp_status bp__vjp_conv(bp__vjp *c);
bp_status bp__vjp_loss(bp__vjp *c);
bp_status bp__vjp_trilu(bp__vjp *c);
bp_status bp__vjp_max_pool(bp__vjp *c);
bp_status bp__vjp_average_pool(bp__vjp *c);
bp_status bp__vjp_lrn(bp__vjp *c);
bp_status bp__vjp_sort(bp__vjp *c);
bp_status bp__vjp_resize(bp__vjp *c);
bp_status bp__vjp_index(bp__vjp *c);

/* The gradient column of the op table (grad_table.c): how the op's
 * gradient is had, its rule where it has one, and `diff`: the inputs a
 * gradient flows to (or for NONE, through which asking would reach it), by
 * name as the table's IN names them. */
typedef enum bp__grad_is {
    BP__GRAD_HAS_RULE,
    BP__GRAD_IS_ZERO,  /* zero almost everywhere (floor, round...) */
    BP__GRAD_IS_NONE,  /* none (argmax, compare, integer ops): asking is an error */
    BP__GRAD_IS_TODO   /* differentiable, its rule not written yet: an error too */
} bp__grad_is;
typedef struct bp__grad_row {
    bp__vjp_rule rule;
    bp__grad_is is;
    const char *diff;
} bp__grad_row;
const bp__grad_row *bp__grad_row_of(bp_op op);
/* Whether input k of op is one a gradient flows to. */
bool bp__grad_diff_input(bp_op op, int32_t k);

#endif

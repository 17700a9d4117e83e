/* The op entry for nn.h's ops: each code to its kernel over every unit, and
 * the window geometry the window ops share. */
#include <stdlib.h>

#include "kernels_nn.h"

void bpk_window_of(const bp_op_params *p, const bp_view *x, const bp_view *y,
                   const int64_t *kernel, bpk_window *w)
{
    w->s = x->rank - 2;
    for (int32_t a = 0; a < 3; a++) {
        const int32_t j = a - (3 - w->s); /* the spatial axis at position a, or < 0 */
        bool on = j >= 0;
        w->in[a] = on ? x->shape[2 + j] : 1;
        w->out[a] = on ? y->shape[2 + j] : 1;
        w->k[a] = on ? (kernel ? kernel[j] : p->i[j]) : 1;
        w->st[a] = on ? p->i[3 + j] : 1;
        w->dl[a] = on ? p->i[6 + j] : 1;
        w->pb[a] = on ? p->i[9 + j] : 0;
        w->pe[a] = on ? p->i[12 + j] : 0;
    }
}

/* The byte offset of v's element at row-major position k over axes
 * [from, rank). */
static int64_t offset_of(const bp_view *v, int32_t from, int64_t k)
{
    int64_t off = 0;
    for (int32_t d = v->rank - 1; d >= from; d--) {
        int64_t e = v->shape[d];
        off += (k % e) * v->strides[d];
        k /= e;
    }
    return off * (int64_t)bp_dtype_size(v->dtype);
}

char *bpk_elem_at(const bp_view *v, int64_t k) { return bpk_base(v) + offset_of(v, 0, k); }

/* Elements [first, first + n) of v (row-major over its shape), walked as
 * runs along its last axis: fn(element address, position in the block). */
#define BLOCK_WALK(v, first, n, STMT)                                                          \
    do {                                                                                       \
        const int32_t r_ = (v)->rank;                                                          \
        const int64_t inner_ = r_ ? (v)->shape[r_ - 1] : 1;                                    \
        const int64_t step_ = r_ ? (v)->strides[r_ - 1] * (int64_t)bp_dtype_size((v)->dtype) : 0; \
        for (int64_t k_ = (first), end_ = (first) + (n); k_ < end_;) {                         \
            int64_t run_ = inner_ - k_ % inner_;                                               \
            if (run_ > end_ - k_)                                                              \
                run_ = end_ - k_;                                                              \
            char *q_ = bpk_base(v) + offset_of(v, 0, k_);                                      \
            for (int64_t t_ = 0; t_ < run_; t_++) {                                            \
                char *at = q_ + t_ * step_;                                                    \
                int64_t i = k_ - (first) + t_;                                                 \
                STMT;                                                                          \
            }                                                                                  \
            k_ += run_;                                                                        \
        }                                                                                      \
    } while (0)

void bpk_block_load(const bp_view *v, int64_t first, int64_t n, double *dst)
{
    BLOCK_WALK(v, first, n, dst[i] = bp_elem_load_f64(v->dtype, at));
}

void bpk_block_store(const bp_view *v, int64_t first, int64_t n, const double *src)
{
    BLOCK_WALK(v, first, n, bp_elem_store_f64(v->dtype, at, src[i]));
}

void bpk_block_load_i64(const bp_view *v, int64_t first, int64_t n, int64_t *dst)
{
    BLOCK_WALK(v, first, n, dst[i] = bp_elem_load_i64(v->dtype, at));
}

void bpk_block_store_i64(const bp_view *v, int64_t first, int64_t n, const int64_t *src)
{
    BLOCK_WALK(v, first, n, bp_elem_store_i64(v->dtype, at, src[i]));
}

/* A plane v[a, b, ...] is the block of its elements. */
static int64_t plane_numel(const bp_view *v)
{
    int64_t n = 1;
    for (int32_t d = 2; d < v->rank; d++)
        n *= v->shape[d];
    return n;
}

void bpk_plane_load(const bp_view *v, int64_t a, int64_t b, double *dst)
{
    int64_t n = plane_numel(v);
    bpk_block_load(v, (a * v->shape[1] + b) * n, n, dst);
}

void bpk_plane_store(const bp_view *v, int64_t a, int64_t b, const double *src)
{
    int64_t n = plane_numel(v);
    bpk_block_store(v, (a * v->shape[1] + b) * n, n, src);
}

void bpk_plane_load_i64(const bp_view *v, int64_t a, int64_t b, int64_t *dst)
{
    int64_t n = plane_numel(v);
    bpk_block_load_i64(v, (a * v->shape[1] + b) * n, n, dst);
}

void bpk_plane_store_i64(const bp_view *v, int64_t a, int64_t b, const int64_t *src)
{
    int64_t n = plane_numel(v);
    bpk_block_store_i64(v, (a * v->shape[1] + b) * n, n, src);
}

static bp_status loss(void *dev, bp_op op, const bp_op_params *p, const bp_view *const *in,
                      const bp_view *const *out, int32_t n_out)
{
    bpk_loss_args a;
    bpk_loss_args_of(op, p, in[0], &a);
    int64_t n = a.rows > 0 ? a.rows : 1;
    double *per = malloc((size_t)n * 2 * sizeof *per);
    if (!per)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld samples",
                        bp_op_name(op), (long long)a.rows);
    bp_status st = bpk_loss_rows(dev, &a, in[0], in[1], in[2], n_out > 1 ? out[1] : NULL, 0,
                                 a.rows, per, per + n);
    if (st == BP_OK)
        bpk_loss_finish(p, out[0], a.rows, per, per + n);
    free(per);
    return st;
}

/* The units (planes, rows, elements) of each kernel's whole call. */
static int64_t planes(const bp_view *x) { return x->shape[0] * x->shape[1]; }
static int64_t positions(const bp_view *x)
{
    int64_t n = 1;
    for (int32_t k = 2; k < x->rank; k++)
        n *= x->shape[k];
    return n;
}

bp_status bpk_nn_op(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                    const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    /* any other code (one past this build's list included) may come with
     * no views at all */
    const bp_view *x = n_in > 0 ? in[0] : NULL;
    switch (op) {
    case BP_OP_CONV:
        return bpk_conv_units(dev, p, x, in[1], in[2], out[0], 0, x->shape[0] * p->i[15]);
    case BP_OP_CONV_TRANSPOSE:
        return bpk_conv_transpose_units(dev, p, x, in[1], in[2], out[0], 0,
                                        x->shape[0] * p->i[15]);
    case BP_OP_MAX_POOL:
        return bpk_max_pool_planes(dev, p, x, out[0], n_out > 1 ? out[1] : NULL, 0, planes(x));
    case BP_OP_AVERAGE_POOL:
        return bpk_average_pool_planes(dev, p, x, out[0], 0, planes(x));
    case BP_OP_LRN:
        return bpk_lrn_units(dev, p, x, out[0], 0, x->shape[0] * positions(x));
    case BP_OP_BATCH_NORM:
        return bpk_batch_norm_planes(dev, p, in, out[0], 0, planes(x));
    case BP_OP_INSTANCE_NORM:
        return bpk_instance_norm_planes(dev, p, in, out[0], 0, planes(x));
    case BP_OP_LAYER_NORM: case BP_OP_RMS_NORM: {
        bool rms = op == BP_OP_RMS_NORM;
        int64_t rows = 1;
        for (int32_t k = 0; k < x->rank - p->i[0]; k++)
            rows *= x->shape[k];
        return bpk_trailing_norm_rows(dev, rms, p, x, in[1], rms ? NULL : in[2], out[0],
                                      rms ? NULL : out[1], rms ? NULL : out[2], 0, rows);
    }
    case BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS: case BP_OP_NLL_LOSS:
        return loss(dev, op, p, in, out, n_out);
    case BP_OP_RESIZE:
        return bpk_resize_elems(dev, p, x, out[0], 0, bpk_numel(out[0]));
    default:
        return bpk_fail(dev, BP_ERR_UNSUPPORTED_OP,
                        "op code %d (%s) has no kernel in this build of the reference kernels",
                        (int)op, bp_op_name(op));
    }
}

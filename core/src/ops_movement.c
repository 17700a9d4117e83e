/* backplane core: the MOVEMENT kind.
 *
 * transpose, slice, concat, broadcast_to, pad and cast are all one kernel in
 * a plugin, a strided element copy: the core computes a strided source view
 * onto the input's storage and a (possibly strided) destination view onto
 * the fresh output; the op code only tells the plugin which public call it
 * serves. */
#include <stdio.h>

#include "internal.h"


/* A fresh dense (rank, shape) tensor of dtype filled from src (same shape). */
static bp_status copy_into_new(const char *fn, bp_backend *be, bp_op op, const bp_view *src,
                               bp_dtype dtype, int32_t rank, const int64_t *shape,
                               bp_tensor **out)
{
    bp_op_params p = bp__params();
    return bp__op_into_new(fn, be, op, &p, (const bp_view *[]){src}, dtype, rank, shape, out);
}

/* Move v's start by `elems` elements (bytes computed from its dtype). */
static void view_advance(bp_view *v, int64_t elems)
{
    v->offset += elems * (int64_t)bp_dtype_size(v->dtype);
}

/* ---- transpose ----------------------------------------------------------- */

bp_status bp_transpose(const bp_tensor *x, const int32_t *perm, bp_tensor **out)
{
    static const char fn[] = "bp_transpose";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_TRANSPOSE, (const bp_tensor *const[]){x}, &be));

    int32_t p[BP_MAX_RANK];
    bool seen[BP_MAX_RANK] = {false};
    for (int32_t k = 0; k < x->rank; k++) {
        BP__TRY(bp__normalize_axis(fn, perm ? perm[k] : x->rank - 1 - k, x->rank, &p[k]));
        if (seen[p[k]])
            return bp__error(BP_ERR_SHAPE,
                             "%s: perm is not a permutation: axis %d appears twice (perm[%d]); "
                             "list each of 0..%d once, or pass NULL to reverse the axes",
                             fn, (int)p[k], (int)k, (int)x->rank - 1);
        seen[p[k]] = true;
    }

    BP__TRY(bp__op_require(be, BP_OP_TRANSPOSE, x->dtype));
    bp_view src;
    bp__view_dense(x, &src);
    bp__view_permute(&src, p);
    return copy_into_new(fn, be, BP_OP_TRANSPOSE, &src, x->dtype, src.rank, src.shape, out);
}

/* ---- slice ----------------------------------------------------------------- */

/* ONNX Slice: a negative bound counts from the end, then clamps into [lo, hi]
 * (hi last, so an empty axis stays empty). Starts clamp into [0, dim] going
 * forward and [0, dim - 1] going backward; stops into [0, dim] and
 * [-1, dim - 1]. Unlike Python's slice.indices, a backward start before the
 * front selects index 0. */
static int64_t slice_clamp(int64_t i, int64_t dim, int64_t lo, int64_t hi)
{
    if (i < 0)
        i += dim;
    if (i < lo)
        i = lo;
    if (i > hi)
        i = hi;
    return i;
}

bp_status bp_slice(const bp_tensor *x, const int64_t *starts, const int64_t *stops,
                   const int64_t *steps, bp_tensor **out)
{
    static const char fn[] = "bp_slice";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_SLICE, (const bp_tensor *const[]){x}, &be));
    if (x->rank > 0 && starts == NULL)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: starts is NULL; pass one start per axis of x (%d values)", fn,
                         (int)x->rank);

    int64_t start[BP_MAX_RANK], step[BP_MAX_RANK], len[BP_MAX_RANK];
    bool empty = false;
    for (int32_t k = 0; k < x->rank; k++) {
        int64_t dim = x->shape[k], s = steps ? steps[k] : 1;
        if (s == 0)
            return bp__error(BP_ERR_INVALID_ARGUMENT,
                             "%s: steps[%d] is 0; a step must be nonzero (negative steps walk "
                             "backwards)",
                             fn, (int)k);
        bool backward = s < 0;
        int64_t b = slice_clamp(starts[k], dim, 0, backward ? dim - 1 : dim);
        int64_t e = !stops ? (backward ? -1 : dim)
                           : slice_clamp(stops[k], dim, backward ? -1 : 0, backward ? dim - 1 : dim);
        int64_t n = 0;
        if (!backward && e > b)
            n = (e - b - 1) / s + 1;
        else if (backward && b > e)
            n = (int64_t)((uint64_t)(b - e - 1) / ((uint64_t)0 - (uint64_t)s) + 1);
        start[k] = b;
        step[k] = s;
        len[k] = n;
        empty = empty || n == 0;
    }

    BP__TRY(bp__op_require(be, BP_OP_SLICE, x->dtype));
    bp_view src;
    bp__view_dense(x, &src);
    for (int32_t k = 0; k < x->rank; k++) {
        if (!empty) /* every start is then in range */
            view_advance(&src, start[k] * src.strides[k]);
        if (len[k] > 1) /* |step| < dim here, so the product fits */
            src.strides[k] *= step[k];
        src.shape[k] = len[k];
    }
    return copy_into_new(fn, be, BP_OP_SLICE, &src, x->dtype, x->rank, len, out);
}

/* ---- concat ---------------------------------------------------------------- */

bp_status bp_concat(int32_t n, const bp_tensor *const *xs, int32_t axis, bp_tensor **out)
{
    static const char fn[] = "bp_concat";
    BP__TRY(bp__check_out(fn, out));
    if (n <= 0 || xs == NULL)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: nothing to join (n = %d, xs %s); pass n >= 1 tensors", fn, (int)n,
                         xs ? "set" : "NULL");
    char name[32], s0[BP__SHAPE_STR_CAP], si[BP__SHAPE_STR_CAP];
    for (int32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "xs[%d]", (int)i);
        BP__TRY(bp__check_input(fn, name, xs[i]));
    }
    /* all at once: symbolic tensors of two graphs, or a concrete one beside
     * a symbolic one (captured), are decided over every pair; the names
     * (NULL: xs[i]) are formatted only for a message */
    BP__TRY(bp__check_same_backend(fn, (size_t)n, xs, NULL));
    const bp_tensor *x0 = xs[0];
    for (int32_t i = 1; i < n; i++)
        if (xs[i]->dtype != x0->dtype)
            return bp__error(BP_ERR_DTYPE,
                             "%s: xs[0] is %s but xs[%d] is %s; every tensor must share a "
                             "dtype: convert with bp_cast first",
                             fn, bp_dtype_name(x0->dtype), (int)i, bp_dtype_name(xs[i]->dtype));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x0->rank, &ax));
    int64_t shape[BP_MAX_RANK];
    for (int32_t k = 0; k < x0->rank; k++)
        shape[k] = x0->shape[k];
    for (int32_t i = 1; i < n; i++) {
        const bp_tensor *xi = xs[i];
        bool ok = xi->rank == x0->rank;
        for (int32_t k = 0; ok && k < x0->rank; k++)
            ok = k == ax || xi->shape[k] == x0->shape[k];
        if (!ok)
            return bp__error(BP_ERR_SHAPE,
                             "%s: xs[0] has shape %s but xs[%d] has shape %s; all must have "
                             "the same rank and equal extents except along axis %d",
                             fn, BP__SHAPE_STR(s0, x0->rank, x0->shape), (int)i,
                             BP__SHAPE_STR(si, xi->rank, xi->shape), (int)ax);
        if (xi->shape[ax] > INT64_MAX - shape[ax])
            return bp__error(BP_ERR_SHAPE, "%s: the joined extent along axis %d overflows int64",
                             fn, (int)ax);
        shape[ax] += xi->shape[ax];
    }

    bp_backend *be = bp__backend_of_all((size_t)n, xs);
    BP__TRY(bp__op_require(be, BP_OP_CONCAT, x0->dtype));
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x0->dtype, x0->rank, shape, &res));
    bp_view dst;
    bp__view_dense(res, &dst);
    int64_t axis_stride = dst.strides[ax];
    for (int32_t i = 0; i < n; i++) {
        bp_view src, part = dst;
        bp__view_dense(xs[i], &src);
        part.shape[ax] = xs[i]->shape[ax];
        bp_op_params p = bp__params();
        bp_status st = bp__op_run(be, BP_OP_CONCAT, &p, (const bp_view *[]){&src},
                                  (const bp_view *[]){&part});
        if (st != BP_OK) {
            bp_tensor_release(res);
            return st;
        }
        view_advance(&dst, xs[i]->shape[ax] * axis_stride);
    }
    *out = res;
    return BP_OK;
}

/* ---- broadcast_to ---------------------------------------------------------- */

bp_status bp_broadcast_to(const bp_tensor *x, int32_t rank, const int64_t *shape, bp_tensor **out)
{
    static const char fn[] = "bp_broadcast_to";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_BROADCAST_TO, (const bp_tensor *const[]){x}, &be));
    BP__TRY(bp__shape_check(fn, x->dtype, rank, shape, NULL, NULL));
    bool ok = rank >= x->rank;
    for (int32_t j = x->rank - 1, k = rank - 1; ok && j >= 0; j--, k--)
        ok = x->shape[j] == 1 || x->shape[j] == shape[k];
    if (!ok) {
        char sx[BP__SHAPE_STR_CAP], st[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE,
                         "%s: x of shape %s cannot broadcast to %s (NumPy rules: the target "
                         "has at least x's rank, and each of x's trailing extents is 1 or "
                         "equal to the target's)",
                         fn, BP__SHAPE_STR(sx, x->rank, x->shape), BP__SHAPE_STR(st, rank, shape));
    }

    BP__TRY(bp__op_require(be, BP_OP_BROADCAST_TO, x->dtype));
    bp_view src;
    bp__view_broadcast(x, rank, shape, &src);
    return copy_into_new(fn, be, BP_OP_BROADCAST_TO, &src, x->dtype, rank, shape, out);
}

/* ---- pad ------------------------------------------------------------------- */

/* Fill only the padding of dst (the whole output, dense) around an interior
 * of shape `inner` that starts at `before`: for each axis k, the slab before
 * and the slab after the interior along k, spanning the interior's extent on
 * the axes before k and the full extent on the axes after k. These slabs are
 * disjoint and, with the interior (written by the copy), cover every element
 * of the output once, so no byte is written twice (filling everything, then
 * copying the interior over it, wrote most of them twice). */
static bp_status pad_fill_borders(bp_backend *be, const bp_view *dst, const int64_t *inner,
                                  const int64_t *before, const int64_t *after, double value)
{
    bp_view part = *dst; /* axes < k: the interior's range; axes >= k: all */
    for (int32_t k = 0; k < dst->rank; k++) {
        int64_t stride = dst->strides[k];
        if (before[k] > 0) {
            bp_view b = part;
            b.shape[k] = before[k];
            BP__TRY(bp__fill_view(be, &b, value));
        }
        if (after[k] > 0) {
            bp_view a = part;
            view_advance(&a, (before[k] + inner[k]) * stride);
            a.shape[k] = after[k];
            BP__TRY(bp__fill_view(be, &a, value));
        }
        view_advance(&part, before[k] * stride);
        part.shape[k] = inner[k];
    }
    return BP_OK;
}

bp_status bp_pad(const bp_tensor *x, const int64_t *before, const int64_t *after, double value,
                 bp_tensor **out)
{
    static const char fn[] = "bp_pad";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_PAD, (const bp_tensor *const[]){x}, &be));
    if (x->rank > 0 && (before == NULL || after == NULL))
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: %s is NULL; pass one count per axis of x (%d values, 0 for no "
                         "padding)",
                         fn, before == NULL ? "before" : "after", (int)x->rank);
    int64_t shape[BP_MAX_RANK];
    for (int32_t k = 0; k < x->rank; k++) {
        if (before[k] < 0 || after[k] < 0)
            return bp__error(BP_ERR_INVALID_ARGUMENT,
                             "%s: %s[%d] is %lld; padding counts must be >= 0 (use bp_slice "
                             "to crop)",
                             fn, before[k] < 0 ? "before" : "after", (int)k,
                             (long long)(before[k] < 0 ? before[k] : after[k]));
        if (before[k] > INT64_MAX - x->shape[k] || after[k] > INT64_MAX - x->shape[k] - before[k])
            return bp__error(BP_ERR_SHAPE, "%s: the padded extent of axis %d overflows int64",
                             fn, (int)k);
        shape[k] = before[k] + x->shape[k] + after[k];
    }
    BP__TRY(bp__shape_check(fn, x->dtype, x->rank, shape, NULL, NULL));

    BP__TRY(bp__op_require(be, BP_OP_FILL, x->dtype));
    BP__TRY(bp__op_require(be, BP_OP_PAD, x->dtype));

    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, x->dtype, x->rank, shape, &res));
    bp_view src, dst;
    bp__view_dense(x, &src);
    bp__view_dense(res, &dst);
    bp_status st = x->numel == 0 ? bp__fill_view(be, &dst, value)
                                 : pad_fill_borders(be, &dst, x->shape, before, after, value);
    if (st != BP_OK) {
        bp_tensor_release(res);
        return st;
    }
    bool empty = x->numel == 0;
    for (int32_t k = 0; k < x->rank; k++) {
        if (!empty)
            view_advance(&dst, before[k] * dst.strides[k]);
        dst.shape[k] = x->shape[k];
    }
    bp_op_params p = bp__params();
    return bp__deliver(res, bp__op_run(be, BP_OP_PAD, &p, (const bp_view *[]){&src},
                                       (const bp_view *[]){&dst}), out);
}

/* ---- cast ------------------------------------------------------------------ */

bp_status bp_cast(const bp_tensor *x, bp_dtype dtype, bp_tensor **out)
{
    static const char fn[] = "bp_cast";
    BP__TRY(bp__check_out(fn, out));
    bp_backend *be;
    BP__TRY(bp__op_begin(fn, BP_OP_CAST, (const bp_tensor *const[]){x}, &be));
    if (!bp_dtype_valid((int)dtype))
        return bp__error(BP_ERR_DTYPE,
                         "%s: %d is not a dtype; pass one of BP_BOOL, BP_U8, BP_I8, BP_I16, "
                         "BP_U16, BP_I32, BP_U32, BP_I64, BP_U64, BP_F16, BP_BF16, BP_F32, BP_F64",
                         fn, (int)dtype);

    bp_op op = dtype == x->dtype ? BP_OP_COPY : BP_OP_CAST;
    BP__TRY(bp__op_require(be, op, x->dtype));
    if (op == BP_OP_CAST)
        BP__TRY(bp__op_require(be, op, dtype));
    bp_view src;
    bp__view_dense(x, &src);
    return copy_into_new(fn, be, op, &src, dtype, x->rank, x->shape, out);
}

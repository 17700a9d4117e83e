/* backplane core: the ops of ABI 1.4 that are compositions of other ops and
 * need no plugin entry of their own: split (slices), tile (broadcasts),
 * depth_to_space and space_to_depth (reshape, transpose, reshape), and the
 * variadic max, min, sum and mean (a fold of the binary op). Every argument
 * is checked here first, so an error names the call the user made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- split ----------------------------------------------------------------------- */

static bp_status split_sizes(const char *fn, const bp_tensor *x, int32_t ax, int32_t n,
                             const int64_t *sizes, int64_t *parts)
{
    int64_t extent = x->shape[ax];
    if (!sizes) {
        if (extent % n != 0)
            return bp__error(BP_ERR_SHAPE, "%s: axis %d has extent %lld, which does not divide "
                             "into %d equal parts; pass sizes", fn, (int)ax, (long long)extent,
                             (int)n);
        for (int32_t k = 0; k < n; k++)
            parts[k] = extent / n;
        return BP_OK;
    }
    int64_t total = 0;
    for (int32_t k = 0; k < n; k++) {
        if (sizes[k] < 0 || sizes[k] > extent - total)
            return bp__error(BP_ERR_SHAPE, "%s: sizes[%d] = %lld; the sizes must be >= 0 and "
                             "sum to axis %d's extent %lld", fn, (int)k, (long long)sizes[k],
                             (int)ax, (long long)extent);
        parts[k] = sizes[k];
        total += sizes[k];
    }
    if (total != extent)
        return bp__error(BP_ERR_SHAPE, "%s: the sizes sum to %lld but axis %d has extent %lld",
                         fn, (long long)total, (int)ax, (long long)extent);
    return BP_OK;
}

bp_status bp_split(const bp_tensor *x, int32_t axis, int32_t n, const int64_t *sizes,
                   bp_tensor **outs)
{
    static const char fn[] = "bp_split";
    if (!outs)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: outs is NULL; pass an array of n "
                         "tensor pointers", fn);
    if (n < 1)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: n is %d; split into n >= 1 parts", fn,
                         (int)n);
    for (int32_t k = 0; k < n; k++)
        outs[k] = NULL;
    BP__TRY(bp__check_input(fn, "x", x));
    int32_t ax = 0;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    int64_t *parts = malloc((size_t)n * sizeof *parts);
    if (!parts)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for %d sizes", fn, (int)n);
    bp_status st = split_sizes(fn, x, ax, n, sizes, parts);
    int64_t starts[BP_MAX_RANK] = {0}, stops[BP_MAX_RANK];
    memcpy(stops, x->shape, (size_t)x->rank * sizeof *stops);
    for (int32_t k = 0; st == BP_OK && k < n; k++) {
        stops[ax] = starts[ax] + parts[k];
        st = bp_slice(x, starts, stops, NULL, &outs[k]);
        starts[ax] = stops[ax];
    }
    free(parts);
    if (st != BP_OK)
        for (int32_t k = 0; k < n; k++) {
            bp_tensor_release(outs[k]);
            outs[k] = NULL;
        }
    return st;
}

/* ---- tile ------------------------------------------------------------------------ */

/* x repeated r times along axis ax: (P, 1, Q) broadcast to (P, r, Q), P the
 * elements before the axis, Q those from it on; rank 3 whatever x's rank. */
static bp_status tile_axis(const bp_tensor *x, int32_t ax, int64_t r, bp_tensor **out)
{
    int64_t p = 1, q = 1;
    for (int32_t k = 0; k < x->rank; k++)
        *(k < ax ? &p : &q) *= x->shape[k];
    bp_tensor *flat = NULL, *wide = NULL;
    bp_status st = bp_reshape(x, 3, (const int64_t[]){p, 1, q}, &flat);
    if (st == BP_OK)
        st = bp_broadcast_to(flat, 3, (const int64_t[]){p, r, q}, &wide);
    int64_t shape[BP_MAX_RANK];
    memcpy(shape, x->shape, (size_t)x->rank * sizeof *shape);
    shape[ax] *= r;
    if (st == BP_OK)
        st = bp_reshape(wide, x->rank, shape, out);
    bp_tensor_release(flat);
    bp_tensor_release(wide);
    return st;
}

bp_status bp_tile(const bp_tensor *x, const int64_t *reps, bp_tensor **out)
{
    static const char fn[] = "bp_tile";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(bp__check_input(fn, "x", x));
    if (x->rank > 0 && !reps)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: reps is NULL; pass one count per axis "
                         "of x (%d values)", fn, (int)x->rank);
    for (int32_t k = 0; k < x->rank; k++) {
        if (reps[k] < 0)
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: reps[%d] is %lld; counts must be "
                             ">= 0", fn, (int)k, (long long)reps[k]);
        if (reps[k] > 0 && x->shape[k] > INT64_MAX / reps[k])
            return bp__error(BP_ERR_SHAPE, "%s: axis %d's extent overflows", fn, (int)k);
    }
    bp_tensor *cur = NULL;
    /* A copy even when every count is 1: the result is the caller's own. */
    bp_status st = bp_broadcast_to(x, x->rank, x->shape, &cur);
    for (int32_t k = 0; st == BP_OK && k < x->rank; k++) {
        if (reps[k] == 1)
            continue;
        bp_tensor *next = NULL;
        st = tile_axis(cur, k, reps[k], &next);
        bp_tensor_release(cur);
        cur = next;
    }
    if (st != BP_OK) {
        bp_tensor_release(cur);
        return st;
    }
    *out = cur;
    return BP_OK;
}

/* ---- depth and space ----------------------------------------------------------------- */

/* reshape to r1 dims, transpose by perm, reshape to r2 dims. */
static bp_status regroup(const bp_tensor *x, int32_t r1, const int64_t *s1, const int32_t *perm,
                         int32_t r2, const int64_t *s2, bp_tensor **out)
{
    bp_tensor *a = NULL, *b = NULL;
    bp_status st = bp_reshape(x, r1, s1, &a);
    if (st == BP_OK)
        st = bp_transpose(a, perm, &b);
    if (st == BP_OK)
        st = bp_reshape(b, r2, s2, out);
    bp_tensor_release(a);
    bp_tensor_release(b);
    return st;
}

static bp_status check_nchw(const char *fn, const bp_tensor *x, int64_t blocksize)
{
    BP__TRY(bp__check_input(fn, "x", x));
    if (x->rank != 4) {
        char s[BP__SHAPE_STR_CAP];
        return bp__error(BP_ERR_SHAPE, "%s: x %s must have rank 4 (N, C, H, W)", fn,
                         BP__SHAPE_STR(s, x->rank, x->shape));
    }
    if (blocksize < 1 || blocksize > (int64_t)1 << 31)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: blocksize is %lld; it must be >= 1", fn,
                         (long long)blocksize);
    return BP_OK;
}

bp_status bp_depth_to_space(const bp_tensor *x, int64_t blocksize, bool crd, bp_tensor **out)
{
    static const char fn[] = "bp_depth_to_space";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(check_nchw(fn, x, blocksize));
    const int64_t b = blocksize, n = x->shape[0], c = x->shape[1], h = x->shape[2],
                  w = x->shape[3];
    if (c % (b * b) != 0)
        return bp__error(BP_ERR_SHAPE, "%s: %lld channels do not divide by blocksize^2 = %lld",
                         fn, (long long)c, (long long)(b * b));
    if ((h && b > INT64_MAX / h) || (w && b > INT64_MAX / w))
        return bp__error(BP_ERR_SHAPE, "%s: the result's extents overflow", fn);
    const int64_t cb = c / (b * b), s2[4] = {n, cb, h * b, w * b};
    if (crd) /* (N, C', b, b, H, W) -> (N, C', H, b, W, b) */
        return regroup(x, 6, (const int64_t[]){n, cb, b, b, h, w},
                       (const int32_t[]){0, 1, 4, 2, 5, 3}, 4, s2, out);
    /* DCR: (N, b, b, C', H, W) -> (N, C', H, b, W, b) */
    return regroup(x, 6, (const int64_t[]){n, b, b, cb, h, w},
                   (const int32_t[]){0, 3, 4, 1, 5, 2}, 4, s2, out);
}

bp_status bp_space_to_depth(const bp_tensor *x, int64_t blocksize, bp_tensor **out)
{
    static const char fn[] = "bp_space_to_depth";
    BP__TRY(bp__check_out(fn, out));
    BP__TRY(check_nchw(fn, x, blocksize));
    const int64_t b = blocksize, n = x->shape[0], c = x->shape[1], h = x->shape[2],
                  w = x->shape[3];
    if (h % b != 0 || w % b != 0)
        return bp__error(BP_ERR_SHAPE, "%s: H = %lld and W = %lld must divide by blocksize %lld",
                         fn, (long long)h, (long long)w, (long long)b);
    if (c && b * b > INT64_MAX / c)
        return bp__error(BP_ERR_SHAPE, "%s: the result's channels overflow", fn);
    /* (N, C, H', b, W', b) -> (N, b, b, C, H', W') */
    return regroup(x, 6, (const int64_t[]){n, c, h / b, b, w / b, b},
                   (const int32_t[]){0, 3, 5, 1, 2, 4}, 4,
                   (const int64_t[]){n, c * b * b, h / b, w / b}, out);
}

/* ---- variadic ---------------------------------------------------------------------------- */

typedef bp_status (*bp__binary_fn)(const bp_tensor *, const bp_tensor *, bp_tensor **);

static bp_status fold(const char *fn, const char *op_name, int32_t n, const bp_tensor *const *xs,
                      bp_op_dtypes cls, bp__binary_fn f, bp_tensor **out)
{
    BP__TRY(bp__check_out(fn, out));
    if (n < 1 || !xs)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: pass n >= 1 tensors (n is %d%s)", fn,
                         (int)n, xs ? "" : ", xs NULL");
    int32_t rank = 0;
    int64_t shape[BP_MAX_RANK];
    for (int32_t k = 0; k < n; k++) {
        char arg[24];
        snprintf(arg, sizeof arg, "xs[%d]", (int)k);
        BP__TRY(bp__check_input(fn, arg, xs[k]));
        BP__TRY(bp__check_dtype(fn, op_name, arg, xs[k]->dtype, cls));
        if (k == 0) {
            rank = xs[0]->rank;
            memcpy(shape, xs[0]->shape, (size_t)rank * sizeof *shape);
            continue;
        }
        BP__TRY(bp__check_same_backend(fn, 2, (const bp_tensor *const[]){xs[0], xs[k]},
                                       (const char *const[]){"xs[0]", arg}));
        if (xs[k]->dtype != xs[0]->dtype)
            return bp__error(BP_ERR_DTYPE, "%s: xs[0] is %s but %s is %s; the tensors must "
                             "share a dtype: convert with bp_cast first", fn,
                             bp_dtype_name(xs[0]->dtype), arg, bp_dtype_name(xs[k]->dtype));
        int64_t prev[BP_MAX_RANK];
        memcpy(prev, shape, sizeof prev);
        BP__TRY(bp__broadcast_shapes(fn, rank, prev, xs[k]->rank, xs[k]->shape, &rank, shape));
    }
    bp_tensor *acc = NULL;
    /* n == 1 still copies (to the broadcast shape, which is x's); from two
     * on, the first op makes the new tensor (and broadcasts): a copy of
     * xs[0] first was one more pass over the result (ResNet-50's Sum nodes) */
    bp_status st = n == 1 ? bp_broadcast_to(xs[0], rank, shape, &acc) : f(xs[0], xs[1], &acc);
    for (int32_t k = 2; st == BP_OK && k < n; k++) {
        bp_tensor *next = NULL;
        st = f(acc, xs[k], &next);
        bp_tensor_release(acc);
        acc = next;
    }
    if (st != BP_OK) {
        bp_tensor_release(acc);
        return st;
    }
    *out = acc;
    return BP_OK;
}

bp_status bp_max_n(int32_t n, const bp_tensor *const *xs, bp_tensor **out)
{
    return fold("bp_max_n", "max_n", n, xs, BP_DTYPES_NUMERIC, bp_maximum, out);
}

bp_status bp_min_n(int32_t n, const bp_tensor *const *xs, bp_tensor **out)
{
    return fold("bp_min_n", "min_n", n, xs, BP_DTYPES_NUMERIC, bp_minimum, out);
}

bp_status bp_sum_n(int32_t n, const bp_tensor *const *xs, bp_tensor **out)
{
    return fold("bp_sum_n", "sum_n", n, xs, BP_DTYPES_NUMERIC, bp_add, out);
}

bp_status bp_mean_n(int32_t n, const bp_tensor *const *xs, bp_tensor **out)
{
    static const char fn[] = "bp_mean_n";
    BP__TRY(bp__check_out(fn, out));
    bp_tensor *sum = NULL, *count = NULL;
    BP__TRY(fold(fn, "mean_n", n, xs, BP_DTYPES_FLOAT, bp_add, &sum));
    bp_status st = bp_full(bp__backend_of(sum), sum->dtype, 0, NULL, (double)n, &count);
    if (st == BP_OK)
        st = bp_div(sum, count, out);
    bp_tensor_release(sum);
    bp_tensor_release(count);
    return st;
}

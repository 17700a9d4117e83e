/* The ops of ABI 1.4 that the core composes from others (split, tile,
 * depth_to_space, space_to_depth), stated directly by where each output
 * element comes from, so they check the composition. Exact. */
#include "oracle.h"
#include "independent.h"

static void copy_elem(cf_array *dst, int64_t k, const cf_array *src, int64_t j)
{
    if (dst->f)
        dst->f[k] = src->f[j];
    else
        dst->i[k] = src->i[j];
}

/* outs[0 .. n): the parts (sizes NULL: equal ones). Each part is
 * initialised (zero-size when a later one fails), so all can be freed. */
bool cf_oracle_split(const cf_array *x, int32_t axis, int32_t n, const int64_t *sizes,
                     cf_array *outs)
{
    if (axis < 0)
        axis += x->rank;
    for (int32_t p = 0; p < n; p++)
        outs[p] = (cf_array){.dt = x->dt};
    int64_t start = 0, idx[BP_MAX_RANK];
    for (int32_t p = 0; p < n; p++) {
        int64_t shape[BP_MAX_RANK];
        for (int32_t d = 0; d < x->rank; d++)
            shape[d] = x->shape[d];
        shape[axis] = sizes ? sizes[p] : x->shape[axis] / n;
        if (!cf_array_init(&outs[p], x->dt, x->rank, shape))
            return false;
        for (int64_t e = 0; e < outs[p].n; e++) {
            cf_unravel(x->rank, shape, e, idx);
            idx[axis] += start;
            copy_elem(&outs[p], e, x, cf_ravel(x->rank, x->shape, idx));
        }
        start += shape[axis];
    }
    return true;
}

/* NumPy tile: out[i] = x[i mod x's shape]. */
bool cf_oracle_tile(const cf_array *x, const int64_t *reps, cf_array *want)
{
    int64_t shape[BP_MAX_RANK], idx[BP_MAX_RANK];
    for (int32_t d = 0; d < x->rank; d++)
        shape[d] = x->shape[d] * reps[d];
    if (!cf_array_init(want, x->dt, x->rank, shape))
        return false;
    for (int64_t e = 0; e < want->n; e++) {
        cf_unravel(x->rank, shape, e, idx);
        for (int32_t d = 0; d < x->rank; d++)
            idx[d] %= x->shape[d];
        copy_elem(want, e, x, cf_ravel(x->rank, x->shape, idx));
    }
    return true;
}

/* ONNX DepthToSpace: out[n, c, h b + i, w b + j] = x[n, ch, h, w] with
 * ch = (i b + j) C' + c (DCR) or c b^2 + i b + j (CRD), C' = C / b^2. */
bool cf_oracle_depth_to_space(const cf_array *x, int64_t blocksize, bool crd, cf_array *want)
{
    const int64_t b = blocksize, cp = x->shape[1] / (b * b);
    const int64_t shape[4] = {x->shape[0], cp, x->shape[2] * b, x->shape[3] * b};
    int64_t o[4];
    if (!cf_array_init(want, x->dt, 4, shape))
        return false;
    for (int64_t e = 0; e < want->n; e++) {
        cf_unravel(4, shape, e, o);
        int64_t i = o[2] % b, j = o[3] % b;
        int64_t ch = crd ? o[1] * b * b + i * b + j : (i * b + j) * cp + o[1];
        const int64_t src[4] = {o[0], ch, o[2] / b, o[3] / b};
        copy_elem(want, e, x, cf_ravel(4, x->shape, src));
    }
    return true;
}

/* ONNX SpaceToDepth: out[n, (i b + j) C + c, h, w] = x[n, c, h b + i, w b + j]. */
bool cf_oracle_space_to_depth(const cf_array *x, int64_t blocksize, cf_array *want)
{
    const int64_t b = blocksize, c = x->shape[1];
    const int64_t shape[4] = {x->shape[0], c * b * b, x->shape[2] / b, x->shape[3] / b};
    int64_t o[4];
    if (!cf_array_init(want, x->dt, 4, shape))
        return false;
    for (int64_t e = 0; e < want->n; e++) {
        cf_unravel(4, shape, e, o);
        int64_t blk = o[1] / c, ch = o[1] % c;
        const int64_t src[4] = {o[0], ch, o[2] * b + blk / b, o[3] * b + blk % b};
        copy_elem(want, e, x, cf_ravel(4, x->shape, src));
    }
    return true;
}

/* backplane core: dropout with a key, composed from the library's own ops:
 * the mask is bp_random_uniform's Philox stream compared with the ratio, so
 * every backend that passes the conformance suite draws the same mask. */
#include <math.h>
#include <stdio.h>

#include "internal.h"

/* mask = uniform(seed, offset) >= ratio, drawn in f32. */
static bp_status draw_mask(const bp_tensor *x, double ratio, uint64_t seed, uint64_t offset,
                           bp_tensor **mask)
{
    bp_backend *be = bp__backend_of(x);
    bp_tensor *u = NULL, *r = NULL;
    bp_status st = bp_random_uniform(be, BP_F32, x->rank, x->shape, seed, offset, 0.0, 1.0, &u);
    if (st == BP_OK)
        st = bp_full(be, BP_F32, 0, NULL, ratio, &r);
    if (st == BP_OK)
        st = bp_ge(u, r, mask);
    bp_tensor_release(u);
    bp_tensor_release(r);
    return st;
}

bp_status bp_dropout(const bp_tensor *x, double ratio, bool training, uint64_t seed,
                     uint64_t offset, bp_tensor **out, bp_tensor **mask)
{
    static const char fn[] = "bp_dropout";
    BP__TRY(bp__check_outs(fn, out, 1, (bp_tensor **const[]){mask}));
    BP__TRY(bp__check_input(fn, "x", x));
    BP__TRY(bp__check_dtype(fn, "dropout", "x", x->dtype, BP_DTYPES_FLOAT));
    if (!(ratio >= 0.0 && ratio < 1.0))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: ratio %g must lie in [0, 1)", fn, ratio);
    bp_backend *be = bp__backend_of(x);
    bp_tensor *y = NULL, *m = NULL, *keep = NULL, *scaled = NULL, *zero = NULL;
    bp_status st;
    if (!training) {
        st = bp_broadcast_to(x, x->rank, x->shape, &y); /* a copy: the caller's own */
        if (st == BP_OK && mask)
            st = bp_full(be, BP_BOOL, x->rank, x->shape, 1.0, &m);
    } else {
        st = draw_mask(x, ratio, seed, offset, &m);
        if (st == BP_OK)
            st = bp_full(be, x->dtype, 0, NULL, 1.0 - ratio, &keep);
        if (st == BP_OK)
            st = bp_div(x, keep, &scaled);
        if (st == BP_OK)
            st = bp_full(be, x->dtype, 0, NULL, 0.0, &zero);
        if (st == BP_OK)
            st = bp_where(m, scaled, zero, &y);
    }
    bp_tensor_release(keep);
    bp_tensor_release(scaled);
    bp_tensor_release(zero);
    if (st != BP_OK || !mask) {
        bp_tensor_release(m);
        m = NULL;
    }
    if (st != BP_OK) {
        bp_tensor_release(y);
        return st;
    }
    *out = y;
    if (mask)
        *mask = m;
    return BP_OK;
}

/* fuzz_api: what the contract says a call must do, and checking that it did. */
#include <stdio.h>
#include <string.h>

#include "fa_state.h"
#include "fz_oracle.h"

fa_expect fa_expect_valid(void)
{
    fa_expect e;
    memset(&e, 0, sizeof e);
    e.verdict = FA_VALID;
    e.be_id = -1;
    return e;
}

void fa_invalid(fa_expect *e, const char *why)
{
    if (e->verdict != FA_INVALID) {
        fz_trace("  expect a refusal: %s", why);
        e->verdict = FA_INVALID;
        e->why = why;
    }
}

void fa_unsure(fa_expect *e)
{
    if (e->verdict == FA_VALID)
        e->verdict = FA_UNSURE;
}

void fa_predict(fa_expect *e, int dtype, int32_t rank, const int64_t *shape)
{
    if (rank < 0 || rank > BP_MAX_RANK) {
        fz_trace("  expect a refusal: rank %d", (int)rank);
        fa_invalid(e, "rank outside 0..8");
        return;
    }
    if (rank > 0 && !shape) {
        fa_invalid(e, "shape is NULL");
        return;
    }
    bool zero = false;
    for (int32_t k = 0; k < rank; k++) {
        if (shape[k] < 0) {
            fa_invalid(e, "negative extent");
            return;
        }
        zero = zero || shape[k] == 0;
    }
    size_t elem = bp_dtype_valid(dtype) ? bp_dtype_size((bp_dtype)dtype) : 1;
    int64_t numel = 0;
    if (!fz_numel(rank, shape, elem, &numel)) {
        if (!zero) {
            fa_invalid(e, "the element count (or byte size) overflows");
            return;
        }
        fa_unsure(e); /* zero elements, absurd extents: refusing is fine too */
        numel = 0;
    }
    char text[200] = "";
    int n = 0;
    for (int32_t k = 0; k < rank && n < 180; k++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%lld", k ? ", " : "", (long long)shape[k]);
    fz_trace("  expect %s (%s)%s", bp_dtype_name((bp_dtype)dtype), text,
             e->verdict == FA_UNSURE ? " or a refusal" : "");
    e->known = true;
    e->dtype = dtype;
    e->rank = rank;
    for (int32_t k = 0; k < rank; k++)
        e->shape[k] = shape[k];
    e->numel = numel;
}

bool fa_affordable(const fa_expect *e)
{
    /* A call refused for its shape is always made: the library must refuse
     * it before allocating. One refused for another reason (NULL data, an
     * index out of range) may allocate its result first, so it must fit. */
    if (!e->known)
        return e->verdict == FA_INVALID;
    size_t elem = bp_dtype_valid(e->dtype) ? bp_dtype_size((bp_dtype)e->dtype) : 8;
    return e->numel <= FA_CAP_ELEMS && e->numel * (int64_t)elem <= FA_CAP_BYTES &&
           e->flops <= FA_CAP_FLOPS;
}

static bool fa_is_odd(const bp_tensor *t)
{
    int64_t n;
    return bp_tensor_numel(t) == 0 &&
           !fz_numel(bp_tensor_rank(t), bp_tensor_shape(t), bp_dtype_size(bp_tensor_dtype(t)), &n);
}

void fa_finish(fa_state *s, const char *call, bp_status st, bp_tensor *out, const fa_expect *e,
               int dst, int storage)
{
    fz_result(call, st, out);
    if (e->verdict == FA_INVALID && st == BP_OK)
        fz_fail("%s succeeded, but the contract says it must fail (%s)", call, e->why);
    if (e->verdict == FA_VALID && st != BP_OK && st != BP_ERR_OUT_OF_MEMORY &&
        st != BP_ERR_UNSUPPORTED_OP && st != BP_ERR_BACKEND)
        fz_fail("%s refused a call the contract accepts: %s: %s", call, bp_status_string(st),
                bp_last_error());
    if (st != BP_OK)
        return;
    if (e->known) {
        char want[200] = "", got[200] = "";
        int n = 0, m = 0;
        for (int32_t k = 0; k < e->rank && n < 180; k++)
            n += snprintf(want + n, sizeof want - (size_t)n, "%lld ", (long long)e->shape[k]);
        for (int32_t k = 0; k < bp_tensor_rank(out) && k < BP_MAX_RANK && m < 180; k++)
            m += snprintf(got + m, sizeof got - (size_t)m, "%lld ",
                          (long long)bp_tensor_shape(out)[k]);
        if ((int)bp_tensor_dtype(out) != e->dtype || bp_tensor_rank(out) != e->rank ||
            memcmp(bp_tensor_shape(out), e->shape, (size_t)e->rank * sizeof(int64_t)) != 0)
            fz_fail("%s made a %s tensor of shape (%s), the contract says %s (%s)", call,
                    bp_dtype_name(bp_tensor_dtype(out)), got, bp_dtype_name((bp_dtype)e->dtype),
                    want);
    }
    if (e->backend && bp_tensor_backend(out) != e->backend)
        fz_fail("%s made its result on backend %s, not %s", call,
                bp_backend_name(bp_tensor_backend(out)), bp_backend_name(e->backend));
    if (dst < 0 || dst >= FA_SLOTS) {
        bp_tensor_release(out);
        return;
    }
    fa_slot_clear(s, dst);
    s->slot[dst].t = out;
    s->slot[dst].storage = storage >= 0 ? storage : fa_storage_new(s);
    s->slot[dst].be_id = e->be_id;
    s->slot[dst].ctx_id = e->ctx_id;
    s->slot[dst].odd = fa_is_odd(out);
}

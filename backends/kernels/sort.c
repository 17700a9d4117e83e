/* SORT and TOPK along the last axis of x (out[0]: values, out[1]: i64
 * indices). Each row is merge-sorted, which is stable: equal values keep
 * their order, so ties go to the lower index. The order puts NaN above every
 * number: last ascending, first descending (NumPy's sort; ONNX TopK). TOPK
 * is the first k of that order (largest: descending; smallest: ascending),
 * so its result is always sorted, which p->i[1] = 0 allows. Values are
 * copied as the elements' bytes: exact in every dtype, -0 and NaN included. */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

typedef struct key {
    double f;    /* floats */
    int64_t i;   /* integers, exactly */
    int64_t at;  /* the element's position in its row */
} key;

typedef struct order {
    bool is_float, descending;
} order;

/* Whether a strictly precedes b. */
static inline bool before(const order *o, const key *a, const key *b)
{
    if (o->is_float) {
        bool na = a->f != a->f, nb = b->f != b->f;
        if (na || nb) /* NaN is the largest value; NaNs tie */
            return o->descending ? na && !nb : nb && !na;
        return o->descending ? a->f > b->f : a->f < b->f;
    }
    return o->descending ? a->i > b->i : a->i < b->i;
}

/* Stable merge sort of v[0..n) with scratch tmp[0..n), bottom-up. */
static void merge_sort(const order *o, key *v, key *tmp, int64_t n)
{
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = before(o, &v[j], &v[i]) ? v[j++] : v[i++];
            while (i < mid)
                tmp[k++] = v[i++];
            while (j < hi)
                tmp[k++] = v[j++];
        }
        memcpy(v, tmp, (size_t)n * sizeof *v);
    }
}

bp_status bpk_op_sort(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                      const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)n_in, (void)n_out;
    const bp_view *x = in[0], *vals = out_v[0], *idx = out_v[1];
    int32_t last = x->rank - 1;
    int64_t n = x->shape[last], k = vals->shape[last];
    if (bpk_numel(vals) == 0)
        return BP_OK;
    /* SORT: p->i[0] descending; TOPK: p->i[0] largest (descending) */
    order o = {.is_float = bp_dtype_is_float(x->dtype), .descending = p->i[0] != 0};
    key *v = malloc((size_t)n * 2 * sizeof *v);
    if (!v)
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "%s: no memory for a row of %lld keys",
                        bp_op_name(op), (long long)n);
    size_t es = bp_dtype_size(x->dtype);
    int64_t sx = x->strides[last], sv = vals->strides[last], si = idx->strides[last];
    bpk_rows r;
    bpk_rows_init(&r, 3, (const bp_view *[]){x, vals, idx});
    while (bpk_rows_next(&r)) {
        const char *row = bpk_base(x) + r.at[0] * (int64_t)es;
        for (int64_t i = 0; i < n; i++) {
            const char *e = row + i * sx * (int64_t)es;
            v[i].at = i;
            if (o.is_float)
                v[i].f = bp_elem_load_f64(x->dtype, e);
            else
                v[i].i = bpk_int_order(x->dtype, bp_elem_load_i64(x->dtype, e));
        }
        merge_sort(&o, v, v + n, n);
        char *vrow = bpk_base(vals) + r.at[1] * (int64_t)es;
        int64_t *irow = (int64_t *)bpk_base(idx) + r.at[2];
        for (int64_t i = 0; i < k; i++) {
            memcpy(vrow + i * sv * (int64_t)es, row + v[i].at * sx * (int64_t)es, es);
            irow[i * si] = v[i].at;
        }
    }
    free(v);
    return BP_OK;
}
